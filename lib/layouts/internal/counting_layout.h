// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// counting_layout.h (internal): which counters of a counting-filter line a key uses, as plain
// scalar code, and the exact FPR of that layout.
//
// This is the reference definition of a CountingFilter's layout and part of the file format: a
// change here changes every saved CountingFilter.
// A line is one 64-byte block, 8 little-endian 64-bit words. Each word is one slice of counters:
// 16 counters of 4 bits or 8 counters of 8 bits, counter c of a word at bits [c*w, c*w + w). A
// key's k <= 8 counters go to the k consecutive slices (start + i) mod 8, start = hi mod 8, and
// within slice i to counter ProbeBit(h1, h2, i, log2(counters per slice)): the same block index,
// start slice and salted double hashing as BlockedFilter (block_layout.h), with a slice of
// counters in place of a slice of bits. One slice per word means every counter update is a
// read-modify-write of one aligned 64-bit word, which is what makes a CAS per probe enough.
#ifndef BLOOMERY_LIB_LAYOUTS_INTERNAL_COUNTING_LAYOUT_H_
#define BLOOMERY_LIB_LAYOUTS_INTERNAL_COUNTING_LAYOUT_H_

#include <cstdint>

#include "bloomery/key.h"
#include "layouts/internal/block_layout.h"

namespace bloomery::detail {

inline constexpr uint32_t kCountingSlices = kWordsPerBlock;  // one 64-bit word per slice

// The word of the line and the bit offset inside it of each of a key's counters.
struct CounterProbes {
  uint32_t word[kCountingSlices];  // a key has at most one counter per slice
  uint32_t shift[kCountingSlices];
};

// `counter_shift` is log2 of the counter width in bits: 2 (4-bit) or 3 (8-bit). Entries 0..k-1
// are the key's counters for a filter with k hashes; all 8 are filled (a fixed trip count the
// compiler unrolls, and no entry is ever left uninitialised), so one call serves any k.
inline void MakeCounterProbes(const KeyHash& hash, uint32_t counter_shift,
                              CounterProbes& probes) noexcept {
  const auto h1 = static_cast<uint32_t>(hash.lo);
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  const auto start = static_cast<uint32_t>(hash.hi & (kCountingSlices - 1));
  const uint32_t slice_shift = 6 - counter_shift;  // log2(64 / counter width)
  for (uint32_t i = 0; i < kCountingSlices; ++i) {
    probes.word[i] = (start + i) & (kCountingSlices - 1);
    probes.shift[i] = ProbeBit(h1, h2, i, slice_shift) << counter_shift;
  }
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_LAYOUTS_INTERNAL_COUNTING_LAYOUT_H_
