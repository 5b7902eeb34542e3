// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/blocked_filter.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "test_util.h"

namespace bloomery {
namespace {

using testing::DistinctInts;
using testing::WithinBinomialBound;

using K = testing::For<BlockedFilter>;

// Fills a filter planned for (n, p), then checks the FPR three ways: the measured rate over absent
// keys is within a binomial bound of the exact FPR of the filter's actual bits (EstimatedFpr), and
// that is within a few percent of what the planner promised.
void CheckFpr(uint64_t n, double fpr, bool concurrent) {
  BlockedFilter f = K::Make(K::Sized(n, fpr, concurrent));
  const uint64_t queries = std::max<uint64_t>(2'000'000, static_cast<uint64_t>(400 / fpr));
  const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
  const double measured = static_cast<double>(hits) / static_cast<double>(queries);
  const double actual = f.EstimatedFpr();
  MESSAGE("n=" << n << " p=" << fpr << " bits/key=" << f.plan().bits_per_key << " k=" << f.hashes()
               << " planned=" << f.plan().expected_fpr << " exact-now=" << actual
               << " measured=" << measured);
  CHECK(WithinBinomialBound(hits, queries, actual));
  CHECK(actual == doctest::Approx(f.plan().expected_fpr).epsilon(0.05));
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr, 6.0));
  CHECK(f.plan().expected_fpr <= fpr);
}

