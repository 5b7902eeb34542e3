// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// plan.h: false-positive-rate formulas and the planner that turns (capacity, fpr) or (bits, hashes)
// into a filter's geometry.
//
// One sliced-layout model sizes every kind (lib/plan/plan.cc): a key's k probes land in k distinct
// slices, one cell (a bit, or a counter) in each. Three layouts are described here:
//  - the standard Bloom filter (Bloom 1970): k probes anywhere in m bits, FPR (1 - e^{-kn/m})^k;
//  - the partitioned filter (pybloom, ClassicFilter): k slices of m/k bits, one probe per slice,
//    FPR (1 - (1 - k/m)^n)^k (one slice of m/k cells per probe, spanning the array);
//  - the blocked filter (Putze, Sanders, Singler 2007; BlockedFilter): a key lives in one 512-bit
//    cache line chosen by its hash; the line is split into 8 slices of 64 bits (k <= 8) or 16
//    slices of 32 bits (9 <= k <= 16) and the key's k probes go to k consecutive slices starting at
//    a hash-chosen slice. Its FPR is computed exactly for ideal hashing: inclusion-exclusion over
//    the query's slices gives the FPR of a line holding L keys as a sum of geometric terms, and the
//    binomial distribution of line loads then has a closed form (its generating function). No
//    normal or Poisson approximation is involved, so the planner's promise holds for small filters
//    and for the heavy lines that dominate the FPR of large ones. The evaluation is right to a few
//    ulps (relative) at every rate, 1e-20 and far below included: where the alternating sum would
//    cancel, a sum of non-negative terms takes over (lib/plan/sliced_fpr.cc).
//    The other blocked shapes (layout.h: block256, 8 x 32-bit slices in 32 bytes; word64, 8 x 8-bit
//    slices in one 64-bit word; k <= 8 for both) are the same model with their own slices, and
//    just as exact; PlanEachLayout plans them all, Layout::kAuto chooses among them.
//  - the counting filter (CountingFilter) is the blocked layout with counters for bits: k <= 8,
//    8 slices of 64 / counter_bits counters per line, a counter "set" when non-zero.
//
// The planner is honest about blocking: asking for p gives a filter whose predicted FPR, under the
// blocked formula, is <= p. Blocking costs memory at low p; `Plan` reports the bits/key it needs.
//
// Example:
//   absl::StatusOr<bloomery::Plan> plan = bloomery::PlanFor(1'000'000, 0.01);
//   // plan->bits_per_key ~ 10.3, plan->hashes == 6, plan->expected_fpr <= 0.01
//
// All functions are pure and thread-safe. The blocked formula's coefficients are computed once per
// k and cached; the first evaluation of a small rate for a k tabulates per-load FPRs (up to ~0.5 s
// for k = 15, much less for other k), later ones reuse the table.
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

// A block is one 64-byte cache line.
inline constexpr uint32_t kBlockBytes = 64;
inline constexpr uint32_t kBlockBits = kBlockBytes * 8;
// Bytes of the whole lines that hold `bits` (bits <= 8 * kMaxBits): what every filter allocates
// and a file stores per stage, so that memory and file agree byte for byte.
[[nodiscard]] constexpr uint64_t WholeLineBytes(uint64_t bits) noexcept {
  return (bits + kBlockBits - 1) / kBlockBits * kBlockBytes;
}
inline constexpr uint32_t kMinHashes = 1;
inline constexpr uint32_t kMaxHashes = 16;
// A counting filter's k counters lie in k of its line's 8 slices, one slice per probe.
inline constexpr uint32_t kMaxCountingHashes = 8;
// 2^48 bits (32 TiB) is far past any machine this runs on; the limit keeps every size computation
// (bytes, words, blocks times 512) inside 64 bits with room to spare.
inline constexpr uint64_t kMaxBits = uint64_t{1} << 48;

// Slices of a 512-bit block for a filter with `hashes` probes: 8 (64-bit slices) or 16 (32-bit).
[[nodiscard]] constexpr uint32_t SlicesPerBlock(uint32_t hashes) { return hashes <= 8 ? 8 : 16; }

// FPR of a standard Bloom filter of `bits` bits holding `keys` keys with `hashes` probes.
[[nodiscard]] BLOOMERY_EXPORT double StandardFpr(double keys, double bits, uint32_t hashes);

