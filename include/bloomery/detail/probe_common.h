// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/probe_common.h: what every blocked layout's probe shares (layout.h, kBlockLayouts): the
// block index (64-bit fastrange), the salted probe's salts and bit (Probe::kSalted), the fields
// probe's start and fields (Probe::kFields), the constant rows of the inline AVX2 probes, and the
// mask type of a block. Part of the file format: a change here changes saved filters. Not an API:
// use BlockedFilter. Its content is the same whatever the includer's target flags.
#ifndef BLOOMERY_DETAIL_PROBE_COMMON_H_
#define BLOOMERY_DETAIL_PROBE_COMMON_H_

#include <array>
#include <cstdint>

#include "bloomery/key.h"

namespace bloomery::detail {

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

// Probe::kFields (layout.h) of the line (k <= 8, 64-bit slices: kFieldBits 6) and of block256
// (32-bit slices: 5): slice j's probe bit is a field of the hash's low word, F = field_bits bits.
// With a = lo mod 2^32 and b = lo >> 32, slice 2m takes bits [32 - F(m+1), 32 - Fm) of a and
// slice 2m + 1 the same bits of b: the top 4F bits of each half, no bit read twice. The key's k
// probes go to slices start, start + 1, ... (mod 8), start = lo mod 8: a's lowest 3 bits, below
// every field. The block is hash.hi's (LineIndex). So block, start and fields read disjoint bits
// of the hash at every block count, and no bit comes from a product of others.
[[nodiscard]] constexpr uint32_t FieldsStart(uint64_t lo) noexcept {
  return static_cast<uint32_t>(lo & 7);
}
[[nodiscard]] constexpr uint32_t SliceField(uint64_t lo, uint32_t slice,
                                            uint32_t field_bits) noexcept {
  const auto half = static_cast<uint32_t>((slice & 1) != 0 ? lo >> 32 : lo);
  return (half << (field_bits * (slice >> 1))) >> (32 - field_bits);
}
// The shift that brings slice j's field to the top of its u32 lane (lane j of a broadcast lo,
// seen as 8 u32 lanes: a, b, a, b, ...): one row per field width, for vpsllvd.
template <uint32_t kFieldBits>
struct alignas(32) FieldShiftRow {
  uint32_t lane[8] = {
      0, 0, kFieldBits, kFieldBits, 2 * kFieldBits, 2 * kFieldBits, 3 * kFieldBits, 3 * kFieldBits};
};
template <uint32_t kFieldBits>
inline constexpr FieldShiftRow<kFieldBits> kFieldShifts{};

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
// `by_start`: Probe::kFields' rotation, one row per start slice s: lane j holds 64 where slice j
// takes no probe (j - s mod 8 >= k), else 0; or-ed into the slices' fields, one row load does what
// the salted probe's lane permute does.
struct alignas(32) UnusedProbes {
  uint32_t lane[kWordsPerLine];
  uint64_t bytes;
  alignas(32) uint32_t by_start[8][kWordsPerLine];
  // `ones_by_start`: the same rotation as the bits to shift, for 32-bit slices (block256): lane j
  // holds 1 where slice j takes a probe, else 0, so one vpsllvd of the row by the slices' fields
  // is the key's mask, with no constant vector of ones to keep in a register.
  alignas(32) uint32_t ones_by_start[8][kWordsPerLine];
};
inline constexpr std::array<UnusedProbes, 9> kUnusedProbes = [] {
  std::array<UnusedProbes, 9> rows{};
  for (uint32_t k = 0; k <= 8; ++k) {
    for (uint32_t i = 0; i < kWordsPerLine; ++i) {
      rows[k].lane[i] = i < k ? 0 : 64;
      if (i >= k) rows[k].bytes |= uint64_t{0x80} << (8 * i);
      for (uint32_t start = 0; start < 8; ++start) {
        rows[k].by_start[start][i] = ((i - start) & 7) < k ? 0 : 64;
        rows[k].ones_by_start[start][i] = ((i - start) & 7) < k ? 1 : 0;
      }
    }
  }
  return rows;
}();

// A key's bits in a block of kWords little-endian u64 words (the line's 8, block256's 4): what a
// layout's scalar reference builds, and the kernels' mask arrays hold.
template <uint32_t kWords>
struct alignas(8 * kWords) BlockMask {
  uint64_t word[kWords];
};

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_PROBE_COMMON_H_
