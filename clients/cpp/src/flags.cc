// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "step_schema.h"

namespace rpclab {
namespace {

using nlohmann::json;

// ConnKind's names (spec.conn_mode), in its order.
const char* const kKindNames[] = {"shared", "channel-per-worker", "local-pool", "distinct-args", "per-worker", "pool"};
const char kConnNames[] = "shared, channel-per-worker, local-pool, distinct-args, per-worker or pool:N[:least-loaded]";

// The one step schema (docs/step.schema.json, embedded at build time).
const json& Schema() {
  static const json schema = json::parse(kStepSchema);
  return schema;
}

// Why v breaks def, a property of the schema, or "". C++ has no JSON Schema
// validator package here, so this reads the keywords docs/step.schema.json
// uses; a keyword it does not know is an error, so none is skipped silently.
std::string SchemaError(const json& def, const json& v) {
  static const std::regex kRead("type|enum|minLength|minimum|maximum|pattern|items|description");
  for (const auto& [k, _] : def.items())
    if (!std::regex_match(k, kRead)) return "has a schema keyword " + Quote(k) + " this client cannot check";
  std::string type = def.value("type", "");
  if (!type.empty() && (type == "integer" ? !v.is_number_integer() : v.type_name() != type)) {
    return "is not of type " + type;
  }
  if (def.contains("enum") && std::find(def["enum"].begin(), def["enum"].end(), v) == def["enum"].end()) {
    return v.dump() + " is not one of " + def["enum"].dump();
  }
  if (def.contains("minLength") && v.get<std::string>().size() < def["minLength"].get<size_t>()) return "is empty";
  if (def.contains("pattern") &&
      !std::regex_search(v.get<std::string>(), std::regex(def["pattern"].get<std::string>()))) {
    return v.dump() + " does not match " + def["pattern"].get<std::string>();
  }
  json lo = def.value("minimum", json(INT64_MIN)), hi = def.value("maximum", json(INT64_MAX));
  if (v.is_number_integer() && (v.get<int64_t>() < lo.get<int64_t>() || v.get<int64_t>() > hi.get<int64_t>() ||
                                (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}))) {
    return "is outside " + lo.dump() + ".." + hi.dump() + ": " + v.dump();
  }
  for (const auto& e : def.contains("items") ? v : json::array()) {
    std::string m = SchemaError(def["items"], e);
    if (!m.empty()) return "holds " + e.dump() + ", which " + m;
  }
  return "";
}

}  // namespace

int64_t SchemaMax(const std::string& field) { return Schema()["properties"][field]["maximum"].get<int64_t>(); }

const char* Conn::Name() const { return kKindNames[static_cast<int>(kind)]; }

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
  if (!SchemaError(Schema()["properties"]["conn"], s).empty()) {
    throw Usage(flag, "unknown connection mode " + Quote(s) + " (want " + kConnNames + ")");
  }
  Conn c;  // a name but pool's, else pool:N[:pick]
  c.kind = static_cast<ConnKind>(std::find(kKindNames, std::end(kKindNames) - 1, s) - kKindNames);
  if (c.kind != ConnKind::kPool) return c;
  std::string n = s.substr(5, s.find(':', 5) - 5);  // pool:N[:pick]
  if (n.size() > 9 || std::stoi(n) > SchemaMax("inflight")) {
    throw Usage(flag, Quote(s) + ": want pool:N with N an integer in 1.." + std::to_string(SchemaMax("inflight")));
  }
  c.n = std::stoi(n);
  c.least_loaded = s.find(":least-loaded") != std::string::npos;
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
         "  [--conn shared,channel-per-worker,local-pool,distinct-args,per-worker,pool:N[:least-loaded]]\n  [--rpc "
         "unary,streaming]\n"
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
  CLI::Range in_range(int64_t{1}, SchemaMax("inflight"));
  auto* o_steps = app.add_option("--steps", steps_file);
  auto* o_target = app.add_option("--target", target);
  auto* o_list = app.add_option("--inflight", list)->delimiter(',')->check(in_range);
  auto* o_min = app.add_option("--min-inflight", min)->check(in_range);
  auto* o_max = app.add_option("--max-inflight", max)->check(in_range);
  auto* o_step = app.add_option("--step", step)->check(in_range);
  auto* o_conn = app.add_option("--conn", conns)->delimiter(',');
  auto* o_rpc = app.add_option("--rpc", rpcs)->delimiter(',')->check(CLI::IsMember({"unary", "streaming"}));
  auto* o_payload = app.add_option("--payload", payload)->check(CLI::Range(int64_t{0}, SchemaMax("payload_bytes")));
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
  const json& props = Schema()["properties"];
  std::vector<Step> steps;
  std::stringstream lines(text);
  std::string line;
  for (int no = 1; std::getline(lines, line); no++) {
    if (Trim(line).empty()) continue;
    std::string where = name + ":" + std::to_string(no);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Usage(where, "not a JSON object");
    auto bad = [&](const std::string& field, const std::string& msg) { return Usage(where, Quote(field) + " " + msg); };
    for (const auto& [key, value] : j.items()) {
      if (!props.contains(key)) throw bad(key, "is not a field of a step (docs/step.schema.json)");
      std::string m = SchemaError(props[key], value);
      if (!m.empty()) throw bad(key, m);
    }
    for (const auto& f : Schema()["required"])
      if (!j.contains(f)) throw bad(f, "is missing");
    // What the schema allows and this program lacks: ydb-debug steps.
    if (j["service"] == "ydb-debug")
      throw bad("service", "ydb-debug is not supported by rpclab-client (cpp): use rpclab-ydb-ping");
    steps.push_back(Step{j["target"], j["service"], j["rpc"], ParseConn(where + ": \"conn\"", j["conn"]), j["inflight"],
                         j["payload_bytes"], j["warmup_ns"], j["interval_ns"],
                         j.value("client_cpus", std::vector<int>{}), j["out"]});
  }
  if (steps.empty()) throw Usage("--steps", Quote(name) + " holds no step");
  return steps;
}

}  // namespace rpclab
