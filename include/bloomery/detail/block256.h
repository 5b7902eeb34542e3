// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/block256.h: the block256 layout (layout.h), a key's k <= 8 bits in one 32-byte block: its
// scalar reference under each probe, and its inline AVX2 probe. Part of the file format (layout
// codes 1 and 6, docs/FORMAT.md): every kernel and the inline probe are held to the reference bit
// for bit. Not an API: use BlockedFilter.
//
// The block (4 little-endian u64 words, chosen by 64-bit fastrange of hi over bits / 256 blocks) is
// 8 slices of 32 bits, slice j being the block's j-th little-endian u32. The salted probe (code 1):
// probe i goes to slice (start + i) mod 8, start = hi mod 8, at bit ProbeBit(h1, h2, i, 5). The
// fields probe (code 6): slice j's bit is SliceField(lo, j, 5) where the start (lo mod 8) puts a
// probe. The split-block shape of Impala, Parquet, Arrow and Boost.Bloom's fast_multiblock32
// (which puts k = 8 probes in 8 slices; here k < 8 takes k consecutive slices from a hash-chosen
// start, which the exact sliced model covers).
#ifndef BLOOMERY_DETAIL_BLOCK256_H_
#define BLOOMERY_DETAIL_BLOCK256_H_

#include <cstdint>

#include "bloomery/detail/probe_avx2.h"
#include "bloomery/detail/probe_common.h"
#include "bloomery/key.h"

namespace bloomery::detail {

inline constexpr uint32_t kWordsPerBlock256 = 4;
using Block256Mask = BlockMask<kWordsPerBlock256>;

// The key's k bits in its block; SetBlockScalar / TestBlockScalar (line_ops.h) set and test them,
// as they do the line's.
[[nodiscard]] inline Block256Mask Block256MaskScalar(const KeyHash& hash,
                                                     uint32_t hashes) noexcept {
  const auto h1 = static_cast<uint32_t>(hash.lo);
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  const auto start = static_cast<uint32_t>(hash.hi);
  Block256Mask mask{};
  for (uint32_t i = 0; i < hashes; ++i) {
    const uint32_t j = (start + i) & 7;
    mask.word[j / 2] |= uint64_t{1} << ProbeBit(h1, h2, i, 5) << (32 * (j & 1));
  }
  return mask;
}

// Probe::kFields of block256 (layout code 6): slice j takes bit SliceField(lo, j, 5) when the key's
// start slice, FieldsStart(lo), puts a probe there ((j - start) mod 8 < k); probe_common.h says
// which hash bits each uses.
[[nodiscard]] inline Block256Mask Block256FieldsMaskScalar(const KeyHash& hash,
                                                           uint32_t hashes) noexcept {
  const uint32_t start = FieldsStart(hash.lo);
  Block256Mask mask{};
  for (uint32_t j = 0; j < 8; ++j) {
    if (((j - start) & 7) < hashes) {
      mask.word[j / 2] |= uint64_t{1} << SliceField(hash.lo, j, 5) << (32 * (j & 1));
    }
  }
  return mask;
}

#if BLOOMERY_INLINE_PROBE

namespace avx2_probe {

// The 8 slices' `1 << bit` of a block256 key in u32 lanes, lane j for slice j (0 where slice j
// takes no probe). The fields probe shifts its start's row of ones (UnusedProbes::ones_by_start).
template <Probe kProbe>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline __m256i SliceMask8(const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  if constexpr (kProbe == Probe::kFields) {
    return _mm256_sllv_epi32(_mm256_load_si256(reinterpret_cast<const __m256i*>(
                                 unused.ones_by_start[FieldsStart(hash.lo)])),
                             SliceFields<5>(hash));
  } else {
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), SliceShifts<27>(hash, unused));
  }
}

}  // namespace avx2_probe

// block256, k <= 8 (`unused` = kUnusedProbes[k]), kProbe's bits: whether every bit of the key is
// set in `block` (32-byte aligned). Either concurrency mode.
template <Probe kProbe = Probe::kSalted>
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool TestBlock256(const uint64_t* block,
                                                            const KeyHash& hash,
                                                            const UnusedProbes& unused) noexcept {
  const __m256i mask = avx2_probe::SliceMask8<kProbe>(hash, unused);
  const __m256i missing = _mm256_andnot_si256(avx2_probe::LoadShared(block), mask);
  return _mm256_testz_si256(missing, missing) != 0;
}

// block256, single writer: sets the key's bits in `block`; whether any was 0 before.
template <Probe kProbe = Probe::kSalted>
[[BLOOMERY_AVX2_PROBE]] inline bool SetBlock256(uint64_t* block, const KeyHash& hash,
                                                const UnusedProbes& unused) noexcept {
  const __m256i mask = avx2_probe::SliceMask8<kProbe>(hash, unused);
  auto* words = reinterpret_cast<__m256i*>(block);
  const __m256i old = _mm256_load_si256(words);
  _mm256_store_si256(words, _mm256_or_si256(old, mask));
  const __m256i missing = _mm256_andnot_si256(old, mask);
  return _mm256_testz_si256(missing, missing) == 0;
}

#endif  // BLOOMERY_INLINE_PROBE

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_BLOCK256_H_
