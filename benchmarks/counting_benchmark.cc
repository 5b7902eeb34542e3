// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// CountingFilter against a BlockedFilter of the same capacity and fpr, in the same run.
//
// Each family takes (keys, concurrent). 1<<20 keys: the counting filter is ~5.5 MiB and the
// blocked one ~1.2 MiB, both inside the L3 ("in cache"). 1<<26 keys: ~350 MiB and ~80 MiB, far
// outside it ("out of cache"); 1<<27 would double that and the filling time for no new
// information, on a shared machine. Filters are planned for 1% and filled with `keys` keys once
// per process (cached across families), so every measurement runs at the planned load:
//   Insert     inserts a chunk of fresh keys (timed), then erases them again (not timed);
//   Erase      inserts a chunk (not timed), then erases it (timed);
//   MayContainMany looks up keys of which half are present.
// Counters: items_per_second, bits_per_key (memory / keys), fpr (measured on 2^20 absent keys at
// the planned load) and fpr_predicted (the planner's formula).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "bloomery/counting_filter.h"

namespace bloomery {
namespace {

constexpr double kFpr = 0.01;
constexpr size_t kChunk = 1 << 16;
// Key ranges: present keys are [0, n); chunks inserted and erased again come from kTransient up;
// keys for the FPR measurement from kAbsent up. All disjoint for n < 2^40.
constexpr uint64_t kTransient = uint64_t{1} << 40;
constexpr uint64_t kAbsent = uint64_t{1} << 41;
constexpr uint64_t kFprQueries = 1 << 20;

template <typename Filter>
struct Loaded {
  Filter filter;
  double fpr = 0;
  double fpr_predicted = 0;
  uint64_t next_transient = kTransient;
};

std::vector<uint64_t> Range(uint64_t first, uint64_t count) {
  std::vector<uint64_t> keys(count);
  for (uint64_t i = 0; i < count; ++i) keys[i] = first + i;
  return keys;
}

template <typename Filter>
void Fill(Filter& filter, uint64_t n) {
  for (uint64_t first = 0; first < n; first += kChunk) {
    filter.InsertMany(
        std::span<const uint64_t>(Range(first, std::min<uint64_t>(kChunk, n - first))));
  }
}

template <typename Filter>
double MeasureFpr(const Filter& filter) {
  const size_t hits = filter.MayContainMany(std::span<const uint64_t>(Range(kAbsent, kFprQueries)));
  return static_cast<double>(hits) / static_cast<double>(kFprQueries);
}

// One loaded filter per (kind, keys, mode), built on first use and kept for the process.
template <typename Filter>
Loaded<Filter>* GetLoaded(uint64_t n, bool concurrent) {
  static std::map<std::pair<uint64_t, bool>, std::unique_ptr<Loaded<Filter>>> cache;
  std::unique_ptr<Loaded<Filter>>& slot = cache[{n, concurrent}];
  if (slot) return slot.get();
  std::conditional_t<std::is_same_v<Filter, CountingFilter>, CountingOptions, FilterOptions> o;
  o.capacity = n;
  o.fpr = kFpr;
  o.memory.concurrent = concurrent;
  o.memory.populate = true;  // no page faults inside the timed loops
  auto filter = Filter::Create(o);
  if (!filter.ok()) return nullptr;
  slot = std::make_unique<Loaded<Filter>>(Loaded<Filter>{*std::move(filter)});
  Fill(slot->filter, n);
  slot->fpr = MeasureFpr(slot->filter);
  slot->fpr_predicted = slot->filter.plan().expected_fpr;
  return slot.get();
}

template <typename Filter>
Loaded<Filter>* Setup(benchmark::State& state) {
  Loaded<Filter>* loaded = GetLoaded<Filter>(static_cast<uint64_t>(state.range(0)), state.range(1));
  if (loaded == nullptr) state.SkipWithError("cannot create the filter");
  return loaded;
}

template <typename Filter>
void Report(benchmark::State& state, const Loaded<Filter>& loaded) {
  const double n = static_cast<double>(state.range(0));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kChunk));
  state.counters["bits_per_key"] = static_cast<double>(loaded.filter.memory_bytes()) * 8 / n;
  state.counters["fpr"] = loaded.fpr;
  state.counters["fpr_predicted"] = loaded.fpr_predicted;
}

