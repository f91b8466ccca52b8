// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's C++ client (docs/clients.md): a closed-loop sweep on gRPC C++'s
// synchronous API against a grpc.testing.BenchmarkService server, one JSON
// Lines record per step. Exit codes: 0 every step ok, 1 a step failed, 2 bad
// flags. SIGINT/SIGTERM end the running step at once; its record
// ("interrupted") and every earlier one are kept.
//
// The steps come from a steps file (--steps, docs/step.schema.json) or the
// human command line (flags.h); YDB's command line is rpclab-ydb-ping's
// (ydb.cc), on the same workers (worker.h).
//
// The layouts show how C-core shares connections: channels created with
// identical arguments share one subchannel, so one TCP connection, through
// the global subchannel pool (channel-per-worker); only a per-channel
// subchannel pool (local-pool) or a distinct channel argument
// (distinct-args, per-worker, and pool:N, which is rpclab::ChannelPool,
// pool/) gives a channel its own connection.

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flags.h"
#include "procnet.h"
#include "record.h"
#include "worker.h"

namespace rpclab {
namespace {
// Opens the layout's channels. Every channel of a step carries the step's
// number, so no step reuses a subchannel a previous one left in the global
// pool; within a step the arguments differ only as the layout says.
Channels<BenchProto> Open(const Step& st, int step) {
  Channels<BenchProto> c;
  const Conn& conn = st.conn;
  grpc::ChannelArguments base;
  base.SetInt("rpclab.step", step);
  if (conn.kind == ConnKind::kPool) {
    c.pool = std::make_unique<ChannelPool>(st.target, conn.n,
                                           conn.least_loaded ? Pick::kLeastLoaded : Pick::kRoundRobin, base);
    for (const auto& ch : c.pool->channels()) c.Add(ch);
    return c;
  }
  for (int i = 0; i < conn.Conns(st.inflight); i++) {
    grpc::ChannelArguments args = base;  // shared, channel-per-worker: identical arguments
    if (conn.kind == ConnKind::kLocalPool) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    if (conn.kind == ConnKind::kDistinctArgs || conn.kind == ConnKind::kPerWorker) args.SetInt("rpclab.channel", i);
    c.Add(st.target, args);
  }
  return c;
}

// Runs one step on fresh channels; nullopt if a stop came before its interval.
std::optional<Record> RunStep(const Step& st, const Plan& plan, int step) {
  Record rec;
  rec.step = st;
  const Conn& conn = st.conn;
  const int inflight = st.inflight;
  const bool streaming = st.rpc == "streaming";
  const int64_t rpc_timeout_ns = plan.rpc_timeout_ns;
  auto c = Open(st, step);
  auto err = Connect(c.channels, Clock::now() + std::chrono::nanoseconds(plan.dial_timeout_ns));
  if (err) {
    if (g_stop) return std::nullopt;
    rec.unreachable = true;
    rec.Fail("target unreachable: no connection to " + st.target + " within " + Seconds(plan.dial_timeout_ns) + ": " +
             *err);
    return rec;
  }

  SimpleRequest req;
  req.set_response_size(static_cast<int32_t>(st.payload));
  req.mutable_payload()->mutable_body()->assign(static_cast<size_t>(st.payload), '\0');
  std::atomic<int> phase{kWarmup};
  std::vector<std::unique_ptr<Worker<BenchProto>>> workers;
  for (int i = 0; i < inflight; i++) {
    auto w = std::make_unique<Worker<BenchProto>>();
    if (c.pool) {
      for (auto& s : c.stubs) w->stubs.push_back(s.get());
      w->pool = c.pool.get();
    } else {
      w->stubs = {c.stubs[conn.kind == ConnKind::kShared ? 0 : i].get()};
    }
    w->phase = &phase;
    w->req = &req;
    w->rpc_timeout_ns = rpc_timeout_ns;
    workers.push_back(std::move(w));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    auto* p = w.get();
    if (streaming) {
      threads.emplace_back([p] { p->Streaming(); });
    } else {
      threads.emplace_back([p] { p->Unary(); });
    }
  }
  // --rpc-timeout on streams: the sync API has no per-message deadline, so a
  // watchdog cancels a ping-pong that takes longer (the stream is reopened).
  std::atomic<bool> watch_done{false};
  std::thread watchdog;
  if (streaming && rpc_timeout_ns > 0) {
    watchdog = std::thread([&] {
      int64_t tick = std::max<int64_t>(1'000'000, std::min<int64_t>(rpc_timeout_ns / 4, 50'000'000));
      while (!watch_done) {
        std::this_thread::sleep_for(std::chrono::nanoseconds(tick));
        int64_t before = NowNs() - rpc_timeout_ns;
        for (auto& w : workers) w->CancelIfStarted(before);
      }
    });
  }
  auto out = Measure<BenchProto>(
      std::move(rec), st.warmup_ns, st.interval_ns, phase, workers, threads, [&] { return ConnsTo(st.target); },
      nullptr);
  watch_done = true;
  if (watchdog.joinable()) watchdog.join();
  return out;
}

// Run runs the plan's steps in order, each record to its step's out
// (stdout when empty), written and flushed when the step ends.
int Run(const Plan& plan) {
  std::map<std::string, FILE*> files;  // out path -> its file, opened once
  for (const auto& st : plan.steps) {
    if (st.out.empty() || files.count(st.out)) continue;
    FILE* f = std::fopen(st.out.c_str(), plan.append ? "a" : "w");
    if (f == nullptr) {
      std::perror(("rpclab-client (cpp): --out " + st.out).c_str());
      return 1;
    }
    files[st.out] = f;
  }
  Env env = Env::Detect();
  env.grpc_version = grpc::Version();
  env.runtime_version = std::string("GCC ") + __VERSION__ + ", C++17 (sync API)";
  size_t n = plan.steps.size();
  int failed = 0;
  std::string unreachable;
  for (size_t i = 0; i < n; i++) {
    const Step& st = plan.steps[i];
    if (g_stop) return 1;
    Record rec;
    if (!unreachable.empty()) {
      rec.step = st;
      rec.Fail("target unreachable: not run: " + unreachable);
    } else {
      auto r = RunStep(st, plan, static_cast<int>(i + 1));
      if (!r) return 1;  // stopped before this step measured anything
      rec = std::move(*r);
    }
    if (rec.unreachable) {
      unreachable = "step " + std::to_string(i + 1) + " (" + st.conn.Name() + " " + st.rpc +
                    " inflight=" + std::to_string(st.inflight) + ") could not connect";
    }
    if (rec.status == "failed") failed++;
    FILE* out = st.out.empty() ? stdout : files[st.out];
    if (!WriteRecord(out, st.out.empty() ? "stdout" : st.out, rec, env)) return 1;
    std::fprintf(stderr, "rpclab-client (cpp): step %zu/%zu %s %s inflight=%d: %s\n", i + 1, n, st.rpc.c_str(),
                 st.conn.Name(), st.inflight, rec.Summary().c_str());
    if (rec.status == "interrupted") return 1;
  }
  return failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace rpclab

int main(int argc, char** argv) {
  rpclab::Plan plan;
  try {
    plan = rpclab::ParsePlan(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const rpclab::Usage& u) {
    std::fprintf(stderr, "rpclab-client (cpp): %s\n%s\n", u.what(), rpclab::Help().c_str());
    return 2;
  }
  if (plan.help) {
    std::printf("%s\n", rpclab::Help().c_str());
    return 0;
  }
  rpclab::BlockStopSignals();
  int code = rpclab::Run(plan);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip gRPC's global teardown: every record is written and synced
}
