// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_benchmark.cc: BlockedFilter against the memory floor, key hashing alone, and Debian's
// libbloom at the same bits/key. See README.md for how to run and read it.
//
// Lookup families run as long as Google Benchmark likes (MinTime) over key streams; insert
// families fill an empty filter from 0 to its capacity exactly once per run (a fixed iteration
// count), so they measure the average insert over a filter's life and concurrent inserts are not
// flattered by an over-full filter (duplicates never fetch_or).
#include <bloom.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "benchmark_util.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/key.h"
#include "memory_floor.h"

namespace bloomery::bench {
namespace {

// BM_FloorWork's rounds of computation per line: from none to more than a lookup's own work in
// cache (4 rounds ~2.4-3.2 ns, 8 ~6.4 ns on the Zen 4 VM).
constexpr int kWorkRounds[] = {0, 2, 4, 8, 16};

// Thread counts of the scaling rows, up to the machine's hardware threads.
const std::vector<int>& ThreadCounts() {
  static const std::vector<int> counts = [] {
    std::vector<int> out;
    const auto cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int t = 1; t <= cores; t *= 2) out.push_back(t);
    if (out.back() < 2) out.push_back(2);  // keep the 2-thread control even on one core
    return out;
  }();
  return counts;
}

// The floor over memory that fits this core's L2, measured once.
double L2FloorNs() {
  return Cached<double>(0, [] {
    return ValueOrDie(measure::L2FloorNsPerLine(measure::L2CacheBytes(), /*rounds=*/3));
  });
}

void ReportFloor(benchmark::State& state, const measure::FloorMemory& memory) {
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, static_cast<double>(memory.bytes()) * 8,
                   static_cast<uint64_t>(state.range(0)));
  ReportHugePages(state, memory.huge_page_bytes(), memory.bytes());
}

