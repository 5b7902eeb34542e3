// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// classic_layout.h (internal): which bits a key sets in a ClassicFilter (partitioned layout).
//
// This is the reference definition of the layout and part of the file format: a change here changes
// every saved ClassicFilter.
//
// The array of m = k * s bits is split into k slices of s bits; slice i is bits [i*s, (i+1)*s).
// Probe i (0 <= i < k) sets bit i*s + fastrange64(((h1 + i*h2) mod 2^64) * kClassicProbeSalt[i], s)
// with h1 = KeyHash::lo and h2 = KeyHash::hi (double hashing, Kirsch & Mitzenmacher 2006).
//
// Why the salt: fastrange keeps the top bits of its argument, and the top bits of a plain
// arithmetic progression h1 + i*h2 are a smooth function of (h1, h2): keys whose h1 and h2 are
// close share their probe positions in every slice at once, so the probes are not independent. In
// the blocked layout's 32-bit arithmetic that tripled the FPR at k = 12 (block_layout.h). In 64
// bits the effect is far weaker: 100,000 keys planned at p = 1e-3, 1e-4 and 1e-5 (k = 10, 13, 16)
// measured 0.97e-3, 1.00e-4 and 0.99e-5 unsalted and 0.96e-3, 0.97e-4 and 1.00e-5 salted over
// 400/p queries, i.e. no difference we could measure. The salt stays because it costs one multiply
// per probe and makes independence not depend on that observation: multiplying probe i by its own
// odd constant mixes all 64 bits of the progression into the top bits.
#ifndef BLOOMERY_LIB_LAYOUTS_INTERNAL_CLASSIC_LAYOUT_H_
#define BLOOMERY_LIB_LAYOUTS_INTERNAL_CLASSIC_LAYOUT_H_

#include <array>
#include <cstdint>

#include "bloomery/key.h"
#include "bloomery/plan.h"
#include "layouts/internal/block_layout.h"

namespace bloomery::detail {

// The first 16 SplitMix64 outputs from state 0, made odd: the 64-bit counterparts of the blocked
// layout's kProbeSalt (which keeps their high halves), so both layouts draw from one sequence.
inline constexpr std::array<uint64_t, kMaxHashes> kClassicProbeSalt = [] {
  std::array<uint64_t, kMaxHashes> salt{};
  uint64_t state = 0;
  for (uint64_t& s : salt) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    s = (z ^ (z >> 31)) | 1;
  }
  return salt;
}();

static_assert(
    [] {
      for (uint32_t i = 0; i < kMaxHashes; ++i) {
        if (static_cast<uint32_t>(kClassicProbeSalt[i] >> 32 | 1) != kProbeSalt[i]) return false;
      }
      return true;
    }(),
    "the classic salts must extend the blocked layout's salts");

// Bit index (over the whole array) of probe `i` of `hash` in a filter of slices of `slice_bits`.
[[nodiscard]] inline uint64_t ClassicProbeBit(const KeyHash& hash, uint32_t i,
                                              uint64_t slice_bits) noexcept {
  const uint64_t mixed = (hash.lo + i * hash.hi) * kClassicProbeSalt[i];
  const auto offset =
      static_cast<uint64_t>((static_cast<unsigned __int128>(mixed) * slice_bits) >> 64);
  return i * slice_bits + offset;
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_LAYOUTS_INTERNAL_CLASSIC_LAYOUT_H_
