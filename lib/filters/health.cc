// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/health.h"

#include <cmath>

namespace bloomery {

std::string_view HealthStateName(HealthState state) noexcept {
  switch (state) {
    case HealthState::kOk:
      return "ok";
    case HealthState::kNearLimit:
      return "near_limit";
    case HealthState::kOverLimit:
      return "over_limit";
  }
  return "unknown";
}

HealthState ClassifyHealth(double estimated_fpr, double planned_fpr, double load) noexcept {
  if (!std::isfinite(estimated_fpr) || !std::isfinite(load)) return HealthState::kOverLimit;
  if (estimated_fpr > planned_fpr) return HealthState::kOverLimit;
  if (estimated_fpr > kHealthNearFprRatio * planned_fpr || load > kHealthNearLoad) {
    return HealthState::kNearLimit;
  }
  return HealthState::kOk;
}

}  // namespace bloomery
