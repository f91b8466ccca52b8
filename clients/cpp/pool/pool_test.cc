// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool against a real gRPC C++ server on loopback, whose
// UnaryCall answers with the peer address of the caller's connection, so a
// test sees which connection served each call (and, for the redial tests, a
// raw port that holds a connection attempt before the server's SETTINGS).
// Connections are also counted as the kernel saw them (/proc/self/net/tcp,
// procnet.h). Every wait has a deadline; nothing sleeps. GoogleTest; ctest runs each test, or
// build/rpclab-pool-test runs them all.

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
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
using rpclab::PoolOptions;

std::chrono::system_clock::time_point In(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// Answers UnaryCall with the caller's peer address; Hold(n) makes the next
// n calls wait (at most 30 s) until Release.
class Service final : public BenchmarkService::Service {
 public:
  grpc::Status UnaryCall(grpc::ServerContext* ctx, const SimpleRequest*, SimpleResponse* resp) override {
    std::unique_lock<std::mutex> lk(mu_);
    if (to_hold_ > 0) {
      to_hold_--;
      held_peers_.push_back(ctx->peer());
      cv_.notify_all();
      cv_.wait_until(lk, In(30), [&] { return released_ || ctx->IsCancelled(); });
    }
    resp->mutable_payload()->set_body(ctx->peer());
    return grpc::Status::OK;
  }
  void Hold(int n = 1) {
    std::lock_guard<std::mutex> lk(mu_);
    to_hold_ = n;
    released_ = false;
    held_peers_.clear();
  }
  // The first held call's peer, once it arrived; "" if not within 20 s.
  std::string WaitHeld() { return WaitHeld(1) ? held_peers_[0] : ""; }
  // Whether n calls are held within 20 s.
  bool WaitHeld(int n) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_until(lk, In(20), [&] { return static_cast<int>(held_peers_.size()) >= n; });
  }
  int Held() {
    std::lock_guard<std::mutex> lk(mu_);
    return static_cast<int>(held_peers_.size());
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
    to_hold_ = 0;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int to_hold_ = 0;
  bool released_ = false;
  std::vector<std::string> held_peers_;
};

struct Server {
  Service service;
  std::unique_ptr<grpc::Server> server;
  std::string addr;

  // Listens on 127.0.0.1:port (0: any); max_streams > 0 sets the server's
  // SETTINGS_MAX_CONCURRENT_STREAMS.
  explicit Server(int port = 0, int max_streams = 0) {
    grpc::ServerBuilder b;
    int got = 0;
    b.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &got);
    b.RegisterService(&service);
    if (max_streams > 0) b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, max_streams);
    server = b.BuildAndStart();
    if (!server || got == 0) throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port));
    addr = "127.0.0.1:" + std::to_string(got);
  }
  ~Server() {
    service.Release();
    Stop();
  }
  int Port() const { return std::stoi(addr.substr(addr.rfind(':') + 1)); }
  void Stop() {
    if (server) server->Shutdown(In(5));
  }
};

// Waits until pred holds, reading it every 10 ms, for at most seconds.
bool Eventually(const std::function<bool()>& pred, int seconds = 20) {
  std::mutex mu;
  std::condition_variable never;
  auto deadline = In(seconds);
  std::unique_lock<std::mutex> lk(mu);
  while (!pred()) {
    if (std::chrono::system_clock::now() >= deadline) return false;
    never.wait_for(lk, std::chrono::milliseconds(10));
  }
  return true;
}

ChannelPool MakePool(const std::string& target, int n, Pick pick = Pick::kRoundRobin,
                     rpclab::PoolObserver* observer = nullptr) {
  return ChannelPool(target, n, pick, grpc::ChannelArguments(), grpc::InsecureChannelCredentials(), observer);
}

// One call on ch; the serving connection's peer, or "".
std::string PingOn(const std::shared_ptr<grpc::ChannelInterface>& ch, grpc::Status* st = nullptr) {
  auto stub = BenchmarkService::NewStub(ch);
  grpc::ClientContext ctx;
  ctx.set_deadline(In(10));
  SimpleRequest req;
  SimpleResponse resp;
  grpc::Status s = stub->UnaryCall(&ctx, req, &resp);
  if (st != nullptr) *st = s;
  return s.ok() ? resp.payload().body() : "";
}

