// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool against a real gRPC C++ server on loopback, whose
// UnaryCall answers with the peer address of the caller's connection, so a
// test sees which connection served each call. Connections are also counted
// as the kernel saw them (/proc/self/net/tcp, procnet.h). Every wait has a
// deadline; nothing sleeps. GoogleTest; ctest runs each test, or
// build/rpclab-pool-test runs them all.

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "channel_pool.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "procnet.h"

namespace {

using grpc::testing::BenchmarkService;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;
using rpclab::ChannelPool;
using rpclab::Pick;

std::chrono::system_clock::time_point In(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// Answers UnaryCall with the caller's peer address; when held, the first
// call waits (at most 20 s) until Release.
class Service final : public BenchmarkService::Service {
 public:
  grpc::Status UnaryCall(grpc::ServerContext* ctx, const SimpleRequest*, SimpleResponse* resp) override {
    std::unique_lock<std::mutex> lk(mu_);
    if (hold_) {
      hold_ = false;
      held_peer_ = ctx->peer();
      cv_.notify_all();
      cv_.wait_until(lk, In(20), [&] { return released_; });
    }
    resp->mutable_payload()->set_body(ctx->peer());
    return grpc::Status::OK;
  }
  void Hold() {
    std::lock_guard<std::mutex> lk(mu_);
    hold_ = true;
  }
  // The held call's peer, once it arrived; "" if not within 20 s.
  std::string WaitHeld() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_until(lk, In(20), [&] { return !held_peer_.empty(); });
    return held_peer_;
  }
  // One response per request; ends when the client's writes end.
  grpc::Status StreamingCall(grpc::ServerContext*,
                             grpc::ServerReaderWriter<SimpleResponse, SimpleRequest>* stream) override {
    SimpleRequest req;
    while (stream->Read(&req)) stream->Write(SimpleResponse());
    return grpc::Status::OK;
  }
  void Release() {
    std::lock_guard<std::mutex> lk(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool hold_ = false, released_ = false;
  std::string held_peer_;
};

struct Server {
  Service service;
  std::unique_ptr<grpc::Server> server;
  std::string addr;

  // Listens on 127.0.0.1:port (0: any).
  explicit Server(int port = 0) {
    grpc::ServerBuilder b;
    int got = 0;
    b.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &got);
    b.RegisterService(&service);
    server = b.BuildAndStart();
    if (!server || got == 0) throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port));
    addr = "127.0.0.1:" + std::to_string(got);
  }
  int Port() const { return std::stoi(addr.substr(addr.rfind(':') + 1)); }
  void Stop() { server->Shutdown(In(5)); }
};

ChannelPool MakePool(const std::string& target, int n, Pick pick = Pick::kRoundRobin,
                     rpclab::PoolObserver* observer = nullptr) {
  return ChannelPool(target, n, pick, grpc::ChannelArguments(), grpc::InsecureChannelCredentials(), observer);
}

// One call on a pool's channel; the serving connection's peer, or "".
std::string Ping(ChannelPool& pool, grpc::Status* st = nullptr) {
  auto lease = pool.Acquire();
  auto stub = BenchmarkService::NewStub(lease.channel());
  grpc::ClientContext ctx;
  ctx.set_deadline(In(10));
  SimpleRequest req;
  SimpleResponse resp;
  grpc::Status s = stub->UnaryCall(&ctx, req, &resp);
  if (st != nullptr) *st = s;
  return s.ok() ? resp.payload().body() : "";
}

TEST(ChannelPool, EachChannelIsItsOwnConnection) {
  for (int n : {1, 2, 4}) {
    Server srv;
    ChannelPool pool = MakePool(srv.addr, n);
    ASSERT_TRUE(pool.WaitForConnected(In(10))) << "pool of " << n << ": not connected within 10 s";
    std::set<std::string> peers;
    for (int i = 0; i < 2 * n; i++) peers.insert(Ping(pool));
    EXPECT_EQ(static_cast<int>(peers.size()), n) << "pool of " << n << ": peers";
    EXPECT_EQ(rpclab::ConnsTo(srv.addr), n) << "pool of " << n << ": connections in /proc";
    srv.Stop();
  }
}