// Half present keys (from [0, n)), half absent, in a random order.
std::vector<uint64_t> MixedQueries(uint64_t n) {
  std::vector<uint64_t> keys(kChunk * 16);
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (uint64_t& key : keys) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t r = state >> 11;
    key = (r & 1) ? kAbsent + (r >> 1) % (uint64_t{1} << 40) : (r >> 1) % n;
  }
  return keys;
}

template <typename Filter>
void MayContainManyLoop(benchmark::State& state) {
  Loaded<Filter>* loaded = Setup<Filter>(state);
  if (loaded == nullptr) return;
  const std::vector<uint64_t> queries = MixedQueries(static_cast<uint64_t>(state.range(0)));
  size_t offset = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        loaded->filter.MayContainMany(std::span<const uint64_t>(queries.data() + offset, kChunk)));
    offset = (offset + kChunk) % queries.size();
  }
  Report(state, *loaded);
}

// Inserts a fresh chunk of keys and erases it again, timing the insert (kErase false) or the
// erase (true), so the filter's load stays the same through the run.
template <bool kErase>
void BM_Counting_Transient(benchmark::State& state) {
  Loaded<CountingFilter>* loaded = Setup<CountingFilter>(state);
  if (loaded == nullptr) return;
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<uint64_t> chunk = Range(loaded->next_transient, kChunk);
    loaded->next_transient += kChunk;
    if (!kErase) state.ResumeTiming();
    benchmark::DoNotOptimize(loaded->filter.InsertMany(std::span<const uint64_t>(chunk)));
    if (kErase) {
      state.ResumeTiming();
    } else {
      state.PauseTiming();
    }
    benchmark::DoNotOptimize(loaded->filter.EraseMany(std::span<const uint64_t>(chunk)));
    if (!kErase) state.ResumeTiming();
  }
  Report(state, *loaded);
}

void BM_Counting_MayContainMany(benchmark::State& state) {
  MayContainManyLoop<CountingFilter>(state);
}

// The reference: a BlockedFilter of the same capacity and fpr. It cannot erase, so its inserts
// raise the load; once they reach n/4 extra keys it is cleared and refilled (not timed), keeping
// the load within [n, 1.25 n] (a saturated filter would skip its concurrent writes and flatter it).
void BM_Counting_BlockedReference_Insert(benchmark::State& state) {
  Loaded<BlockedFilter>* loaded = Setup<BlockedFilter>(state);
  if (loaded == nullptr) return;
  const auto n = static_cast<uint64_t>(state.range(0));
  for (auto _ : state) {
    state.PauseTiming();
    if (loaded->next_transient - kTransient >= n / 4) {
      loaded->filter.Clear();
      Fill(loaded->filter, n);
      loaded->next_transient = kTransient;
    }
    const std::vector<uint64_t> chunk = Range(loaded->next_transient, kChunk);
    loaded->next_transient += kChunk;
    state.ResumeTiming();
    benchmark::DoNotOptimize(loaded->filter.InsertMany(std::span<const uint64_t>(chunk)));
  }
  Report(state, *loaded);
}

void BM_Counting_BlockedReference_MayContainMany(benchmark::State& state) {
  MayContainManyLoop<BlockedFilter>(state);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"keys", "concurrent"});
  for (int64_t keys : {int64_t{1} << 20, int64_t{1} << 26}) {
    for (int64_t concurrent : {0, 1}) b->Args({keys, concurrent});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_Counting_Transient<false>)->Name("BM_Counting_Insert")->Apply(Sizes);
BENCHMARK(BM_Counting_BlockedReference_Insert)->Apply(Sizes);
BENCHMARK(BM_Counting_Transient<true>)->Name("BM_Counting_Erase")->Apply(Sizes);
BENCHMARK(BM_Counting_MayContainMany)->Apply(Sizes);
BENCHMARK(BM_Counting_BlockedReference_MayContainMany)->Apply(Sizes);

}  // namespace
}  // namespace bloomery
