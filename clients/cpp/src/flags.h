// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// What rpclab-client runs: steps (docs/clients.md, "The step spec"), read
// from a steps file (--steps, JSON Lines, with nlohmann-json) or built from
// the human command line (the flags of docs/clients.md, with CLI11). Bad
// input throws Usage naming the flag or the steps file's line and field;
// main exits 2 on it.
#ifndef RPCLAB_FLAGS_H_
#define RPCLAB_FLAGS_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rpclab {

// Bad input: the flag (or "FILE:LINE") and what is wrong.
struct Usage : std::runtime_error {
  Usage(std::string flag, const std::string& msg) : std::runtime_error(flag + ": " + msg), flag(std::move(flag)) {}
  std::string flag;
};

// The connection layouts of gRPC C++ (docs/clients.md), in flags.cc's kKindNames order.
enum class ConnKind {
  kShared,            // one channel for every worker
  kChannelPerWorker,  // a channel per worker, identical args: one subchannel, one connection (the trap)
  kLocalPool,         // a channel per worker with grpc.use_local_subchannel_pool
  kDistinctArgs,      // a channel per worker with a unique channel argument
  kPerWorker,         // a channel per worker that gets its own connection (made with distinct args)
  kPool,              // an rpclab::ChannelPool of N channels (pool/), round-robin or least-loaded per RPC
};

struct Conn {
  ConnKind kind = ConnKind::kShared;
  int n = 0;                  // pool size
  bool least_loaded = false;  // pool:N:least-loaded
  // spec.conn_mode: pool:N is "pool".
  const char* Name() const;
  // How many channels (and connections asked for) with `inflight` workers.
  int Conns(int inflight) const;
};

// docs/step.schema.json's maximum of a step's integer field ("inflight").
int64_t SchemaMax(const std::string& field);

// One step (docs/step.schema.json).
struct Step {
  std::string target;
  std::string service = "benchmark";  // or "ydb-debug" (rpclab-ydb-ping's records)
  std::string rpc = "unary";
  Conn conn;
  int inflight = 1;
  int64_t payload = 0;
  int64_t warmup_ns = 1'000'000'000;
  int64_t interval_ns = 3'000'000'000;
  std::vector<int> client_cpus;  // the driver's pin; empty: not given
  std::string out;               // "": stdout
};

// What rpclab-client runs: its steps, in order, and the settings the step
// spec leaves to the client.
struct Plan {
  std::vector<Step> steps;
  int64_t dial_timeout_ns = 5'000'000'000;
  int64_t rpc_timeout_ns = 0;  // deadline of each RPC (each ping-pong on a stream); 0: none
  bool append = false;         // steps file: append to each out; command line: truncate --out
  bool help = false;           // --help: print Help() and exit 0
};

// CliUsage turns a CLI11 error's text into Usage naming its flag (CLI11
// starts most with "--flag: "), else naming fallback (the program).
Usage CliUsage(const std::string& fallback, const std::string& what);

// ParsePlan reads rpclab-client's command line (args without the program).
Plan ParsePlan(const std::vector<std::string>& args);
// The command line's usage text.
std::string Help();
// ReadSteps parses a steps file's text (name for errors), checking every
// line before any runs.
std::vector<Step> ReadSteps(const std::string& name, const std::string& text);

// Go's time.ParseDuration ("300ms", "1m0s", "1.5s"), non-negative, in ns.
// C++ has no parser for Go's syntax; this one is small and unit-tested.
int64_t ParseGoDuration(const std::string& flag, const std::string& s);
Conn ParseConn(const std::string& flag, const std::string& s);
// s without leading and trailing white space; s in double quotes.
std::string Trim(const std::string& s);
std::string Quote(const std::string& s);

}  // namespace rpclab

#endif  // RPCLAB_FLAGS_H_
