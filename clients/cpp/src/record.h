// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// One step's result record (docs/results.md, schema/result.schema.json),
// written as one JSON line, and the env it carries.
#ifndef RPCLAB_RECORD_H_
#define RPCLAB_RECORD_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "flags.h"
#include "hdr.h"

namespace rpclab {

// One past the largest gRPC status code (Unauthenticated = 16).
constexpr int kCodes = 17;
// Status code names as the schema spells them, by code value.
extern const char* const kCodeNames[kCodes];

// The status code a call that ended with `code` counts as: a server that
// saw the deadline pass first resets the stream with CANCEL, which gRPC C++
// reports CANCELLED, racing its own deadline timer; gRPC's
// PROTOCOL-HTTP2.md asks clients to check the deadline when a call fails
// CANCELLED (grpc-go does). So CANCELLED (1) at or past a deadline counts
// as DEADLINE_EXCEEDED (4). has_deadline: the call had one (--rpc-timeout).
constexpr int CheckedCode(int code, bool has_deadline, bool past_deadline) {
  return code == 1 && has_deadline && past_deadline ? 4 : code;
}

// Which client measured, on what.
struct Env {
  int host_cpus = 1;
  std::vector<int> client_cpus;  // empty: not pinned
  std::string hostname;
  std::string grpc_version;
  std::string runtime_version;

  // Detect reads the machine; the versions are the caller's.
  static Env Detect();
};

// Expands a kernel CPU list ("0-2,5"); empty on a malformed list.
std::vector<int> CpuList(const std::string& s);

struct Record {
  std::string status = "ok";
  std::string error;
  std::chrono::system_clock::time_point started_at = std::chrono::system_clock::now();
  bool unreachable = false;  // the step could not connect: later steps are not run
  Step step;                 // what ran: the record's spec
  int64_t requests = 0;
  std::array<int64_t, kCodes> by_code{};
  int64_t duration_ns = 0;
  double throughput = 0;
  int64_t lat[6] = {0, 0, 0, 0, 0, 0};  // min, p50, p90, p99, p99.9, max
  double mean = 0;
  std::string hdr;
  int64_t cpu_ns = 0;
  double cpu_per_rpc = 0;
  int conns_observed = -1;  // counted half-way through the interval; -1: not read
  int channels = 0;         // conns_requested when the layout's own count does not apply (YDB's); 0: the layout's

  void Fail(const std::string& why) {
    status = "failed";
    error = why;
  }
  // Fill sets the figures of a measured interval.
  void Fill(const Histogram& h, const std::array<int64_t, kCodes>& codes, int64_t elapsed_ns, int64_t cpu);
  std::string Summary() const;
  // Json is the record as one JSON line (no newline); the step's
  // client_cpus, when given, replace env's.
  std::string Json(const Env& env) const;
};

// RFC 3339 in UTC with nanoseconds, e.g. 2026-11-22T23:01:02.123456789Z.
std::string Rfc3339(std::chrono::system_clock::time_point t);

}  // namespace rpclab

#endif  // RPCLAB_RECORD_H_
