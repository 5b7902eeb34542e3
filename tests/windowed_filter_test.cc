// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/windowed_filter.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "bloomery/any_filter.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/file.h"
#include "format/internal/format_codec.h"
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

// Every blocked shape a windowed filter's generations take (layout.h).
constexpr Layout kLayouts[] = {Layout::kLine512, Layout::kBlock256, Layout::kWord64};

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
  CHECK(WithinBinomialBound(MaybeCount(f, old), old.size(), f.planned_fpr()));
}

TEST_CASE("duration window with a fake clock: kept at least W*(G-1)/G, gone at W") {
  for (const Layout layout : kLayouts) {  // the bounds hold for every layout (issue #26)
    CAPTURE(LayoutName(layout));
    FakeClock clock;
    clock.now = 1000 * kSecond;  // the origin: epoch 0 covers [1000 s, 1025 s)
    WindowedOptions o = TimeWindow(clock, 100);
    o.layout = layout;
    auto f = MakeOrFail<WindowedFilter>(o);
    CHECK(f.layout() == layout);
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

// Every layout (issue #26): each generation planned exactly for its shape at the per-generation
// FPR; the window's FPR at capacity is the plan's, within 4 sigma.
TEST_CASE("the FPR bound holds over the whole window at capacity") {
  for (const Layout layout : kLayouts) {
    for (uint32_t generations : {2u, 4u, 8u}) {
      CAPTURE(LayoutName(layout));
      CAPTURE(generations);
      WindowedOptions o = KeyWindow(80'000, generations);
      o.fpr = 0.01;
      o.layout = layout;
      auto f = MakeOrFail<WindowedFilter>(o);
      CHECK(f.layout() == layout);
      const Plan& plan = f.generation_plan();
      absl::StatusOr<Plan> expected =
          PlanFor(80'000 / generations, -std::expm1(std::log1p(-0.01) / generations), layout);
      REQUIRE(expected.ok());
      CHECK(plan.layout == layout);
      CHECK(plan.bits == expected->bits);
      CHECK(plan.hashes == expected->hashes);
      CHECK(f.blocks() == plan.bits / FindBlockShape(layout)->block_bits);
      CHECK(f.memory_bytes() == WholeLineBytes(plan.bits * generations));
      CHECK(f.planned_fpr() <= 0.01);
      CHECK(f.planned_fpr() > 0.008);  // planned tight, not oversized
      const std::vector<uint64_t> keys = DistinctInts(80'000, 0);
      // A few keys are false positives already at their insert (reported seen).
      CHECK(f.InsertMany(std::span<const uint64_t>(keys)) >= keys.size() * 99 / 100);
      CHECK(f.epoch() == generations - 1);  // every generation full, none forgotten yet
      CHECK(MaybeCount(f, keys) == keys.size());
      const std::vector<uint64_t> absent = DistinctInts(1'000'000, 1);
      const uint64_t hits = MaybeCount(f, absent);
      MESSAGE(LayoutName(layout) << " G=" << generations << " bits/key "
                                 << 8.0 * static_cast<double>(f.memory_bytes()) / 80'000
                                 << " k=" << plan.hashes << " planned " << f.planned_fpr()
                                 << " measured " << static_cast<double>(hits) / 1e6);
      CHECK(WithinBinomialBound(hits, absent.size(), f.planned_fpr(), 4.0));
      CHECK(WithinBinomialBound(hits, absent.size(), f.EstimatedFpr(), 4.0));
      CHECK(f.EstimatedCount() == doctest::Approx(80'000).epsilon(0.03));
    }
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
  other.hashing.seed = 99;
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
  o.memory.max_memory_bytes = 1024;
  CHECK(code(o) == absl::StatusCode::kResourceExhausted);
}

// The bytes a filter saves, failing the test case if it cannot.
std::string Saved(const WindowedFilter& f) {
  absl::StatusOr<std::string> bytes = f.SaveToBytes();
  REQUIRE(bytes.ok());
  return *std::move(bytes);
}

// The file at `path` loaded with allow_dirty, as a read-write mapping of it keeps it DIRTY.
WindowedFilter LoadDirty(const std::string& path) {
  LoadOptions options;
  options.allow_dirty = true;
  absl::StatusOr<WindowedFilter> f = WindowedFilter::Load(path, options);
  REQUIRE(f.ok());
  return *std::move(f);
}

// `path` mapped with `mode` at `clock`, failing the test case if it cannot be.
WindowedFilter MapOrFail(const std::string& path, MapMode mode, WindowClock clock = {}) {
  absl::StatusOr<WindowedFilter> f = WindowedFilter::Map(path, mode, {}, std::move(clock));
  REQUIRE(f.ok());
  return *std::move(f);
}

WindowedFilter Reloaded(const std::string& bytes, WindowClock clock = {}) {
  absl::StatusOr<WindowedFilter> f = WindowedFilter::LoadFromBytes(bytes, {}, std::move(clock));
  REQUIRE(f.ok());
  return *std::move(f);
}

// Issue #30: generations of ceil(W/G) keys made a window last G*ceil(W/G) inserts (W = 1, G = 4
// forgot a key after 4 others; W = 5, G = 64 after 64). For every W and G a key is kept through
// floor(W*(G-1)/G) later counted inserts and gone after W, across a save and load mid-way.
// The bounds hold for every layout (issue #26).
TEST_CASE("key-count window, every W and G: kept through floor(W*(G-1)/G) inserts, gone after W") {
  for (const Layout layout : kLayouts)
    for (const uint32_t generations : {2u, 3u, 4u, 5u, 7u, 8u, 16u, 63u, 64u}) {
      for (uint64_t window = 1; window <= 20; ++window) {
        CAPTURE(LayoutName(layout));
        CAPTURE(generations);
        CAPTURE(window);
        WindowedOptions o = KeyWindow(window, generations);
        // No insert is a false positive: every insert counts. (word64 at 1e-12 would need 2 GB
        // for one key per generation of 64: a word's 8-bit slices are easily filled.)
        o.fpr = layout == Layout::kWord64 ? 1e-9 : 1e-12;
        o.layout = layout;
        auto f = MakeOrFail<WindowedFilter>(o);
        const uint64_t kept = window * (generations - 1) / generations;
        // Past several whole windows, so every generation's place in the cycle is met.
        const uint64_t inserts = 4 * window + generations;
        uint64_t early = 0;  // keys gone before `kept` later inserts
        uint64_t late = 0;   // keys present after `window` later inserts
        for (uint64_t i = 0; i < inserts; ++i) {
          if (i == inserts / 2) f = Reloaded(Saved(f));  // the file resumes at the same insert
          REQUIRE(f.Insert(i));
          for (uint64_t key = 0; key <= i; ++key) {
            const uint64_t later = i - key;
            const bool present = f.MayContain(key);
            early += later <= kept && !present;
            late += later >= window && present;
          }
        }
        CHECK(early == 0);
        CHECK(late == 0);
      }
    }
}

TEST_CASE("file round trip mid-window, key-count mode: rotation resumes at the same insert") {
  WindowedOptions o = KeyWindow(4000);
  o.fpr = 1e-9;  // no false positives: every insert counts, boundaries are exact
  o.refresh = Refresh::kKeepFirstSeen;
  auto f = MakeOrFail<WindowedFilter>(o);
  for (uint64_t i = 0; i < 5500; ++i) REQUIRE(f.Insert(i));
  REQUIRE(f.epoch() == 5);  // 500 inserts into generation 5
  const std::string path =
      (std::filesystem::temp_directory_path() / ("bloomery_windowed_" + std::to_string(getpid())))
          .string();
  REQUIRE(f.Save(path).ok());
  absl::StatusOr<WindowedFilter> loaded = WindowedFilter::Load(path);
  std::filesystem::remove(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->epoch() == 5);
  CHECK(loaded->refresh() == Refresh::kKeepFirstSeen);
  CHECK(loaded->capacity() == 4000);
  CHECK(loaded->fpr() == 1e-9);
  CHECK(loaded->CheckCompatible(f).ok());
  CHECK(Saved(*loaded) == Saved(f));  // every bit, count and parameter
  // 500 more inserts fill generation 5; the 501st starts generation 6 and forgets 2000..2999.
  for (uint64_t i = 5500; i < 6000; ++i) REQUIRE(loaded->Insert(i));
  CHECK(loaded->epoch() == 5);
  CHECK(loaded->MayContain(uint64_t{2000}));
  CHECK(loaded->Insert(uint64_t{6000}));
  CHECK(loaded->epoch() == 6);
  CHECK(MaybeCount(*loaded, DistinctInts(500, 2000)) == 0);
  for (uint64_t i = 3000; i <= 6000; ++i) REQUIRE(loaded->MayContain(i));
  for (uint64_t i = 5500; i <= 6000; ++i) (void)f.Insert(i);
  CHECK(Saved(*loaded) == Saved(f));  // exactly where the filter that never stopped is
}

TEST_CASE("file round trip mid-window, duration mode: expiry goes on by the clock") {
  FakeClock clock;
  clock.now = 1000 * kSecond;  // W = 100 s, G = 4: generations of 25 s from 1000 s
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));
  clock.now = 1010 * kSecond;
  (void)f.Insert("a");  // generation 0: gone at 1100 s
  clock.now = 1030 * kSecond;
  (void)f.Insert("b");  // generation 1: gone at 1125 s
  clock.now = 1060 * kSecond;
  (void)f.Insert("c");  // generation 2: gone at 1150 s
  const std::string bytes = Saved(f);
  clock.now = 1090 * kSecond;  // the process was down for 30 s
  WindowedFilter loaded = Reloaded(bytes, clock.Get());
  CHECK(loaded.epoch() == 2);
  CHECK(loaded.MayContain("a"));
  CHECK(loaded.MayContain("b"));
  CHECK(loaded.Insert("d"));  // generation 3, 1090 s: gone at 1175 s
  for (int64_t t : {1099, 1100, 1124, 1125, 1149, 1150, 1174, 1175}) {
    clock.now = t * kSecond;
    CAPTURE(t);
    CHECK(loaded.MayContain("a") == (t < 1100));
    CHECK(loaded.MayContain("b") == (t < 1125));
    CHECK(loaded.MayContain("c") == (t < 1150));
    CHECK(loaded.MayContain("d") == (t < 1175));
    CHECK(loaded.MayContain("a") == f.MayContain("a"));
  }
  // Loaded after the whole window passed: it holds nothing, as the filter that stayed up.
  clock.now = 1060 * kSecond + 100 * kSecond;
  WindowedFilter late = Reloaded(bytes, clock.Get());
  CHECK(late.EstimatedCount() == 0.0);
  CHECK(late.EstimatedFpr() == 0.0);
  CHECK_FALSE(late.MayContain("c"));
  CHECK(late.Insert("c"));
  // A clock behind the saved state never brings expired keys back, nor loses live ones.
  clock.now = 0;
  WindowedFilter behind = Reloaded(bytes, clock.Get());
  CHECK(behind.epoch() == 2);
  CHECK(behind.MayContain("a"));
  CHECK(behind.MayContain("c"));
}

// Duration mode: two filters created 20 s apart have generations that begin 20 s apart. Merged
// at the same epoch number, the other's key would follow this filter's schedule and expire at
// 100 s, 64 s after its insert, before the 75 s it is guaranteed (W = 100 s, G = 4).
TEST_CASE("merge, duration mode: windows that began at different times are refused") {
  FakeClock clock;
  auto a = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));  // epoch 0 began at 0 s
  clock.now = 20 * kSecond;
  auto b = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));  // at 20 s
  clock.now = 44 * kSecond;
  REQUIRE(b.Insert("late"));  // b's generation 0, [20 s, 45 s): kept until at least 119 s
  clock.now = 46 * kSecond;
  a.Advance();
  b.Advance();
  REQUIRE(a.epoch() == b.epoch());  // both 1, but [25 s, 50 s) against [45 s, 70 s)
  CHECK(a.CheckCompatible(b).code() == absl::StatusCode::kFailedPrecondition);
  const absl::Status s = a.UnionWith(b);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(absl::StrContains(s.message(), "began at the same time"));
  clock.now = 110 * kSecond;
  CHECK(b.MayContain("late"));
  CHECK_FALSE(a.MayContain("late"));  // nothing was merged
}

// Copies of one file share its origin: they merge at the epoch the clock says, each key kept for
// its own guaranteed time, and neither needs an Advance from the caller.
TEST_CASE("merge, duration mode: copies of one window merge at the clock's epoch") {
  FakeClock clock;
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));  // generations of 25 s from 0 s
  clock.now = 10 * kSecond;
  REQUIRE(f.Insert("x"));  // generation 0: gone at 100 s
  const std::string at_10s = Saved(f);
  WindowedFilter a = Reloaded(at_10s, clock.Get());
  WindowedFilter b = Reloaded(at_10s, clock.Get());
  clock.now = 60 * kSecond;
  REQUIRE(b.Insert("y"));   // b rotates to generation 2: gone at 150 s
  REQUIRE(a.epoch() == 0);  // a's stored epoch lags its clock's
  REQUIRE(a.CheckCompatible(b).ok());
  REQUIRE(a.UnionWith(b).ok());
  CHECK(a.epoch() == 2);
  for (int64_t t : {60, 99, 100, 149, 150}) {
    clock.now = t * kSecond;
    CAPTURE(t);
    CHECK(a.MayContain("x") == (t < 100));
    CHECK(a.MayContain("y") == (t < 150));
  }

  // `other` behind its clock: its generation 0 expired at 100 s but is still in its slot, which
  // this filter has since reused for generation 4; the expired keys must not come back.
  clock.now = 110 * kSecond;
  WindowedFilter stale = Reloaded(at_10s, clock.Get());  // stored epoch 0, "x" in slot 0
  WindowedFilter fresh = Reloaded(at_10s, clock.Get());
  REQUIRE(fresh.Insert("z"));  // generation 4, slot 0
  REQUIRE(fresh.UnionWith(stale).ok());
  CHECK_FALSE(fresh.MayContain("x"));
  CHECK(fresh.MayContain("z"));

  // A filter whose epoch is ahead of its clock (loaded with the clock behind its saved state)
  // cannot take the other's older generations: refused.
  clock.now = 60 * kSecond;
  const std::string at_60s = Saved(b);  // epoch 2
  clock.now = 0;
  WindowedFilter ahead = Reloaded(at_60s, clock.Get());
  WindowedFilter behind = Reloaded(at_10s, clock.Get());
  CHECK(behind.UnionWith(ahead).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(ahead.UnionWith(behind).code() == absl::StatusCode::kFailedPrecondition);
}

// W = 100 s, G = 4 (generations of 25 s from 0 s) at `clock`, holding "a" from 0 s (generation 0:
// gone at 100 s) and "b" from 30 s (generation 1: gone at 125 s); the clock is left at 30 s.
WindowedFilter AThenB(FakeClock& clock) {
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));
  REQUIRE(f.Insert("a"));
  clock.now = 30 * kSecond;
  REQUIRE(f.Insert("b"));
  return f;
}

