// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "hdr.h"

#include <zlib.h>

#include <cmath>
#include <cstring>

namespace rpclab {
namespace {

// The layout HdrHistogram derives from (lowest 1, highest 1e11, 3 digits):
// 2 * 10^3 = 2000 values need single-unit resolution, so a bucket has
// 2^11 = 2048 sub-buckets, the upper half (1024) of which each bucket after
// the first adds; unit magnitude 0 (lowest = 1).
constexpr int kUnitMagnitude = 0;
constexpr int kSubBucketCountMagnitude = 11;
constexpr int kSubBucketHalfCountMagnitude = kSubBucketCountMagnitude - 1;
constexpr int64_t kSubBucketCount = int64_t{1} << kSubBucketCountMagnitude;
constexpr int64_t kSubBucketHalfCount = kSubBucketCount / 2;
constexpr int64_t kSubBucketMask = (kSubBucketCount - 1) << kUnitMagnitude;
constexpr int kLeadingZeroCountBase = 64 - kUnitMagnitude - kSubBucketHalfCountMagnitude - 1;

constexpr int BucketsNeeded(int64_t highest) {
  int64_t smallest_untrackable = kSubBucketCount << kUnitMagnitude;
  int n = 1;
  while (smallest_untrackable <= highest) {
    if (smallest_untrackable > INT64_MAX / 2) return n + 1;
    smallest_untrackable <<= 1;
    n++;
  }
  return n;
}
constexpr int kBucketCount = BucketsNeeded(Histogram::kHighest);
constexpr int32_t kCountsLen = (kBucketCount + 1) * kSubBucketHalfCount;

inline int BucketIndex(int64_t v) {
  return kLeadingZeroCountBase - __builtin_clzll(static_cast<uint64_t>(v | kSubBucketMask));
}
inline int64_t SubBucketIndex(int64_t v, int b) { return v >> (b + kUnitMagnitude); }

int64_t SizeOfEquivalentRange(int64_t v) {
  int b = BucketIndex(v);
  int64_t sb = SubBucketIndex(v, b);
  int adjusted = b + (sb >= kSubBucketCount ? 1 : 0);
  return int64_t{1} << (kUnitMagnitude + adjusted);
}

constexpr int32_t kEncodingCookie = 0x1c849303 | 0x10;            // V2, as every port writes it
constexpr int32_t kCompressedEncodingCookie = 0x1c849304 | 0x10;  // V2 compressed

void PutBE32(std::string* b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b->push_back(static_cast<char>((v >> s) & 0xff));
}
void PutBE64(std::string* b, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) b->push_back(static_cast<char>((v >> s) & 0xff));
}

// HdrHistogram's ZigZag LEB128 (at most 9 bytes, the ninth holding 8 bits).
void PutZigZag(std::string* b, int64_t v) {
  uint64_t u = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  for (int i = 0; i < 8; i++) {
    if (u >> 7 == 0) {
      b->push_back(static_cast<char>(u));
      return;
    }
    b->push_back(static_cast<char>((u & 0x7f) | 0x80));
    u >>= 7;
  }
  b->push_back(static_cast<char>(u));
}

}  // namespace

Histogram::Histogram() : counts_(kCountsLen, 0) {}

int32_t Histogram::CountsLen() { return kCountsLen; }

int32_t Histogram::CountsIndex(int64_t v) {
  int b = BucketIndex(v);
  int64_t sb = SubBucketIndex(v, b);
  return static_cast<int32_t>(((int64_t{b} + 1) << kSubBucketHalfCountMagnitude) + (sb - kSubBucketHalfCount));
}

