// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// ClassicFilter's persistence: the filter as a one-stage file of kind "classic" (docs/FORMAT.md):
// k slices of bits/k bits each, stored in whole lines.
#include "bloomery/classic_filter.h"
#include "internal/format.h"

namespace bloomery {

BLOOMERY_DEFINE_LAYOUT_IO(ClassicFilter, FilterKind::kClassic, Layout::kPartitioned)

}  // namespace bloomery
