// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// sliced_fpr.h (internal): the exact FPR of a line split into slices, each key using k consecutive
// slices from a uniform start, one cell (bit or counter) per slice. BlockedFilter (8 x 64 or
// 16 x 32 bits) and CountingFilter (8 slices of 64/counter_bits counters) are both this layout;
// plan.cc derives the formula (inclusion-exclusion over the query's slices, then the binomial
// generating function over line loads) and caches its terms per (k, slices, cells).
#ifndef BLOOMERY_LIB_INTERNAL_SLICED_FPR_H_
#define BLOOMERY_LIB_INTERNAL_SLICED_FPR_H_

#include <cstdint>

namespace bloomery::internal {

// FPR of one line holding exactly `load` keys. 1 for hashes outside [1, slices] or slices > 16.
[[nodiscard]] double SlicedFprAtLoad(double load, uint32_t hashes, uint32_t slices,
                                     uint32_t cells_per_slice);

// FPR of `blocks` lines holding `keys` keys (line loads Binomial(keys, 1/blocks)).
[[nodiscard]] double SlicedFpr(double keys, uint64_t blocks, uint32_t hashes, uint32_t slices,
                               uint32_t cells_per_slice);

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_SLICED_FPR_H_
