// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_probe.h: BlockedFilter's single-key probe of each layout (the line, block256, word64)
// in AVX2, for the filter's own Insert and MayContain (blocked_filter.h) and for the opt-in
// avx2::Prober (blocked_filter_avx2.h). Not an API of its own: use BlockedFilter.
//
// Why inline, and in AVX2 whatever the includer's flags: out of cache a single lookup is one DRAM
// miss, and independent lookups in a caller's loop overlap only as far as the core's out-of-order
// window holds them, so the instructions per lookup set its speed. The SIMD kernels chosen at run
// time (block_kernels.h) cost a call and an indirect call per key; this probe is ~30 instructions
// (mask, load, test) with no call and no branch. A scalar probe in the baseline ISA measured
// 1.5-1.9x slower than the kernel for the line and block256, and for word64 0-9 % faster in
// cache, within 1 % out (docs/DESIGN.md, "Tried and rejected"), so the probe is AVX2 code in
// every file:
// - Every function here carries `target("avx2")`, so it compiles to the same AVX2 instructions
//   whatever flags the including file has: the text of this header never depends on them
//   (tests/header_flags_test.py).
// - The helpers are always_inline, so they never exist as an out-of-line copy of their own.
// - The six entries the filter calls (TestLineInline ... SetWord64Inline, one per layout and
//   operation) are `static`: each file holds its own copy, which no other file can link to. A file
//   built for AVX2 (-march=x86-64-v3) inlines them into its loop; any other file calls its copy
//   directly (one near call, no dispatch).
// - They run only where BlockedFilter's constructor found the CPU running AVX2 (its inline_test_
//   and inline_set_ are null elsewhere; then the filter takes the kernels).
// Every probe is held bit-identical to its layout's scalar reference by tests/simd_test.cc, built
// for the default target and again for x86-64-v3; tests/inline_probe_test.py checks that no
// AVX2 code is exported from a file that calls them.
//
// Every layout (layout.h) has its probe, for k <= 8: the line (two 256-bit loads and masks),
// block256 (one 256-bit load and mask) and word64 (its eight probe fields turned into bits by one
// byte-table lookup, one rotate to their slices, then one 64-bit test or or). Filters with k > 8,
// and inserts into a concurrent line or block256 filter, take the kernels; a concurrent word64
// insert is inline too (its one fetch_or, the reference's); lookups are inline in either
// concurrency mode (detail::LoadShared).
#ifndef BLOOMERY_BLOCKED_PROBE_H_
#define BLOOMERY_BLOCKED_PROBE_H_

#include "bloomery/blocked_line.h"

// x86-64 under GCC or clang (both honour the target attribute and declare every intrinsic in any
// file). Elsewhere BlockedFilter's single-key calls take the kernels.
#if defined(__x86_64__) && defined(__GNUC__)
#define BLOOMERY_INLINE_PROBE 1
#else
#define BLOOMERY_INLINE_PROBE 0
#endif

#if BLOOMERY_INLINE_PROBE

#include <immintrin.h>

#include <bit>
#include <cstdint>

#include "bloomery/key.h"

// The attributes of every helper below: compiled for AVX2, and inlined into its (AVX2) caller.
#define BLOOMERY_AVX2_PROBE gnu::target("avx2"), gnu::always_inline

namespace bloomery::blocked_line {
namespace detail {

// Lane i: kProbeSalt[i], and i * kProbeSalt[i] mod 2^32. Probe i's salted value
// (h1 + i*h2) * salt_i equals h1 * salt_i + h2 * (i * salt_i) mod 2^32, so its two vector
// multiplies are independent rather than chained: the probe's latency is one vpmulld's (~10
// cycles) shorter, which is most of what a single-key call waits on in cache.
struct alignas(32) SaltRows {
  uint32_t salt[8];
  uint32_t salt_times_probe[8];
};
inline constexpr SaltRows kSaltRows = [] {
  SaltRows rows{};
  for (uint32_t i = 0; i < 8; ++i) {
    rows.salt[i] = kProbeSalt[i];
    rows.salt_times_probe[i] = i * kProbeSalt[i];
  }
  return rows;
}();

// Lane i: probe i's salted value, ((h1 + i*h2) * salt_i) mod 2^32 (ProbeBit's before its shift).
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i SaltedProbes(const KeyHash& hash) noexcept {
  const __m256i from_h1 =
      _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(hash.lo)),
                         _mm256_load_si256(reinterpret_cast<const __m256i*>(kSaltRows.salt)));
  const __m256i from_h2 = _mm256_mullo_epi32(
      _mm256_set1_epi32(static_cast<int>(hash.lo >> 32)),
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kSaltRows.salt_times_probe)));
  return _mm256_add_epi32(from_h1, from_h2);
}

