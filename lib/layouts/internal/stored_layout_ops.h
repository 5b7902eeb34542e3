// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// stored_layout_ops.h (internal): the scalar reference's set and test of every stored blocked
// layout (kBlockLayouts, layout.h), chosen by its place in that table, in both concurrency modes:
// the mask of bloomery/detail/stored_layouts.h (ReferenceMask) set by relaxed atomics where
// concurrent. What tests/simd_test.cc holds every kernel and inline probe to, and word64's own
// scalar path.
#ifndef BLOOMERY_LIB_LAYOUTS_INTERNAL_STORED_LAYOUT_OPS_H_
#define BLOOMERY_LIB_LAYOUTS_INTERNAL_STORED_LAYOUT_OPS_H_

#include <cstdint>

#include "bits/internal/filter_ops.h"
#include "bloomery/detail/stored_layouts.h"
#include "bloomery/key.h"
#include "bloomery/layout.h"
#include "layouts/internal/block_layout.h"
#include "layouts/internal/line_ops.h"

namespace bloomery::detail {

// `op` (SetBlockScalar or TestBlockScalar, line_ops.h) on `block` with the key's mask, as the
// BlockMask of the stored layout's words (8 the line, 4 block256, 1 word64).
template <class Op>
inline bool WithReferenceMask(uint32_t index, const KeyHash& hash, uint32_t hashes,
                              const Op& op) noexcept {
  LineMask mask{};
  detail::ReferenceMask(index, hash, hashes, mask.word);
  switch (FindBlockShape(kBlockLayouts[index].layout)->block_bits / 64) {
    case 8:
      return op(mask);
    case 4:
      return op(BlockMask<4>{{mask.word[0], mask.word[1], mask.word[2], mask.word[3]}});
    default:
      return op(BlockMask<1>{{mask.word[0]}});
  }
}

// Sets the key's bits in `block` (a block of kBlockLayouts[index]); whether one was 0 before (in
// concurrent mode, only words whose bits are missing are written: SetBits; a word64 key is one
// word, so exactly one racing inserter of a new key is told "new").
inline bool ReferenceSetScalar(uint32_t index, uint64_t* block, const KeyHash& hash,
                               uint32_t hashes, bool concurrent) noexcept {
  return WithReferenceMask(index, hash, hashes, [&](const auto& mask) {
    return SetBlockScalar(block, mask, concurrent);
  });
}

// Whether every bit of the key is set in `block` (a block of kBlockLayouts[index]).
[[nodiscard]] inline bool ReferenceTestScalar(uint32_t index, const uint64_t* block,
                                              const KeyHash& hash, uint32_t hashes,
                                              bool concurrent) noexcept {
  return WithReferenceMask(index, hash, hashes, [&](const auto& mask) {
    return TestBlockScalar(block, mask, concurrent);
  });
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_LAYOUTS_INTERNAL_STORED_LAYOUT_OPS_H_
