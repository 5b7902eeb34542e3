// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// create.h (internal): the one construction path of the kinds kept in one array (blocked,
// classic, counting, and a scalable or windowed filter's stages): plan, memory, hasher.
#ifndef BLOOMERY_LIB_FILTERS_INTERNAL_CREATE_H_
#define BLOOMERY_LIB_FILTERS_INTERNAL_CREATE_H_

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bits/internal/filter_ops.h"
#include "bloomery/filter.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"
#include "memory/internal/storage.h"

namespace bloomery::detail {

// Create of a kind kept in one array: its `plan` (or why there is none), zeroed memory for the
// plan's whole 64-byte lines under `options.memory` (the file format's stage payload, so memory and
// file agree byte for byte), then the filter `make(memory, plan, hasher)` builds, its hasher's
// integer hash resolved for the layout the plan chose (ResolveIntegerHash, options.h).
[[nodiscard]] inline uint64_t ArrayBytes(const Plan& plan) { return WholeLineBytes(plan.bits); }
[[nodiscard]] inline uint64_t ArrayBytes(const CountingPlan& plan) { return plan.bytes(); }
[[nodiscard]] inline Layout LayoutOf(const Plan& plan) { return plan.layout; }
[[nodiscard]] inline Layout LayoutOf(const CountingPlan& /*plan*/) { return Layout::kLine512; }
template <typename KindPlan, typename KindOptions, typename Make>
auto CreateArrayFilter(const absl::StatusOr<KindPlan>& plan, const KindOptions& options, Make make)
    -> absl::StatusOr<decltype(make(FilterMemory(), *plan, KeyHasher()))> {
  if (!plan.ok()) return plan.status();
  if (absl::Status s = CheckIntegerHash(options.hashing.integer_hash); !s.ok()) return s;
  absl::StatusOr<FilterMemory> memory = AllocateFilterMemory(ArrayBytes(*plan), options.memory);
  if (!memory.ok()) return memory.status();
  return make(*std::move(memory), *plan, options.hashing.hasher(LayoutOf(*plan)));
}

// The options CreateArrayFilter needs to make a filter that hashes as `hasher` in memory `memory`
// allows: how a kind makes the empty target of a fold or a copy (EmptyLike) by the same path as
// Create.
[[nodiscard]] inline FilterOptions OptionsLike(const KeyHasher& hasher,
                                               const MemoryOptions& memory) {
  FilterOptions options;
  options.hashing = HashOptions{hasher.seed(), hasher.integers()};
  options.memory = memory;
  return options;
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FILTERS_INTERNAL_CREATE_H_
