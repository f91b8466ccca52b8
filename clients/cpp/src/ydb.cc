// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab-ydb-ping: YDB's grpc_ping_client command line (ydb.h: --host,
// --with-csv, --streaming, --local-pool, --async, ...) pings
// Ydb.Debug.V1.DebugService with rpclab-client's closed-loop workers
// (worker.h), on the sync, completion-queue or callback API, and prints
// YDB's tables; --out also gets rpclab's records. Exit codes: 0 every step
// ok, 1 a step failed or a stop cut the run short, 2 bad flags.

#include "ydb.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "procnet.h"
#include "record.h"
#include "worker.h"

namespace rpclab {
namespace {

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
  rec.step = y.Spec();
  rec.step.inflight = inflight;
  int nch = y.Channels(inflight);
  rec.channels = nch;
  rec.step.conn.kind = nch == 1 ? ConnKind::kShared : y.local_pool ? ConnKind::kLocalPool : ConnKind::kChannelPerWorker;
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
  using W = Worker<YdbProto>;
  auto loop = y.streaming                  ? &W::Streaming
              : y.api == YdbApi::kAsync    ? &W::AsyncUnary
              : y.api == YdbApi::kCallback ? &W::CallbackUnary
                                           : &W::Unary;
  Team<YdbProto> team;
  team.Start(inflight, loop, &req, y.streaming ? 0 : kYdbDeadlineNs, [&](int i, W& w) {
    if (clients.empty()) {
      w.stubs = {c.stubs[i % nch].get()};
    } else {
      AsyncClient& ac = clients[i % clients.size()];
      w.stubs = {ac.stub};
      w.cq = ac.cq.get();
    }
  });
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
  auto measured = team.Measure(std::move(out.rec), y.warmup_ns, y.interval_ns, conns, [] {
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
  for (auto& w : team.workers) out.worker_rps.push_back(secs > 0 ? static_cast<double>(w->by_code[0]) / secs : 0);
  return out;
}

// RunYdb runs YDB's command line: every in-flight value as a step, YDB's text on
// stdout, the records in --out. Tables are printed for the steps measured,
// also when a step fails or a stop cuts the run short.
int RunYdb(const YdbFlags& y) {
  FILE* out = nullptr;
  if (!y.out.empty()) {
    out = std::fopen(y.out.c_str(), "w");
    if (out == nullptr) {
      std::perror(("rpclab-ydb-ping: --out " + y.out).c_str());
      return 1;
    }
  }
  Env env = ClientEnv(std::string("rpclab-ydb-ping, ") + YdbApiName(y.api) + " API");
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
      st.rec.step = y.Spec();
      st.rec.step.inflight = n;
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
    if (rec.unreachable)
      unreachable = "step " + std::to_string(i + 1) + " (inflight=" + std::to_string(n) + ") could not connect";
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
    if (out != nullptr && !WriteRecord(out, y.out, rec, env)) return 1;
    std::fprintf(stderr, "rpclab-ydb-ping: step %zu/%zu %s %s inflight=%d: %s\n", i + 1, y.inflight.size(),
                 YdbApiName(y.api), rec.step.rpc.c_str(), n, rec.Summary().c_str());
    if (rec.status == "interrupted") {
      // Its row stays in the tables (nothing measured is lost), said here
      // since YDB's tables have no place for it.
      std::fprintf(stderr, "rpclab-ydb-ping: the tables' in-flight %d row is from an interrupted interval (%s of %s)\n",
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

}  // namespace
}  // namespace rpclab

int main(int argc, char** argv) {
  rpclab::YdbFlags y;
  try {
    y = rpclab::YdbFlags::Parse(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const rpclab::Usage& u) {
    if (u.flag == "--help") {
      std::printf("%s\n", rpclab::kYdbUsage);
      return 0;
    }
    std::fprintf(stderr, "rpclab-ydb-ping: %s\n", u.what());
    return 2;
  }
  rpclab::BlockStopSignals();
  int code = rpclab::RunYdb(y);
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);  // skip gRPC's global teardown: every record is written and synced
}
