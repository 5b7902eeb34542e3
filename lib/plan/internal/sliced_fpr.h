// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// sliced_fpr.h (internal): the exact FPR of a line split into slices, each key using k consecutive
// slices from a uniform start, one cell (bit or counter) per slice. BlockedFilter (8 x 64 or
// 16 x 32 bits) and CountingFilter (8 slices of 64/counter_bits counters) are both this layout.
// lib/plan/sliced_fpr.cc derives the formula and evaluates it to within a few ulps (relative) at
// every rate, however small: where the fast inclusion-exclusion would cancel, a sum of non-negative
// terms (the coverage chain of the query's cells) takes over. Thread-safe; the first evaluation
// of a small rate for a layout tabulates per-load FPRs once (milliseconds, up to ~0.5 s for
// 16 slices and k = 15).
#ifndef BLOOMERY_LIB_PLAN_INTERNAL_SLICED_FPR_H_
#define BLOOMERY_LIB_PLAN_INTERNAL_SLICED_FPR_H_

#include <cstdint>

namespace bloomery::detail {

// FPR of one line holding exactly `load` keys. 1 for hashes outside [1, slices] or slices > 16.
// A fractional load (an average) is evaluated by inclusion-exclusion alone: accurate unless the
// result is far below 1e-3.
[[nodiscard]] double SlicedFprAtLoad(double load, uint32_t hashes, uint32_t slices,
                                     uint32_t cells_per_slice);

// FPR of `blocks` lines holding `keys` keys (line loads Binomial(keys, 1/blocks)); a fractional
// `keys` is rounded up.
[[nodiscard]] double SlicedFpr(double keys, uint64_t blocks, uint32_t hashes, uint32_t slices,
                               uint32_t cells_per_slice);

// SlicedFpr(keys, blocks, ...) <= target, the same answer, but decided without the exact sum
// whenever the fast formula's error bound leaves no doubt: the planner's searches call this.
[[nodiscard]] bool SlicedFprAtMost(double target, double keys, uint64_t blocks, uint32_t hashes,
                                   uint32_t slices, uint32_t cells_per_slice);

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_PLAN_INTERNAL_SLICED_FPR_H_
