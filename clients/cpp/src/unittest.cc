// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// Unit tests of the client's parts without gRPC: Go durations, flags (bad
// ones name the flag), the histogram's layout, statistics and encoding, and
// record helpers. Run: clients/cpp/build/rpclab-cpp-unittest (exit 0 = pass).
// The encoding is also checked from Go (clients/conformance: checkHistograms).

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "flags.h"
#include "hdr.h"
#include "record.h"

namespace {

int failures = 0;

std::string Str(const std::string& s) { return s; }
template <typename T>
std::string Str(T v) {
  return std::to_string(v);
}

#define CHECK_EQ(got, want)                                                                        \
  do {                                                                                             \
    auto g_ = (got);                                                                               \
    auto w_ = (want);                                                                              \
    if (!(g_ == w_)) {                                                                             \
      failures++;                                                                                  \
      std::fprintf(stderr, "%s:%d: %s: got %s, want %s\n", __FILE__, __LINE__, #got,               \
                   Str(g_).c_str(), Str(w_).c_str());                        \
    }                                                                                              \
  } while (0)

void TestDurations() {
  struct {
    const char* in;
    long long want;  // -1: an error
  } cases[] = {
      {"0", 0}, {"0s", 0}, {"300ms", 300'000'000}, {"1m0s", 60'000'000'000}, {"1.5s", 1'500'000'000},
      {"2h45m", 9'900'000'000'000}, {"250us", 250'000}, {"s", -1}, {"5", -1}, {"", -1}, {"-1s", -1}, {"1.2.3s", -1},
  };
  for (const auto& c : cases) {
    long long got;
    try {
      got = rpclab::ParseGoDuration("--warmup", c.in);
    } catch (const rpclab::Usage& u) {
      got = -1;
      if (u.flag != "--warmup") failures++;
    }
    if (got != c.want) {
      failures++;
      std::fprintf(stderr, "ParseGoDuration(\"%s\"): got %lld, want %lld\n", c.in, got, c.want);
    }
  }
}

void TestBadFlags() {
  struct {
    std::vector<std::string> args;
    const char* flag;
  } cases[] = {
      {{"--target", "h:1", "--inflight", "x"}, "--inflight"},
      {{"--inflight", "1"}, "--target"},
      {{"--target", "h:1", "--conn", "bogus"}, "--conn"},
      {{"--target", "h:1", "--conn", "pool:0"}, "--conn"},
      {{"--target", "h:1", "--conn", "shared:2"}, "--conn"},
      {{"--target", "h:1", "--rpc", "bidi"}, "--rpc"},
      {{"--target", "h:1", "--interval", "0s"}, "--interval"},
      {{"--target", "h:1", "--bogus", "1"}, "--bogus"},
      {{"--target", "h:1", "--inflight", "0"}, "--inflight"},
      {{"--target", "h:1", "--inflight", "1", "--max-inflight", "4"}, "--inflight"},
      {{"--target", "h:1", "--warmup"}, "--warmup"},
  };
  for (const auto& c : cases) {
    try {
      rpclab::Flags::Parse(c.args);
      failures++;
      std::fprintf(stderr, "%s...: parsed, want an error naming %s\n", c.args[0].c_str(), c.flag);
    } catch (const rpclab::Usage& u) {
      if (u.flag != c.flag) {
        failures++;
        std::fprintf(stderr, "got an error naming %s (%s), want %s\n", u.flag.c_str(), u.what(), c.flag);
      }
    }
  }
  auto f = rpclab::Flags::Parse({"--target", "127.0.0.1:1", "--min-inflight", "2", "--max-inflight", "8", "--step",
                                 "3", "--conn", "shared,pool:4,per-worker", "--rpc=unary,streaming"});
  CHECK_EQ(f.inflight.size(), size_t{3});
  CHECK_EQ(f.inflight[2], 8);
  CHECK_EQ(f.conns.size(), size_t{3});
  CHECK_EQ(f.conns[1].Conns(32), 4);
  CHECK_EQ(f.conns[2].Conns(32), 32);
  CHECK_EQ(f.rpcs.size(), size_t{2});
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
  h.Record(0);                 // clamped to 1
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

void TestRecord() {
  CHECK_EQ(rpclab::JsonString("a\"b\\\n\x01"), std::string("\"a\\\"b\\\\\\n\\u0001\""));
  auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1'795'388'462));
  CHECK_EQ(rpclab::Rfc3339(t), std::string("2026-11-22T23:01:02.000000000Z"));
  CHECK_EQ(rpclab::CpuList("0-2,5").size(), size_t{4});
  CHECK_EQ(rpclab::CpuList("x").size(), size_t{0});
}

}  // namespace

int main() {
  TestDurations();
  TestBadFlags();
  TestHistogram();
  TestRecord();
  if (failures > 0) {
    std::fprintf(stderr, "rpclab-cpp-unittest: %d failures\n", failures);
    return 1;
  }
  std::printf("rpclab-cpp-unittest: ok\n");
  return 0;
}
