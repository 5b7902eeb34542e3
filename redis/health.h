// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// health.h: the filters' health where Redis operators look. Every value of the module's two types
// (BF.* and BFW.*) that holds a filter has a TrackedHealth: its last health (FilterHealth,
// bloomery/health.h: the state, the estimated over planned FPR) and bytes, entered into module-wide
// totals when its filter is first read and taken out when the value is freed (a key half-way
// through BF.LOADCHUNK holds no filter yet, and counts in none). `INFO bf` reports the totals
// (filters, bytes, filters near and over their limit, the worst ratio of estimated to planned FPR)
// without reading any filter, so INFO costs the same with 10,000 filters as with one. Redis 7.0
// leaves a module's section out of INFO and INFO all, and redis_exporter exports only the fields
// it knows: they reach Prometheus through redis/bloomery_metrics.lua (docs/OPERATING.md, "Alerts").
//
// Kept up to date as writes happen: a write calls AfterWrite with the keys it added, and the health
// is computed again (Health(): ~1.1 ms at most for one filter, a 1 MiB sample of a large filter,
// the whole of a small one; a chain's dependence correction, when read again, 1 to 10 ms for
// 8 stages) at once when the write
// changed the filter's bytes (a chain grew a stage), and otherwise once the keys added since the
// last time reach 1/64 of the filter's capacity and a tenth of a second has passed, or a second
// has passed since it. So a write costs a counter almost always, and about 0.1 us per key
// added on average (Health()'s time over 1/64 of the keys the filter holds: 1.1 ms per 13,000
// keys for a 1 MiB filter, less for larger and smaller ones).
//
// What writes leave behind, a second's timer (RefreshFollowed, main thread) brings up to date
// whether or not the key is written again: a filter written since its health was last computed,
// and a windowed filter whose clock has rotated a generation out since (checked in O(1) a second;
// its health computed again only then). So INFO bf's bytes are exact after every write, and its
// states and worst ratio lag the filters by at most a second (and two for the timer's period).
//
// Values are freed on the main thread, or on the lazyfree thread (FLUSHALL ASYNC, UNLINK): a mutex
// guards the totals.
#ifndef BLOOMERY_REDIS_HEALTH_H_
#define BLOOMERY_REDIS_HEALTH_H_

#include <chrono>
#include <cstdint>
#include <set>

#include "bloomery/health.h"

struct RedisModuleCtx;

namespace bloomery::redis {

// The module-wide totals INFO bf reports.
struct HealthTotals {
  uint64_t filters = 0;
  uint64_t bytes = 0;
  uint64_t near_limit = 0;
  uint64_t over_limit = 0;
  // The largest estimated / planned FPR over every filter (0 with none).
  double worst_fpr_ratio = 0;
};
[[nodiscard]] HealthTotals CurrentHealthTotals();

// How the timer brings a value's health up to date (main thread, `ctx` the timer's): recompute it
// if it may have changed (Refresh), or do nothing.
using HealthFollower = void (*)(void* value, RedisModuleCtx* ctx);

// One value's entry in the totals. Not copyable: each value has its own.
class TrackedHealth {
 public:
  // `follow(value, ctx)` is what the timer calls for `value` (the object holding this entry).
  // `always`: the value's health changes with time alone (a windowed filter), so the timer asks
  // it every second; otherwise only after a write that left the health behind.
  TrackedHealth(HealthFollower follow, void* value, bool always);
  ~TrackedHealth();
  TrackedHealth(const TrackedHealth&) = delete;
  TrackedHealth& operator=(const TrackedHealth&) = delete;

  // Computes `filter`'s health now and enters it.
  template <typename Filter>
  void Refresh(const Filter& filter) {
    Enter(filter.Health(), filter.memory_bytes());
  }
  // After a write that added `added` keys to `filter`: Refresh when due (see the file comment),
  // else leaves it to the timer.
  template <typename Filter>
  void AfterWrite(const Filter& filter, uint64_t added) {
    pending_keys_ += added;
    if (filter.memory_bytes() != bytes_ ||
        (pending_keys_ * 64 >= filter.capacity() && Older(kAged)) || Older(kStale)) {
      Refresh(filter);
    } else if (pending_keys_ > 0) {
      Follow(true);
    }
  }
  // Whether keys were added since the health was last computed.
  [[nodiscard]] bool behind() const noexcept { return pending_keys_ > 0; }

  // The health last entered.
  [[nodiscard]] const FilterHealth& last() const noexcept { return last_; }

  // The timer's work: every followed value whose health is a second old or more is asked to
  // bring it up to date. Main thread only.
  static void RefreshFollowed(RedisModuleCtx* ctx);

 private:
  void Enter(const FilterHealth& health, uint64_t bytes);
  // Puts this entry in the timer's list (or takes it out).
  void Follow(bool follow);
  // Whether the health was entered `age` ago or more. kStale: the timer's and the writes' second.
  // kAged: a small filter's 1/64 is a few keys, and a chain's correction reads its stages on up to
  // 32,768 hashes (EstimatedFpr), so a stream of writes recomputes at most ten times a second (the
  // cron takes what is left).
  static constexpr std::chrono::milliseconds kStale{1000};
  static constexpr std::chrono::milliseconds kAged{100};
  [[nodiscard]] bool Older(std::chrono::milliseconds age) const;

  const HealthFollower follower_;
  void* const value_;
  const bool always_;
  bool followed_ = false;
  bool entered_once_ = false;  // in the totals
  FilterHealth last_;
  uint64_t bytes_ = 0;
  uint64_t pending_keys_ = 0;
  std::chrono::steady_clock::time_point entered_;
  std::multiset<double>::iterator ratio_;  // its entry in the totals' ratios
};

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_HEALTH_H_
