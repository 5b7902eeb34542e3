// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// fold.h (internal): what BlockedFilter::FoldedTo and ClassicFilter::FoldedTo share. Both index
// by fastrange(x, n) (n blocks, or a slice's n bits), and fastrange(x, n / 2) equals
// floor(fastrange(x, n) / 2) exactly when n is even, so or-ing units 2j and 2j + 1 into unit j
// keeps every key's bits: a halving. FoldWithin halves while the exact FPR of the folded bits
// stays within the target; each kind says how to halve its units. A memory cap is the result's:
// the halvings on the way to it are not charged against it.
#ifndef BLOOMERY_LIB_FILTERS_INTERNAL_FOLD_H_
#define BLOOMERY_LIB_FILTERS_INTERNAL_FOLD_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"
#include "plan/internal/memory_limit.h"

namespace bloomery::detail {

// The most keys, at most `limit` (at least 1: a plan's capacity 0 means "sized by bits"), that
// `bits` bits of `layout` with `hashes` probes hold at a predicted FPR <= max_fpr.
[[nodiscard]] inline uint64_t CapacityWithin(Layout layout, uint64_t bits, uint32_t hashes,
                                             uint64_t limit, double max_fpr) {
  const auto fits = [&](uint64_t keys) {
    return PredictedFpr(layout, static_cast<double>(keys), bits, hashes) <= max_fpr;
  };
  uint64_t lo = 1;
  uint64_t hi = std::max<uint64_t>(limit, 1);
  if (fits(hi)) return hi;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// The memory options of a fold's halvings on the way to its result under `memory`: the same but
// for the cap, which is the result's (FoldWithin checks it). They are held to the machine's memory
// instead, or to the caller's cap where it is above the machine's (an over-commit on purpose).
[[nodiscard]] inline MemoryOptions HalvingMemory(const MemoryOptions& memory) {
  MemoryOptions halving = memory;
  const uint64_t machine = MachineMemoryLimit().bytes;
  halving.max_memory_bytes =
      memory.max_memory_bytes > machine && machine != 0 ? memory.max_memory_bytes : 0;
  return halving;
}

// The fold of `filter` (F: BlockedFilter or ClassicFilter) to max_fpr under `memory`, over its
// `units` (blocks, or a slice's bits) that `unit_name` names: `halve(from, units, m)` makes the
// filter of units / 2 halved from `from` (which has `units`) in memory `m`, `copy(m)` an unfolded
// copy; both planned by the caller with CapacityWithin. The result is the last halving whose
// EstimatedFpr is <= max_fpr, or the copy where the first passes it. Only the result is held to
// memory.max_memory_bytes: the halvings are made under HalvingMemory, and the last one kept is
// refused if it is over the cap (ResourceExhausted naming its size). Errors: those FoldedTo
// documents.
template <typename F, typename Halve, typename Copy>
absl::StatusOr<F> FoldWithin(const F& filter, double max_fpr, uint64_t units,
                             std::string_view unit_name, const MemoryOptions& memory,
                             const Halve& halve, const Copy& copy) {
  if (!(max_fpr > 0.0 && max_fpr < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the FPR to fold to must be in (0, 1), got %g", max_fpr));
  }
  const double now = filter.EstimatedFpr();
  if (now > max_fpr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the FPR is already %.4g, above %g: folding only raises it (to bring it down, rebuild "
        "with a larger capacity, or use a scalable filter, which grows)",
        now, max_fpr));
  }
  if (units % 2 != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%d %s cannot halve: an odd count, as a filter sized by explicit bits or planned before "
        "folding has; rebuild it from capacity and fpr to fold it later",
        units, unit_name));
  }
  // Each halving is made from the last one kept; the first whose FPR passes max_fpr is dropped.
  const MemoryOptions halving = HalvingMemory(memory);
  std::optional<F> kept;
  for (; units % 2 == 0; units /= 2) {
    absl::StatusOr<F> half = halve(kept ? *kept : filter, units, halving);
    if (!half.ok()) return half.status();
    if (half->EstimatedFpr() > max_fpr) break;
    kept = *std::move(half);
  }
  if (!kept) return copy(memory);
  // The result: held to the caller's cap as if it had been allocated under it.
  if (absl::Status s = CheckMemoryCap(kept->memory_bytes(), memory.max_memory_bytes); !s.ok()) {
    return s;
  }
  return *std::move(kept);
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FILTERS_INTERNAL_FOLD_H_
