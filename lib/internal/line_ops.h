// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// line_ops.h (internal): the scalar reference for testing and setting a line's bits, in both
// concurrency modes.
//
// The SIMD kernels (lib/simd/block_kernels-inl.h) use these functions as they are for concurrent
// filters, where every access to the bits must be a relaxed atomic (no vector loads), and are held
// to the same answers and bytes as these functions for single-writer filters.
#ifndef BLOOMERY_LIB_INTERNAL_LINE_OPS_H_
#define BLOOMERY_LIB_INTERNAL_LINE_OPS_H_

#include <cstdint>

#include "internal/block_layout.h"
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

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_LINE_OPS_H_
