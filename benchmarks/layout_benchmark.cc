// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// layout_benchmark.cc: every BlockedFilter layout (layout.h) at 10 bits/key, the four operations
// (Insert, InsertMany, MayContain, MayContainMany) and ConcurrentInsertMany, at 2^20 and 2^26
// keys: BM_Layout_<op><line512|block256|word64>/n (integers hashed by XXH3, named), and word64
// and block256 once more with IntegerHash::kMix, their default (options.h's ResolveIntegerHash),
// BM_Layout_<op><word64,mix>/n and <block256,mix>, and the line with it (<line512,mix>, not its
// default: what XXH3 costs the line's integer keys). Compiled for x86-64-v3, as the Boost.Bloom
// families it is compared with (boost_benchmark.cc registers their shapes at the same sizes): the
// single-key rows call the avx2::Prober of the filter's shape (avx2::VisitProber), built before
// the loop, the probe inlined into it, as a user's file built with those flags may.
// BM_Layout_Insert drops each answer, as Boost.Bloom's insert(key) has none (its like-for-like
// row); BM_Layout_InsertCounted sums them. The rows named ...Call are the call a user writes,
// `filter.MayContain(key)` / `filter.Insert(key)` in the loop, no opt-in; MayContainChained makes
// each key depend on the last answer, one lookup at a time: the memory's latency, against
// BM_Boost_MayContainChained.
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "benchmark_util.h"
#include "bloomery/blocked_filter.h"
#ifdef __AVX2__
#include "bloomery/blocked_filter_avx2.h"
#endif

#ifndef BLOOMERY_BENCH_TARGET
#define BLOOMERY_BENCH_TARGET ""
#endif

namespace bloomery::bench {
namespace {

inline constexpr int64_t kLayoutSizes[] = {int64_t{1} << 20, int64_t{1} << 26};

// How a row calls the filter: the batch call, or the inline single-key call per key through the
// avx2::Prober of the filter's shape (avx2::VisitProber), built before the loop (kCounted: the
// answers summed; kDiscarded: each Insert's answer dropped, as Boost.Bloom's insert(key) returns
// none).
// kOrdinary: the filter's own single-key call per key (answers summed; inserts drop them);
// kChained: lookups one at a time, key i offset by the answer of key i - 1.
enum class Calls { kBulk, kCounted, kDiscarded, kOrdinary, kChained };

// The keys' true answers counted (0 for kDiscarded); inserts into a mutable filter, lookups in a
// const one.
template <Calls kCalls, typename Filter>
uint64_t Apply(Filter& filter, std::span<const uint64_t> keys) {
  constexpr bool kInsert = !std::is_const_v<Filter>;
  if constexpr (kCalls == Calls::kBulk) {
    if constexpr (kInsert) {
      return filter.InsertMany(keys);
    } else {
      return filter.MayContainMany(keys);
    }
  } else if constexpr (kCalls == Calls::kOrdinary) {
    uint64_t count = 0;
    for (uint64_t key : keys) {
      if constexpr (kInsert) {
        (void)filter.Insert(key);
      } else {
        count += filter.MayContain(key);
      }
    }
    return count;
  } else if constexpr (kCalls == Calls::kChained) {
    static_assert(!kInsert);
    return ChainedLookups(keys, [&filter](uint64_t key) { return filter.MayContain(key); });
  } else {
#ifdef __AVX2__
    return avx2::VisitProber(filter, [keys](const auto& probe) {
      uint64_t count = 0;
      for (uint64_t key : keys) {
        if constexpr (!kInsert) {
          count += probe.MayContain(key);
        } else if constexpr (kCalls == Calls::kCounted) {
          count += probe.Insert(key);
        } else {
          (void)probe.Insert(key);
        }
      }
      return count;
    });
#else
    static_assert(kCalls != kCalls, "the avx2::VisitProber rows need a file built for AVX2");
#endif
  }
}

// Fills a fresh filter; kConcurrent: a concurrent one (one thread: what the atomics cost).
template <Layout kLayout, Calls kCalls, bool kConcurrent = false,
          IntegerHash kIntegers = IntegerHash::kXxh3, Probe kProbe = Probe::kLatest>
void BM_LayoutInsert(benchmark::State& state) {
  FilterOptions options = OptionsFor(static_cast<uint64_t>(state.range(0)), kConcurrent, kIntegers);
  options.layout = kLayout;
  options.probe = kProbe;
  BlockedFilter filter = ValueOrDie(BlockedFilter::Create(options));
  FillOnce(state, filter, 0,
           [](BlockedFilter& f, std::span<const uint64_t> keys) { return Apply<kCalls>(f, keys); });
}

template <Layout kLayout, Calls kCalls, IntegerHash kIntegers = IntegerHash::kXxh3,
          Probe kProbe = Probe::kLatest>
void BM_LayoutMayContain(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const BlockedFilter& filter = FilledFilter(n, kIntegers, false, kLayout, kProbe);
  TimeLookups(state, StreamCursor(AbsentKeys(), state),
              [&filter](std::span<const uint64_t> keys) { return Apply<kCalls>(filter, keys); });
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), n);
}