int64_t Histogram::ValueFromIndex(int32_t idx) {
  int b = (idx >> kSubBucketHalfCountMagnitude) - 1;
  int64_t sb = (idx & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (b < 0) {
    sb -= kSubBucketHalfCount;
    b = 0;
  }
  return sb << (b + kUnitMagnitude);
}

int64_t Histogram::LowestEquivalent(int64_t v) {
  int b = BucketIndex(v);
  return SubBucketIndex(v, b) << (b + kUnitMagnitude);
}

int64_t Histogram::HighestEquivalent(int64_t v) { return LowestEquivalent(v) + SizeOfEquivalentRange(v) - 1; }

void Histogram::Merge(const Histogram& o) {
  for (int32_t i = 0; i < kCountsLen; i++) counts_[i] += o.counts_[i];
  total_ += o.total_;
}

int64_t Histogram::Min() const {
  for (int32_t i = 0; i < kCountsLen; i++) {
    if (counts_[i] != 0) return LowestEquivalent(ValueFromIndex(i));
  }
  return 0;
}

int64_t Histogram::Max() const {
  for (int32_t i = kCountsLen - 1; i >= 0; i--) {
    if (counts_[i] != 0) return HighestEquivalent(ValueFromIndex(i));
  }
  return 0;
}

double Histogram::Mean() const {
  if (total_ == 0) return 0;
  double mean = 0;
  const double total = static_cast<double>(total_);
  for (int32_t i = 0; i < kCountsLen; i++) {
    if (counts_[i] == 0) continue;
    int64_t v = ValueFromIndex(i);
    int64_t median = LowestEquivalent(v) + (SizeOfEquivalentRange(v) >> 1);
    mean += static_cast<double>(counts_[i]) * static_cast<double>(median) / total;
  }
  return mean;
}

int64_t Histogram::ValueAtPercentile(double p) const {
  if (total_ == 0) return 0;
  if (p > 100) p = 100;
  if (p < 0) p = 0;
  double rank = (p / 100) * static_cast<double>(total_) + 0.5;
  int64_t want;
  if (!(rank >= 1)) {
    want = 1;
  } else if (rank >= static_cast<double>(total_)) {
    want = total_;
  } else {
    want = static_cast<int64_t>(rank);
  }
  int64_t sum = 0;
  for (int32_t i = 0; i < kCountsLen; i++) {
    sum += counts_[i];
    if (sum >= want) {
      int64_t v = ValueFromIndex(i);
      return p == 0 ? LowestEquivalent(v) : HighestEquivalent(v);
    }
  }
  return 0;
}

std::string Histogram::Encode() const {
  // Counts up to the largest recorded value; runs of zeros as negative counts.
  std::string payload;
  int32_t limit = total_ == 0 ? 0 : CountsIndex(Max()) + 1;
  for (int32_t i = 0; i < limit;) {
    int64_t c = counts_[i++];
    if (c == 0) {
      int64_t zeros = 1;
      while (i < limit && counts_[i] == 0) {
        zeros++;
        i++;
      }
      PutZigZag(&payload, zeros > 1 ? -zeros : 0);
    } else {
      PutZigZag(&payload, c);
    }
  }
  std::string raw;
  PutBE32(&raw, kEncodingCookie);
  PutBE32(&raw, static_cast<uint32_t>(payload.size()));
  PutBE32(&raw, 0);  // normalizing index offset
  PutBE32(&raw, kSigFigs);
  PutBE64(&raw, kLowest);
  PutBE64(&raw, kHighest);
  double ratio = 1.0;
  uint64_t bits;
  std::memcpy(&bits, &ratio, sizeof bits);
  PutBE64(&raw, bits);
  raw += payload;

  uLongf zlen = compressBound(raw.size());
  std::string z(zlen, '\0');
  if (compress2(reinterpret_cast<Bytef*>(&z[0]), &zlen, reinterpret_cast<const Bytef*>(raw.data()), raw.size(),
                Z_BEST_COMPRESSION) != Z_OK) {
    return "";
  }
  z.resize(zlen);
  std::string out;
  PutBE32(&out, kCompressedEncodingCookie);
  PutBE32(&out, static_cast<uint32_t>(z.size()));
  out += z;
  return Base64(out);
}

std::string Base64(const std::string& raw) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < raw.size(); i += 3) {
    uint32_t n = (uint8_t(raw[i]) << 16) | (uint8_t(raw[i + 1]) << 8) | uint8_t(raw[i + 2]);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == raw.size()) {
    uint32_t n = uint8_t(raw[i]) << 16;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == raw.size()) {
    uint32_t n = (uint8_t(raw[i]) << 16) | (uint8_t(raw[i + 1]) << 8);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

bool DecodeForTest(const std::string& b64, std::vector<int64_t>* counts) {
  std::string raw;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : b64) {
    int v;
    if (ch >= 'A' && ch <= 'Z')
      v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      v = ch - '0' + 52;
    else if (ch == '+')
      v = 62;
    else if (ch == '/')
      v = 63;
    else if (ch == '=')
      break;
    else
      return false;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      raw.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  auto be32 = [](const std::string& s, size_t at) {
    return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
           (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
  };
  if (raw.size() < 8 || be32(raw, 0) != uint32_t(kCompressedEncodingCookie)) return false;
  uint32_t zlen = be32(raw, 4);
  if (raw.size() < 8 + size_t{zlen}) return false;
  std::string plain(40 + size_t{kCountsLen} * 9, '\0');
  uLongf plen = plain.size();
  if (uncompress(reinterpret_cast<Bytef*>(&plain[0]), &plen, reinterpret_cast<const Bytef*>(raw.data() + 8), zlen) !=
      Z_OK) {
    return false;
  }
  plain.resize(plen);
  if (plain.size() < 40 || be32(plain, 0) != uint32_t(kEncodingCookie) || be32(plain, 4) != plain.size() - 40) {
    return false;
  }
  counts->assign(kCountsLen, 0);
  size_t pos = 40;
  int64_t idx = 0;
  while (pos < plain.size()) {
    uint64_t u = 0;
    int shift = 0;
    for (int i = 0;; i++) {
      if (pos >= plain.size()) return false;
      uint8_t byte = plain[pos++];
      if (i == 8) {
        u |= uint64_t{byte} << 56;
        break;
      }
      u |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if (!(byte & 0x80)) break;
    }
    int64_t v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    if (v < 0) {
      idx += -v;
    } else {
      if (idx >= kCountsLen) return false;
      (*counts)[idx++] = v;
    }
  }
  return true;
}

}  // namespace rpclab
