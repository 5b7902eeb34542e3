// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// health.h: FilterHealth, what a filter's bits say about it now, for operators: keys held against
// keys planned, fill, the FPR a lookup sees against the FPR planned, and a state to alert on.
// Every kind's Health() returns it; docs/OPERATING.md says what to watch and what to do.
// Cost: Health() reads the bits (inserts pay nothing for it): a filter (or a chain's stage) of at
// most kHealthExactBytes whole, a larger one through a fixed-seed stratified sample of
// kHealthStrata runs of kHealthRunBytes, whose 3-sigma errors are reported beside the estimates.
//
//   bloomery::FilterHealth health = filter.Health();
//   if (health.state != bloomery::HealthState::kOk)
//     LOG(WARNING) << bloomery::HealthStateName(health.state) << ": FPR " << health.estimated_fpr;
#ifndef BLOOMERY_HEALTH_H_
#define BLOOMERY_HEALTH_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "bloomery/export.h"

namespace bloomery {

inline constexpr uint64_t kHealthExactBytes = uint64_t{1} << 20;
inline constexpr uint32_t kHealthStrata = 256;
inline constexpr uint64_t kHealthRunBytes = 4096;

// ClassifyHealth's thresholds: fractions of the planned FPR and of the capacity.
inline constexpr double kHealthNearFprRatio = 0.8;
inline constexpr double kHealthNearLoad = 0.9;

enum class HealthState : uint8_t {
  kOk = 0,         // below both thresholds
  kNearLimit = 1,  // estimated FPR above 0.8x planned, or the count past 90% of capacity
  kOverLimit = 2,  // estimated FPR above planned: lookups see more false positives than promised
};
// Every state, in order.
inline constexpr HealthState kHealthStates[] = {HealthState::kOk, HealthState::kNearLimit,
                                                HealthState::kOverLimit};

// "ok", "near_limit", "over_limit".
[[nodiscard]] BLOOMERY_EXPORT std::string_view HealthStateName(HealthState state) noexcept;

// kOverLimit if estimated_fpr > planned_fpr, or a reading is NaN or infinite; else kNearLimit
// past either threshold (load: estimated count / capacity, 0 for a chain that can still grow).
[[nodiscard]] BLOOMERY_EXPORT HealthState ClassifyHealth(double estimated_fpr, double planned_fpr,
                                                         double load) noexcept;

struct FilterHealth {
  uint64_t capacity = 0;  // the kind's capacity()
  // Keys reported new, where the kind counts them (a scalable chain); unset otherwise.
  std::optional<uint64_t> inserted;
  // Distinct keys held, from the fill (+infinity once saturated), and its 3-sigma half-width.
  double estimated_count = 0;
  double estimated_count_error = 0;
  double fill_ratio = 0;   // bits (counting: counters) set; over a chain's or window's live parts
  double planned_fpr = 0;  // planned_fpr()
  // The FPR a lookup of an absent key sees now (EstimatedFpr), and its 3-sigma half-width.
  double estimated_fpr = 0;
  double estimated_fpr_error = 0;
  bool sampled = false;  // the figures come from a sample
  HealthState state = HealthState::kOk;
};

}  // namespace bloomery

#endif  // BLOOMERY_HEALTH_H_
