// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The worker code rpclab-client and rpclab-ydb-ping share: closed-loop
// workers on gRPC C++'s sync, completion-queue and callback APIs (one RPC in
// flight each, their own histogram), the channels they call on, the
// connect wait, the measured interval, and the stop SIGINT/SIGTERM ask.
#ifndef RPCLAB_WORKER_H_
#define RPCLAB_WORKER_H_

#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "channel_pool.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "hdr.h"
#include "record.h"
#include "ydb/debug/v1/debug.grpc.pb.h"

namespace rpclab {

using Clock = std::chrono::steady_clock;
using grpc::testing::BenchmarkService;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;

// The services a worker can ping: the calls a worker makes, by API.
struct BenchProto {
  using Service = BenchmarkService;
  using Req = SimpleRequest;
  using Resp = SimpleResponse;
  static grpc::Status Call(Service::Stub* s, grpc::ClientContext* c, const Req& q, Resp* r) {
    return s->UnaryCall(c, q, r);
  }
  static auto Stream(Service::Stub* s, grpc::ClientContext* c) { return s->StreamingCall(c); }
  static auto AsyncCall(Service::Stub* s, grpc::ClientContext* c, const Req& q, grpc::CompletionQueue* cq) {
    return s->PrepareAsyncUnaryCall(c, q, cq);
  }
  static void CallbackCall(Service::Stub* s, grpc::ClientContext* c, const Req* q, Resp* r,
                           std::function<void(grpc::Status)> done) {
    s->async()->UnaryCall(c, q, r, std::move(done));
  }
};

// YDB's Ydb.Debug.V1.DebugService: PingPlainGrpc and PingStream.
struct YdbProto {
  using Service = Ydb::Debug::V1::DebugService;
  using Req = Ydb::Debug::V1::PlainGrpcRequest;
  using Resp = Ydb::Debug::V1::PlainGrpcResponse;
  static grpc::Status Call(Service::Stub* s, grpc::ClientContext* c, const Req& q, Resp* r) {
    return s->PingPlainGrpc(c, q, r);
  }
  static auto Stream(Service::Stub* s, grpc::ClientContext* c) { return s->PingStream(c); }
  static auto AsyncCall(Service::Stub* s, grpc::ClientContext* c, const Req& q, grpc::CompletionQueue* cq) {
    return s->PrepareAsyncPingPlainGrpc(c, q, cq);
  }
  static void CallbackCall(Service::Stub* s, grpc::ClientContext* c, const Req* q, Resp* r,
                           std::function<void(grpc::Status)> done) {
    s->async()->PingPlainGrpc(c, q, r, std::move(done));
  }
};

// One asynchronous call's completion, awaited by the worker that made it:
// the tag of a completion-queue call, or signalled by a callback.
struct Waiter {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;

  // Notify under the lock: the worker cannot move on (and reuse this) until
  // the notifier has let go.
  void Notify() {
    std::lock_guard<std::mutex> lk(mu);
    done = true;
    cv.notify_one();
  }
  // Wait waits for Notify, then readies this for the next call.
  void Wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [this] { return done; });
    done = false;
  }
};

constexpr int kWarmup = 0, kMeasure = 1, kDone = 2;

// The stop asked by SIGINT/SIGTERM, and a condition to sleep on.
inline std::atomic<bool> g_stop{false};
inline std::mutex g_stop_mu;
inline std::condition_variable g_stop_cv;

// Sleeps ns; false if a stop was asked first.
inline bool Sleep(int64_t ns) {
  std::unique_lock<std::mutex> lk(g_stop_mu);
  return !g_stop_cv.wait_for(lk, std::chrono::nanoseconds(ns), [] { return g_stop.load(); });
}

// Waits for the signals main blocked in every thread.
inline void SignalLoop(sigset_t set) {
  for (int n = 0;; n++) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (n > 0) _exit(1);  // a second signal: the first one is not being honoured
    {
      std::lock_guard<std::mutex> lk(g_stop_mu);
      g_stop = true;
    }
    g_stop_cv.notify_all();
  }
}