TEST_CASE("measured FPR is within a statistical bound of the planned FPR") {
  CheckFpr(200'000, 0.1, false);
  CheckFpr(200'000, 0.02, false);
  CheckFpr(200'000, 0.005, true);
  CheckFpr(100'000, 0.001, false);
  CheckFpr(100'000, 1e-4, false);
}

TEST_CASE("at 10 bits/key the measured FPR is <= 0.99%") {
  const uint64_t n = 1'000'000;
  BlockedFilter f = K::Make({.capacity = n, .bits = n * 10});
  CHECK(f.hashes() == 6);
  const uint64_t queries = 10'000'000;
  const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
  const double measured = static_cast<double>(hits) / queries;
  MESSAGE("10 bits/key, k=6: measured FPR " << measured * 100 << "%, predicted "
                                            << f.plan().expected_fpr * 100 << "%");
  CHECK(measured <= 0.0099);
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
}

TEST_CASE("EstimatedCount tracks the true count; FillRatio and Clear") {
  BlockedFilter f = K::Make(K::Sized(1'000'000, 0.01));
  CHECK(f.EstimatedCount() == 0.0);
  CHECK(f.EstimatedFpr() == 0.0);
  for (uint64_t n : {10'000u, 300'000u, 1'000'000u}) {
    f.Clear();
    f.InsertMany(std::span<const uint64_t>(DistinctInts(n, 0)));
    CHECK(f.EstimatedCount() == doctest::Approx(static_cast<double>(n)).epsilon(0.02));
  }
  CHECK(f.FillRatio() > 0.4);
  CHECK(f.FillRatio() < 0.6);
  f.Clear();
  CHECK(f.PopCount() == 0);
  CHECK_FALSE(f.MayContain(uint64_t{0}));
}

// (UnionWith, for every kind: filter_test.cc.)
TEST_CASE("IntersectWith keeps the common keys; incompatible filters are refused") {
  const FilterOptions o = K::Sized(100'000, 0.01);
  BlockedFilter a = K::Make(o);
  BlockedFilter b = K::Make(o);
  const std::vector<uint64_t> evens = DistinctInts(50'000, 0);
  a.InsertMany(evens);
  b.InsertMany(DistinctInts(50'000, 1));
  b.InsertMany(std::span<const uint64_t>(evens).first(1000));
  REQUIRE(a.IntersectWith(b).ok());
  for (size_t i = 0; i < 1000; ++i) REQUIRE(a.MayContain(evens[i]));
  // Most of the keys only `a` held are gone: what is left of them are false positives of `b`.
  CHECK(a.MayContainMany(std::span<const uint64_t>(evens).subspan(1000)) < 49'000 / 10);
  BlockedFilter d = K::Make(K::Sized(200'000, 0.01));
  CHECK(a.IntersectWith(d).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("explicit geometry: 2^30 bits and 6 hashes") {
  FilterOptions o;
  o.bits = uint64_t{1} << 30;
  o.hashes = 6;
  BlockedFilter f = K::Make(o);
  CHECK(f.bits() == uint64_t{1} << 30);
  CHECK(f.memory_bytes() == uint64_t{1} << 27);
  CHECK(f.hashes() == 6);
  CHECK(f.Insert("https://example.com/a"));
  CHECK_FALSE(f.Insert("https://example.com/a"));
  CHECK(f.MayContain("https://example.com/a"));
}

TEST_CASE("Create plans blocks that halve, for at most 1/256 more memory") {
  for (const Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    for (const uint64_t n : {1'000u, 123'457u, 10'000'000u}) {
      FilterOptions o = K::Sized(n, 0.01);
      o.layout = layout;
      const absl::StatusOr<Plan> exact = PlanFilter(o, layout);
      REQUIRE(exact.ok());
      const BlockedFilter f = K::Make(o);
      CAPTURE(LayoutName(layout));
      CAPTURE(n);
      CHECK(f.blocks() >= exact->blocks());
      CHECK(f.blocks() <= exact->blocks() + exact->blocks() / 256);
      CHECK(f.plan().expected_fpr <= exact->expected_fpr);
      if (exact->blocks() >= 512) {
        CHECK(f.blocks() % (std::bit_floor(exact->blocks()) >> 8) == 0);
      } else {
        CHECK(f.blocks() == exact->blocks());
      }
    }
  }
  // Explicit bits are kept exactly (a bits-and-hashes filter is what was asked for).
  CHECK(K::Make(K::Geometry(512 * 1001, 6)).blocks() == 1001);
}

// An over-sized filter (100x its keys) folded to its planned FPR: the smallest halving whose
// exact FPR is within it, every key kept, the very bits of a filter of that size given the same
// keys, and a next halving that would pass it.
TEST_CASE("FoldedTo: the smallest halving within the FPR, with the bits of a filter of that size") {
  for (const Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    CAPTURE(LayoutName(layout));
    FilterOptions o = K::Sized(2'000'000, 0.01);
    o.layout = layout;
    BlockedFilter f = K::Make(o);
    const std::vector<uint64_t> keys = DistinctInts(20'000, 7);
    f.InsertMany(keys);
    absl::StatusOr<BlockedFilter> folded = f.FoldedTo(0.01);
    REQUIRE_MESSAGE(folded.ok(), folded.status());
    CHECK(folded->layout() == f.layout());
    CHECK(folded->hashes() == f.hashes());
    CHECK(folded->seed() == f.seed());
    CHECK(folded->integer_hash() == f.integer_hash());
    CHECK(folded->blocks() < f.blocks() / 16);
    CHECK(f.blocks() % folded->blocks() == 0);
    CHECK(std::has_single_bit(f.blocks() / folded->blocks()));
    const double fpr = folded->EstimatedFpr();
    MESSAGE(LayoutName(layout) << ": " << f.memory_bytes() << " -> " << folded->memory_bytes()
                               << " bytes, FPR " << f.EstimatedFpr() << " -> " << fpr
                               << ", planned " << folded->planned_fpr() << " at "
                               << folded->capacity() << " keys");
    CHECK(fpr <= 0.01);
    CHECK(folded->planned_fpr() <= 0.01);
    CHECK(folded->capacity() >= keys.size());
    CHECK(folded->capacity() <= f.capacity());
    CHECK(folded->MayContainMany(keys) == keys.size());
    // The same keys inserted into a filter of the folded size: the same bits.
    FilterOptions same = K::Geometry(folded->bits(), f.hashes());
    same.layout = layout;
    BlockedFilter direct = K::Make(same);
    direct.InsertMany(keys);
    CHECK(testing::Bytes(direct) == testing::Bytes(*folded));
    // One more halving passes 0.01 (else the fold was not the smallest).
    if (folded->blocks() % 2 == 0) {
      FilterOptions half = K::Geometry(folded->bits() / 2, f.hashes());
      half.layout = layout;
      BlockedFilter smaller = K::Make(half);
      smaller.InsertMany(keys);
      CHECK(smaller.EstimatedFpr() > 0.01);
    }
    // It saves and loads as any filter (its header's planned FPR is its geometry's).
    absl::StatusOr<std::string> saved = folded->SaveToBytes();
    REQUIRE(saved.ok());
    absl::StatusOr<BlockedFilter> loaded = BlockedFilter::LoadFromBytes(*saved);
    REQUIRE_MESSAGE(loaded.ok(), loaded.status());
    CHECK(testing::Bytes(*loaded) == testing::Bytes(*folded));
    // The memory options are the caller's.
    absl::StatusOr<BlockedFilter> shared = f.FoldedTo(0.01, {.concurrent = true});
    REQUIRE(shared.ok());
    CHECK(shared->concurrent());
    CHECK(testing::Bytes(*shared) == testing::Bytes(*folded));
  }
}

TEST_CASE("FoldedTo: no halving within the FPR gives a copy; what cannot fold says why") {
  BlockedFilter f = K::Make(K::Sized(100'000, 0.01));
  f.InsertMany(DistinctInts(100'000, 3));
  const double now = f.EstimatedFpr();
  absl::StatusOr<BlockedFilter> same = f.FoldedTo(now * 1.01);
  REQUIRE(same.ok());
  CHECK(same->blocks() == f.blocks());
  CHECK(testing::Bytes(*same) == testing::Bytes(f));
  CHECK(same->planned_fpr() <= now * 1.01);

  absl::StatusOr<BlockedFilter> above = f.FoldedTo(now / 2);
  CHECK(above.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(above.status().message(), "already"));
  for (const double bad : {0.0, 1.0, -0.5, std::numeric_limits<double>::quiet_NaN()}) {
    CHECK(f.FoldedTo(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
  BlockedFilter odd = K::Make(K::Geometry(512 * 1001, 6));
  absl::StatusOr<BlockedFilter> refused = odd.FoldedTo(0.5);
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(refused.status().message(), "1001 blocks cannot halve"));
  // An empty filter folds as far as its blocks halve.
  const BlockedFilter empty = K::Make(K::Sized(1'000'000, 0.01));
  absl::StatusOr<BlockedFilter> tiny = empty.FoldedTo(0.01);
  REQUIRE(tiny.ok());
  CHECK(tiny->blocks() % 2 == 1);
  CHECK(tiny->EstimatedFpr() == 0.0);
}

}  // namespace
}  // namespace bloomery
