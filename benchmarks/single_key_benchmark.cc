// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// single_key_benchmark.cc: BlockedFilter's single-key Insert and MayContain, one key at a time.
// Built twice (benchmarks/meson.build): for the project's target, registering BM_Insert and
// BM_MayContain, and for x86-64-v3 with BLOOMERY_BENCH_TARGET="<x86-64-v3>", registering
// BM_Insert<x86-64-v3> and BM_MayContain<x86-64-v3>: the same loops of the filter's own calls,
// whose AVX2 probe (bloomery/detail/stored_layouts.h) is inlined there, as in a user's file built
// with -march=x86-64-v3 or native, the flags the Boost.Bloom families are built with; in the first
// copy it is one direct call per key. Both copies register BM_ConcurrentMayContain: BM_MayContain
// on a concurrent filter. The x86-64-v3 copy also registers BM_InsertMix and BM_MayContainMix: the
// same calls on a filter created with integer_hash = IntegerHash::kMix (key.h), the cheaper hash
// for integer keys, BM_MayContainMixHashed: that lookup with the caller hashing, and
// BM_ProbeShape<shape>: what the shape of a single-key probe costs (below).
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <cstdint>
#include <span>
#include <string>

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

// The single-key calls this copy measures: the filter's own, in either copy.
namespace calls {
template <typename Key>
[[gnu::always_inline]] inline bool Insert(BlockedFilter& filter, const Key& key) {
  return filter.Insert(key);
}
template <typename Key>
[[gnu::always_inline]] inline bool MayContain(const BlockedFilter& filter, const Key& key) {
  return filter.MayContain(key);
}
}  // namespace calls

template <IntegerHash kIntegers>
void BM_Insert(benchmark::State& state) {
  BlockedFilter filter = ValueOrDie(
      BlockedFilter::Create(OptionsFor(static_cast<uint64_t>(state.range(0)), false, kIntegers)));
  FillOnce(state, filter, 0, [](BlockedFilter& f, std::span<const uint64_t> keys) {
    size_t added = 0;
    for (uint64_t key : keys) added += calls::Insert(f, key);
    return added;
  });
}

// On a concurrent filter when kConcurrent. kCallerHashes (kMix only): the loop hashes each key
// with MixKey itself and calls MayContain(const KeyHash&), so no call chooses the hash per key.
template <IntegerHash kIntegers, bool kConcurrent = false, bool kCallerHashes = false>
void BM_MayContain(benchmark::State& state) {
  const BlockedFilter& filter =
      FilledFilter(static_cast<uint64_t>(state.range(0)), kIntegers, kConcurrent);
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&filter](std::span<const uint64_t> keys) {
    uint64_t found = 0;
    if constexpr (kCallerHashes) {
      static_assert(kIntegers == IntegerHash::kMix);
      const uint64_t seed = filter.hasher().seed();
      for (uint64_t key : keys) found += calls::MayContain(filter, MixKey(key, seed));
    } else {
      for (uint64_t key : keys) found += calls::MayContain(filter, key);
    }
    return found;
  });
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), filter.plan().capacity);
}

#ifdef __AVX2__
// BM_ProbeShape<shape>/n: single-key lookups of absent keys through three probe shapes over
// memory of the same size (10 bits/key, huge pages), each filled with keys 0 .. n-1 by its own
// insert, with the same hash (MixKey) and keys. It measures how far the shape of a single-key
// probe, rather than the miss, sets its speed out of cache, and what each shape gives for FPR:
// - line64: bloomery's inline probe (blocked_filter_avx2.h): k = 6 in a 64-byte line, double
// hashing,
//   slices rotated by the line hash; two 32-byte loads and ~30 vector instructions.
// - line64_lean: the fewest instructions a 64-byte line with a bit per 64-bit word can take on
//   AVX2: k = 6 bits from one 32-bit hash by one multiply, in words 0..5 (no double hashing, no
//   rotation); still two loads and 64-bit lanes. Not a layout of ours: its FPR shows why.
// - block32: the shape of Boost's fast_multiblock32<7>: k = 7 bits, one per 32-bit word of a
//   28-byte block placed at a 28-byte stride (so read by one unaligned 32-byte load, which may
//   span two lines), from one multiply; one load and one vptest.
// BM_MayContainMix<x86-64-v3> is line64 through BlockedFilter; BM_FloorAt/n/0 is one random line
// read per key with nothing else (no prefetch, as single calls have none).
enum class Shape { kLine64, kLine64Lean, kBlock32 };

struct ShapeLines {
  // 64-byte lines (block32: 28-byte blocks in the same bytes, each read as 32).
  std::vector<uint64_t, HugePageAllocator<uint64_t>> words;
  uint64_t lines;
};

[[gnu::always_inline]] inline __m256i SaltedBits(uint32_t h, int shift) {
  const __m256i salt = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(detail::kProbeSalt));
  return _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(h)), salt), shift);
}