// A filter saved with no insert or Advance since its keys expired: the file must record the
// expiry the clock has shown, or a reader whose clock is behind revives the keys (FORMAT.md: a
// clock behind the saved state keeps epoch E, nothing expired comes back).
TEST_CASE("save after keys expired: a clock behind the file never revives them") {
  FakeClock clock;
  WindowedFilter f = AThenB(clock);
  clock.now = 110 * kSecond;
  CHECK_FALSE(f.MayContain("a"));
  const std::string bytes = Saved(f);
  CHECK(f.epoch() == 1);  // Save is const: the filter itself has not rotated
  for (int64_t back : {0, 50, 110}) {
    clock.now = back * kSecond;
    CAPTURE(back);
    WindowedFilter loaded = Reloaded(bytes, clock.Get());
    CHECK(loaded.epoch() == 4);
    CHECK_FALSE(loaded.MayContain("a"));
    CHECK(loaded.MayContain("b"));
  }
  clock.now = 125 * kSecond;
  CHECK_FALSE(Reloaded(bytes, clock.Get()).MayContain("b"));
  // The very bytes the filter writes once it has rotated.
  clock.now = 110 * kSecond;
  f.Advance();
  CHECK(f.epoch() == 4);
  CHECK(Saved(f) == bytes);
}