// The shift of each probe's bit in its slice for k <= 8, lane i for probe i: its top
// 32 - kBitsShift bits, or 64 or more for probes i >= k, which vpsllvq and vpsllvd turn into 0.
// kBitsShift: 26 for the line's 64-bit slices, 27 for block256's 32-bit ones.
template <int kBitsShift>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i ProbeShifts(const KeyHash& hash,
                                                              const UnusedProbes& unused) noexcept {
  return _mm256_or_si256(_mm256_srli_epi32(SaltedProbes(hash), kBitsShift),
                         _mm256_load_si256(reinterpret_cast<const __m256i*>(unused.lane)));
}

// The shift of each slice's bit for k <= 8 slices, lane j for slice j: ProbeShifts in probe
// order, then one lane permute moves probe i to its slice, (start + i) mod 8 (vpermd reads only
// the low 3 bits of each index). No branch; the only tables are constant rows read as memory
// operands.
template <int kBitsShift>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i SliceShifts(const KeyHash& hash,
                                                              const UnusedProbes& unused) noexcept {
  const __m256i probe = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Slice j takes probe (j - start) mod 8, start = hash.hi mod 8.
  return _mm256_permutevar8x32_epi32(
      ProbeShifts<kBitsShift>(hash, unused),
      _mm256_sub_epi32(probe, _mm256_set1_epi32(static_cast<int>(hash.hi))));
}

// The key's line mask for k <= 8: words 0..3 in `lo`, 4..7 in `hi`.
[[BLOOMERY_AVX2_PROBE]] inline void LineMask64(const KeyHash& hash, const UnusedProbes& unused,
                                               __m256i& lo, __m256i& hi) noexcept {
  const __m256i shift = SliceShifts<26>(hash, unused);
  const __m256i one = _mm256_set1_epi64x(1);
  lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shift)));
  hi = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(shift, 1)));
}

// The 8 slices' `1 << bit` of a block256 key (kBitsShift 27) in u32 lanes, lane j for slice j.
template <int kBitsShift>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i SliceMask8(const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  return _mm256_sllv_epi32(_mm256_set1_epi32(1), SliceShifts<kBitsShift>(hash, unused));
}

// A word64 key's mask (word64_layout.h): byte i of the probe fields holds probe i's bit (0x80
// where probe i is unused), one byte-table lookup turns each into its `1 << bit` (0 for 0x80),
// then one rotate by 8 * start bits moves probe i to its slice, byte (start + i) mod 8.
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline uint64_t Word64Mask(const KeyHash& hash,
                                                              const UnusedProbes& unused) noexcept {
  const uint64_t fields = Word64ProbeFields(hash.lo) | unused.bytes;
  const __m128i bits =
      _mm_shuffle_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(kWord64BitTable)),
                       _mm_cvtsi64_si128(static_cast<long long>(fields)));
  return std::rotl(static_cast<uint64_t>(_mm_cvtsi128_si64(bits)),
                   static_cast<int>(8 * (hash.hi & 7)));
}

// 32 bytes of a line, by one load in inline assembly: a read outside the C++ memory model, so
// concurrent filters may use it while other threads set bits (docs/DESIGN.md, "Concurrency
// contract"; the kernels' LoadShared). The compiled probe issued its loads as separate
// instructions before as well: single-writer lookups measured no slower.
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i LoadShared(const uint64_t* words) noexcept {
  __m256i v;
  asm volatile("vmovdqu %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const __m256i*>(words)));
  return v;
}

}  // namespace detail

// k <= 8 (`unused` = kUnusedProbes[k]): whether every bit of the key is set in `line` (64-byte
// aligned). Either concurrency mode (detail::LoadShared).
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool Test64(const uint64_t* line, const KeyHash& hash,
                                                      const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  detail::LineMask64(hash, unused, lo, hi);
  const __m256i missing = _mm256_or_si256(_mm256_andnot_si256(detail::LoadShared(line), lo),
                                          _mm256_andnot_si256(detail::LoadShared(line + 4), hi));
  return _mm256_testz_si256(missing, missing) != 0;
}