// One call through the pool as a channel (its pick made as the call starts).
std::string Ping(ChannelPool& pool, grpc::Status* st = nullptr) { return PingOn(pool.channel(), st); }

PoolOptions Growth(int max, int limit) {
  PoolOptions o;
  o.size = 1;
  o.max_connections = max;
  o.streams_per_connection = limit;
  return o;
}

ChannelPool Make(const std::string& target, const std::function<void(PoolOptions&)>& set) {
  PoolOptions o;
  set(o);
  return ChannelPool(target, grpc::InsecureChannelCredentials(), o);
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
      {"unparsable target", [] { MakePool("127.0.0.1:0", 2); }, "port \"0\""},
      {"port above 65535", [] { MakePool("host:99999", 2); }, "port \"99999\""},
      {"empty host", [] { MakePool("dns:///", 2); }, "empty host"},
      {"whitespace", [] { MakePool("a b:1", 2); }, "whitespace"},
      {"max below size", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.size = 4, o.max_connections = 2; }); },
       "max_connections 2"},
      {"max above 1024", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.size = 1, o.max_connections = 1025; }); },
       "max_connections 1025"},
      {"growth without a limit", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.size = 1, o.max_connections = 8; }); },
       "streams_per_connection 0"},
      {"negative limit", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.streams_per_connection = -1; }); },
       "streams_per_connection -1"},
      {"idle 0", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.idle_timeout = std::chrono::milliseconds(0); }); },
       "idle_timeout 0ms"},
      {"redial -1", [] { Make("127.0.0.1:1", [](PoolOptions& o) { o.redial_after = std::chrono::milliseconds(-1); }); },
       "redial_after -1ms"},
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

// Close: RPCs in flight may finish until the drain deadline, then are
// cancelled (CANCELLED); the pool takes no RPC from then on (UNAVAILABLE,
// through the pool and through a lease); closing twice returns at once;
// nothing the pool made stays: no connection as the kernel sees them.
TEST(ChannelPool, CloseDrainsThenCancels) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2);
  ASSERT_TRUE(pool.WaitForConnected(In(10)));
  ASSERT_EQ(rpclab::ConnsTo(srv.addr), 2);
  srv.service.Hold(2);
  grpc::Status held_st[2];
  std::thread held[2];
  for (int i = 0; i < 2; i++) held[i] = std::thread([&, i] { Ping(pool, &held_st[i]); });
  ASSERT_TRUE(srv.service.WaitHeld(2));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(pool.Close(std::chrono::system_clock::now() + std::chrono::milliseconds(200)))
      << "close with two calls held past the drain deadline";
  auto took = std::chrono::steady_clock::now() - t0;
  for (auto& t : held) t.join();
  for (const auto& st : held_st) EXPECT_EQ(st.error_code(), grpc::StatusCode::CANCELLED) << st.error_message();
  EXPECT_LT(took, std::chrono::seconds(5)) << "close took past its drain deadline and the cancel";
  EXPECT_TRUE(pool.closed());

  grpc::Status after;
  Ping(pool, &after);
  EXPECT_EQ(after.error_code(), grpc::StatusCode::UNAVAILABLE) << "a call through the pool after close";
  auto lease = pool.Acquire();
  EXPECT_EQ(lease.index(), -1);
  PingOn(lease.channel(), &after);
  EXPECT_EQ(after.error_code(), grpc::StatusCode::UNAVAILABLE) << "a call on a lease taken after close";
  auto stub = pool.NewStub<BenchmarkService>();
  grpc::ClientContext ctx;
  ctx.set_deadline(In(10));
  auto stream = stub->StreamingCall(&ctx);
  EXPECT_FALSE(stream->Write(SimpleRequest())) << "a stream after close";
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE) << "a stream after close";

  t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(pool.Close(In(20))) << "close twice";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1)) << "close twice returns at once";
  EXPECT_EQ(pool.size(), 0);
  EXPECT_TRUE(Eventually([&] { return rpclab::ConnsTo(srv.addr) == 0; }))
      << "connections left after close: " << rpclab::ConnsTo(srv.addr);
}

