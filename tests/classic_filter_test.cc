// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/classic_filter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace bloomery {
namespace {

using testing::DistinctInts;
using testing::WithinBinomialBound;

using K = testing::For<ClassicFilter>;

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
      ClassicFilter f = K::Make(K::Geometry(kBits, k));
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

TEST_CASE("planned filters: measured FPR within a statistical bound of the plan, <= the target") {
  for (double fpr : {0.1, 0.01, 0.001, 1e-4}) {
    const uint64_t n = 200'000;
    ClassicFilter f = K::Make(K::Sized(n, fpr));
    CHECK(f.plan().layout == Layout::kPartitioned);
    CHECK(f.plan().expected_fpr <= fpr);
    CHECK(f.bits() % f.hashes() == 0);
    const uint64_t queries = std::max<uint64_t>(1'000'000, static_cast<uint64_t>(400 / fpr));
    const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
    MESSAGE("n=" << n << " p=" << fpr << " bits/key=" << f.plan().bits_per_key
                 << " k=" << f.hashes() << " planned=" << f.plan().expected_fpr << " exact-now="
                 << f.EstimatedFpr() << " measured=" << static_cast<double>(hits) / queries);
    CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
    CHECK(WithinBinomialBound(hits, queries, f.EstimatedFpr()));
    CHECK(f.EstimatedCount() == doctest::Approx(static_cast<double>(n)).epsilon(0.02));
  }
}

TEST_CASE("at 10 bits/key the classic layout beats the blocked one's 0.97%") {
  const uint64_t n = 1'000'000;
  ClassicFilter f = K::Make({.capacity = n, .bits = n * 10});
  const uint64_t queries = 10'000'000;
  const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
  MESSAGE("10 bits/key, k=" << f.hashes() << ": measured " << 100.0 * hits / queries
                            << "%, predicted " << 100 * f.plan().expected_fpr << "%");
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
  CHECK(static_cast<double>(hits) / queries < BlockedFpr(n, n * 10 / kBlockBits, 6));
}

TEST_CASE("bytes(): whole words, padding bits stay 0; Clear empties the filter") {
  ClassicFilter f = K::Make(K::Geometry(1000, 7));  // 1001 bits: 7 slices of 143
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

TEST_CASE("UnionWith refuses a filter of the same bits but another k") {
  // (What every kind's UnionWith does and refuses: filter_test.cc.)
  ClassicFilter a = K::Make(K::Sized(100'000, 0.01));
  ClassicFilter e = K::Make(K::Geometry(a.bits(), a.hashes() + 1));
  CHECK(a.CheckCompatible(e).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(a.UnionWith(e).code() == absl::StatusCode::kFailedPrecondition);
}

// As blocked_filter_test's: an over-sized filter folded to 1 %, the smallest halving within it,
// every key kept, the very bits of a filter of the folded size given the same keys.
TEST_CASE("FoldedTo halves every slice: the smallest fold within the FPR, bits as built") {
  const ClassicFilter f = [] {
    ClassicFilter filter = K::Make(K::Sized(2'000'000, 0.01));
    filter.InsertMany(DistinctInts(20'000, 11));
    return filter;
  }();
  const std::vector<uint64_t> keys = DistinctInts(20'000, 11);
  CHECK(f.slice_bits() % (std::bit_floor(f.slice_bits()) >> 8) == 0);  // Create's rounding
  absl::StatusOr<ClassicFilter> folded = f.FoldedTo(0.01);
  REQUIRE_MESSAGE(folded.ok(), folded.status());
  MESSAGE("classic: " << f.memory_bytes() << " -> " << folded->memory_bytes() << " bytes, FPR "
                      << folded->EstimatedFpr() << ", planned " << folded->planned_fpr() << " at "
                      << folded->capacity() << " keys");
  CHECK(folded->hashes() == f.hashes());
  CHECK(folded->slice_bits() * 16 < f.slice_bits());
  CHECK(f.slice_bits() % folded->slice_bits() == 0);
  CHECK(folded->EstimatedFpr() <= 0.01);
  CHECK(folded->planned_fpr() <= 0.01);
  CHECK(folded->capacity() >= keys.size());
  CHECK(folded->MayContainMany(keys) == keys.size());
  ClassicFilter direct = K::Make(K::Geometry(folded->bits(), f.hashes()));
  direct.InsertMany(keys);
  CHECK(testing::Bytes(direct) == testing::Bytes(*folded));
  if (folded->slice_bits() % 2 == 0) {
    ClassicFilter smaller = K::Make(K::Geometry(folded->bits() / 2, f.hashes()));
    smaller.InsertMany(keys);
    CHECK(smaller.EstimatedFpr() > 0.01);
  }
  absl::StatusOr<std::string> saved = folded->SaveToBytes();
  REQUIRE(saved.ok());
  absl::StatusOr<ClassicFilter> loaded = ClassicFilter::LoadFromBytes(*saved);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status());
  CHECK(testing::Bytes(*loaded) == testing::Bytes(*folded));
  // No halving within the FPR: a copy; an odd slice or an FPR already above: refused.
  ClassicFilter full = K::Make(K::Sized(100'000, 0.01));
  full.InsertMany(DistinctInts(100'000, 5));
  absl::StatusOr<ClassicFilter> same = full.FoldedTo(full.EstimatedFpr() * 1.01);
  REQUIRE(same.ok());
  CHECK(same->slice_bits() == full.slice_bits());
  CHECK(testing::Bytes(*same) == testing::Bytes(full));
  CHECK(folded->FoldedTo(folded->EstimatedFpr() / 2).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  const ClassicFilter odd = K::Make(K::Geometry(7 * 1001, 7));
  CHECK(odd.slice_bits() == 1001);
  CHECK(odd.FoldedTo(0.5).status().code() == absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bloomery