// FPR of a partitioned filter: `hashes` slices of bits/hashes bits each.
[[nodiscard]] BLOOMERY_EXPORT double PartitionedFpr(double keys, double bits, uint32_t hashes);

// Exact FPR (ideal hashing) of a blocked filter of `blocks` 512-bit blocks holding `keys` keys.
[[nodiscard]] BLOOMERY_EXPORT double BlockedFpr(double keys, uint64_t blocks, uint32_t hashes);

// Exact FPR (ideal hashing) of a counting filter of `blocks` lines holding `keys` distinct keys
// (and no saturated counter of an erased key): the blocked formula with slices of 64 /
// counter_bits counters. Returns 1 for hashes outside 1..8 or counter_bits not 4 or 8.
[[nodiscard]] BLOOMERY_EXPORT double CountingFpr(double keys, uint64_t blocks, uint32_t hashes,
                                                 uint32_t counter_bits);

// FPR of a single block that holds exactly `load` keys.
[[nodiscard]] BLOOMERY_EXPORT double BlockedFprAtLoad(double load, uint32_t hashes);

// The k that minimises the standard filter's FPR at a given bits/key: bits_per_key * ln 2.
[[nodiscard]] BLOOMERY_EXPORT double OptimalHashes(double bits_per_key);

// The FPR `layout` predicts for `keys` keys in `bits` bits with `hashes` probes: exact (ideal
// hashing) for the blocked shapes (`bits` a whole number of the layout's blocks), the closed form
// for kPartitioned. 1 for hashes outside the layout's range, or kAuto.
[[nodiscard]] BLOOMERY_EXPORT double PredictedFpr(Layout layout, double keys, uint64_t bits,
                                                  uint32_t hashes);

// A filter's geometry and what it promises.
struct Plan {
  Layout layout = Layout::kLine512;
  // A blocked layout's probe (layout.h; resolved, never kLatest): kFields for a new filter, the
  // file's for a loaded one. Unused by kPartitioned.
  Probe probe = Probe::kFields;
  uint64_t capacity = 0;    // keys the promise is made for
  uint64_t bits = 0;        // total bits (a multiple of the block's bits for blocked layouts)
  uint32_t hashes = 0;      // probes per key, k
  double bits_per_key = 0;  // bits / capacity
  double expected_fpr = 0;  // predicted FPR once `capacity` keys are in

  [[nodiscard]] uint64_t bytes() const { return (bits + 7) / 8; }
  // Blocks of the layout's shape (layout.h); 512-bit lines for kPartitioned.
  [[nodiscard]] uint64_t blocks() const {
    const BlockShape* shape = FindBlockShape(layout);
    return bits / (shape != nullptr ? shape->block_bits : kBlockBits);
  }
};