// A drain that ends in time: close returns true once the held call ends.
TEST(ChannelPool, CloseWaitsForTheDrain) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2);
  srv.service.Hold(1);
  grpc::Status held_st;
  std::thread held([&] { Ping(pool, &held_st); });
  ASSERT_TRUE(srv.service.WaitHeld(1));
  std::thread closing([&] { EXPECT_TRUE(pool.Close(In(20))) << "close: the held call ended in time"; });
  EXPECT_TRUE(Eventually([&] { return pool.closed(); }));
  srv.service.Release();
  held.join();
  closing.join();
  EXPECT_TRUE(held_st.ok()) << held_st.error_message();
}

// In flight means from the RPC's start to its end: a lease held counts
// nothing.
TEST(ChannelPool, ALeaseCountsNothing) {
  Server srv;
  ChannelPool pool = MakePool(srv.addr, 2);
  auto a = pool.Acquire(), b = pool.Acquire();
  EXPECT_EQ(pool.InFlight(), (std::vector<int>{0, 0}));
  EXPECT_NE(a.index(), b.index());
}

// What the observer hears: rpclab.pool.size, .picks, .inflight, .redials,
// .resizes.
class Recorder : public rpclab::PoolObserver {
 public:
  void OnSize(int n) override {
    std::lock_guard<std::mutex> lk(mu);
    size = n;
    cv.notify_all();
  }
  void OnPick(int i) override {
    std::lock_guard<std::mutex> lk(mu);
    picks[i]++;
  }
  void OnInFlight(int i, int n) override {
    std::lock_guard<std::mutex> lk(mu);
    peak[i] = std::max(peak[i], n);
    last[i] = n;
  }
  void OnRedial() override {
    std::lock_guard<std::mutex> lk(mu);
    redials++;
    cv.notify_all();
  }
  void OnResize(const char* direction) override {
    std::lock_guard<std::mutex> lk(mu);
    resizes[direction]++;
  }
  // Waits (at most seconds) until pred holds, read under mu on each report.
  bool Wait(const std::function<bool()>& pred, int seconds = 20) {
    std::unique_lock<std::mutex> lk(mu);
    return cv.wait_until(lk, In(seconds), pred);
  }
  std::mutex mu;
  std::condition_variable cv;
  int size = 0, redials = 0;
  std::map<int, int> picks, peak, last;
  std::map<std::string, int> resizes;
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
  pool.Close();
  EXPECT_EQ(rec.size, 0) << "rpclab.pool.size after close";
}

// 16 calls held by a server that allows 4 streams per connection, through
// a pool of size 1. Returns the connections as the kernel saw them while
// the 16 were in flight, and the pool's in-flight counts then.
std::pair<int, std::vector<int>> Run16(Server& srv, ChannelPool& pool, int reach_server) {
  srv.service.Hold(16);
  std::vector<std::thread> calls;
  std::vector<grpc::Status> st(16);
  for (int i = 0; i < 16; i++) calls.emplace_back([&, i] { Ping(pool, &st[i]); });
  EXPECT_TRUE(srv.service.WaitHeld(reach_server)) << "only " << srv.service.Held() << " calls reached the server";
  EXPECT_TRUE(Eventually([&] {
    auto f = pool.InFlight();
    return std::accumulate(f.begin(), f.end(), 0) == 16;
  })) << "the pool never had 16 in flight";
  int conns = rpclab::ConnsTo(srv.addr);
  auto inflight = pool.InFlight();
  srv.service.Release();
  for (auto& t : calls) t.join();
  for (int i = 0; i < 16; i++) EXPECT_TRUE(st[i].ok()) << "call " << i << ": " << st[i].error_message();
  return {conns, inflight};
}

