// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_kind.h: the filter kinds by name, one spelling for the library, the file format and tools.
//
// The numeric values are the `kind` field of a saved file (docs/FORMAT.md): they never change, and
// a new kind takes the next number.
//
//   std::optional<bloomery::FilterKind> kind = bloomery::ParseFilterKind("counting");
//   std::string_view name = bloomery::FilterKindName(bloomery::FilterKind::kScalable);  //
//   "scalable"
#ifndef BLOOMERY_FILTER_KIND_H_
#define BLOOMERY_FILTER_KIND_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace bloomery {

enum class FilterKind : uint32_t {
  kBlocked = 1,
  kClassic = 2,
  kScalable = 3,
  kCounting = 4,
  kWindowed = 5,
};

// "blocked", "classic", "scalable", "counting", "windowed"; "unknown" for a value outside the enum.
[[nodiscard]] std::string_view FilterKindName(FilterKind kind) noexcept;

// The kind named `name` exactly (lower case, as FilterKindName spells it); nullopt otherwise.
[[nodiscard]] std::optional<FilterKind> ParseFilterKind(std::string_view name) noexcept;

}  // namespace bloomery

#endif  // BLOOMERY_FILTER_KIND_H_
