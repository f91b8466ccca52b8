// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Unit tests of the client's parts without gRPC: durations, the command
// line, steps files (bad ones name the line and field), the histogram's layout, statistics and encoding,
// and record helpers, YDB mode's command line and tables. GoogleTest: ctest runs each test, or
// clients/cpp/build/rpclab-cpp-unittest all. The encoding is also checked from Go (clients/conformance:
// checkHistograms).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flags.h"
#include "hdr.h"
#include "record.h"
#include "ydb.h"

namespace {

// A failure with a printf-style message, at the caller's line.
std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}
#define FAILF(...) ADD_FAILURE() << Format(__VA_ARGS__)

// Durations as AddDuration (CLI11's AsNumberWithUnit) reads them, in ns.
TEST(CppClient, Durations) {
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
        FAILF("AddDuration(\"%s\"): error %s does not name --warmup\n", c.in, e.what());
      }
    }
    if (got != c.want) {
      FAILF("AddDuration(\"%s\"): got %lld, want %lld\n", c.in, got, c.want);
    }
  }
}

// rpclab-client's command line: --steps FILE, --rpc-timeout and
// --channelz-port (a TCP port); anything else (the human flags of old
// among it) is CLI11's error.
TEST(CppClient, ClientCli) {
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
      {{"--steps", "s.jsonl", "--channelz-port", "50600"}, true},
      {{"--steps", "s.jsonl", "--channelz-port", "0"}, false},
      {{"--steps", "s.jsonl", "--channelz-port", "65536"}, false},
      {{"--steps", "s.jsonl", "--channelz-port", "x"}, false},
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
      FAILF("ClientCli(%s): parsed %d, want %d\n", joined.c_str(), ok, c.ok);
    }
  }
  rpclab::ClientCli cli;
  cli.app.parse(std::vector<std::string>{"50ms", "--rpc-timeout", "s.jsonl", "--steps"});
  EXPECT_EQ(cli.steps_file, std::string("s.jsonl"));
  EXPECT_EQ(rpclab::Nanos(cli.rpc_timeout_s), int64_t{50'000'000});
  EXPECT_EQ(cli.channelz_port, 0);  // off unless asked for
  try {
    rpclab::ClientCli().app.parse(std::vector<std::string>{"--help"});
    FAILF("ClientCli(--help): parsed, want CallForHelp\n");
  } catch (const CLI::CallForHelp&) {
  }
  std::string help = cli.app.help();
  for (const char* want : {"--steps", "--rpc-timeout", "--channelz-port", "rpclab sweep --client cpp",
                           "schema/step.schema.json", "Exit codes"}) {
    if (help.find(want) == std::string::npos) {
      FAILF("--help lacks %s:\n%s\n", want, help.c_str());
    }
  }
  try {
    cli.steps_file = "/nonexistent/s.jsonl";
    cli.ToPlan();
    FAILF("ToPlan(/nonexistent/s.jsonl): read, want an error naming --steps\n");
  } catch (const rpclab::Usage& u) {
    EXPECT_EQ(u.flag, std::string("--steps"));
  }
}

// A steps file: a good one reads into typed steps; each bad case names its
// line and field.
TEST(CppClient, Steps) {
  auto steps = rpclab::ReadSteps(
      "s.jsonl",
      R"({"target":"127.0.0.1:50051","service":"benchmark","rpc":"unary","conn":"shared","inflight":4,"payload_bytes":0,"warmup_ns":1000000000,"interval_ns":3000000000,"client_cpus":[0,1],"out":"/tmp/a.jsonl"})"
      "\n\n"
      R"({"target":"h:2","service":"benchmark","rpc":"streaming","conn":"pool:4:least-loaded","inflight":8,"payload_bytes":1024,"warmup_ns":0,"interval_ns":1,"out":"b.jsonl"})"
      "\n");
  EXPECT_EQ(steps.size(), size_t{2});
  EXPECT_EQ(steps[0].target, std::string("127.0.0.1:50051"));
  EXPECT_EQ(steps[0].inflight, 4);
  EXPECT_EQ(steps[0].interval_ns, int64_t{3'000'000'000});
  EXPECT_EQ(steps[0].client_cpus.size(), size_t{2});
  EXPECT_EQ(steps[0].out, std::string("/tmp/a.jsonl"));
  EXPECT_EQ(steps[1].rpc, std::string("streaming"));
  EXPECT_EQ(steps[1].conn.Conns(8), 4);
  EXPECT_EQ(steps[1].conn.least_loaded, true);
  EXPECT_EQ(steps[1].payload, int64_t{1024});
  EXPECT_EQ(steps[1].client_cpus.size(), size_t{0});

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
      FAILF("ReadSteps(%s): read, want an error with %s\n", c.line.c_str(), c.want);
    } catch (const rpclab::Usage& u) {
      std::string msg = u.what();
      if (msg.rfind(where, 0) != 0 || msg.find(c.want) == std::string::npos) {
        FAILF("ReadSteps(%s): got %s, want %s naming %s\n", c.line.c_str(), u.what(), where.c_str(), c.want);
      }
    }
  }
}

