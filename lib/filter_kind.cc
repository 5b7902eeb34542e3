// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The file format's row of every filter kind (internal/format_codec.h says what a row holds);
// names, parsing and the validator read them. Each kind supplies its own row, its private
// FileFormat() beside its persistence in lib/<kind>_filter.cc.
#include "bloomery/filter_kind.h"

#include <algorithm>
#include <span>

#include "bloomery/bloomery.h"
#include "internal/format_codec.h"
#include "internal/persistence.h"

namespace bloomery {
namespace internal {
namespace {

// Built at first use: the kinds' FileFormat() are defined in other translation units.
std::span<const KindRow> Rows() {
  static const KindRow rows[] = {
      {FilterAccess::FileFormat<BlockedFilter>(), FilterKind::kBlocked, "blocked"},
      {FilterAccess::FileFormat<ClassicFilter>(), FilterKind::kClassic, "classic"},
      {FilterAccess::FileFormat<ScalableFilter>(), FilterKind::kScalable, "scalable"},
      {FilterAccess::FileFormat<CountingFilter>(), FilterKind::kCounting, "counting"},
      {FilterAccess::FileFormat<WindowedFilter>(), FilterKind::kWindowed, "windowed"},
  };
  return rows;
}

}  // namespace

const KindRow* FindKindRow(FilterKind kind) noexcept {
  for (const KindRow& row : Rows()) {
    if (row.kind == kind) return &row;
  }
  return nullptr;
}

uint32_t MaxStagesOfAnyKind() noexcept {
  uint32_t most = 0;
  for (const KindRow& row : Rows()) most = std::max(most, row.max_stages);
  return most;
}

}  // namespace internal

}  // namespace bloomery
