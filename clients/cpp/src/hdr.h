// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// A log-linear histogram with HdrHistogram's exact bucket layout, fixed to
// rpclab's geometry (1 ns .. 100 s, 3 significant digits), and its standard
// V2 compressed base64 encoding ("HISTFAAA..."). Debian has no C or C++
// HdrHistogram; this holds only what rpclab needs: record, merge, the
// statistics HdrHistogram reports (computed the way hdrhistogram-go does, so
// a decoded record gives the same figures) and encode.
#ifndef RPCLAB_HDR_H_
#define RPCLAB_HDR_H_

#include <cstdint>
#include <string>
#include <vector>

namespace rpclab {

class Histogram {
 public:
  static constexpr int64_t kLowest = 1;
  static constexpr int64_t kHighest = 100'000'000'000;  // 100 s in ns
  static constexpr int kSigFigs = 3;

  Histogram();

  // Record adds v, clamped to [kLowest, kHighest].
  void Record(int64_t v) {
    if (v < kLowest) v = kLowest;
    if (v > kHighest) v = kHighest;
    counts_[CountsIndex(v)]++;
    total_++;
  }
  void Merge(const Histogram& o);

  int64_t TotalCount() const { return total_; }
  // As hdrhistogram-go: Min is the lowest equivalent value of the smallest
  // recorded bucket, Max the highest equivalent value of the largest, Mean
  // weights each bucket by its median equivalent value, and
  // ValueAtPercentile(p) is the highest equivalent value of the bucket where
  // the running count reaches round(p/100*total) (at least 1). All zero when
  // empty.
  int64_t Min() const;
  int64_t Max() const;
  double Mean() const;
  int64_t ValueAtPercentile(double p) const;

  // Encode returns the V2 compressed encoding, base64 ("HISTFAAA...").
  std::string Encode() const;

  // Layout helpers (exposed for tests).
  static int32_t CountsIndex(int64_t v);
  static int64_t ValueFromIndex(int32_t idx);
  static int64_t LowestEquivalent(int64_t v);
  static int64_t HighestEquivalent(int64_t v);
  static int32_t CountsLen();

 private:
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

// Base64 (standard alphabet, padded).
std::string Base64(const std::string& raw);

// Decodes Encode's output back into counts by index (for tests); false on a
// malformed input.
bool DecodeForTest(const std::string& b64, std::vector<int64_t>* counts);

}  // namespace rpclab

#endif  // RPCLAB_HDR_H_
