// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// test_util.h: key generators and the statistical bound shared by the test suites.
#ifndef BLOOMERY_TESTS_TEST_UTIL_H_
#define BLOOMERY_TESTS_TEST_UTIL_H_

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "bloomery/filter_kind.h"

// Every filter kind of the list (bloomery/filter_kind.h), which TEST_CASE_TEMPLATE runs the
// properties (filter_test.cc) and the races (concurrency_test.cc) over: a new kind is in them by
// its row there, and the compiler names what it lacks. (Each row gives ", Name##Filter"; the
// first comma is dropped through one more expansion.)
#define BLOOMERY_TEST_KIND_CLASS(Name, number, name, summary) , Name##Filter
#define BLOOMERY_TEST_DROP_FIRST(first, ...) __VA_ARGS__
#define BLOOMERY_TEST_CALL(macro, ...) macro(__VA_ARGS__)
#define KINDS                                  \
  BLOOMERY_TEST_CALL(BLOOMERY_TEST_DROP_FIRST, \
                     ~BLOOMERY_FOR_EACH_FILTER_KIND(BLOOMERY_TEST_KIND_CLASS))

// 1 in a build under AddressSanitizer or ThreadSanitizer (gcc defines __SANITIZE_*__, clang
// answers __has_feature), whose shadow memory no address-space cap a test sets can hold.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BLOOMERY_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BLOOMERY_TEST_SANITIZED 1
#endif
#endif
#ifndef BLOOMERY_TEST_SANITIZED
#define BLOOMERY_TEST_SANITIZED 0
#endif

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

// Options of filter kind F (filter.h) for `capacity` keys at `fpr` (ScalableOptions: its first
// stage's). WindowedOptions: a key-count window whose newest
// generation alone holds `capacity` keys, so that nothing expires under the properties that every
// kind shares (windowed_filter_test.cc tests expiry).
template <typename F>
typename F::Options Sized(uint64_t capacity, double fpr, bool concurrent = false) {
  typename F::Options o;
  if constexpr (requires { o.generations; }) {
    o.capacity = capacity * o.generations;
  } else {
    o.capacity = capacity;
  }
  o.fpr = fpr;
  o.memory.concurrent = concurrent;
  return o;
}

// Options of filter kind F for an explicit geometry: `bits` and `hashes` probes per key.
template <typename F>
typename F::Options Geometry(uint64_t bits, uint32_t hashes, bool concurrent = false) {
  typename F::Options o;
  o.bits = bits;
  o.hashes = hashes;
  o.memory.concurrent = concurrent;
  return o;
}

// The state a filter reached: its bits or counters, a scalable chain's stages in order. Two
// filters given the same keys in the same order (one by one, in batches, merged) must agree on it.
template <typename F>
std::vector<uint8_t> Bytes(const F& f) {
  std::vector<uint8_t> bytes;
  if constexpr (requires { f.stage_count(); }) {
    for (uint32_t i = 0; i < f.stage_count(); ++i) {
      bytes.insert(bytes.end(), f.stage(i).bytes().begin(), f.stage(i).bytes().end());
    }
  } else {
    bytes.assign(f.bytes().begin(), f.bytes().end());
  }
  return bytes;
}

// Filter::Create(options), failing the test case if it does not succeed.
template <typename Filter, typename Options>
Filter MakeOrFail(const Options& options) {
  auto filter = Filter::Create(options);
  REQUIRE(filter.ok());
  return *std::move(filter);
}

// The helpers above bound to one kind, for the files that test that kind alone:
//   using K = testing::For<BlockedFilter>;
//   BlockedFilter f = K::Make(K::Sized(1000, 0.01));
template <typename F>
struct For {
  using Options = typename F::Options;
  static Options Sized(uint64_t capacity, double fpr, bool concurrent = false) {
    return testing::Sized<F>(capacity, fpr, concurrent);
  }
  static Options Geometry(uint64_t bits, uint32_t hashes, bool concurrent = false) {
    return testing::Geometry<F>(bits, hashes, concurrent);
  }
  static F Make(const Options& options) { return MakeOrFail<F>(options); }
};

