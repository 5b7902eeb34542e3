// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// CountingFilter's persistence: a one-stage file of kind "counting" (docs/FORMAT.md); `bits` is
// counters * counter_bits.
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bloomery/counting_filter.h"
#include "internal/format.h"

namespace bloomery {
namespace {

using internal::FileHeader;

// The header's geometry as the plan Create would have made (DataLoss otherwise).
absl::StatusOr<CountingPlan> CountingPlanOf(const FileHeader& header) {
  CountingOptions options;
  options.bits = header.bits;
  options.hashes = header.hashes;
  options.capacity = header.capacity;
  options.counter_bits = header.counter_bits;
  absl::StatusOr<CountingPlan> plan = PlanCountingFilter(options);
  if (!plan.ok() || plan->bits() != header.bits || plan->hashes != header.hashes) {
    return internal::Corrupt(absl::StrCat(
        "not a valid counting filter geometry (",
        plan.ok() ? "it differs from what the planner makes" : plan.status().message(), ")"));
  }
  return plan;
}

}  // namespace

namespace internal {

absl::Status CheckCountingHeader(const FileHeader& header) {
  return CheckPlanned(CountingPlanOf(header), header);
}

}  // namespace internal

absl::StatusOr<std::string> CountingFilter::Write(const std::string* path) const {
  FileHeader header;
  header.kind = FilterKind::kCounting;
  internal::PutHasher(header, hasher_);
  header.hashes = plan_.hashes;
  header.counter_bits = plan_.counter_bits;
  header.bits = plan_.bits();
  header.capacity = plan_.capacity;
  header.fpr = plan_.expected_fpr;
  header.stages.push_back({plan_.bits(), plan_.hashes, plan_.capacity, 0});
  const std::span<const uint8_t> payload[] = {bytes()};
  return internal::WriteFilter(path, std::move(header), payload);
}

// Saturated counters are counted once, when a filter meets its memory.
BLOOMERY_DEFINE_SINGLE_STAGE_IO(CountingFilter, FilterKind::kCounting, CountingPlanOf,
                                [](CountingFilter& filter) { filter.RecountSaturated(); })

void CountingFilter::RecountSaturated() noexcept {
  const uint64_t words = memory_.size() / 8;
  const uint32_t width = plan_.counter_bits;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  uint64_t saturated = 0;
  for (uint64_t i = 0; i < words; ++i) {
    const uint64_t word = words_[i];
    for (uint32_t shift = 0; shift < 64; shift += width)
      saturated += ((word >> shift) & mask) == mask;
  }
  saturated_ = saturated;
}

}  // namespace bloomery