TEST(ChannelPool, RoundRobinTakesEachChannelInTurn) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 3, Pick::kRoundRobin);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  std::vector<std::string> got;
  for (int i = 0; i < 9; i++) got.push_back(Ping(pool));
  for (int i = 3; i < 9; i++) EXPECT_EQ(got[i], got[i - 3]) << "call " << i;
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), 3u);
  srv.Stop();
}

// NewStub is FooService::NewStub's drop-in: each stub on the next channel,
// its calls counted by the channel (no lease to hold).
TEST(ChannelPool, NewStub) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  std::set<std::string> peers;
  for (int i = 0; i < 2; i++) {
    auto stub = pool.NewStub<BenchmarkService>();
    grpc::ClientContext ctx;
    ctx.set_deadline(In(10));
    SimpleRequest req;
    SimpleResponse resp;
    grpc::Status st = stub->UnaryCall(&ctx, req, &resp);
    EXPECT_TRUE(st.ok()) << "stub " << i << ": " << st.error_message();
    peers.insert(resp.payload().body());
  }
  EXPECT_EQ(peers.size(), 2u);
  EXPECT_EQ(pool.InFlight(), (std::vector<int>{0, 0}));
  srv.Stop();
}

TEST(ChannelPool, LeastLoadedAvoidsTheBusyChannel) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2, Pick::kLeastLoaded);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  srv.service.Hold();
  std::string held_got;
  std::thread held([&] { held_got = Ping(pool); });
  std::string busy = srv.service.WaitHeld();
  EXPECT_FALSE(busy.empty()) << "the held call did not arrive within 20 s";
  auto inflight = pool.InFlight();
  std::sort(inflight.begin(), inflight.end());
  EXPECT_EQ(inflight, (std::vector<int>{0, 1})) << "in flight with one call held";
  for (int i = 0; i < 6; i++) {
    std::string p = Ping(pool);
    EXPECT_FALSE(p.empty() || p == busy) << "call " << i << ": got " << p << ", want the idle connection";
  }
  srv.service.Release();
  held.join();
  EXPECT_EQ(held_got, busy);
  EXPECT_EQ(pool.InFlight(), (std::vector<int>{0, 0})) << "after every call";
  srv.Stop();
}

// A stream is in flight from its start until its status, not while a
// lease or stub is held.
TEST(ChannelPool, AStreamIsInFlightUntilItEnds) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2, Pick::kLeastLoaded);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  auto stub = pool.NewStub<BenchmarkService>();
  grpc::ClientContext ctx;
  ctx.set_deadline(In(10));
  auto stream = stub->StreamingCall(&ctx);
  SimpleResponse resp;
  ASSERT_TRUE(stream->Write(SimpleRequest()));
  ASSERT_TRUE(stream->Read(&resp));
  auto inflight = pool.InFlight();
  EXPECT_EQ(inflight[0] + inflight[1], 1) << "with the stream open past its first reply";
  stream->WritesDone();
  while (stream->Read(&resp)) {
  }
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(pool.InFlight(), (std::vector<int>{0, 0})) << "after the stream ended";
  srv.Stop();
}

TEST(ChannelPool, RecoversAfterAServerRestart) {
  const int n = 3;
  auto srv = std::make_unique<Server>();
  int port = srv->Port();
  ChannelPool pool = MakePool(srv->addr, n);
  for (int i = 0; i < n; i++) Ping(pool);
  srv->Stop();
  srv.reset();
  srv = std::make_unique<Server>(port);  // the same port; the caller only calls
  std::set<std::string> peers;
  int ok = 0, errors = 0;
  auto deadline = In(20);
  while (ok < 2 * n && std::chrono::system_clock::now() < deadline) {
    grpc::Status st;
    std::string p = Ping(pool, &st);
    if (st.ok()) {
      peers.insert(p);
      ok++;
    } else {
      ok = 0;
      errors++;
    }
  }
  EXPECT_EQ(ok, 2 * n) << "calls in a row that succeeded within 20 s after the restart (" << errors << " errors)";
  // Each call went to a READY channel; all n reconnect, at least one serves.
  EXPECT_GE(static_cast<int>(peers.size()), 1);
  srv->Stop();
}

