// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/windowed_filter.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace bloomery {
namespace {

using std::chrono::seconds;
using testing::DistinctInts;
using testing::MakeOrFail;
using testing::WithinBinomialBound;

constexpr int64_t kSecond = 1'000'000'000;

// A clock the test moves by hand (thread-safe, for the concurrency case).
struct FakeClock {
  std::atomic<int64_t> now{0};
  WindowClock Get() {
    return [this] { return now.load(); };
  }
};

WindowedOptions KeyWindow(uint64_t window_keys, uint32_t generations = 4) {
  WindowedOptions o;
  o.capacity = window_keys;
  o.generations = generations;
  return o;
}

WindowedOptions TimeWindow(FakeClock& clock, int64_t window_seconds, uint64_t capacity = 10'000) {
  WindowedOptions o;
  o.capacity = capacity;
  o.window = seconds(window_seconds);
  o.clock = clock.Get();
  return o;
}

// Absent keys among `keys` that the filter reports present.
uint64_t MaybeCount(const WindowedFilter& f, const std::vector<uint64_t>& keys) {
  return f.MayContainMany(std::span<const uint64_t>(keys));
}

TEST_CASE("key-count window: exactly the last W*(G-1)/G .. W inserts are kept") {
  // W = 4000 keys, G = 4: generations of 1000 counted inserts. At fpr 1e-9 no insert is a false
  // positive, so every insert counts and the generation boundaries are exact.
  WindowedOptions o = KeyWindow(4000);
  o.fpr = 1e-9;
  auto f = MakeOrFail<WindowedFilter>(o);
  for (uint64_t i = 0; i < 10'000; ++i) REQUIRE(f.Insert(i));
  // Generations 6..9 are live: keys 6000..9999, the last W.
  CHECK(f.epoch() == 9);
  std::vector<uint64_t> live, old;
  for (uint64_t i = 0; i < 10'000; ++i) (i < 6000 ? old : live).push_back(i);
  CHECK(MaybeCount(f, live) == live.size());
  CHECK(MaybeCount(f, old) == 0);
  // One more insert starts generation 10 and forgets 6000..6999: what stays is at least the last
  // W*(G-1)/G = 3000 inserts before it.
  CHECK(f.Insert(uint64_t{10'000}));
  CHECK(f.epoch() == 10);
  for (uint64_t i = 7000; i <= 10'000; ++i) REQUIRE(f.MayContain(i));
  CHECK(MaybeCount(f, DistinctInts(500, 6000)) == 0);  // 6000, 6002, ... 6998
}

TEST_CASE("key-count window at a practical FPR: keys kept W*(G-1)/G, gone by W") {
  // A key that is a false positive in the newest generation is not added and not counted, so
  // boundaries drift by those few; the guarantee is in counted inserts.
  auto f = MakeOrFail<WindowedFilter>(KeyWindow(4000));
  for (uint64_t i = 0; i < 10'000; ++i) (void)f.Insert(i);
  for (uint64_t i = 7000; i < 10'000; ++i) REQUIRE(f.MayContain(i));
  std::vector<uint64_t> old;
  for (uint64_t i = 0; i < 5000; ++i) old.push_back(i);
  CHECK(WithinBinomialBound(MaybeCount(f, old), old.size(), f.expected_fpr()));
}

TEST_CASE("duration window with a fake clock: kept at least W*(G-1)/G, gone at W") {
  FakeClock clock;
  clock.now = 1000 * kSecond;  // the origin: epoch 0 covers [1000 s, 1025 s)
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));
  clock.now += 24 * kSecond + kSecond / 2;  // late in generation 0
  CHECK(f.Insert("late"));
  clock.now += kSecond;  // 1025.5 s: generation 1
  CHECK(f.Insert("early"));
  // "late" was inserted at 1024.5 s; generation 0 ends its life at 1100 s: kept 75.5 s >= 75 s.
  clock.now = 1100 * kSecond - 1;
  CHECK(f.MayContain("late"));
  CHECK(f.MayContain("early"));
  clock.now = 1100 * kSecond;  // lookups alone see the expiry: no insert, no Advance
  CHECK_FALSE(f.MayContain("late"));
  CHECK(f.MayContain("early"));
  clock.now = 1125 * kSecond;  // "early" (1025.5 s) lives until 1125 s: 99.5 s <= W
  CHECK_FALSE(f.MayContain("early"));
  CHECK(f.Insert("late"));  // expired keys are new again
  CHECK(f.epoch() == 5);
}

TEST_CASE("a clock that jumps past the whole window forgets everything") {
  FakeClock clock;
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));
  for (uint64_t i = 0; i < 1000; ++i) (void)f.Insert(i);
  clock.now = 10'000 * kSecond;
  f.Advance();
  CHECK(f.epoch() == 400);
  CHECK(f.EstimatedCount() == doctest::Approx(0.0));
  std::vector<uint64_t> keys = DistinctInts(1000, 0);
  CHECK(MaybeCount(f, keys) == 0);
  clock.now = 5000 * kSecond;  // and stepping back never revives them
  CHECK(MaybeCount(f, keys) == 0);
}

TEST_CASE("refresh policies: a cache guard refreshes, a revisit crawl keeps the first-seen age") {
  FakeClock clock;
  WindowedOptions o = TimeWindow(clock, 100);
  auto refreshing = MakeOrFail<WindowedFilter>(o);
  o.refresh = Refresh::kKeepFirstSeen;
  auto first_seen = MakeOrFail<WindowedFilter>(o);
  CHECK(refreshing.Insert("page"));
  CHECK(first_seen.Insert("page"));
  clock.now = 60 * kSecond;
  CHECK_FALSE(refreshing.Insert("page"));  // seen within the window
  CHECK_FALSE(first_seen.Insert("page"));
  clock.now = 130 * kSecond;
  CHECK(refreshing.MayContain("page"));  // its age restarted at 60 s
  CHECK_FALSE(first_seen.MayContain("page"));
  CHECK(first_seen.Insert("page"));  // due for a revisit
}

TEST_CASE("key-count mode counts only inserts that add a key to the newest generation") {
  auto f = MakeOrFail<WindowedFilter>(KeyWindow(400));  // generations of 100
  for (int round = 0; round < 5; ++round) {
    for (uint64_t i = 0; i < 100; ++i) (void)f.Insert(i);
  }
  CHECK(f.epoch() == 0);  // 500 inserts, 100 distinct: the newest generation is not full
  WindowedOptions o = KeyWindow(400);
  o.refresh = Refresh::kKeepFirstSeen;
  auto g = MakeOrFail<WindowedFilter>(o);
  for (uint64_t i = 0; i < 100; ++i) CHECK(g.Insert(i));
  for (uint64_t i = 0; i < 100; ++i) CHECK_FALSE(g.Insert(i));
  CHECK(g.epoch() == 0);
}

TEST_CASE("the FPR bound holds over the whole window at capacity") {
  for (uint32_t generations : {2u, 4u, 8u}) {
    CAPTURE(generations);
    WindowedOptions o = KeyWindow(80'000, generations);
    o.fpr = 0.01;
    auto f = MakeOrFail<WindowedFilter>(o);
    CHECK(f.expected_fpr() <= 0.01);
    CHECK(f.expected_fpr() > 0.008);  // planned tight, not oversized
    const std::vector<uint64_t> keys = DistinctInts(80'000, 0);
    // A few keys are false positives already at their insert (reported seen).
    CHECK(f.InsertMany(std::span<const uint64_t>(keys)) >= keys.size() * 99 / 100);
    CHECK(f.epoch() == generations - 1);  // every generation full, none forgotten yet
    CHECK(MaybeCount(f, keys) == keys.size());
    const std::vector<uint64_t> absent = DistinctInts(400'000, 1);
    const uint64_t hits = MaybeCount(f, absent);
    CHECK(WithinBinomialBound(hits, absent.size(), f.expected_fpr()));
    CHECK(WithinBinomialBound(hits, absent.size(), f.EstimatedFpr()));
    CHECK(f.EstimatedCount() == doctest::Approx(80'000).epsilon(0.03));
  }
}

TEST_CASE("batch forms give the single-key answers") {
  auto single = MakeOrFail<WindowedFilter>(KeyWindow(1000));
  auto batch = MakeOrFail<WindowedFilter>(KeyWindow(1000));
  std::vector<uint64_t> keys;
  testing::SplitMix64 rng(7);
  for (int i = 0; i < 3000; ++i) keys.push_back(rng.Below(1500));  // repeats, and rotations
  std::vector<bool> expected;
  for (uint64_t k : keys) expected.push_back(single.Insert(k));
  std::unique_ptr<bool[]> was_new(new bool[keys.size()]);
  const size_t fresh = batch.InsertMany(std::span<const uint64_t>(keys),
                                        std::span<bool>(was_new.get(), keys.size()));
  size_t expected_fresh = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    REQUIRE(was_new[i] == expected[i]);
    expected_fresh += expected[i];
  }
  CHECK(fresh == expected_fresh);
  CHECK(batch.epoch() == single.epoch());
  for (uint64_t k = 0; k < 1500; ++k) REQUIRE(batch.MayContain(k) == single.MayContain(k));
}

TEST_CASE("merge: generation by generation, at the same epoch only") {
  auto a = MakeOrFail<WindowedFilter>(KeyWindow(4000));
  auto b = MakeOrFail<WindowedFilter>(KeyWindow(4000));
  const std::vector<uint64_t> left = DistinctInts(900, 0), right = DistinctInts(900, 1);
  (void)a.InsertMany(std::span<const uint64_t>(left));
  (void)b.InsertMany(std::span<const uint64_t>(right));
  REQUIRE(a.UnionWith(b).ok());
  CHECK(MaybeCount(a, left) == left.size());
  CHECK(MaybeCount(a, right) == right.size());
  const std::vector<uint64_t> more = DistinctInts(200, 2'000'000);
  (void)b.InsertMany(std::span<const uint64_t>(more));  // b rotates to epoch 1
  CHECK(a.UnionWith(b).code() == absl::StatusCode::kFailedPrecondition);
  WindowedOptions other = KeyWindow(4000);
  other.seed = 99;
  auto c = MakeOrFail<WindowedFilter>(other);
  CHECK(a.CheckCompatible(c).code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("generation() reports each generation's epoch, liveness and keys") {
  auto f = MakeOrFail<WindowedFilter>(KeyWindow(4000));
  const std::vector<uint64_t> keys = DistinctInts(2500, 0);
  (void)f.InsertMany(std::span<const uint64_t>(keys));
  CHECK(f.epoch() == 2);
  CHECK(f.generation(0).live);
  CHECK(f.generation(0).epoch == 2);
  CHECK(f.generation(0).estimated_keys == doctest::Approx(500).epsilon(0.1));
  CHECK(f.generation(2).estimated_keys == doctest::Approx(1000).epsilon(0.1));
  CHECK_FALSE(f.generation(3).live);  // no epoch -1
}

TEST_CASE("option errors name the field") {
  auto code = [](const WindowedOptions& o) { return WindowedFilter::Create(o).status().code(); };
  WindowedOptions o;
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);  // capacity 0
  o.capacity = 1000;
  CHECK(code(o) == absl::StatusCode::kOk);
  o.generations = 1;
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  o.generations = 65;
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  o.generations = 4;
  o.window = std::chrono::nanoseconds(-1);
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  o.window = std::chrono::nanoseconds(3);  // shorter than one nanosecond per generation
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  o.window = seconds(1);
  o.fpr = 1.0;
  CHECK(code(o) == absl::StatusCode::kInvalidArgument);
  o.fpr = 0.01;
  o.max_memory_bytes = 1024;
  CHECK(code(o) == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("concurrent inserts while rotating by count lose no completed insert" *
          doctest::test_suite("concurrency")) {
  WindowedOptions o = KeyWindow(20'000);  // rotates every 5000 counted inserts
  o.concurrent = true;
  auto f = MakeOrFail<WindowedFilter>(o);
  constexpr int kWriters = 2;
  constexpr uint64_t kPerWriter = 30'000;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> lost{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (uint64_t i = 0; i < kPerWriter; ++i) {
        const uint64_t key = i * kWriters + w;
        const uint64_t before = f.epoch();
        (void)f.Insert(key);
        const bool present = f.MayContain(key);
        // A key lives until G - 1 = 3 rotations after its own generation: if fewer happened while
        // this thread ran (it may be descheduled for any number), the key must be there.
        if (!present && f.epoch() - before < 3) lost.fetch_add(1);
      }
    });
  }
  threads.emplace_back([&] {  // lookups racing the rotations (for ThreadSanitizer)
    uint64_t seen = 0;
    for (uint64_t k = 0; !done.load(); ++k) seen += f.MayContain(k % 60'000);
    return seen;
  });
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done = true;
  threads.back().join();
  CHECK(lost.load() == 0);
  CHECK(f.epoch() >= 10);
}

TEST_CASE("rotation by time never blocks lookups and keeps young keys" *
          doctest::test_suite("concurrency")) {
  FakeClock clock;
  WindowedOptions o = TimeWindow(clock, 100, 200'000);
  o.concurrent = true;
  auto f = MakeOrFail<WindowedFilter>(o);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> lost{0};
  std::thread ticker([&] {
    for (int t = 0; t < 2000 && !done.load(); ++t) {
      clock.now.fetch_add(kSecond / 10);  // 0.1 s per tick: a rotation every 250 ticks
      f.Advance();
      std::this_thread::yield();
    }
    done = true;
  });
  std::thread writer([&] {
    for (uint64_t i = 0; !done.load(); ++i) {
      const int64_t before = clock.now.load();
      (void)f.Insert(i);
      const bool present = f.MayContain(i);
      // Kept at least W*(G-1)/G = 75 s, however the threads were scheduled meanwhile.
      if (!present && clock.now.load() - before < 75 * kSecond) lost.fetch_add(1);
    }
  });
  std::thread reader([&] {
    uint64_t k = 0;
    while (!done.load()) (void)f.MayContain(k++);
  });
  ticker.join();
  writer.join();
  reader.join();
  CHECK(lost.load() == 0);
  CHECK(f.epoch() >= 7);
}

}  // namespace
}  // namespace bloomery
