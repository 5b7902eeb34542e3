// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// ClassicFilter and ScalableFilter benchmarks (Google Benchmark). main() lives in the suite's
// other file.
//
// BM_Classic_*: a ClassicFilter at 10 bits/key (k = 7) for 2^20 keys (1.25 MiB, in L2/L3) and
// 2^27 keys (160 MiB, out of cache), single-key and batch forms. Counters: bits_per_key, and fpr
// measured over 2^20 absent keys once the filter holds its keys.
//
// BM_Scalable_MayContainMany/S: a ScalableFilter at P = 1% grown to S exactly full stages holding
// 2^23 keys in all, next to BM_Scalable_SameSizeBlocked/S: one BlockedFilter with the same total
// bytes and the same keys, so the ratio of the two is the price of S stages.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/scalable_filter.h"

namespace bloomery {
namespace {

constexpr uint64_t kQueryCount = uint64_t{1} << 20;
constexpr size_t kBatchKeys = 1024;

// Keys are i * 2 (inserted) and i * 2 + 1 (never inserted).
uint64_t Present(uint64_t i) { return i * 2; }
uint64_t Absent(uint64_t i) { return i * 2 + 1; }

// Lookups: half present keys chosen at random among the `keys` inserted, half absent, from a
// fixed-seed SplitMix64 so runs are comparable.
std::vector<uint64_t> MixedQueries(uint64_t keys) {
  std::vector<uint64_t> queries(kQueryCount);
  uint64_t state = 20261122;
  for (uint64_t i = 0; i < kQueryCount; ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const auto index = static_cast<uint64_t>((static_cast<unsigned __int128>(z) * keys) >> 64);
    queries[i] = (i & 1) ? Absent(index + keys) : Present(index);
  }
  return queries;
}

FilterOptions ClassicOptions(uint64_t keys) {
  FilterOptions o;
  o.capacity = keys;
  o.bits = keys * 10;
  o.memory.populate = true;
  return o;
}

template <typename Filter>
void FillInBatches(Filter& filter, uint64_t keys) {
  std::vector<uint64_t> batch(1 << 16);
  for (uint64_t base = 0; base < keys; base += batch.size()) {
    const uint64_t n = std::min<uint64_t>(batch.size(), keys - base);
    for (uint64_t i = 0; i < n; ++i) batch[i] = Present(base + i);
    (void)filter.InsertMany(std::span<const uint64_t>(batch.data(), n));
  }
}

template <typename Filter>
double MeasuredFpr(const Filter& filter, uint64_t keys) {
  std::vector<uint64_t> absent(kQueryCount);
  for (uint64_t i = 0; i < kQueryCount; ++i) absent[i] = Absent(keys + i);
  return static_cast<double>(filter.MayContainMany(std::span<const uint64_t>(absent))) /
         static_cast<double>(kQueryCount);
}

// One filled ClassicFilter per key count, shared by the lookup benchmarks and used for the
// fpr counter of the insert ones.
struct FilledClassic {
  std::unique_ptr<ClassicFilter> filter;
  double fpr = 0;
};

const FilledClassic& Filled(uint64_t keys) {
  static auto* cache = new std::map<uint64_t, FilledClassic>();
  FilledClassic& entry = (*cache)[keys];
  if (!entry.filter) {
    entry.filter =
        std::make_unique<ClassicFilter>(ClassicFilter::Create(ClassicOptions(keys)).value());
    FillInBatches(*entry.filter, keys);
    entry.fpr = MeasuredFpr(*entry.filter, keys);
  }
  return entry;
}

void SetClassicCounters(benchmark::State& state, const ClassicFilter& filter, uint64_t keys) {
  state.counters["bits_per_key"] = static_cast<double>(filter.bits()) / static_cast<double>(keys);
  state.counters["fpr"] = Filled(keys).fpr;
  state.counters["k"] = filter.hashes();
}

// Inserts of keys 0, 1, ... (wrapping at the capacity), one per call or kBatchKeys per call.
template <bool kMany>
void BM_Classic_Insert(benchmark::State& state) {
  const auto keys = static_cast<uint64_t>(state.range(0));
  ClassicFilter filter = ClassicFilter::Create(ClassicOptions(keys)).value();
  std::vector<uint64_t> batch(kMany ? kBatchKeys : 1);
  uint64_t next = 0;
  for (auto _ : state) {
    for (uint64_t& key : batch) {
      key = Present(next);
      if (++next == keys) next = 0;
    }
    if constexpr (kMany) {
      benchmark::DoNotOptimize(filter.InsertMany(std::span<const uint64_t>(batch)));
    } else {
      benchmark::DoNotOptimize(filter.Insert(batch[0]));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(batch.size()));
  SetClassicCounters(state, filter, keys);
}

// Lookups of a mix of present and absent keys, one per call or kBatchKeys per call.
template <bool kMany>
void BM_Classic_MayContain(benchmark::State& state) {
  const auto keys = static_cast<uint64_t>(state.range(0));
  const ClassicFilter& filter = *Filled(keys).filter;
  const std::vector<uint64_t> queries = MixedQueries(keys);
  constexpr uint64_t kPerCall = kMany ? kBatchKeys : 1;
  uint64_t base = 0;
  for (auto _ : state) {
    if constexpr (kMany) {
      benchmark::DoNotOptimize(
          filter.MayContainMany(std::span<const uint64_t>(queries.data() + base, kBatchKeys)));
    } else {
      benchmark::DoNotOptimize(filter.MayContain(queries[base]));
    }
    base = (base + kPerCall) & (kQueryCount - 1);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kPerCall));
  SetClassicCounters(state, filter, keys);
}

BENCHMARK(BM_Classic_Insert<false>)->Name("BM_Classic_Insert")->Arg(1 << 20)->Arg(1 << 27);
BENCHMARK(BM_Classic_Insert<true>)->Name("BM_Classic_InsertMany")->Arg(1 << 20)->Arg(1 << 27);
BENCHMARK(BM_Classic_MayContain<false>)->Name("BM_Classic_MayContain")->Arg(1 << 20)->Arg(1 << 27);
BENCHMARK(BM_Classic_MayContain<true>)
    ->Name("BM_Classic_MayContainMany")
    ->Arg(1 << 20)
    ->Arg(1 << 27);

// ---- ScalableFilter: cost of S stages against one filter of the same size ----

constexpr uint64_t kScalableKeys = uint64_t{1} << 23;
constexpr double kScalableFpr = 0.01;

// A chain grown to exactly `stages` full stages (growth 2) holding ~kScalableKeys keys, and a
// BlockedFilter of the same bytes holding the same keys.
struct ScalablePair {
  std::unique_ptr<ScalableFilter> chain;
  std::unique_ptr<BlockedFilter> blocked;
  uint64_t keys = 0;
  double chain_fpr = 0;
  double blocked_fpr = 0;
};

const ScalablePair& Pair(uint32_t stages) {
  static auto* cache = new std::map<uint32_t, ScalablePair>();
  ScalablePair& pair = (*cache)[stages];
  if (!pair.chain) {
    ScalableOptions o;
    o.capacity = kScalableKeys / ((uint64_t{1} << stages) - 1);
    o.fpr = kScalableFpr;
    pair.chain = std::make_unique<ScalableFilter>(ScalableFilter::Create(o).value());
    pair.keys = o.capacity * ((uint64_t{1} << stages) - 1);
    FillInBatches(*pair.chain, pair.keys);
    FilterOptions same_size;
    same_size.bits = pair.chain->memory_bytes() * 8;
    same_size.capacity = pair.keys;
    same_size.memory.populate = true;
    pair.blocked = std::make_unique<BlockedFilter>(BlockedFilter::Create(same_size).value());
    FillInBatches(*pair.blocked, pair.keys);
    pair.chain_fpr = MeasuredFpr(*pair.chain, pair.keys);
    pair.blocked_fpr = MeasuredFpr(*pair.blocked, pair.keys);
  }
  return pair;
}

template <typename Filter>
void LookupBatches(benchmark::State& state, const Filter& filter, uint64_t keys) {
  const std::vector<uint64_t> queries = MixedQueries(keys);
  uint64_t base = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        filter.MayContainMany(std::span<const uint64_t>(queries.data() + base, kBatchKeys)));
    base = (base + kBatchKeys) & (kQueryCount - 1);
  }
  state.SetItemsProcessed(state.iterations() * kBatchKeys);
}

void BM_Scalable_MayContainMany(benchmark::State& state) {
  const ScalablePair& pair = Pair(static_cast<uint32_t>(state.range(0)));
  LookupBatches(state, *pair.chain, pair.keys);
  state.counters["stages"] = pair.chain->stage_count();
  state.counters["bits_per_key"] =
      static_cast<double>(pair.chain->memory_bytes()) * 8 / static_cast<double>(pair.keys);
  state.counters["fpr"] = pair.chain_fpr;
}

void BM_Scalable_SameSizeBlocked(benchmark::State& state) {
  const ScalablePair& pair = Pair(static_cast<uint32_t>(state.range(0)));
  LookupBatches(state, *pair.blocked, pair.keys);
  state.counters["stages"] = 1;
  state.counters["bits_per_key"] =
      static_cast<double>(pair.blocked->bits()) / static_cast<double>(pair.keys);
  state.counters["fpr"] = pair.blocked_fpr;
}

BENCHMARK(BM_Scalable_MayContainMany)->ArgName("stages")->Arg(1)->Arg(4)->Arg(8);
BENCHMARK(BM_Scalable_SameSizeBlocked)->ArgName("stages")->Arg(1)->Arg(4)->Arg(8);

}  // namespace
}  // namespace bloomery
