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
using testing::DistinctStrings;
using testing::WithinBinomialBound;

constexpr auto MakeFilter = testing::MakeOrFail<BlockedFilter, FilterOptions>;

FilterOptions Sized(uint64_t capacity, double fpr, bool concurrent = false) {
  return testing::Sized<BlockedFilter>(capacity, fpr, concurrent);
}

TEST_CASE("no false negatives: strings and integers, every k, both modes, single and batch") {
  for (bool concurrent : {false, true}) {
    for (uint32_t k = 1; k <= 16; ++k) {
      CAPTURE(concurrent);
      CAPTURE(k);
      FilterOptions o;
      o.bits = 1 << 18;
      o.hashes = k;
      o.concurrent = concurrent;
      BlockedFilter f = MakeFilter(o);
      const std::vector<std::string> strings = DistinctStrings(5000, "key-");
      const std::vector<uint64_t> ints = DistinctInts(5000, 0);
      for (const std::string& s : strings) f.Insert(s);
      std::vector<std::string_view> views(strings.begin(), strings.end());
      f.InsertMany(std::span<const uint64_t>(ints));
      for (const std::string& s : strings) REQUIRE(f.MayContain(s));
      for (uint64_t i : ints) REQUIRE(f.MayContain(i));
      std::unique_ptr<bool[]> hits(new bool[views.size()]);
      CHECK(f.MayContainMany(std::span<const std::string_view>(views),
                             std::span<bool>(hits.get(), views.size())) == views.size());
      for (size_t i = 0; i < views.size(); ++i) REQUIRE(hits[i]);
    }
  }
}

TEST_CASE("Insert says whether the key was new; batch answers equal single-key answers") {
  BlockedFilter single = MakeFilter(Sized(10'000, 0.001));
  BlockedFilter batch = MakeFilter(Sized(10'000, 0.001));
  std::vector<uint64_t> keys = DistinctInts(10'000, 1);
  keys.insert(keys.end(), keys.begin(), keys.begin() + 500);  // duplicates, some inside one batch
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
  CHECK(added <= 10'000);
  CHECK(added >= 9'980);  // a few of the 10,000 distinct keys may be false positives (p = 0.1%)
  for (size_t i = 10'000; i < keys.size(); ++i) CHECK_FALSE(was_new[i]);
  CHECK(std::equal(single.bytes().begin(), single.bytes().end(), batch.bytes().begin()));
}

// Fills a filter planned for (n, p), then checks the FPR three ways: the measured rate over absent
// keys is within a binomial bound of the exact FPR of the filter's actual bits (EstimatedFpr), and
// that is within a few percent of what the planner promised.
void CheckFpr(uint64_t n, double fpr, bool concurrent) {
  BlockedFilter f = MakeFilter(Sized(n, fpr, concurrent));
  f.InsertMany(std::span<const uint64_t>(DistinctInts(n, 0)));
  const uint64_t queries = std::max<uint64_t>(2'000'000, static_cast<uint64_t>(400 / fpr));
  const size_t hits = f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, 1)));
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
  FilterOptions o;
  const uint64_t n = 1'000'000;
  o.bits = n * 10;
  o.capacity = n;
  BlockedFilter f = MakeFilter(o);
  CHECK(f.hashes() == 6);
  f.InsertMany(std::span<const uint64_t>(DistinctInts(n, 0)));
  const uint64_t queries = 10'000'000;
  const size_t hits = f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, 1)));
  const double measured = static_cast<double>(hits) / queries;
  MESSAGE("10 bits/key, k=6: measured FPR " << measured * 100 << "%, predicted "
                                            << f.plan().expected_fpr * 100 << "%");
  CHECK(measured <= 0.0099);
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr));
}

TEST_CASE("EstimatedCount tracks the true count; FillRatio and Clear") {
  BlockedFilter f = MakeFilter(Sized(1'000'000, 0.01));
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

TEST_CASE("UnionWith equals building from all keys; IntersectWith keeps common keys") {
  FilterOptions o = Sized(100'000, 0.01);
  BlockedFilter a = MakeFilter(o);
  BlockedFilter b = MakeFilter(o);
  BlockedFilter all = MakeFilter(o);
  const std::vector<uint64_t> evens = DistinctInts(50'000, 0);
  const std::vector<uint64_t> odds = DistinctInts(50'000, 1);
  a.InsertMany(std::span<const uint64_t>(evens));
  b.InsertMany(std::span<const uint64_t>(odds));
  b.InsertMany(std::span<const uint64_t>(evens.data(), 1000));
  all.InsertMany(std::span<const uint64_t>(evens));
  all.InsertMany(std::span<const uint64_t>(odds));
  BlockedFilter both = MakeFilter(o);
  REQUIRE(both.UnionWith(a).ok());
  REQUIRE(both.IntersectWith(b).ok());
  for (size_t i = 0; i < 1000; ++i) REQUIRE(both.MayContain(evens[i]));
  REQUIRE(a.UnionWith(b).ok());
  CHECK(std::equal(a.bytes().begin(), a.bytes().end(), all.bytes().begin()));

  // (UnionWith's refusals of other seeds and sizes: filter_test.cc, for every kind.)
  BlockedFilter d = MakeFilter(Sized(200'000, 0.01));
  CHECK(a.IntersectWith(d).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("explicit geometry: 2^30 bits and 6 hashes") {
  FilterOptions o;
  o.bits = uint64_t{1} << 30;
  o.hashes = 6;
  BlockedFilter f = MakeFilter(o);
  CHECK(f.bits() == uint64_t{1} << 30);
  CHECK(f.memory_bytes() == uint64_t{1} << 27);
  CHECK(f.hashes() == 6);
  CHECK(f.Insert("https://example.com/a"));
  CHECK_FALSE(f.Insert("https://example.com/a"));
  CHECK(f.MayContain("https://example.com/a"));
}

}  // namespace
}  // namespace bloomery
