// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/probe_avx2.h: what every blocked layout's inline AVX2 probe shares: the macros that say
// where it runs, and the derivations of the salted and the fields probes' slice shifts. Each
// layout's probe (detail/line512.h, block256.h, word64.h) builds on it; detail/stored_layouts.h
// holds the entries BlockedFilter calls, and says why the probe is inline AVX2 in every file.
#ifndef BLOOMERY_DETAIL_PROBE_AVX2_H_
#define BLOOMERY_DETAIL_PROBE_AVX2_H_

#include "bloomery/detail/probe_common.h"
#include "bloomery/layout.h"

// x86-64 under GCC or clang (both honour the target attribute and declare every intrinsic in any
// file). Elsewhere BlockedFilter's single-key calls take the kernels.
#if defined(__x86_64__) && defined(__GNUC__)
#define BLOOMERY_INLINE_PROBE 1
#else
#define BLOOMERY_INLINE_PROBE 0
#endif

#if BLOOMERY_INLINE_PROBE

#include <immintrin.h>

#include <cstdint>

// The attributes of every helper of the inline probes: compiled for AVX2, and inlined into its
// (AVX2) caller.
#define BLOOMERY_AVX2_PROBE gnu::target("avx2"), gnu::always_inline

namespace bloomery::detail::avx2_probe {

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

// Probe::kFields' field of each slice, lane j for slice j: its kFieldBits-bit field
// (probe_common.h, SliceField: one broadcast of lo, one vpsllvd by a constant row, one vpsrld).
template <uint32_t kFieldBits>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i SliceFields(const KeyHash& hash) noexcept {
  const __m256i word = _mm256_set1_epi64x(static_cast<long long>(hash.lo));
  return _mm256_srli_epi32(
      _mm256_sllv_epi32(
          word, _mm256_load_si256(reinterpret_cast<const __m256i*>(kFieldShifts<kFieldBits>.lane))),
      32 - kFieldBits);
}

// Probe::kFields' shift of each slice's bit, lane j for slice j: SliceFields, or 64 or more where
// the key's start leaves slice j without a probe (one row of UnusedProbes::by_start, indexed by
// the start). No multiply, no lane permute.
template <uint32_t kFieldBits>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i FieldSliceShifts(
    const KeyHash& hash, const UnusedProbes& unused) noexcept {
  return _mm256_or_si256(
      SliceFields<kFieldBits>(hash),
      _mm256_load_si256(reinterpret_cast<const __m256i*>(unused.by_start[FieldsStart(hash.lo)])));
}

// The shift of each 64-bit slice's bit of a line512 key, k <= 8, under kProbe, lane j for slice
// j: the salted probe's 26, or 6-bit fields. (block256 derives its own: block256.h.)
template <Probe kProbe>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i LineShiftsOf(
    const KeyHash& hash, const UnusedProbes& unused) noexcept {
  if constexpr (kProbe == Probe::kSalted) {
    return SliceShifts<26>(hash, unused);
  } else {
    return FieldSliceShifts<6>(hash, unused);
  }
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

}  // namespace bloomery::detail::avx2_probe

#endif  // BLOOMERY_INLINE_PROBE

#endif  // BLOOMERY_DETAIL_PROBE_AVX2_H_
