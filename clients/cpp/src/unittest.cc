// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Unit tests of the client's parts without gRPC: durations, the command
// line, steps files (bad ones name the line and field), the histogram's layout, statistics and encoding,
// and record helpers, YDB mode's command line and tables. Run: clients/cpp/build/rpclab-cpp-unittest (exit 0 = pass).
// The encoding is also checked from Go (clients/conformance: checkHistograms).

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flags.h"
#include "hdr.h"
#include "record.h"
#include "ydb.h"

namespace {

int failures = 0;

std::string Str(const std::string& s) { return s; }
template <typename T>
std::string Str(T v) {
  return std::to_string(v);
}

#define CHECK_EQ(got, want)                                                                           \
  do {                                                                                                \
    auto g_ = (got);                                                                                  \
    auto w_ = (want);                                                                                 \
    if (!(g_ == w_)) {                                                                                \
      failures++;                                                                                     \
      std::fprintf(stderr, "%s:%d: %s: got %s, want %s\n", __FILE__, __LINE__, #got, Str(g_).c_str(), \
                   Str(w_).c_str());                                                                  \
    }                                                                                                 \
  } while (0)

// Durations as AddDuration (CLI11's AsNumberWithUnit) reads them, in ns.
void TestDurations() {
  struct {
    const char* in;
    long long want;  // -1: an error naming the flag
  } cases[] = {
      {"0", 0},
      {"0s", 0},
      {"300ms", 300'000'000},
      {"1.5s", 1'500'000'000},
      {"2m", 120'000'000'000},
      {"250us", 250'000},
      {"10", 10'000'000'000},  // seconds, as YDB takes them
      {"0.5", 500'000'000},
      {"s", 1'000'000'000},
      {"", -1},
      {"-1s", -1},
      {"1.2.3s", -1},
      {"5 fortnights", -1},
      {"1e12", -1},
  };
  for (const auto& c : cases) {
    CLI::App app;
    double secs = 0;
    rpclab::AddDuration(app, "--warmup", secs, "");
    long long got;
    try {
      app.parse(std::vector<std::string>{c.in, "--warmup"});  // reversed, as CLI11 takes a vector
      got = rpclab::Nanos(secs);
    } catch (const CLI::ParseError& e) {
      got = -1;
      if (rpclab::CliUsage("app", e.what()).flag != "--warmup") {
        failures++;
        std::fprintf(stderr, "AddDuration(\"%s\"): error %s does not name --warmup\n", c.in, e.what());
      }
    }
    if (got != c.want) {
      failures++;
      std::fprintf(stderr, "AddDuration(\"%s\"): got %lld, want %lld\n", c.in, got, c.want);
    }
  }
}

// rpclab-client's command line: --steps FILE and --rpc-timeout; anything
// else (the human flags of old among it) is CLI11's error.
void TestClientCli() {
  struct {
    std::vector<std::string> args;
    bool ok;
  } cases[] = {
      {{"--steps", "s.jsonl"}, true},
      {{"--steps=s.jsonl", "--rpc-timeout", "50ms"}, true},
      {{}, false},
      {{"--rpc-timeout", "50ms"}, false},
      {{"--steps", "s.jsonl", "--target", "h:1"}, false},
      {{"--steps", "s.jsonl", "--inflight", "4"}, false},
      {{"--steps", "s.jsonl", "--rpc-timeout", "x"}, false},
      {{"--steps", "s.jsonl", "extra"}, false},
      {{"--steps"}, false},
  };
  for (const auto& c : cases) {
    rpclab::ClientCli cli;
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    bool ok = true;
    try {
      cli.app.parse(std::vector<std::string>(c.args.rbegin(), c.args.rend()));
    } catch (const CLI::ParseError&) {
      ok = false;
    }
    if (ok != c.ok) {
      failures++;
      std::fprintf(stderr, "ClientCli(%s): parsed %d, want %d\n", joined.c_str(), ok, c.ok);
    }
  }
  rpclab::ClientCli cli;
  cli.app.parse(std::vector<std::string>{"50ms", "--rpc-timeout", "s.jsonl", "--steps"});
  CHECK_EQ(cli.steps_file, std::string("s.jsonl"));
  CHECK_EQ(rpclab::Nanos(cli.rpc_timeout_s), int64_t{50'000'000});
  try {
    rpclab::ClientCli().app.parse(std::vector<std::string>{"--help"});
    failures++;
    std::fprintf(stderr, "ClientCli(--help): parsed, want CallForHelp\n");
  } catch (const CLI::CallForHelp&) {
  }
  std::string help = cli.app.help();
  for (const char* want :
       {"--steps", "--rpc-timeout", "rpclab sweep --client cpp", "docs/step.schema.json", "Exit codes"}) {
    if (help.find(want) == std::string::npos) {
      failures++;
      std::fprintf(stderr, "--help lacks %s:\n%s\n", want, help.c_str());
    }
  }
  try {
    cli.steps_file = "/nonexistent/s.jsonl";
    cli.ToPlan();
    failures++;
    std::fprintf(stderr, "ToPlan(/nonexistent/s.jsonl): read, want an error naming --steps\n");
  } catch (const rpclab::Usage& u) {
    CHECK_EQ(u.flag, std::string("--steps"));
  }
}

// A steps file: a good one reads into typed steps; each bad case names its
// line and field.
void TestSteps() {
  auto steps = rpclab::ReadSteps(
      "s.jsonl",
      R"({"target":"127.0.0.1:50051","service":"benchmark","rpc":"unary","conn":"shared","inflight":4,"payload_bytes":0,"warmup_ns":1000000000,"interval_ns":3000000000,"client_cpus":[0,1],"out":"/tmp/a.jsonl"})"
      "\n\n"
      R"({"target":"h:2","service":"benchmark","rpc":"streaming","conn":"pool:4:least-loaded","inflight":8,"payload_bytes":1024,"warmup_ns":0,"interval_ns":1,"out":"b.jsonl"})"
      "\n");
  CHECK_EQ(steps.size(), size_t{2});
  CHECK_EQ(steps[0].target, std::string("127.0.0.1:50051"));
  CHECK_EQ(steps[0].inflight, 4);
  CHECK_EQ(steps[0].interval_ns, int64_t{3'000'000'000});
  CHECK_EQ(steps[0].client_cpus.size(), size_t{2});
  CHECK_EQ(steps[0].out, std::string("/tmp/a.jsonl"));
  CHECK_EQ(steps[1].rpc, std::string("streaming"));
  CHECK_EQ(steps[1].conn.Conns(8), 4);
  CHECK_EQ(steps[1].conn.least_loaded, true);
  CHECK_EQ(steps[1].payload, int64_t{1024});
  CHECK_EQ(steps[1].client_cpus.size(), size_t{0});

  const std::string good =
      R"("target":"h:1","service":"benchmark","rpc":"unary","conn":"shared","inflight":1,"payload_bytes":0,"warmup_ns":0,"interval_ns":5,"out":"o")";
  auto with = [&](const std::string& from, const std::string& to) {
    std::string line = "{" + good + "}";
    size_t at = line.find(from);
    return line.replace(at, from.size(), to);
  };
  struct {
    std::string line;
    const char* want;  // in the message: the field (or what is wrong)
  } cases[] = {
      {"[1,2]", "not a JSON object"},
      {"{", "not a JSON object"},
      {"{" + good + ",\"bogus\":1}", "\"bogus\""},
      {with("\"target\":\"h:1\",", ""), "\"target\" is missing"},
      {with("\"warmup_ns\":0", "\"warmup_ns\":1.5"), "\"warmup_ns\" is not of type integer"},
      {with("\"warmup_ns\":0", "\"warmup_ns\":\"1s\""), "\"warmup_ns\" is not of type integer"},
      {with("\"interval_ns\":5", "\"interval_ns\":0"), "\"interval_ns\" is outside"},
      {with("\"inflight\":1", "\"inflight\":20001"), "\"inflight\" is outside"},
      {with("\"payload_bytes\":0", "\"payload_bytes\":-1"), "\"payload_bytes\" is outside"},
      {with("\"rpc\":\"unary\"", "\"rpc\":\"bidi\""), "\"rpc\""},
      {with("\"conn\":\"shared\"", "\"conn\":\"pool:2:fastest\""), "\"conn\""},
      {with("\"conn\":\"shared\"", "\"conn\":\"hedged\""), "\"conn\""},
      {with("\"conn\":\"shared\"", "\"conn\":\"pool:20001\""), "\"conn\""},
      {with("\"conn\":\"shared\"", "\"conn\":\"pool:12345678901\""), "\"conn\""},
      {with("\"service\":\"benchmark\"", "\"service\":\"ydb-debug\""), "\"service\""},
      {with("\"out\":\"o\"", "\"out\":7"), "\"out\""},
      {"{" + good + ",\"client_cpus\":[-1]}", "\"client_cpus\""},
      {"", "holds no step"},
  };
  for (const auto& c : cases) {
    // The bad line is the file's second: the message names line 2.
    std::string text = c.line.empty() ? "" : "{" + good + "}\n" + c.line + "\n";
    std::string where = c.line.empty() ? "--steps" : "s.jsonl:2";
    try {
      rpclab::ReadSteps("s.jsonl", text);
      failures++;
      std::fprintf(stderr, "ReadSteps(%s): read, want an error with %s\n", c.line.c_str(), c.want);
    } catch (const rpclab::Usage& u) {
      std::string msg = u.what();
      if (msg.rfind(where, 0) != 0 || msg.find(c.want) == std::string::npos) {
        failures++;
        std::fprintf(stderr, "ReadSteps(%s): got %s, want %s naming %s\n", c.line.c_str(), u.what(), where.c_str(),
                     c.want);
      }
    }
  }
}

void TestHistogram() {
  using rpclab::Histogram;
  // HdrHistogram's layout for 1..1e11 ns at 3 digits: 28 half-buckets of 1024.
  CHECK_EQ(Histogram::CountsLen(), 28 * 1024);
  CHECK_EQ(Histogram::CountsIndex(1), 1);
  CHECK_EQ(Histogram::CountsIndex(2047), 2047);
  CHECK_EQ(Histogram::CountsIndex(2048), 2048);  // first of bucket 1: unit 2
  CHECK_EQ(Histogram::CountsIndex(2049), 2048);
  CHECK_EQ(Histogram::ValueFromIndex(2049), int64_t{2050});
  CHECK_EQ(Histogram::HighestEquivalent(2048), int64_t{2049});
  CHECK_EQ(Histogram::LowestEquivalent(123'500), int64_t{123'456});
  CHECK_EQ(Histogram::HighestEquivalent(123'500), int64_t{123'519});
  for (int64_t v : {int64_t{1}, int64_t{999}, int64_t{30'000}, int64_t{2'000'000}, int64_t{99'999'999'999}}) {
    int64_t lo = Histogram::LowestEquivalent(v), hi = Histogram::HighestEquivalent(v);
    if (!(lo <= v && v <= hi && Histogram::CountsIndex(lo) == Histogram::CountsIndex(hi) &&
          Histogram::CountsIndex(hi + 1) == Histogram::CountsIndex(v) + 1 && (hi - lo + 1) * 1000 <= v * 2 + 2000)) {
      failures++;
      std::fprintf(stderr, "equivalent range of %lld: [%lld, %lld]\n", (long long)v, (long long)lo, (long long)hi);
    }
  }

  Histogram h;
  CHECK_EQ(h.Max(), int64_t{0});
  CHECK_EQ(h.ValueAtPercentile(99), int64_t{0});
  for (int i = 1; i <= 100; i++) h.Record(i * 1000);  // 1 µs .. 100 µs
  CHECK_EQ(h.TotalCount(), int64_t{100});
  CHECK_EQ(h.Min(), int64_t{1000});
  CHECK_EQ(h.ValueAtPercentile(50), Histogram::HighestEquivalent(50'000));
  CHECK_EQ(h.ValueAtPercentile(99), Histogram::HighestEquivalent(99'000));
  CHECK_EQ(h.ValueAtPercentile(100), Histogram::HighestEquivalent(100'000));
  CHECK_EQ(h.Max(), Histogram::HighestEquivalent(100'000));
  h.Record(0);                  // clamped to 1
  h.Record(1'000'000'000'000);  // clamped to 100 s
  CHECK_EQ(h.Min(), int64_t{1});
  CHECK_EQ(h.Max(), Histogram::HighestEquivalent(Histogram::kHighest));

  std::string enc = h.Encode();
  if (enc.rfind("HISTFAAA", 0) != 0) {
    failures++;
    std::fprintf(stderr, "encoding starts %s, want HISTFAAA\n", enc.substr(0, 12).c_str());
  }
  std::vector<int64_t> counts;
  if (!rpclab::DecodeForTest(enc, &counts)) {
    failures++;
    std::fprintf(stderr, "encoding does not decode\n");
  } else {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    CHECK_EQ(total, int64_t{102});
    CHECK_EQ(counts[Histogram::CountsIndex(50'000)], int64_t{1});
  }
  Histogram empty;
  if (!rpclab::DecodeForTest(empty.Encode(), &counts)) failures++;

  Histogram merged;
  merged.Merge(h);
  merged.Merge(h);
  CHECK_EQ(merged.TotalCount(), int64_t{204});
  CHECK_EQ(rpclab::Base64("ab"), std::string("YWI="));
}

// CheckedCode: only CANCELLED, with a deadline, at or past it, becomes
// DEADLINE_EXCEEDED.
void TestCheckedCode() {
  CHECK_EQ(rpclab::CheckedCode(1, true, true), 4);
  CHECK_EQ(rpclab::CheckedCode(1, true, false), 1);
  CHECK_EQ(rpclab::CheckedCode(1, false, true), 1);
  CHECK_EQ(rpclab::CheckedCode(0, true, true), 0);
  CHECK_EQ(rpclab::CheckedCode(14, true, true), 14);
  CHECK_EQ(std::string(rpclab::kCodeNames[1]), std::string("Canceled"));
  CHECK_EQ(std::string(rpclab::kCodeNames[4]), std::string("DeadlineExceeded"));
}

void TestRecord() {
  // The record as the JSON library writes it: escaped, the step's pin in env.
  rpclab::Record r;
  r.step.target = "h:1";
  r.step.inflight = 4;
  r.step.client_cpus = {3};
  r.Fail("a\"b\\\n\x01");
  rpclab::Env env;
  env.client_cpus = {0, 1};
  auto j = nlohmann::json::parse(r.Json(env));
  CHECK_EQ(j["error"].get<std::string>(), std::string("a\"b\\\n\x01"));
  CHECK_EQ(j["spec"]["conns_requested"].get<int>(), 1);
  CHECK_EQ(j["spec"].contains("service"), false);
  CHECK_EQ(j["env"]["client_cpus"].size(), size_t{1});
  CHECK_EQ(j["env"]["client_cpus"][0].get<int>(), 3);
  CHECK_EQ(j["status"].get<std::string>(), std::string("failed"));
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1'795'388'462));
  CHECK_EQ(rpclab::Rfc3339(t), std::string("2026-11-22T23:01:02.000000000Z"));
  CHECK_EQ(rpclab::CpuList("0-2,5").size(), size_t{4});
  CHECK_EQ(rpclab::CpuList("x").size(), size_t{0});
}

// A YDB command line that must fail, and the flag its error must name.
void ExpectYdbUsage(const std::vector<std::string>& args, const std::string& flag) {
  std::string joined;
  for (const auto& a : args) joined += a + " ";
  try {
    rpclab::YdbFlags::Parse(args);
    failures++;
    std::fprintf(stderr, "YdbFlags::Parse(%s): parsed, want an error naming %s\n", joined.c_str(), flag.c_str());
  } catch (const rpclab::Usage& u) {
    if (u.flag != flag) {
      failures++;
      std::fprintf(stderr, "YdbFlags::Parse(%s): error names %s (%s), want %s\n", joined.c_str(), u.flag.c_str(),
                   u.what(), flag.c_str());
    }
  }
}

void TestYdbFlags() {
  // The blog's command, verbatim.
  auto f = rpclab::YdbFlags::Parse({"--host", "localhost:2137", "--min-inflight", "1", "--max-inflight", "48",
                                    "--warmup", "5", "--interval", "10", "--with-csv", "--local-pool"});
  CHECK_EQ(f.inflight.size(), size_t{48});
  CHECK_EQ(f.inflight.front(), 1);
  CHECK_EQ(f.inflight[4], 5);
  CHECK_EQ(f.inflight.back(), 48);
  CHECK_EQ(f.warmup_ns, int64_t{5'000'000'000});
  CHECK_EQ(f.interval_ns, int64_t{10'000'000'000});
  CHECK_EQ(f.with_csv, true);
  CHECK_EQ(f.local_pool, true);
  CHECK_EQ(f.streaming, false);
  CHECK_EQ(f.per_worker_stats, false);
  CHECK_EQ(f.api == rpclab::YdbApi::kSync, true);
  CHECK_EQ(f.hosts.size(), size_t{1});
  CHECK_EQ(f.hosts[0], std::string("localhost:2137"));
  CHECK_EQ(f.max_channels, 48);  // YDB's default: the largest in-flight
  CHECK_EQ(f.Channels(7), 7);
  CHECK_EQ(f.Spec().target, std::string("localhost:2137"));
  CHECK_EQ(f.Spec().rpc, std::string("unary"));

  // YDB's defaults.
  f = rpclab::YdbFlags::Parse({"--host", "h:1"});
  CHECK_EQ(f.inflight.size(), size_t{1});
  CHECK_EQ(f.inflight[0], 32);
  CHECK_EQ(f.interval_ns, int64_t{10'000'000'000});
  CHECK_EQ(f.warmup_ns, int64_t{1'000'000'000});
  CHECK_EQ(f.max_channels, 32);
  CHECK_EQ(f.with_csv, false);
  f = rpclab::YdbFlags::Parse({"--with-csv"});
  CHECK_EQ(f.hosts[0], std::string("localhost:2137"));
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--max-inflight", "4"});
  CHECK_EQ(f.inflight.size(), size_t{4});
  CHECK_EQ(f.inflight[0], 1);
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--min-inflight", "30"});
  CHECK_EQ(f.inflight.size(), size_t{3});  // 30..32: YDB's --max-inflight default
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--min-inflight", "3", "--max-inflight", "3"});
  CHECK_EQ(f.inflight.size(), size_t{1});

  // Hosts round-robin, channels, async clients, seconds and durations.
  f = rpclab::YdbFlags::Parse({"--host", "a:1,b:2,[::1]:3", "--inflight", "8", "--max-channels", "2", "--interval",
                               "0.5", "--warmup=300ms", "--streaming", "--per-worker-stats", "--out", "r.jsonl"});
  CHECK_EQ(f.hosts.size(), size_t{3});
  CHECK_EQ(f.hosts[1], std::string("b:2"));
  CHECK_EQ(f.hosts[2], std::string("[::1]:3"));
  CHECK_EQ(f.host_arg, std::string("a:1,b:2,[::1]:3"));
  CHECK_EQ(f.inflight[0], 8);
  CHECK_EQ(f.Channels(8), 2);
  CHECK_EQ(f.Channels(1), 1);
  CHECK_EQ(f.interval_ns, int64_t{500'000'000});
  CHECK_EQ(f.warmup_ns, int64_t{300'000'000});
  CHECK_EQ(f.streaming, true);
  CHECK_EQ(f.per_worker_stats, true);
  CHECK_EQ(f.out, std::string("r.jsonl"));
  CHECK_EQ(f.Spec().rpc, std::string("streaming"));
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--inflight", "8", "--async", "--max-async-clients", "3"});
  CHECK_EQ(f.api == rpclab::YdbApi::kAsync, true);
  CHECK_EQ(f.AsyncClients(8), 3);
  CHECK_EQ(f.AsyncClients(2), 2);
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--inflight", "5", "--async-callback"});
  CHECK_EQ(f.api == rpclab::YdbApi::kCallback, true);
  CHECK_EQ(f.AsyncClients(5), 5);  // YDB's auto: one per in-flight

  ExpectYdbUsage({"--host", "h:99999"}, "--host");
  ExpectYdbUsage({"--host", "h:0"}, "--host");
  ExpectYdbUsage({"--host", "h:2137x"}, "--host");
  ExpectYdbUsage({"--host", "h"}, "--host");
  ExpectYdbUsage({"--host", ":2137"}, "--host");
  ExpectYdbUsage({"--host", "::1:2137"}, "--host");
  ExpectYdbUsage({"--host", "h:1,"}, "--host");
  ExpectYdbUsage({"--host"}, "--host");
  ExpectYdbUsage({"--host", "h:1", "--min-inflight", "9", "--max-inflight", "2"}, "--max-inflight");
  ExpectYdbUsage({"--host", "h:1", "--min-inflight", "0"}, "--min-inflight");
  ExpectYdbUsage({"--host", "h:1", "--inflight", "0"}, "--inflight");
  ExpectYdbUsage({"--host", "h:1", "--inflight", "2", "--max-inflight", "4"}, "--inflight");
  ExpectYdbUsage({"--host", "h:1", "--max-channels", "0"}, "--max-channels");
  ExpectYdbUsage({"--host", "h:1", "--bogus"}, "--bogus");
  ExpectYdbUsage({"--host", "h:1", "--bogus", "1"}, "--bogus");
  ExpectYdbUsage({"--host", "h:1", "--port", "2137"}, "--port");
  ExpectYdbUsage({"--host", "h:1", "--conn", "shared"}, "--conn");
  ExpectYdbUsage({"--host", "h:1", "--target", "h:1"}, "--target");
  ExpectYdbUsage({"--host", "h:1", "--async", "--async-callback"}, "--async-callback");
  ExpectYdbUsage({"--host", "h:1", "--async", "--streaming"}, "--streaming");
  ExpectYdbUsage({"--host", "h:1", "--interval", "x"}, "--interval");
  ExpectYdbUsage({"--host", "h:1", "--interval", "0"}, "--interval");
  ExpectYdbUsage({"--host", "h:1", "--warmup", "-1"}, "--warmup");
  ExpectYdbUsage({"--host", "h:1", "extra"}, "extra");
}

void TestYdbTables() {
  int64_t lat[6] = {500, 1999, 2000, 2'999'999, 3000, 4001};  // ns: min, p50, p90, p99, p99.9, max
  auto r = rpclab::YdbRowOf(3, 12.5, lat);
  CHECK_EQ(r.inflight, 3);
  CHECK_EQ(r.p50, int64_t{1});  // truncated to µs, as YDB's duration_cast
  CHECK_EQ(r.p90, int64_t{2});
  CHECK_EQ(r.p99, int64_t{2999});
  CHECK_EQ(r.p99_9, int64_t{3});
  CHECK_EQ(r.p100, int64_t{4});

  std::vector<rpclab::YdbRow> rows = {{1, 1234.5, 10, 20, 30, 40, 50}, {12, 98765.432, 100, 200, 300, 4000, 123456}};
  CHECK_EQ(rpclab::YdbSummary(rows),
           std::string("\nBenchmark Results Summary:\n"
                       "Inflight | Throughput (req/s) | P50 (us) | P90 (us) | P99 (us) | P99.9 (us) | P100 (us)\n"
                       "---------+--------------------+----------+----------+----------+------------+----------\n"
                       "       1 |            1234.50 |       10 |       20 |       30 |         40 |        50\n"
                       "      12 |           98765.43 |      100 |      200 |      300 |       4000 |    123456\n"
                       "\n"));
  // A value wider than its header widens its column on every line.
  std::string wide = rpclab::YdbSummary({{1, 1, 1, 1, 1, 1, 1}, {2, 1e20, 1, 1, 1, 1, 1234567890123}});
  size_t first = wide.find('\n', 1) + 1;  // after the title
  size_t len = wide.find('\n', first) - first;
  for (size_t at = first; at < wide.size() - 1; at = wide.find('\n', at) + 1) {
    CHECK_EQ(wide.find('\n', at) - at, len);
  }
  CHECK_EQ(rpclab::YdbCsv(rows), std::string("\nCSV Results:\n"
                                             "inflight,throughput,p50,p90,p99,p99_9,p100\n"
                                             "1,1234.50,10,20,30,40,50\n"
                                             "12,98765.43,100,200,300,4000,123456\n"));
  CHECK_EQ(rpclab::YdbCsv({}), std::string("\nCSV Results:\ninflight,throughput,p50,p90,p99,p99_9,p100\n"));
  CHECK_EQ(rpclab::YdbWorkerTable({1.5, 2}), std::string("\nPer-Worker Throughput Statistics:\n"
                                                         "Worker ID | Throughput (req/s)\n"
                                                         "----------+-------------------\n"
                                                         "        0 |               1.50\n"
                                                         "        1 |               2.00\n"));
  CHECK_EQ(rpclab::YdbStepReport(0, 1'000'000'000, rpclab::YdbRow{}),
           std::string("Total requests: 0\nTotal time: 1000000 us\nNo successful requests\n"));
  CHECK_EQ(rpclab::YdbStepReport(25, 2'000'000'000, rows[0]),
           std::string("Total requests: 25\nTotal time: 2000000 us\nThroughput: 1234.50 req/s\n"
                       "Latency percentiles (us):\n  50th: 10\n  90th: 20\n  99th: 30\n  99.9th: 40\n  100th: 50\n"));
  CHECK_EQ(rpclab::YdbNagleLine(1), std::string("TCP_NODELAY is ENABLED (Nagle OFF)\n"));
  CHECK_EQ(rpclab::YdbNagleLine(0), std::string("TCP_NODELAY is DISABLED (Nagle ON)\n"));
  CHECK_EQ(rpclab::YdbNagleLine(-1), std::string("Failed to intercept descriptord and test for Nagle\n"));
}

}  // namespace

int main() {
  TestDurations();
  TestClientCli();
  TestSteps();
  TestHistogram();
  TestRecord();
  TestCheckedCode();
  TestYdbFlags();
  TestYdbTables();
  if (failures > 0) {
    std::fprintf(stderr, "rpclab-cpp-unittest: %d failures\n", failures);
    return 1;
  }
  std::printf("rpclab-cpp-unittest: ok\n");
  return 0;
}