// The floor (memory_floor.h): one random 64-byte line touched per key and nothing else, over
// memory of the filter's size and kind, by the fastest strategy of the sweep. Each iteration runs
// the whole sweep, every strategy over a chunk of its own (a chunk once touched is in cache), and
// counts the fastest one's time. kRead: BM_Floor, what lookups are measured against; kWrite:
// BM_WriteFloor (prefetch-for-write and an or into the line), what inserts are.
template <measure::FloorAccess kAccess>
void BM_Floor(benchmark::State& state) {
  measure::FloorMemory& memory = FloorFor(static_cast<uint64_t>(state.range(0)));
  StreamCursor lines(RandomLines(memory.lines()), state);
  for (auto _ : state) {
    double best = std::numeric_limits<double>::infinity();
    auto time = [&](const measure::FloorStrategy& strategy) {
      const std::span<const uint64_t> own = lines.Next();
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(memory.TouchLines(own, kAccess, strategy));
      best = std::min(
          best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    };
    for (const measure::FloorStrategy& strategy : measure::kFloorSweep) time(strategy);
    state.SetIterationTime(best);
  }
  ReportFloor(state, memory);
  // The floor over memory that fits L2, ns per line: (Time / kChunk) / l2_floor_ns is the ratio
  // `bloomery bench` calls memory in cache by (at most measure::kInCacheFloorRatio).
  if constexpr (kAccess == measure::FloorAccess::kRead) state.counters["l2_floor_ns"] = L2FloorNs();
}

// One strategy of the sweep (third argument: 0 for a prefetch distance, 1 for a batch size; second:
// the distance or size): what BM_Floor takes the best of.
void BM_FloorAt(benchmark::State& state) {
  measure::FloorMemory& memory = FloorFor(static_cast<uint64_t>(state.range(0)));
  StreamCursor lines(RandomLines(memory.lines()), state);
  const measure::FloorStrategy strategy{state.range(2) != 0, static_cast<size_t>(state.range(1))};
  uint64_t acc = 0;
  for (auto _ : state)
    acc ^= memory.TouchLines(lines.Next(), measure::FloorAccess::kRead, strategy);
  benchmark::DoNotOptimize(acc);
  ReportFloor(state, memory);
}

// BM_Floor's reads over `memory` plus `rounds` rounds of computation per line that touches no
// memory (FloorMemory::ReadLinesWithWork): a lookup's work beside its miss.
void RunFloorWork(benchmark::State& state, const measure::FloorMemory& memory, uint32_t rounds) {
  StreamCursor lines(RandomLines(memory.lines()), state);
  uint64_t acc = 0;
  for (auto _ : state) acc ^= memory.ReadLinesWithWork(lines.Next(), memory.distance(), rounds);
  benchmark::DoNotOptimize(acc);
  ReportKeys(state, state.iterations() * kChunk);
  ReportHugePages(state, memory.huge_page_bytes(), memory.bytes());
  state.counters["distance"] = static_cast<double>(memory.distance());
}

// RunFloorWork over the floor's memory for n keys (rounds: the second argument). Against
// BM_WorkInL2 at the same rounds (the work alone) and BM_Floor (the miss alone) it says whether
// this machine overlaps the two (time near the larger) or adds them (near the sum), which bounds
// what MayContainMany / BM_Floor can reach with the work a lookup does (docs/PERFORMANCE.md, "How
// close to the memory floor?").
void BM_FloorWork(benchmark::State& state) {
  RunFloorWork(state, FloorFor(static_cast<uint64_t>(state.range(0))),
               static_cast<uint32_t>(state.range(1)));
}

// The same over memory that fits L2 (half of it): the work's own cost, its reads all hits.
void BM_WorkInL2(benchmark::State& state) {
  const measure::FloorMemory& memory = Cached<measure::FloorMemory>(0, [] {
    const uint64_t l2 = measure::L2CacheBytes();
    return ValueOrDie(
        measure::FloorMemory::Allocate((l2 != 0 ? l2 : measure::kAssumedL2Bytes) / 2));
  });
  RunFloorWork(state, memory, static_cast<uint32_t>(state.range(0)));
}

// XXH3-128 of each key, nothing else: the part of a lookup that is not memory.
void BM_Hash(benchmark::State& state) {
  StreamCursor keys(AbsentKeys(), state);
  std::vector<KeyHash> hashes(kChunk);
  for (auto _ : state) {
    const std::span<const uint64_t> chunk = keys.Next();
    HashKeys(chunk.data(), chunk.size(), kDefaultSeed, hashes.data());
    benchmark::DoNotOptimize(hashes.data());
    benchmark::ClobberMemory();
  }
  ReportKeys(state, state.iterations() * kChunk);
}

template <IntegerHash kIntegers>
void BM_InsertMany(benchmark::State& state) {
  BlockedFilter filter = ValueOrDie(
      BlockedFilter::Create(OptionsFor(static_cast<uint64_t>(state.range(0)), false, kIntegers)));
  FillOnce(state, filter, 0,
           [](BlockedFilter& f, std::span<const uint64_t> keys) { return f.InsertMany(keys); });
}

// A concurrent filter shared by all threads; each inserts its own n/threads keys.
void BM_ConcurrentInsertMany(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  BlockedFilter& filter = Cached<BlockedFilter>(
      n, [n] { return ValueOrDie(BlockedFilter::Create(OptionsFor(n, true))); });
  // Google Benchmark starts every thread's timed loop together, after this.
  if (state.thread_index() == 0) filter.Clear();
  const uint64_t first =
      n / static_cast<uint64_t>(state.threads()) * static_cast<uint64_t>(state.thread_index());
  FillOnce(state, filter, first,
           [](BlockedFilter& f, std::span<const uint64_t> keys) { return f.InsertMany(keys); });
}

// Negative lookups (keys never inserted): the case a filter exists for. On a concurrent filter
// when kConcurrent.
template <bool kConcurrent, IntegerHash kIntegers>
void BM_MayContainMany(benchmark::State& state) {
  const BlockedFilter& filter =
      FilledFilter(static_cast<uint64_t>(state.range(0)), kIntegers, kConcurrent);
  StreamCursor keys(AbsentKeys(), state);
  uint64_t found = 0;
  for (auto _ : state) found += filter.MayContainMany(keys.Next());
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), filter.plan().capacity);
  ReportFpr(state, found, state.iterations() * kChunk);
  ReportHugePages(state, measure::HugePageBytes(filter), filter.memory_bytes());
}

