// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The file format's row of every filter kind (format/internal/format_codec.h says what a row
// holds), which the validator reads: one per kind of the one list (filter_kind.h), each supplied by
// the kind itself, its private FileFormat() beside its persistence in lib/<kind>_filter.cc. Adding
// a kind changes nothing here.
#include <algorithm>
#include <array>
#include <span>
#include <tuple>
#include <type_traits>

#include "bloomery/filter_kind.h"
#include "format/internal/format_codec.h"
#include "format/internal/persistence.h"

namespace bloomery::detail {
namespace {

// Built at first use: the kinds' FileFormat() are defined in other translation units.
std::span<const KindRow> Rows() {
  static const auto rows = []<typename... Kinds>(std::type_identity<std::tuple<Kinds...>>) {
    return std::array<KindRow, sizeof...(Kinds)>{KindRow{
        FilterAccess::FileFormat<Kinds>(), kKindOf<Kinds>, FilterKindName(kKindOf<Kinds>)}...};
  }(std::type_identity<FilterKinds>{});
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

}  // namespace bloomery::detail