// A counting filter's geometry and what it promises.
struct CountingPlan {
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

// The keys a plan of `cells` cells (bits, or counters) and `hashes` probes is for: its `capacity`;
// for one sized by bits and hashes alone (capacity 0), the count at which those hashes are the
// best choice, cells * ln 2 / k, past which its FPR climbs fast. What every kind's capacity() says.
[[nodiscard]] BLOOMERY_EXPORT uint64_t PlannedCapacity(uint64_t capacity, uint64_t cells,
                                                       uint32_t hashes) noexcept;

// The FPR a plan's geometry predicts at PlannedCapacity keys: its expected_fpr where it was made
// for a capacity; for one sized by bits and hashes alone (capacity 0, expected_fpr 0, as its file
// says), the FPR at the capacity PlannedCapacity reports. What every kind's planned_fpr() says.
[[nodiscard]] BLOOMERY_EXPORT double PlannedFpr(const Plan& plan) noexcept;
[[nodiscard]] BLOOMERY_EXPORT double PlannedFpr(const CountingPlan& plan) noexcept;

// The sizing fields of any kind's options (options.h): a kind that takes no `bits` or `hashes`
// passes 0 for them.
struct Sizing {
  uint64_t capacity = 0;
  double fpr = 0;
  uint64_t bits = 0;
  uint32_t hashes = 0;
};

// The one validation of sizing options (capacity, fpr, bits, hashes; options.h) that every kind
// applies, with the same messages: hashes in [1, max_hashes]; by geometry (bits != 0) bits at
// most 2^48 and hashes or a capacity to choose them for; by promise capacity >= 1 and fpr in
// (0, 1) (NaN refused). InvalidArgument naming the option, or Ok.
[[nodiscard]] BLOOMERY_EXPORT absl::Status CheckSizing(const Sizing& sizing,
                                                       uint32_t max_hashes = kMaxHashes);
[[nodiscard]] inline absl::Status CheckSizing(const FilterOptions& options,
                                              uint32_t max_hashes = kMaxHashes) {
  return CheckSizing(Sizing{options.capacity, options.fpr, options.bits, options.hashes},
                     max_hashes);
}

// The plan a filter of `layout` is created with from `options`: PlanForSize when `bits` is set,
// PlanFor otherwise. Layout::kAuto plans every blocked shape and takes one by
// options.layout_choice (layout.h): kSmallest, the fewest bits (by geometry, where the bits are
// given: the lowest predicted FPR), ties to the faster shape; kFastest, the fastest shape whose
// memory fits options.memory.max_memory_bytes (0: this machine's), else the smallest. Shapes that
// cannot take options.hashes are skipped. Errors: those of CheckSizing and of the two planners
// below (for kAuto, the line's when no shape can be planned).
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanFilter(const FilterOptions& options,
                                                              Layout layout);

// Folding (BlockedFilter::FoldedTo, ClassicFilter::FoldedTo) halves a filter by or-ing units 2j
// and 2j + 1 into unit j: blocks, or the bits of each classic slice. That keeps every key's bits,
// as the index, fastrange(x, units), halves exactly when the count is even. The plan Create makes
// for a capacity and an fpr is PlanFilter's with its units (blocks; a slice's bits) rounded up to
// a multiple of 2^t, t = floor(log2(units)) - 8 (none below 512 units): at most 1/256 more
// memory, the FPR only lower, and a filter that can halve at least t times. A plan sized by bits
// (capacity 0), or of another layout, is returned as it is.
// Errors: ResourceExhausted if the rounded bits pass kMaxBits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> FoldablePlan(const Plan& plan);

// One plan per blocked shape (kBlockShapes' order) for `options` (its layout ignored): what
// `bloomery plan` prints a row of. A shape that cannot be planned (hashes above its maximum)
// has its error in its place.
[[nodiscard]] BLOOMERY_EXPORT std::vector<absl::StatusOr<Plan>> PlanEachLayout(
    const FilterOptions& options);

// Smallest filter of `layout` whose predicted FPR at `capacity` is <= `fpr`. With hashes == 0
// the planner chooses k (the one that needs the fewest bits; ties go to the smaller k, which is
// faster); otherwise k is fixed to `hashes`. `probe`: the plan's (layout.h; the geometry is the
// same for every probe).
// Errors: InvalidArgument for capacity 0, fpr not in (0, 1) (NaN included), hashes above
// kMaxHashes, a probe the layout has not; ResourceExhausted if the filter would need more than
// kMaxBits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanFor(uint64_t capacity, double fpr,
                                                           Layout layout = Layout::kLine512,
                                                           uint32_t hashes = 0,
                                                           Probe probe = Probe::kLatest);

// The geometry "`bits` bits, `hashes` probes" (e.g. 2^30 bits, 6 hashes) and what it gives at
// `capacity` keys. Blocked filters round bits up to whole blocks, partitioned ones to k equal
// slices. With hashes == 0 the k with the lowest predicted FPR at `capacity` is chosen (capacity
// must then be > 0). capacity == 0 is allowed with explicit hashes: expected_fpr is then 0.
// Errors: InvalidArgument for bits == 0 or > kMaxBits, hashes > kMaxHashes, or hashes == 0 with
// capacity == 0, and for a `probe` the blocked layout has not (word64's kSalted). `probe` is what
// the plan says (a file's, when it is read back); the geometry is the same for every probe.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<Plan> PlanForSize(uint64_t bits, uint32_t hashes,
                                                               uint64_t capacity,
                                                               Layout layout = Layout::kLine512,
                                                               Probe probe = Probe::kLatest);

// Sizes a counting filter from `options`, as CountingFilter::Create does, with the same rules as
// PlanFilter (whole lines; k at most kMaxCountingHashes). Pure, thread-safe; O(k * log(lines))
// evaluations of CountingFpr.
// Errors: InvalidArgument for counter_bits not 4 or 8, and those of CheckSizing;
// ResourceExhausted if the promise needs more than 2^48 bits.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<CountingPlan> PlanCountingFilter(
    const CountingOptions& options);

}  // namespace bloomery

#endif  // BLOOMERY_PLAN_H_
