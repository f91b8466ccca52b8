// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// The flags of docs/clients.md, parsed and checked as rpclab's own sweep
// checks them. A bad flag throws Usage naming the flag; main exits 2 on it.
#ifndef RPCLAB_FLAGS_H_
#define RPCLAB_FLAGS_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rpclab {

// A bad flag value: the flag's name and what is wrong.
struct Usage : std::runtime_error {
  Usage(std::string flag, const std::string& msg) : std::runtime_error(flag + ": " + msg), flag(std::move(flag)) {}
  std::string flag;
};

// The connection layouts of gRPC C++ (docs/clients.md).
enum class ConnKind {
  kShared,            // one channel for every worker
  kChannelPerWorker,  // a channel per worker, identical args: one subchannel, one connection (the trap)
  kLocalPool,         // a channel per worker with grpc.use_local_subchannel_pool
  kDistinctArgs,      // a channel per worker with a unique channel argument
  kPerWorker,         // a channel per worker that gets its own connection (made with distinct args)
  kPool,              // N channels with distinct args, round-robin per RPC
};

struct Conn {
  ConnKind kind = ConnKind::kShared;
  int n = 0;  // pool size
  // spec.conn_mode: pool:N is "pool".
  const char* Name() const;
  // How many channels (and connections asked for) with `inflight` workers.
  int Conns(int inflight) const;
};

constexpr int kMaxInflight = 20000;
constexpr int64_t kMaxPayload = (int64_t{4} << 20) - 64;

struct Flags {
  std::string target;
  std::vector<int> inflight;
  std::vector<Conn> conns;
  std::vector<std::string> rpcs{"unary"};
  int64_t payload = 0;
  int64_t warmup_ns = 1'000'000'000;
  int64_t interval_ns = 3'000'000'000;
  int64_t dial_timeout_ns = 5'000'000'000;
  int64_t rpc_timeout_ns = 0;  // deadline of each RPC (each ping-pong on a stream); 0: none
  std::string out;

  static Flags Parse(const std::vector<std::string>& args);
};

extern const char kClientUsage[];

// Go's time.ParseDuration ("300ms", "1m0s", "1.5s"), non-negative, in ns.
int64_t ParseGoDuration(const std::string& flag, const std::string& s);
// A non-negative integer, else Usage.
int64_t ParseInt(const std::string& flag, const std::string& s);
// Comma-separated items, trimmed, none empty.
std::vector<std::string> Items(const std::string& flag, const std::string& v);
Conn ParseConn(const std::string& s);

// Splits "--name=value" / "--name value" argument lists: calls set(name,
// value) for each flag; throws Usage for a missing value or a bare argument.
// "--help" throws Usage("--help", usage).
template <typename F>
void ForEachFlag(const std::vector<std::string>& args, const char* usage, F set) {
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a.empty() || a[0] != '-') throw Usage(a, "unexpected argument (flags only, see --help)");
    std::string name = a.substr(a.find_first_not_of('-') == std::string::npos ? a.size() : a.find_first_not_of('-'));
    if (name == "help" || name == "h") throw Usage("--help", usage);
    std::string value;
    size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else {
      if (++i >= args.size()) throw Usage("--" + name, "needs a value");
      value = args[i];
    }
    set(name, value);
  }
}

}  // namespace rpclab

#endif  // RPCLAB_FLAGS_H_
