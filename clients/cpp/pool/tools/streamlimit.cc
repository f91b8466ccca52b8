// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Growth at the server's stream limit against a real server: 16 RPCs in
// flight (16 threads of blocking unary calls through one stub on the pool)
// through a pool of size 1, with growth on (max_connections 8,
// streams_per_connection 4) and off. For each, the connections to the
// server as the kernel has them (this process's sockets, /proc/self/fd and
// /proc/net/tcp) while the 16 run, and the RPCs per second over a measured
// interval. Prints one JSON line, as clients/python/pool/tests/streamlimit.py
// does; clients/conformance (TestCppPoolStreamLimit) runs it against
// `rpclab serve --max-concurrent-streams 4 --delay 2ms`.
//
//   rpclab-pool-streamlimit 127.0.0.1:PORT [seconds]

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "channel_pool.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "procnet.h"

namespace {

constexpr int kInFlight = 16;

struct Result {
  int conns = 0, channels = 0, resizes = 0;
  long rps = 0;
  std::string Json() const {
    return "{\"conns\": " + std::to_string(conns) + ", \"channels\": " + std::to_string(channels) +
           ", \"rps\": " + std::to_string(rps) + ", \"resizes\": " + std::to_string(resizes) + "}";
  }
};

Result Run(const std::string& target, double seconds, bool growth) {
  rpclab::PoolOptions o;
  o.size = 1;
  if (growth) {
    o.max_connections = 8;
    o.streams_per_connection = 4;
  }
  rpclab::ChannelPool pool(target, grpc::InsecureChannelCredentials(), o);
  auto stub = pool.NewStub<grpc::testing::BenchmarkService>();
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<long> done{0};
  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < kInFlight; i++) {
    workers.emplace_back([&] {
      while (!stop.load()) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        grpc::testing::SimpleRequest req;
        grpc::testing::SimpleResponse resp;
        grpc::Status st = stub->UnaryCall(&ctx, req, &resp);
        if (!st.ok()) {
          if (failed++ == 0) std::fprintf(stderr, "UnaryCall: %d %s\n", st.error_code(), st.error_message().c_str());
          continue;
        }
        if (++done == 400) {
          std::lock_guard<std::mutex> lk(mu);
          cv.notify_all();
        }
      }
    });
  }
  Result r;
  {
    std::unique_lock<std::mutex> lk(mu);
    if (!cv.wait_for(lk, std::chrono::seconds(60), [&] { return done.load() >= 400; })) {
      std::fprintf(stderr, "only %ld RPCs succeeded in 60 s\n", done.load());
      std::exit(1);
    }
  }
  r.conns = rpclab::ConnsTo(target);
  long n0 = done.load();
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));  // the measured interval
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.rps = static_cast<long>((done.load() - n0) / took + 0.5);
  stop = true;
  for (auto& t : workers) t.join();
  r.channels = pool.size();
  r.resizes = pool.resizes();
  pool.Close();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: rpclab-pool-streamlimit TARGET [seconds]\n");
    return 2;
  }
  double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  Result on = Run(argv[1], seconds, true);
  Result off = Run(argv[1], seconds, false);
  double ratio = static_cast<double>(on.rps) / (off.rps > 0 ? off.rps : 1);
  std::printf("{\"on\": %s, \"off\": %s, \"ratio\": %.2f}\n", on.Json().c_str(), off.Json().c_str(), ratio);
  return 0;
}
