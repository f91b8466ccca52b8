// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's C++ client (docs/clients.md): a closed-loop sweep on gRPC C++'s
// synchronous API against a grpc.testing.BenchmarkService server, one JSON
// Lines record per step. Exit codes: 0 every step ok, 1 a step failed, 2 bad
// flags. SIGINT/SIGTERM end the running step at once; its record
// ("interrupted") and every earlier one are kept.
//
// The layouts show how C-core shares connections: channels created with
// identical arguments share one subchannel, so one TCP connection, through
// the global subchannel pool (channel-per-worker); only a per-channel
// subchannel pool (local-pool) or a distinct channel argument
// (distinct-args, per-worker, pool:N) gives a channel its own connection.

#include <fcntl.h>
#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flags.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "hdr.h"
#include "procnet.h"
#include "record.h"

namespace rpclab {
namespace {

using Clock = std::chrono::steady_clock;
using grpc::testing::BenchmarkService;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;

constexpr int kWarmup = 0, kMeasure = 1, kDone = 2;

// The stop asked by SIGINT/SIGTERM, and a condition to sleep on.
std::atomic<bool> g_stop{false};
std::mutex g_stop_mu;
std::condition_variable g_stop_cv;

// Sleeps ns; false if a stop was asked first.
bool Sleep(int64_t ns) {
  std::unique_lock<std::mutex> lk(g_stop_mu);
  return !g_stop_cv.wait_for(lk, std::chrono::nanoseconds(ns), [] { return g_stop.load(); });
}

// Waits for the signals main blocked in every thread.
void SignalLoop(sigset_t set) {
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

int64_t CpuNs() {
  timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

int64_t Since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

int64_t NowNs() { return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count(); }

const char* StateName(grpc_connectivity_state s) {
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
struct Worker {
  std::vector<BenchmarkService::Stub*> stubs;  // one, or a pool's (round-robin)
  std::atomic<uint64_t>* rr = nullptr;
  const std::atomic<int>* phase = nullptr;
  const SimpleRequest* req = nullptr;
  int64_t rpc_timeout_ns = 0;

  Histogram hist;
  std::array<int64_t, kCodes> by_code{};

  // The running call, so the step's end (or a stalled ping-pong) can cancel it.
  std::mutex mu;
  grpc::ClientContext* cur = nullptr;
  bool cancelled = false;
  std::atomic<int64_t> op_started{0};  // a ping-pong's start (steady ns); 0 when idle
  std::atomic<bool> timed_out{false};

  BenchmarkService::Stub* Pick() {
    if (stubs.size() == 1) return stubs[0];
    return stubs[rr->fetch_add(1, std::memory_order_relaxed) % stubs.size()];
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

  void Unary() {
    SimpleResponse resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      int ph = phase->load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      if (rpc_timeout_ns > 0) {
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(rpc_timeout_ns));
      }
      if (!Begin(&ctx)) break;
      auto t0 = Clock::now();
      grpc::Status s = Pick()->UnaryCall(&ctx, *req, &resp);
      int64_t d = Since(t0);
      End();
      Done(ph, d, s.error_code());
    }
  }

  // Bidi ping-pong: one stream, a reply awaited for every request.
  void Streaming() {
    SimpleResponse resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      grpc::ClientContext ctx;
      timed_out = false;
      if (!Begin(&ctx)) break;
      int ph = phase->load(std::memory_order_acquire);
      auto t0 = Clock::now();
      op_started = NowNs();
      auto stream = Pick()->StreamingCall(&ctx);
      bool broken = false;
      while (true) {
        if (!stream->Write(*req) || !stream->Read(&resp)) {
          broken = true;
          break;
        }
        op_started = 0;
        Done(ph, Since(t0), grpc::StatusCode::OK);
        if (phase->load(std::memory_order_acquire) == kDone) break;
        ph = phase->load(std::memory_order_acquire);
        t0 = Clock::now();
        op_started = NowNs();
      }
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

struct Channels {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<BenchmarkService::Stub>> stubs;
};

// Opens the layout's channels. Every channel of a step carries the step's
// number, so no step reuses a subchannel a previous one left in the global
// pool; within a step the arguments differ only as the layout says.
Channels Open(const Flags& f, const Conn& conn, int inflight, int step) {
  Channels c;
  int n = conn.Conns(inflight);
  for (int i = 0; i < n; i++) {
    grpc::ChannelArguments args;
    args.SetInt("rpclab.step", step);
    switch (conn.kind) {
      case ConnKind::kShared:
      case ConnKind::kChannelPerWorker:
        break;  // identical arguments
      case ConnKind::kLocalPool:
        args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
        break;
      case ConnKind::kDistinctArgs:
      case ConnKind::kPerWorker:
      case ConnKind::kPool:
        args.SetInt("rpclab.channel", i);
        break;
    }
    auto ch = grpc::CreateCustomChannel(f.target, grpc::InsecureChannelCredentials(), args);
    c.stubs.push_back(BenchmarkService::NewStub(ch));
    c.channels.push_back(std::move(ch));
  }
  return c;
}

// Waits until every channel is READY; an error message if not by deadline.
// std::nullopt: connected. "" : a stop was asked.
std::optional<std::string> Connect(const Channels& c, Clock::time_point deadline) {
  for (const auto& ch : c.channels) ch->GetState(true);
  for (const auto& ch : c.channels) {
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

std::string Seconds(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%gs", ns / 1e9);
  return b;
}

// Runs one step on fresh channels; nullopt if a stop came before its interval.
std::optional<Record> RunStep(const Flags& f, const std::string& rpc, const Conn& conn, int inflight, int step) {
  Record rec;
  rec.rpc = rpc;
  rec.conn = conn;
  rec.inflight = inflight;
  Channels c = Open(f, conn, inflight, step);
  auto err = Connect(c, Clock::now() + std::chrono::nanoseconds(f.dial_timeout_ns));
  if (err) {
    if (g_stop) return std::nullopt;
    rec.unreachable = true;
    rec.Fail("target unreachable: no connection to " + f.target + " within " + Seconds(f.dial_timeout_ns) + ": " +
             *err);
    return rec;
  }

  SimpleRequest req;
  req.set_response_size(static_cast<int32_t>(f.payload));
  req.mutable_payload()->mutable_body()->assign(static_cast<size_t>(f.payload), '\0');
  std::atomic<int> phase{kWarmup};
  std::atomic<uint64_t> rr{0};
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < inflight; i++) {
    auto w = std::make_unique<Worker>();
    switch (conn.kind) {
      case ConnKind::kShared:
        w->stubs = {c.stubs[0].get()};
        break;
      case ConnKind::kPool:
        for (auto& s : c.stubs) w->stubs.push_back(s.get());
        break;
      default:
        w->stubs = {c.stubs[i].get()};
    }
    w->rr = &rr;
    w->phase = &phase;
    w->req = &req;
    w->rpc_timeout_ns = f.rpc_timeout_ns;
    workers.push_back(std::move(w));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    Worker* p = w.get();
    if (rpc == "streaming") {
      threads.emplace_back([p] { p->Streaming(); });
    } else {
      threads.emplace_back([p] { p->Unary(); });
    }
  }
  // --rpc-timeout on streams: the sync API has no per-message deadline, so a
  // watchdog cancels a ping-pong that takes longer (the stream is reopened).
  std::atomic<bool> watch_done{false};
  std::thread watchdog;
  if (rpc == "streaming" && f.rpc_timeout_ns > 0) {
    watchdog = std::thread([&] {
      int64_t tick = std::max<int64_t>(1'000'000, std::min<int64_t>(f.rpc_timeout_ns / 4, 50'000'000));
      while (!watch_done) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(tick));
        int64_t before = NowNs() - f.rpc_timeout_ns;
        for (auto& w : workers) w->CancelIfStarted(before);
      }
    });
  }

  bool warmed = Sleep(f.warmup_ns);
  int64_t cpu0 = CpuNs();
  auto t0 = Clock::now();
  rec.started_at = std::chrono::system_clock::now();
  bool interrupted = !warmed;
  if (warmed) {
    phase.store(kMeasure, std::memory_order_release);
    // The connections the OS shows half-way, as rpclab's Go client counts
    // them (rpclab sweep --client replaces it with its own samples).
    interrupted = !Sleep(f.interval_ns / 2);
    if (!interrupted) {
      rec.conns_observed = ConnsTo(f.target);
      interrupted = !Sleep(std::max<int64_t>(0, f.interval_ns - Since(t0)));
    }
  }
  phase.store(kDone, std::memory_order_release);
  int64_t elapsed = Since(t0);
  int64_t cpu = CpuNs() - cpu0;
  for (auto& w : workers) w->Cancel();
  for (auto& t : threads) t.join();
  watch_done = true;
  if (watchdog.joinable()) watchdog.join();
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

int Run(const Flags& f) {
  FILE* out = stdout;
  if (!f.out.empty()) {
    out = std::fopen(f.out.c_str(), "w");
    if (out == nullptr) {
      std::perror(("rpclab-client (cpp): --out " + f.out).c_str());
      return 1;
    }
  }
  Env env = Env::Detect();
  env.grpc_version = grpc::Version();
  env.runtime_version = std::string("GCC ") + __VERSION__ + ", C++17 (sync API)";
  size_t steps = f.rpcs.size() * f.conns.size() * f.inflight.size();
  size_t i = 0;
  int failed = 0;
  std::string unreachable;
  for (const auto& rpc : f.rpcs) {
    for (const auto& conn : f.conns) {
      for (int n : f.inflight) {
        i++;
        if (g_stop) return 1;
        Record rec;
        if (!unreachable.empty()) {
          rec.rpc = rpc;
          rec.conn = conn;
          rec.inflight = n;
          rec.Fail("target unreachable: not run: " + unreachable);
        } else {
          auto r = RunStep(f, rpc, conn, n, static_cast<int>(i));
          if (!r) return 1;  // stopped before this step measured anything
          rec = std::move(*r);
        }
        if (rec.unreachable) {
          unreachable = "step " + std::to_string(i) + " (" + conn.Name() + " " + rpc + " inflight=" +
                        std::to_string(n) + ") could not connect";
        }
        if (rec.status == "failed") failed++;
        std::string line = rec.Json(f, env) + "\n";
        if (std::fwrite(line.data(), 1, line.size(), out) != line.size() || std::fflush(out) != 0 ||
            (out != stdout && fdatasync(fileno(out)) != 0)) {
          std::perror(("rpclab-client (cpp): write " + f.out).c_str());
          return 1;
        }
        std::fprintf(stderr, "rpclab-client (cpp): step %zu/%zu %s %s inflight=%d: %s\n", i, steps, rpc.c_str(),
                     conn.Name(), n, rec.Summary().c_str());
        if (rec.status == "interrupted") return 1;
      }
    }
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace rpclab

int main(int argc, char** argv) {
  // Block the stop signals before any thread (gRPC's included) starts, so
  // only the signal thread takes them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  std::vector<std::string> args(argv + 1, argv + argc);
  rpclab::Flags f;
  try {
    f = rpclab::Flags::Parse(args);
  } catch (const rpclab::Usage& u) {
    std::fprintf(stderr, "rpclab-client (cpp): %s\n", u.what());
    return 2;
  }
  std::thread(rpclab::SignalLoop, set).detach();
  int code = rpclab::Run(f);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip gRPC's global teardown: every record is written and synced
}