// The sizing errors every filter sized by capacity, fpr, bits and hashes (FilterOptions,
// CountingOptions) must report with the right code and a message naming the field: capacity 0;
// fpr outside (0, 1) or NaN; hashes above `max_hashes`; bits that overflow every size
// computation; a size over the memory cap; a promise no filter of at most 2^48 bits can keep.
// `base` supplies kind-specific fields (e.g. a counter width).
template <typename Filter, typename Options>
void CheckSizingErrors(const Options& base, uint32_t max_hashes) {
  auto code = [](const Options& o) { return Filter::Create(o).status().code(); };
  auto message = [](const Options& o) { return std::string(Filter::Create(o).status().message()); };
  Options o = base;
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);  // capacity 0
  CHECK(message(o).find("capacity") != std::string::npos);
  o.capacity = 1000;
  for (double bad : {0.0, -1.0, 1.0, 2.0, std::numeric_limits<double>::quiet_NaN()}) {
    o.fpr = bad;
    CAPTURE(bad);
    CHECK(code(o) == absl::StatusCode::kInvalidArgument);
    CHECK(message(o).find("fpr") != std::string::npos);
  }
  o.fpr = 0.01;
  for (uint32_t bad = max_hashes + 1; bad <= 33; bad += bad < 17 ? 1 : 15) {  // .., 17, 32
    o.hashes = bad;
    CAPTURE(bad);
    CHECK(code(o) == absl::StatusCode::kInvalidArgument);
    CHECK(message(o).find("hashes") != std::string::npos);
  }
  o.hashes = 0;
  o.bits = ~uint64_t{0};  // would overflow every size computation
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  CHECK(message(o).find("bits") != std::string::npos);
  o.bits = uint64_t{1} << 33;
  o.memory.max_memory_bytes = uint64_t{1} << 29;  // 1 GiB needed, 512 MiB allowed
  CHECK(code(o) == absl::StatusCode::kResourceExhausted);
  CHECK(message(o).find("memory cap") != std::string::npos);
  Options huge = base;
  huge.capacity = uint64_t{1} << 62;
  huge.fpr = 1e-7;
  CHECK(code(huge) == absl::StatusCode::kResourceExhausted);
}

// `count` distinct integers: keys i*2 + offset (offset 0 or 1 gives disjoint sets).
inline std::vector<uint64_t> DistinctInts(uint64_t count, uint64_t offset) {
  std::vector<uint64_t> keys(count);
  for (uint64_t i = 0; i < count; ++i) keys[i] = i * 2 + offset;
  return keys;
}

// Two threads insert the same `keys`, in the same order, at once, each key by insert(key) (its
// "was new"): how many keys both threads were told were new, and how many neither was.
struct RacedInserts {
  uint64_t twice = 0;
  uint64_t never = 0;
};
template <typename Insert>
RacedInserts RaceSameKeys(const std::vector<uint64_t>& keys, const Insert& insert) {
  const size_t n = keys.size();
  std::unique_ptr<bool[]> was_new[2] = {std::make_unique<bool[]>(n), std::make_unique<bool[]>(n)};
  std::atomic<int> ready{0};
  auto run = [&](int t) {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (size_t i = 0; i < n; ++i) was_new[t][i] = insert(keys[i]);
  };
  std::thread a(run, 0);
  std::thread b(run, 1);
  a.join();
  b.join();
  RacedInserts raced;
  for (size_t i = 0; i < n; ++i) {
    raced.twice += was_new[0][i] && was_new[1][i];
    raced.never += !was_new[0][i] && !was_new[1][i];
  }
  return raced;
}

// Distinct strings "<prefix><i>".
inline std::vector<std::string> DistinctStrings(uint64_t count, const std::string& prefix) {
  std::vector<std::string> keys;
  keys.reserve(count);
  for (uint64_t i = 0; i < count; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// Inserts `keys` keys (0, 2, 4, ...), then looks up `queries` keys never inserted (1, 3, 5, ...):
// returns how many of those the filter took for present, its false positives.
template <typename F>
uint64_t FillAndCountFalsePositives(F& f, uint64_t keys, uint64_t queries) {
  f.InsertMany(DistinctInts(keys, 0));
  return f.MayContainMany(DistinctInts(queries, 1));
}

// Structured integer keys, where a multiplicative mix is weakest: inserts i << shift for i < keys
// (consecutive integers, or ids shifted into place), then looks up `queries` keys of the same
// shape that were not inserted, (keys + i) << shift (keys + queries < 2^22: none wraps for
// shift <= 42); returns how many of those the filter took for present.
template <typename F>
uint64_t StructuredFalsePositives(F& f, uint64_t keys, uint64_t queries, uint32_t shift) {
  std::vector<uint64_t> present(keys), absent(queries);
  for (uint64_t i = 0; i < keys; ++i) present[i] = i << shift;
  for (uint64_t i = 0; i < queries; ++i) absent[i] = (keys + i) << shift;
  f.InsertMany(present);
  REQUIRE(f.MayContainMany(present) == keys);
  return f.MayContainMany(absent);
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
