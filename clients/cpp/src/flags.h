// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// What rpclab-client runs: steps (docs/clients.md, "The step spec"), read
// from the steps file its command line (CLI11) names, with nlohmann-json.
// A bad steps file throws Usage naming its line and field; main exits 2 on it.
#ifndef RPCLAB_FLAGS_H_
#define RPCLAB_FLAGS_H_

#include <CLI/CLI.hpp>
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

// schema/step.schema.json's maximum of a step's integer field ("inflight").
int64_t SchemaMax(const std::string& field);

// One step (schema/step.schema.json).
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
};

// rpclab-client's command line: --steps FILE (required), --rpc-timeout and
// --channelz-port, parsed by app (CLI11: a bad flag throws its ParseError,
// --help CallForHelp).
struct ClientCli {
  ClientCli();
  CLI::App app;
  std::string steps_file;
  double rpc_timeout_s = 0;
  int channelz_port = 0;  // serve channelz on 127.0.0.1:channelz_port; 0: off
  // Plan reads the steps file the parsed command line names.
  Plan ToPlan() const;
};

// AddDuration adds a duration option to app, CLI11's AsNumberWithUnit: a
// non-negative number with a unit, ns, us, ms, s, m or h (none: seconds),
// stored in seconds.
CLI::Option* AddDuration(CLI::App& app, const std::string& name, double& seconds, const std::string& what);
int64_t Nanos(double seconds);

// CliUsage turns a CLI11 error's text into Usage naming its flag (CLI11
// starts most with "--flag: "), else naming fallback (the program).
Usage CliUsage(const std::string& fallback, const std::string& what);

// ReadSteps parses a steps file's text (name for errors), checking every
// line before any runs.
std::vector<Step> ReadSteps(const std::string& name, const std::string& text);

// s in double quotes.
std::string Quote(const std::string& s);

}  // namespace rpclab

#endif  // RPCLAB_FLAGS_H_
