// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// boost_benchmark.cc: Boost.Bloom (boostorg/bloom, in Boost since 1.89) beside BlockedFilter, at
// the same 10 bits/key, over the same key streams. Built only with -Dpeer_boost_bloom=DIR (the
// include folder of a boostorg/bloom checkout; Debian 12's Boost 1.81 supplies the rest, and
// boost_compat/ the one trait 1.81 lacks). This file is compiled for x86-64-v3 (AVX2), which
// Boost's fast_multiblock* need for their SIMD paths, into bloomery_benchmark; and once more for
// the project's target with BLOOMERY_BENCH_TARGET="<baseline>", into bloomery_benchmark_baseline
// (a binary of its own: the two copies' Boost templates differ by ISA under the same names), where
// it registers the layouts' peers only, each name ending in "<baseline>": fast_multiblock32 is
// then Boost's SSE2 probe and fast_multiblock64 its scalar multiblock.
//
// Each Boost filter gets the same memory footing as ours: its array is 2 MiB-aligned, advised for
// transparent huge pages and faulted in before it is measured (HugePageAllocator,
// benchmark_util.h), so neither side pays TLB misses the other does not.
#include <boost/bloom/block.hpp>
#include <boost/bloom/fast_multiblock32.hpp>
#include <boost/bloom/fast_multiblock64.hpp>
#include <boost/bloom/filter.hpp>
#include <boost/bloom/multiblock.hpp>
#include <string_view>
#include <vector>

#include "benchmark_util.h"

#ifndef BLOOMERY_BENCH_TARGET
#define BLOOMERY_BENCH_TARGET ""
#endif

namespace bloomery::bench {
namespace {

template <typename Key, typename Subfilter, size_t kStride = 0>
using BoostFilter = boost::bloom::filter<Key, 1, Subfilter, kStride, boost::hash<Key>,
                                         HugePageAllocator<unsigned char>>;

// The configurations of issue #11: the fastest on AVX2, its 64-bit sibling, and the portable one
// with stride 1 (blocks overlap byte by byte; the most accurate of the three).
using Fast32 = boost::bloom::fast_multiblock32<7>;
using Fast64 = boost::bloom::fast_multiblock64<6>;
using Multi64 = boost::bloom::multiblock<uint64_t, 6>;
// The shapes of our layouts (layout_benchmark.cc), K = our planner's k at 10 bits/key: word64
// (k = 5) against block<uint64_t, 5>, block256 (k = 6) against fast_multiblock32<6>; the line
// (k = 6) against Fast64 and Multi64 above.
using Block64 = boost::bloom::block<uint64_t, 5>;
using Fast32k6 = boost::bloom::fast_multiblock32<6>;

template <typename Subfilter, size_t kStride, typename Key = uint64_t>
BoostFilter<Key, Subfilter, kStride> MakeBoost(uint64_t n) {
  return BoostFilter<Key, Subfilter, kStride>(
      static_cast<size_t>(kBitsPerKey * static_cast<double>(n)));
}

template <typename Filter>
void ReportBoostBits(benchmark::State& state, const Filter& f, uint64_t n) {
  ReportBitsPerKey(state, static_cast<double>(f.capacity()), n);
}

template <typename Subfilter, size_t kStride>
const BoostFilter<uint64_t, Subfilter, kStride>& FilledBoost(uint64_t n) {
  // One cache per configuration: Cached keys on the size alone.
  return Cached<BoostFilter<uint64_t, Subfilter, kStride>>(n, [n] {
    auto f = MakeBoost<Subfilter, kStride>(n);
    std::vector<uint64_t> keys(kChunk);
    for (uint64_t first = 0; first < n; first += kChunk) {
      FillSequential(first, keys);
      f.insert(keys.begin(),
               keys.begin() + static_cast<ptrdiff_t>(std::min<uint64_t>(kChunk, n - first)));
    }
    return f;
  });
}

// One key at a time (insert(key)) or the whole chunk (insert(first, last)).
template <typename Subfilter, size_t kStride, bool kBulk>
void BM_Boost_Insert(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  auto f = MakeBoost<Subfilter, kStride>(n);
  std::vector<uint64_t> keys(kChunk);
  uint64_t first = 0;
  for (auto _ : state) {
    FillSequential(first, keys);
    first += kChunk;
    if constexpr (kBulk) {
      f.insert(keys.begin(), keys.end());
    } else {
      for (uint64_t key : keys) f.insert(key);
    }
  }
  ReportKeys(state, state.iterations() * kChunk);
  ReportBoostBits(state, f, n);
}

// Counts the hits of may_contain(key) for each key, or of may_contain(first, last, f).
template <bool kBulk, typename Filter, typename Key>
uint64_t BoostLookups(const Filter& f, std::span<const Key> chunk) {
  uint64_t found = 0;
  if constexpr (kBulk) {
    f.may_contain(chunk.begin(), chunk.end(), [&found](const Key&, bool hit) { found += hit; });
  } else {
    for (const Key& key : chunk) found += f.may_contain(key);
  }
  return found;
}

// One lookup at a time: key i offset by the answer of key i - 1, so each waits for the last (the
// memory's latency; BM_Layout_MayContainChained is ours).
template <typename Subfilter, size_t kStride>
void BM_Boost_MayContainChained(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const auto& f = FilledBoost<Subfilter, kStride>(n);
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&f](std::span<const uint64_t> chunk) {
    return ChainedLookups(chunk, [&f](uint64_t key) { return f.may_contain(key); });
  });
  ReportBoostBits(state, f, n);
}

