// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block256_layout.h (internal): Layout::kBlock256, a key's k bits in one 32-byte block, as plain
// scalar code: the reference every kernel and the inline probe are held to, bit for bit (the
// file format: a change here changes every saved block256 filter).
//
// The block (4 little-endian u64 words, chosen by 64-bit fastrange of hash.hi over bits / 256
// blocks) is 8 slices of 32 bits, slice j being the block's j-th little-endian u32 (bits
// 32 * (j % 2).. of word j / 2). Probe i (0 <= i < k <= 8) goes to slice (start + i) mod 8,
// start = hash.hi mod 8, at bit ProbeBit(h1, h2, i, 5): the line's salted double hashing
// (block_layout.h says why the salts). The split-block shape of Impala, Parquet, Arrow and
// Boost.Bloom's fast_multiblock32 (which puts k = 8 probes in 8 slices; here k < 8 takes k
// consecutive slices from a hash-chosen start, which the exact sliced model covers).
#ifndef BLOOMERY_LIB_INTERNAL_BLOCK256_LAYOUT_H_
#define BLOOMERY_LIB_INTERNAL_BLOCK256_LAYOUT_H_

#include <cstdint>

#include "bloomery/blocked_line.h"
#include "bloomery/key.h"
#include "internal/block_layout.h"

namespace bloomery::internal {

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
    mask.word[j / 2] |= uint64_t{1} << blocked_line::ProbeBit(h1, h2, i, 5) << (32 * (j & 1));
  }
  return mask;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_BLOCK256_LAYOUT_H_
