// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/counting_filter.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "layouts/internal/block_layout.h"
#include "layouts/internal/counting_layout.h"
#include "plan/internal/sliced_fpr.h"
#include "test_util.h"

namespace bloomery {
namespace {

using testing::DistinctInts;
using testing::DistinctStrings;
using testing::SplitMix64;
using testing::WithinBinomialBound;

using K = testing::For<CountingFilter>;

CountingOptions Sized(uint64_t capacity, double fpr, uint32_t counter_bits = 4,
                      bool concurrent = false) {
  CountingOptions o = testing::Sized<CountingFilter>(capacity, fpr, concurrent);
  o.counter_bits = counter_bits;
  return o;
}

// Counter `c` of 64-bit word `word` of the filter, read from bytes() (little-endian words).
uint64_t CounterAt(std::span<const uint8_t> bytes, uint64_t word, uint32_t shift,
                   uint32_t counter_bits) {
  uint64_t w;
  std::memcpy(&w, bytes.data() + word * 8, 8);
  return (w >> shift) & ((uint64_t{1} << counter_bits) - 1);
}

// Counts saturated counters directly from the bytes, independently of the filter's bookkeeping.
uint64_t ScanSaturated(const CountingFilter& f) {
  uint64_t count = 0;
  for (uint64_t word = 0; word < f.bytes().size() / 8; ++word) {
    for (uint32_t shift = 0; shift < 64; shift += f.counter_bits()) {
      count += CounterAt(f.bytes(), word, shift, f.counter_bits()) == f.max_count();
    }
  }
  return count;
}

TEST_CASE("formula: slices of 64 counters are exactly the blocked formula of plan.h") {
  for (uint32_t k = 1; k <= kMaxCountingHashes; ++k) {
    CAPTURE(k);
    for (double load : {1.0, 7.0, 51.2, 200.0}) {
      CHECK(detail::SlicedFprAtLoad(load, k, 8, 64) ==
            doctest::Approx(BlockedFprAtLoad(load, k)).epsilon(1e-9));
    }
    CHECK(detail::SlicedFpr(1e6, 20'000, k, 8, 64) ==
          doctest::Approx(BlockedFpr(1e6, 20'000, k)).epsilon(1e-9));
  }
}

TEST_CASE("formula: k == 8 uses every slice, so a line is (1 - (1 - 1/w)^L)^8") {
  for (uint32_t counter_bits : {4u, 8u}) {
    const double w = 64.0 / counter_bits;
    for (double load : {1.0, 5.0, 12.8, 40.0}) {
      CHECK(detail::SlicedFprAtLoad(load, 8, 8, static_cast<uint32_t>(w)) ==
            doctest::Approx(std::pow(1 - std::pow(1 - 1 / w, load), 8)).epsilon(1e-9));
    }
  }
  // One key, k = 1: it sets 1 of the line's 128 (or 64) counters; a query hits it with 1/128.
  CHECK(CountingFpr(1, 1, 1, 4) == doctest::Approx(1.0 / 128).epsilon(1e-9));
  CHECK(CountingFpr(1, 1, 1, 8) == doctest::Approx(1.0 / 64).epsilon(1e-9));
  CHECK(CountingFpr(0, 10, 4, 4) == 0.0);
  CHECK(CountingFpr(10, 10, 4, 5) == 1.0);  // invalid width
  CHECK(CountingFpr(10, 10, 9, 4) == 1.0);  // too many hashes
}

TEST_CASE("planner: predicted FPR <= requested, one line less breaks the promise") {
  for (uint32_t counter_bits : {4u, 8u}) {
    for (double n : {1.0, 100.0, 1e5, 1e8}) {
      for (double p = 0.3; p >= 1e-6; p /= 4.1) {
        CAPTURE(counter_bits);
        CAPTURE(n);
        CAPTURE(p);
        absl::StatusOr<CountingPlan> plan =
            PlanCountingFilter(Sized(static_cast<uint64_t>(n), p, counter_bits));
        REQUIRE(plan.ok());
        CHECK(plan->expected_fpr <= p);
        CHECK(plan->expected_fpr == CountingFpr(n, plan->blocks, plan->hashes, counter_bits));
        CHECK(plan->hashes >= 1);
        CHECK(plan->hashes <= kMaxCountingHashes);
        if (plan->blocks > 1) {
          CHECK(CountingFpr(n, plan->blocks - 1, plan->hashes, counter_bits) > p);
        }
        // No other k would have needed fewer lines.
        for (uint32_t k = 1; k <= kMaxCountingHashes; ++k) {
          CountingOptions fixed = Sized(static_cast<uint64_t>(n), p, counter_bits);
          fixed.hashes = k;
          absl::StatusOr<CountingPlan> other = PlanCountingFilter(fixed);
          REQUIRE(other.ok());
          CHECK(other->blocks >= plan->blocks);
        }
      }
    }
  }
}

TEST_CASE("planner: memory at 1% against BlockedFilter") {
  absl::StatusOr<CountingPlan> four = PlanCountingFilter(Sized(1'000'000, 0.01, 4));
  absl::StatusOr<CountingPlan> eight = PlanCountingFilter(Sized(1'000'000, 0.01, 8));
  absl::StatusOr<Plan> blocked = PlanFor(1'000'000, 0.01);
  REQUIRE(four.ok());
  REQUIRE(eight.ok());
  REQUIRE(blocked.ok());
  MESSAGE("1% at 1e6 keys: counting 4-bit "
          << four->bits_per_key << " bits/key (k=" << four->hashes << ", " << four->bits_per_key / 4
          << " counters/key), "
          << "8-bit " << eight->bits_per_key << " (k=" << eight->hashes << "), blocked "
          << blocked->bits_per_key << " (k=" << blocked->hashes << ")");
  // Counters cost 4x the bits of a bit, and narrower slices cost a little more on top.
  CHECK(four->bits_per_key >= 4 * blocked->bits_per_key);
  CHECK(four->bits_per_key < 5 * blocked->bits_per_key);
  CHECK(eight->bits_per_key > four->bits_per_key * 2);
}

TEST_CASE("layout: Insert increments exactly the counters counting_layout.h names") {
  for (uint32_t counter_bits : {4u, 8u}) {
    for (uint32_t k = 1; k <= kMaxCountingHashes; ++k) {
      CAPTURE(counter_bits);
      CAPTURE(k);
      CountingOptions o;
      o.bits = uint64_t{64} * kBlockBits;
      o.hashes = k;
      o.counter_bits = counter_bits;
      CountingFilter f = K::Make(o);
      const KeyHash h = HashKey("layout", f.seed());
      f.Insert(h);
      f.Insert(h);
      detail::CounterProbes probes;
      detail::MakeCounterProbes(h, counter_bits == 4 ? 2 : 3, probes);
      const uint64_t base_word = detail::BlockIndex(h, f.blocks()) * 8;
      uint64_t total = 0;
      for (uint64_t word = 0; word < f.bytes().size() / 8; ++word) {
        for (uint32_t shift = 0; shift < 64; shift += counter_bits) {
          total += CounterAt(f.bytes(), word, shift, counter_bits);
        }
      }
      CHECK(total == 2 * k);
      for (uint32_t i = 0; i < k; ++i) {
        CHECK(CounterAt(f.bytes(), base_word + probes.word[i], probes.shift[i], counter_bits) == 2);
      }
      CHECK(f.Count(h) == 2);
      CHECK(f.EstimatedCount() == 2.0);
    }
  }
}

TEST_CASE("no false negatives; batch answers equal single-key answers; every k, both modes") {
  for (uint32_t counter_bits : {4u, 8u}) {
    for (bool concurrent : {false, true}) {
      for (uint32_t k = 1; k <= kMaxCountingHashes; ++k) {
        CAPTURE(counter_bits);
        CAPTURE(concurrent);
        CAPTURE(k);
        CountingOptions o;
        o.bits = 1 << 20;
        o.hashes = k;
        o.counter_bits = counter_bits;
        o.memory.concurrent = concurrent;
        CountingFilter single = K::Make(o);
        CountingFilter batch = K::Make(o);
        const std::vector<std::string> strings = DistinctStrings(3000, "key-");
        const std::vector<std::string_view> views(strings.begin(), strings.end());
        std::vector<uint64_t> ints = DistinctInts(3000, 1);
        ints.insert(ints.end(), ints.begin(), ints.begin() + 100);  // duplicates in one batch
        std::unique_ptr<bool[]> answers(new bool[ints.size()]);
        size_t single_new = 0;
        for (const std::string& s : strings) single.Insert(s);
        for (uint64_t i : ints) single_new += single.Insert(i);
        batch.InsertMany(std::span<const std::string_view>(views));
        const size_t batch_new = batch.InsertMany(std::span<const uint64_t>(ints),
                                                  std::span<bool>(answers.get(), ints.size()));
        CHECK(batch_new == single_new);
        for (size_t i = 3000; i < ints.size(); ++i) CHECK_FALSE(answers[i]);
        CHECK(std::ranges::equal(single.bytes(), batch.bytes()));
        for (uint64_t i : ints) REQUIRE(single.MayContain(i));
        CHECK(batch.MayContainMany(std::span<const std::string_view>(views)) == views.size());
        // Erase every string once, in batch and one by one: same state, ints all still present.
        const size_t erased = batch.EraseMany(std::span<const std::string_view>(views),
                                              std::span<bool>(answers.get(), views.size()));
        CHECK(erased == views.size());
        for (const std::string& s : strings) REQUIRE(single.Erase(s) == EraseResult::kErased);
        CHECK(std::ranges::equal(single.bytes(), batch.bytes()));
        for (uint64_t i : ints) REQUIRE(batch.MayContain(i));
        CHECK(batch.MayContainMany(std::span<const uint64_t>(ints)) == ints.size());
      }
    }
  }
}

TEST_CASE("KeyHash batch forms equal the single-key calls") {
  CountingFilter single = K::Make(Sized(10'000, 0.01));
  CountingFilter batch = K::Make(Sized(10'000, 0.01));
  std::vector<KeyHash> hashes;
  for (uint64_t key : DistinctInts(5000, 0)) hashes.push_back(HashKey(key, batch.seed()));
  hashes.push_back(hashes[7]);  // a duplicate inside the batch
  std::unique_ptr<bool[]> answers(new bool[hashes.size()]);
  const std::span<bool> results(answers.get(), hashes.size());
  size_t single_new = 0;
  for (const KeyHash& h : hashes) single_new += single.Insert(h);
  CHECK(batch.InsertMany(std::span<const KeyHash>(hashes), results) == single_new);
  CHECK_FALSE(answers[hashes.size() - 1]);
  CHECK(std::ranges::equal(single.bytes(), batch.bytes()));
  CHECK(batch.MayContainMany(std::span<const KeyHash>(hashes)) == hashes.size());
  CHECK(batch.EraseMany(std::span<const KeyHash>(hashes), results) == hashes.size());
  for (const KeyHash& h : hashes) REQUIRE(single.Erase(h) == EraseResult::kErased);
  CHECK(std::ranges::equal(single.bytes(), batch.bytes()));
  CHECK(batch.NonZeroCounters() == 0);
  // Everything is gone now: a batch erase refuses every key and changes nothing.
  CHECK(batch.EraseMany(std::span<const KeyHash>(hashes), results) == 0);
  for (size_t i = 0; i < hashes.size(); ++i) CHECK_FALSE(answers[i]);
}

// Random insert / erase / lookup operations over a small universe, checked against an exact
// multiset. The filter is planned for 1000 keys and the universe has 1500, so counters are shared
// by several live keys, and a few hot keys saturate theirs.
void RunAgainstModel(uint32_t counter_bits, bool concurrent) {
  CAPTURE(counter_bits);
  CAPTURE(concurrent);
  constexpr uint64_t kUniverse = 1500;
  constexpr int kOperations = 1'000'000;
  CountingFilter f = K::Make(Sized(1000, 0.02, counter_bits, concurrent));
  std::vector<int64_t> multiplicity(kUniverse, 0);
  SplitMix64 rng(counter_bits * 2 + concurrent);
  uint64_t refused = 0;
  uint64_t skipped_false_positives = 0;
  uint64_t checked_counts = 0;
  for (int op = 0; op < kOperations; ++op) {
    // Skewed: low keys are drawn far more often, so they pile up and saturate counters.
    const uint64_t choice = rng.Below(100);
    // Erases are tried twice as often as inserts, so a typical key's multiplicity is a walk
    // reflected at 0 (present about half the time, mean 1, sometimes 10+); five hot keys only
    // ever get inserts and pile up to thousands, saturating their counters.
    const uint64_t key = choice < 2 ? rng.Below(5) : rng.Below(kUniverse);
    if (choice < 25) {
      f.Insert(key);
      ++multiplicity[key];
    } else if (choice < 75) {
      if (multiplicity[key] > 0) {
        REQUIRE(f.Erase(key) == EraseResult::kErased);
        --multiplicity[key];
      } else if (!f.MayContain(key)) {
        const std::vector<uint8_t> before = testing::Bytes(f);
        REQUIRE(f.Erase(key) == EraseResult::kNotFound);
        REQUIRE(std::ranges::equal(before, f.bytes()));
        ++refused;
      } else {
        ++skipped_false_positives;  // erasing it would break the Erase precondition
      }
    } else {
      const uint32_t count = f.Count(key);
      REQUIRE(f.MayContain(key) == (count > 0));
      if (multiplicity[key] > 0) REQUIRE(count > 0);
      if (count < f.max_count()) {
        REQUIRE(static_cast<int64_t>(count) >= multiplicity[key]);
        ++checked_counts;
      }
    }
  }
  for (uint64_t key = 0; key < kUniverse; ++key) {
    if (multiplicity[key] > 0) REQUIRE(f.MayContain(key));
    const uint32_t count = f.Count(key);
    if (count < f.max_count()) REQUIRE(static_cast<int64_t>(count) >= multiplicity[key]);
  }
  const uint64_t present = std::ranges::count_if(multiplicity, [](int64_t m) { return m > 0; });
  // FPR over keys outside the universe, against the exact FPR of the filter's current counters.
  const uint64_t queries = 200'000;
  const size_t hits =
      f.MayContainMany(std::span<const uint64_t>(DistinctInts(queries, kUniverse * 2)));
  const double estimated = f.EstimatedFpr();
  MESSAGE("counter_bits=" << counter_bits << " present=" << present
                          << " saturated=" << f.saturated_counters() << "/" << f.counters()
                          << " refused=" << refused << " skipped_fp=" << skipped_false_positives
                          << " fpr measured=" << static_cast<double>(hits) / queries
                          << " exact-now=" << estimated);
  CHECK(WithinBinomialBound(hits, queries, estimated));
  CHECK(f.saturated_counters() == ScanSaturated(f));
  CHECK(refused > 1000);
  CHECK(checked_counts > 100'000);
  CHECK(f.saturated_counters() >= f.hashes());       // the hot keys saturated their counters
  CHECK(f.saturated_counters() < f.counters() / 4);  // but the test is not all saturation
}

TEST_CASE("property: 10^6 random operations against an exact multiset") {
  RunAgainstModel(4, false);
  RunAgainstModel(8, false);
  RunAgainstModel(4, true);
}

TEST_CASE("overflow: a key inserted 1000 times and erased 999 times is still present") {
  for (uint32_t counter_bits : {4u, 8u}) {
    CAPTURE(counter_bits);
    CountingFilter f = K::Make(Sized(1000, 0.01, counter_bits));
    for (int i = 0; i < 1000; ++i) f.Insert("hot");
    CHECK(f.Count("hot") == f.max_count());
    CHECK(f.saturated_counters() == f.hashes());
    for (int i = 0; i < 999; ++i) REQUIRE(f.Erase("hot") == EraseResult::kErased);
    CHECK(f.MayContain("hot"));
    CHECK(f.Count("hot") >= 1);
    // Saturated counters are sticky: the key can never be erased any more.
    CHECK(f.Erase("hot") == EraseResult::kErased);
    CHECK(f.MayContain("hot"));
    CHECK(f.saturated_counters() == ScanSaturated(f));
  }
  // Below saturation, counting is exact for a key alone in its line.
  CountingFilter f = K::Make(Sized(1000, 0.01, 8));
  for (int i = 0; i < 200; ++i) f.Insert("warm");
  CHECK(f.Count("warm") == 200);
  for (int i = 0; i < 199; ++i) REQUIRE(f.Erase("warm") == EraseResult::kErased);
  CHECK(f.Count("warm") == 1);
  CHECK(f.Erase("warm") == EraseResult::kErased);
  CHECK_FALSE(f.MayContain("warm"));
  CHECK(f.Erase("warm") == EraseResult::kNotFound);
  CHECK(f.saturated_counters() == 0);
}

TEST_CASE("erasing a false positive can make another key disappear, as documented") {
  // One line, k = 1: a key uses 1 of 128 counters, so among a few thousand candidates some key
  // lands on the victim's counter: a false positive that Erase cannot tell from a member.
  CountingOptions o;
  o.bits = 512;
  o.hashes = 1;
  CountingFilter f = K::Make(o);
  f.Insert("victim");
  uint64_t impostor = 0;
  while (!f.MayContain(impostor)) ++impostor;
  REQUIRE(impostor < 100'000);
  CHECK(f.Erase(impostor) == EraseResult::kErased);
  CHECK_FALSE(f.MayContain("victim"));
}

TEST_CASE("erasing restores the filter: inserting A and B then erasing B equals inserting A") {
  for (uint32_t counter_bits : {4u, 8u}) {
    for (bool concurrent : {false, true}) {
      const CountingOptions o = Sized(100'000, 0.01, counter_bits, concurrent);
      CountingFilter only_a = K::Make(o);
      CountingFilter both = K::Make(o);
      const std::vector<uint64_t> a = DistinctInts(50'000, 0);
      const std::vector<uint64_t> b = DistinctInts(50'000, 1);
      only_a.InsertMany(std::span<const uint64_t>(a));
      both.InsertMany(std::span<const uint64_t>(b));
      both.InsertMany(std::span<const uint64_t>(a));
      CHECK(both.EstimatedCount() == 100'000.0);  // exact: nothing saturated at this load
      REQUIRE(both.saturated_counters() == 0);
      CHECK(both.EraseMany(std::span<const uint64_t>(b)) == b.size());
      CHECK(std::ranges::equal(both.bytes(), only_a.bytes()));
      CHECK(both.EstimatedCount() == 50'000.0);
      both.Clear();
      CHECK(both.NonZeroCounters() == 0);
      CHECK(both.EstimatedCount() == 0.0);
      CHECK(both.EstimatedFpr() == 0.0);
      CHECK_FALSE(both.MayContain(a[0]));
    }
  }
}

// Fills a filter planned for (n, p); the measured FPR over absent keys must be within a binomial
// bound of the exact FPR of the actual counters, which must be within a few percent of the plan.
void CheckFpr(uint64_t n, double fpr, uint32_t counter_bits, bool concurrent) {
  CountingFilter f = K::Make(Sized(n, fpr, counter_bits, concurrent));
  const uint64_t queries = std::max<uint64_t>(2'000'000, static_cast<uint64_t>(400 / fpr));
  const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
  const double measured = static_cast<double>(hits) / static_cast<double>(queries);
  MESSAGE("n=" << n << " p=" << fpr << " counter_bits=" << counter_bits
               << " bits/key=" << f.plan().bits_per_key << " k=" << f.hashes()
               << " planned=" << f.plan().expected_fpr << " exact-now=" << f.EstimatedFpr()
               << " measured=" << measured);
  CHECK(WithinBinomialBound(hits, queries, f.EstimatedFpr()));
  CHECK(f.EstimatedFpr() == doctest::Approx(f.plan().expected_fpr).epsilon(0.05));
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr, 6.0));
  CHECK(f.plan().expected_fpr <= fpr);
}

TEST_CASE("measured FPR is within a statistical bound of the formula") {
  CheckFpr(200'000, 0.05, 4, false);
  CheckFpr(200'000, 0.01, 4, true);
  CheckFpr(100'000, 0.001, 4, false);
  CheckFpr(200'000, 0.01, 8, false);
}

TEST_CASE("UnionWith adds counters, saturating; incompatible filters are refused") {
  // (UnionWith equals inserting both filters' keys, for every kind and width: filter_test.cc.)
  for (uint32_t counter_bits : {4u, 8u}) {
    const CountingOptions o = Sized(100'000, 0.01, counter_bits);
    // A key in both filters is counted twice.
    CountingFilter a = K::Make(o);
    CountingFilter twice = K::Make(o);
    a.Insert("both");
    twice.Insert("both");
    twice.Insert("both");
    REQUIRE(a.UnionWith(a).ok());
    CHECK(a.Count("both") == 2);
    CHECK(std::ranges::equal(a.bytes(), twice.bytes()));

    // Saturation: a key inserted max-1 times in each filter is saturated in the union.
    CountingFilter hot = K::Make(o);
    for (uint32_t i = 0; i + 1 < hot.max_count(); ++i) hot.Insert("hot");
    REQUIRE(hot.saturated_counters() == 0);
    REQUIRE(hot.UnionWith(hot).ok());  // a filter may be merged with itself: doubles the counts
    CHECK(hot.Count("hot") == hot.max_count());
    CHECK(hot.saturated_counters() == hot.hashes());
    CHECK(hot.saturated_counters() == ScanSaturated(hot));
  }
  // Other seeds and sizes are refused for every kind (filter_test.cc); here, other k and widths.
  CountingFilter a = K::Make(Sized(100'000, 0.01));
  CountingOptions other_k = Sized(100'000, 0.01);
  other_k.hashes = a.hashes() == 1 ? 2 : 1;
  other_k.bits = a.plan().bits();
  CHECK(a.UnionWith(K::Make(other_k)).code() == absl::StatusCode::kFailedPrecondition);
  CountingOptions other_width = Sized(100'000, 0.01, 8);
  other_width.hashes = a.hashes();
  other_width.bits = a.plan().bits();
  CountingFilter wide = K::Make(other_width);
  REQUIRE(wide.blocks() == a.blocks());
  const absl::Status s = a.UnionWith(wide);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message().find("counter_bits") != std::string_view::npos);
}

TEST_CASE("explicit geometry: bits are the memory, rounded up to whole lines") {
  CountingOptions o;
  o.bits = 1000;
  o.hashes = 3;
  CountingFilter f = K::Make(o);
  CHECK(f.blocks() == 2);
  CHECK(f.memory_bytes() == 128);
  CHECK(f.counters() == 256);
  CHECK(f.hashes() == 3);
  CHECK(f.max_count() == 15);
  o.counter_bits = 8;
  CHECK(K::Make(o).counters() == 128);
  CHECK(K::Make(o).max_count() == 255);
  CHECK(f.Insert("a"));
  CHECK_FALSE(f.Insert("a"));
}

TEST_CASE("bad options get InvalidArgument (or ResourceExhausted), never an abort") {
  // (The errors every kind sized by FilterOptions shares: filter_test.cc.)
  auto code = [](const CountingOptions& o) { return CountingFilter::Create(o).status().code(); };
  auto message = [](const CountingOptions& o) {
    return std::string(CountingFilter::Create(o).status().message());
  };
  CountingOptions o = Sized(1000, 0.01);
  for (uint32_t bad : {0u, 1u, 2u, 3u, 5u, 16u, 32u}) {
    o.counter_bits = bad;
    CHECK(code(o) == absl::StatusCode::kInvalidArgument);
    CHECK(message(o).find("counter_bits") != std::string::npos);
  }
  CountingOptions no_capacity;
  no_capacity.bits = 4096;
  CHECK(code(no_capacity) == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bloomery