TEST_CASE("the default clock is the Unix epoch's, so a saved window expires in another process") {
  WindowedOptions o;
  o.capacity = 1000;
  o.window = std::chrono::hours(1);
  auto f = MakeOrFail<WindowedFilter>(o);
  (void)f.Insert("k");
  const std::string bytes = Saved(f);
  uint64_t origin;
  std::memcpy(&origin, bytes.data() + 120, 8);  // param3 (docs/FORMAT.md, kind 5)
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  CHECK(static_cast<int64_t>(origin) <= now);
  CHECK(now - static_cast<int64_t>(origin) < 60 * kSecond);
  CHECK(Reloaded(bytes).MayContain("k"));
}

// Writes `value` at `offset` of a saved file and re-seals its checksums: a contradiction only the
// windowed reader can catch.
std::string Edited(std::string bytes, size_t offset, uint64_t value) {
  std::memcpy(bytes.data() + offset, &value, 8);
  std::span<uint8_t> image(reinterpret_cast<uint8_t*>(bytes.data()), bytes.size());
  REQUIRE(detail::RecomputeChecksums(image));
  return bytes;
}

// The filter whose file the hostile cases edit: G = 4, 1000 inserts a generation, mid-window.
WindowedFilter HostileBase() {
  auto f = MakeOrFail<WindowedFilter>(KeyWindow(4000));
  for (uint64_t i = 0; i < 2500; ++i) (void)f.Insert(i);
  return f;
}

