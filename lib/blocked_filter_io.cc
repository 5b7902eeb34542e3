// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// BlockedFilter's persistence: the filter as a one-stage file of kind "blocked" (docs/FORMAT.md).
#include "bloomery/blocked_filter.h"
#include "internal/format.h"

namespace bloomery {

BLOOMERY_DEFINE_LAYOUT_IO(BlockedFilter, FilterKind::kBlocked, Layout::kBlocked)

}  // namespace bloomery
