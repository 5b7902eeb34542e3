// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// memory_floor.h (internal): the physical limit a filter lookup is measured against.
//
// A blocked-filter lookup out of cache costs at least one random 64-byte line read. FloorReadLines
// performs exactly that, with batched prefetching, and nothing else:
// the benchmark suite (BM_Floor) and `bloomery bench` both report filter time as a ratio to it.
#ifndef BLOOMERY_LIB_INTERNAL_MEMORY_FLOOR_H_
#define BLOOMERY_LIB_INTERNAL_MEMORY_FLOOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace bloomery::internal {

// Reads the first word of lines[i] of `base` (64-byte lines) for every i, prefetching `batch`
// lines ahead of use, and returns their xor so the reads cannot be optimised away.
// Line indices come from the caller (e.g. a fastrange of random 64-bit values), so generating
// them is not part of the floor.
inline uint64_t FloorReadLines(const uint64_t* base, const uint64_t* lines, size_t count) noexcept {
  // 32 lines per burst: the filter keeps about as many misses in flight (internal/batch_pipeline.h),
  // and bursts of 24..64 measured the same here.
  constexpr size_t kBatch = 32;
  uint64_t acc = 0;
  for (size_t start = 0; start < count; start += kBatch) {
    const size_t n = std::min(kBatch, count - start);
    for (size_t i = 0; i < n; ++i) __builtin_prefetch(base + lines[start + i] * 8, 0, 3);
    for (size_t i = 0; i < n; ++i) acc ^= base[lines[start + i] * 8];
  }
  return acc;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_MEMORY_FLOOR_H_
