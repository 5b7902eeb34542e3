// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_line.h: the blocked filter's line layout (probe salts, probe bit, line index) and an
// inline scalar single-key probe, held bit-identical to the kernels by tests/simd_test.cc. Not an
// API of its own: use BlockedFilter. (lib/internal/block_layout.h documents the layout in full; it
// is part of the file format.)
//
// BlockedFilter's single-key calls do NOT use the inline probe today: on the AMD Zen 4 CI VM it
// measured 2x slower than the dispatched kernel (`bloomery bench`: Insert 14 vs 6 ns in cache,
// 140 vs 52 ns out of cache), while on an Intel Xeon it was no faster out of cache. The reasoning
// it was written on, kept for whoever tries again (e.g. with a compile-time AVX2 probe): out of
// cache a single lookup is one DRAM miss, and independent lookups in a caller's loop overlap only
// as far as the core's out-of-order window holds them. An out-of-line call chain ending in an
// indirect call to a SIMD kernel put ~60 ns on each lookup where one miss costs ~8 ns of throughput
// when overlapped; k <= 8 scalar probes of one line, branch-free (a branch on a bit that arrives
// from DRAM would be mispredicted half the time and serialise the misses), are a few dozen
// instructions the window can hold many of. Batches (InsertMany, MayContainMany) keep the SIMD
// kernels, dispatched once per batch.
#ifndef BLOOMERY_BLOCKED_LINE_H_
#define BLOOMERY_BLOCKED_LINE_H_

#include <cstdint>

#include "bloomery/key.h"

namespace bloomery::blocked_line {

inline constexpr uint32_t kWordsPerLine = 8;

// Odd multipliers, one per probe: the high 32 bits (| 1) of the first 16 SplitMix64 outputs from
// state 0.
inline constexpr uint32_t kProbeSalt[16] = {0xE220A839u, 0x6E789E6Bu, 0x06C45D19u, 0xF88BB8A9u,
                                            0x1B39896Bu, 0x53CB9F0Du, 0x2C829ABFu, 0xC584133Bu,
                                            0x3EE57891u, 0xF3B8488Du, 0x657EECDDu, 0xC2D326E1u,
                                            0x8621A03Fu, 0x8E1F7555u, 0xB54E0F17u, 0x84BB3F97u};

// Bit of probe i within its slice of 2^slice_shift bits.
[[nodiscard]] inline uint32_t ProbeBit(uint32_t h1, uint32_t h2, uint32_t i,
                                       uint32_t slice_shift) noexcept {
  return ((h1 + i * h2) * kProbeSalt[i]) >> (32 - slice_shift);
}

// 64-bit fastrange (Lemire 2019): the high half of hi * lines. Uniform for any line count and
// free of the modulo's division; correct far beyond 2^32 lines.
[[nodiscard]] inline uint64_t LineIndex(const KeyHash& hash, uint64_t lines) noexcept {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash.hi) * lines) >> 64);
}

// A relaxed atomic load (a plain mov on x86-64), so the same code serves concurrent filters.
[[nodiscard]] inline uint64_t LoadWord(const uint64_t* word) noexcept {
  return __atomic_load_n(word, __ATOMIC_RELAXED);
}

// Probe i of a key with k <= 8: its bit within slice (start + i) mod 8, a 64-bit word.
[[nodiscard]] inline uint32_t Probe64(uint32_t g, uint32_t i) noexcept {
  return (g * kProbeSalt[i]) >> 26;
}

// kK <= 8 probes known at compile time: fully unrolled, the salts become immediates, and each
// probe is a multiply, a shift, one load and a bit test (about 8 instructions). The loads are
// relaxed atomics (plain movs) so that concurrent filters share the code.
template <uint32_t kK>
[[nodiscard]] inline bool Test64(const uint64_t* line, const KeyHash& hash) noexcept {
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  const auto start = static_cast<uint32_t>(hash.hi);
  auto g = static_cast<uint32_t>(hash.lo);  // h1 + i*h2, mod 2^32
  uint32_t hits = 0;
#pragma GCC unroll 8
  for (uint32_t i = 0; i < kK; ++i, g += h2) {
    hits += static_cast<uint32_t>(LoadWord(line + ((start + i) & 7)) >> Probe64(g, i)) & 1;
  }
  return hits == kK;
}

template <uint32_t kK>
inline bool Set64(uint64_t* line, const KeyHash& hash) noexcept {
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  const auto start = static_cast<uint32_t>(hash.hi);
  auto g = static_cast<uint32_t>(hash.lo);
  uint32_t hits = 0;
#pragma GCC unroll 8
  for (uint32_t i = 0; i < kK; ++i, g += h2) {
    uint64_t& word = line[(start + i) & 7];
    const uint32_t bit = Probe64(g, i);
    hits += static_cast<uint32_t>(word >> bit) & 1;
    word |= uint64_t{1} << bit;
  }
  return hits != kK;
}

// k <= 8 (eight 64-bit slices): whether every bit of the key is set in `line`. The switch on k,
// the same for every call on a filter, is a perfectly predicted jump.
[[nodiscard]] inline bool Test64(const uint64_t* line, const KeyHash& hash, uint32_t k) noexcept {
  switch (k) {
    case 1:
      return Test64<1>(line, hash);
    case 2:
      return Test64<2>(line, hash);
    case 3:
      return Test64<3>(line, hash);
    case 4:
      return Test64<4>(line, hash);
    case 5:
      return Test64<5>(line, hash);
    case 6:
      return Test64<6>(line, hash);
    case 7:
      return Test64<7>(line, hash);
    default:
      return Test64<8>(line, hash);
  }
}

// k <= 8, single-writer: sets the key's bits in `line`; whether any was 0 before.
inline bool Set64(uint64_t* line, const KeyHash& hash, uint32_t k) noexcept {
  switch (k) {
    case 1:
      return Set64<1>(line, hash);
    case 2:
      return Set64<2>(line, hash);
    case 3:
      return Set64<3>(line, hash);
    case 4:
      return Set64<4>(line, hash);
    case 5:
      return Set64<5>(line, hash);
    case 6:
      return Set64<6>(line, hash);
    case 7:
      return Set64<7>(line, hash);
    default:
      return Set64<8>(line, hash);
  }
}

}  // namespace bloomery::blocked_line

#endif  // BLOOMERY_BLOCKED_LINE_H_