TEST(CppClient, Histogram) {
  using rpclab::Histogram;
  // HdrHistogram's layout for 1..1e11 ns at 3 digits: 28 half-buckets of 1024.
  EXPECT_EQ(Histogram::CountsLen(), 28 * 1024);
  EXPECT_EQ(Histogram::CountsIndex(1), 1);
  EXPECT_EQ(Histogram::CountsIndex(2047), 2047);
  EXPECT_EQ(Histogram::CountsIndex(2048), 2048);  // first of bucket 1: unit 2
  EXPECT_EQ(Histogram::CountsIndex(2049), 2048);
  EXPECT_EQ(Histogram::ValueFromIndex(2049), int64_t{2050});
  EXPECT_EQ(Histogram::HighestEquivalent(2048), int64_t{2049});
  EXPECT_EQ(Histogram::LowestEquivalent(123'500), int64_t{123'456});
  EXPECT_EQ(Histogram::HighestEquivalent(123'500), int64_t{123'519});
  for (int64_t v : {int64_t{1}, int64_t{999}, int64_t{30'000}, int64_t{2'000'000}, int64_t{99'999'999'999}}) {
    int64_t lo = Histogram::LowestEquivalent(v), hi = Histogram::HighestEquivalent(v);
    if (!(lo <= v && v <= hi && Histogram::CountsIndex(lo) == Histogram::CountsIndex(hi) &&
          Histogram::CountsIndex(hi + 1) == Histogram::CountsIndex(v) + 1 && (hi - lo + 1) * 1000 <= v * 2 + 2000)) {
      FAILF("equivalent range of %lld: [%lld, %lld]\n", (long long)v, (long long)lo, (long long)hi);
    }
  }

  Histogram h;
  EXPECT_EQ(h.Max(), int64_t{0});
  EXPECT_EQ(h.ValueAtPercentile(99), int64_t{0});
  for (int i = 1; i <= 100; i++) h.Record(i * 1000);  // 1 µs .. 100 µs
  EXPECT_EQ(h.TotalCount(), int64_t{100});
  EXPECT_EQ(h.Min(), int64_t{1000});
  EXPECT_EQ(h.ValueAtPercentile(50), Histogram::HighestEquivalent(50'000));
  EXPECT_EQ(h.ValueAtPercentile(99), Histogram::HighestEquivalent(99'000));
  EXPECT_EQ(h.ValueAtPercentile(100), Histogram::HighestEquivalent(100'000));
  EXPECT_EQ(h.Max(), Histogram::HighestEquivalent(100'000));
  h.Record(0);                  // clamped to 1
  h.Record(1'000'000'000'000);  // clamped to 100 s
  EXPECT_EQ(h.Min(), int64_t{1});
  EXPECT_EQ(h.Max(), Histogram::HighestEquivalent(Histogram::kHighest));

  std::string enc = h.Encode();
  if (enc.rfind("HISTFAAA", 0) != 0) {
    FAILF("encoding starts %s, want HISTFAAA\n", enc.substr(0, 12).c_str());
  }
  std::vector<int64_t> counts;
  if (!rpclab::DecodeForTest(enc, &counts)) {
    FAILF("encoding does not decode\n");
  } else {
    int64_t total = 0;
    for (int64_t c : counts) total += c;
    EXPECT_EQ(total, int64_t{102});
    EXPECT_EQ(counts[Histogram::CountsIndex(50'000)], int64_t{1});
  }
  Histogram empty;
  EXPECT_TRUE(rpclab::DecodeForTest(empty.Encode(), &counts)) << "the empty histogram's encoding does not decode";

  Histogram merged;
  merged.Merge(h);
  merged.Merge(h);
  EXPECT_EQ(merged.TotalCount(), int64_t{204});
  EXPECT_EQ(rpclab::Base64("ab"), std::string("YWI="));
}

// CheckedCode: only CANCELLED, with a deadline, at or past it, becomes
// DEADLINE_EXCEEDED.
TEST(CppClient, CheckedCode) {
  EXPECT_EQ(rpclab::CheckedCode(1, true, true), 4);
  EXPECT_EQ(rpclab::CheckedCode(1, true, false), 1);
  EXPECT_EQ(rpclab::CheckedCode(1, false, true), 1);
  EXPECT_EQ(rpclab::CheckedCode(0, true, true), 0);
  EXPECT_EQ(rpclab::CheckedCode(14, true, true), 14);
  EXPECT_EQ(std::string(rpclab::kCodeNames[1]), std::string("Canceled"));
  EXPECT_EQ(std::string(rpclab::kCodeNames[4]), std::string("DeadlineExceeded"));
}

TEST(CppClient, Record) {
  // The record as the JSON library writes it: escaped, the step's pin in env.
  rpclab::Record r;
  r.step.target = "h:1";
  r.step.inflight = 4;
  r.step.client_cpus = {3};
  r.Fail("a\"b\\\n\x01");
  rpclab::Env env;
  env.client_cpus = {0, 1};
  auto j = nlohmann::json::parse(r.Json(env));
  EXPECT_EQ(j["error"].get<std::string>(), std::string("a\"b\\\n\x01"));
  EXPECT_EQ(j["spec"]["conns_requested"].get<int>(), 1);
  EXPECT_EQ(j["spec"].contains("service"), false);
  EXPECT_EQ(j["env"]["client_cpus"].size(), size_t{1});
  EXPECT_EQ(j["env"]["client_cpus"][0].get<int>(), 3);
  EXPECT_EQ(j["status"].get<std::string>(), std::string("failed"));
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1'795'388'462));
  EXPECT_EQ(rpclab::Rfc3339(t), std::string("2026-11-22T23:01:02.000000000Z"));
  EXPECT_EQ(rpclab::CpuList("0-2,5").size(), size_t{4});
  EXPECT_EQ(rpclab::CpuList("x").size(), size_t{0});
}

// A YDB command line that must fail, and the flag its error must name.
void ExpectYdbUsage(const std::vector<std::string>& args, const std::string& flag) {
  std::string joined;
  for (const auto& a : args) joined += a + " ";
  try {
    rpclab::YdbFlags::Parse(args);
    FAILF("YdbFlags::Parse(%s): parsed, want an error naming %s\n", joined.c_str(), flag.c_str());
  } catch (const rpclab::Usage& u) {
    if (u.flag != flag) {
      FAILF("YdbFlags::Parse(%s): error names %s (%s), want %s\n", joined.c_str(), u.flag.c_str(), u.what(),
            flag.c_str());
    }
  }
}

TEST(CppClient, YdbFlags) {
  // The blog's command, verbatim.
  auto f = rpclab::YdbFlags::Parse({"--host", "localhost:2137", "--min-inflight", "1", "--max-inflight", "48",
                                    "--warmup", "5", "--interval", "10", "--with-csv", "--local-pool"});
  EXPECT_EQ(f.inflight.size(), size_t{48});
  EXPECT_EQ(f.inflight.front(), 1);
  EXPECT_EQ(f.inflight[4], 5);
  EXPECT_EQ(f.inflight.back(), 48);
  EXPECT_EQ(f.warmup_ns, int64_t{5'000'000'000});
  EXPECT_EQ(f.interval_ns, int64_t{10'000'000'000});
  EXPECT_EQ(f.with_csv, true);
  EXPECT_EQ(f.local_pool, true);
  EXPECT_EQ(f.streaming, false);
  EXPECT_EQ(f.per_worker_stats, false);
  EXPECT_EQ(f.api == rpclab::YdbApi::kSync, true);
  EXPECT_EQ(f.hosts.size(), size_t{1});
  EXPECT_EQ(f.hosts[0], std::string("localhost:2137"));
  EXPECT_EQ(f.max_channels, 48);  // YDB's default: the largest in-flight
  EXPECT_EQ(f.Channels(7), 7);
  EXPECT_EQ(f.Spec().target, std::string("localhost:2137"));
  EXPECT_EQ(f.Spec().rpc, std::string("unary"));

  // YDB's defaults.
  f = rpclab::YdbFlags::Parse({"--host", "h:1"});
  EXPECT_EQ(f.inflight.size(), size_t{1});
  EXPECT_EQ(f.inflight[0], 32);
  EXPECT_EQ(f.interval_ns, int64_t{10'000'000'000});
  EXPECT_EQ(f.warmup_ns, int64_t{1'000'000'000});
  EXPECT_EQ(f.max_channels, 32);
  EXPECT_EQ(f.with_csv, false);
  f = rpclab::YdbFlags::Parse({"--with-csv"});
  EXPECT_EQ(f.hosts[0], std::string("localhost:2137"));
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--max-inflight", "4"});
  EXPECT_EQ(f.inflight.size(), size_t{4});
  EXPECT_EQ(f.inflight[0], 1);
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--min-inflight", "30"});
  EXPECT_EQ(f.inflight.size(), size_t{3});  // 30..32: YDB's --max-inflight default
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--min-inflight", "3", "--max-inflight", "3"});
  EXPECT_EQ(f.inflight.size(), size_t{1});

  // Hosts round-robin, channels, async clients, seconds and durations.
  f = rpclab::YdbFlags::Parse({"--host", "a:1,b:2,[::1]:3", "--inflight", "8", "--max-channels", "2", "--interval",
                               "0.5", "--warmup=300ms", "--streaming", "--per-worker-stats", "--out", "r.jsonl"});
  EXPECT_EQ(f.hosts.size(), size_t{3});
  EXPECT_EQ(f.hosts[1], std::string("b:2"));
  EXPECT_EQ(f.hosts[2], std::string("[::1]:3"));
  EXPECT_EQ(f.host_arg, std::string("a:1,b:2,[::1]:3"));
  EXPECT_EQ(f.inflight[0], 8);
  EXPECT_EQ(f.Channels(8), 2);
  EXPECT_EQ(f.Channels(1), 1);
  EXPECT_EQ(f.interval_ns, int64_t{500'000'000});
  EXPECT_EQ(f.warmup_ns, int64_t{300'000'000});
  EXPECT_EQ(f.streaming, true);
  EXPECT_EQ(f.per_worker_stats, true);
  EXPECT_EQ(f.out, std::string("r.jsonl"));
  EXPECT_EQ(f.Spec().rpc, std::string("streaming"));
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--inflight", "8", "--async", "--max-async-clients", "3"});
  EXPECT_EQ(f.api == rpclab::YdbApi::kAsync, true);
  EXPECT_EQ(f.AsyncClients(8), 3);
  EXPECT_EQ(f.AsyncClients(2), 2);
  f = rpclab::YdbFlags::Parse({"--host", "h:1", "--inflight", "5", "--async-callback"});
  EXPECT_EQ(f.api == rpclab::YdbApi::kCallback, true);
  EXPECT_EQ(f.AsyncClients(5), 5);  // YDB's auto: one per in-flight

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

TEST(CppClient, YdbTables) {
  int64_t lat[6] = {500, 1999, 2000, 2'999'999, 3000, 4001};  // ns: min, p50, p90, p99, p99.9, max
  auto r = rpclab::YdbRowOf(3, 12.5, lat);
  EXPECT_EQ(r.inflight, 3);
  EXPECT_EQ(r.p50, int64_t{1});  // truncated to µs, as YDB's duration_cast
  EXPECT_EQ(r.p90, int64_t{2});
  EXPECT_EQ(r.p99, int64_t{2999});
  EXPECT_EQ(r.p99_9, int64_t{3});
  EXPECT_EQ(r.p100, int64_t{4});

  std::vector<rpclab::YdbRow> rows = {{1, 1234.5, 10, 20, 30, 40, 50}, {12, 98765.432, 100, 200, 300, 4000, 123456}};
  EXPECT_EQ(rpclab::YdbSummary(rows),
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
    EXPECT_EQ(wide.find('\n', at) - at, len);
  }
  EXPECT_EQ(rpclab::YdbCsv(rows), std::string("\nCSV Results:\n"
                                              "inflight,throughput,p50,p90,p99,p99_9,p100\n"
                                              "1,1234.50,10,20,30,40,50\n"
                                              "12,98765.43,100,200,300,4000,123456\n"));
  EXPECT_EQ(rpclab::YdbCsv({}), std::string("\nCSV Results:\ninflight,throughput,p50,p90,p99,p99_9,p100\n"));
  EXPECT_EQ(rpclab::YdbWorkerTable({1.5, 2}), std::string("\nPer-Worker Throughput Statistics:\n"
                                                          "Worker ID | Throughput (req/s)\n"
                                                          "----------+-------------------\n"
                                                          "        0 |               1.50\n"
                                                          "        1 |               2.00\n"));
  EXPECT_EQ(rpclab::YdbStepReport(0, 1'000'000'000, rpclab::YdbRow{}),
            std::string("Total requests: 0\nTotal time: 1000000 us\nNo successful requests\n"));
  EXPECT_EQ(rpclab::YdbStepReport(25, 2'000'000'000, rows[0]),
            std::string("Total requests: 25\nTotal time: 2000000 us\nThroughput: 1234.50 req/s\n"
                        "Latency percentiles (us):\n  50th: 10\n  90th: 20\n  99th: 30\n  99.9th: 40\n  100th: 50\n"));
  EXPECT_EQ(rpclab::YdbNagleLine(1), std::string("TCP_NODELAY is ENABLED (Nagle OFF)\n"));
  EXPECT_EQ(rpclab::YdbNagleLine(0), std::string("TCP_NODELAY is DISABLED (Nagle ON)\n"));
  EXPECT_EQ(rpclab::YdbNagleLine(-1), std::string("Failed to intercept descriptord and test for Nagle\n"));
}

}  // namespace
