// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// plan.h: FPR formulas, and the planner turning (capacity, fpr) or (bits, hashes) into geometry.
//
// One sliced model sizes every kind: a key's k probes land in k distinct slices, one cell (a bit
// or a counter) in each: the standard filter (Bloom 1970), the partitioned one (ClassicFilter),
// the blocked shapes (Putze, Sanders, Singler 2007; layout.h) and the counting filter. The blocked
// FPR is exact for ideal hashing at every rate, so asking for p gives a filter whose predicted FPR
// is <= p; blocking costs memory at low p, which `Plan` reports (docs/DESIGN.md has the model).
//
//   absl::StatusOr<bloomery::Plan> plan = bloomery::PlanFor(1'000'000, 0.01);
//   // plan->hashes == 6, plan->expected_fpr <= 0.01
//
// All functions are pure and thread-safe. Caveat: the first evaluation of a small rate for a k
// tabulates per-load FPRs once (the slowest, k = 15, takes a fraction of a second).
#ifndef BLOOMERY_PLAN_H_
#define BLOOMERY_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/layout.h"
#include "bloomery/options.h"

namespace bloomery {

inline constexpr uint32_t kBlockBytes = 64;  // a block is one cache line
inline constexpr uint32_t kBlockBits = kBlockBytes * 8;
// Bytes of the whole lines that hold `bits`: what a filter allocates and a file stores per stage.
[[nodiscard]] constexpr uint64_t WholeLineBytes(uint64_t bits) noexcept {
  return (bits + kBlockBits - 1) / kBlockBits * kBlockBytes;
}
inline constexpr uint32_t kMinHashes = 1;
inline constexpr uint32_t kMaxHashes = 16;
inline constexpr uint32_t kMaxCountingHashes = 8;  // one slice of a line's 8 per probe
// 2^48 bits (32 TiB): every size computation stays inside 64 bits.
inline constexpr uint64_t kMaxBits = uint64_t{1} << 48;

// Slices of a 512-bit block for a filter with `hashes` probes: 8 (64-bit slices) or 16 (32-bit).
[[nodiscard]] constexpr uint32_t SlicesPerBlock(uint32_t hashes) { return hashes <= 8 ? 8 : 16; }

// FPRs with `keys` keys and `hashes` probes: standard (`bits` bits), partitioned (k slices),
// blocked (`blocks` lines; exact), counting (exact; 1 for hashes outside 1..8 or counter_bits not
// 4 or 8), and one 512-bit block holding `load` keys.
[[nodiscard]] BLOOMERY_EXPORT double StandardFpr(double keys, double bits, uint32_t hashes);
[[nodiscard]] BLOOMERY_EXPORT double PartitionedFpr(double keys, double bits, uint32_t hashes);
[[nodiscard]] BLOOMERY_EXPORT double BlockedFpr(double keys, uint64_t blocks, uint32_t hashes);
[[nodiscard]] BLOOMERY_EXPORT double CountingFpr(double keys, uint64_t blocks, uint32_t hashes,
                                                 uint32_t counter_bits);
[[nodiscard]] BLOOMERY_EXPORT double BlockedFprAtLoad(double load, uint32_t hashes);

// The k that minimises the standard filter's FPR at a given bits/key: bits_per_key * ln 2.
[[nodiscard]] BLOOMERY_EXPORT double OptimalHashes(double bits_per_key);

// The FPR `layout` predicts (`bits` whole blocks); 1 for hashes outside its range, or kAuto.
[[nodiscard]] BLOOMERY_EXPORT double PredictedFpr(Layout layout, double keys, uint64_t bits,
                                                  uint32_t hashes);

struct Plan {  // a filter's geometry and what it promises
  Layout layout = Layout::kLine512;
  Probe probe = Probe::kFields;  // a blocked layout's (never kLatest); unused by kPartitioned
  uint64_t capacity = 0;         // keys the promise is made for
  uint64_t bits = 0;             // total bits (a multiple of the block's bits for blocked layouts)
  uint32_t hashes = 0;           // probes per key, k
  double bits_per_key = 0;       // bits / capacity
  double expected_fpr = 0;       // predicted FPR once `capacity` keys are in

  [[nodiscard]] uint64_t bytes() const { return (bits + 7) / 8; }
  [[nodiscard]] uint64_t blocks() const {  // of the layout's shape; 512-bit lines if partitioned
    const BlockShape* shape = FindBlockShape(layout);
    return bits / (shape != nullptr ? shape->block_bits : kBlockBits);
  }
};

struct CountingPlan {         // a counting filter's geometry and what it promises
  uint64_t capacity = 0;      // keys the promise is made for
  uint64_t blocks = 0;        // 64-byte lines
  uint32_t hashes = 0;        // counters per key, k
  uint32_t counter_bits = 4;  // 4 or 8
  double bits_per_key = 0;    // memory bits / capacity
  double expected_fpr = 0;    // predicted FPR with `capacity` distinct keys present