// Growth at the stream limit (docs/pool.md): every channel at the limit,
// the pool adds one, up to max_connections; the kernel sees 4 connections.
TEST(ChannelPoolGrowth, GrowsToTheStreamLimit) {
  Server srv(0, 4);
  Recorder rec;
  PoolOptions o = Growth(8, 4);
  o.observer = &rec;
  ChannelPool pool(srv.addr, grpc::InsecureChannelCredentials(), o);
  auto [conns, inflight] = Run16(srv, pool, 16);
  EXPECT_EQ(conns, 4) << "connections at 16 in flight with 4 streams each";
  EXPECT_EQ(inflight, (std::vector<int>{4, 4, 4, 4}));
  EXPECT_EQ(pool.size(), 4);
  EXPECT_EQ(pool.resizes(), 3);
  std::lock_guard<std::mutex> lk(rec.mu);
  EXPECT_EQ(rec.resizes, (std::map<std::string, int>{{"grow", 3}}));
  EXPECT_EQ(rec.size, 4);
  int picks = 0;
  for (auto [i, n] : rec.picks) picks += n;
  EXPECT_EQ(picks, 16);
}

// Off by default: one connection, the 12 calls over the server's limit
// wait in the client (16 in flight as the pool counts them).
TEST(ChannelPoolGrowth, OffByDefault) {
  Server srv(0, 4);
  ChannelPool pool = MakePool(srv.addr, 1);
  auto [conns, inflight] = Run16(srv, pool, 4);
  EXPECT_EQ(conns, 1);
  EXPECT_EQ(inflight, (std::vector<int>{16}));
  EXPECT_EQ(pool.resizes(), 0);
}

// At max_connections the pool picks among all by its policy (skipping a
// channel still CONNECTING while the other is READY): 16 over 2, each with
// at least its 4.
TEST(ChannelPoolGrowth, AtMaxPicksAmongAll) {
  Server srv(0, 4);
  ChannelPool pool(srv.addr, grpc::InsecureChannelCredentials(), Growth(2, 4));
  auto [conns, inflight] = Run16(srv, pool, 8);
  EXPECT_EQ(conns, 2);
  ASSERT_EQ(inflight.size(), 2u);
  EXPECT_EQ(inflight[0] + inflight[1], 16);
  EXPECT_GE(inflight[0], 4);
  EXPECT_GE(inflight[1], 4);
}

// A grown channel with nothing in flight for the idle time is retired (by
// the pool's watcher, with no RPC to notice); the pool keeps its size.
TEST(ChannelPoolGrowth, RetiresIdleExtras) {
  Server srv;
  Recorder rec;
  PoolOptions o = Growth(4, 1);
  o.idle_timeout = std::chrono::milliseconds(50);
  o.observer = &rec;
  ChannelPool pool(srv.addr, grpc::InsecureChannelCredentials(), o);
  srv.service.Hold(3);
  std::vector<std::thread> calls;
  for (int i = 0; i < 3; i++) calls.emplace_back([&] { Ping(pool); });
  ASSERT_TRUE(srv.service.WaitHeld(3));
  EXPECT_EQ(pool.size(), 3);
  EXPECT_EQ(rpclab::ConnsTo(srv.addr), 3);
  srv.service.Release();
  for (auto& t : calls) t.join();
  EXPECT_TRUE(rec.Wait([&] { return rec.size == 1; })) << "the idle grown channels were not retired";
  EXPECT_EQ(pool.size(), 1);
  EXPECT_EQ(pool.resizes(), 4);
  {
    std::lock_guard<std::mutex> lk(rec.mu);
    EXPECT_EQ(rec.resizes, (std::map<std::string, int>{{"grow", 2}, {"shrink", 2}}));
  }
  EXPECT_TRUE(Eventually([&] { return rpclab::ConnsTo(srv.addr) == 1; }))
      << "connections after the retire: " << rpclab::ConnsTo(srv.addr);
  EXPECT_FALSE(Ping(pool).empty()) << "the pool still serves";
}