inline int64_t CpuNs() {
  timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t Since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

inline const char* StateName(grpc_connectivity_state s) {
  switch (s) {
    case GRPC_CHANNEL_IDLE: return "IDLE";
    case GRPC_CHANNEL_CONNECTING: return "CONNECTING";
    case GRPC_CHANNEL_READY: return "READY";
    case GRPC_CHANNEL_TRANSIENT_FAILURE: return "TRANSIENT_FAILURE";
    case GRPC_CHANNEL_SHUTDOWN: return "SHUTDOWN";
  }
  return "?";
}

// One closed-loop worker: one RPC in flight at a time, its own histogram.
template <typename P>
struct Worker {
  using Stub = typename P::Service::Stub;
  std::vector<Stub*> stubs;     // one, or one per channel of pool
  ChannelPool* pool = nullptr;  // pool:N: picks each call's channel (stubs[lease.index()])
  ChannelPool::Lease lease;     // the pool's count of this worker's call (or stream)
  const std::atomic<int>* phase = nullptr;
  const typename P::Req* req = nullptr;
  int64_t rpc_timeout_ns = 0;
  grpc::CompletionQueue* cq = nullptr;  // AsyncUnary's queue
  Waiter waiter;                        // AsyncUnary's and CallbackUnary's completion

  Histogram hist;
  std::array<int64_t, kCodes> by_code{};

  // The running call, so the step's end (or a stalled ping-pong) can cancel it.
  std::mutex mu;
  grpc::ClientContext* cur = nullptr;
  bool cancelled = false;
  std::atomic<int64_t> op_started{0};  // a ping-pong's start (steady ns); 0 when idle
  std::atomic<bool> timed_out{false};

  // The next call's stub; with a pool, the previous call's lease ends first.
  Stub* Pick() {
    if (pool == nullptr) return stubs[0];
    lease = ChannelPool::Lease();
    lease = pool->Acquire();
    return stubs[lease.index()];
  }

  bool Begin(grpc::ClientContext* ctx) {
    std::lock_guard<std::mutex> lk(mu);
    if (cancelled) return false;
    cur = ctx;
    return true;
  }
  void End() {
    std::lock_guard<std::mutex> lk(mu);
    cur = nullptr;
  }
  void Cancel() {
    std::lock_guard<std::mutex> lk(mu);
    cancelled = true;
    if (cur != nullptr) cur->TryCancel();
  }
  // Cancels a ping-pong that began before `before` (--rpc-timeout on streams).
  void CancelIfStarted(int64_t before) {
    std::lock_guard<std::mutex> lk(mu);
    int64_t t = op_started.load();
    if (cur != nullptr && t != 0 && t < before) {
      timed_out = true;
      cur->TryCancel();
    }
  }

  // Records an RPC that began and ended inside the measured interval.
  void Done(int began, int64_t ns, grpc::StatusCode code) {
    if (began != kMeasure || phase->load(std::memory_order_acquire) != kMeasure) return;
    int c = static_cast<int>(code);
    if (c < 0 || c >= kCodes) c = static_cast<int>(grpc::StatusCode::UNKNOWN);
    by_code[c]++;
    if (code == grpc::StatusCode::OK) hist.Record(ns);
  }

  // The call's code, CANCELLED at or past its deadline counted as
  // DEADLINE_EXCEEDED (CheckedCode). A call the step's end cancelled is not
  // counted at all (Done).
  grpc::StatusCode DeadlineChecked(grpc::StatusCode code, const grpc::ClientContext& ctx) const {
    bool past = rpc_timeout_ns > 0 && std::chrono::system_clock::now() >= ctx.deadline();
    return static_cast<grpc::StatusCode>(CheckedCode(static_cast<int>(code), rpc_timeout_ns > 0, past));
  }

  // Makes unary calls until the step ends: call(ctx, stub) makes one and
  // returns its status.
  template <typename F>
  void Calls(F call) {
    while (phase->load(std::memory_order_acquire) != kDone) {
      int ph = phase->load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      if (rpc_timeout_ns > 0) {
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(rpc_timeout_ns));
      }
      if (!Begin(&ctx)) break;
      auto t0 = Clock::now();
      grpc::Status s = call(&ctx, Pick());
      int64_t d = Since(t0);
      End();
      Done(ph, d, DeadlineChecked(s.error_code(), ctx));
    }
  }

  // Unary calls on the sync API.
  void Unary() {
    typename P::Resp resp;
    Calls([&](grpc::ClientContext* ctx, Stub* stub) { return P::Call(stub, ctx, *req, &resp); });
  }

  // Unary calls on the completion-queue API: the worker starts a call on its
  // client's queue and waits until the queue's thread hands its tag back.
  void AsyncUnary() {
    typename P::Resp resp;
    Calls([&](grpc::ClientContext* ctx, Stub* stub) {
      grpc::Status s;
      auto call = P::AsyncCall(stub, ctx, *req, cq);
      call->StartCall();
      call->Finish(&resp, &s, &waiter);
      waiter.Wait();
      return s;
    });
  }

  // Unary calls on the callback API: gRPC's own threads run the callback.
  void CallbackUnary() {
    typename P::Resp resp;
    Calls([&](grpc::ClientContext* ctx, Stub* stub) {
      grpc::Status s;
      P::CallbackCall(stub, ctx, req, &resp, [&](grpc::Status st) {
        s = std::move(st);
        waiter.Notify();
      });
      waiter.Wait();
      return s;
    });
  }

  // Bidi ping-pong: one stream, a reply awaited for every request.
  void Streaming() {
    typename P::Resp resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      grpc::ClientContext ctx;
      timed_out = false;
      if (!Begin(&ctx)) break;
      int ph = 0;
      Clock::time_point t0;
      auto start = [&] {  // a ping-pong's start
        ph = phase->load(std::memory_order_acquire);
        t0 = Clock::now();
        op_started = NowNs();
      };
      start();
      auto stream = P::Stream(Pick(), &ctx);
      while (stream->Write(*req) && stream->Read(&resp)) {
        op_started = 0;
        Done(ph, Since(t0), grpc::StatusCode::OK);
        if (phase->load(std::memory_order_acquire) == kDone) break;
        start();
      }
      // Ended by the step, or broken (a failure Done records only while the
      // step measures).
      bool broken = phase->load(std::memory_order_acquire) != kDone;
      op_started = 0;
      if (!broken) ctx.TryCancel();  // the step ended: drop the stream
      grpc::Status st = stream->Finish();
      if (broken) {
        grpc::StatusCode code = st.error_code();
        if (timed_out) {
          code = grpc::StatusCode::DEADLINE_EXCEEDED;
        } else if (code == grpc::StatusCode::OK) {
          code = grpc::StatusCode::UNAVAILABLE;  // the server ended the stream
        }
        Done(ph, Since(t0), code);
      }
      End();
    }
  }
};

