// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_layout.h (internal): the bit layout of a blocked filter line, as plain scalar code.
//
// This is the reference definition of which bits a key sets. It is part of the file format: a
// change here changes every saved filter and must bump the format version. Every SIMD kernel is
// held to bit-identical results against MakeMaskScalar.
//
// A line is 8 little-endian 64-bit words. With k <= 8 probes it holds 8 slices of 64 bits (slice j
// is word j); with 9 <= k <= 16, 16 slices of 32 bits (slice j is bits 32*(j%2).. of word j/2, i.e.
// the little-endian u32 view of the line). Probe i (0 <= i < k) goes to slice (start + i) mod
// slices at bit (((h1 + i*h2) * kProbeSalt[i]) mod 2^32) >> (32 - log2(slice_bits)).
//
// Why the salt: the top bits of a plain arithmetic progression h1 + i*h2 are a smooth function of
// (h1, h2), so two keys with nearby h1 and h2 share most of their probe positions; at k = 12 that
// tripled the measured FPR over the formula. Multiplying lane i by its own odd constant (as
// Parquet's split block filter does with one hash) makes the lanes' top bits behave independently;
// the double hashing still feeds all 64 bits of (h1, h2) into every lane.
#ifndef BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_
#define BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_

#include <cstdint>

#include "bloomery/blocked_line.h"
#include "bloomery/key.h"

namespace bloomery::internal {

inline constexpr uint32_t kWordsPerBlock = blocked_line::kWordsPerLine;

// The salts, the probe bit and the block index are defined in bloomery/blocked_line.h, whose
// inline single-key probe is held to MakeMaskScalar like every SIMD kernel.
using blocked_line::kProbeSalt;
using blocked_line::ProbeBit;

// A key's bits in a block of kWords little-endian u64 words (the line's 8, block256's 4).
template <uint32_t kWords>
struct alignas(8 * kWords) BlockMask {
  uint64_t word[kWords];
};
using LineMask = BlockMask<kWordsPerBlock>;

[[nodiscard]] inline uint64_t BlockIndex(const KeyHash& hash, uint64_t blocks) noexcept {
  return blocked_line::LineIndex(hash, blocks);
}

// The start slice uses the low bits of `hi`; fastrange depends on them only through a carry,
// so start and block are independent for all practical block counts (< 2^56).
inline void MakeMaskScalar(const KeyHash& hash, uint32_t hashes, LineMask& mask) noexcept {
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
    for (uint32_t w = 0; w < kWordsPerBlock; ++w) mask.word[w] = 0;
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t i = (j - start) & 15;
      if (i < hashes) mask.word[j / 2] |= uint64_t{1} << ProbeBit(h1, h2, i, 5) << (32 * (j & 1));
    }
  }
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_
