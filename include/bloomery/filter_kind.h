// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_kind.h: THE list of filter kinds. Everything that names the kinds comes from it: the
// FilterKind enum (the `kind` field of a saved file), the names the library, the file format and
// the tools spell, AnyFilter's alternatives, the file format's kind rows, the tests' list of kinds,
// and the build's lists of sources, headers and tests (meson.build reads the rows below).
//
//   std::optional<bloomery::FilterKind> kind = bloomery::ParseFilterKind("counting");
//   std::string_view name = bloomery::FilterKindName(bloomery::FilterKind::kScalable);
//
// A new kind is its header, its source, its test, its docs section and two lines here: its header
// below, and its row in BLOOMERY_FOR_EACH_FILTER_KIND (docs/DESIGN.md, "How to add a filter kind").
#ifndef BLOOMERY_FILTER_KIND_H_
#define BLOOMERY_FILTER_KIND_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

// One include per kind (a kind's header must not include this one).
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/counting_filter.h"
#include "bloomery/scalable_filter.h"
#include "bloomery/windowed_filter.h"

// One row per kind, in number order: ROW(Name, number, name, "summary"). The class is
// bloomery::Name##Filter in "bloomery/<name>_filter.h"; `number` is FilterKind::k##Name, the
// file format's kind field, which never changes; "name" is how every tool spells it; "summary"
// is the CLI's --kind help. Keep each row on one line of its own: meson.build reads them.
// clang-format off
#define BLOOMERY_FOR_EACH_FILTER_KIND(ROW) \
  ROW(Blocked, 1, blocked, "the default: one cache line per key")   \
  ROW(Classic, 2, classic, "partitioned: the fewest bits")           \
  ROW(Scalable, 3, scalable, "grows: for unknown counts")            \
  ROW(Counting, 4, counting, "supports remove")                      \
  ROW(Windowed, 5, windowed, "forgets: keys expire after a window")
// clang-format on

namespace bloomery {

enum class FilterKind : uint32_t {
#define BLOOMERY_KIND_ENUMERATOR(Name, number, name, summary) k##Name = (number),
  BLOOMERY_FOR_EACH_FILTER_KIND(BLOOMERY_KIND_ENUMERATOR)
#undef BLOOMERY_KIND_ENUMERATOR
};

namespace detail {

struct Row {
  FilterKind kind;
  std::string_view name;
  std::string_view summary;
};
// clang-format off
inline constexpr Row kRows[] = {
#define BLOOMERY_KIND_ROW(Name, number, name, summary) {FilterKind::k##Name, #name, summary},
    BLOOMERY_FOR_EACH_FILTER_KIND(BLOOMERY_KIND_ROW)
#undef BLOOMERY_KIND_ROW
};
// clang-format on
// KindClass and AnyFilter's variant index rows by number - 1.
static_assert([] {
  for (size_t i = 0; i < std::size(kRows); ++i) {
    if (static_cast<size_t>(kRows[i].kind) != i + 1) return false;
  }
  return true;
}());

// Tuple<Kinds..., void>: the row list ends each entry with a comma, closed by a `void`.
template <typename Done, typename... Rest>
struct DropLastVoid;
template <typename... Done, typename Next, typename... Rest>
struct DropLastVoid<std::tuple<Done...>, Next, Rest...> {
  using type = typename DropLastVoid<std::tuple<Done..., Next>, Rest...>::type;
};
template <typename... Done>
struct DropLastVoid<std::tuple<Done...>, void> {
  using type = std::tuple<Done...>;
};

}  // namespace detail

// Every kind's class, in FilterKind's order: std::tuple<BlockedFilter, ClassicFilter, ...>.
#define BLOOMERY_KIND_CLASS(Name, number, name, summary) Name##Filter,
using FilterKinds =
    typename detail::DropLastVoid<std::tuple<>,
                                  BLOOMERY_FOR_EACH_FILTER_KIND(BLOOMERY_KIND_CLASS) void>::type;
#undef BLOOMERY_KIND_CLASS

// How many kinds there are.
inline constexpr size_t kFilterKindCount = std::tuple_size_v<FilterKinds>;

// The class of kind `kind`: KindClass<FilterKind::kCounting> is CountingFilter.
template <FilterKind kind>
using KindClass = std::tuple_element_t<static_cast<size_t>(kind) - 1, FilterKinds>;

// The kind of class F: kKindOf<CountingFilter> is FilterKind::kCounting.
template <typename F>
inline constexpr FilterKind kKindOf = [] {
  FilterKind found{};
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((std::is_same_v<F, std::tuple_element_t<I, FilterKinds>> ? (found = detail::kRows[I].kind)
                                                              : found),
     ...);
  }
  (std::make_index_sequence<kFilterKindCount>{});
  return found;
}();

// "blocked", "classic", "scalable", "counting", "windowed"; "unknown" for a value outside the enum.
[[nodiscard]] constexpr std::string_view FilterKindName(FilterKind kind) noexcept {
  for (const detail::Row& row : detail::kRows) {
    if (row.kind == kind) return row.name;
  }
  return "unknown";
}

// The kind named `name` exactly (lower case, as FilterKindName spells it); nullopt otherwise.
[[nodiscard]] constexpr std::optional<FilterKind> ParseFilterKind(std::string_view name) noexcept {
  for (const detail::Row& row : detail::kRows) {
    if (row.name == name) return row.kind;
  }
  return std::nullopt;
}

// What the kind is for, in a few words ("supports remove"); empty outside the enum.
[[nodiscard]] constexpr std::string_view FilterKindSummary(FilterKind kind) noexcept {
  for (const detail::Row& row : detail::kRows) {
    if (row.kind == kind) return row.summary;
  }
  return {};
}

}  // namespace bloomery

#endif  // BLOOMERY_FILTER_KIND_H_