// A header field of HostileBase's file set to `value`: a contradiction the reader must refuse
// with DataLoss whose message contains `says`.
struct HostileEdit {
  size_t offset;
  uint64_t value;
  const char* says;
};
std::vector<HostileEdit> HostileEdits(const WindowedFilter& f) {
  // Offsets in the fixed header (docs/FORMAT.md).
  constexpr size_t kFpr = 56, kInsertCount = 64, kParam0 = 96, kParam1 = 104, kParam2 = 112,
                   kParam3 = 120, kBits = 40;
  const uint64_t lines = 4 * f.blocks();
  uint64_t ragged = 3;  // a generation count the lines do not divide into
  while (lines % ragged == 0) ++ragged;
  std::vector<HostileEdit> cases = {
      {kParam0, 1, "generations"},
      {kParam0, 65, "generations"},
      {kParam0, 4 | (uint64_t{1} << 9), "option bits"},
      {kParam0, ragged, "whole lines"},
      {kParam1, 3, "window"},                  // 3 ns for 4 generations
      {kParam1, uint64_t{1} << 63, "window"},  // negative
      {kParam2, ~uint64_t{0}, "epoch"},
      {kParam2, uint64_t{1} << 63, "epoch"},  // epoch + 1 could reach the no-generation mark
      {kParam3, 1001, "inserts"},             // more than a generation's share
      {kInsertCount, 5, "insert count"},
      {kFpr, 0, "fpr"},
      {kFpr, std::bit_cast<uint64_t>(1e-12), "above its fpr"},
      {kBits, f.memory_bytes() * 8 + 512, "stage"},
  };
  // Eight generations over the same lines: each would hold half the keys at the same bits per
  // key, so the window's FPR would break its promise.
  if (lines % 8 == 0) cases.push_back({kParam0, 8, "above its fpr"});
  return cases;
}

