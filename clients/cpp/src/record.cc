// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "record.h"

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rpclab {

const char* const kCodeNames[kCodes] = {
    "OK",       "Canceled",        "Unknown",          "InvalidArgument",   "DeadlineExceeded",
    "NotFound", "AlreadyExists",   "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
    "Aborted",  "OutOfRange",      "Unimplemented",    "Internal",          "Unavailable",
    "DataLoss", "Unauthenticated",
};

namespace {

std::string ReadTrimmed(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

double Finite(double v) { return std::isfinite(v) ? v : 0; }

}  // namespace

std::vector<int> CpuList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.find_first_not_of(" \t") == std::string::npos) continue;
    int lo, hi;
    char dash;
    std::stringstream ps(part);
    if (!(ps >> lo)) return {};
    if (ps >> dash) {
      if (dash != '-' || !(ps >> hi)) return {};
    } else {
      hi = lo;
    }
    for (int c = lo; c <= hi; c++) out.push_back(c);
  }
  return out;
}

Env Env::Detect() {
  Env e;
  e.host_cpus = static_cast<int>(CpuList(ReadTrimmed("/sys/devices/system/cpu/online")).size());
  if (e.host_cpus == 0) e.host_cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; c++) {
      if (CPU_ISSET(c, &set)) e.client_cpus.push_back(c);
    }
  }
  if (static_cast<int>(e.client_cpus.size()) >= e.host_cpus) e.client_cpus.clear();  // not pinned
  e.hostname = ReadTrimmed("/proc/sys/kernel/hostname");
  return e;
}

void Record::Fill(const Histogram& h, const std::array<int64_t, kCodes>& codes, int64_t elapsed_ns, int64_t cpu) {
  by_code = codes;
  requests = 0;
  for (int64_t n : codes) requests += n;
  int64_t ok = codes[0];
  duration_ns = elapsed_ns;
  if (elapsed_ns > 0) throughput = static_cast<double>(ok) / (static_cast<double>(elapsed_ns) / 1e9);
  if (h.TotalCount() > 0) {
    lat[0] = h.Min();
    lat[1] = h.ValueAtPercentile(50);
    lat[2] = h.ValueAtPercentile(90);
    lat[3] = h.ValueAtPercentile(99);
    lat[4] = h.ValueAtPercentile(99.9);
    lat[5] = h.Max();
    mean = h.Mean();
  }
  hdr = h.Encode();
  cpu_ns = cpu;
  if (requests > 0) cpu_per_rpc = static_cast<double>(cpu) / static_cast<double>(requests);
  if (ok == 0) {
    if (requests == 0) {
      Fail("no RPC completed in the interval");
    } else {
      Fail("every RPC failed (" + std::to_string(requests) + ")");
    }
  }
}

std::string Record::Summary() const {
  if (status != "ok") return status + ": " + error;
  char b[160];
  std::snprintf(b, sizeof b, "%.0f rps, p99 %.1f us, cpu %.1f us/rpc", throughput, lat[3] / 1e3, cpu_per_rpc / 1e3);
  return b;
}

std::string Record::Json(const Env& env) const {
  using nlohmann::ordered_json;
  ordered_json spec = {{"target", step.target}};
  if (step.service != "benchmark") spec["service"] = step.service;
  spec["rpc"] = step.rpc;
  spec["conn_mode"] = step.conn.Name();
  spec["conns_requested"] = channels > 0 ? channels : step.conn.Conns(step.inflight);
  if (step.conn.kind == ConnKind::kPool) spec["pick"] = step.conn.least_loaded ? "least-loaded" : "round-robin";
  spec["inflight"] = step.inflight;
  spec["payload_bytes"] = step.payload;
  spec["warmup_ns"] = step.warmup_ns;
  spec["interval_ns"] = step.interval_ns;
  spec["load_model"] = "closed";
  ordered_json e = {{"language", "cpp"},
                    {"grpc_impl", "grpc-c++"},
                    {"grpc_version", env.grpc_version},
                    {"runtime_version", env.runtime_version},
                    {"host_cpus", env.host_cpus}};
  const std::vector<int>& cpus = step.client_cpus.empty() ? env.client_cpus : step.client_cpus;
  if (!cpus.empty()) e["client_cpus"] = cpus;
  e["hostname"] = env.hostname;
  e["os"] = "linux";
  ordered_json errors = ordered_json::object();
  for (int c = 1; c < kCodes; c++) {
    if (by_code[c] > 0) errors[kCodeNames[c]] = by_code[c];
  }
  ordered_json r = {{"schema_version", 1}, {"kind", "ping"}, {"status", status}};
  if (!error.empty()) r["error"] = error;
  r["started_at"] = Rfc3339(started_at);
  r["spec"] = std::move(spec);
  r["env"] = std::move(e);
  r["requests"] = requests;
  r["errors"] = std::move(errors);
  r["duration_ns"] = duration_ns;
  r["throughput_rps"] = Finite(throughput);
  r["latency"] = {{"min_ns", lat[0]}, {"mean_ns", Finite(mean)}, {"p50_ns", lat[1]}, {"p90_ns", lat[2]},
                  {"p99_ns", lat[3]}, {"p999_ns", lat[4]},       {"p100_ns", lat[5]}};
  r["histogram_hdr"] = hdr;
  r["conns_observed"] = conns_observed;
  r["client_cpu_ns"] = cpu_ns;
  r["client_cpu_ns_per_rpc"] = Finite(cpu_per_rpc);
  // Invalid UTF-8 (an error text from the OS) is replaced, not thrown on.
  return r.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(ns / 1'000'000'000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  std::ostringstream b;
  b << std::put_time(&tm, "%Y-%m-%dT%H:%M:%S.") << std::setw(9) << std::setfill('0') << ns % 1'000'000'000 << 'Z';
  return b.str();
}

}  // namespace rpclab
