// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "health.h"

#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <vector>

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

// The values the timer follows. A value may be freed on the lazyfree thread while the timer runs:
// its destructor waits on this mutex, which the cron's pass holds for its whole pass (lock order:
// Following's, then Totals').
struct Following {
  // Recursive: a follower's Refresh takes its value out of the list during the timer's pass.
  std::recursive_mutex mutex;
  std::set<TrackedHealth*> values;
};

Following& Followed() {
  static Following* const following = new Following;  // never destroyed, as Global()
  return *following;
}

}  // namespace

HealthTotals CurrentHealthTotals() {
  Totals& global = Global();
  std::lock_guard lock(global.mutex);
  HealthTotals totals = global.totals;
  totals.worst_fpr_ratio = global.ratios.empty() ? 0 : *global.ratios.rbegin();
  return totals;
}

TrackedHealth::TrackedHealth(HealthFollower follow, void* value, bool always)
    : follower_(follow), value_(value), always_(always) {
  if (always_) Follow(true);
}

void TrackedHealth::Follow(bool follow) {
  Following& following = Followed();
  // Under the lock: the destructor may run on the lazyfree thread while the cron's pass refreshes
  // (and so unfollows) this value on the main thread.
  std::lock_guard lock(following.mutex);
  if (follow == followed_) return;
  if (follow) {
    following.values.insert(this);
  } else {
    following.values.erase(this);
  }
  followed_ = follow;
}

void TrackedHealth::RefreshFollowed(RedisModuleCtx* ctx) {
  Following& following = Followed();
  std::lock_guard lock(following.mutex);
  // A copy: a follower's Refresh takes its value out of the list.
  const std::vector<TrackedHealth*> values(following.values.begin(), following.values.end());
  for (TrackedHealth* health : values) {
    if (!health->Older(kStale)) continue;
    health->follower_(health->value_, ctx);
  }
}

TrackedHealth::~TrackedHealth() {
  Follow(false);
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
  if (!always_) Follow(false);
}

bool TrackedHealth::Older(std::chrono::milliseconds age) const {
  return std::chrono::steady_clock::now() - entered_ >= age;
}

}  // namespace bloomery::redis