TEST_CASE("hostile windowed files: a contradiction is DataLoss naming it, never a crash") {
  const WindowedFilter f = HostileBase();
  const std::string good = Saved(f);
  uint64_t param0;
  std::memcpy(&param0, good.data() + 96, 8);
  REQUIRE(param0 == 4);                       // G = 4, Refresh::kOnInsert
  REQUIRE(Edited(good, 96, param0) == good);  // re-sealing alone changes nothing
  absl::StatusOr<FileInfo> info = InspectBytes(good);
  REQUIRE(info.ok());
  CHECK(info->kind == FilterKind::kWindowed);
  CHECK(FilterKindName(info->kind) == "windowed");
  CHECK(info->capacity == 4000);
  for (const auto& c : HostileEdits(f)) {
    CAPTURE(c.offset);
    CAPTURE(c.value);
    const absl::Status s = WindowedFilter::LoadFromBytes(Edited(good, c.offset, c.value)).status();
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK(std::string(s.message()).find(c.says) != std::string::npos);
  }
  // Any flipped header byte and any truncation is refused; other kinds refuse the file.
  for (size_t i = 0; i < 4096; ++i) {
    std::string changed = good;
    changed[i] = static_cast<char>(changed[i] ^ 0x08);
    CAPTURE(i);
    REQUIRE_FALSE(WindowedFilter::LoadFromBytes(changed).ok());
  }
  for (size_t size = 0; size < good.size(); size += 97) {
    REQUIRE_FALSE(WindowedFilter::LoadFromBytes(std::string_view(good).substr(0, size)).ok());
  }
  CHECK(BlockedFilter::LoadFromBytes(good).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  FilterOptions blocked;
  blocked.capacity = 1000;
  absl::StatusOr<std::string> other = MakeOrFail<BlockedFilter>(blocked).SaveToBytes();
  REQUIRE(other.ok());
  CHECK(WindowedFilter::LoadFromBytes(*other).status().code() ==
        absl::StatusCode::kFailedPrecondition);
}

// A capacity near 2^64 once made a generation's share ceil(capacity / G) wrap to 0, and the
// first insert rotated forever (found by load_fuzzer). The share is computed without overflow; and
// such a file, whose generations' geometry cannot hold their share (an FPR at capacity that rounds
// to 1, no file can state it and no Create makes it), is refused at load as the planner refuses
// the geometry, rather than loaded as a filter that answers "maybe" to every key.
TEST_CASE("a capacity near 2^64 neither wraps a generation's share nor loads a useless filter") {
  CHECK(WindowedFilter::KeysPerGeneration(~uint64_t{0}, 4) == uint64_t{1} << 62);
  CHECK(WindowedFilter::KeysPerGeneration(4000, 4) == 1000);
  CHECK(WindowedFilter::KeysPerGeneration(4001, 4) == 1001);
  constexpr size_t kCapacity = 48, kFpr = 56, kParam3 = 120, kStageCapacity = 256 + 16;
  std::string bytes = Saved(HostileBase());
  bytes = Edited(bytes, kCapacity, ~uint64_t{0});
  bytes = Edited(bytes, kStageCapacity, ~uint64_t{0});
  bytes = Edited(bytes, kFpr, std::bit_cast<uint64_t>(std::nextafter(1.0, 0.0)));
  bytes = Edited(bytes, kParam3, 0);  // no inserts counted yet in the newest generation
  const absl::Status refused = WindowedFilter::LoadFromBytes(bytes).status();
  INFO(refused.ToString());
  CHECK(refused.code() == absl::StatusCode::kDataLoss);
  CHECK(refused.message().find("cannot hold") != absl::string_view::npos);
  // Create computes the same share: a capacity of 2^64 - 1 is refused for its size, not planned
  // as a generation of 0 keys.
  WindowedOptions o = KeyWindow(~uint64_t{0});
  CHECK_FALSE(WindowedFilter::Create(o).ok());
}

// Before issue #30 every generation took ceil(W/G) counted inserts, so a file may count more
// inserts into its newest generation than that generation's share is now (W = 5, G = 4: shares
// 1, 1, 1, 2; the old code counted up to 2 in each). Such a file still loads; its newest
// generation is full, so the next insert starts the next one, and the window keeps its bounds.
TEST_CASE("a key-count file counting past its generation's share (older files) loads, full") {
  constexpr size_t kParam3 = 120;
  WindowedOptions o = KeyWindow(5, 4);
  o.fpr = 1e-12;
  auto f = MakeOrFail<WindowedFilter>(o);
  REQUIRE(f.Insert(uint64_t{0}));
  REQUIRE(f.epoch() == 0);
  WindowedFilter old = Reloaded(Edited(Saved(f), kParam3, 2));  // ceil(5 / 4) counted
  CHECK(old.epoch() == 0);
  CHECK(old.MayContain(uint64_t{0}));
  CHECK(old.Insert(uint64_t{1}));
  CHECK(old.epoch() == 1);  // generation 0 held its share: the insert went to generation 1
  for (uint64_t key = 2; key <= 5; ++key) CHECK(old.Insert(key));
  CHECK_FALSE(old.MayContain(uint64_t{0}));  // gone after W = 5 later inserts
  CHECK(old.MayContain(uint64_t{2}));
}

TEST_CASE("a clock that outruns a rotation never keeps an insert rotating") {
  // Every read of this clock is 1 ns later, and a generation spans 1 ns (window = G ns): by the
  // time a rotation is done the clock says the next one is due. An insert rotates once and
  // inserts; the old loop re-read the clock after each rotation and never came out.
  std::atomic<int64_t> ticks{0};
  WindowedOptions o;
  o.capacity = 10'000;
  o.generations = 4;
  o.window = std::chrono::nanoseconds(4);
  o.clock = [&ticks] { return ticks.fetch_add(1); };
  auto f = MakeOrFail<WindowedFilter>(o);
  for (uint64_t key = 0; key < 1000; ++key) {
    (void)f.Insert(key);
    CHECK(f.MayContain(key));  // one clock read later: 1 generation old of 4, still live
  }
  CHECK(f.epoch() >= 1000);  // each insert rotated: the clock was honoured, not ignored
}

TEST_CASE("concurrent inserts while rotating by count lose no completed insert" *
          doctest::test_suite("concurrency")) {
  WindowedOptions o = KeyWindow(20'000);  // rotates every 5000 counted inserts
  o.memory.concurrent = true;
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
  o.memory.concurrent = true;
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

// A file in the temp directory, removed when the test case ends.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("bloomery_wmap_" + name + "_" + std::to_string(getpid())))
                  .string()) {}
  ~ScratchFile() { std::filesystem::remove(path_); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }
  std::string Contents() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void Write(const std::string& bytes) const {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
  }

 private:
  std::string path_;
};

// Exact boundaries in key-count mode: no false positive may count as a repeat.
WindowedOptions ExactKeyWindow() {
  WindowedOptions o = KeyWindow(4000);  // G = 4, 1000 counted inserts a generation
  o.fpr = 1e-9;
  o.refresh = Refresh::kKeepFirstSeen;
  return o;
}

TEST_CASE("Map read-only is what Load gives; its inserts and rotations stay private") {
  auto f = MakeOrFail<WindowedFilter>(ExactKeyWindow());
  for (uint64_t i = 0; i < 5500; ++i) REQUIRE(f.Insert(i));
  ScratchFile file("ro");
  REQUIRE(f.Save(file.path()).ok());
  const std::string saved = file.Contents();
  absl::StatusOr<WindowedFilter> mapped = WindowedFilter::Map(file.path(), MapMode::kReadOnly);
  REQUIRE(mapped.ok());
  absl::StatusOr<WindowedFilter> loaded = WindowedFilter::Load(file.path());
  REQUIRE(loaded.ok());
  CHECK(mapped->mapped());
  CHECK_FALSE(loaded->mapped());
  CHECK(mapped->epoch() == 5);
  CHECK(Saved(*mapped) == Saved(*loaded));
  CHECK(Saved(*mapped) == saved);
  // Flush needs a read-write mapping.
  CHECK(mapped->Flush().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(loaded->Flush().code() == absl::StatusCode::kFailedPrecondition);
  // Past a rotation (6000 starts generation 6) the private copy goes on as the filter would.
  for (uint64_t i = 5500; i <= 6000; ++i) REQUIRE(mapped->Insert(i) == f.Insert(i));
  CHECK(mapped->epoch() == 6);
  CHECK(Saved(*mapped) == Saved(f));
  CHECK(file.Contents() == saved);
}

TEST_CASE("Map read-write, key-count mode: inserts across rotations, Flush, and the file resumes") {
  auto f = MakeOrFail<WindowedFilter>(ExactKeyWindow());
  for (uint64_t i = 0; i < 2500; ++i) REQUIRE(f.Insert(i));
  ScratchFile file("rw_keys");
  REQUIRE(f.Save(file.path()).ok());
  {
    absl::StatusOr<WindowedFilter> rw = WindowedFilter::Map(file.path(), MapMode::kReadWrite);
    REQUIRE(rw.ok());
    // DIRTY while mapped read-write, but nothing written yet: its checksums match, so it loads.
    CHECK(WindowedFilter::Load(file.path()).ok());
    // Rotations at 3000, 4000, 5000 and 6000 clear generations in the file.
    for (uint64_t i = 2500; i < 6500; ++i) REQUIRE(rw->Insert(i) == f.Insert(i));
    CHECK(rw->epoch() == 6);
    REQUIRE(rw->Flush().ok());
    // Still mapped read-write, the file stays DIRTY, and holds what Save writes, clock included.
    CHECK(Saved(LoadDirty(file.path())) == Saved(f));
    for (uint64_t i = 6500; i < 7200; ++i) REQUIRE(rw->Insert(i) == f.Insert(i));
    REQUIRE(rw->Flush().ok());
    CHECK(Saved(LoadDirty(file.path())) == Saved(f));
  }
  // Unmapped with nothing written since the Flush: the very bytes Save writes.
  CHECK(file.Contents() == Saved(f));
  absl::StatusOr<FileInfo> info = InspectFile(file.path());
  REQUIRE(info.ok());
  CHECK_FALSE(info->dirty);
  absl::StatusOr<WindowedFilter> loaded = WindowedFilter::Load(file.path());
  REQUIRE(loaded.ok());
  CHECK(loaded->epoch() == 7);  // 200 inserts into generation 7
  // 800 more fill generation 7; the 801st starts generation 8 and forgets 4000..4999.
  for (uint64_t i = 7200; i < 8000; ++i) REQUIRE(loaded->Insert(i) == f.Insert(i));
  CHECK(loaded->epoch() == 7);
  CHECK(loaded->Insert(uint64_t{8000}));
  CHECK(f.Insert(uint64_t{8000}));
  CHECK(loaded->epoch() == 8);
  CHECK(MaybeCount(*loaded, DistinctInts(500, 4000)) == 0);  // 4000, 4002, .. 4998
  for (uint64_t i = 5000; i <= 8000; ++i) REQUIRE(loaded->MayContain(i));
  CHECK(Saved(*loaded) == Saved(f));
  // Mapped again, the flushed file is where the mapping left it.
  absl::StatusOr<WindowedFilter> again = WindowedFilter::Map(file.path(), MapMode::kReadWrite);
  REQUIRE(again.ok());
  CHECK(again->epoch() == 7);
  for (uint64_t i = 7200; i <= 8000; ++i) REQUIRE(again->Insert(i));
  CHECK(Saved(*again) == Saved(f));
}

TEST_CASE("Map read-write, duration mode: Flush keeps the clock state, expiry is exact after it") {
  FakeClock clock;
  clock.now = 1000 * kSecond;  // W = 100 s, G = 4: generations of 25 s from 1000 s
  auto f = MakeOrFail<WindowedFilter>(TimeWindow(clock, 100));
  clock.now = 1010 * kSecond;
  REQUIRE(f.Insert("a"));  // generation 0: gone at 1100 s
  ScratchFile file("rw_time");
  REQUIRE(f.Save(file.path()).ok());
  {
    WindowedFilter rw = MapOrFail(file.path(), MapMode::kReadWrite, clock.Get());
    // b: generation 1, gone at 1125 s; c: 2, at 1150 s; d: 3, at 1175 s; e: 4 (it clears
    // generation 0's slot in the file), at 1200 s.
    const std::pair<int64_t, const char*> inserts[] = {
        {1030, "b"}, {1060, "c"}, {1090, "d"}, {1110, "e"}};
    for (const auto& [t, key] : inserts) {
      clock.now = t * kSecond;
      REQUIRE(rw.Insert(key) == f.Insert(key));
    }
    CHECK(rw.epoch() == 4);
    REQUIRE(rw.Flush().ok());
  }
  CHECK(file.Contents() == Saved(f));
  absl::StatusOr<WindowedFilter> loaded = WindowedFilter::Load(file.path(), {}, clock.Get());
  REQUIRE(loaded.ok());
  absl::StatusOr<WindowedFilter> mapped =
      WindowedFilter::Map(file.path(), MapMode::kReadOnly, {}, clock.Get());
  REQUIRE(mapped.ok());
  for (int64_t t : {1110, 1124, 1125, 1149, 1150, 1174, 1175, 1199, 1200}) {
    clock.now = t * kSecond;
    CAPTURE(t);
    for (const WindowedFilter* g : {&*loaded, &*mapped, &f}) {
      CHECK_FALSE(g->MayContain("a"));
      CHECK(g->MayContain("b") == (t < 1125));
      CHECK(g->MayContain("c") == (t < 1150));
      CHECK(g->MayContain("d") == (t < 1175));
      CHECK(g->MayContain("e") == (t < 1200));
    }
  }
}

TEST_CASE("Map read-write, duration mode: a Flush after keys expired records the expiry") {
  FakeClock clock;
  WindowedFilter f = AThenB(clock);
  ScratchFile file("rw_expired");
  REQUIRE(f.Save(file.path()).ok());
  {
    WindowedFilter rw = MapOrFail(file.path(), MapMode::kReadWrite, clock.Get());
    clock.now = 110 * kSecond;  // no insert, no Advance: the Flush alone
    REQUIRE(rw.Flush().ok());
  }
  CHECK(file.Contents() == Saved(f));  // unmapped unchanged since the Flush
  clock.now = 50 * kSecond;            // behind the flushed state
  absl::StatusOr<WindowedFilter> loaded = WindowedFilter::Load(file.path(), {}, clock.Get());
  REQUIRE(loaded.ok());
  CHECK(loaded->epoch() == 4);
  CHECK_FALSE(loaded->MayContain("a"));
  CHECK(loaded->MayContain("b"));
}

TEST_CASE("a hostile windowed file is DataLoss when mapped, in either mode, and left as it was") {
  const WindowedFilter f = HostileBase();
  const std::string good = Saved(f);
  ScratchFile file("hostile");
  file.Write(good);
  REQUIRE(WindowedFilter::Map(file.path(), MapMode::kReadOnly).ok());
  for (const auto& c : HostileEdits(f)) {
    CAPTURE(c.offset);
    CAPTURE(c.value);
    const std::string bad = Edited(good, c.offset, c.value);
    file.Write(bad);
    for (MapMode mode : {MapMode::kReadOnly, MapMode::kReadWrite}) {
      const absl::Status s = WindowedFilter::Map(file.path(), mode).status();
      CHECK(s.code() == absl::StatusCode::kDataLoss);
      CHECK(std::string(s.message()).find(c.says) != std::string::npos);
    }
    CHECK(file.Contents() == bad);  // refused before DIRTY is set
  }
}

TEST_CASE("layouts: the lines a lookup reads are the G adjacent blocks of the key") {
  // With word64 and G = 4 the run of a key's blocks is 4 adjacent words in one line: inserting
  // one key into a fresh filter touches exactly one word of it, the newest generation's.
  WindowedOptions o = KeyWindow(4000);
  o.layout = Layout::kWord64;
  auto f = MakeOrFail<WindowedFilter>(o);
  CHECK(f.Insert(uint64_t{42}));
  const auto* words = reinterpret_cast<const uint64_t*>(f.bytes().data());
  uint64_t nonzero = 0;
  uint64_t at = 0;
  for (uint64_t w = 0; w < f.bytes().size() / 8; ++w) {
    if (words[w] != 0) ++nonzero, at = w;
  }
  CHECK(nonzero == 1);
  CHECK(at % 4 == 0);  // generation 0 is slot 0, the first word of the key's run
  CHECK(f.Insert(uint64_t{43}));
  for (uint64_t i = 0; i < 1000; ++i) (void)f.Insert(1000 + i);  // rotates into slot 1
  CHECK(f.epoch() == 1);
  const uint64_t before = words[at + 1];
  CHECK(f.Insert(uint64_t{42}) == false);  // kOnInsert: present, refreshed into slot 1
  CHECK(words[at + 1] != before);
}

TEST_CASE("layouts: option errors say what is wrong") {
  WindowedOptions o = KeyWindow(1000);
  o.layout = Layout::kPartitioned;
  absl::Status s = WindowedFilter::Create(o).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(s.message(), "layout must be line512, block256, word64 or auto"));
  o.layout = Layout::kWord64;
  o.hashes = 9;  // word64 and block256 have 8 slices
  s = WindowedFilter::Create(o).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(s.message(), "hashes"));
  o.layout = Layout::kBlock256;
  CHECK(WindowedFilter::Create(o).status().code() == absl::StatusCode::kInvalidArgument);
  o.layout = Layout::kLine512;
  CHECK(WindowedFilter::Create(o).ok());  // the line takes up to 16
  o.hashes = 8;
  o.layout = Layout::kWord64;
  auto f = MakeOrFail<WindowedFilter>(o);
  CHECK(f.hashes() == 8);
}

