// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The list of filter kinds, one row each (internal/format.h says what a row holds); names, parsing
// and the file format read it. A kind's header check lives beside its persistence,
// lib/<kind>_io.cc.
#include "bloomery/filter_kind.h"

#include <algorithm>

#include "bloomery/plan.h"
#include "bloomery/scalable_filter.h"
#include "internal/format.h"

namespace bloomery {
namespace internal {

absl::Status CheckScalableHeader(const FileHeader& header);
absl::Status CheckCountingHeader(const FileHeader& header);
absl::Status CheckWindowedHeader(const FileHeader& header);

namespace {

// One row per kind: kind, name, max stages, counter widths, stage bits unit (0: the stage's
// hashes), params used, counts inserts, header check.
// clang-format off
constexpr KindRow kRows[] = {
    {FilterKind::kBlocked, "blocked", 1, {0, 0}, kBlockBits, 0, false,
     &CheckLayoutHeader<Layout::kBlocked>},
    {FilterKind::kClassic, "classic", 1, {0, 0}, 0, 0, false,
     &CheckLayoutHeader<Layout::kPartitioned>},
    {FilterKind::kScalable, "scalable", kMaxScalableStages, {0, 0}, kBlockBits, 3, true,
     &CheckScalableHeader},
    {FilterKind::kCounting, "counting", 1, {4, 8}, kBlockBits, 0, false,
     &CheckCountingHeader},
    {FilterKind::kWindowed, "windowed", 1, {0, 0}, kBlockBits, 4, false,
     &CheckWindowedHeader},
};
// clang-format on

}  // namespace

const KindRow* FindKindRow(FilterKind kind) noexcept {
  for (const KindRow& row : kRows) {
    if (row.kind == kind) return &row;
  }
  return nullptr;
}

uint32_t MaxStagesOfAnyKind() noexcept {
  uint32_t most = 0;
  for (const KindRow& row : kRows) most = std::max(most, row.max_stages);
  return most;
}

}  // namespace internal

}  // namespace bloomery
