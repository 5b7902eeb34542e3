// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// line_ops.h (internal): the scalar reference for testing and setting a line's bits, in both
// concurrency modes.
//
// The SIMD kernels (lib/simd/block_kernels-inl.h) are held to the same answers and bytes as these
// functions in both modes. For concurrent filters these functions use relaxed atomics for every
// access; the kernels write the same way (fetch_or) but read a line with one vector load in inline
// assembly (LoadShared there, which says why that is sound).
#ifndef BLOOMERY_LIB_INTERNAL_LINE_OPS_H_
#define BLOOMERY_LIB_INTERNAL_LINE_OPS_H_

#include <atomic>
#include <bit>
#include <cstdint>

#include "bloomery/plan.h"
#include "internal/block_layout.h"
#include "internal/fill_estimate.h"
#include "internal/filter_ops.h"

namespace bloomery::internal {

// Sets `mask` in `line`; returns whether any of its bits was 0 before. Only words whose bits are
// missing are written in concurrent mode (SetBits).
inline bool SetLineScalar(uint64_t* line, const LineMask& mask, bool concurrent) noexcept {
  uint64_t missing = 0;
  for (uint32_t j = 0; j < kWordsPerBlock; ++j)
    missing |= SetBits(line + j, mask.word[j], concurrent);
  return missing != 0;
}

// Whether every bit of `mask` is set in `line`.
[[nodiscard]] inline bool TestLineScalar(const uint64_t* line, const LineMask& mask,
                                         bool concurrent) noexcept {
  uint64_t missing = 0;
  for (uint32_t j = 0; j < kWordsPerBlock; ++j) {
    missing |= mask.word[j] & ~LoadWord(line + j, concurrent);
  }
  return missing == 0;
}

// The probability that a random key absent from this line finds all its k bits set: the mean,
// over the start slices, of the product of the k slices' fill ratios (the exact per-line term of
// a blocked filter's FPR).
[[nodiscard]] inline double LineFpr(const uint64_t* line, uint32_t hashes) noexcept {
  const uint32_t slices = SlicesPerBlock(hashes);
  const uint32_t slice_bits = kBlockBits / slices;
  double fill[16];
  for (uint32_t j = 0; j < slices; ++j) {
    const uint64_t word = LoadRelaxed(line + j * slice_bits / 64);
    const uint64_t bits = slice_bits == 64 ? word : (word >> (32 * (j & 1))) & 0xFFFFFFFFu;
    fill[j] = static_cast<double>(std::popcount(bits)) / slice_bits;
  }
  return SlicedLineFprFromFill(fill, slices, hashes);
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_LINE_OPS_H_
