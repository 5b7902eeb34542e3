// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// test_util.h: key generators and the statistical bound shared by the test suites.
#ifndef BLOOMERY_TESTS_TEST_UTIL_H_
#define BLOOMERY_TESTS_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bloomery::testing {

// SplitMix64: a fixed-seed generator whose output is the same on every platform and library
// version (std::mt19937 is too, but its distributions are not).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

// Filter::Create(options), failing the test case if it does not succeed.
template <typename Filter, typename Options>
Filter MakeOrFail(const Options& options) {
  auto filter = Filter::Create(options);
  REQUIRE(filter.ok());
  return *std::move(filter);
}

// `count` distinct integers: keys i*2 + offset (offset 0 or 1 gives disjoint sets).
inline std::vector<uint64_t> DistinctInts(uint64_t count, uint64_t offset) {
  std::vector<uint64_t> keys(count);
  for (uint64_t i = 0; i < count; ++i) keys[i] = i * 2 + offset;
  return keys;
}

// Distinct strings "<prefix><i>".
inline std::vector<std::string> DistinctStrings(uint64_t count, const std::string& prefix) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (uint64_t i = 0; i < count; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// Whether `hits` out of `trials` is consistent with probability `p`: within `sigmas` binomial
// standard deviations (plus one count, so p ~ 0 does not demand exactly zero).
inline bool WithinBinomialBound(uint64_t hits, uint64_t trials, double p, double sigmas = 5.0) {
  const double mean = p * static_cast<double>(trials);
  const double sd = std::sqrt(static_cast<double>(trials) * p * (1 - p));
  return std::abs(static_cast<double>(hits) - mean) <= sigmas * sd + 1.0;
}

}  // namespace bloomery::testing

#endif  // BLOOMERY_TESTS_TEST_UTIL_H_
