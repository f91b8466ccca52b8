// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "ydb.h"

namespace rpclab {
namespace {

// rpclab's flags (rpclab sweep's, rpclab-client's) that rpclab-ydb-ping does not take.
const std::set<std::string> kRpclabOnly = {"--target", "--conn",        "--rpc",  "--payload",
                                           "--step",   "--rpc-timeout", "--steps"};

// "HOST:PORT" with a port in 1..65535 and a host (a name, an IPv4 address
// or a bracketed IPv6 one).
void CheckHost(const std::string& h) {
  size_t colon = h.rfind(':');
  if (colon == std::string::npos) {
    throw Usage("--host", Quote(h) + " has no port: want HOST:PORT, e.g. localhost:2137");
  }
  std::string host = h.substr(0, colon), port = h.substr(colon + 1);
  if (host.empty() || host == "[]") throw Usage("--host", Quote(h) + " has no host: want HOST:PORT");
  if (host.find(':') != std::string::npos && (host.front() != '[' || host.back() != ']')) {
    throw Usage("--host", Quote(h) + ": an IPv6 address goes in brackets, e.g. [::1]:2137");
  }
  bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::atoi(port.c_str()) < 1 || std::atoi(port.c_str()) > 65535) {
    throw Usage("--host", Quote(h) + ": port " + Quote(port) + " is not a number in 1..65535");
  }
}

std::string Fixed2(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

// A row's cells, in the tables' column order.
std::vector<std::string> Cells(const YdbRow& r) {
  return {std::to_string(r.inflight), Fixed2(r.throughput),    std::to_string(r.p50), std::to_string(r.p90),
          std::to_string(r.p99),      std::to_string(r.p99_9), std::to_string(r.p100)};
}

// Right-aligned in width w, as iostream's setw aligns.
std::string Pad(const std::string& s, size_t w) { return s.size() >= w ? s : std::string(w - s.size(), ' ') + s; }

}  // namespace

const char kYdbUsage[] =
    "usage (the command line of YDB's grpc_ping_client):\n"
    "  rpclab-ydb-ping --host HOST:PORT[,HOST2:PORT2] [--inflight N | --min-inflight A --max-inflight B]\n"
    "  [--max-channels N] [--interval SECONDS] [--warmup SECONDS] [--with-csv] [--streaming] [--local-pool]\n"
    "  [--per-worker-stats] [--async | --async-callback] [--max-async-clients N] [--out FILE] [--dial-timeout DUR]\n"
    "pings Ydb.Debug.V1.DebugService (PingPlainGrpc, or PingStream with --streaming); prints YDB's\n"
    "\"Benchmark Results Summary\" table and, with --with-csv, its CSV; --out also writes rpclab's records.\n"
    "Defaults as YDB's: --host localhost:2137, --inflight 32 (a range: --min-inflight 1, --max-inflight 32),\n"
    "--max-channels the largest in-flight, --interval 10, --warmup 1 (seconds, or a number with a unit: ns, us, ms,\n"
    "s, m, h); --dial-timeout 5.";

const char* YdbApiName(YdbApi api) {
  switch (api) {
    case YdbApi::kSync: return "sync";
    case YdbApi::kAsync: return "async";
    case YdbApi::kCallback: return "callback";
  }
  return "?";
}

YdbFlags YdbFlags::Parse(const std::vector<std::string>& args) {
  YdbFlags f;
  CLI::App app("rpclab-ydb-ping", "rpclab-ydb-ping");
  app.allow_extras();
  double interval = 10, warmup = 1, dial = 5;  // seconds
  int inflight = 32, min = 1, max = 32;
  bool async = false, callback = false;
  CLI::Range in_range(int64_t{1}, SchemaMax("inflight"));
  std::string hosts;
  auto* o_host = app.add_option("--host", hosts);
  auto* o_inflight = app.add_option("--inflight", inflight)->check(in_range);
  auto* o_min = app.add_option("--min-inflight", min)->check(in_range);
  auto* o_max = app.add_option("--max-inflight", max)->check(in_range);
  auto* o_channels = app.add_option("--max-channels", f.max_channels)->check(in_range);
  app.add_option("--max-async-clients", f.max_async_clients)
      ->check(CLI::Range(int64_t{0}, SchemaMax("inflight")));  // 0: auto
  AddDuration(app, "--interval", interval, "");
  AddDuration(app, "--warmup", warmup, "");
  AddDuration(app, "--dial-timeout", dial, "");
  app.add_option("-o,--out", f.out);
  app.add_flag("--with-csv", f.with_csv);
  app.add_flag("--streaming", f.streaming);
  app.add_flag("--local-pool", f.local_pool);
  app.add_flag("--per-worker-stats", f.per_worker_stats);
  app.add_flag("--async", async);
  app.add_flag("--async-callback", callback);
  try {
    std::vector<std::string> rev(args.rbegin(), args.rend());
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    throw Usage("--help", kYdbUsage);
  } catch (const CLI::ParseError& e) {
    throw CliUsage("rpclab-ydb-ping", e.what());
  }
  if (!app.remaining().empty()) {
    std::string a = app.remaining()[0];
    std::string flag = a.substr(0, a.find('='));
    if (a.empty() || a[0] != '-') throw Usage(a, "unexpected argument (flags only, see --help)");
    if (kRpclabOnly.count(flag)) throw Usage(flag, "is rpclab's flag (rpclab sweep, rpclab-client), not YDB's");
    if (flag == "--port") throw Usage(flag, "unknown flag: YDB's client takes the port in --host HOST:PORT");
    throw Usage(flag, "unknown flag (see --help)");
  }
  if (*o_host) {
    f.hosts = CLI::detail::split(hosts, ',');
    if (hosts.empty() || hosts.back() == ',') f.hosts.emplace_back();  // no port: CheckHost says so
    for (const auto& h : f.hosts) CheckHost(h);
    f.host_arg = hosts;
  }
  if (*o_inflight) f.inflight = {inflight};
  if (*o_min || *o_max) {
    if (*o_inflight) throw Usage("--inflight", "give --inflight or --min-inflight/--max-inflight, not both");
    if (max < min) {
      throw Usage("--max-inflight", std::to_string(max) + " is below --min-inflight " + std::to_string(min));
    }
    f.inflight.clear();
    for (int n = min; n <= max; n++) f.inflight.push_back(n);
  }
  if (!*o_channels) f.max_channels = *std::max_element(f.inflight.begin(), f.inflight.end());
  f.interval_ns = Nanos(interval);
  f.warmup_ns = Nanos(warmup);
  f.dial_timeout_ns = Nanos(dial);
  if (async && callback) throw Usage("--async-callback", "choose one of --async and --async-callback");
  if (async) f.api = YdbApi::kAsync;
  if (callback) f.api = YdbApi::kCallback;
  if (f.streaming && f.api != YdbApi::kSync) {
    throw Usage("--streaming", std::string("YDB's --") + (async ? "async" : "async-callback") +
                                   " pings unary only; drop one of the two");
  }
  if (f.interval_ns <= 0) throw Usage("--interval", "must be positive");
  if (f.dial_timeout_ns <= 0) throw Usage("--dial-timeout", "must be positive");
  return f;
}

int YdbFlags::Channels(int inflight) const { return std::min(inflight, max_channels); }

int YdbFlags::AsyncClients(int inflight) const {
  return max_async_clients > 0 ? std::min(inflight, max_async_clients) : inflight;
}

Step YdbFlags::Spec() const {
  Step s;
  s.target = host_arg;
  s.service = "ydb-debug";  // Ydb.Debug.V1.DebugService
  s.rpc = streaming ? "streaming" : "unary";
  s.payload = 0;
  s.warmup_ns = warmup_ns;
  s.interval_ns = interval_ns;
  s.out = out;
  return s;
}

YdbRow YdbRowOf(int inflight, double throughput, const int64_t lat_ns[6]) {
  YdbRow r;
  r.inflight = inflight;
  r.throughput = throughput;
  r.p50 = lat_ns[1] / 1000;
  r.p90 = lat_ns[2] / 1000;
  r.p99 = lat_ns[3] / 1000;
  r.p99_9 = lat_ns[4] / 1000;
  r.p100 = lat_ns[5] / 1000;
  return r;
}

std::string YdbSummary(const std::vector<YdbRow>& rows) {
  const char* heads[] = {"Inflight", "Throughput (req/s)", "P50 (us)", "P90 (us)",
                         "P99 (us)", "P99.9 (us)",         "P100 (us)"};
  constexpr int kCols = 7;
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) cells.push_back(Cells(r));
  size_t w[kCols];
  for (int c = 0; c < kCols; c++) {
    w[c] = std::string(heads[c]).size();
    for (const auto& row : cells) w[c] = std::max(w[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& v) {
    std::string b;
    for (int c = 0; c < kCols; c++) b += (c ? " | " : "") + Pad(v[c], w[c]);
    return b + "\n";
  };
  std::string b = "\nBenchmark Results Summary:\n";
  b += line(std::vector<std::string>(heads, heads + kCols));
  for (int c = 0; c < kCols; c++) b += (c ? "-+-" : "") + std::string(w[c], '-');
  b += "\n";
  for (const auto& row : cells) b += line(row);
  return b + "\n";
}

std::string YdbCsv(const std::vector<YdbRow>& rows) {
  std::string b = "\nCSV Results:\ninflight,throughput,p50,p90,p99,p99_9,p100\n";
  for (const auto& r : rows) b += CLI::detail::join(Cells(r), ",") + "\n";
  return b;
}

std::string YdbWorkerTable(const std::vector<double>& rps) {
  size_t ww = std::max(std::string("Worker ID").size(), std::to_string(rps.empty() ? 0 : rps.size() - 1).size());
  size_t tw = std::string("Throughput (req/s)").size();
  for (double r : rps) tw = std::max(tw, Fixed2(r).size());
  std::string b = "\nPer-Worker Throughput Statistics:\n";
  b += Pad("Worker ID", ww) + " | " + Pad("Throughput (req/s)", tw) + "\n";
  b += std::string(ww, '-') + "-+-" + std::string(tw, '-') + "\n";
  for (size_t i = 0; i < rps.size(); i++) b += Pad(std::to_string(i), ww) + " | " + Pad(Fixed2(rps[i]), tw) + "\n";
  return b;
}

std::string YdbStepReport(int64_t ok, int64_t elapsed_ns, const YdbRow& row) {
  std::string b =
      "Total requests: " + std::to_string(ok) + "\nTotal time: " + std::to_string(elapsed_ns / 1000) + " us\n";
  if (ok == 0) return b + "No successful requests\n";
  b += "Throughput: " + Fixed2(row.throughput) + " req/s\nLatency percentiles (us):\n";
  b += "  50th: " + std::to_string(row.p50) + "\n  90th: " + std::to_string(row.p90) +
       "\n  99th: " + std::to_string(row.p99) + "\n  99.9th: " + std::to_string(row.p99_9) +
       "\n  100th: " + std::to_string(row.p100) + "\n";
  return b;
}

std::string YdbNagleLine(int nodelay) {
  if (nodelay == 1) return "TCP_NODELAY is ENABLED (Nagle OFF)\n";
  if (nodelay == 0) return "TCP_NODELAY is DISABLED (Nagle ON)\n";
  return "Failed to intercept descriptord and test for Nagle\n";  // YDB's words
}

}  // namespace rpclab