template <typename P>
struct Channels {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<typename P::Service::Stub>> stubs;
  std::unique_ptr<ChannelPool> pool;  // pool:N's channels, the same as channels

  void Add(std::shared_ptr<grpc::Channel> ch) {
    stubs.push_back(P::Service::NewStub(ch));
    channels.push_back(std::move(ch));
  }
  void Add(const std::string& target, const grpc::ChannelArguments& args) {
    Add(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }
};

// Waits until every channel is READY; an error message if not by deadline.
// std::nullopt: connected. "" : a stop was asked.
inline std::optional<std::string> Connect(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                                          Clock::time_point deadline) {
  for (const auto& ch : channels) ch->GetState(true);
  for (const auto& ch : channels) {
    while (true) {
      if (g_stop) return std::string();
      auto slice = std::min(deadline, Clock::now() + std::chrono::milliseconds(100));
      auto sys = std::chrono::system_clock::now() + (slice - Clock::now());
      if (ch->WaitForConnected(sys)) break;
      if (Clock::now() >= deadline) {
        return std::string("last state ") + StateName(ch->GetState(false));
      }
    }
  }
  return std::nullopt;
}

inline std::string Seconds(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%gs", ns / 1e9);
  return b;
}

// A step's workers, their threads, and the phase they run in.
template <typename P>
struct Team {
  std::atomic<int> phase{kWarmup};
  std::vector<std::unique_ptr<Worker<P>>> workers;
  std::vector<std::thread> threads;

