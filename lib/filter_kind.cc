// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/filter_kind.h"

#include <array>
#include <utility>

namespace bloomery {
namespace {

constexpr std::array<std::pair<FilterKind, std::string_view>, 4> kNames = {{
    {FilterKind::kBlocked, "blocked"},
    {FilterKind::kClassic, "classic"},
    {FilterKind::kScalable, "scalable"},
    {FilterKind::kCounting, "counting"},
}};

}  // namespace

std::string_view FilterKindName(FilterKind kind) noexcept {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<FilterKind> ParseFilterKind(std::string_view name) noexcept {
  for (const auto& [k, n] : kNames) {
    if (n == name) return k;
  }
  return std::nullopt;
}

}  // namespace bloomery