template <typename Subfilter, size_t kStride, bool kBulk>
void BM_Boost_MayContain(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const auto& f = FilledBoost<Subfilter, kStride>(n);
  TimeLookups(state, StreamCursor(AbsentKeys(), state),
              [&f](std::span<const uint64_t> chunk) { return BoostLookups<kBulk>(f, chunk); });
  ReportBoostBits(state, f, n);
}

#ifdef __AVX2__
// URL-like keys (UrlKeys, benchmark_util.h) with boost::hash<std::string_view>,
// fast_multiblock32<7>.
using BoostUrlFilter = BoostFilter<std::string_view, Fast32>;

const BoostUrlFilter& FilledBoostUrl(uint64_t n) {
  return Cached<BoostUrlFilter>(n, [n] {
    BoostUrlFilter f(static_cast<size_t>(kBitsPerKey * static_cast<double>(n)));
    UrlChunk chunk;
    for (uint64_t first = 0; first < n; first += kChunk) {
      const std::span<const std::string_view> keys =
          chunk.Fill(first, std::min<uint64_t>(kChunk, n - first));
      f.insert(keys.begin(), keys.end());
    }
    return f;
  });
}

template <bool kBulk>
void BM_Boost_InsertUrl(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  BoostUrlFilter f(static_cast<size_t>(kBitsPerKey * static_cast<double>(n)));
  FillUrlsOnce(state, [&f](std::span<const std::string_view> keys) {
    if constexpr (kBulk) {
      f.insert(keys.begin(), keys.end());
    } else {
      for (std::string_view key : keys) f.insert(key);
    }
  });
  ReportBoostBits(state, f, n);
}

template <bool kBulk>
void BM_Boost_MayContainUrl(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(state.range(0));
  const BoostUrlFilter& f = FilledBoostUrl(n);
  TimeLookups(state, UrlCursor(AbsentUrls(), state), [&f](std::span<const std::string_view> chunk) {
    return BoostLookups<kBulk>(f, chunk);
  });
  ReportBoostBits(state, f, n);
}
#endif  // __AVX2__

template <typename Subfilter, size_t kStride>
void RegisterConfig(const std::string& name, int64_t n) {
  const std::string prefix = "BM_Boost_";
  const std::string suffix = "<" + name + ">" + BLOOMERY_BENCH_TARGET;
  benchmark::RegisterBenchmark((prefix + "MayContain" + suffix).c_str(),
                               BM_Boost_MayContain<Subfilter, kStride, false>)
      ->Arg(n);
  benchmark::RegisterBenchmark((prefix + "MayContainMany" + suffix).c_str(),
                               BM_Boost_MayContain<Subfilter, kStride, true>)
      ->Arg(n);
  benchmark::RegisterBenchmark((prefix + "MayContainChained" + suffix).c_str(),
                               BM_Boost_MayContainChained<Subfilter, kStride>)
      ->Arg(n);
  RegisterFill((prefix + "Insert" + suffix).c_str(), BM_Boost_Insert<Subfilter, kStride, false>, n);
  RegisterFill((prefix + "InsertMany" + suffix).c_str(), BM_Boost_Insert<Subfilter, kStride, true>,
               n);
}

void Register() {
  // The layouts' peers at layout_benchmark.cc's sizes (2^20 is in kSizes too).
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 26}) {
    RegisterConfig<Block64, 0>("block<uint64_t,5>", n);
    RegisterConfig<Fast32k6, 0>("fast_multiblock32<6>", n);
  }
  RegisterConfig<Fast64, 0>("fast_multiblock64<6>", int64_t{1} << 26);
#ifndef __AVX2__
  // The baseline copy: the line's peer in cache too, and nothing else.
  RegisterConfig<Fast64, 0>("fast_multiblock64<6>", int64_t{1} << 20);
#else
  RegisterConfig<Multi64, 1>("multiblock<uint64_t,6>,stride1", int64_t{1} << 26);
  for (int64_t n : kSizes) {
    RegisterConfig<Fast32, 0>("fast_multiblock32<7>", n);
    RegisterConfig<Fast64, 0>("fast_multiblock64<6>", n);
    RegisterConfig<Multi64, 1>("multiblock<uint64_t,6>,stride1", n);
    benchmark::RegisterBenchmark("BM_Boost_MayContainUrl<fast_multiblock32<7>>",
                                 BM_Boost_MayContainUrl<false>)
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_Boost_MayContainManyUrl<fast_multiblock32<7>>",
                                 BM_Boost_MayContainUrl<true>)
        ->Arg(n);
    RegisterFill("BM_Boost_InsertUrl<fast_multiblock32<7>>", BM_Boost_InsertUrl<false>, n);
    RegisterFill("BM_Boost_InsertManyUrl<fast_multiblock32<7>>", BM_Boost_InsertUrl<true>, n);
  }
#endif
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
