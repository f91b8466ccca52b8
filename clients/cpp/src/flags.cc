// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "flags.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "step_schema.h"

namespace rpclab {
namespace {

using nlohmann::json;

// ConnKind's names (spec.conn_mode), in its order.
const char* const kKindNames[] = {"shared", "channel-per-worker", "local-pool", "distinct-args", "per-worker", "pool"};

// The one step schema (schema/step.schema.json, embedded at build time).
const json& Schema() {
  static const json schema = json::parse(kStepSchema);
  return schema;
}

// Why v breaks def, a property of the schema, or "". C++ has no JSON Schema
// validator package here, so this reads the keywords schema/step.schema.json
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

// The layout of a "conn" the schema accepted: a kind's name, or pool:N[:pick].
Conn ParseConn(const std::string& s) {
  Conn c;
  c.kind = static_cast<ConnKind>(std::find(kKindNames, std::end(kKindNames) - 1, s) - kKindNames);
  if (c.kind != ConnKind::kPool) return c;
  std::string n = s.substr(5, s.find(':', 5) - 5);
  c.n = n.size() > 9 ? INT32_MAX : std::stoi(n);
  c.least_loaded = s.find(":least-loaded") != std::string::npos;
  return c;
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

Usage CliUsage(const std::string& fallback, const std::string& what) {
  static const std::regex kNamed(R"(^(-[-A-Za-z0-9]+): (.*)$)");
  static const std::regex kConvert(R"(^Could not convert: (-[-A-Za-z0-9]+) = .*$)");
  std::smatch m;
  if (std::regex_match(what, m, kNamed)) return Usage(m[1], m[2]);
  if (std::regex_match(what, m, kConvert)) return Usage(m[1], what);
  return Usage(fallback, what);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

CLI::Option* AddDuration(CLI::App& app, const std::string& name, double& seconds, const std::string& what) {
  static const std::map<std::string, double> kUnits = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},
                                                       {"s", 1},     {"m", 60},    {"h", 3600}};
  return app.add_option(name, seconds, what + " (a number with a unit: ns, us, ms, s, m, h; none: seconds)")
      ->transform(CLI::AsNumberWithUnit(kUnits, CLI::AsNumberWithUnit::CASE_SENSITIVE).description(""))
      ->check(CLI::Range(0.0, 9e9).description(""))  // int64 ns
      ->type_name("DURATION");
}

int64_t Nanos(double seconds) { return std::llround(seconds * 1e9); }

ClientCli::ClientCli()
    : app("rpclab-client (cpp): rpclab's client on gRPC C++ (C-core, sync API). It runs the steps of a steps\n"
          "file in order, one closed-loop step at a time, and appends each step's JSON Lines record to the\n"
          "step's out. `rpclab sweep --client cpp` writes the steps file and runs it.",
          "rpclab-client") {
  app.add_option(
         "--steps", steps_file,
         "the steps, JSON Lines, one object a line (docs/clients.md, \"The step spec\"; schema/step.schema.json)")
      ->required()
      ->type_name("FILE");
  AddDuration(app, "--rpc-timeout", rpc_timeout_s,
              "deadline of each RPC and of each ping-pong on a stream; default 0: none");
  app.add_option("--channelz-port", channelz_port,
                 "serve C-core's channelz (grpc.channelz.v1) on 127.0.0.1:PORT, for rpclab doctor --pid --channelz "
                 "(default: off)")
      ->check(CLI::Range(1, 65535).description(""))
      ->type_name("PORT");
  app.footer("Exit codes: 0 every step ok, 1 a step failed, 2 bad input (a flag or the steps file).");
  app.failure_message(CLI::FailureMessage::help);
}

Plan ClientCli::ToPlan() const {
  std::ifstream in(steps_file);
  if (!in) throw Usage("--steps", "cannot read " + Quote(steps_file));
  std::stringstream text;
  text << in.rdbuf();
  return Plan{ReadSteps(steps_file, text.str()), Plan().dial_timeout_ns, Nanos(rpc_timeout_s)};
}

std::vector<Step> ReadSteps(const std::string& name, const std::string& text) {
  const json& props = Schema()["properties"];
  std::vector<Step> steps;
  std::stringstream lines(text);
  std::string line;
  for (int no = 1; std::getline(lines, line); no++) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = name + ":" + std::to_string(no);
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Usage(where, "not a JSON object");
    auto bad = [&](const std::string& field, const std::string& msg) { return Usage(where, Quote(field) + " " + msg); };
    for (const auto& [key, value] : j.items()) {
      if (!props.contains(key)) throw bad(key, "is not a field of a step (schema/step.schema.json)");
      std::string m = SchemaError(props[key], value);
      if (!m.empty()) throw bad(key, m);
    }
    for (const auto& f : Schema()["required"])
      if (!j.contains(f)) throw bad(f, "is missing");
    // What the schema allows and this program lacks: ydb-debug steps.
    if (j["service"] == "ydb-debug")
      throw bad("service", "ydb-debug is not supported by rpclab-client (cpp): use rpclab-ydb-ping");
    Conn conn = ParseConn(j["conn"]);
    if (conn.n > SchemaMax("inflight")) {
      throw bad("conn", j["conn"].dump() + ": want pool:N with N in 1.." + std::to_string(SchemaMax("inflight")));
    }
    steps.push_back(Step{j["target"], j["service"], j["rpc"], conn, j["inflight"], j["payload_bytes"], j["warmup_ns"],
                         j["interval_ns"], j.value("client_cpus", std::vector<int>{}), j["out"]});
  }
  if (steps.empty()) throw Usage("--steps", Quote(name) + " holds no step");
  return steps;
}

}  // namespace rpclab
