// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/blocked_filter.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace bloomery