TEST_CASE("layouts: kAuto takes the planner's choice, smallest or fastest within the memory cap") {
  WindowedOptions o = KeyWindow(1'000'000);
  o.layout = Layout::kAuto;
  auto smallest = MakeOrFail<WindowedFilter>(o);
  CHECK(smallest.layout() == Layout::kLine512);  // the fewest bits at 1%
  o.layout_choice = LayoutChoice::kFastest;
  auto fastest = MakeOrFail<WindowedFilter>(o);
  CHECK(fastest.layout() == Layout::kWord64);
  CHECK(fastest.memory_bytes() > smallest.memory_bytes());
  // A cap over the whole window that word64's G generations exceed, and block256's fit.
  o.layout = Layout::kBlock256;
  o.layout_choice = LayoutChoice::kSmallest;
  const uint64_t block256 = MakeOrFail<WindowedFilter>(o).memory_bytes();
  REQUIRE(block256 < fastest.memory_bytes());
  o.layout = Layout::kAuto;
  o.layout_choice = LayoutChoice::kFastest;
  o.memory.max_memory_bytes = block256 + 4 * 64;
  auto capped = MakeOrFail<WindowedFilter>(o);
  CHECK(capped.layout() == Layout::kBlock256);
  CHECK(capped.memory_bytes() <= o.memory.max_memory_bytes);
}

