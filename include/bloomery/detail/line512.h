// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/line512.h: the line512 layout (layout.h), a key's k bits in one 64-byte line: its scalar
// reference under each probe, and its inline AVX2 probe. Part of the file format (layout codes 0
// and 5, docs/FORMAT.md): every kernel (lib/layouts) and the inline probe are held to the reference
// bit for bit (tests/simd_test.cc). Not an API: use BlockedFilter.
//
// A line is 8 little-endian 64-bit words. With k <= 8 probes it holds 8 slices of 64 bits (slice j
// is word j); with 9 <= k <= 16, 16 slices of 32 bits (slice j is bits 32*(j%2).. of word j/2, the
// little-endian u32 view of the line). The salted probe (code 0): probe i (0 <= i < k) goes to
// slice (start + i) mod slices, start = hi mod slices, at bit
// (((h1 + i*h2) * kProbeSalt[i]) mod 2^32) >> (32 - log2(slice bits)). Why the salt: the top bits
// of a plain arithmetic progression h1 + i*h2 are a smooth function of (h1, h2), so two keys with
// nearby h1 and h2 share most of their probe positions; at k = 12 that tripled the measured FPR
// over the formula. The fields probe (code 5), k <= 8: slice j's bit is SliceField(lo, j, 6) where
// the start (lo mod 8) puts a probe (probe_common.h); k > 8 probes as code 0.
#ifndef BLOOMERY_DETAIL_LINE512_H_
#define BLOOMERY_DETAIL_LINE512_H_

#include <cstdint>

#include "bloomery/detail/probe_avx2.h"
#include "bloomery/detail/probe_common.h"
#include "bloomery/key.h"

namespace bloomery::detail {

// The start slice uses the low bits of `hi`; fastrange depends on them only through a carry,
// so start and block are independent for all practical block counts (< 2^56).
inline void MakeMaskScalar(const KeyHash& hash, uint32_t hashes, BlockMask<8>& mask) noexcept {
  const auto h1 = static_cast<uint32_t>(hash.lo);
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  if (hashes <= 8) {
    const auto start = static_cast<uint32_t>(hash.hi & 7);
    for (uint32_t j = 0; j < 8; ++j) {
      const uint32_t i = (j - start) & 7;
      mask.word[j] = i < hashes ? uint64_t{1} << ProbeBit(h1, h2, i, 6) : 0;
    }
  } else {
    const auto start = static_cast<uint32_t>(hash.hi & 15);
    for (uint32_t w = 0; w < kWordsPerLine; ++w) mask.word[w] = 0;
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t i = (j - start) & 15;
      if (i < hashes) mask.word[j / 2] |= uint64_t{1} << ProbeBit(h1, h2, i, 5) << (32 * (j & 1));
    }
  }
}

// Probe::kFields of the line (layout code 5): for k <= 8, slice j (word j) takes bit
// SliceField(lo, j, 6) when the key's start slice, FieldsStart(lo), puts a probe there
// ((j - start) mod 8 < k); probe_common.h says which hash bits each uses. For k > 8 (16 slices of
// 32 bits) the line probes as MakeMaskScalar does under either code.
inline void MakeFieldsMaskScalar(const KeyHash& hash, uint32_t hashes,
                                 BlockMask<8>& mask) noexcept {
  if (hashes > 8) {
    MakeMaskScalar(hash, hashes, mask);
    return;
  }
  const uint32_t start = FieldsStart(hash.lo);
  for (uint32_t j = 0; j < 8; ++j) {
    mask.word[j] = ((j - start) & 7) < hashes ? uint64_t{1} << SliceField(hash.lo, j, 6) : 0;
  }
}

#if BLOOMERY_INLINE_PROBE

namespace avx2_probe {

// The key's line mask for k <= 8: words 0..3 in `lo`, 4..7 in `hi`.
template <Probe kProbe>
[[BLOOMERY_AVX2_PROBE]] inline void LineMask64(const KeyHash& hash, const UnusedProbes& unused,
                                               __m256i& lo, __m256i& hi) noexcept {
  const __m256i shift = LineShiftsOf<kProbe>(hash, unused);
  const __m256i one = _mm256_set1_epi64x(1);
  lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shift)));
  hi = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(shift, 1)));
}

}  // namespace avx2_probe

// The line, k <= 8 (`unused` = kUnusedProbes[k]), kProbe's bits: whether every bit of the key is
// set in `line` (64-byte aligned). Either concurrency mode (avx2_probe::LoadShared).
template <Probe kProbe = Probe::kSalted>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool Test64(const uint64_t* line, const KeyHash& hash,
                                                      const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  avx2_probe::LineMask64<kProbe>(hash, unused, lo, hi);
  const __m256i missing =
      _mm256_or_si256(_mm256_andnot_si256(avx2_probe::LoadShared(line), lo),
                      _mm256_andnot_si256(avx2_probe::LoadShared(line + 4), hi));
  return _mm256_testz_si256(missing, missing) != 0;
}

// The line, k <= 8 (`unused` = kUnusedProbes[k]), single-writer: sets the key's bits in `line`;
// whether any was 0 before.
template <Probe kProbe = Probe::kSalted>
[[BLOOMERY_AVX2_PROBE]] inline bool Set64(uint64_t* line, const KeyHash& hash,
                                          const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  avx2_probe::LineMask64<kProbe>(hash, unused, lo, hi);
  auto* words = reinterpret_cast<__m256i*>(line);
  const __m256i old_lo = _mm256_load_si256(words);
  const __m256i old_hi = _mm256_load_si256(words + 1);
  _mm256_store_si256(words, _mm256_or_si256(old_lo, lo));
  _mm256_store_si256(words + 1, _mm256_or_si256(old_hi, hi));
  const __m256i missing =
      _mm256_or_si256(_mm256_andnot_si256(old_lo, lo), _mm256_andnot_si256(old_hi, hi));
  return _mm256_testz_si256(missing, missing) == 0;
}

#endif  // BLOOMERY_INLINE_PROBE

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_LINE512_H_
