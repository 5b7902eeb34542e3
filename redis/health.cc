// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "health.h"

#include <cmath>
#include <limits>
#include <mutex>

namespace bloomery::redis {
namespace {

// estimated / planned FPR, the number INFO's worst ratio is made of.
// A reading that is not a number (none should be) counts as the worst, never breaks the order.
double FprRatio(const FilterHealth& health) {
  if (!(health.planned_fpr > 0)) return 0;
  const double ratio = health.estimated_fpr / health.planned_fpr;
  return std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio;
}

struct Totals {
  std::mutex mutex;
  HealthTotals totals;  // but worst_fpr_ratio, which is the largest of `ratios`
  std::multiset<double> ratios;
};

Totals& Global() {
  static Totals* const totals = new Totals;  // never destroyed: values may outlive statics
  return *totals;
}

// Adds (sign +1) or takes out (-1) one filter's bytes and state; unsigned wrap-around makes the
// subtraction exact.
void Count(HealthTotals& totals, HealthState state, uint64_t bytes, int64_t sign) {
  const auto step = static_cast<uint64_t>(sign);
  totals.bytes += step * bytes;
  if (state == HealthState::kNearLimit) totals.near_limit += step;
  if (state == HealthState::kOverLimit) totals.over_limit += step;
}

}  // namespace

HealthTotals CurrentHealthTotals() {
  Totals& global = Global();
  std::lock_guard lock(global.mutex);
  HealthTotals totals = global.totals;
  totals.worst_fpr_ratio = global.ratios.empty() ? 0 : *global.ratios.rbegin();
  return totals;
}

TrackedHealth::~TrackedHealth() {
  if (!entered_once_) return;
  Totals& global = Global();
  std::lock_guard lock(global.mutex);
  --global.totals.filters;
  Count(global.totals, last_.state, bytes_, -1);
  global.ratios.erase(ratio_);
}

void TrackedHealth::Enter(const FilterHealth& health, uint64_t bytes) {
  Totals& global = Global();
  {
    std::lock_guard lock(global.mutex);
    if (entered_once_) {
      Count(global.totals, last_.state, bytes_, -1);
      global.ratios.erase(ratio_);
    } else {
      ++global.totals.filters;
    }
    Count(global.totals, health.state, bytes, +1);
    ratio_ = global.ratios.insert(FprRatio(health));
  }
  entered_once_ = true;
  last_ = health;
  bytes_ = bytes;
  pending_keys_ = 0;
  entered_ = std::chrono::steady_clock::now();
}

bool TrackedHealth::Stale() const {
  return std::chrono::steady_clock::now() - entered_ >= std::chrono::seconds(1);
}

}  // namespace bloomery::redis
