// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_layout.h (internal): the blocked layouts' scalar references under the names the library's
// code uses (detail::), and the block index. The layouts themselves, reference and inline probe,
// are bloomery/detail/line512.h, block256.h and word64.h (one file per layout, kBlockLayouts'
// rows); the classic and counting layouts reuse the line's salts and probe bit.
#ifndef BLOOMERY_LIB_LAYOUTS_INTERNAL_BLOCK_LAYOUT_H_
#define BLOOMERY_LIB_LAYOUTS_INTERNAL_BLOCK_LAYOUT_H_

#include <cstdint>

#include "bloomery/detail/stored_layouts.h"
#include "bloomery/key.h"

namespace bloomery::detail {

inline constexpr uint32_t kWordsPerBlock = detail::kWordsPerLine;
using detail::kWordsPerBlock256;

using detail::Block256FieldsMaskScalar;
using detail::Block256Mask;
using detail::Block256MaskScalar;
using detail::BlockMask;
using detail::kProbeSalt;
using detail::MakeFieldsMaskScalar;
using detail::MakeMaskScalar;
using detail::ProbeBit;
using detail::Word64MaskScalar;
using LineMask = BlockMask<kWordsPerBlock>;

[[nodiscard]] inline uint64_t BlockIndex(const KeyHash& hash, uint64_t blocks) noexcept {
  return detail::LineIndex(hash, blocks);
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_LAYOUTS_INTERNAL_BLOCK_LAYOUT_H_
