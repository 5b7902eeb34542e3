// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/classic_filter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace bloomery {
namespace {

using testing::DistinctInts;
using testing::DistinctStrings;
using testing::WithinBinomialBound;

constexpr auto MakeFilter = testing::MakeOrFail<ClassicFilter, FilterOptions>;

FilterOptions Geometry(uint64_t bits, uint32_t hashes, bool concurrent = false) {
  return testing::Geometry<ClassicFilter>(bits, hashes, concurrent);
}

FilterOptions Sized(uint64_t capacity, double fpr, bool concurrent = false) {
  return testing::Sized<ClassicFilter>(capacity, fpr, concurrent);
}

// The classic table (Fan, Cao, Almeida, Broder 2000, table 1; also the Wisconsin "Bloom filters -
// the math" page): rows m/n, columns k = 1..8. Every cell is built and measured: the measured FPR
// must be within a binomial bound of the exact partitioned formula and of the textbook standard
// formula, and in each row the k nearest m/n * ln 2 must measure the lowest FPR, within noise.
TEST_CASE("reproduces the classic FPR table: rows m/n = 2..32, columns k = 1..8") {
  constexpr uint64_t kBits = uint64_t{1} << 20;
  constexpr uint64_t kQueries = 1'000'000;
  constexpr uint32_t kMaxK = 8;
  const std::vector<uint64_t> queries = DistinctInts(kQueries, 1);
  for (uint32_t ratio : {2u, 4u, 6u, 8u, 10u, 12u, 16u, 20u, 24u, 32u}) {
    const uint64_t n = kBits / ratio;
    const std::vector<uint64_t> keys = DistinctInts(n, 0);
    uint64_t hits[kMaxK + 1] = {};
    double exact[kMaxK + 1] = {};
    std::ostringstream row;
    row << "m/n=" << ratio << ":";
    for (uint32_t k = 1; k <= kMaxK; ++k) {
      CAPTURE(ratio);
      CAPTURE(k);
      ClassicFilter f = MakeFilter(Geometry(kBits, k));
      REQUIRE(f.bits() >= kBits);
      REQUIRE(f.bits() < kBits + k);
      f.InsertMany(std::span<const uint64_t>(keys));
      hits[k] = f.MayContainMany(std::span<const uint64_t>(queries));
      exact[k] = PartitionedFpr(static_cast<double>(n), static_cast<double>(f.bits()), k);
      const double standard = StandardFpr(static_cast<double>(n), static_cast<double>(f.bits()), k);
      row << " k" << k << " " << static_cast<double>(hits[k]) / kQueries << " (" << standard << ")";
      CHECK(WithinBinomialBound(hits[k], kQueries, exact[k]));
      CHECK(WithinBinomialBound(hits[k], kQueries, standard));
      // The filter's own bits give its exact FPR; the queries must agree with that too.
      CHECK(WithinBinomialBound(hits[k], kQueries, f.EstimatedFpr()));
    }
    MESSAGE(row.str());
    // The best integer k by the formula is next to m/n * ln 2 (or 8, the last column).
    const uint32_t best_by_formula =
        static_cast<uint32_t>(std::min_element(exact + 1, exact + kMaxK + 1) - exact);
    const double optimal = OptimalHashes(ratio);
    CHECK(best_by_formula >= std::min<double>(kMaxK, std::floor(optimal)));
    CHECK(best_by_formula <= std::min<double>(kMaxK, std::ceil(optimal)));
    // ... and it measures the lowest FPR of the row, up to the noise of two Poisson counts.
    const uint64_t lowest = *std::min_element(hits + 1, hits + kMaxK + 1);
    const double noise = 5.0 * std::sqrt(static_cast<double>(hits[best_by_formula] + lowest)) + 1;
    CHECK(static_cast<double>(hits[best_by_formula] - lowest) <= noise);
  }
}

TEST_CASE("no false negatives: strings and integers, every k, both modes, single and batch") {
  for (bool concurrent : {false, true}) {
    for (uint32_t k = 1; k <= kMaxHashes; ++k) {
      CAPTURE(concurrent);
      CAPTURE(k);
      ClassicFilter f = MakeFilter(Geometry(1 << 17, k, concurrent));
      const std::vector<std::string> strings = DistinctStrings(5000, "key-");
      const std::vector<uint64_t> ints = DistinctInts(5000, 0);
      for (const std::string& s : strings) f.Insert(s);
      f.InsertMany(std::span<const uint64_t>(ints));
      for (const std::string& s : strings) REQUIRE(f.MayContain(s));
      for (uint64_t i : ints) REQUIRE(f.MayContain(i));
      const std::vector<std::string_view> views(strings.begin(), strings.end());
      std::unique_ptr<bool[]> hits(new bool[views.size()]);
      CHECK(f.MayContainMany(std::span<const std::string_view>(views),
                             std::span<bool>(hits.get(), views.size())) == views.size());
      for (size_t i = 0; i < views.size(); ++i) REQUIRE(hits[i]);
    }
  }
}

TEST_CASE("Insert says whether the key was new; batch answers equal single-key answers") {
  for (bool concurrent : {false, true}) {
    CAPTURE(concurrent);
    ClassicFilter single = MakeFilter(Sized(10'000, 0.01, concurrent));
    ClassicFilter batch = MakeFilter(Sized(10'000, 0.01, concurrent));
    std::vector<uint64_t> keys = DistinctInts(10'000, 1);
    keys.insert(keys.end(), keys.begin(), keys.begin() + 500);  // duplicates, some in one batch
    keys.push_back(keys[3]);
    std::unique_ptr<bool[]> was_new(new bool[keys.size()]);
    const size_t added = batch.InsertMany(std::span<const uint64_t>(keys),
                                          std::span<bool>(was_new.get(), keys.size()));
    size_t single_added = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      const bool fresh = single.Insert(keys[i]);
      single_added += fresh;
      REQUIRE(fresh == was_new[i]);
    }
    CHECK(added == single_added);
    for (size_t i = 10'000; i < keys.size(); ++i) CHECK_FALSE(was_new[i]);
    CHECK(std::equal(single.bytes().begin(), single.bytes().end(), batch.bytes().begin()));
    // Lookups: batch and single agree key by key, on present and absent keys.
    const std::vector<uint64_t> probes = DistinctInts(20'000, 1);  // half inserted, half absent
    std::unique_ptr<bool[]> found(new bool[probes.size()]);
    const size_t hits = batch.MayContainMany(std::span<const uint64_t>(probes),
                                             std::span<bool>(found.get(), probes.size()));
    size_t single_hits = 0;
    for (size_t i = 0; i < probes.size(); ++i) {
      REQUIRE(found[i] == single.MayContain(probes[i]));
      single_hits += found[i];
    }
    CHECK(hits == single_hits);
  }
}

TEST_CASE("planned filters: measured FPR within a statistical bound of the plan, <= the target") {
  for (double fpr : {0.1, 0.01, 0.001, 1e-4}) {
    const uint64_t n = 200'000;
    ClassicFilter f = MakeFilter(Sized(n, fpr));
    CHECK(f.plan().layout == Layout::kPartitioned);
    CHECK(f.plan().expected_fpr <= fpr);
    CHECK(f.bits() % f.hashes() == 0);
    f.InsertMany(std::span<const uint64_t>(DistinctInts(n, 0)));
    const uint64_t queries = std::max<uint64_t>(1'000'000, static_cast<uint64_t>(400 / fpr));
    const size_t hits = f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, 1)));
    MESSAGE("n=" << n << " p=" << fpr << " bits/key=" << f.plan().bits_per_key
                 << " k=" << f.hashes() << " planned=" << f.plan().expected_fpr << " exact-now="
                 << f.EstimatedFpr() << " measured=" << static_cast<double>(hits) / queries);
    CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
    CHECK(WithinBinomialBound(hits, queries, f.EstimatedFpr()));
    CHECK(f.EstimatedCount() == doctest::Approx(static_cast<double>(n)).epsilon(0.02));
  }
}

TEST_CASE("at 10 bits/key the classic layout beats the blocked one's 0.97%") {
  FilterOptions o;
  const uint64_t n = 1'000'000;
  o.bits = n * 10;
  o.capacity = n;
  ClassicFilter f = MakeFilter(o);
  f.InsertMany(std::span<const uint64_t>(DistinctInts(n, 0)));
  const uint64_t queries = 10'000'000;
  const size_t hits = f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, 1)));
  MESSAGE("10 bits/key, k=" << f.hashes() << ": measured " << 100.0 * hits / queries
                            << "%, predicted " << 100 * f.plan().expected_fpr << "%");
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
  CHECK(static_cast<double>(hits) / queries < BlockedFpr(n, n * 10 / kBlockBits, 6));
}

TEST_CASE("bytes(): whole words, padding bits stay 0; Clear empties the filter") {
  ClassicFilter f = MakeFilter(Geometry(1000, 7));  // 1001 bits: 7 slices of 143
  CHECK(f.bits() == 1001);
  CHECK(f.slice_bits() == 143);
  CHECK(f.bytes().size() == 16 * 8);
  CHECK(f.memory_bytes() == 16 * 8);
  f.InsertMany(std::span<const uint64_t>(DistinctInts(2000, 0)));
  CHECK(f.PopCount() > 900);
  const auto* words = reinterpret_cast<const uint64_t*>(f.bytes().data());
  CHECK((words[15] >> (1001 - 15 * 64)) == 0);
  f.Clear();
  CHECK(f.PopCount() == 0);
  CHECK(f.EstimatedCount() == 0.0);
  CHECK(f.EstimatedFpr() == 0.0);
  CHECK_FALSE(f.MayContain(uint64_t{0}));
}

TEST_CASE("UnionWith equals building from all keys; incompatible filters are refused") {
  const FilterOptions o = Sized(100'000, 0.01);
  ClassicFilter a = MakeFilter(o);
  ClassicFilter b = MakeFilter(o);
  ClassicFilter all = MakeFilter(o);
  const std::vector<uint64_t> evens = DistinctInts(50'000, 0);
  const std::vector<uint64_t> odds = DistinctInts(50'000, 1);
  a.InsertMany(std::span<const uint64_t>(evens));
  b.InsertMany(std::span<const uint64_t>(odds));
  all.InsertMany(std::span<const uint64_t>(evens));
  all.InsertMany(std::span<const uint64_t>(odds));
  REQUIRE(a.UnionWith(b).ok());
  CHECK(std::equal(a.bytes().begin(), a.bytes().end(), all.bytes().begin()));
  for (uint64_t key : odds) REQUIRE(a.MayContain(key));

  // Other seeds and sizes are refused for every kind (filter_test.cc); here, another k.
  ClassicFilter e = MakeFilter(Geometry(a.bits(), a.hashes() + 1));
  CHECK(a.CheckCompatible(e).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("concurrent inserts and lookups lose nothing" * doctest::test_suite("concurrency")) {
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 40'000;
  constexpr uint64_t kStride = 10'000;
  constexpr uint64_t kDistinct = kStride * (kThreads - 1) + kPerThread;
  // fpr 1e-6: a key that nobody was told is new would be a lost insert, not a false positive.
  ClassicFilter f = MakeFilter(Sized(kDistinct, 1e-6, /*concurrent=*/true));
  std::unique_ptr<std::atomic<int>[]> new_reports(new std::atomic<int>[kDistinct]);
  for (uint64_t i = 0; i < kDistinct; ++i) new_reports[i] = 0;
  // Lookups of a thread's own keys once their insert returned must all succeed; lookups of other
  // threads' keys race with their inserts and are only there to exercise that race (TSan).
  std::atomic<uint64_t> own_missing{0};
  std::atomic<uint64_t> racing_found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    // Thread t inserts [t * kStride, t * kStride + kPerThread): each key by 1..4 threads at once,
    // a third of them through the batch path.
    threads.emplace_back([&, t] {
      std::vector<uint64_t> batch;
      bool was_new[32];
      for (uint64_t key = t * kStride; key < t * kStride + kPerThread; ++key) {
        if (key % 3 == 0) {
          batch.push_back(key);
          if (batch.size() == 32) {
            f.InsertMany(std::span<const uint64_t>(batch), std::span<bool>(was_new));
            for (size_t i = 0; i < batch.size(); ++i) {
              new_reports[batch[i]] += was_new[i];
              own_missing += !f.MayContain(batch[i]);
            }
            batch.clear();
          }
        } else {
          new_reports[key] += f.Insert(key);
          own_missing += !f.MayContain(key);
        }
        racing_found += f.MayContain(key + kStride);
      }
      for (uint64_t key : batch) {
        new_reports[key] += f.Insert(key);
        own_missing += !f.MayContain(key);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(own_missing.load() == 0);  // a key is found once its own insert returned
  MESSAGE("racing lookups that found another thread's key: " << racing_found.load());
  uint64_t missing = 0;
  uint64_t nobody_told_new = 0;
  for (uint64_t key = 0; key < kDistinct; ++key) {
    missing += !f.MayContain(key);
    nobody_told_new += new_reports[key].load() == 0;
  }
  CHECK(missing == 0);
  CHECK(nobody_told_new == 0);
  CHECK(f.EstimatedCount() == doctest::Approx(static_cast<double>(kDistinct)).epsilon(0.02));
}

}  // namespace
}  // namespace bloomery