TEST_CASE("layouts: save, load and map keep the layout; the file records it at offset 128") {
  for (const Layout layout : kLayouts) {
    CAPTURE(LayoutName(layout));
    WindowedOptions o = ExactKeyWindow();
    o.layout = layout;
    auto f = MakeOrFail<WindowedFilter>(o);
    for (uint64_t i = 0; i < 5500; ++i) REQUIRE(f.Insert(i));
    const std::string bytes = Saved(f);
    uint32_t code;
    std::memcpy(&code, bytes.data() + 128, 4);
    CHECK(code == FileCodeOf(layout, Probe::kFields));  // the newest probe's code
    absl::StatusOr<FileInfo> info = InspectBytes(bytes);
    REQUIRE(info.ok());
    WindowedFilter loaded = Reloaded(bytes);
    CHECK(loaded.layout() == layout);
    CHECK(loaded.CheckCompatible(f).ok());
    CHECK(Saved(loaded) == bytes);
    ScratchFile file("layout");
    REQUIRE(f.Save(file.path()).ok());
    WindowedFilter mapped = MapOrFail(file.path(), MapMode::kReadWrite);
    CHECK(mapped.layout() == layout);
    for (uint64_t i = 5500; i <= 6000; ++i) REQUIRE(mapped.Insert(i) == f.Insert(i));
    CHECK(mapped.epoch() == 6);
    REQUIRE(mapped.Flush().ok());
    CHECK(Saved(mapped) == Saved(f));
    CHECK(MaybeCount(mapped, DistinctInts(500, 2000)) == 0);  // forgotten at the rotation
    for (uint64_t i = 3000; i <= 6000; ++i) REQUIRE(mapped.MayContain(i));
  }
}

