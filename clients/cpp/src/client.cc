// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's C++ client (docs/clients.md): a closed-loop sweep on gRPC C++'s
// synchronous API against a grpc.testing.BenchmarkService server, one JSON
// Lines record per step. Exit codes: 0 every step ok, 1 a step failed, 2 bad
// input. SIGINT/SIGTERM end the running step at once; its record
// ("interrupted") and every earlier one are kept.
//
// The steps come from a steps file (--steps, schema/step.schema.json; flags.h),
// which rpclab sweep --client cpp writes; YDB's command line is
// rpclab-ydb-ping's (ydb.cc), on the same workers (worker.h).
//
// The layouts show how C-core shares connections: channels created with
// identical arguments share one subchannel, so one TCP connection, through
// the global subchannel pool (channel-per-worker); only a per-channel
// subchannel pool (local-pool) or a distinct channel argument
// (distinct-args, per-worker, and pool:N, which is rpclab::ChannelPool,
// pool/) gives a channel its own connection.

#include <grpcpp/ext/channelz_service_plugin.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
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
    c.pool =
        std::make_unique<ChannelPool>(st.target, conn.n, conn.least_loaded ? Pick::kLeastLoaded : Pick::kRoundRobin,
                                      base, grpc::InsecureChannelCredentials());
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
  Team<BenchProto> team;
  team.Start(st.inflight, streaming ? &Worker<BenchProto>::Streaming : &Worker<BenchProto>::Unary, &req, rpc_timeout_ns,
             [&](int i, Worker<BenchProto>& w) {
               if (c.pool) {
                 for (auto& s : c.stubs) w.stubs.push_back(s.get());
                 w.pool = c.pool.get();
               } else {
                 w.stubs = {c.stubs[conn.kind == ConnKind::kShared ? 0 : i].get()};
               }
             });
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
        for (auto& w : team.workers) w->CancelIfStarted(before);
      }
    });
  }
  auto out = team.Measure(
      std::move(rec), st.warmup_ns, st.interval_ns, [&] { return ConnsTo(st.target); }, nullptr);
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
    FILE* f = std::fopen(st.out.c_str(), "a");
    if (f == nullptr) {
      std::perror(("rpclab-client (cpp): out " + st.out).c_str());
      return 1;
    }
    files[st.out] = f;
  }
  Env env = ClientEnv("sync API");
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

// ServeChannelz serves C-core's channelz (collected by default) on
// 127.0.0.1:port, so rpclab doctor --pid can read this process's channels;
// nullptr when the port cannot be bound.
std::unique_ptr<grpc::Server> ServeChannelz(int port) {
  grpc::channelz::experimental::InitChannelzService();  // adds the service to every server built after
  grpc::ServerBuilder b;
  int bound = 0;
  b.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &bound);
  auto server = b.BuildAndStart();
  if (bound == 0) return nullptr;
  std::fprintf(stderr, "rpclab-client (cpp): channelz on 127.0.0.1:%d\n", bound);
  return server;
}

}  // namespace
}  // namespace rpclab

int main(int argc, char** argv) {
  rpclab::ClientCli cli;
  rpclab::Plan plan;
  try {
    cli.app.parse(argc, argv);
    plan = cli.ToPlan();
  } catch (const CLI::ParseError& e) {
    return cli.app.exit(e) == 0 ? 0 : 2;  // --help: 0
  } catch (const rpclab::Usage& u) {
    std::fprintf(stderr, "rpclab-client (cpp): %s\n", u.what());
    return 2;
  }
  rpclab::BlockStopSignals();              // before the channelz server's threads start
  std::unique_ptr<grpc::Server> channelz;  // kept until _exit
  if (cli.channelz_port > 0 && !(channelz = rpclab::ServeChannelz(cli.channelz_port))) {
    std::fprintf(stderr, "rpclab-client (cpp): --channelz-port: cannot listen on 127.0.0.1:%d\n", cli.channelz_port);
    return 2;
  }
  int code = rpclab::Run(plan);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip gRPC's global teardown: every record is written and synced
}
