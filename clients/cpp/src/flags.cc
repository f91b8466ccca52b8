// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "flags.h"

#include <cmath>
#include <cstdlib>

namespace rpclab {
namespace {

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n\r");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t\n\r");
  return s.substr(a, b - a + 1);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

const char kConnNames[] = "shared, channel-per-worker, local-pool, distinct-args, per-worker or pool:N";

}  // namespace

const char kClientUsage[] =
    "usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]\n"
    "  [--conn shared,channel-per-worker,local-pool,distinct-args,per-worker,pool:N] [--rpc unary,streaming]\n"
    "  [--payload BYTES] [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]\n"
    "durations in Go syntax (500ms, 2s, 1m); see docs/clients.md and clients/cpp/README.md";

const char* Conn::Name() const {
  switch (kind) {
    case ConnKind::kShared: return "shared";
    case ConnKind::kChannelPerWorker: return "channel-per-worker";
    case ConnKind::kLocalPool: return "local-pool";
    case ConnKind::kDistinctArgs: return "distinct-args";
    case ConnKind::kPerWorker: return "per-worker";
    case ConnKind::kPool: return "pool";
  }
  return "?";
}

int Conn::Conns(int inflight) const {
  switch (kind) {
    case ConnKind::kShared: return 1;
    case ConnKind::kPool: return n;
    default: return inflight;
  }
}

int64_t ParseInt(const std::string& flag, const std::string& s) {
  std::string t = Trim(s);
  if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) {
    throw Usage(flag, Quote(s) + " is not a non-negative integer");
  }
  return std::strtoll(t.c_str(), nullptr, 10);
}

std::vector<std::string> Items(const std::string& flag, const std::string& v) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t comma = v.find(',', start);
    std::string item = Trim(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (item.empty()) throw Usage(flag, "empty item in " + Quote(v));
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

int64_t ParseGoDuration(const std::string& flag, const std::string& s) {
  auto bad = [&] { return Usage(flag, "invalid duration " + Quote(s) + " (want e.g. 500ms, 2s, 1m)"); };
  std::string v = Trim(s);
  if (!v.empty() && v[0] == '-') {
    if (v == "-0") return 0;
    throw Usage(flag, "negative duration " + Quote(s));
  }
  if (!v.empty() && v[0] == '+') v = v.substr(1);
  if (v == "0") return 0;
  if (v.empty()) throw bad();
  double total = 0;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && (isdigit(static_cast<unsigned char>(v[j])) || v[j] == '.')) j++;
    std::string num = v.substr(i, j - i);
    if (num.empty() || num == "." || num.find('.') != num.rfind('.')) throw bad();
    double x = std::strtod(num.c_str(), nullptr);
    size_t k = j;
    while (k < v.size() && !(isdigit(static_cast<unsigned char>(v[k])) || v[k] == '.')) k++;
    std::string unit = v.substr(j, k - j);
    double mult;
    if (unit == "ns") mult = 1;
    else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") mult = 1e3;
    else if (unit == "ms") mult = 1e6;
    else if (unit == "s") mult = 1e9;
    else if (unit == "m") mult = 60e9;
    else if (unit == "h") mult = 3600e9;
    else throw bad();
    total += x * mult;
    i = k;
  }
  if (total > 9.2e18) throw Usage(flag, "duration " + Quote(s) + " is too long");
  return static_cast<int64_t>(std::llround(total));
}

Conn ParseConn(const std::string& raw) {
  std::string s = Trim(raw);
  std::string kind = s.substr(0, s.find(':'));
  bool sized = s.find(':') != std::string::npos;
  Conn c;
  if (kind == "pool") {
    int64_t n = 0;
    if (sized) {
      try {
        n = ParseInt("--conn", s.substr(s.find(':') + 1));
      } catch (const Usage&) {
        n = 0;
      }
    }
    if (n < 1 || n > kMaxInflight) {
      throw Usage("--conn", Quote(s) + ": want pool:N with N an integer in 1.." + std::to_string(kMaxInflight));
    }
    c.kind = ConnKind::kPool;
    c.n = static_cast<int>(n);
    return c;
  }
  if (kind == "shared") c.kind = ConnKind::kShared;
  else if (kind == "channel-per-worker") c.kind = ConnKind::kChannelPerWorker;
  else if (kind == "local-pool") c.kind = ConnKind::kLocalPool;
  else if (kind == "distinct-args") c.kind = ConnKind::kDistinctArgs;
  else if (kind == "per-worker") c.kind = ConnKind::kPerWorker;
  else throw Usage("--conn", "unknown connection mode " + Quote(s) + " (want " + kConnNames + ")");
  if (sized) throw Usage("--conn", Quote(kind) + " takes no size");
  return c;
}