TEST(ChannelPool, BadInputNamesTheValue) {
  struct Case {
    const char* name;
    std::function<void()> make;
    std::string want;
  };
  std::vector<Case> cases = {
      {"size 0", [] { MakePool("127.0.0.1:1", 0); }, "size 0"},
      {"size -1", [] { MakePool("127.0.0.1:1", -1); }, "size -1"},
      {"size 1025", [] { MakePool("127.0.0.1:1", rpclab::kMaxPoolSize + 1); }, "size 1025"},
      {"empty target", [] { MakePool("", 2); }, "empty target"},
      {"null credentials",
       [] { ChannelPool p("127.0.0.1:1", 2, Pick::kRoundRobin, grpc::ChannelArguments(), nullptr); },
       "null credentials"},
      {"unknown pick", [] { rpclab::ParsePick("fastest"); }, "\"fastest\""},
  };
  for (const auto& c : cases) {
    try {
      c.make();
      ADD_FAILURE() << c.name << ": got no error, want std::invalid_argument naming " << c.want;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.want), std::string::npos) << c.name << ": got " << e.what();
    }
  }
  EXPECT_EQ(rpclab::ParsePick("least-loaded"), Pick::kLeastLoaded);
  EXPECT_EQ(rpclab::DefaultPoolSize(), std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 8));
}

TEST(ChannelPool, ATargetThatNeverAnswersFailsTheCall) {
  int port;
  {
    Server srv;  // a port nobody listens on once it stopped
    port = srv.Port();
    srv.Stop();
  }
  ChannelPool pool = MakePool("127.0.0.1:" + std::to_string(port), 2);
  EXPECT_FALSE(pool.WaitForConnected(In(1))) << "a closed port";
  grpc::Status st;
  Ping(pool, &st);
  EXPECT_FALSE(st.ok()) << "a call to a closed port";
}

// Close: Acquire throws from then on; Close waits for the RPCs in flight up
// to its deadline; closing twice is fine.
TEST(ChannelPool, CloseDrainsTheRpcsInFlight) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  srv.service.Hold();
  grpc::Status held_st;
  std::thread held([&] { Ping(pool, &held_st); });
  ASSERT_FALSE(srv.service.WaitHeld().empty());
  auto soon = std::chrono::system_clock::now() + std::chrono::milliseconds(100);
  EXPECT_FALSE(pool.Close(soon)) << "close with a call held past the deadline";
  EXPECT_THROW(pool.Acquire(), std::logic_error) << "a pick after close";
  std::thread closing([&] { EXPECT_TRUE(pool.Close(In(20))) << "close: the held call ended in time"; });
  srv.service.Release();
  held.join();
  closing.join();
  EXPECT_TRUE(held_st.ok());
  EXPECT_TRUE(pool.Close(In(1))) << "close twice";
  srv.Stop();
}

// What the observer hears: rpclab.pool.size, .picks, .inflight.
class Recorder : public rpclab::PoolObserver {
 public:
  void OnSize(int n) override { size = n; }
  void OnPick(int i) override {
    std::lock_guard<std::mutex> lk(mu);
    picks[i]++;
  }
  void OnInFlight(int i, int n) override {
    std::lock_guard<std::mutex> lk(mu);
    peak[i] = std::max(peak[i], n);
    last[i] = n;
  }
  std::mutex mu;
  int size = 0;
  std::map<int, int> picks, peak, last;
};

TEST(ChannelPool, ObserverHearsSizePicksAndInFlight) {
  Server srv;
  Recorder rec;
  ChannelPool pool = MakePool(srv.addr, 2, Pick::kRoundRobin, &rec);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  for (int i = 0; i < 4; i++) Ping(pool);
  EXPECT_EQ(rec.size, 2);
  EXPECT_EQ(rec.picks, (std::map<int, int>{{0, 2}, {1, 2}}));
  EXPECT_EQ(rec.peak, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(rec.last, (std::map<int, int>{{0, 0}, {1, 0}}));
  srv.Stop();
}

}  // namespace