  [[nodiscard]] uint64_t bits() const { return blocks * kBlockBits; }
  [[nodiscard]] uint64_t bytes() const { return blocks * kBlockBytes; }
  [[nodiscard]] uint64_t counters() const { return bits() / counter_bits; }
};

// What every kind's capacity() says: `capacity`, or for a plan sized by bits and hashes alone
// (capacity 0) cells * ln 2 / k, past which its FPR climbs fast.
[[nodiscard]] BLOOMERY_EXPORT uint64_t PlannedCapacity(uint64_t capacity, uint64_t cells,
                                                       uint32_t hashes) noexcept;

// What every kind's planned_fpr() says: the FPR the geometry predicts at PlannedCapacity keys.
[[nodiscard]] BLOOMERY_EXPORT double PlannedFpr(const Plan& plan) noexcept;
[[nodiscard]] BLOOMERY_EXPORT double PlannedFpr(const CountingPlan& plan) noexcept;

struct Sizing {  // any kind's sizing fields (0 for a field the kind does not take)
  uint64_t capacity = 0;
  double fpr = 0;
  uint64_t bits = 0;
  uint32_t hashes = 0;
};

// Every kind's sizing check: hashes in [1, max_hashes]; by geometry bits <= kMaxBits and hashes or
// a capacity; by promise capacity >= 1 and fpr in (0, 1). InvalidArgument naming the option.
[[nodiscard]] BLOOMERY_EXPORT absl::Status CheckSizing(const Sizing& sizing,
                                                       uint32_t max_hashes = kMaxHashes);
[[nodiscard]] inline absl::Status CheckSizing(const FilterOptions& options,
                                              uint32_t max_hashes = kMaxHashes) {
  return CheckSizing(Sizing{options.capacity, options.fpr, options.bits, options.hashes},
                     max_hashes);
}

// PlanForSize when `bits` is set, else PlanFor; kAuto picks a blocked shape by layout_choice
// (layout.h). Errors: CheckSizing's and the planners' (kAuto: the line's if no shape plans).
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanFilter(const FilterOptions& options,
                                                              Layout layout);

// `plan` with its units (blocks, or a slice's bits) rounded up to a multiple of 2^t, t =
// floor(log2(units)) - 8: at most 1/256 more memory, and a filter that can fold (FoldedTo) t
// times. A plan sized by bits is returned as it is. ResourceExhausted past kMaxBits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> FoldablePlan(const Plan& plan);

// The plan a filter of `layout` is created with (BlockedFilter::Create, ClassicFilter::Create):
// sized by capacity and fpr, PlanFilter's made foldable (FoldablePlan); sized by bits, exactly
// PlanFilter's. Errors: those of PlanFilter and FoldablePlan.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanForCreate(const FilterOptions& options,
                                                                 Layout layout);

// One plan per blocked shape (kBlockShapes' order; options.layout ignored), or its error.
[[nodiscard]] BLOOMERY_EXPORT std::vector<absl::StatusOr<Plan>> PlanEachLayout(
    const FilterOptions& options);

// Smallest filter of `layout` whose predicted FPR at `capacity` is <= `fpr`, k the fewest-bits
// one (ties to the smaller) unless `hashes` is set. Errors: InvalidArgument for capacity 0, fpr
// not in (0, 1), hashes > kMaxHashes, a probe the layout has not; ResourceExhausted past kMaxBits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanFor(uint64_t capacity, double fpr,
                                                           Layout layout = Layout::kLine512,
                                                           uint32_t hashes = 0,
                                                           Probe probe = Probe::kLatest);

// The geometry "`bits` bits, `hashes` probes" (bits rounded up to whole blocks, or k equal
// slices) and its FPR at `capacity` keys (0 with explicit hashes: expected_fpr 0). hashes == 0:
// the k best at `capacity`. Errors: InvalidArgument for bits 0 or > kMaxBits, hashes >
// kMaxHashes, hashes and capacity both 0, a probe the layout has not.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanForSize(uint64_t bits, uint32_t hashes,
                                                               uint64_t capacity,
                                                               Layout layout = Layout::kLine512,
                                                               Probe probe = Probe::kLatest);

// Sizes a counting filter as CountingFilter::Create does (whole lines; k <= 8). Errors:
// InvalidArgument for counter_bits not 4 or 8, and CheckSizing's; ResourceExhausted past kMaxBits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<CountingPlan> PlanCountingFilter(
    const CountingOptions& options);

}  // namespace bloomery

#endif  // BLOOMERY_PLAN_H_
