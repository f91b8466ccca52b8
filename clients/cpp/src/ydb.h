// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab-ydb-ping's command line and output (the program is ydb.cc): those of
// YDB's gRPC ping benchmark
// (ydb-platform/benchhelpers, microbenchmarks/grpc_ping/grpc_ping_client),
// the tool of YDB's post "The Surprising gRPC Client Bottleneck in
// Low-Latency Networks", so its commands run here verbatim against
// Ydb.Debug.V1.DebugService. Written from its documented behaviour; no code
// is taken from it. No gRPC here (ydb_cli.cc): the unit tests link it alone.
#ifndef RPCLAB_YDB_H_
#define RPCLAB_YDB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "flags.h"

namespace rpclab {

// How YDB mode's workers make their calls.
enum class YdbApi {
  kSync,      // one blocking call per worker thread (YDB's default)
  kAsync,     // --async: completion-queue API, a queue and its thread per async client
  kCallback,  // --async-callback: callback API
};

const char* YdbApiName(YdbApi api);

struct YdbFlags {
  std::vector<std::string> hosts{"localhost:2137"};  // HOST:PORT each (YDB's default)
  std::string host_arg = "localhost:2137";           // --host as given: the record's target
  std::vector<int> inflight{32};                     // the steps, in order
  int max_channels = 0;                              // 0: YDB's default, the largest in-flight
  int max_async_clients = 0;                         // 0: as many as in-flight (YDB's "auto")
  int64_t warmup_ns = 1'000'000'000;
  int64_t interval_ns = 10'000'000'000;
  int64_t dial_timeout_ns = 5'000'000'000;
  bool with_csv = false;
  bool streaming = false;
  bool local_pool = false;
  bool per_worker_stats = false;
  YdbApi api = YdbApi::kSync;
  std::string out;  // rpclab's JSON Lines records; empty: none

  // Parse reads YDB's command line (and rpclab's --out, --dial-timeout)
  // with CLI11; a bad or unknown flag throws Usage naming it.
  static YdbFlags Parse(const std::vector<std::string>& args);
  // The channels of a step: YDB's min(in-flight, --max-channels).
  int Channels(int inflight) const;
  // The async clients of a step: min(in-flight, --max-async-clients or in-flight).
  int AsyncClients(int inflight) const;
  // The step a record's spec is written from (in-flight, layout left to
  // each step).
  Step Spec() const;
};

extern const char kYdbUsage[];

// One step as YDB reports it: latencies in whole microseconds.
struct YdbRow {
  int inflight = 0;
  double throughput = 0;  // successful RPCs per second
  int64_t p50 = 0, p90 = 0, p99 = 0, p99_9 = 0, p100 = 0;
};

// YdbRowOf makes a row from a step's figures (latencies in ns, truncated to
// µs as YDB's duration_cast truncates).
YdbRow YdbRowOf(int inflight, double throughput, const int64_t lat_ns[6]);

// The "Benchmark Results Summary:" table as YDB prints it, with a blank
// line before and after.
std::string YdbSummary(const std::vector<YdbRow>& rows);
// "CSV Results:" and the CSV, header inflight,throughput,p50,p90,p99,p99_9,p100.
std::string YdbCsv(const std::vector<YdbRow>& rows);
// "Per-Worker Throughput Statistics:": one row per worker of a step.
std::string YdbWorkerTable(const std::vector<double>& rps);
// The block YDB prints after each step: requests, time, throughput and
// percentiles ("No successful requests" when none succeeded).
std::string YdbStepReport(int64_t ok, int64_t elapsed_ns, const YdbRow& row);

// YdbNagleLine is the line YDB's client prints first, from TCP_NODELAY on
// its first connection (procnet's NoDelayTo: 1 set, 0 clear, -1 unread).
std::string YdbNagleLine(int nodelay);

}  // namespace rpclab

#endif  // RPCLAB_YDB_H_