// Redial: a channel in TRANSIENT_FAILURE for the redial delay is replaced
// by a new one (a refusing port); once a server listens there, calls
// succeed.
TEST(ChannelPoolRedial, ReplacesAFailedChannel) {
  int port;
  {
    Server srv;  // a port nobody listens on once it stopped
    port = srv.Port();
  }
  Recorder rec;
  PoolOptions o;
  o.size = 1;
  o.redial_after = std::chrono::milliseconds(50);
  o.observer = &rec;
  ChannelPool pool("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), o);
  auto first = pool.channels()[0];
  grpc::Status st;
  Ping(pool, &st);  // makes the channel connect, and fail
  EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE) << st.error_message();
  EXPECT_TRUE(rec.Wait([&] { return rec.redials >= 1; })) << "no redial";
  EXPECT_GE(pool.redials(), 1);
  EXPECT_NE(pool.channels()[0].get(), first.get()) << "the channel was not replaced";
  first.reset();
  Server srv(port);
  bool ok = Eventually([&] {
    grpc::Status s;
    Ping(pool, &s);
    return s.ok();
  });
  EXPECT_TRUE(ok) << "no call succeeded once the server listened";
  // The replaced channels connect too, and are let go once READY.
  EXPECT_TRUE(Eventually([&] { return rpclab::ConnsTo(srv.addr) == 1; }))
      << "connections as the kernel sees them: " << rpclab::ConnsTo(srv.addr) << ", want 1";
}

// A port that speaks just enough HTTP/2 to hold a gRPC client's connection
// attempt where a test wants it. Made, it is bound and refuses connections;
// after Listen it accepts each one and reads the client's preface, and
// sends the server's SETTINGS (which completes the client's attempt) only
// when Settle(i) is called. Every wait is poll(2) on its sockets with a
// deadline.
class HeldPort {
 public:
  HeldPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error(std::string("HeldPort: ") + std::strerror(errno));
    }
    addr = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  ~HeldPort() {
    for (int c : conns_) close(c);
    close(fd_);
  }
  void Listen() { ASSERT_EQ(listen(fd_, 16), 0) << std::strerror(errno); }
  // Whether n connections were accepted and sent their 24-byte preface
  // within seconds.
  bool WaitPrefaces(int n, int seconds) {
    auto deadline = In(seconds);
    while (static_cast<int>(conns_.size()) < n) {
      if (!Readable(fd_, deadline)) return false;
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return false;
      conns_.push_back(c);
      char preface[24];
      size_t got = 0;
      while (got < sizeof preface) {
        if (!Readable(c, deadline)) return false;
        ssize_t r = read(c, preface + got, sizeof preface - got);
        if (r <= 0) return false;
        got += r;
      }
      if (std::string(preface, sizeof preface) != "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") return false;
    }
    return true;
  }
  // Sends connection i an empty SETTINGS frame: the client's attempt on it
  // completes (a client then sends its ACK).
  bool Settle(int i) {
    const char settings[9] = {0, 0, 0, 4, 0, 0, 0, 0, 0};
    return i < static_cast<int>(conns_.size()) && write(conns_[i], settings, sizeof settings) == sizeof settings;
  }
  // Whether the client closed connection i within seconds (what it sent
  // before is read and dropped).
  bool WaitClosed(int i, int seconds) {
    auto deadline = In(seconds);
    char buf[4096];
    for (;;) {
      if (i >= static_cast<int>(conns_.size()) || !Readable(conns_[i], deadline)) return false;
      ssize_t r = read(conns_[i], buf, sizeof buf);
      if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
      if (r < 0) return false;
    }
  }
  std::string addr;

 private:
  static bool Readable(int fd, std::chrono::system_clock::time_point deadline) {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::system_clock::now());
      if (left.count() <= 0) return false;
      int n = poll(&p, 1, static_cast<int>(left.count()));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return false;
    }
  }
  int fd_ = -1;
  std::vector<int> conns_;
};

// C-core handles a connection's events only while some thread polls (an
// application's RPCs do; the pool's watcher does not): this one polls a
// completion queue with nothing on it (C-core's epoll1 engine then polls
// every connection) until it is destroyed.
class Poller {
 public:
  Poller()
      : thread_([this] {
          void* tag;
          bool ok;
          while (cq_.Next(&tag, &ok)) {
          }
        }) {}
  ~Poller() {
    cq_.Shutdown();
    thread_.join();
  }

