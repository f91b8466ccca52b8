// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool against a real gRPC C++ server on loopback, whose
// UnaryCall answers with the peer address of the caller's connection, so a
// test sees which connection served each call. Connections are also counted
// as the kernel saw them (/proc/self/net/tcp, procnet.h). Every wait has a
// deadline; nothing sleeps. Run by ctest, or build/rpclab-pool-test (exit 0 = pass).

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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

int failures = 0;

#define FAIL(...)                                        \
  do {                                                   \
    failures++;                                          \
    std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
    std::fprintf(stderr, __VA_ARGS__);                   \
    std::fprintf(stderr, "\n");                          \
  } while (0)

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

void TestOwnConnections() {
  for (int n : {1, 2, 4}) {
    Server srv;
    ChannelPool pool(srv.addr, n);
    if (!pool.WaitForConnected(In(10))) FAIL("pool of %d: not connected within 10 s", n);
    std::set<std::string> peers;
    for (int i = 0; i < 2 * n; i++) peers.insert(Ping(pool));
    int kernel = rpclab::ConnsTo(srv.addr);
    if (static_cast<int>(peers.size()) != n || kernel != n) {
      FAIL("pool of %d: got %zu peers and %d connections in /proc, want %d and %d", n, peers.size(), kernel, n, n);
    }
    srv.Stop();
  }
}

void TestRoundRobin() {
  Server srv;
  ChannelPool pool(srv.addr, 3, Pick::kRoundRobin);
  std::vector<std::string> got;
  for (int i = 0; i < 9; i++) got.push_back(Ping(pool));
  for (int i = 3; i < 9; i++) {
    if (got[i] != got[i - 3])
      FAIL("call %d: got peer %s, want %s (call %d's)", i, got[i].c_str(), got[i - 3].c_str(), i - 3);
  }
  size_t distinct = std::set<std::string>(got.begin(), got.end()).size();
  if (distinct != 3) FAIL("got %zu peers, want 3", distinct);
  srv.Stop();
}

// NewStub is FooService::NewStub's drop-in: each stub on the next channel.
void TestNewStub() {
  Server srv;
  ChannelPool pool(srv.addr, 2);
  std::set<std::string> peers;
  for (int i = 0; i < 2; i++) {
    auto stub = pool.NewStub<BenchmarkService>();
    grpc::ClientContext ctx;
    ctx.set_deadline(In(10));
    SimpleRequest req;
    SimpleResponse resp;
    grpc::Status st = stub->UnaryCall(&ctx, req, &resp);
    if (!st.ok()) FAIL("stub %d: got %s, want OK", i, st.error_message().c_str());
    peers.insert(resp.payload().body());
  }
  if (peers.size() != 2) FAIL("two stubs: got %zu peers, want 2", peers.size());
  if (pool.InFlight() != std::vector<int>{0, 0}) FAIL("NewStub: got leases held, want none");
  srv.Stop();
}

void TestLeastLoaded() {
  Server srv;
  ChannelPool pool(srv.addr, 2, Pick::kLeastLoaded);
  srv.service.Hold();
  std::string held_got;
  std::thread held([&] { held_got = Ping(pool); });
  std::string busy = srv.service.WaitHeld();
  if (busy.empty()) FAIL("the held call did not arrive within 20 s");
  auto inflight = pool.InFlight();
  std::sort(inflight.begin(), inflight.end());
  if (inflight != std::vector<int>{0, 1}) FAIL("got in flight {%d, %d}, want {0, 1}", inflight[0], inflight[1]);
  for (int i = 0; i < 6; i++) {
    std::string p = Ping(pool);
    if (p.empty() || p == busy)
      FAIL("call %d: got peer %s, want the idle connection, not %s", i, p.c_str(), busy.c_str());
  }
  srv.service.Release();
  held.join();
  if (held_got != busy) FAIL("held call: got peer %s, want %s", held_got.c_str(), busy.c_str());
  if (pool.InFlight() != std::vector<int>{0, 0}) FAIL("after every call: leases still held");
  srv.Stop();
}

void TestRestart() {
  const int n = 3;
  auto srv = std::make_unique<Server>();
  int port = srv->Port();
  ChannelPool pool(srv->addr, n);
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
  if (ok < 2 * n)
    FAIL("after the restart: %d calls in a row succeeded within 20 s (%d errors), want %d", ok, errors, 2 * n);
  if (static_cast<int>(peers.size()) != n)
    FAIL("after the restart: got %zu connections serving, want %d", peers.size(), n);
  srv->Stop();
}

void TestBadInput() {
  struct Case {
    const char* name;
    std::function<void()> make;
    std::string want;
  };
  std::vector<Case> cases = {
      {"size 0", [] { ChannelPool p("127.0.0.1:1", 0); }, "size 0"},
      {"size -1", [] { ChannelPool p("127.0.0.1:1", -1); }, "size -1"},
      {"empty target", [] { ChannelPool p("", 2); }, "empty target"},
      {"unknown pick", [] { rpclab::ParsePick("fastest"); }, "\"fastest\""},
  };
  for (const auto& c : cases) {
    try {
      c.make();
      FAIL("%s: got no error, want std::invalid_argument naming %s", c.name, c.want.c_str());
    } catch (const std::invalid_argument& e) {
      if (std::string(e.what()).find(c.want) == std::string::npos) {
        FAIL("%s: got %s, want it to name %s", c.name, e.what(), c.want.c_str());
      }
    }
  }
  if (rpclab::ParsePick("least-loaded") != Pick::kLeastLoaded) FAIL("least-loaded: got another pick");
}

void TestNeverAnswers() {
  int port;
  {
    Server srv;  // a port nobody listens on once it stopped
    port = srv.Port();
    srv.Stop();
  }
  ChannelPool pool("127.0.0.1:" + std::to_string(port), 2);
  if (pool.WaitForConnected(In(1))) FAIL("a closed port: got connected, want false");
  grpc::Status st;
  Ping(pool, &st);
  if (st.ok()) FAIL("a closed port: got an OK call, want an error");
}

}  // namespace

int main() {
  TestBadInput();
  TestOwnConnections();
  TestRoundRobin();
  TestNewStub();
  TestLeastLoaded();
  TestRestart();
  TestNeverAnswers();
  if (failures > 0) {
    std::fprintf(stderr, "rpclab-pool-test: %d failures\n", failures);
    return 1;
  }
  std::printf("rpclab-pool-test: ok\n");
  return 0;
}