Flags Flags::Parse(const std::vector<std::string>& args) {
  Flags f;
  bool have_list = false, have_min = false, have_max = false, have_step = false;
  std::string list, conns = "shared,channel-per-worker,local-pool,distinct-args";
  int64_t min = 1, max = 0, step = 1;
  ForEachFlag(args, kClientUsage, [&](const std::string& name, const std::string& value) {
    std::string flag = "--" + name;
    if (name == "target") f.target = Trim(value);
    else if (name == "inflight") have_list = true, list = value;
    else if (name == "min-inflight") have_min = true, min = ParseInt(flag, value);
    else if (name == "max-inflight") have_max = true, max = ParseInt(flag, value);
    else if (name == "step") have_step = true, step = ParseInt(flag, value);
    else if (name == "conn") conns = value;
    else if (name == "rpc") f.rpcs = Items(flag, value);
    else if (name == "payload") f.payload = ParseInt(flag, value);
    else if (name == "warmup") f.warmup_ns = ParseGoDuration(flag, value);
    else if (name == "interval") f.interval_ns = ParseGoDuration(flag, value);
    else if (name == "dial-timeout") f.dial_timeout_ns = ParseGoDuration(flag, value);
    else if (name == "rpc-timeout") f.rpc_timeout_ns = ParseGoDuration(flag, value);
    else if (name == "out" || name == "o") f.out = value;
    else throw Usage(flag, "unknown flag");
  });
  if (f.target.empty()) throw Usage("--target", "required (HOST:PORT)");
  if (have_list && (have_min || have_max || have_step)) {
    throw Usage("--inflight", "give a list or --min-inflight/--max-inflight, not both");
  }
  if (have_list) {
    for (const auto& s : Items("--inflight", list)) {
      int64_t n = ParseInt("--inflight", s);
      if (n < 1 || n > kMaxInflight) {
        throw Usage("--inflight", std::to_string(n) + " is outside 1.." + std::to_string(kMaxInflight));
      }
      f.inflight.push_back(static_cast<int>(n));
    }
  } else if (have_min || have_max) {
    if (!have_max) max = min;
    if (min < 1) throw Usage("--min-inflight", "must be at least 1, got " + std::to_string(min));
    if (max < min) {
      throw Usage("--max-inflight", std::to_string(max) + " is below --min-inflight " + std::to_string(min));
    }
    if (step < 1) throw Usage("--step", "must be at least 1, got " + std::to_string(step));
    if (max > kMaxInflight) {
      throw Usage("--max-inflight", std::to_string(max) + " is above " + std::to_string(kMaxInflight));
    }
    for (int64_t n = min; n <= max; n += step) f.inflight.push_back(static_cast<int>(n));
  } else if (have_step) {
    throw Usage("--step", "needs --min-inflight/--max-inflight");
  } else {
    f.inflight = {1, 2, 4, 8, 16, 32};
  }
  for (const auto& c : Items("--conn", conns)) f.conns.push_back(ParseConn(c));
  for (const auto& r : f.rpcs) {
    if (r != "unary" && r != "streaming") {
      throw Usage("--rpc", "unknown RPC kind " + Quote(r) + " (want unary or streaming)");
    }
  }
  if (f.payload > kMaxPayload) {
    throw Usage("--payload", std::to_string(f.payload) + " is outside 0.." + std::to_string(kMaxPayload) +
                                 " bytes (gRPC's default 4 MiB message limit)");
  }
  if (f.interval_ns <= 0) throw Usage("--interval", "must be positive");
  if (f.dial_timeout_ns <= 0) throw Usage("--dial-timeout", "must be positive");
  return f;
}

}  // namespace rpclab
