// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// plan.h: false-positive-rate formulas and the planner that turns (capacity, fpr) or (bits, hashes)
// into a filter's geometry.
//
// Three layouts are described here:
//  - the standard Bloom filter (Bloom 1970): k probes anywhere in m bits, FPR (1 - e^{-kn/m})^k;
//  - the partitioned filter (pybloom, ClassicFilter): k slices of m/k bits, one probe per slice,
//    FPR (1 - (1 - k/m)^n)^k;
//  - the blocked filter (Putze, Sanders, Singler 2007; BlockedFilter): a key lives in one 512-bit
//    cache line chosen by its hash; the line is split into 8 slices of 64 bits (k <= 8) or 16
//    slices of 32 bits (9 <= k <= 16) and the key's k probes go to k consecutive slices starting at
//    a hash-chosen slice. Its FPR is computed exactly for ideal hashing: inclusion-exclusion over
//    the query's slices gives the FPR of a line holding L keys as a sum of geometric terms, and the
//    binomial distribution of line loads then has a closed form (its generating function). No
//    normal or Poisson approximation is involved, so the planner's promise holds for small filters
//    and for the heavy lines that dominate the FPR of large ones. The evaluation is right to a few
//    ulps (relative) at every rate, 1e-20 and far below included: where the alternating sum would
//    cancel, a sum of non-negative terms takes over (lib/sliced_fpr.cc).
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

#include "absl/status/statusor.h"

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
// 2^48 bits (32 TiB) is far past any machine this runs on; the limit keeps every size computation
// (bytes, words, blocks times 512) inside 64 bits with room to spare.
inline constexpr uint64_t kMaxBits = uint64_t{1} << 48;

enum class Layout : uint8_t {
  kBlocked = 1,      // BlockedFilter: one cache line per key.
  kPartitioned = 2,  // ClassicFilter: k slices over the whole array, k cache lines per key.
};

// Slices of a 512-bit block for a filter with `hashes` probes: 8 (64-bit slices) or 16 (32-bit).
[[nodiscard]] constexpr uint32_t SlicesPerBlock(uint32_t hashes) { return hashes <= 8 ? 8 : 16; }

// FPR of a standard Bloom filter of `bits` bits holding `keys` keys with `hashes` probes.
[[nodiscard]] double StandardFpr(double keys, double bits, uint32_t hashes);

// FPR of a partitioned filter: `hashes` slices of bits/hashes bits each.
[[nodiscard]] double PartitionedFpr(double keys, double bits, uint32_t hashes);

// Exact FPR (ideal hashing) of a blocked filter of `blocks` 512-bit blocks holding `keys` keys.
[[nodiscard]] double BlockedFpr(double keys, uint64_t blocks, uint32_t hashes);

// FPR of a single block that holds exactly `load` keys.
[[nodiscard]] double BlockedFprAtLoad(double load, uint32_t hashes);

// The k that minimises the standard filter's FPR at a given bits/key: bits_per_key * ln 2.
[[nodiscard]] double OptimalHashes(double bits_per_key);

// The FPR `layout` predicts for `keys` keys in `bits` bits with `hashes` probes.
[[nodiscard]] double PredictedFpr(Layout layout, double keys, uint64_t bits, uint32_t hashes);

// A filter's geometry and what it promises.
struct Plan {
  Layout layout = Layout::kBlocked;
  uint64_t capacity = 0;    // keys the promise is made for
  uint64_t bits = 0;        // total bits (a multiple of 512 for blocked filters)
  uint32_t hashes = 0;      // probes per key, k
  double bits_per_key = 0;  // bits / capacity
  double expected_fpr = 0;  // predicted FPR once `capacity` keys are in

  [[nodiscard]] uint64_t bytes() const { return (bits + 7) / 8; }
  [[nodiscard]] uint64_t blocks() const { return bits / kBlockBits; }
};

// Smallest filter of `layout` whose predicted FPR at `capacity` keys is <= `fpr`. With hashes == 0
// the planner chooses k (the one that needs the fewest bits; ties go to the smaller k, which is
// faster); otherwise k is fixed to `hashes`.
// Errors: InvalidArgument for capacity 0, fpr not in (0, 1) (NaN included), hashes above
// kMaxHashes; ResourceExhausted if the filter would need more than kMaxBits.
[[nodiscard]] absl::StatusOr<Plan> PlanFor(uint64_t capacity, double fpr,
                                           Layout layout = Layout::kBlocked, uint32_t hashes = 0);

// The geometry "`bits` bits, `hashes` probes" (e.g. 2^30 bits, 6 hashes) and what it gives at
// `capacity` keys. Blocked filters round bits up to whole blocks, partitioned ones to k equal
// slices. With hashes == 0 the k with the lowest predicted FPR at `capacity` is chosen (capacity
// must then be > 0). capacity == 0 is allowed with explicit hashes: expected_fpr is then 0.
// Errors: InvalidArgument for bits == 0 or > kMaxBits, hashes > kMaxHashes, or hashes == 0 with
// capacity == 0.
[[nodiscard]] absl::StatusOr<Plan> PlanForSize(uint64_t bits, uint32_t hashes, uint64_t capacity,
                                               Layout layout = Layout::kBlocked);

}  // namespace bloomery

#endif  // BLOOMERY_PLAN_H_