// k <= 8 (`unused` = kUnusedProbes[k]), single-writer: sets the key's bits in `line`; whether
// any was 0 before.
[[BLOOMERY_AVX2_PROBE]] inline bool Set64(uint64_t* line, const KeyHash& hash,
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

// block256, k <= 8 (`unused` = kUnusedProbes[k]): whether every bit of the key is set in `block`
// (32-byte aligned). Either concurrency mode.
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool TestBlock256(const uint64_t* block,
                                                            const KeyHash& hash,
                                                            const UnusedProbes& unused) noexcept {
  const __m256i mask = detail::SliceMask8<27>(hash, unused);
  const __m256i missing = _mm256_andnot_si256(detail::LoadShared(block), mask);
  return _mm256_testz_si256(missing, missing) != 0;
}

// block256, single writer: sets the key's bits in `block`; whether any was 0 before.
[[BLOOMERY_AVX2_PROBE]] inline bool SetBlock256(uint64_t* block, const KeyHash& hash,
                                                const UnusedProbes& unused) noexcept {
  const __m256i mask = detail::SliceMask8<27>(hash, unused);
  auto* words = reinterpret_cast<__m256i*>(block);
  const __m256i old = _mm256_load_si256(words);
  _mm256_store_si256(words, _mm256_or_si256(old, mask));
  const __m256i missing = _mm256_andnot_si256(old, mask);
  return _mm256_testz_si256(missing, missing) == 0;
}

// word64, k <= 8: whether every bit of the key is set in `*word`. Either concurrency mode (one
// 64-bit load in inline assembly, like detail::LoadShared: an atomic load would also keep the
// compiler from holding the filter's fields in registers across a caller's loop).
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool TestWord64(const uint64_t* word, const KeyHash& hash,
                                                          const UnusedProbes& unused) noexcept {
  uint64_t bits;
  asm volatile("movq %1, %0" : "=r"(bits) : "m"(*word));
  return (detail::Word64Mask(hash, unused) & ~bits) == 0;
}

// word64: sets the key's bits in `*word`; whether one was 0 before. Concurrent: a relaxed load,
// then one fetch_or only if a bit is missing (the reference's SetBits), so exactly one of several
// racing inserters of a new key is told "new".
[[BLOOMERY_AVX2_PROBE]] inline bool SetWord64(uint64_t* word, const KeyHash& hash,
                                              const UnusedProbes& unused,
                                              bool concurrent) noexcept {
  const uint64_t mask = detail::Word64Mask(hash, unused);
  if (!concurrent) [[likely]] {
    const uint64_t old = *word;
    *word = old | mask;
    return (mask & ~old) != 0;
  }
  if ((mask & ~__atomic_load_n(word, __ATOMIC_RELAXED)) == 0) return false;
  return (mask & ~__atomic_fetch_or(word, mask, __ATOMIC_RELAXED)) != 0;
}

// The entries BlockedFilter's Insert and MayContain call (see the file comment: static, so each
// file has its own copy; inlined where the file is built for AVX2). `block` is the key's block of
// the layout whose log2 words is `shift` (3 the line, 2 block256, 0 word64); `unused` is
// kUnusedProbes[k], k <= 8. One function per layout keeps each small enough to inline.
[[nodiscard, gnu::target("avx2")]] static inline bool TestLineInline(
    const uint64_t* block, const KeyHash& hash, const UnusedProbes& unused) noexcept {
  return Test64(block, hash, unused);
}
[[nodiscard, gnu::target("avx2")]] static inline bool TestBlock256Inline(
    const uint64_t* block, const KeyHash& hash, const UnusedProbes& unused) noexcept {
  return TestBlock256(block, hash, unused);
}
[[nodiscard, gnu::target("avx2")]] static inline bool TestWord64Inline(
    const uint64_t* block, const KeyHash& hash, const UnusedProbes& unused) noexcept {
  return TestWord64(block, hash, unused);
}
[[gnu::target("avx2")]] static inline bool SetLineInline(uint64_t* block, const KeyHash& hash,
                                                         const UnusedProbes& unused) noexcept {
  return Set64(block, hash, unused);
}
[[gnu::target("avx2")]] static inline bool SetBlock256Inline(uint64_t* block, const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  return SetBlock256(block, hash, unused);
}
[[gnu::target("avx2")]] static inline bool SetWord64Inline(uint64_t* block, const KeyHash& hash,
                                                           const UnusedProbes& unused,
                                                           bool concurrent) noexcept {
  return SetWord64(block, hash, unused, concurrent);
}

}  // namespace bloomery::blocked_line

#undef BLOOMERY_AVX2_PROBE

#endif  // BLOOMERY_INLINE_PROBE

#endif  // BLOOMERY_BLOCKED_PROBE_H_
