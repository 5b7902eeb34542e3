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

#include <atomic>
#include <cstdint>

#include "internal/block_layout.h"
#include "internal/filter_ops.h"

namespace bloomery::internal {

// Sets `mask` in `line`; returns whether any of its bits was 0 before.
inline bool SetLineScalar(uint64_t* line, const LineMask& mask, bool concurrent) noexcept {
  uint64_t missing = 0;
  if (!concurrent) {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) {
      missing |= mask.word[j] & ~line[j];
      line[j] |= mask.word[j];
    }
    return missing != 0;
  }
  for (uint32_t j = 0; j < kWordsPerBlock; ++j) {
    const uint64_t m = mask.word[j];
    // Only words whose bits are missing are written: a duplicate insert stays a pure read and
    // never takes the line exclusive, so concurrent lookups of hot keys do not bounce it.
    if ((m & ~LoadRelaxed(line + j)) == 0) continue;
    const uint64_t before =
        std::atomic_ref<uint64_t>(line[j]).fetch_or(m, std::memory_order_relaxed);
    missing |= m & ~before;
  }
  return missing != 0;
}

// Whether every bit of `mask` is set in `line`.
[[nodiscard]] inline bool TestLineScalar(const uint64_t* line, const LineMask& mask,
                                         bool concurrent) noexcept {
  uint64_t missing = 0;
  if (!concurrent) {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) missing |= mask.word[j] & ~line[j];
  } else {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) missing |= mask.word[j] & ~LoadRelaxed(line + j);
  }
  return missing == 0;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_LINE_OPS_H_
