// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/scalable_filter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/plan.h"
#include "test_util.h"

namespace bloomery {
namespace {

// Whether options of type O take a hand-made geometry (bits or hashes).
template <typename O>
concept TakesGeometry = requires(O o) {
  o.bits;
}
|| requires(O o) { o.hashes; };

using testing::DistinctInts;
using testing::DistinctStrings;
using testing::WithinBinomialBound;

using K = testing::For<ScalableFilter>;

uint64_t RightSizedBytes(uint64_t keys, double fpr) {
  FilterOptions o;
  o.capacity = keys;
  o.fpr = fpr;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  return f->memory_bytes();
}

// Grows a chain from `initial` keys to `n` keys at total FPR `fpr`, then checks what a user relies
// on: no false negatives, the measured FPR under the bound (and within a binomial bound of the
// exact FPR of the stages' bits), every stage planned within its share, and the memory it took
// relative to one BlockedFilter right-sized for n keys at the same FPR.
void GrowAndCheck(uint64_t initial, uint64_t n, double fpr, uint32_t growth) {
  ScalableOptions o = K::Sized(initial, fpr);
  o.growth = growth;
  ScalableFilter f = K::Make(o);
  constexpr uint64_t kChunk = 1 << 20;
  std::vector<uint64_t> keys(kChunk);
  InsertCounts counts;
  uint64_t memory_when_exactly_full = 0;  // memory at the last point where every stage was full
  uint64_t keys_when_exactly_full = 0;
  for (uint64_t base = 0; base < n; base += kChunk) {
    const uint64_t len = std::min(kChunk, n - base);
    for (uint64_t i = 0; i < len; ++i) keys[i] = (base + i) * 2;
    const InsertCounts c = f.InsertMany(std::span<const uint64_t>(keys.data(), len));
    counts.added += c.added;
    counts.refused += c.refused;
  }
  CHECK(counts.refused == 0);
  CHECK_FALSE(f.full());
  CHECK(f.EstimatedCount() == static_cast<double>(counts.added));
  // Keys not added were false positives of the chain at the time; their share is below P.
  CHECK(static_cast<double>(n - counts.added) <= fpr * static_cast<double>(n));
  uint64_t capacity = 0;
  uint64_t stage_capacity = initial;
  double budget = 0;
  for (uint32_t i = 0; i < f.stage_count(); ++i, stage_capacity *= growth) {
    CAPTURE(i);
    CHECK(f.stage(i).plan().capacity == stage_capacity);
    CHECK(f.stage(i).plan().expected_fpr <= ScalableFilter::StageFpr(o, i));
    CHECK(f.stage_keys(i) <= f.stage(i).plan().capacity);
    if (i + 1 < f.stage_count()) CHECK(f.stage_keys(i) == f.stage(i).plan().capacity);
    budget += ScalableFilter::StageFpr(o, i);
    capacity += f.stage(i).plan().capacity;
    if (i + 1 < f.stage_count()) {
      memory_when_exactly_full += f.stage(i).memory_bytes();
      keys_when_exactly_full = capacity;
    }
  }
  CHECK(budget < fpr);
  CHECK(f.capacity() == capacity);

  uint64_t missing = 0;
  for (uint64_t base = 0; base < n; base += kChunk) {
    const uint64_t len = std::min(kChunk, n - base);
    for (uint64_t i = 0; i < len; ++i) keys[i] = (base + i) * 2;
    missing += len - f.MayContainMany(std::span<const uint64_t>(keys.data(), len));
  }
  CHECK(missing == 0);

  const uint64_t queries = std::max<uint64_t>(n, static_cast<uint64_t>(1000 / fpr));
  uint64_t hits = 0;
  for (uint64_t base = 0; base < queries; base += kChunk) {
    const uint64_t len = std::min(kChunk, queries - base);
    for (uint64_t i = 0; i < len; ++i) keys[i] = (base + i) * 2 + 1;
    hits += f.MayContainMany(std::span<const uint64_t>(keys.data(), len));
  }
  const double measured = static_cast<double>(hits) / static_cast<double>(queries);
  const double exact_now = f.EstimatedFpr();
  const double ratio =
      static_cast<double>(f.memory_bytes()) / static_cast<double>(RightSizedBytes(n, fpr));
  MESSAGE("growth " << growth << ", " << initial << " -> " << n << " keys at P = " << fpr << ": "
                    << f.stage_count() << " stages, measured FPR " << measured << ", exact now "
                    << exact_now << ", memory " << f.memory_bytes() << " bytes = " << ratio
                    << "x a right-sized BlockedFilter");
  CHECK(measured <= fpr);
  CHECK(WithinBinomialBound(hits, queries, exact_now));
  if (keys_when_exactly_full != 0) {
    const double full_ratio = static_cast<double>(memory_when_exactly_full) /
                              static_cast<double>(RightSizedBytes(keys_when_exactly_full, fpr));
    MESSAGE("  when its first " << f.stage_count() - 1 << " stages were exactly full ("
                                << keys_when_exactly_full << " keys): " << full_ratio << "x");
    // The price of the tightening alone (no half-empty stage): ~1.9x at r = 0.9, growth 2.
    if (growth == 2) CHECK(full_ratio < 2.0);
  }
}

TEST_CASE("grows from 1,000 to 1,000,000 keys at P = 1%: no false negatives, FPR <= P") {
  GrowAndCheck(1000, 1'000'000, 0.01, 2);
  GrowAndCheck(1000, 1'000'000, 0.01, 4);
}

TEST_CASE(
    "any growth in [1, kMaxScalableGrowth] keeps the bound; growth 1 repeats the first stage") {
  GrowAndCheck(1000, 50'000, 0.01, 1);  // 50 stages of 1,000 keys
  GrowAndCheck(1000, 1'000'000, 0.01, 3);
  // The largest growth: the second stage holds kMaxScalableGrowth times the first.
  ScalableOptions o = K::Sized(1, 0.01);
  o.growth = kMaxScalableGrowth;
  ScalableFilter f = K::Make(o);
  for (uint64_t key = 0; f.stage_count() < 2; ++key) REQUIRE(f.Insert(key) == InsertResult::kAdded);
  CHECK(f.stage(1).plan().capacity == kMaxScalableGrowth);
  // A saved chain of growth 3 loads with it (the format's validator takes the same range).
  o = K::Sized(1000, 0.01);
  o.growth = 3;
  ScalableFilter g = K::Make(o);
  for (uint64_t i = 0; i < 5000; ++i) (void)g.Insert(i);
  REQUIRE(g.stage_count() == 3);  // 1000 + 3000 + 9000 >= 5000
  const absl::StatusOr<std::string> bytes = g.SaveToBytes();
  REQUIRE(bytes.ok());
  const absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(*bytes);
  REQUIRE(loaded.ok());
  CHECK(loaded->options().growth == 3);
  CHECK(loaded->stage_count() == 3);
  for (uint64_t i = 0; i < 5000; ++i) CHECK(loaded->MayContain(i));
}

TEST_CASE("grows from 1,000 to 10,000,000 keys at P = 1%" * doctest::test_suite("slow")) {
  GrowAndCheck(1000, 10'000'000, 0.01, 2);
}

// RedisBloom's bits for a stage of `keys` at error rate `e`: ln(1/e) / ln^2 2 bits per key,
// unrounded (its bloom_init with NOROUND, as every RedisBloom filter is made).
double RedisBloomBits(uint64_t keys, double e) {
  return static_cast<double>(keys) * -std::log(e) / (std::log(2.0) * std::log(2.0));
}

TEST_CASE("partitioned stages at tightening 0.5: RedisBloom's series and memory, FPR <= P") {
  for (const double p : {0.001, 0.01, 0.1}) {
    CAPTURE(p);
    const ScalableOptions o{.capacity = 10'000,
                            .fpr = p,
                            .growth = 2,
                            .tightening = 0.5,
                            .layout = Layout::kPartitioned};
    ScalableFilter f = ScalableFilter::Create(o).value();
    const std::vector<uint64_t> keys = DistinctInts(150'000, 0);  // 4 stages: 10k + ... + 80k
    REQUIRE(f.InsertMany(keys).refused == 0);
    REQUIRE(f.stage_count() == 4);
    CHECK(f.MayContainMany(keys) == keys.size());
    for (uint32_t i = 0; i < f.stage_count(); ++i) {
      CAPTURE(i);
      const Plan& plan = f.stage(i).plan();
      CHECK(plan.layout == Layout::kPartitioned);
      CHECK(plan.capacity == (uint64_t{10'000} << i));
      // Stage i at RedisBloom's share, p / 2^(i+1), within it by the partitioned formula...
      const double share = ScalableFilter::StageFpr(o, i);
      CHECK(share == doctest::Approx(p / std::pow(2.0, i + 1)));
      CHECK(plan.expected_fpr <= share);
      // ...in RedisBloom's bits, give or take the whole slices of an integer k.
      const double theirs = RedisBloomBits(plan.capacity, share);
      CHECK(static_cast<double>(plan.bits) <= 1.005 * theirs);
      CHECK(static_cast<double>(f.stage(i).memory_bytes()) <= 1.005 * theirs / 8 + 64);
    }
    const uint64_t queries = 1'000'000;
    const size_t hits = f.MayContainMany(DistinctInts(queries, 1));
    CHECK(static_cast<double>(hits) / queries <= p);
    CHECK(WithinBinomialBound(hits, queries, f.EstimatedFpr()));
    // The file keeps the kind of its stages, and a copy merges back.
    ScalableFilter loaded = ScalableFilter::LoadFromBytes(f.SaveToBytes().value()).value();
    CHECK(loaded.layout() == Layout::kPartitioned);
    CHECK(loaded.options().tightening == 0.5);
    CHECK(testing::Bytes(loaded) == testing::Bytes(f));
    CHECK(loaded.MayContainMany(keys) == keys.size());
    REQUIRE(f.UnionWith(loaded).ok());
    CHECK(f.stage_count() == 4);
    CHECK(f.MayContainMany(keys) == keys.size());
    const FilterHealth health = f.Health();
    CHECK(health.inserted == f.EstimatedCount());
    // (Keys that were false positives when inserted were not added: the stages' counts hold the
    // rest, and the fill says about as many.)
    CHECK(health.estimated_count == doctest::Approx(f.EstimatedCount()).epsilon(0.03));
    f.Clear();
    CHECK(f.stage_count() == 1);
    CHECK(f.MayContainMany(keys) <= static_cast<size_t>(2 * p * static_cast<double>(keys.size())));
  }
}

TEST_CASE("Insert is a test-and-set over the whole chain") {
  ScalableFilter f = K::Make(K::Sized(1000, 1e-4));
  CHECK(f.Insert("a") == InsertResult::kAdded);
  CHECK(f.Insert("a") == InsertResult::kPresent);
  CHECK(f.MayContain("a"));
  const std::vector<uint64_t> first = DistinctInts(999, 0);
  CHECK(f.InsertMany(std::span<const uint64_t>(first)).added >= 998);
  CHECK(f.stage_count() == 1);
  const std::vector<uint64_t> more = DistinctInts(5000, 1);
  f.InsertMany(std::span<const uint64_t>(more));
  REQUIRE(f.stage_count() == 3);  // 1000 + 2000 + 4000 >= 6000
  std::vector<uint64_t> keys_per_stage;
  for (uint32_t i = 0; i < f.stage_count(); ++i) keys_per_stage.push_back(f.stage_keys(i));
  // Keys that live in older stages are found there and not added to the newest one.
  CHECK(f.InsertMany(std::span<const uint64_t>(first)).added == 0);
  CHECK(f.Insert("a") == InsertResult::kPresent);
  CHECK(f.TryInsert("a").value() == false);
  CHECK(f.TryInsert("b").value() == true);
  CHECK(f.stage_keys(0) == keys_per_stage[0]);
  CHECK(f.stage_keys(1) == keys_per_stage[1]);
  CHECK(f.stage_keys(2) == keys_per_stage[2] + 1);
}

TEST_CASE("batch answers equal single-key answers, across growth, for strings and integers") {
  for (bool concurrent : {false, true}) {
    CAPTURE(concurrent);
    ScalableFilter single = K::Make(K::Sized(500, 0.01, concurrent));
    ScalableFilter batch = K::Make(K::Sized(500, 0.01, concurrent));
    const std::vector<std::string> strings = DistinctStrings(20'000, "url-");
    std::vector<std::string_view> keys(strings.begin(), strings.end());
    keys.insert(keys.end(), keys.begin(), keys.begin() + 3000);  // duplicates, some in one batch
    keys.push_back(keys[7]);
    std::vector<InsertResult> results(keys.size());
    const InsertCounts counts = batch.InsertMany(std::span<const std::string_view>(keys), results);
    size_t single_added = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      const InsertResult r = single.Insert(keys[i]);
      single_added += r == InsertResult::kAdded;
      REQUIRE(r == results[i]);
    }
    CHECK(counts.added == single_added);
    CHECK(counts.refused == 0);
    CHECK(batch.stage_count() == single.stage_count());
    CHECK(batch.stage_count() >= 5);
    for (uint32_t s = 0; s < batch.stage_count(); ++s) {
      CHECK(std::equal(batch.stage(s).bytes().begin(), batch.stage(s).bytes().end(),
                       single.stage(s).bytes().begin()));
    }
    const std::vector<uint64_t> probes = DistinctInts(50'000, 0);
    std::unique_ptr<bool[]> found(new bool[probes.size()]);
    const size_t hits = batch.MayContainMany(std::span<const uint64_t>(probes),
                                             std::span<bool>(found.get(), probes.size()));
    size_t single_hits = 0;
    for (size_t i = 0; i < probes.size(); ++i) {
      REQUIRE(found[i] == single.MayContain(probes[i]));
      single_hits += found[i];
    }
    CHECK(hits == single_hits);
    for (std::string_view key : keys) REQUIRE(batch.MayContain(key));
  }
}

TEST_CASE("non-scaling mode refuses new keys past its capacity, with a clear status") {
  ScalableOptions o = K::Sized(10'000, 0.01);
  o.scaling = false;
  ScalableFilter f = K::Make(o);
  CHECK(f.stage(0).plan().expected_fpr <= 0.01);
  CHECK(f.stage(0).plan().expected_fpr > 0.009);  // planned at P itself, no tightening
  const std::vector<uint64_t> keys = DistinctInts(20'000, 0);
  std::vector<InsertResult> results(keys.size());
  const InsertCounts counts = f.InsertMany(std::span<const uint64_t>(keys), results);
  CHECK(counts.added == 10'000);
  CHECK(counts.refused > 9'500);  // the rest, less the false positives reported kPresent
  CHECK(counts.added + counts.refused <= keys.size());
  CHECK(f.full());
  CHECK(f.stage_count() == 1);
  // Every key told kAdded is there; the refused ones are a known set, not silent losses.
  for (size_t i = 0; i < keys.size(); ++i) {
    if (results[i] == InsertResult::kAdded) REQUIRE(f.MayContain(keys[i]));
  }
  CHECK(f.Insert(keys[0]) == InsertResult::kPresent);  // present keys still answer present
  const absl::StatusOr<bool> refused = f.TryInsert("never seen");
  CHECK(refused.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(refused.status().message().find("non-scaling") != std::string_view::npos);
  CHECK(f.FullStatus().code() == absl::StatusCode::kResourceExhausted);
  // The FPR stays at the promise because nothing past the capacity went in: the exact FPR of
  // these bits is the planned one's, to the spread of one filter of 10,000 keys (twice the keys
  // would make it several times P), and lookups measure it.
  const uint64_t queries = 1'000'000;
  const size_t hits = f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, 1)));
  MESSAGE("planned " << f.stage(0).plan().expected_fpr << ", exact now " << f.EstimatedFpr()
                     << ", measured " << static_cast<double>(hits) / queries);
  CHECK(f.EstimatedFpr() <= 1.1 * f.stage(0).plan().expected_fpr);
  REQUIRE(f.stage_count() == 1);
  CHECK(WithinBinomialBound(hits, queries, f.EstimatedFpr()));
  f.Clear();
  CHECK_FALSE(f.full());
  CHECK(f.FullStatus().ok());
  CHECK(f.Insert("never seen") == InsertResult::kAdded);
}

TEST_CASE("max_stages and the memory cap stop growth with a clear status, never an FPR blow-up") {
  SUBCASE("max_stages") {
    ScalableOptions o = K::Sized(100, 0.01);
    o.max_stages = 3;
    ScalableFilter f = K::Make(o);
    const InsertCounts counts = f.InsertMany(std::span<const uint64_t>(DistinctInts(2000, 0)));
    CHECK(counts.added == 700);  // 100 + 200 + 400
    CHECK(f.full());
    CHECK(f.stage_count() == 3);
    CHECK(f.FullStatus().code() == absl::StatusCode::kResourceExhausted);
    CHECK(f.FullStatus().message().find("max_stages") != std::string_view::npos);
    CHECK(f.EstimatedFpr() < 0.01);
  }
  SUBCASE("a memory cap under the first stage refuses the filter, which is not full") {
    ScalableOptions o = K::Sized(10'000, 0.01);
    o.memory.max_memory_bytes = 1000;
    const absl::StatusOr<ScalableFilter> refused = ScalableFilter::Create(o);
    REQUIRE(refused.status().code() == absl::StatusCode::kResourceExhausted);
    const std::string message(refused.status().message());
    CHECK(message.find("first stage") != std::string::npos);
    CHECK(message.find("memory cap of 1000 bytes") != std::string::npos);
    CHECK(message.find("full") == std::string::npos);
  }
  SUBCASE("memory cap") {
    ScalableOptions o = K::Sized(10'000, 0.01);
    const uint64_t first_two = [&] {
      // Past the first stage's 10,000 counted keys (a false positive is present, not counted).
      ScalableFilter probe = K::Make(o);
      probe.InsertMany(std::span<const uint64_t>(DistinctInts(10'100, 0)));
      REQUIRE(probe.stage_count() == 2);
      return probe.memory_bytes();
    }();
    o.memory.max_memory_bytes = first_two + 1000;  // room for stages 0 and 1, not for stage 2
    ScalableFilter f = K::Make(o);
    const InsertCounts counts = f.InsertMany(std::span<const uint64_t>(DistinctInts(100'000, 0)));
    CHECK(counts.added == 30'000);
    CHECK(counts.refused > 60'000);
    CHECK(f.full());
    CHECK(f.memory_bytes() == first_two);
    CHECK(f.memory_bytes() <= o.memory.max_memory_bytes);
    CHECK(f.FullStatus().message().find("memory cap") != std::string_view::npos);
    uint64_t absent = uint64_t{1} << 40;
    while (f.MayContain(absent)) ++absent;
    CHECK(f.Insert(absent) == InsertResult::kRefused);
    CHECK_FALSE(f.MayContain(absent));
    CHECK(f.EstimatedFpr() < 0.01);

    o.memory.max_memory_bytes = 100;  // not even the first stage
    const absl::StatusOr<ScalableFilter> tiny = ScalableFilter::Create(o);
    CHECK(tiny.status().code() == absl::StatusCode::kResourceExhausted);
  }
}

TEST_CASE("NextStagePlan: the stage growth adds next, in the chain's layout, or why none") {
  for (Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    CAPTURE(LayoutName(layout));
    const ScalableOptions o{.capacity = 1000, .fpr = 0.01, .layout = layout};
    ScalableFilter f = K::Make(o);
    uint64_t key = 0;
    for (uint32_t level = 1; level <= 3; ++level) {
      CAPTURE(level);
      REQUIRE(f.stage_count() == level);
      const absl::StatusOr<Plan> next = f.NextStagePlan();
      REQUIRE(next.ok());
      // Planned as the layout plans C s^level keys at the level's share: a plan of any other
      // layout has other bits.
      const absl::StatusOr<Plan> expected =
          PlanFor(o.capacity << level, ScalableFilter::StageFpr(o, level), layout);
      REQUIRE(expected.ok());
      CHECK(next->layout == layout);
      CHECK(next->capacity == expected->capacity);
      CHECK(next->bits == expected->bits);
      CHECK(next->hashes == expected->hashes);
      const absl::StatusOr<Plan> at_level = ScalableFilter::PlanLevel(o, level);
      REQUIRE(at_level.ok());
      CHECK(at_level->bits == next->bits);
      // The stage growth then adds is that plan.
      while (f.stage_count() == level) REQUIRE(f.Insert(key++) != InsertResult::kRefused);
      const BitArray& added = f.stage(level);
      CHECK(added.plan().layout == layout);
      CHECK(added.bits() == next->bits);
      CHECK(added.hashes() == next->hashes);
      CHECK(added.plan().capacity == next->capacity);
    }
  }
  // A chain under a cap never holds more than it: not even the unused tail of a stage's last
  // line (a word64 or block256 stage's bits need not fill it).
  for (Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    CAPTURE(LayoutName(layout));
    const ScalableOptions o{.capacity = 1000, .fpr = 0.01, .layout = layout};
    ScalableFilter probe = K::Make(o);
    const absl::StatusOr<Plan> second = probe.NextStagePlan();
    REQUIRE(second.ok());
    ScalableOptions capped = o;
    capped.memory.max_memory_bytes = probe.memory_bytes() + WholeLineBytes(second->bits) - 1;
    ScalableFilter f = K::Make(capped);
    f.InsertMany(std::span<const uint64_t>(DistinctInts(5000, 0)));
    CHECK(f.full());
    CHECK(f.stage_count() == 1);
    CHECK(f.memory_bytes() <= capped.memory.max_memory_bytes);
    CHECK(f.FullStatus().message().find(absl::StrCat(
              "memory cap of ", capped.memory.max_memory_bytes)) != absl::string_view::npos);
  }
  // A union's copy sits at its level: the next stage is one past the highest, not the count.
  ScalableFilter a = K::Make(K::Sized(1000, 0.01));
  ScalableFilter b = K::Make(K::Sized(1000, 0.01));
  a.InsertMany(std::span<const uint64_t>(DistinctInts(1000, 0)));
  b.InsertMany(std::span<const uint64_t>(DistinctInts(1000, 1)));
  REQUIRE(a.UnionWith(b).ok());
  REQUIRE(a.stage_count() == 2);
  REQUIRE(a.stage_level(1) == 0);
  CHECK(a.NextStagePlan()->capacity == 2000);
  // Why none: a non-scaling chain, a full one (FullStatus's text).
  ScalableOptions fixed = K::Sized(1000, 0.01);
  fixed.scaling = false;
  CHECK(K::Make(fixed).NextStagePlan().status().message().find("non-scaling") !=
        absl::string_view::npos);
  ScalableOptions three = K::Sized(100, 0.01);
  three.max_stages = 3;
  ScalableFilter full = K::Make(three);
  full.InsertMany(std::span<const uint64_t>(DistinctInts(1000, 0)));
  REQUIRE(full.full());
  CHECK(full.NextStagePlan().status() == full.FullStatus());
}

TEST_CASE(
    "InsertManyUnderCap: a caller's memory cap refuses growth past it, the chain stays open") {
  const auto first_refused = [](const std::vector<InsertResult>& results) {
    return static_cast<size_t>(std::find(results.begin(), results.end(), InsertResult::kRefused) -
                               results.begin());
  };
  for (Layout layout :
       {Layout::kPartitioned, Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    CAPTURE(LayoutName(layout));
    // No cap of its own: every cap below is the caller's.
    const ScalableOptions o{.capacity = 1000, .fpr = 0.01, .layout = layout};
    ScalableFilter f = K::Make(o);
    const absl::StatusOr<Plan> second = f.NextStagePlan();
    REQUIRE(second.ok());
    // The second stage's memory in whole 64-byte lines, as every filter allocates it.
    const uint64_t fits = f.memory_bytes() + WholeLineBytes(second->bits);

    // One byte short of the second stage: the first stage takes its capacity, every later new
    // key is refused, and the chain neither grows nor becomes full.
    const std::vector<uint64_t> keys = DistinctInts(3000, 0);
    std::vector<InsertResult> results(keys.size());
    const InsertCounts counts = f.InsertManyUnderCap(keys, results, fits - 1);
    const size_t refused_at = first_refused(results);
    REQUIRE(refused_at < keys.size());
    CHECK(f.stage_count() == 1);
    CHECK(f.stage_keys(0) == o.capacity);
    CHECK(counts.added == o.capacity);
    CHECK(counts.refused > 0);
    CHECK_FALSE(f.full());
    CHECK(f.FullStatus().ok());
    CHECK(f.memory_bytes() < fits);
    for (size_t i = refused_at; i < keys.size(); ++i) CHECK(results[i] != InsertResult::kAdded);
    // The keys it took answer present under the cap (no refusal, no false negative).
    std::vector<InsertResult> again(refused_at);
    CHECK(f.InsertManyUnderCap(std::span(keys.data(), refused_at), again, fits - 1).refused == 0);
    CHECK(std::count(again.begin(), again.end(), InsertResult::kPresent) ==
          static_cast<ptrdiff_t>(refused_at));

    // Under a cap the stage fits exactly, the refused key grows the chain.
    std::vector<InsertResult> one(1);
    (void)f.InsertManyUnderCap(std::span(&keys[refused_at], 1), one, fits);
    CHECK(one[0] == InsertResult::kAdded);
    REQUIRE(f.stage_count() == 2);

    // A chain already over the cap still answers, and its newest stage takes new keys up to its
    // capacity; the key after that is refused, and the chain stays open.
    const uint64_t under = f.memory_bytes() - 1;
    const std::vector<uint64_t> more = DistinctInts(6000, 1);
    std::vector<InsertResult> more_results(more.size());
    const InsertCounts more_counts = f.InsertManyUnderCap(more, more_results, under);
    CHECK(more_counts.added > 0);
    CHECK(more_counts.refused > 0);
    CHECK(f.stage_count() == 2);
    CHECK(f.stage_keys(1) == f.stage(1).plan().capacity);
    CHECK_FALSE(f.full());
    CHECK(f.InsertManyUnderCap(std::span(keys.data(), 1), one, under).refused == 0);
    CHECK(one[0] == InsertResult::kPresent);
    // Without the caller's cap the chain grows again.
    CHECK(f.Insert(more[first_refused(more_results)]) == InsertResult::kAdded);
    CHECK(f.stage_count() == 3);
  }
  // The chain's own limits hold under any cap of the caller's: a non-scaling chain is full.
  ScalableOptions fixed = K::Sized(100, 0.01);
  fixed.scaling = false;
  ScalableFilter f = K::Make(fixed);
  const InsertCounts counts = f.InsertManyUnderCap(DistinctInts(1000, 0), {}, uint64_t{1} << 30);
  CHECK(counts.added == 100);
  CHECK(counts.refused > 0);
  CHECK(f.full());
  CHECK(f.FullStatus().message().find("non-scaling") != absl::string_view::npos);
}

TEST_CASE("bad options: InvalidArgument with a message naming the option") {
  auto message_for = [](const ScalableOptions& o) {
    const absl::StatusOr<ScalableFilter> f = ScalableFilter::Create(o);
    CHECK(f.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(f.status().message());
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ScalableOptions o = K::Sized(1000, 0.01);
  for (uint32_t growth : {0u, kMaxScalableGrowth + 1, 1u << 31}) {
    CAPTURE(growth);
    o.growth = growth;
    CHECK(message_for(o).find("growth") != std::string::npos);
  }
  o.growth = 2;
  for (double r : {0.0, 1.0, -0.5, 1.5, nan}) {
    CAPTURE(r);
    o.tightening = r;
    CHECK(message_for(o).find("tightening") != std::string::npos);
  }
  o.tightening = kDefaultTightening;
  for (double p : {0.0, 1.0, -0.1, 2.0, nan}) {
    CAPTURE(p);
    o.fpr = p;
    CHECK(message_for(o).find("fpr") != std::string::npos);
  }
  o.fpr = 0.01;
  o.capacity = 0;
  CHECK(message_for(o).find("capacity") != std::string::npos);
  o.capacity = 1000;
  // Stages are planned: there is no hand-made geometry to refuse, or to ignore silently.
  static_assert(!TakesGeometry<ScalableOptions>);
  static_assert(TakesGeometry<FilterOptions>);  // the check can fail
  for (uint32_t stages : {0u, kMaxScalableStages + 1}) {
    o.max_stages = stages;
    CHECK(message_for(o).find("max_stages") != std::string::npos);
  }
  o.max_stages = kMaxScalableStages;
  // Issue #30: a first stage the planner cannot make (over 2^48 bits, or a stage fpr that
  // underflows to 0) was ResourceExhausted "filter is full"; nothing is full at creation.
  const auto unplannable = [&](uint64_t capacity, double fpr) {
    ScalableOptions bad = o;
    bad.capacity = capacity;
    bad.fpr = fpr;
    const std::string message = message_for(bad);
    CHECK(message.find("first stage cannot be planned") != std::string::npos);
    CHECK(message.find("full") == std::string::npos);
    return message;
  };
  CHECK(unplannable(100, 1e-300).find("bit maximum") != std::string::npos);
  CHECK(unplannable(uint64_t{1} << 62, 0.01).find("bit maximum") != std::string::npos);
  CHECK(unplannable(100, std::numeric_limits<double>::denorm_min()).find("fpr") !=
        std::string::npos);
}

TEST_CASE("UnionWith ORs stages where the union fits, keeps both where it does not") {
  const ScalableOptions o = K::Sized(10'000, 0.01);
  ScalableFilter a = K::Make(o);
  ScalableFilter b = K::Make(o);
  const std::vector<uint64_t> evens = DistinctInts(3000, 0);
  const std::vector<uint64_t> odds = DistinctInts(4000, 1);
  a.InsertMany(std::span<const uint64_t>(evens));
  b.InsertMany(std::span<const uint64_t>(odds));
  REQUIRE(a.UnionWith(b).ok());
  for (uint64_t key : evens) REQUIRE(a.MayContain(key));
  for (uint64_t key : odds) REQUIRE(a.MayContain(key));
  CHECK(a.stage_count() == 1);
  CHECK(a.EstimatedCount() == doctest::Approx(7000).epsilon(0.03));
  CHECK(a.planned_fpr() == o.fpr);

  // A fresh filter takes over a grown one's stages.
  ScalableFilter grown = K::Make(o);
  const std::vector<uint64_t> many = DistinctInts(25'000, 0);
  grown.InsertMany(std::span<const uint64_t>(many));
  REQUIRE(grown.stage_count() == 2);
  ScalableFilter fresh = K::Make(o);
  REQUIRE(fresh.UnionWith(grown).ok());
  CHECK(fresh.stage_count() == 2);
  for (uint64_t key : many) REQUIRE(fresh.MayContain(key));
  CHECK(fresh.planned_fpr() == o.fpr);

  // Two first stages that together overfill one: c's is kept beside a's, at its level, and the
  // bound says what the chain now promises.
  ScalableFilter c = K::Make(o);
  const std::vector<uint64_t> c_keys = DistinctInts(8000, 1);  // 4,000 of them new to a
  c.InsertMany(std::span<const uint64_t>(c_keys));
  const std::vector<uint8_t> before(a.stage(0).bytes().begin(), a.stage(0).bytes().end());
  const uint64_t a_keys = a.stage_keys(0);
  REQUIRE(a.UnionWith(c).ok());
  REQUIRE(a.stage_count() == 2);
  CHECK(a.stage_level(0) == 0);
  CHECK(a.stage_level(1) == 0);
  CHECK(a.stage_keys(0) == a_keys);
  CHECK(a.stage_keys(1) == c.stage_keys(0));
  CHECK(std::equal(before.begin(), before.end(), a.stage(0).bytes().begin()));
  CHECK(a.planned_fpr() == doctest::Approx(o.fpr + ScalableFilter::StageFpr(o, 0)));
  for (uint64_t key : c_keys) REQUIRE(a.MayContain(key));
  for (uint64_t key : evens) REQUIRE(a.MayContain(key));

  // A copy of itself, or a part of the same keys, ORs in place whatever the counts.
  ScalableFilter full = K::Make(o);
  full.InsertMany(std::span<const uint64_t>(DistinctInts(10'000, 0)));
  ScalableFilter part = K::Make(o);
  part.InsertMany(std::span<const uint64_t>(DistinctInts(6000, 0)));
  REQUIRE(full.stage_count() == 1);
  const uint64_t held = full.stage_keys(0);  // 10,000 less the false positives among them
  CHECK(held > 9'950);
  REQUIRE(full.UnionWith(part).ok());
  CHECK(full.stage_count() == 1);
  CHECK(full.stage_keys(0) == held);

  ScalableOptions other = o;
  other.hashing.seed = 7;
  ScalableFilter d = K::Make(other);
  CHECK(a.UnionWith(d).code() == absl::StatusCode::kFailedPrecondition);
  other = o;
  other.growth = 4;
  CHECK(a.CheckCompatible(K::Make(other)).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("the union of two per-worker chains that both grew keeps every key and its bound") {
  // The issue's case: capacity 10, each worker grew past stage 0 ("stage 0 would hold ~20 keys,
  // over its capacity of 10" before).
  {
    const ScalableOptions o = K::Sized(10, 0.01);
    ScalableFilter a = K::Make(o);
    ScalableFilter b = K::Make(o);
    a.InsertMany(std::span<const uint64_t>(DistinctInts(30, 0)));
    b.InsertMany(std::span<const uint64_t>(DistinctInts(30, 1)));
    REQUIRE(a.stage_count() == 2);
    REQUIRE(a.UnionWith(b).ok());
    for (uint64_t key = 0; key < 60; ++key) REQUIRE(a.MayContain(key));
  }
  const ScalableOptions o = K::Sized(1000, 0.01);
  ScalableFilter a = K::Make(o);
  ScalableFilter b = K::Make(o);
  const std::vector<uint64_t> a_keys = DistinctInts(5000, 0);  // 1000 + 2000 + 2000 of 4000
  const std::vector<uint64_t> b_keys = DistinctInts(2500, 1);  // 1000 + 1500 of 2000
  a.InsertMany(std::span<const uint64_t>(a_keys));
  b.InsertMany(std::span<const uint64_t>(b_keys));
  REQUIRE(a.stage_count() == 3);
  REQUIRE(b.stage_count() == 2);
  const double both = a.EstimatedCount() + b.EstimatedCount();  // 7,500 less false positives
  REQUIRE(a.UnionWith(b).ok());
  // Disjoint full stages cannot share one: b's two are kept after a's three, at their levels.
  REQUIRE(a.stage_count() == 5);
  const std::vector<uint32_t> levels = {0, 1, 2, 0, 1};
  double bound = 0;
  for (uint32_t i = 0; i < a.stage_count(); ++i) {
    CAPTURE(i);
    CHECK(a.stage_level(i) == levels[i]);
    CHECK(a.stage(i).plan().capacity == o.capacity << levels[i]);
    CHECK(a.stage(i).plan().expected_fpr <= ScalableFilter::StageFpr(o, levels[i]));
    CHECK(a.stage_keys(i) <= a.stage(i).plan().capacity);
    bound += ScalableFilter::StageFpr(o, levels[i]);
  }
  // P plus the shares of the two levels held twice; the three stages a may still grow (levels
  // 3, 4, ...) stay within P's remainder.
  const double expected_bound =
      o.fpr + ScalableFilter::StageFpr(o, 0) + ScalableFilter::StageFpr(o, 1);
  CHECK(a.planned_fpr() == doctest::Approx(expected_bound));
  CHECK(bound < a.planned_fpr());
  CHECK(a.EstimatedCount() == both);

  const auto check_keys = [](const ScalableFilter& f, const std::vector<uint64_t>& keys) {
    CHECK(f.MayContainMany(std::span<const uint64_t>(keys)) == keys.size());
  };
  const auto check_fpr = [](const ScalableFilter& f) {
    constexpr uint64_t kQueries = 400'000;
    const uint64_t hits = f.MayContainMany(
        std::span<const uint64_t>(DistinctInts(kQueries, (uint64_t{1} << 40) + 1)));
    const double measured = static_cast<double>(hits) / kQueries;
    MESSAGE(f.stage_count() << " stages: measured FPR " << measured << ", exact now "
                            << f.EstimatedFpr() << ", bound " << f.planned_fpr());
    CHECK(measured <= f.planned_fpr());
    CHECK(f.EstimatedFpr() <= f.planned_fpr());
    CHECK(WithinBinomialBound(hits, kQueries, f.EstimatedFpr()));
  };
  check_keys(a, a_keys);
  check_keys(a, b_keys);
  check_fpr(a);

  // Inserts go on: into the newest stage (b's level 1, 500 free), then past the highest level.
  const std::vector<uint64_t> later = DistinctInts(20'000, uint64_t{1} << 32);
  const InsertCounts counts = a.InsertMany(std::span<const uint64_t>(later));
  CHECK(counts.refused == 0);
  REQUIRE(a.stage_count() == 7);  // 500 + 8000 + 16000 >= 20000
  CHECK(a.stage_keys(4) == 2000);
  CHECK(a.stage_level(5) == 3);
  CHECK(a.stage_level(6) == 4);
  CHECK(a.planned_fpr() == doctest::Approx(expected_bound));
  check_keys(a, a_keys);
  check_keys(a, b_keys);
  check_keys(a, later);
  check_fpr(a);

  // Saved and loaded: the same stages, levels, keys and bound; saved again, the same bytes.
  const absl::StatusOr<std::string> bytes = a.SaveToBytes();
  REQUIRE(bytes.ok());
  const absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(*bytes);
  REQUIRE(loaded.ok());
  REQUIRE(loaded->stage_count() == a.stage_count());
  for (uint32_t i = 0; i < a.stage_count(); ++i) {
    CHECK(loaded->stage_level(i) == a.stage_level(i));
    CHECK(loaded->stage_keys(i) == a.stage_keys(i));
  }
  CHECK(loaded->planned_fpr() == a.planned_fpr());
  check_keys(*loaded, a_keys);
  check_keys(*loaded, b_keys);
  check_keys(*loaded, later);
  CHECK(loaded->SaveToBytes().value() == *bytes);
  // A fresh filter merged with the union is the union, byte for byte (how Redis copies one).
  ScalableFilter copy = K::Make(o);
  REQUIRE(copy.UnionWith(a).ok());
  CHECK(copy.SaveToBytes().value() == *bytes);
}

TEST_CASE("a union past max_stages or the memory cap is refused and changes nothing") {
  ScalableOptions o = K::Sized(1000, 0.01);
  o.max_stages = 4;
  ScalableFilter a = K::Make(o);
  ScalableFilter b = K::Make(o);
  a.InsertMany(std::span<const uint64_t>(DistinctInts(2500, 0)));
  b.InsertMany(std::span<const uint64_t>(DistinctInts(2500, 1)));
  REQUIRE(a.stage_count() == 2);
  const std::string before = a.SaveToBytes().value();
  absl::Status s = a.UnionWith(b);  // 2 + 2 stages: fits max_stages 4
  REQUIRE(s.ok());
  ScalableFilter c = K::Make(o);
  c.InsertMany(std::span<const uint64_t>(DistinctInts(1500, uint64_t{1} << 32)));
  const std::string merged = a.SaveToBytes().value();
  s = a.UnionWith(c);  // c's full stage 0 and its level 1 need a fifth and a sixth
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(s.message().find("max_stages") != std::string_view::npos);
  CHECK(a.SaveToBytes().value() == merged);
  CHECK(before != merged);

  o.max_stages = kMaxScalableStages;
  ScalableFilter one = K::Make(o);
  o.memory.max_memory_bytes = 2 * one.memory_bytes() + one.memory_bytes() / 2;
  ScalableFilter capped = K::Make(o);
  capped.InsertMany(std::span<const uint64_t>(DistinctInts(1000, 0)));
  ScalableFilter full = K::Make(o);
  full.InsertMany(std::span<const uint64_t>(DistinctInts(1000, 1)));
  const std::string capped_before = capped.SaveToBytes().value();
  REQUIRE(capped.UnionWith(full).ok());  // two first stages: within the cap
  CHECK(capped.stage_count() == 2);
  s = capped.UnionWith(K::Make(o));  // an empty one: ORs in, no copy, nothing to cap
  CHECK(s.ok());
  ScalableFilter third = K::Make(o);
  third.InsertMany(std::span<const uint64_t>(DistinctInts(1000, uint64_t{1} << 33)));
  const std::string two = capped.SaveToBytes().value();
  s = capped.UnionWith(third);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(s.message().find("memory cap") != std::string_view::npos);
  CHECK(capped.SaveToBytes().value() == two);
  CHECK(capped_before != two);

  // A non-scaling filter has its one stage: a union that overfills it is still refused.
  o = K::Sized(1000, 0.01);
  o.scaling = false;
  ScalableFilter x = K::Make(o);
  ScalableFilter y = K::Make(o);
  x.InsertMany(std::span<const uint64_t>(DistinctInts(800, 0)));
  y.InsertMany(std::span<const uint64_t>(DistinctInts(800, 1)));
  const uint64_t x_keys = x.stage_keys(0);  // 800 less the false positives among them
  s = x.UnionWith(y);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message().find("capacity") != std::string_view::npos);
  CHECK(x.stage_count() == 1);
  CHECK(x.stage_keys(0) == x_keys);
}

TEST_CASE("in concurrent mode a union overlaps lookups, which never miss a key") {
  ScalableOptions o = K::Sized(1000, 0.01);
  o.memory.concurrent = true;
  ScalableFilter a = K::Make(o);
  ScalableFilter b = K::Make(o);
  const std::vector<uint64_t> a_keys = DistinctInts(5000, 0);
  a.InsertMany(std::span<const uint64_t>(a_keys));
  b.InsertMany(std::span<const uint64_t>(DistinctInts(5000, 1)));
  std::atomic<bool> done{false};
  std::atomic<uint64_t> missed{0};
  std::thread reader([&] {
    do {
      missed += a_keys.size() - a.MayContainMany(std::span<const uint64_t>(a_keys));
    } while (!done.load());
  });
  const absl::Status s = a.UnionWith(b);
  done = true;
  reader.join();
  REQUIRE(s.ok());
  CHECK(missed == 0);
  CHECK(a.MayContainMany(std::span<const uint64_t>(DistinctInts(5000, 1))) == 5000);
}

TEST_CASE("Clear goes back to one empty stage") {
  ScalableFilter f = K::Make(K::Sized(1000, 0.01));
  const uint64_t one_stage = f.memory_bytes();
  f.InsertMany(std::span<const uint64_t>(DistinctInts(10'000, 0)));
  CHECK(f.stage_count() == 4);
  CHECK(f.memory_bytes() > 10 * one_stage);
  f.Clear();
  CHECK(f.stage_count() == 1);
  CHECK(f.memory_bytes() == one_stage);
  CHECK(f.EstimatedCount() == 0);
  CHECK(f.EstimatedFpr() == 0);
  CHECK(f.MayContainMany(std::span<const uint64_t>(DistinctInts(10'000, 0))) == 0);
}

}  // namespace
}  // namespace bloomery