TEST_CASE("layouts: a file whose bits are not whole blocks of its layout is DataLoss") {
  WindowedOptions o = KeyWindow(4000);
  o.layout = Layout::kWord64;
  auto f = MakeOrFail<WindowedFilter>(o);
  const std::string good = Saved(f);
  // The same bits read as lines: not whole lines for 4 generations, or not a valid geometry.
  std::string as_line = good;
  const uint32_t line = 0;
  std::memcpy(as_line.data() + 128, &line, 4);
  CHECK(WindowedFilter::LoadFromBytes(as_line).status().code() == absl::StatusCode::kDataLoss);
  std::string unknown = good;
  const uint32_t bad = 7;
  std::memcpy(unknown.data() + 128, &bad, 4);
  CHECK(WindowedFilter::LoadFromBytes(unknown).status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("layouts: merging refuses mixed layouts with BlockedFilter's message") {
  WindowedOptions o = KeyWindow(4000);
  auto line = MakeOrFail<WindowedFilter>(o);
  o.layout = Layout::kWord64;
  auto word64 = MakeOrFail<WindowedFilter>(o);
  auto other = MakeOrFail<WindowedFilter>(o);
  const absl::Status s = line.UnionWith(word64);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message() ==
        "filters have different layouts (line512 and word64): a key's bits are not in the same "
        "places");
  CHECK(word64.CheckCompatible(line).message() ==
        "filters have different layouts (word64 and line512): a key's bits are not in the same "
        "places");
  (void)other.Insert(uint64_t{7});
  REQUIRE(word64.UnionWith(other).ok());
  CHECK(word64.MayContain(uint64_t{7}));
}

// The header's promise: with word64 the key's bits in the newest generation are one word set by
// one fetch_or, so of threads racing to insert the same new key exactly one is told "new" (no
// rotation inside the race: a window far longer than the test, and a key-count window far wider).
TEST_CASE("layouts: concurrent word64 inserts tell exactly one thread a key is new" *
          doctest::test_suite("concurrency")) {
  constexpr uint64_t kKeys = uint64_t{1} << 20;
  FakeClock clock;
  // Generations of kKeys (key-count: of 2 * kKeys + 1, since both threads may count a key).
  WindowedOptions by_time = TimeWindow(clock, 1000, 4 * kKeys);
  WindowedOptions by_count = KeyWindow(8 * kKeys + 4);
  for (WindowedOptions o : {by_time, by_count}) {
    CAPTURE(o.window.count());
    o.layout = Layout::kWord64;
    o.memory.concurrent = true;
    auto f = MakeOrFail<WindowedFilter>(o);
    constexpr int kThreads = 2;
    std::vector<std::vector<uint8_t>> told(kThreads, std::vector<uint8_t>(kKeys));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (uint64_t i = 0; i < kKeys; ++i) told[t][i] = f.Insert(i * 0x9E3779B97F4A7C15ull);
      });
    }
    for (std::thread& t : threads) t.join();
    REQUIRE(f.epoch() == 0);
    uint64_t twice = 0;
    uint64_t never = 0;
    for (uint64_t i = 0; i < kKeys; ++i) {
      twice += told[0][i] && told[1][i];
      never += !told[0][i] && !told[1][i];
    }
    CHECK(twice == 0);
    CHECK(never < kKeys / 50);  // false positives at insert only, well under 2% at fpr 1%
  }
}

TEST_CASE("layouts: AnyFilter makes and tells a windowed filter's layout and its auto choice") {
  AnyOptions o;
  o.capacity = 100'000;
  o.window = std::chrono::nanoseconds(0);
  o.layout = Layout::kWord64;
  absl::StatusOr<AnyFilter> f = AnyFilter::Create(FilterKind::kWindowed, o);
  REQUIRE(f.ok());
  CHECK(f->layout() == Layout::kWord64);
  absl::StatusOr<AnyFilter> loaded = AnyFilter::LoadFromBytes(*f->SaveToBytes());
  REQUIRE(loaded.ok());
  CHECK(loaded->layout() == Layout::kWord64);
  o.layout = Layout::kAuto;
  o.layout_choice = LayoutChoice::kFastest;
  f = AnyFilter::Create(FilterKind::kWindowed, o);
  REQUIRE(f.ok());
  CHECK(f->layout() == Layout::kWord64);
  o.layout_choice = LayoutChoice::kSmallest;
  f = AnyFilter::Create(FilterKind::kWindowed, o);
  REQUIRE(f.ok());
  CHECK(f->layout() == Layout::kLine512);
  // A kind without the planner's choice says so.
  const absl::Status s = AnyFilter::Create(FilterKind::kScalable, o).status();
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(s.message(), "takes no layout_choice"));
}

}  // namespace
}  // namespace bloomery
