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

// 64-bit fastrange (Lemire 2019): the high half of hi * lines. Uniform for any line count and
// free of the modulo's division; correct far beyond 2^32 lines.
[[nodiscard]] inline uint64_t LineIndex(const KeyHash& hash, uint64_t lines) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash.hi) * lines) >> 64);
}

// The inline probe's constant for k <= 8 probes: lane i holds 64 where probe i is unused
// (i >= k), else 0. Or-ed into a shift count, 64 makes vpsllvq (and block256's and word64's
// vpsllvd) yield 0. BlockedFilter keeps a
// pointer to its k's row, null where the inline probe must take the kernel (k > 8, or inserts
// on a concurrent filter).
struct alignas(32) UnusedProbes {
  uint32_t lane[kWordsPerLine];
};
inline constexpr UnusedProbes kUnusedProbes[9] = {
    {64, 64, 64, 64, 64, 64, 64, 64}, {0, 64, 64, 64, 64, 64, 64, 64},
    {0, 0, 64, 64, 64, 64, 64, 64},   {0, 0, 0, 64, 64, 64, 64, 64},
    {0, 0, 0, 0, 64, 64, 64, 64},     {0, 0, 0, 0, 0, 64, 64, 64},
    {0, 0, 0, 0, 0, 0, 64, 64},       {0, 0, 0, 0, 0, 0, 0, 64},
    {0, 0, 0, 0, 0, 0, 0, 0}};

}  // namespace bloomery::blocked_line

#endif  // BLOOMERY_BLOCKED_LINE_H_
