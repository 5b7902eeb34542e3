// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// word64_layout.h (internal): Layout::kWord64, all k bits of a key in one 64-bit word, as plain
// scalar code: the reference every kernel and the inline probe are held to, bit for bit (the
// file format: a change here changes every saved word64 filter).
//
// The word (a block of 64 bits, chosen by 64-bit fastrange of hash.hi over bits / 64 words) is 8
// slices of 8 bits, slice j being bits 8j..8j+7. Probe i (0 <= i < k <= 8) goes to slice
// (start + i) mod 8, start = hash.hi mod 8, at bit byte i of Word64ProbeFields(hash.lo): the top
// 3 bits of byte i of hash.lo. Eight independent 3-bit fields of a 64-bit hash half need no double
// hashing: the probe's mask is one byte-table lookup (vpshufb) of the eight fields and one rotate,
// half the instructions of the salted double hashing the line uses (which word64 used until file
// code 3; docs/FORMAT.md). Why 8 x 8: the exact sliced model (plan.cc) gives 1.90% at 10 bits/key
// (k = 5) against 1.95% for 4 x 16 and 3.00% for 16 x 4, and 8 x 8 stays best from 9 bits/key up
// (docs/DESIGN.md, "Tried and rejected", has the figures at 10 bits/key).
//
// Concurrent Insert is exact: the key's bits are one word, set by one fetch_or after a relaxed
// load saw some missing (SetBits), so of several threads inserting the same new key exactly one
// finds a bit missing in the old value its fetch_or returns.
#ifndef BLOOMERY_LIB_INTERNAL_WORD64_LAYOUT_H_
#define BLOOMERY_LIB_INTERNAL_WORD64_LAYOUT_H_

#include <cstdint>

#include "bloomery/blocked_line.h"
#include "bloomery/key.h"
#include "internal/filter_ops.h"

namespace bloomery::internal {

// The key's k bits in its word.
[[nodiscard]] inline uint64_t Word64MaskScalar(const KeyHash& hash, uint32_t hashes) noexcept {
  const auto start = static_cast<uint32_t>(hash.hi);
  const uint64_t fields = blocked_line::Word64ProbeFields(hash.lo);
  uint64_t mask = 0;
  for (uint32_t i = 0; i < hashes; ++i) {
    mask |= uint64_t{1} << (8 * ((start + i) & 7) + ((fields >> (8 * i)) & 0xFF));
  }
  return mask;
}

// Sets the key's bits in `word`; whether one was 0 before (exactly one racing inserter of a new
// key sees that in concurrent mode).
inline bool SetWord64Scalar(uint64_t* word, const KeyHash& hash, uint32_t hashes,
                            bool concurrent) noexcept {
  return SetBits(word, Word64MaskScalar(hash, hashes), concurrent) != 0;
}

[[nodiscard]] inline bool TestWord64Scalar(const uint64_t* word, const KeyHash& hash,
                                           uint32_t hashes, bool concurrent) noexcept {
  const uint64_t mask = Word64MaskScalar(hash, hashes);
  return (mask & ~LoadWord(word, concurrent)) == 0;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_WORD64_LAYOUT_H_
