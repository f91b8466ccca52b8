// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "record.h"

#include <sched.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace rpclab {

const char* const kCodeNames[kCodes] = {
    "OK",       "Canceled",           "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
    "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
    "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated",
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

std::string Num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", Finite(v));
  return b;
}

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

std::string Env::Json() const {
  std::string b = "{\"language\":\"cpp\",\"grpc_impl\":\"grpc-c++\",\"grpc_version\":" + JsonString(grpc_version) +
                  ",\"runtime_version\":" + JsonString(runtime_version) +
                  ",\"host_cpus\":" + std::to_string(host_cpus);
  if (!client_cpus.empty()) {
    b += ",\"client_cpus\":[";
    for (size_t i = 0; i < client_cpus.size(); i++) b += (i ? "," : "") + std::to_string(client_cpus[i]);
    b += "]";
  }
  b += ",\"hostname\":" + JsonString(hostname) + ",\"os\":\"linux\"}";
  return b;
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

std::string Record::Json(const Flags& f, const Env& env) const {
  std::string b;
  b.reserve(1024 + hdr.size());
  b += "{\"schema_version\":1,\"kind\":\"ping\",\"status\":" + JsonString(status);
  if (!error.empty()) b += ",\"error\":" + JsonString(error);
  b += ",\"started_at\":" + JsonString(Rfc3339(started_at));
  b += ",\"spec\":{\"target\":" + JsonString(f.target);
  if (!service.empty()) b += ",\"service\":" + JsonString(service);
  b += ",\"rpc\":" + JsonString(rpc) +
       ",\"conn_mode\":" + JsonString(conn.Name()) + ",\"conns_requested\":" + std::to_string(channels > 0 ? channels : conn.Conns(inflight));
  if (conn.kind == ConnKind::kPool) b += ",\"pick\":\"round-robin\"";
  b += ",\"inflight\":" + std::to_string(inflight) + ",\"payload_bytes\":" + std::to_string(f.payload) +
       ",\"warmup_ns\":" + std::to_string(f.warmup_ns) + ",\"interval_ns\":" + std::to_string(f.interval_ns) +
       ",\"load_model\":\"closed\"}";
  b += ",\"env\":" + env.Json() + ",\"requests\":" + std::to_string(requests) + ",\"errors\":{";
  bool first = true;
  for (int c = 1; c < kCodes; c++) {
    if (by_code[c] > 0) {
      b += (first ? "" : ",") + JsonString(kCodeNames[c]) + ":" + std::to_string(by_code[c]);
      first = false;
    }
  }
  b += "},\"duration_ns\":" + std::to_string(duration_ns) + ",\"throughput_rps\":" + Num(throughput);
  b += ",\"latency\":{\"min_ns\":" + std::to_string(lat[0]) + ",\"mean_ns\":" + Num(mean) +
       ",\"p50_ns\":" + std::to_string(lat[1]) + ",\"p90_ns\":" + std::to_string(lat[2]) +
       ",\"p99_ns\":" + std::to_string(lat[3]) + ",\"p999_ns\":" + std::to_string(lat[4]) +
       ",\"p100_ns\":" + std::to_string(lat[5]) + "}";
  b += ",\"histogram_hdr\":" + JsonString(hdr) + ",\"conns_observed\":" + std::to_string(conns_observed) +
       ",\"client_cpu_ns\":" + std::to_string(cpu_ns) +
       ",\"client_cpu_ns_per_rpc\":" + Num(cpu_per_rpc) + "}";
  return b;
}

std::string JsonString(const std::string& v) {
  std::string b = "\"";
  for (unsigned char c : v) {
    switch (c) {
      case '"': b += "\\\""; break;
      case '\\': b += "\\\\"; break;
      case '\n': b += "\\n"; break;
      case '\r': b += "\\r"; break;
      case '\t': b += "\\t"; break;
      default:
        if (c < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          b += u;
        } else {
          b += static_cast<char>(c);
        }
    }
  }
  return b + "\"";
}

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  time_t secs = static_cast<time_t>(ns / 1'000'000'000);
  struct tm tm;
  gmtime_r(&secs, &tm);
  char b[64];
  std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(ns % 1'000'000'000));
  return b;
}

}  // namespace rpclab