 private:
  grpc::CompletionQueue cq_;
  std::thread thread_;
};

// A pool of one whose channel is in TRANSIENT_FAILURE (held's port
// refused it) and is connected again (C-core retries every 100 ms) on
// connection 0 of held, which waits for the server's SETTINGS; the
// pool's redial delay has not passed.
PoolOptions HeldOptions(rpclab::PoolObserver* observer) {
  PoolOptions o;
  o.size = 1;
  o.redial_after = std::chrono::seconds(2);
  o.observer = observer;
  o.args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  o.args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  return o;
}
void FailThenHold(ChannelPool& pool, HeldPort& held) {
  pool.channel()->GetState(true);
  ASSERT_TRUE(Eventually([&] { return pool.channels()[0]->GetState(false) == GRPC_CHANNEL_TRANSIENT_FAILURE; }))
      << "the channel did not fail on a refusing port";
  held.Listen();
  ASSERT_TRUE(held.WaitPrefaces(1, 10)) << "the failed channel did not connect again";
  ASSERT_EQ(pool.redials(), 0) << "the redial came before the reconnection: the test's timing did not hold";
}

// A redial while WaitForConnected waits: it waits on the channel that
// replaced the failed one (and connects it), not on the one let go.
TEST(ChannelPoolRedial, WaitForConnectedWaitsOnTheCurrentChannels) {
  Poller poller;
  HeldPort held;
  Recorder rec;
  ChannelPool pool(held.addr, grpc::InsecureChannelCredentials(), HeldOptions(&rec));
  std::mutex mu;
  std::condition_variable cv;
  int connected = -1;  // -1: still waiting
  std::thread waiting([&] {
    bool ok = pool.WaitForConnected(In(20));
    std::lock_guard<std::mutex> lk(mu);
    connected = ok;
    cv.notify_all();
  });
  FailThenHold(pool, held);
  EXPECT_TRUE(rec.Wait([&] { return rec.redials >= 1; })) << "no redial";
  EXPECT_TRUE(held.WaitPrefaces(2, 10)) << "WaitForConnected did not connect the channel that replaced the failed one";
  EXPECT_TRUE(held.Settle(1));
  {
    std::unique_lock<std::mutex> lk(mu);
    EXPECT_TRUE(cv.wait_until(lk, In(10), [&] { return connected >= 0; }))
        << "WaitForConnected still waits with the pool's channel READY (on the one it let go?)";
    EXPECT_EQ(connected, 1);
  }
  waiting.join();
  EXPECT_EQ(pool.channels()[0]->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_TRUE(held.Settle(0));
  EXPECT_TRUE(held.WaitClosed(0, 10)) << "the replaced channel's connection stayed open";
}

// gRPC C++ 1.51 leaks the connection of an attempt that completes (the
// server's SETTINGS arrive) after its channel was destroyed: it stays
// ESTABLISHED with nothing to close it. The pool keeps a replaced channel
// until it is READY or IDLE and lets it go then, so its connection closes.
TEST(ChannelPoolRedial, AReplacedChannelsConnectionCloses) {
  Poller poller;
  HeldPort held;
  Recorder rec;
  ChannelPool pool(held.addr, grpc::InsecureChannelCredentials(), HeldOptions(&rec));
  std::weak_ptr<grpc::Channel> replaced = pool.channels()[0];
  FailThenHold(pool, held);
  EXPECT_TRUE(rec.Wait([&] { return rec.redials >= 1; })) << "no redial";
  // The attempt completes once the pool has destroyed the channel, or 2 s
  // after the redial while the pool keeps it.
  Eventually([&] { return replaced.expired(); }, 2);
  EXPECT_TRUE(held.Settle(0));
  EXPECT_TRUE(held.WaitClosed(0, 10)) << "the replaced channel's connection is still open 10 s after its SETTINGS";
  EXPECT_TRUE(Eventually([&] { return rpclab::ConnsTo(held.addr) == 0; }))
      << "connections as the kernel sees them: " << rpclab::ConnsTo(held.addr) << ", want 0 (the new channel is idle)";
}

}  // namespace
