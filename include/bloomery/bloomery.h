// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery.h: the umbrella header; includes every public header of the library.
//
//   #include <bloomery/bloomery.h>
//   auto filter = bloomery::BlockedFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
#ifndef BLOOMERY_BLOOMERY_H_
#define BLOOMERY_BLOOMERY_H_

#include "bloomery/any_filter.h"       // IWYU pragma: export
#include "bloomery/file.h"             // IWYU pragma: export
#include "bloomery/filter.h"           // IWYU pragma: export
#include "bloomery/filter_kind.h"      // IWYU pragma: export (and every kind's header)
#include "bloomery/health.h"           // IWYU pragma: export
#include "bloomery/key.h"              // IWYU pragma: export
#include "bloomery/mapped_follower.h"  // IWYU pragma: export
#include "bloomery/options.h"          // IWYU pragma: export
#include "bloomery/plan.h"             // IWYU pragma: export
#include "bloomery/simd.h"             // IWYU pragma: export

#endif  // BLOOMERY_BLOOMERY_H_
