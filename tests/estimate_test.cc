// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// What the filters estimate from their bits (bits/internal/fill_estimate.h): key counts and their
// error, a saturated filter's well-defined answers, and the scalable merges that rely on the
// estimate.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include "bits/internal/fill_estimate.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/counting_filter.h"
#include "bloomery/scalable_filter.h"
#include "test_util.h"

namespace bloomery {
namespace {

using testing::DistinctInts;

FilterOptions Sized(uint64_t capacity, double fpr, uint64_t seed = kDefaultSeed) {
  FilterOptions o;
  o.capacity = capacity;
  o.fpr = fpr;
  o.hashing.seed = seed;
  return o;
}

// Inserts keys until every bit (or counter) is set; returns how many it took.
template <typename Filter>
uint64_t Saturate(Filter& f) {
  uint64_t key = 0;
  while (f.FillRatio() < 1.0) {
    for (int i = 0; i < 256; ++i) f.Insert(key++);
  }
  return key;
}

TEST_CASE("count from fill: 0 when empty, +inf when every bit is set, the inverse of the fill") {
  CHECK(detail::CountFromFill(0, 4096, 6) == 0.0);
  CHECK(std::isinf(detail::CountFromFill(4096, 4096, 6)));
  CHECK(std::isinf(detail::CountFromFill(5000, 4096, 6)));
  CHECK(detail::CountFromFill(10, 0, 6) == 0.0);
  // n keys set each bit with probability 1 - (1 - k/m)^n in expectation: the estimate inverts it.
  const double m = 1 << 20;
  for (double n : {1.0, 1000.0, 100'000.0}) {
    const double expected_set = m * -std::expm1(n * std::log1p(-7 / m));
    CHECK(detail::CountFromFill(static_cast<uint64_t>(std::llround(expected_set)), 1 << 20, 7) ==
          doctest::Approx(n).epsilon(n < 10 ? 0.5 : 0.01));
  }
}

TEST_CASE("the count's standard error matches the spread of estimates over many filters") {
  // 200 filters of 1,000 keys at 1% (k = 6 or 7): the estimates scatter around 1,000 with about
  // the predicted standard error, and none strays past the 4 errors UnionWith allows.
  constexpr int kFilters = 200;
  double sum = 0;
  double sum_sq = 0;
  double predicted = 0;
  for (int seed = 0; seed < kFilters; ++seed) {
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(Sized(1000, 0.01, seed + 1));
    REQUIRE(f.ok());
    for (uint64_t key : DistinctInts(1000, 0)) f->Insert(key);
    const double estimate = f->EstimatedCount();
    predicted = detail::CountStandardError(1000, f->bits(), f->hashes());
    CHECK(std::fabs(estimate - 1000) <= 4 * predicted);
    sum += estimate - 1000;
    sum_sq += (estimate - 1000) * (estimate - 1000);
  }
  const double mean = sum / kFilters;
  const double sd = std::sqrt(sum_sq / kFilters - mean * mean);
  MESSAGE("estimate - 1000: mean " << mean << ", sd " << sd << ", predicted sd " << predicted);
  CHECK(predicted > 3);
  CHECK(sd > predicted / 2);
  CHECK(sd < predicted * 1.5);
  CHECK(std::fabs(mean) < 3 * predicted / std::sqrt(kFilters) + 1);
}

TEST_CASE("a saturated filter estimates +inf keys and FPR 1, with no undefined behaviour") {
  absl::StatusOr<BlockedFilter> blocked = BlockedFilter::Create(Sized(50, 0.01));
  REQUIRE(blocked.ok());
  Saturate(*blocked);
  CHECK(std::isinf(blocked->EstimatedCount()));
  CHECK(blocked->EstimatedCount() > 0);
  CHECK(blocked->EstimatedFpr() == 1.0);

  absl::StatusOr<ClassicFilter> classic = ClassicFilter::Create(Sized(50, 0.01));
  REQUIRE(classic.ok());
  Saturate(*classic);
  CHECK(std::isinf(classic->EstimatedCount()));
  CHECK(classic->EstimatedFpr() == 1.0);

  // Counting and scalable filters count keys rather than estimate them: finite when saturated.
  absl::StatusOr<CountingFilter> counting = CountingFilter::Create({.capacity = 50, .fpr = 0.01});
  REQUIRE(counting.ok());
  uint64_t key = 0;
  while (counting->NonZeroCounters() < counting->counters()) {
    for (int i = 0; i < 256; ++i) counting->Insert(key++);
  }
  CHECK(std::isfinite(counting->EstimatedCount()));
  CHECK(counting->EstimatedFpr() == 1.0);

  // A scalable chain counts its keys (finite), and refuses cleanly a merge that overfills a stage.
  ScalableOptions so;
  so.capacity = 100;
  so.scaling = false;
  absl::StatusOr<ScalableFilter> a = ScalableFilter::Create(so);
  absl::StatusOr<ScalableFilter> b = ScalableFilter::Create(so);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  a->InsertMany(std::span<const uint64_t>(DistinctInts(100, 0)));
  b->InsertMany(std::span<const uint64_t>(DistinctInts(100, 1)));
  CHECK(std::isfinite(a->EstimatedCount()));
  CHECK(a->UnionWith(*b).code() == absl::StatusCode::kFailedPrecondition);
}

ScalableOptions Chain(uint64_t initial_capacity, uint64_t seed) {
  ScalableOptions o;
  o.capacity = initial_capacity;
  o.fpr = 0.01;
  o.hashing.seed = seed;
  return o;
}

ScalableFilter Filled(const ScalableOptions& o, std::span<const uint64_t> keys) {
  ScalableFilter f = testing::MakeOrFail<ScalableFilter>(o);
  f.InsertMany(keys);
  return f;
}

// Issue #10 item 5: the fill-based estimate reads ~1% high about half the time, and a grown
// chain's full stages were refused for it.
TEST_CASE("a grown scalable filter merges with an empty one, with a copy, and from two halves") {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    CAPTURE(seed);
    const ScalableOptions o = Chain(1000, seed);
    const std::vector<uint64_t> keys = DistinctInts(7000, 0);  // stages of 1000, 2000, 4000: full
    ScalableFilter grown = Filled(o, keys);
    REQUIRE(grown.stage_count() == 3);

    ScalableFilter empty = testing::MakeOrFail<ScalableFilter>(o);
    REQUIRE(grown.UnionWith(empty).ok());
    REQUIRE(empty.UnionWith(grown).ok());
    CHECK(empty.EstimatedCount() == grown.EstimatedCount());

    // The stages count new keys (a false positive is not counted), so a little under 7,000.
    const double before = grown.EstimatedCount();
    ScalableFilter copy = Filled(o, keys);
    const absl::Status with_copy = grown.UnionWith(copy);
    CHECK_MESSAGE(with_copy.ok(), with_copy.message());
    CHECK(grown.EstimatedCount() >= before);
    CHECK(grown.EstimatedCount() <= 7000);

    // Two halves of the 1,000 keys that fill the first stage exactly.
    const std::vector<uint64_t> first = DistinctInts(1000, 1);
    ScalableFilter low = Filled(o, std::span<const uint64_t>(first).first(500));
    ScalableFilter high = Filled(o, std::span<const uint64_t>(first).subspan(500));
    const absl::Status halves = low.UnionWith(high);
    CHECK_MESSAGE(halves.ok(), halves.message());
    CHECK(low.stage_count() == 1);
    CHECK(low.EstimatedCount() <= 1000);
    CHECK(low.EstimatedCount() >= 500);
    for (uint64_t key : first) REQUIRE(low.MayContain(key));
  }
}

TEST_CASE("a merge that really overfills a stage keeps both stages; a non-scaling one refuses it") {
  ScalableOptions o = Chain(1000, 3);
  // 1,000 + 100 distinct keys for a 1,000-key stage: 10% over, far past the estimator's error.
  ScalableFilter a = Filled(o, DistinctInts(1000, 0));
  ScalableFilter b = Filled(o, std::span<const uint64_t>(DistinctInts(100, 1)));
  const std::vector<uint8_t> before(a.stage(0).bytes().begin(), a.stage(0).bytes().end());
  REQUIRE(a.UnionWith(b).ok());
  CHECK(a.stage_count() == 2);
  CHECK(a.stage_level(1) == 0);  // b's first stage, beside a's
  CHECK(std::equal(before.begin(), before.end(), a.stage(0).bytes().begin()));
  CHECK(a.EstimatedCount() == 1000 + b.EstimatedCount());

  o.scaling = false;  // one stage only: refused, nothing changed
  ScalableFilter c = Filled(o, DistinctInts(1000, 0));
  ScalableFilter d = Filled(o, std::span<const uint64_t>(DistinctInts(100, 1)));
  const std::vector<uint8_t> c_before(c.stage(0).bytes().begin(), c.stage(0).bytes().end());
  const double c_count = c.EstimatedCount();
  const absl::Status s = c.UnionWith(d);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message().find("capacity") != std::string_view::npos);
  CHECK(std::equal(c_before.begin(), c_before.end(), c.stage(0).bytes().begin()));
  CHECK(c.EstimatedCount() == c_count);
}

// A chain's stages do not answer independently (a key goes into the newest stage only when no
// older one answers for it, at the same relative positions), so 1 - prod (1 - f_i) under-read the
// chain's FPR: 0.725 for 0.862 measured on Redis's default chain at error rate 0.9. The estimate
// is now read as lookups behave: within 4 sigma of 200,000 absent string keys' lookups, for the
// partitioned (Redis's default) and the line's stages, at error rates 0.01 to 0.9.
TEST_CASE("a chain's estimated FPR is what its lookups measure, at any error rate and layout") {
  constexpr uint64_t kKeys = 20'000;
  constexpr uint64_t kQueries = 200'000;
  for (const Layout layout : {Layout::kPartitioned, Layout::kLine512}) {
    for (const double rate : {0.01, 0.1, 0.5, 0.9}) {
      CAPTURE(LayoutName(layout));
      CAPTURE(rate);
      absl::StatusOr<ScalableFilter> f =
          ScalableFilter::Create({.capacity = 100, .fpr = rate, .growth = 2, .layout = layout});
      REQUIRE(f.ok());
      for (uint64_t i = 0; i < kKeys; ++i) (void)f->Insert("key-" + std::to_string(i));
      REQUIRE(f->stage_count() >= 6);
      uint64_t hits = 0;
      for (uint64_t i = 0; i < kQueries; ++i) hits += f->MayContain("absent-" + std::to_string(i));
      const double estimated = f->EstimatedFpr();
      MESSAGE(LayoutName(layout) << " at " << rate << ": estimated " << estimated << ", measured "
                                 << static_cast<double>(hits) / kQueries);
      CHECK(testing::WithinBinomialBound(hits, kQueries, estimated, 4.0));
      CHECK(f->Health().estimated_fpr == estimated);
    }
  }
}

}  // namespace
}  // namespace bloomery