// kIntegers kMix: the rows named <layout,mix>, the filter hashing integers by MixKey (key.h);
// kSeededMix: <layout,seeded-mix>, by SeededMixKey. kProbe kSalted: <layout,...,salted>, the
// probe of the files written before kFields (layout.h), every other row's being kFields.
template <Layout kLayout, IntegerHash kIntegers = IntegerHash::kXxh3, Probe kProbe = Probe::kLatest>
void RegisterLayout(int64_t n) {
  // Names built by appending: GCC 12 warns (-Wrestrict, a false positive) on literal + string.
  const std::string prefix = "BM_Layout_";
  std::string name = std::string("<").append(LayoutName(kLayout));
  if constexpr (kIntegers != IntegerHash::kXxh3)
    name.append(",").append(IntegerHashName(kIntegers));
  if constexpr (kProbe == Probe::kSalted) name.append(",salted");
  name.append(">").append(BLOOMERY_BENCH_TARGET);
  benchmark::RegisterBenchmark((prefix + "MayContainCall" + name).c_str(),
                               BM_LayoutMayContain<kLayout, Calls::kOrdinary, kIntegers, kProbe>)
      ->Arg(n);
  benchmark::RegisterBenchmark((prefix + "MayContainChained" + name).c_str(),
                               BM_LayoutMayContain<kLayout, Calls::kChained, kIntegers, kProbe>)
      ->Arg(n);
  RegisterFill((prefix + "InsertCall" + name).c_str(),
               BM_LayoutInsert<kLayout, Calls::kOrdinary, false, kIntegers, kProbe>, n);
  benchmark::RegisterBenchmark((prefix + "MayContainMany" + name).c_str(),
                               BM_LayoutMayContain<kLayout, Calls::kBulk, kIntegers, kProbe>)
      ->Arg(n);
  RegisterFill((prefix + "InsertMany" + name).c_str(),
               BM_LayoutInsert<kLayout, Calls::kBulk, false, kIntegers, kProbe>, n);
#ifdef __AVX2__
  benchmark::RegisterBenchmark((prefix + "MayContain" + name).c_str(),
                               BM_LayoutMayContain<kLayout, Calls::kCounted, kIntegers, kProbe>)
      ->Arg(n);
  RegisterFill((prefix + "Insert" + name).c_str(),
               BM_LayoutInsert<kLayout, Calls::kDiscarded, false, kIntegers, kProbe>, n);
  RegisterFill((prefix + "InsertCounted" + name).c_str(),
               BM_LayoutInsert<kLayout, Calls::kCounted, false, kIntegers, kProbe>, n);
  RegisterFill((prefix + "ConcurrentInsertMany" + name).c_str(),
               BM_LayoutInsert<kLayout, Calls::kBulk, true, kIntegers, kProbe>, n);
#endif
}

void Register() {
  for (int64_t n : kLayoutSizes) {
    RegisterLayout<Layout::kLine512>(n);
#ifdef __AVX2__
    // word64 and block256 with XXH3, not their default hash: in the v3 copy only.
    RegisterLayout<Layout::kBlock256>(n);
    RegisterLayout<Layout::kWord64>(n);
#endif
    RegisterLayout<Layout::kWord64, IntegerHash::kMix>(n);
    RegisterLayout<Layout::kBlock256, IntegerHash::kMix>(n);
    RegisterLayout<Layout::kWord64, IntegerHash::kSeededMix>(n);
    RegisterLayout<Layout::kBlock256, IntegerHash::kSeededMix>(n);
    // The line with MixKey, which is not its default: what XXH3 costs its integer keys.
    RegisterLayout<Layout::kLine512, IntegerHash::kMix>(n);
    // The salted probe of the files written before kFields, beside the default rows: what the
    // fields probe changed.
    RegisterLayout<Layout::kLine512, IntegerHash::kXxh3, Probe::kSalted>(n);
    RegisterLayout<Layout::kBlock256, IntegerHash::kSeededMix, Probe::kSalted>(n);
  }
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
