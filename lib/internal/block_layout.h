// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_layout.h (internal): the blocked layouts' scalar references under the names the library's
// code uses (internal::), and the block index. The layouts themselves, reference and inline probe,
// are bloomery/detail/line512.h, block256.h and word64.h (one file per layout, kBlockLayouts'
// rows); the classic and counting layouts reuse the line's salts and probe bit.
#ifndef BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_
#define BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_

#include <cstdint>

#include "bloomery/detail/stored_layouts.h"
#include "bloomery/key.h"

namespace bloomery::internal {

inline constexpr uint32_t kWordsPerBlock = blocked_line::kWordsPerLine;
using blocked_line::kWordsPerBlock256;

using blocked_line::Block256FieldsMaskScalar;
using blocked_line::Block256Mask;
using blocked_line::Block256MaskScalar;
using blocked_line::BlockMask;
using blocked_line::kProbeSalt;
using blocked_line::MakeFieldsMaskScalar;
using blocked_line::MakeMaskScalar;
using blocked_line::ProbeBit;
using blocked_line::Word64MaskScalar;
using LineMask = BlockMask<kWordsPerBlock>;

[[nodiscard]] inline uint64_t BlockIndex(const KeyHash& hash, uint64_t blocks) noexcept {
  return blocked_line::LineIndex(hash, blocks);
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_BLOCK_LAYOUT_H_