// MayContainMany of keys hashed beforehand: the lookup without its hashing, to tell the two apart.
void BM_MayContainManyHashed(benchmark::State& state) {
  const BlockedFilter& filter = FilledFilter(static_cast<uint64_t>(state.range(0)));
  const std::vector<KeyHash>& hashes = Cached<std::vector<KeyHash>>(0, [] {
    std::vector<KeyHash> out(kStreamKeys);
    HashKeys(AbsentKeys().data(), kStreamKeys, kDefaultSeed, out.data());
    return out;
  });
  size_t next = 0;
  uint64_t found = 0;
  for (auto _ : state) {
    if (next + kChunk > hashes.size()) next = 0;
    found += filter.MayContainMany(std::span<const KeyHash>(hashes.data() + next, kChunk));
    next += kChunk;
  }
  ReportKeys(state, state.iterations() * kChunk);
  ReportFpr(state, found, state.iterations() * kChunk);
}

void BM_MayContainManyPositive(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const BlockedFilter& filter = FilledFilter(n);
  StreamCursor keys(PresentKeys(n), state);
  uint64_t found = 0;
  for (auto _ : state) found += filter.MayContainMany(keys.Next());
  if (found != state.iterations() * kChunk) state.SkipWithError("a present key was not found");
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), n);
}

// libbloom (Jyri Virkki; Debian libbloom 1.6): a classic filter, k probes anywhere in the array,
// MurmurHash2. bloom_init sizes for `entries` at `error` with bits/key = -ln(error) / ln(2)^2, so
// this error gives kBitsPerKey; `entries` is an int and bits must stay below 2^31.
struct BloomDeleter {
  void operator()(bloom* b) const {
    bloom_free(b);
    delete b;  // NOLINT: paired with the new in MakeLibbloom; libbloom leaves allocation to us
  }
};
using Libbloom = std::unique_ptr<bloom, BloomDeleter>;

Libbloom MakeLibbloom(uint64_t n) {
  const double error = std::exp(-kBitsPerKey * std::log(2.0) * std::log(2.0));
  Libbloom b(new bloom{});  // NOLINT: see BloomDeleter
  if (n > (uint64_t{1} << 30) || bloom_init(b.get(), static_cast<int>(n), error) != 0) {
    Die("bloom_init failed");
  }
  return b;
}

void BM_Libbloom_Insert(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  Libbloom b = MakeLibbloom(n);
  std::vector<uint64_t> keys(kChunk);
  uint64_t first = 0;
  for (auto _ : state) {
    FillSequential(first, keys);
    first += kChunk;
    for (uint64_t key : keys) bloom_add(b.get(), &key, sizeof(key));
  }
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, b->bits, n);
}

void BM_Libbloom_MayContain(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  Libbloom& b = Cached<Libbloom>(n, [n] {
    Libbloom filled = MakeLibbloom(n);
    for (uint64_t key = 0; key < n; ++key) bloom_add(filled.get(), &key, sizeof(key));
    return filled;
  });
  StreamCursor keys(AbsentKeys(), state);
  uint64_t found = 0;
  for (auto _ : state) {
    for (uint64_t key : keys.Next()) found += bloom_check(b.get(), &key, sizeof(key));
  }
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, b->bits, n);
  ReportFpr(state, found, state.iterations() * kChunk);
}

// URL-like keys (FormatUrl): the string-key path, against Boost.Bloom's with boost::hash.
const BlockedFilter& FilledUrlFilter(uint64_t n) {
  return Cached<BlockedFilter>(n | kAbsentBit, [n] {
    BlockedFilter filter = ValueOrDie(BlockedFilter::Create(OptionsFor(n, false)));
    UrlChunk chunk;
    for (uint64_t first = 0; first < n; first += kChunk) {
      filter.InsertMany(chunk.Fill(first, std::min<uint64_t>(kChunk, n - first)));
    }
    return filter;
  });
}

