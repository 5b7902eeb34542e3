// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_line.h: the blocked filter's line layout (probe salts, probe bit, line index) and, for
// callers compiled for AVX2, an inline single-key probe held bit-identical to the kernels by
// tests/simd_test.cc (built a second time for x86-64-v3). Not an API of its own: use BlockedFilter.
// (lib/internal/block_layout.h documents the layout in full; it is part of the file format.)
//
// Why inline, and why only for AVX2: out of cache a single lookup is one DRAM miss, and
// independent lookups in a caller's loop overlap only as far as the core's out-of-order window
// holds them, so the instructions per lookup set its speed. The dispatched kernel costs a call
// chain and an indirect call per key; the AVX2 probe is ~30 instructions (line index, mask,
// test) with no call and no branch. A scalar inline probe (k multiply-shift-load-test rounds,
// ~80 instructions with the hash) measured slower than the dispatched kernel, so a caller compiled
// without AVX2 keeps the kernel (the run-time choice of target needs the call). Figures:
// benchmarks/README.md.
#ifndef BLOOMERY_BLOCKED_LINE_H_
#define BLOOMERY_BLOCKED_LINE_H_

#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "bloomery/key.h"

namespace bloomery::blocked_line {

inline constexpr uint32_t kWordsPerLine = 8;

// Odd multipliers, one per probe: the high 32 bits (| 1) of the first 16 SplitMix64 outputs from
// state 0.
inline constexpr uint32_t kProbeSalt[16] = {0xE220A839u, 0x6E789E6Bu, 0x06C45D19u, 0xF88BB8A9u,
                                            0x1B39896Bu, 0x53CB9F0Du, 0x2C829ABFu, 0xC584133Bu,
                                            0x3EE57891u, 0xF3B8488Du, 0x657EECDDu, 0xC2D326E1u,
                                            0x8621A03Fu, 0x8E1F7555u, 0xB54E0F17u, 0x84BB3F97u};

// Bit of probe i within its slice of 2^slice_shift bits.
[[nodiscard]] inline uint32_t ProbeBit(uint32_t h1, uint32_t h2, uint32_t i,
                                       uint32_t slice_shift) noexcept {
  return ((h1 + i * h2) * kProbeSalt[i]) >> (32 - slice_shift);
}

// 64-bit fastrange (Lemire 2019): the high half of hi * lines. Uniform for any line count and
// free of the modulo's division; correct far beyond 2^32 lines.
[[nodiscard]] inline uint64_t LineIndex(const KeyHash& hash, uint64_t lines) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash.hi) * lines) >> 64);
}

// The inline probe's constant for k <= 8 probes: lane i holds 64 where probe i is unused
// (i >= k), else 0. Or-ed into a shift count, 64 makes vpsllvq yield 0. BlockedFilter keeps a
// pointer to its k's row, null where its calls must take the kernel (k > 8, or concurrent).
struct alignas(32) UnusedProbes {
  uint32_t lane[kWordsPerLine];
};
inline constexpr UnusedProbes kUnusedProbes[9] = {
    {64, 64, 64, 64, 64, 64, 64, 64}, {0, 64, 64, 64, 64, 64, 64, 64},
    {0, 0, 64, 64, 64, 64, 64, 64},   {0, 0, 0, 64, 64, 64, 64, 64},
    {0, 0, 0, 0, 64, 64, 64, 64},     {0, 0, 0, 0, 0, 64, 64, 64},
    {0, 0, 0, 0, 0, 0, 64, 64},       {0, 0, 0, 0, 0, 0, 0, 64},
    {0, 0, 0, 0, 0, 0, 0, 0}};

#if defined(__AVX2__)
// The caller is compiled for AVX2 (e.g. -march=x86-64-v3, -march=native): BlockedFilter's
// single-key calls with k <= 8 on a single-writer filter probe inline, with no call at all.
#define BLOOMERY_INLINE_LINE_PROBE 1

namespace detail {

// The key's line mask for k <= 8: words 0..3 in `lo`, 4..7 in `hi`. The eight probe bits are
// computed in probe order (lane i: probe i, with its own salt; probes i >= k get a shift of 64 or
// more, which vpsllvq turns into 0), then one lane permute moves probe i to its slice,
// (start + i) mod 8 (vpermd reads only the low 3 bits of each index). No branch; the only tables
// are a constant vector per k and the salts, read as memory operands.
[[gnu::always_inline]] inline void LineMask64(const KeyHash& hash, const UnusedProbes& unused,
                                              __m256i& lo, __m256i& hi) noexcept {
  const __m256i probe = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i g = _mm256_add_epi32(
      _mm256_set1_epi32(static_cast<int>(hash.lo)),
      _mm256_mullo_epi32(probe, _mm256_set1_epi32(static_cast<int>(hash.lo >> 32))));
  const __m256i salted =
      _mm256_mullo_epi32(g, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kProbeSalt)));
  const __m256i bit =
      _mm256_or_si256(_mm256_srli_epi32(salted, 26),
                      _mm256_load_si256(reinterpret_cast<const __m256i*>(unused.lane)));
  // Slice j takes probe (j - start) mod 8, start = hash.hi mod 8.
  const __m256i shift = _mm256_permutevar8x32_epi32(
      bit, _mm256_sub_epi32(probe, _mm256_set1_epi32(static_cast<int>(hash.hi))));
  const __m256i one = _mm256_set1_epi64x(1);
  lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shift)));
  hi = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(shift, 1)));
}

// 32 bytes of a line, by one load in inline assembly: a read outside the C++ memory model, so
// concurrent filters may use it while other threads set bits (docs/DESIGN.md, "Concurrency
// contract"; the kernels' LoadShared). The compiled probe issued its loads as separate
// instructions before as well: single-writer lookups measured no slower (benchmarks/README.md).
[[nodiscard, gnu::always_inline]] inline __m256i LoadShared(const uint64_t* words) noexcept {
  __m256i v;
  asm volatile("vmovdqu %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const __m256i*>(words)));
  return v;
}

}  // namespace detail

// k <= 8 (`unused` = kUnusedProbes[k]): whether every bit of the key is set in `line` (64-byte
// aligned). Either concurrency mode (detail::LoadShared).
[[nodiscard, gnu::always_inline]] inline bool Test64(const uint64_t* line, const KeyHash& hash,
                                                     const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  detail::LineMask64(hash, unused, lo, hi);
  const __m256i missing = _mm256_or_si256(_mm256_andnot_si256(detail::LoadShared(line), lo),
                                          _mm256_andnot_si256(detail::LoadShared(line + 4), hi));
  return _mm256_testz_si256(missing, missing) != 0;
}

// k <= 8 (`unused` = kUnusedProbes[k]), single-writer: sets the key's bits in `line`; whether
// any was 0 before.
[[gnu::always_inline]] inline bool Set64(uint64_t* line, const KeyHash& hash,
                                         const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  detail::LineMask64(hash, unused, lo, hi);
  auto* words = reinterpret_cast<__m256i*>(line);
  const __m256i old_lo = _mm256_load_si256(words);
  const __m256i old_hi = _mm256_load_si256(words + 1);
  _mm256_store_si256(words, _mm256_or_si256(old_lo, lo));
  _mm256_store_si256(words + 1, _mm256_or_si256(old_hi, hi));
  const __m256i missing =
      _mm256_or_si256(_mm256_andnot_si256(old_lo, lo), _mm256_andnot_si256(old_hi, hi));
  return _mm256_testz_si256(missing, missing) == 0;
}
#endif  // __AVX2__

}  // namespace bloomery::blocked_line

#endif  // BLOOMERY_BLOCKED_LINE_H_
