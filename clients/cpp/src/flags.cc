// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "flags.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace rpclab {
namespace {

const char kConnNames[] = "shared, channel-per-worker, local-pool, distinct-args, per-worker or pool:N";

}  // namespace

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

int64_t ParseGoDuration(const std::string& flag, const std::string& s) {
  auto bad = [&] { return Usage(flag, "invalid duration " + Quote(s) + " (want e.g. 500ms, 2s, 1m)"); };
  std::string v = Trim(s);
  if (!v.empty() && v[0] == '-') {
    if (v == "-0") return 0;
    throw Usage(flag, "negative duration " + Quote(s));
  }
  if (!v.empty() && v[0] == '+') v = v.substr(1);
  if (v == "0") return 0;
  // Go's units; "µs" in either spelling of µ.
  static const std::map<std::string, double> kUnits = {{"ns", 1},   {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3},
                                                       {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};
  static const std::regex kPart(R"(([0-9]*\.?[0-9]*)([^0-9.]+))");
  if (v.empty()) throw bad();
  double total = 0;
  size_t matched = 0;
  for (std::sregex_iterator it(v.begin(), v.end(), kPart), end; it != end; ++it) {
    const std::smatch& m = *it;
    auto unit = kUnits.find(m[2]);
    if (static_cast<size_t>(m.position()) != matched || m[1].length() == 0 || m[1] == "." || unit == kUnits.end()) {
      throw bad();
    }
    total += std::stod(m[1]) * unit->second;
    matched += m.length();
  }
  if (matched != v.size()) throw bad();
  if (total > 9.2e18) throw Usage(flag, "duration " + Quote(s) + " is too long");
  return static_cast<int64_t>(std::llround(total));
}

Conn ParseConn(const std::string& flag, const std::string& raw) {
  std::string s = Trim(raw);
  static const std::map<std::string, ConnKind> kKinds = {{"shared", ConnKind::kShared},
                                                         {"channel-per-worker", ConnKind::kChannelPerWorker},
                                                         {"local-pool", ConnKind::kLocalPool},
                                                         {"distinct-args", ConnKind::kDistinctArgs},
                                                         {"per-worker", ConnKind::kPerWorker}};
  Conn c;
  auto kind = kKinds.find(s);
  if (kind != kKinds.end()) {
    c.kind = kind->second;
    return c;
  }
  std::smatch m;
  static const std::regex kPool(R"(pool:([0-9]{1,9})(:([a-z-]+))?)");
  if (!std::regex_match(s, m, kPool)) {
    throw Usage(flag, "unknown connection mode " + Quote(s) + " (want " + kConnNames + ")");
  }
  int64_t n = std::stoll(m[1]);
  if (n < 1 || n > kMaxInflight) {
    throw Usage(flag, Quote(s) + ": want pool:N with N an integer in 1.." + std::to_string(kMaxInflight));
  }
  if (m[3].matched && m[3] != "round-robin") {
    throw Usage(flag, Quote(s) + ": the C++ client picks round-robin only (pool:N or pool:N:round-robin)");
  }
  c.kind = ConnKind::kPool;
  c.n = static_cast<int>(n);
  return c;
}

Usage CliUsage(const std::string& fallback, const std::string& what) {
  static const std::regex kNamed(R"(^(-[-A-Za-z0-9]+): (.*)$)");
  static const std::regex kConvert(R"(^Could not convert: (-[-A-Za-z0-9]+) = .*$)");
  std::smatch m;
  if (std::regex_match(what, m, kNamed)) return Usage(m[1], m[2]);
  if (std::regex_match(what, m, kConvert)) return Usage(m[1], what);
  return Usage(fallback, what);
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n\r");
  return a == std::string::npos ? "" : s.substr(a, s.find_last_not_of(" \t\n\r") - a + 1);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

std::string Help() {
  return "usage: rpclab-client --target HOST:PORT [--inflight 1,2,4 | --min-inflight A --max-inflight B [--step S]]\n"
         "  [--conn shared,channel-per-worker,local-pool,distinct-args,per-worker,pool:N] [--rpc unary,streaming]\n"
         "  [--payload BYTES] [--warmup DUR] [--interval DUR] [--dial-timeout DUR] [--rpc-timeout DUR] [--out FILE]\n"
         "   or: rpclab-client --steps FILE [--dial-timeout DUR] [--rpc-timeout DUR]\n"
         "durations in Go syntax (500ms, 2s, 1m); the steps file is JSON Lines (docs/step.schema.json);\n"
         "see docs/clients.md and clients/cpp/README.md. YDB's command line is rpclab-ydb-ping's.";
}

Plan ParsePlan(const std::vector<std::string>& args) {
  CLI::App app("rpclab-client (cpp)", "rpclab-client");
  app.allow_extras();
  std::string steps_file, target, out, warmup = "1s", interval = "3s", dial = "5s", rpc_timeout = "0";
  std::vector<int> list{1, 2, 4, 8, 16, 32};
  std::vector<std::string> conns{"shared", "channel-per-worker", "local-pool", "distinct-args"}, rpcs{"unary"};
  int min = 1, max = 0, step = 1;
  int64_t payload = 0;
  CLI::Range in_range(1, kMaxInflight);
  auto* o_steps = app.add_option("--steps", steps_file);
  auto* o_target = app.add_option("--target", target);
  auto* o_list = app.add_option("--inflight", list)->delimiter(',')->check(in_range);
  auto* o_min = app.add_option("--min-inflight", min)->check(in_range);
  auto* o_max = app.add_option("--max-inflight", max)->check(in_range);
  auto* o_step = app.add_option("--step", step)->check(in_range);
  auto* o_conn = app.add_option("--conn", conns)->delimiter(',');
  auto* o_rpc = app.add_option("--rpc", rpcs)->delimiter(',')->check(CLI::IsMember({"unary", "streaming"}));
  auto* o_payload = app.add_option("--payload", payload)->check(CLI::Range(int64_t{0}, kMaxPayload));
  auto* o_warmup = app.add_option("--warmup", warmup);
  auto* o_interval = app.add_option("--interval", interval);
  app.add_option("--dial-timeout", dial);
  app.add_option("--rpc-timeout", rpc_timeout);
  auto* o_out = app.add_option("-o,--out", out);
  for (auto* o : {o_list, o_conn, o_rpc}) o->allow_extra_args(false);
  Plan plan;
  try {
    std::vector<std::string> rev(args.rbegin(), args.rend());
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    plan.help = true;
    return plan;
  } catch (const CLI::ParseError& e) {
    throw CliUsage("rpclab-client", e.what());
  }
  if (!app.remaining().empty()) {
    std::string a = app.remaining()[0];
    if (a.empty() || a[0] != '-') throw Usage(a, "unexpected argument (flags only, see --help)");
    throw Usage(a.substr(0, a.find('=')), "unknown flag (see --help)");
  }
  plan.dial_timeout_ns = ParseGoDuration("--dial-timeout", dial);
  plan.rpc_timeout_ns = ParseGoDuration("--rpc-timeout", rpc_timeout);
  if (plan.dial_timeout_ns <= 0) throw Usage("--dial-timeout", "must be positive");
  if (*o_steps) {
    for (auto* o : {o_target, o_list, o_min, o_max, o_step, o_conn, o_rpc, o_payload, o_warmup, o_interval, o_out}) {
      if (*o) throw Usage(o->get_name(), "the steps file says it (--steps takes only --dial-timeout, --rpc-timeout)");
    }
    std::ifstream in(steps_file);
    if (!in) throw Usage("--steps", "cannot read " + Quote(steps_file));
    std::stringstream text;
    text << in.rdbuf();
    plan.steps = ReadSteps(steps_file, text.str());
    plan.append = true;
    return plan;
  }

  if (Trim(target).empty()) throw Usage("--target", "required (HOST:PORT)");
  if (*o_list && (*o_min || *o_max || *o_step)) {
    throw Usage("--inflight", "give a list or --min-inflight/--max-inflight, not both");
  }
  if (*o_step && !*o_min && !*o_max) throw Usage("--step", "needs --min-inflight/--max-inflight");
  if (*o_min || *o_max) {
    if (!*o_max) max = min;
    if (max < min) {
      throw Usage("--max-inflight", std::to_string(max) + " is below --min-inflight " + std::to_string(min));
    }
    list.clear();
    for (int n = min; n <= max; n += step) list.push_back(n);
  }
  std::vector<Conn> layouts;
  for (const auto& c : conns) layouts.push_back(ParseConn("--conn", c));
  Step base;
  base.target = Trim(target);
  base.payload = payload;
  base.warmup_ns = ParseGoDuration("--warmup", warmup);
  base.interval_ns = ParseGoDuration("--interval", interval);
  base.out = out;
  if (base.interval_ns <= 0) throw Usage("--interval", "must be positive");
  // The order of docs/clients.md: RPC kind, then layout, then in-flight.
  for (const auto& r : rpcs) {
    for (const auto& c : layouts) {
      for (int n : list) {
        Step s = base;
        s.rpc = r;
        s.conn = c;
        s.inflight = n;
        plan.steps.push_back(s);
      }
    }
  }
  return plan;
}

std::vector<Step> ReadSteps(const std::string& name, const std::string& text) {
  using nlohmann::json;
  static const std::set<std::string> kRequired = {"target",        "service",   "rpc",         "conn", "inflight",
                                                  "payload_bytes", "warmup_ns", "interval_ns", "out"};
  std::vector<Step> steps;
  std::stringstream lines(text);
  std::string line;
  for (int no = 1; std::getline(lines, line); no++) {
    if (Trim(line).empty()) continue;
    std::string where = name + ":" + std::to_string(no);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Usage(where, "not a JSON object");
    auto bad = [&](const std::string& field, const std::string& msg) { return Usage(where, Quote(field) + " " + msg); };
    auto str = [&](const char* f) {
      if (!j[f].is_string() || j[f].get<std::string>().empty()) throw bad(f, "is not a non-empty string");
      return j[f].get<std::string>();
    };
    auto integer = [&](const char* f, int64_t lo, int64_t hi) {
      if (!j[f].is_number_integer()) throw bad(f, "is not an integer");
      bool huge = j[f].is_number_unsigned() && j[f].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
      if (huge || j[f].get<int64_t>() < lo || j[f].get<int64_t>() > hi) {
        throw bad(f, "is outside " + std::to_string(lo) + ".." + std::to_string(hi));
      }
      return j[f].get<int64_t>();
    };
    Step s;
    for (const auto& [key, value] : j.items()) {
      if (key == "target") {
        s.target = str("target");
      } else if (key == "service") {
        s.service = str("service");
        if (s.service == "ydb-debug")
          throw bad(key, "ydb-debug is not supported by rpclab-client (cpp): use rpclab-ydb-ping");
        if (s.service != "benchmark") throw bad(key, Quote(s.service) + " is not benchmark or ydb-debug");
      } else if (key == "rpc") {
        s.rpc = str("rpc");
        if (s.rpc != "unary" && s.rpc != "streaming") throw bad(key, Quote(s.rpc) + " is not unary or streaming");
      } else if (key == "conn") {
        s.conn = ParseConn(where + ": \"conn\"", str("conn"));
      } else if (key == "inflight") {
        s.inflight = static_cast<int>(integer("inflight", 1, kMaxInflight));
      } else if (key == "payload_bytes") {
        s.payload = integer("payload_bytes", 0, kMaxPayload);
      } else if (key == "warmup_ns") {
        s.warmup_ns = integer("warmup_ns", 0, INT64_MAX);
      } else if (key == "interval_ns") {
        s.interval_ns = integer("interval_ns", 1, INT64_MAX);
      } else if (key == "client_cpus") {
        if (!value.is_array()) throw bad(key, "is not an array of CPU numbers");
        for (const auto& c : value) {
          if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > 1 << 20) {
            throw bad(key, "holds " + c.dump() + ", not a CPU number");
          }
          s.client_cpus.push_back(c.get<int>());
        }
      } else if (key == "out") {
        s.out = str("out");
      } else {
        throw bad(key, "is not a field of a step (docs/step.schema.json)");
      }
    }
    for (const auto& f : kRequired) {
      if (!j.contains(f)) throw bad(f, "is missing");
    }
    steps.push_back(s);
  }
  if (steps.empty()) throw Usage("--steps", Quote(name) + " holds no step");
  return steps;
}

}  // namespace rpclab