template <bool kBulk>
void BM_InsertUrl(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  BlockedFilter filter = ValueOrDie(BlockedFilter::Create(OptionsFor(n, false)));
  uint64_t added = 0;
  FillUrlsOnce(state, [&](std::span<const std::string_view> keys) {
    if constexpr (kBulk) {
      added += filter.InsertMany(keys);
    } else {
      for (std::string_view key : keys) added += filter.Insert(key);
    }
  });
  benchmark::DoNotOptimize(added);
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), n);
}

template <bool kBulk>
void BM_MayContainUrl(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const BlockedFilter& filter = FilledUrlFilter(n);
  TimeLookups(state, UrlCursor(AbsentUrls(), state),
              [&filter](std::span<const std::string_view> chunk) -> uint64_t {
                if constexpr (kBulk) {
                  return filter.MayContainMany(chunk);
                } else {
                  uint64_t found = 0;
                  for (std::string_view key : chunk) found += filter.MayContain(key);
                  return found;
                }
              });
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), n);
}

// What populate leaves for the hot path: one InsertMany of 2^16 scattered keys (about 63 % of the
// pages' first writes) into a fresh populated 256 MiB filter on 4 KiB pages, with the pages
// written again by Clear() first (kRewritten) or not. The two should be equal: a gap is a cost per
// page's first write that populate did not take (on the CI VM's hypervisor MADV_POPULATE_WRITE
// alone left a ~3 us trap per page, docs/DESIGN.md "Tried and rejected", until Storage wrote each
// page itself).
template <bool kRewritten>
void BM_InsertAfterPopulate(benchmark::State& state) {
  constexpr uint64_t kBytes = uint64_t{256} << 20;
  std::vector<uint64_t> keys(uint64_t{1} << 16);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix(i);
  FilterOptions options;
  options.bits = kBytes * 8;
  options.hashes = 6;
  options.memory.populate = true;
  options.memory.huge_pages = HugePages::kNever;
  uint64_t added = 0;
  std::optional<BlockedFilter> filter;  // made and unmapped outside the timed part
  for (auto _ : state) {
    state.PauseTiming();
    filter.reset();
    filter.emplace(ValueOrDie(BlockedFilter::Create(options)));
    if constexpr (kRewritten) filter->Clear();
    state.ResumeTiming();
    added += filter->InsertMany(keys);
  }
  benchmark::DoNotOptimize(added);
  ReportKeys(state, state.iterations() * keys.size());
}

// Health() (issue #40: at most ~1 ms on a 1 GiB filter) of a filter of 2^arg bytes holding its
// capacity's keys, 10 bits/key: the stratified sample above 4 MiB, the whole filter below. Filling
// 1 GiB takes a few seconds, outside the timed part.
void BM_Health(benchmark::State& state) {
  const uint64_t bytes = uint64_t{1} << state.range(0);
  FilterOptions options;
  options.bits = bytes * 8;
  options.hashes = 7;
  options.memory.populate = true;
  BlockedFilter filter = ValueOrDie(BlockedFilter::Create(options));
  std::vector<uint64_t> keys(uint64_t{1} << 20);
  for (uint64_t done = 0; done < filter.capacity(); done += keys.size()) {
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix(done + i);
    filter.InsertMany(
        std::span(keys).first(std::min<uint64_t>(keys.size(), filter.capacity() - done)));
  }
  double fpr = 0;
  for (auto _ : state) fpr += filter.Health().estimated_fpr;
  benchmark::DoNotOptimize(fpr);
  state.counters["bytes"] = static_cast<double>(bytes);
}

