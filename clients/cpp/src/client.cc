// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's C++ client (docs/clients.md): a closed-loop sweep on gRPC C++'s
// synchronous API against a grpc.testing.BenchmarkService server, one JSON
// Lines record per step. Exit codes: 0 every step ok, 1 a step failed, 2 bad
// flags. SIGINT/SIGTERM end the running step at once; its record
// ("interrupted") and every earlier one are kept.
//
// YDB mode (ydb.h): YDB's grpc_ping_client command line (--host, --with-csv,
// --streaming, --local-pool, --async, ...) pings Ydb.Debug.V1.DebugService
// with the same closed-loop workers, on the sync, completion-queue or
// callback API, and prints YDB's tables; --out still gets the records.
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

#include "flags.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "hdr.h"
#include "procnet.h"
#include "record.h"
#include "ydb.h"
#include "ydb/debug/v1/debug.grpc.pb.h"

namespace rpclab {
namespace {

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

  void Reset() {
    std::lock_guard<std::mutex> lk(mu);
    done = false;
  }
  // Notify under the lock: the worker cannot move on (and reuse this) until
  // the notifier has let go.
  void Notify() {
    std::lock_guard<std::mutex> lk(mu);
    done = true;
    cv.notify_one();
  }
  void Wait() {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [this] { return done; });
  }
};

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
template <typename P>
struct Worker {
  using Stub = typename P::Service::Stub;
  std::vector<Stub*> stubs;  // one, or a pool's (round-robin)
  std::atomic<uint64_t>* rr = nullptr;
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

  Stub* Pick() {
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

  void Deadline(grpc::ClientContext* ctx) const {
    if (rpc_timeout_ns > 0) {
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::nanoseconds(rpc_timeout_ns));
    }
  }

