// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// health.h: FilterHealth, what a filter's bits say about it now, for operators (issue #40):
// keys held against keys planned, fill, the FPR a lookup sees against the FPR planned, and a
// three-valued state to alert on. Every kind's `Health()` returns it (filter.h's `Filter<F>`);
// `bloomery info` prints it (text, JSON, Prometheus metrics), Python's `.health()` returns it as a
// dict; docs/OPERATING.md says what to watch and what to do.
//
// Cost. Health() reads the bits, never a counter kept by inserts (inserts pay nothing for it). A
// filter (a chain's stage, a windowed filter's whole array) of at most kHealthExactBytes is read
// whole and its figures are exact readings of its bits (the estimated count still has the count
// estimator's own error). A larger one is read as a stratified sample: its blocks are cut into
// kHealthStrata equal strata and in each one contiguous run of ~kHealthRunBytes is read at a
// pseudo-random offset (a fixed seed, so the same bits give the same answer): ~1 MiB read,
// whatever the size (a classic filter's k slices share the 256 strata; a scalable chain reads up
// to that per stage). The per-block FPR and fill of the sample are those of the exact reading,
// scaled to the whole filter. Sampling error: the runs are hashed keys' blocks, so their readings
// are independent; the standard error of a total is that of the mean of the runs' readings
// (their spread / sqrt(strata), a slight overstatement of the stratified error). The stated
// 3-sigma errors, for a line filter at 1% (tests/health_test.cc prints them): at its
// capacity ~0.3% of the count and ~1.4% of the FPR; at 10% of it ~1% and ~8%.
//
// Example:
//   bloomery::FilterHealth health = filter.Health();
//   if (health.state != bloomery::HealthState::kOk)
//     LOG(WARNING) << bloomery::HealthStateName(health.state) << ": FPR " << health.estimated_fpr
//                  << " planned " << health.planned_fpr;
#ifndef BLOOMERY_HEALTH_H_
#define BLOOMERY_HEALTH_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "bloomery/export.h"

namespace bloomery {

// A filter of at most this many bytes (a chain's stage on its own) is read whole by Health().
inline constexpr uint64_t kHealthExactBytes = uint64_t{1} << 20;
// Above it: strata, and the bytes of the one contiguous run read in each.
inline constexpr uint32_t kHealthStrata = 256;
inline constexpr uint64_t kHealthRunBytes = 4096;

// The state rule (ClassifyHealth): near once the estimated FPR passes this fraction of the
// planned FPR, or the estimated count this fraction of the capacity.
inline constexpr double kHealthNearFprRatio = 0.8;
inline constexpr double kHealthNearLoad = 0.9;

enum class HealthState : uint8_t {
  kOk = 0,         // below both thresholds
  kNearLimit = 1,  // estimated FPR above 0.8x planned, or the count past 90% of capacity
  kOverLimit = 2,  // estimated FPR above planned: lookups see more false positives than promised
};
// Every state, in order (for a metrics exporter's one sample per state).
inline constexpr HealthState kHealthStates[] = {HealthState::kOk, HealthState::kNearLimit,
                                                HealthState::kOverLimit};

// "ok", "near_limit", "over_limit": the names metrics, JSON and Python use.
[[nodiscard]] BLOOMERY_EXPORT std::string_view HealthStateName(HealthState state) noexcept;

// The one rule: kOverLimit if estimated_fpr > planned_fpr; else kNearLimit if estimated_fpr >
// kHealthNearFprRatio * planned_fpr or load > kHealthNearLoad (load = estimated count / capacity,
// passed as 0 by a kind whose capacity is not a limit, a scalable chain that can still grow);
// else kOk. A NaN or infinite reading (a saturated filter) is kOverLimit.
[[nodiscard]] BLOOMERY_EXPORT HealthState ClassifyHealth(double estimated_fpr, double planned_fpr,
                                                         double load) noexcept;

struct FilterHealth {
  // Keys planned for (the kind's capacity()).
  uint64_t capacity = 0;
  // Keys the filter reported new, where it keeps that count: a scalable chain's stage counts
  // (exact, but estimated from the fill for stages merged by UnionWith). Unset for the kinds that
  // count nothing on insert (blocked, classic, counting, windowed).
  std::optional<uint64_t> inserted;
  // Distinct keys held, from the fill (Swamidass & Baldi; counting: its counters' sum / k, the
  // insertions minus erasures; windowed: the live generations'), +infinity once saturated,
  // and the half-width of its ~99.7% interval (3 sigma: the estimator's error and the sample's).
  double estimated_count = 0;
  double estimated_count_error = 0;
  // Fraction of bits (counting: counters) set; a chain's over all its stages, a windowed
  // filter's over its live generations.
  double fill_ratio = 0;
  // The FPR planned at capacity (planned_fpr(); a scalable chain's bound).
  double planned_fpr = 0;
  // The FPR a lookup of an absent key sees now, from the bits (EstimatedFpr's reading), and the
  // 3-sigma half-width of the sample's error (0 when read whole).
  double estimated_fpr = 0;
  double estimated_fpr_error = 0;
  // Whether the figures come from a sample (see the file comment) rather than every block.
  bool sampled = false;
  HealthState state = HealthState::kOk;
};

}  // namespace bloomery

#endif  // BLOOMERY_HEALTH_H_
