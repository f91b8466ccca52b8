// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// A server killed and restarted under load: 4 threads of unary RPCs through
// a pool of 3 (least-loaded) to argv[1]. Prints "running" after 200 RPCs,
// then waits for a line on stdin (the server has been killed and started
// again on the same port), runs until 200 more RPCs succeed, and prints one
// JSON line: the RPCs that succeeded, the failures by code, and the
// connections to the server as the kernel has them once the pool is
// connected again. clients/conformance (TestCppPoolRestart, through
// testPoolRestart) drives it against `rpclab serve`, as it drives
// clients/python/pool/tests/restart.py.
//
//   rpclab-pool-restart 127.0.0.1:PORT

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel_pool.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "procnet.h"

namespace {

const char* CodeName(grpc::StatusCode c) {
  static const char* names[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  int i = static_cast<int>(c);
  return i >= 0 && i <= 16 ? names[i] : "UNKNOWN";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rpclab-pool-restart TARGET\n");
    return 2;
  }
  const std::string target = argv[1];
  rpclab::ChannelPool pool(target, 3, rpclab::Pick::kLeastLoaded, grpc::ChannelArguments(),
                           grpc::InsecureChannelCredentials());
  auto stub = pool.NewStub<grpc::testing::BenchmarkService>();
  std::mutex mu;
  std::condition_variable cv;
  int ok = 0;
  bool stop = false;
  std::map<std::string, int> failed;
  std::vector<std::thread> callers;
  for (int i = 0; i < 4; i++) {
    callers.emplace_back([&] {
      for (;;) {
        {
          std::lock_guard<std::mutex> lk(mu);
          if (stop) return;
        }
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        grpc::testing::SimpleRequest req;
        grpc::testing::SimpleResponse resp;
        grpc::Status st = stub->UnaryCall(&ctx, req, &resp);
        std::lock_guard<std::mutex> lk(mu);
        if (st.ok()) {
          ok++;
          cv.notify_all();
        } else {
          failed[CodeName(st.error_code())]++;
        }
      }
    });
  }
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::seconds(60), [&] { return ok >= 200; });
  }
  std::printf("running\n");
  std::fflush(stdout);
  std::string line;
  std::getline(std::cin, line);
  bool recovered;
  {
    std::unique_lock<std::mutex> lk(mu);
    int before = ok;
    recovered = cv.wait_for(lk, std::chrono::seconds(60), [&] { return ok >= before + 200; });
    stop = true;
  }
  for (auto& t : callers) t.join();
  // A channel replaced after TRANSIENT_FAILURE (a long restart) is kept by
  // the pool until it is READY or IDLE, then let go (README.md, "Letting
  // go of a channel"), so its connection may be open for a watcher period:
  // the count is taken once it is the pool's size, or at a bound (then any
  // extra connection is a leak, and the count says so).
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  pool.WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(30));
  int conns = rpclab::ConnsTo(target);
  while (conns != 3 && std::chrono::steady_clock::now() < until) {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::milliseconds(50));  // nothing to wait on: C-core closes sockets unseen
    lk.unlock();
    conns = rpclab::ConnsTo(target);
  }
  int redials = pool.redials();
  pool.Close();
  std::string f;
  for (const auto& [code, n] : failed) f += (f.empty() ? "" : ", ") + ("\"" + code + "\": " + std::to_string(n));
  std::printf("{\"ok\": %d, \"failed\": {%s}, \"recovered\": %s, \"conns\": %d, \"redials\": %d}\n", ok, f.c_str(),
              recovered ? "true" : "false", conns, redials);
  std::fflush(stdout);
  return 0;
}