  void Unary() {
    typename P::Resp resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      int ph = phase->load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      Deadline(&ctx);
      if (!Begin(&ctx)) break;
      auto t0 = Clock::now();
      grpc::Status s = P::Call(Pick(), &ctx, *req, &resp);
      int64_t d = Since(t0);
      End();
      Done(ph, d, s.error_code());
    }
  }

  // Unary calls on the completion-queue API: the worker starts a call on its
  // client's queue and waits until the queue's thread hands its tag back.
  void AsyncUnary() {
    typename P::Resp resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      int ph = phase->load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      Deadline(&ctx);
      if (!Begin(&ctx)) break;
      grpc::Status s;
      waiter.Reset();
      auto t0 = Clock::now();
      auto call = P::AsyncCall(Pick(), &ctx, *req, cq);
      call->StartCall();
      call->Finish(&resp, &s, &waiter);
      waiter.Wait();
      int64_t d = Since(t0);
      End();
      Done(ph, d, s.error_code());
    }
  }

  // Unary calls on the callback API: gRPC's own threads run the callback.
  void CallbackUnary() {
    typename P::Resp resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      int ph = phase->load(std::memory_order_acquire);
      grpc::ClientContext ctx;
      Deadline(&ctx);
      if (!Begin(&ctx)) break;
      grpc::Status s;
      waiter.Reset();
      auto t0 = Clock::now();
      P::CallbackCall(Pick(), &ctx, req, &resp, [this, &s](grpc::Status st) {
        s = std::move(st);
        waiter.Notify();
      });
      waiter.Wait();
      int64_t d = Since(t0);
      End();
      Done(ph, d, s.error_code());
    }
  }

  // Bidi ping-pong: one stream, a reply awaited for every request.
  void Streaming() {
    typename P::Resp resp;
    while (phase->load(std::memory_order_acquire) != kDone) {
      grpc::ClientContext ctx;
      timed_out = false;
      if (!Begin(&ctx)) break;
      int ph = phase->load(std::memory_order_acquire);
      auto t0 = Clock::now();
      op_started = NowNs();
      auto stream = P::Stream(Pick(), &ctx);
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

template <typename P>
struct Channels {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<typename P::Service::Stub>> stubs;

  void Add(const std::string& target, const grpc::ChannelArguments& args) {
    auto ch = grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
    stubs.push_back(P::Service::NewStub(ch));
    channels.push_back(std::move(ch));
  }
};

// Opens the layout's channels. Every channel of a step carries the step's
// number, so no step reuses a subchannel a previous one left in the global
// pool; within a step the arguments differ only as the layout says.
Channels<BenchProto> Open(const Flags& f, const Conn& conn, int inflight, int step) {
  Channels<BenchProto> c;
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
    c.Add(f.target, args);
  }
  return c;
}

// Waits until every channel is READY; an error message if not by deadline.
// std::nullopt: connected. "" : a stop was asked.
std::optional<std::string> Connect(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
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

std::string Seconds(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%gs", ns / 1e9);
  return b;
}

// Measure runs started workers through the warmup and the measured interval,
// then stops them (cancelling the calls in flight) and joins their threads.
// It fills rec from their merged figures; nullopt if a stop came before the
// interval. conns counts the connections half-way through the interval;
// on_measure (may be empty) runs when the interval starts.
template <typename P>
std::optional<Record> Measure(Record rec, int64_t warmup_ns, int64_t interval_ns, std::atomic<int>& phase,
                              std::vector<std::unique_ptr<Worker<P>>>& workers, std::vector<std::thread>& threads,
                              const std::function<int()>& conns, const std::function<void()>& on_measure) {
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

// Runs one step on fresh channels; nullopt if a stop came before its interval.
std::optional<Record> RunStep(const Flags& f, const std::string& rpc, const Conn& conn, int inflight, int step) {
  Record rec;
  rec.rpc = rpc;
  rec.conn = conn;
  rec.inflight = inflight;
  auto c = Open(f, conn, inflight, step);
  auto err = Connect(c.channels, Clock::now() + std::chrono::nanoseconds(f.dial_timeout_ns));
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
  std::vector<std::unique_ptr<Worker<BenchProto>>> workers;
  for (int i = 0; i < inflight; i++) {
    auto w = std::make_unique<Worker<BenchProto>>();
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
    auto* p = w.get();
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
  auto out = Measure<BenchProto>(std::move(rec), f.warmup_ns, f.interval_ns, phase, workers, threads,
                                 [&] { return ConnsTo(f.target); }, nullptr);
  watch_done = true;
  if (watchdog.joinable()) watchdog.join();
  return out;
}

// A YDB mode step: its record, and each worker's successful RPCs per second
// (--per-worker-stats).
struct YdbStep {
  Record rec;
  std::vector<double> worker_rps;
};

// The unary deadline YDB's client sets on every PingPlainGrpc (1 s); a
// deadline costs a timer per call, so YDB mode keeps it.
constexpr int64_t kYdbDeadlineNs = 1'000'000'000;

// Runs one YDB mode step as YDB's client runs it: min(in-flight,
// --max-channels) channels over the hosts round-robin, each with identical
// arguments unless --local-pool gives it its own subchannel pool; worker i
// uses channel i mod channels (sync), or async client i mod clients, each
// client on channel k mod channels with its own completion queue and thread
// (--async) or on the callback API (--async-callback).
std::optional<YdbStep> RunYdbStep(const YdbFlags& y, int inflight, int step) {
  YdbStep out;
  Record& rec = out.rec;
  rec.rpc = y.streaming ? "streaming" : "unary";
  rec.service = "ydb-debug";  // Ydb.Debug.V1.DebugService
  rec.inflight = inflight;
  int nch = y.Channels(inflight);
  rec.channels = nch;
  rec.conn.kind = nch == 1 ? ConnKind::kShared : y.local_pool ? ConnKind::kLocalPool : ConnKind::kChannelPerWorker;
  std::printf("\nRunning benchmark with %d concurrent requests using %d channels...\n", inflight, nch);
  Channels<YdbProto> c;
  for (int i = 0; i < nch; i++) {
    grpc::ChannelArguments args;
    args.SetInt("rpclab.step", step);  // no step reuses an earlier step's connection
    if (y.local_pool) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    c.Add(y.hosts[i % y.hosts.size()], args);
  }
  auto err = Connect(c.channels, Clock::now() + std::chrono::nanoseconds(y.dial_timeout_ns));
  if (err) {
    if (g_stop) return std::nullopt;
    rec.unreachable = true;
    rec.Fail("target unreachable: no connection to " + y.host_arg + " within " + Seconds(y.dial_timeout_ns) + ": " +
             *err);
    return out;
  }

  // The async clients: a stub each (on channel k mod channels) and, for
  // --async, a completion queue and the thread that polls it.
  struct AsyncClient {
    YdbProto::Service::Stub* stub = nullptr;
    std::unique_ptr<grpc::CompletionQueue> cq;
    std::thread poller;
  };
  std::vector<AsyncClient> clients;
  if (y.api != YdbApi::kSync) {
    int n = y.AsyncClients(inflight);
    std::printf("Using %d async clients...\n", n);
    clients.resize(n);
    for (int k = 0; k < n; k++) {
      clients[k].stub = c.stubs[k % nch].get();
      if (y.api == YdbApi::kAsync) {
        clients[k].cq = std::make_unique<grpc::CompletionQueue>();
        grpc::CompletionQueue* cq = clients[k].cq.get();
        clients[k].poller = std::thread([cq] {
          void* tag;
          bool ok;
          while (cq->Next(&tag, &ok)) static_cast<Waiter*>(tag)->Notify();
        });
      }
    }
  }

  YdbProto::Req req;
  std::atomic<int> phase{kWarmup};
  std::atomic<uint64_t> rr{0};
  std::vector<std::unique_ptr<Worker<YdbProto>>> workers;
  for (int i = 0; i < inflight; i++) {
    auto w = std::make_unique<Worker<YdbProto>>();
    if (clients.empty()) {
      w->stubs = {c.stubs[i % nch].get()};
    } else {
      AsyncClient& ac = clients[i % clients.size()];
      w->stubs = {ac.stub};
      w->cq = ac.cq.get();
    }
    w->rr = &rr;
    w->phase = &phase;
    w->req = &req;
    w->rpc_timeout_ns = y.streaming ? 0 : kYdbDeadlineNs;
    workers.push_back(std::move(w));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    auto* p = w.get();
    if (y.streaming) {
      threads.emplace_back([p] { p->Streaming(); });
    } else if (y.api == YdbApi::kAsync) {
      threads.emplace_back([p] { p->AsyncUnary(); });
    } else if (y.api == YdbApi::kCallback) {
      threads.emplace_back([p] { p->CallbackUnary(); });
    } else {
      threads.emplace_back([p] { p->Unary(); });
    }
  }
  std::printf("Warmup phase started...\n");
  std::fflush(stdout);
  auto conns = [&] {
    // Every host once: ConnsTo counts all of this process's connections to it.
    int total = 0;
    std::vector<std::string> seen;
    for (const auto& h : y.hosts) {
      if (std::find(seen.begin(), seen.end(), h) != seen.end()) continue;
      seen.push_back(h);
      int n = ConnsTo(h);
      if (n < 0) return -1;
      total += n;
    }
    return total;
  };
  auto measured = Measure<YdbProto>(std::move(out.rec), y.warmup_ns, y.interval_ns, phase, workers, threads, conns, [] {
    std::printf("Warmup phase completed, measuring...\n");
    std::fflush(stdout);
  });
  // Every worker has joined, so no call is pending: the queues drain at once.
  for (auto& ac : clients) {
    if (ac.cq) {
      ac.cq->Shutdown();
      ac.poller.join();
    }
  }
  if (!measured) return std::nullopt;
  out.rec = std::move(*measured);
  double secs = static_cast<double>(out.rec.duration_ns) / 1e9;
  for (auto& w : workers) out.worker_rps.push_back(secs > 0 ? static_cast<double>(w->by_code[0]) / secs : 0);
  return out;
}

// Writes one record line to out (stdout or --out), synced.
bool WriteRecord(FILE* out, const std::string& path, const Record& rec, const Flags& spec, const Env& env) {
  std::string line = rec.Json(spec, env) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), out) != line.size() || std::fflush(out) != 0 ||
      (out != stdout && fdatasync(fileno(out)) != 0)) {
    std::perror(("rpclab-client (cpp): write " + path).c_str());
    return false;
  }
  return true;
}

// RunYdb runs YDB mode: every in-flight value as a step, YDB's text on
// stdout, the records in --out. Tables are printed for the steps measured,
// also when a step fails or a stop cuts the run short.
int RunYdb(const YdbFlags& y) {
  FILE* out = nullptr;
  if (!y.out.empty()) {
    out = std::fopen(y.out.c_str(), "w");
    if (out == nullptr) {
      std::perror(("rpclab-client (cpp): --out " + y.out).c_str());
      return 1;
    }
  }
  Flags spec = y.Spec();
  Env env = Env::Detect();
  env.grpc_version = grpc::Version();
  env.runtime_version = std::string("GCC ") + __VERSION__ + ", C++17 (YDB mode, " + YdbApiName(y.api) + " API)";
  std::vector<YdbRow> rows;
  std::vector<double> last_worker_rps;
  int failed = 0, code = 0;
  std::string unreachable;
  {
    // YDB's client first connects once to its first host and prints
    // whether TCP_NODELAY is set on that connection; so does YDB mode, read
    // from the socket. Unreachable: no line (the first step says so).
    grpc::ChannelArguments args;
    args.SetInt("rpclab.step", 0);  // a connection of its own, reused by no step
    auto probe = grpc::CreateCustomChannel(y.hosts[0], grpc::InsecureChannelCredentials(), args);
    if (!Connect({probe}, Clock::now() + std::chrono::nanoseconds(y.dial_timeout_ns))) {
      std::fputs(YdbNagleLine(NoDelayTo(y.hosts[0])).c_str(), stdout);
      std::fflush(stdout);
    }
  }
  for (size_t i = 0; i < y.inflight.size(); i++) {
    int n = y.inflight[i];
    if (g_stop) {
      code = 1;
      break;
    }
    YdbStep st;
    if (!unreachable.empty()) {
      st.rec.rpc = y.streaming ? "streaming" : "unary";
      st.rec.inflight = n;
      st.rec.channels = y.Channels(n);
      st.rec.Fail("target unreachable: not run: " + unreachable);
    } else {
      auto r = RunYdbStep(y, n, static_cast<int>(i + 1));
      if (!r) {  // stopped before this step measured anything
        code = 1;
        break;
      }
      st = std::move(*r);
    }
    Record& rec = st.rec;
    if (rec.unreachable) unreachable = "step " + std::to_string(i + 1) + " (inflight=" + std::to_string(n) + ") could not connect";
    if (rec.status == "failed") failed++;
    if (unreachable.empty() || rec.unreachable) {
      YdbRow row = YdbRowOf(n, rec.throughput, rec.lat);
      std::fputs(YdbStepReport(rec.by_code[0], rec.duration_ns, row).c_str(), stdout);
      std::fflush(stdout);
      if (!rec.unreachable) {
        rows.push_back(row);
        last_worker_rps = st.worker_rps;
      }
    }
    if (out != nullptr && !WriteRecord(out, y.out, rec, spec, env)) return 1;
    std::fprintf(stderr, "rpclab-client (cpp): step %zu/%zu %s %s inflight=%d: %s\n", i + 1, y.inflight.size(),
                 YdbApiName(y.api), rec.rpc.c_str(), n, rec.Summary().c_str());
    if (rec.status == "interrupted") {
      // Its row stays in the tables (nothing measured is lost), said here
      // since YDB's tables have no place for it.
      std::fprintf(stderr, "rpclab-client (cpp): the tables' in-flight %d row is from an interrupted interval (%s of %s)\n",
                   n, Seconds(rec.duration_ns).c_str(), Seconds(y.interval_ns).c_str());
      code = 1;
      break;
    }
  }
  if (!y.per_worker_stats) std::fputs(YdbSummary(rows).c_str(), stdout);
  if (y.with_csv) std::fputs(YdbCsv(rows).c_str(), stdout);
  if (y.per_worker_stats) std::fputs(YdbWorkerTable(last_worker_rps).c_str(), stdout);
  std::fflush(stdout);
  if (code != 0) return code;
  return failed > 0 ? 1 : 0;
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
        if (!WriteRecord(out, f.out, rec, f, env)) return 1;
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
  // YDB's command line (a flag only YDB's client has) runs YDB mode.
  bool ydb = rpclab::IsYdbCommandLine(args);
  rpclab::Flags f;
  rpclab::YdbFlags y;
  try {
    if (ydb) {
      y = rpclab::YdbFlags::Parse(args);
    } else {
      f = rpclab::Flags::Parse(args);
    }
  } catch (const rpclab::Usage& u) {
    if (u.flag == "--help" && !ydb) {
      std::fprintf(stderr, "%s\n\n%s\n", rpclab::kClientUsage, rpclab::kYdbUsage);
    } else {
      std::fprintf(stderr, "rpclab-client (cpp): %s\n", u.what());
    }
    return 2;
  }
  std::thread(rpclab::SignalLoop, set).detach();
  int code = ydb ? rpclab::RunYdb(y) : rpclab::Run(f);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip gRPC's global teardown: every record is written and synced
}
