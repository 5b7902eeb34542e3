// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/absl_compat.h: std::string_view as Abseil's string_view. Debian 12's Abseil (20220623)
// is built with its own absl::string_view rather than an alias of std::string_view, and StrCat,
// StrFormat's %s, SimpleAtoi, EqualsIgnoreCase and Status's messages take that type. Where the
// two are one type (an Abseil built with ABSL_USES_STD_STRING_VIEW) this is the identity. Not an
// API: the library, its tools and tests call it.
#ifndef BLOOMERY_DETAIL_ABSL_COMPAT_H_
#define BLOOMERY_DETAIL_ABSL_COMPAT_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace bloomery::detail {

[[nodiscard]] constexpr absl::string_view AbslView(std::string_view s) noexcept {
  return {s.data(), s.size()};
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_ABSL_COMPAT_H_
