// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_factory.h (internal): builds a BlockedFilter around memory that already holds its bits (a
// ScalableFilter stage read from a file), so that no other kind needs to be the filter's friend.
#ifndef BLOOMERY_LIB_INTERNAL_FILTER_FACTORY_H_
#define BLOOMERY_LIB_INTERNAL_FILTER_FACTORY_H_

#include <cstdint>
#include <utility>

#include "bloomery/blocked_filter.h"
#include "bloomery/plan.h"

namespace bloomery::internal {

// The constructor is protected: a derived class may run it for its base, and moving the base out
// of it loses nothing, since the derived class adds no state.
class BlockedFilterParts : public BlockedFilter {
 public:
  BlockedFilterParts(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                     bool concurrent) noexcept
      : BlockedFilter(std::move(memory), plan, hasher, concurrent) {}
};

[[nodiscard]] inline BlockedFilter MakeBlockedFilter(FilterMemory memory, const Plan& plan,
                                                     const KeyHasher& hasher,
                                                     bool concurrent) noexcept {
  BlockedFilterParts parts(std::move(memory), plan, hasher, concurrent);
  return BlockedFilter(static_cast<BlockedFilter&&>(parts));
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_FILTER_FACTORY_H_