// Insert families fill 0 .. n keys once: n / kChunk iterations shared by the threads. libbloom's
// insert (k misses per key) would take ~20 s to fill 2^27 keys, so it inserts at most 2^22 (its
// cost does not depend on the fill).
void Register() {
  for (int rounds : kWorkRounds) {
    benchmark::RegisterBenchmark("BM_WorkInL2", BM_WorkInL2)->Arg(rounds);
  }
  benchmark::RegisterBenchmark("BM_InsertAfterPopulate", BM_InsertAfterPopulate<false>)
      ->Iterations(8)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_InsertAfterPopulateRewritten", BM_InsertAfterPopulate<true>)
      ->Iterations(8)
      ->Unit(benchmark::kMicrosecond);
  for (int log2_bytes : {22, 26, 30}) {  // 4 MiB (read whole), 64 MiB and 1 GiB (sampled)
    benchmark::RegisterBenchmark("BM_Health", BM_Health)
        ->Arg(log2_bytes)
        ->Unit(benchmark::kMicrosecond);
  }
  for (int64_t n : kSizes) {
    benchmark::RegisterBenchmark("BM_Floor", BM_Floor<measure::FloorAccess::kRead>)
        ->Arg(n)
        ->UseManualTime();
    benchmark::RegisterBenchmark("BM_WriteFloor", BM_Floor<measure::FloorAccess::kWrite>)
        ->Arg(n)
        ->UseManualTime();
    for (const measure::FloorStrategy& strategy : measure::kFloorSweep) {
      benchmark::RegisterBenchmark("BM_FloorAt", BM_FloorAt)
          ->Args({n, static_cast<int64_t>(strategy.depth), strategy.batched ? 1 : 0});
    }
    for (int rounds : kWorkRounds) {
      benchmark::RegisterBenchmark("BM_FloorWork", BM_FloorWork)->Args({n, rounds});
    }
    benchmark::RegisterBenchmark("BM_Hash", BM_Hash)->Arg(n);
    // The control for the multi-thread rows: hashing is pure computation, so its n-thread/1-thread
    // ratio says how much of the other cores this machine really gives right now.
    for (int threads : ThreadCounts()) {
      benchmark::RegisterBenchmark("BM_Hash", BM_Hash)->Arg(n)->Threads(threads)->UseRealTime();
    }
    for (int threads : ThreadCounts()) {
      benchmark::RegisterBenchmark("BM_MayContainMany",
                                   BM_MayContainMany<false, IntegerHash::kXxh3>)
          ->Arg(n)
          ->Threads(threads)
          ->UseRealTime();
    }
    benchmark::RegisterBenchmark("BM_ConcurrentMayContainMany",
                                 BM_MayContainMany<true, IntegerHash::kXxh3>)
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_MayContainManyMix",
                                 BM_MayContainMany<false, IntegerHash::kMix>)
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_MayContainManyHashed", BM_MayContainManyHashed)->Arg(n);
    benchmark::RegisterBenchmark("BM_MayContainManyPositive", BM_MayContainManyPositive)->Arg(n);
    benchmark::RegisterBenchmark("BM_Libbloom_MayContain", BM_Libbloom_MayContain)->Arg(n);
    benchmark::RegisterBenchmark("BM_MayContainUrl", BM_MayContainUrl<false>)->Arg(n);
    benchmark::RegisterBenchmark("BM_MayContainManyUrl", BM_MayContainUrl<true>)->Arg(n);
    RegisterFill("BM_InsertMany", BM_InsertMany<IntegerHash::kXxh3>, n);
    RegisterFill("BM_InsertManyMix", BM_InsertMany<IntegerHash::kMix>, n);
    for (int threads : ThreadCounts()) {
      RegisterFill("BM_ConcurrentInsertMany", BM_ConcurrentInsertMany, n, threads);
    }
    RegisterFill("BM_InsertUrl", BM_InsertUrl<false>, n);
    RegisterFill("BM_InsertManyUrl", BM_InsertUrl<true>, n);
    RegisterFill("BM_Libbloom_Insert", BM_Libbloom_Insert, n, 1, std::min(n, int64_t{1} << 22));
  }
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
