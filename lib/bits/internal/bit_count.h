// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bit_count.h (internal): the set bits of a 64-bit word, for the scans that read every word of a
// filter (PopCount, EstimatedCount, EstimatedFpr, Health). The library is built for baseline
// x86-64, where std::popcount has no POPCNT instruction to use and becomes a call to libgcc's
// __popcountdi2 per word: a 4 MiB filter's Health() spent most of its 9 ms there. Without POPCNT
// the count is the branch-free SWAR sum (Hacker's Delight, 5-1), a dozen inlined instructions;
// with it (-mpopcnt, -march=x86-64-v2 and up), the instruction. `static`: a file built for
// x86-64-v3 (the v3 tests and benchmarks) must not lend its POPCNT copy to the library's baseline
// code.
#ifndef BLOOMERY_LIB_BITS_INTERNAL_BIT_COUNT_H_
#define BLOOMERY_LIB_BITS_INTERNAL_BIT_COUNT_H_

#include <bit>
#include <cstdint>

namespace bloomery::detail {

[[nodiscard]] static inline uint32_t BitCount(uint64_t x) noexcept {
#if defined(__POPCNT__) || !(defined(__x86_64__) || defined(__i386__))
  return static_cast<uint32_t>(std::popcount(x));
#else
  x -= (x >> 1) & 0x5555555555555555;
  x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0f;
  return static_cast<uint32_t>((x * 0x0101010101010101) >> 56);
#endif
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_BITS_INTERNAL_BIT_COUNT_H_
