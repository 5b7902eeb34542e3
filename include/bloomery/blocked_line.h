// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_line.h: the blocked filter's line layout (probe salts, probe bit, line index) and the
// constant rows of the inline AVX2 probe (bloomery/blocked_filter_avx2.h). Not an API of its own:
// use BlockedFilter. (lib/internal/block_layout.h documents the layout in full; it is part of the
// file format.) Its content is the same whatever the includer's target flags.
#ifndef BLOOMERY_BLOCKED_LINE_H_
#define BLOOMERY_BLOCKED_LINE_H_

#include <cstdint>

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

// 64-bit fastrange (Lemire 2019): the high half of hi * lines. Uniform for any line count and
// free of the modulo's division; correct far beyond 2^32 lines.
[[nodiscard, gnu::always_inline]] inline uint64_t LineIndex(const KeyHash& hash,
                                                            uint64_t lines) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash.hi) * lines) >> 64);
}

// The inline probe's constant for k <= 8 probes: lane i holds 64 where probe i is unused
// (i >= k), else 0. Or-ed into a shift count, 64 makes vpsllvq (and block256's and word64's
// vpsllvd) yield 0. BlockedFilter keeps a
// pointer to its k's row, null where the inline probe must take the kernel (k > 8, or inserts
// on a concurrent filter).
// `bytes`: word64's form of the same row, 0x80 in byte i where probe i is unused: or-ed into the
// probe fields (Word64ProbeFields), it makes the byte-table lookup (vpshufb) yield 0 there.
struct alignas(32) UnusedProbes {
  uint32_t lane[kWordsPerLine];
  uint64_t bytes;
};
inline constexpr UnusedProbes kUnusedProbes[9] = {
    {{64, 64, 64, 64, 64, 64, 64, 64}, 0x8080808080808080ull},
    {{0, 64, 64, 64, 64, 64, 64, 64}, 0x8080808080808000ull},
    {{0, 0, 64, 64, 64, 64, 64, 64}, 0x8080808080800000ull},
    {{0, 0, 0, 64, 64, 64, 64, 64}, 0x8080808080000000ull},
    {{0, 0, 0, 0, 64, 64, 64, 64}, 0x8080808000000000ull},
    {{0, 0, 0, 0, 0, 64, 64, 64}, 0x8080800000000000ull},
    {{0, 0, 0, 0, 0, 0, 64, 64}, 0x8080000000000000ull},
    {{0, 0, 0, 0, 0, 0, 0, 64}, 0x8000000000000000ull},
    {{0, 0, 0, 0, 0, 0, 0, 0}, 0}};

}  // namespace bloomery::blocked_line

#endif  // BLOOMERY_BLOCKED_LINE_H_