// The key's bits: for the 64-byte shapes in `lo` (words 0..3) and `hi` (4..7), for block32 in
// `lo`; and the words they belong in.
template <Shape kShape>
[[gnu::always_inline]] inline uint64_t* ShapeMask(const ShapeLines& m, uint64_t key, __m256i& lo,
                                                  __m256i& hi) {
  const KeyHash h = MixKey(key, kDefaultSeed);
  if constexpr (kShape == Shape::kBlock32) {
    const __m256i bit = _mm256_or_si256(SaltedBits(static_cast<uint32_t>(h.lo), 27),
                                        _mm256_setr_epi32(0, 0, 0, 0, 0, 0, 0, 32));
    lo = _mm256_sllv_epi32(_mm256_set1_epi32(1), bit);
    hi = _mm256_setzero_si256();
    const uint64_t blocks = (m.lines * 64 - 32) / 28 + 1;
    return reinterpret_cast<uint64_t*>(
        reinterpret_cast<char*>(const_cast<uint64_t*>(m.words.data())) +
        detail::LineIndex(h, blocks) * 28);
  } else {
    const detail::UnusedProbes& unused = detail::kUnusedProbes[6];
    uint64_t* line = const_cast<uint64_t*>(m.words.data()) + detail::LineIndex(h, m.lines) * 8;
    if constexpr (kShape == Shape::kLine64) {
      detail::avx2_probe::LineMask64<Probe::kSalted>(h, unused, lo, hi);
    } else {
      const __m256i bit =
          _mm256_or_si256(SaltedBits(static_cast<uint32_t>(h.lo), 26),
                          _mm256_load_si256(reinterpret_cast<const __m256i*>(unused.lane)));
      const __m256i one = _mm256_set1_epi64x(1);
      lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(bit)));
      hi = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(bit, 1)));
    }
    return line;
  }
}

template <Shape kShape>
const ShapeLines& FilledShape(uint64_t n) {
  return Cached<ShapeLines>(n | (static_cast<uint64_t>(kShape) << 60), [n] {
    ShapeLines m;
    m.lines = (n * static_cast<uint64_t>(kBitsPerKey) + 511) / 512;
    m.words.resize(m.lines * 8);
    for (uint64_t key = 0; key < n; ++key) {
      __m256i lo, hi;
      auto* w = reinterpret_cast<__m256i*>(ShapeMask<kShape>(m, key, lo, hi));
      _mm256_storeu_si256(w, _mm256_or_si256(_mm256_loadu_si256(w), lo));
      if constexpr (kShape != Shape::kBlock32) {
        _mm256_storeu_si256(w + 1, _mm256_or_si256(_mm256_loadu_si256(w + 1), hi));
      }
    }
    return m;
  });
}

template <Shape kShape>
void BM_ProbeShape(benchmark::State& state) {
  const uint64_t n = static_cast<uint64_t>(state.range(0));
  const ShapeLines& m = FilledShape<kShape>(n);
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&m](std::span<const uint64_t> keys) {
    uint64_t found = 0;
    for (uint64_t key : keys) {
      __m256i lo, hi;
      const auto* w = reinterpret_cast<const __m256i*>(ShapeMask<kShape>(m, key, lo, hi));
      if constexpr (kShape == Shape::kBlock32) {
        found += _mm256_testc_si256(_mm256_loadu_si256(w), lo);
      } else {
        const __m256i missing = _mm256_or_si256(_mm256_andnot_si256(_mm256_load_si256(w), lo),
                                                _mm256_andnot_si256(_mm256_load_si256(w + 1), hi));
        found += _mm256_testz_si256(missing, missing);
      }
    }
    return found;
  });
  ReportBitsPerKey(state, static_cast<double>(m.lines * 512), n);
}
#endif  // __AVX2__

void Register() {
#ifdef __AVX2__
  // This copy runs AVX2 instructions: register it only where the CPU has them.
  if (!__builtin_cpu_supports("avx2")) return;
#endif
  const std::string target = BLOOMERY_BENCH_TARGET;
  for (int64_t n : kSizes) {
    benchmark::RegisterBenchmark(("BM_MayContain" + target).c_str(),
                                 BM_MayContain<IntegerHash::kXxh3>)
        ->Arg(n);
    RegisterFill(("BM_Insert" + target).c_str(), BM_Insert<IntegerHash::kXxh3>, n);
    benchmark::RegisterBenchmark(("BM_ConcurrentMayContain" + target).c_str(),
                                 BM_MayContain<IntegerHash::kXxh3, true>)
        ->Arg(n);
#ifdef __AVX2__
    benchmark::RegisterBenchmark(("BM_MayContainMix" + target).c_str(),
                                 BM_MayContain<IntegerHash::kMix>)
        ->Arg(n);
    RegisterFill(("BM_InsertMix" + target).c_str(), BM_Insert<IntegerHash::kMix>, n);
    benchmark::RegisterBenchmark(("BM_MayContainMixHashed" + target).c_str(),
                                 BM_MayContain<IntegerHash::kMix, false, true>)
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_ProbeShape<line64>", BM_ProbeShape<Shape::kLine64>)->Arg(n);
    benchmark::RegisterBenchmark("BM_ProbeShape<line64_lean>", BM_ProbeShape<Shape::kLine64Lean>)
        ->Arg(n);
    benchmark::RegisterBenchmark("BM_ProbeShape<block32>", BM_ProbeShape<Shape::kBlock32>)->Arg(n);
#endif
  }
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
