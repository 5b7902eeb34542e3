// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// line_ops.h (internal): the scalar reference for testing and setting a block's bits (the line's,
// block256's), in both concurrency modes, and the exact FPR of one block of any shape from its
// bits.
//
// The SIMD kernels (lib/layouts/block_kernels-inl.h) are held to the same answers and bytes as
// these functions in both modes. For concurrent filters these functions use relaxed atomics for
// every access; the kernels write the same way (fetch_or) but read a line with one vector load in
// inline assembly (LoadShared there, which says why that is sound).
#ifndef BLOOMERY_LIB_LAYOUTS_INTERNAL_LINE_OPS_H_
#define BLOOMERY_LIB_LAYOUTS_INTERNAL_LINE_OPS_H_

#include <atomic>
#include <bit>
#include <cstdint>

#include "bits/internal/bit_count.h"
#include "bits/internal/fill_estimate.h"
#include "bits/internal/filter_ops.h"
#include "bloomery/layout.h"
#include "layouts/internal/block_layout.h"

namespace bloomery::detail {

// Sets `mask` in `block`; returns whether any of its bits was 0 before. Only words whose bits are
// missing are written in concurrent mode (SetBits). One template for every shape with a
// multi-word mask (the line's 8 words, block256's 4).
template <uint32_t kWords>
inline bool SetBlockScalar(uint64_t* block, const BlockMask<kWords>& mask,
                           bool concurrent) noexcept {
  uint64_t missing = 0;
  for (uint32_t j = 0; j < kWords; ++j) missing |= SetBits(block + j, mask.word[j], concurrent);
  return missing != 0;
}

// Whether every bit of `mask` is set in `block`.
template <uint32_t kWords>
[[nodiscard]] inline bool TestBlockScalar(const uint64_t* block, const BlockMask<kWords>& mask,
                                          bool concurrent) noexcept {
  uint64_t missing = 0;
  for (uint32_t j = 0; j < kWords; ++j) missing |= mask.word[j] & ~LoadWord(block + j, concurrent);
  return missing == 0;
}

// How a block splits into the slices a key's probes land in: `count` (<= 16) slices of `bits`
// (8, 32 or 64) bits, slice j being bits j * bits.. of the block's little-endian words.
struct BlockSlices {
  uint32_t count;
  uint32_t bits;
};

// The slices of a block of `layout` with `hashes` probes (layout.h: SlicesOf, and block_bits
// over them): what BlockFpr reads, resolved once per filter rather than per block.
[[nodiscard]] constexpr BlockSlices SlicesOfBlock(Layout layout, uint32_t hashes) noexcept {
  const uint32_t count = SlicesOf(layout, hashes);
  return {count, FindBlockShape(layout)->block_bits / count};
}

// The probability that a random key absent from this block finds all its k bits set: the mean,
// over the start slices, of the product of the k slices' fill ratios (the exact per-block term
// of a blocked filter's FPR). One reading of every shape (the line, block256, word64). With
// `set_bits`, also the block's set bits (Health's fill, read in the same pass).
[[nodiscard]] inline double BlockFpr(const uint64_t* block, BlockSlices slices, uint32_t hashes,
                                     uint32_t* set_bits = nullptr) noexcept {
  const uint64_t mask = slices.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << slices.bits) - 1;
  // Slices are a power of two bits wide, so times the reciprocal is the division to the bit,
  // without a divide's latency per slice.
  const double per_bit = 1.0 / slices.bits;
  double fill[16];
  uint32_t total = 0;
  for (uint32_t j = 0; j < slices.count; ++j) {
    const uint32_t bit = j * slices.bits;
    const auto set = BitCount((LoadRelaxed(block + bit / 64) >> (bit % 64)) & mask);
    total += set;
    fill[j] = static_cast<double>(set) * per_bit;
  }
  if (set_bits != nullptr) *set_bits = total;
  return SlicedLineFprFromFill(fill, slices.count, hashes);
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_LAYOUTS_INTERNAL_LINE_OPS_H_
