// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/word64.h: the word64 layout (layout.h), all k <= 8 bits of a key in one 64-bit word: its
// scalar reference and its inline AVX2 probe. Part of the file format (layout code 3,
// docs/FORMAT.md): every kernel and the inline probe are held to the reference bit for bit. Not an
// API: use BlockedFilter.
//
// The word (chosen by 64-bit fastrange of hi over bits / 64 words) is 8 slices of 8 bits, slice j
// being bits 8j..8j+7. Probe i (0 <= i < k <= 8) goes to slice (start + i) mod 8, start = hi mod 8,
// at bit byte i of Word64ProbeFields(lo): the top 3 bits of byte i of lo. Eight independent 3-bit
// fields of a 64-bit hash half need no double hashing: the probe's mask is one byte-table lookup
// (vpshufb) of the eight fields and one rotate. Why 8 x 8: the exact sliced model (plan.cc) gives
// 1.90% at 10 bits/key (k = 5) against 1.95% for 4 x 16 and 3.00% for 16 x 4, and 8 x 8 stays best
// from 9 bits/key up (docs/DESIGN.md, "Tried and rejected"). Its one probe is Probe::kFields.
//
// Concurrent Insert is exact: the key's bits are one word, set by one fetch_or after a relaxed load
// saw some missing, so of several threads inserting the same new key exactly one finds a bit
// missing in the old value its fetch_or returns.
#ifndef BLOOMERY_DETAIL_WORD64_H_
#define BLOOMERY_DETAIL_WORD64_H_

#include <bit>
#include <cstdint>

#include "bloomery/detail/probe_avx2.h"
#include "bloomery/detail/probe_common.h"
#include "bloomery/key.h"

namespace bloomery::detail {

// word64 (layout.h): the bits of its 8 probes in their 8-bit slices, one per byte (byte i: probe
// i's bit, 0..7), the top 3 bits of each byte of `lo`. The 8 fields are independent bits of the
// hash, so no probe is derived from another. The scalar reference reads byte i; the inline probe
// and the kernels look all 8 up at once in kWord64BitTable.
[[nodiscard]] inline uint64_t Word64ProbeFields(uint64_t lo) noexcept {
  return (lo >> 5) & 0x0707070707070707ull;
}
// The byte table that turns a field b into its `1 << b` (bytes 8..15 repeat 0..7: one 128-bit row
// for vpshufb).
alignas(16) inline constexpr uint8_t kWord64BitTable[16] = {1, 2, 4, 8, 16, 32, 64, 128,
                                                            1, 2, 4, 8, 16, 32, 64, 128};

// The key's k bits in its word.
[[nodiscard]] inline uint64_t Word64MaskScalar(const KeyHash& hash, uint32_t hashes) noexcept {
  const auto start = static_cast<uint32_t>(hash.hi);
  const uint64_t fields = Word64ProbeFields(hash.lo);
  uint64_t mask = 0;
  for (uint32_t i = 0; i < hashes; ++i) {
    const auto bit = static_cast<uint32_t>((fields >> (8 * i)) & 0xFF);
    mask |= uint64_t{1} << (8 * ((start + i) & 7) + bit);
  }
  return mask;
}

#if BLOOMERY_INLINE_PROBE

namespace avx2_probe {

// A word64 key's mask (this file): byte i of the probe fields holds probe i's bit (0x80
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

}  // namespace avx2_probe

// word64, k <= 8: whether every bit of the key is set in `*word`. Either concurrency mode (one
// 64-bit load in inline assembly, like avx2_probe::LoadShared: an atomic load would also keep the
// compiler from holding the filter's fields in registers across a caller's loop).
[[nodiscard, BLOOMERY_AVX2_PROBE]] inline bool TestWord64(const uint64_t* word, const KeyHash& hash,
                                                          const UnusedProbes& unused) noexcept {
  uint64_t bits;
  asm volatile("movq %1, %0" : "=r"(bits) : "m"(*word));
  return (avx2_probe::Word64Mask(hash, unused) & ~bits) == 0;
}

// word64: sets the key's bits in `*word`; whether one was 0 before. Concurrent: a relaxed load,
// then one fetch_or only if a bit is missing (the reference's SetBits), so exactly one of several
// racing inserters of a new key is told "new".
[[BLOOMERY_AVX2_PROBE]] inline bool SetWord64(uint64_t* word, const KeyHash& hash,
                                              const UnusedProbes& unused,
                                              bool concurrent) noexcept {
  const uint64_t mask = avx2_probe::Word64Mask(hash, unused);
  if (!concurrent) [[likely]] {
    const uint64_t old = *word;
    *word = old | mask;
    return (mask & ~old) != 0;
  }
  if ((mask & ~__atomic_load_n(word, __ATOMIC_RELAXED)) == 0) return false;
  return (mask & ~__atomic_fetch_or(word, mask, __ATOMIC_RELAXED)) != 0;
}

#endif  // BLOOMERY_INLINE_PROBE

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_WORD64_H_