  // Start starts n workers on loop (Worker::Unary, Streaming, ...), each
  // calling with req and rpc_timeout_ns on the stubs setup(i, worker) gives.
  template <typename F>
  void Start(int n, void (Worker<P>::*loop)(), const typename P::Req* req, int64_t rpc_timeout_ns, F setup) {
    for (int i = 0; i < n; i++) {
      workers.push_back(std::make_unique<Worker<P>>());
      Worker<P>* w = workers.back().get();
      w->phase = &phase;
      w->req = req;
      w->rpc_timeout_ns = rpc_timeout_ns;
      setup(i, *w);
      threads.emplace_back(loop, w);
    }
  }

  // Measure runs the workers through the warmup and the measured interval,
  // then stops them (cancelling the calls in flight) and joins their
  // threads. It fills rec from their merged figures; nullopt if a stop came
  // before the interval. conns counts the connections half-way through the
  // interval; on_measure (may be empty) runs when the interval starts.
  std::optional<Record> Measure(Record rec, int64_t warmup_ns, int64_t interval_ns, const std::function<int()>& conns,
                                const std::function<void()>& on_measure) {
    bool warmed = Sleep(warmup_ns);
    int64_t cpu0 = CpuNs();
    auto t0 = Clock::now();
    rec.started_at = std::chrono::system_clock::now();
    bool interrupted = !warmed;
    if (warmed) {
      if (on_measure) on_measure();
      phase.store(kMeasure, std::memory_order_release);
      // The connections the OS shows half-way, as rpclab's Go client counts
      // them (rpclab sweep --client replaces it with its own samples).
      interrupted = !Sleep(interval_ns / 2);
      if (!interrupted) {
        rec.conns_observed = conns();
        interrupted = !Sleep(std::max<int64_t>(0, interval_ns - Since(t0)));
      }
    }
    phase.store(kDone, std::memory_order_release);
    int64_t elapsed = Since(t0);
    int64_t cpu = CpuNs() - cpu0;
    for (auto& w : workers) w->Cancel();
    for (auto& t : threads) t.join();
    threads.clear();
    if (!warmed) return std::nullopt;
    Histogram hist;
    std::array<int64_t, kCodes> by_code{};
    for (auto& w : workers) {
      hist.Merge(w->hist);
      for (int i = 0; i < kCodes; i++) by_code[i] += w->by_code[i];
    }
    rec.Fill(hist, by_code, elapsed, cpu);
    if (interrupted) {
      rec.status = "interrupted";
      rec.error = "interrupted: the interval was cut short";
    }
    return rec;
  }
};

// ClientEnv is the record's env of a program on gRPC C++'s api.
inline Env ClientEnv(const std::string& api) {
  Env env = Env::Detect();
  env.grpc_version = grpc::Version();
  env.runtime_version = std::string("GCC ") + __VERSION__ + ", C++17 (" + api + ")";
  return env;
}

// WriteRecord writes one record line to out, flushed (and synced when out is
// a file); path names it in an error.
inline bool WriteRecord(FILE* out, const std::string& path, const Record& rec, const Env& env) {
  std::string line = rec.Json(env) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), out) != line.size() || std::fflush(out) != 0 ||
      (out != stdout && fdatasync(fileno(out)) != 0)) {
    std::perror(("rpclab (cpp): write " + path).c_str());
    return false;
  }
  return true;
}

// BlockStopSignals blocks SIGINT and SIGTERM in this thread (call it before
// any other thread, gRPC's included, starts) and starts the thread that
// takes them.
inline void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(SignalLoop, set).detach();
}

}  // namespace rpclab

#endif  // RPCLAB_WORKER_H_
