// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// guard.h: a cache-penetration guard, the whole pattern a service needs in front of a database.
//
// A lookup of a key that cannot exist ("penetration": random ids from a scraper or an attack)
// misses every cache and costs a database query. The guard keeps a Bloom filter of every key that
// exists and answers "absent" for the rest without asking the database; a false positive (about
// `fpr` of absent keys) only costs the query it would have cost anyway. Present keys go through an
// LRU of values, as in real services, then the database.
//
// The one mistake a guard must never make is to answer "absent" for a row that exists. So:
//   - Put adds the key to the filter BEFORE the transaction that creates the row commits: by the
//     time any reader can see the row, the filter already has the key (a failed transaction only
//     leaves a false positive behind);
//   - Delete (CountingFilter only) erases the key AFTER the deleting transaction commits, and only
//     when that transaction really deleted a row (erasing a key that was never added could take
//     other keys' counters to zero);
//   - at start the filter comes from the saved file plus the change log after its watermark, or,
//     without a file, from a scan of the table (batch inserts), with the log's watermark taken
//     BEFORE the scan, so every row committed meanwhile is in the scan or after the watermark.
//
// Filter: BlockedFilter (rows are never deleted, or rarely: deleted keys stay as false positives
// until the next rebuild), CountingFilter (deletes and expiry really remove keys, at ~4.4x the
// memory of a BlockedFilter for the same FPR, and every expired row must be reaped one by one
// through the guard), or WindowedFilter (rows that live at most `ttl_seconds` after their last
// Put: the filter forgets a key by age, with no per-row bookkeeping; the database may drop expired
// rows in bulk). All are created concurrent: any number of threads may call Get, Put and Delete
// at once.
//
// The windowed guard's promise: a key is kept at least W*(G-1)/G after its last Put, and the
// window W is chosen so that this is `ttl_seconds`; a row whose expires_at is further away is
// refused by Put (the filter would forget it while it still exists). After its TTL a row may be
// answered "absent" even if the database has not deleted it yet: it has expired.
#ifndef BLOOMERY_EXAMPLES_CACHE_GUARD_GUARD_H_
#define BLOOMERY_EXAMPLES_CACHE_GUARD_GUARD_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bloomery/bloomery.h"
#include "store.h"

namespace cache_guard {

// A mutex-guarded LRU of present keys' values. Each write bumps an epoch; a reader that started
// its database query before the latest write does not cache what it read (it may be stale).
class Lru {
 public:
  explicit Lru(size_t capacity) : capacity_(capacity) {}

  std::optional<std::string> Get(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(std::string(key));
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  [[nodiscard]] uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }
  // Caches `value` unless a write happened since `epoch`.
  void PutIfUnchanged(std::string_view key, std::string value, uint64_t epoch) {
    if (capacity_ == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (epoch_.load(std::memory_order_relaxed) != epoch) return;
    std::string owned(key);
    if (auto it = index_.find(owned); it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    order_.emplace_front(owned, std::move(value));
    index_.emplace(std::move(owned), order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  // Called after a write to `key` commits.
  void Invalidate(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch_.fetch_add(1, std::memory_order_acq_rel);
    if (auto it = index_.find(std::string(key)); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
  }

 private:
  const size_t capacity_;
  std::mutex mutex_;
  std::atomic<uint64_t> epoch_{0};
  std::list<std::pair<std::string, std::string>> order_;  // most recent first
  std::unordered_map<std::string, std::list<std::pair<std::string, std::string>>::iterator> index_;
};

struct GuardOptions {
  // Where the filter is saved; its watermark goes to `filter_path + ".seq"`.
  std::string filter_path;
  // Keys the filter is planned for (existing rows plus growth) and its FPR there.
  uint64_t capacity = 1'000'000;
  double fpr = 0.01;
  size_t lru_entries = 10'000;
  // false: no filter at all (the baseline the guard is measured against).
  bool enabled = true;
  // WindowedFilter: the longest a row lives after its Put, in seconds. `capacity` is then the
  // keys Put within one window (ttl * G / (G - 1)), not the rows alive at once, and each
  // generation gets 1/G of it: Puts bunched into one window/G overfill it (plan for the peak).
  int64_t ttl_seconds = 0;
  uint32_t generations = 4;
  // WindowedFilter: its clock (empty: the system clock); a benchmark replays hours in seconds.
  bloomery::WindowClock clock;
};

// What a guard did since it started; read while it runs (relaxed counters).
struct GuardCounters {
  std::atomic<uint64_t> lru_hits{0};
  std::atomic<uint64_t> filtered{0};    // answered "absent" by the filter alone
  std::atomic<uint64_t> db_queries{0};  // lookups that reached the database
  std::atomic<uint64_t> db_misses{0};   // ... and found no row (false positives when guarded)
};

template <typename Filter>
class CacheGuard {
  static constexpr bool kCounting = std::is_same_v<Filter, bloomery::CountingFilter>;
  static constexpr bool kWindowed = std::is_same_v<Filter, bloomery::WindowedFilter>;

 public:
  // Maps the saved filter and applies the change log after its watermark, or builds the filter
  // from a scan of the table and saves it. `conn` is used only during the call.
  static absl::StatusOr<std::unique_ptr<CacheGuard>> Open(const GuardOptions& options,
                                                          Connection& conn) {
    auto guard = std::unique_ptr<CacheGuard>(new CacheGuard(options));
    if (!options.enabled) return guard;
    absl::StatusOr<int64_t> watermark = ReadWatermark(options.filter_path);
    if (watermark.ok()) {
      bloomery::LoadOptions load;
      load.concurrent = true;
      // Copy-on-write: this process's inserts stay private until the next Save, which replaces
      // the file atomically; a crash leaves the last saved file and its watermark intact. A
      // window is loaded (its generations rotate in memory), and goes on expiring by the clock.
      absl::StatusOr<Filter> mapped = [&] {
        if constexpr (kWindowed) {
          return Filter::Load(options.filter_path, load);
        } else {
          return Filter::Map(options.filter_path, bloomery::MapMode::kReadOnly, load);
        }
      }();
      if (mapped.ok()) {
        guard->filter_.emplace(*std::move(mapped));
        guard->watermark_ = *watermark;
        if (absl::Status s = guard->CatchUp(conn); !s.ok()) return s;
        guard->restored_ = true;
        return guard;
      }
    }
    if (absl::Status s = guard->Rebuild(conn); !s.ok()) return s;
    return guard;
  }

  // The row's value or nullopt, asking the database only when the LRU misses and the filter says
  // the key may exist.
  absl::StatusOr<std::optional<std::string>> Get(Connection& conn, std::string_view key) {
    if (std::optional<std::string> cached = lru_.Get(key)) {
      counters_.lru_hits.fetch_add(1, std::memory_order_relaxed);
      return cached;
    }
    if (filter_.has_value() && !filter_->MayContain(key)) {
      counters_.filtered.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    const uint64_t epoch = lru_.epoch();
    counters_.db_queries.fetch_add(1, std::memory_order_relaxed);
    absl::StatusOr<std::optional<std::string>> row = conn.Get(key);
    if (!row.ok()) return row.status();
    if (row->has_value()) {
      lru_.PutIfUnchanged(key, **row, epoch);
    } else {
      counters_.db_misses.fetch_add(1, std::memory_order_relaxed);
    }
    return row;
  }

  // Creates or updates the row. expires_at: unix seconds, 0 for never (expiry needs a
  // CountingFilter or a WindowedFilter to remove the key). A windowed guard refuses
  // (InvalidArgument) a row that would outlive its TTL.
  absl::Status Put(Connection& conn, std::string_view key, std::string_view value,
                   int64_t expires_at = 0) {
    if constexpr (kWindowed) {
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      if (expires_at <= 0 || expires_at > now + options_.ttl_seconds) {
        return absl::InvalidArgumentError(absl::StrCat(
            "a windowed guard keeps keys ", options_.ttl_seconds,
            " s: a row must expire within that (expires_at ", expires_at, ", now ", now, ")"));
      }
    }
    // Before the commit: the row becomes visible only after its key is in the filter.
    if (filter_.has_value()) (void)filter_->Insert(key);
    absl::StatusOr<bool> created = conn.Put(key, value, expires_at);
    lru_.Invalidate(key);
    if constexpr (kCounting) {
      // The counting filter holds one count per live row: an update (or a failed transaction)
      // gives back the count this call added.
      if (filter_.has_value() && !(created.ok() && *created)) (void)filter_->Erase(key);
    }
    return created.status();
  }

  // Deletes the row; the key leaves the filter once the delete has committed.
  absl::Status Delete(Connection& conn, std::string_view key) requires kCounting {
    absl::StatusOr<bool> deleted = conn.Delete(key);
    lru_.Invalidate(key);
    if (!deleted.ok()) return deleted.status();
    if (*deleted && filter_.has_value()) (void)filter_->Erase(key);
    return absl::OkStatus();
  }

  // Deletes up to `limit` rows expired at `now`; returns how many.
  absl::StatusOr<size_t> ReapExpired(Connection& conn, int64_t now,
                                     size_t limit = 10'000) requires kCounting {
    absl::StatusOr<std::vector<std::string>> keys = conn.Expired(now, limit);
    if (!keys.ok()) return keys.status();
    for (const std::string& key : *keys) {
      if (absl::Status s = Delete(conn, key); !s.ok()) return s;
    }
    return keys->size();
  }

  // Saves the filter and, after it, its watermark: the log position up to which every change is
  // in the filter. Taken before the save, so a change committed meanwhile is replayed at the next
  // start. Writers must be paused for a CountingFilter (a replayed creation would count twice);
  // a BlockedFilter may keep serving writes (re-adding a key changes nothing).
  absl::Status Save(Connection& conn) {
    if (!filter_.has_value()) return absl::OkStatus();
    absl::StatusOr<int64_t> seq = conn.LastLogSeq();
    if (!seq.ok()) return seq.status();
    if (absl::Status s = filter_->Save(options_.filter_path); !s.ok()) return s;
    const std::string tmp = options_.filter_path + ".seq.tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << *seq << '\n';
      if (!out.flush()) return absl::DataLossError(absl::StrCat("cannot write ", tmp));
    }
    if (std::rename(tmp.c_str(), (options_.filter_path + ".seq").c_str()) != 0) {
      return absl::DataLossError(absl::StrCat("cannot rename ", tmp));
    }
    watermark_ = *seq;
    return absl::OkStatus();
  }

  [[nodiscard]] const GuardCounters& counters() const { return counters_; }
  [[nodiscard]] const Filter* filter() const { return filter_.has_value() ? &*filter_ : nullptr; }
  // Whether Open mapped a saved file (true) or scanned the table (false).
  [[nodiscard]] bool restored() const { return restored_; }
  // Log entries applied by Open's catch-up.
  [[nodiscard]] uint64_t replayed() const { return replayed_; }

 private:
  explicit CacheGuard(const GuardOptions& options) : options_(options), lru_(options.lru_entries) {}

  static absl::StatusOr<int64_t> ReadWatermark(const std::string& filter_path) {
    std::ifstream in(filter_path + ".seq");
    int64_t seq = -1;
    if (!(in >> seq) || seq < 0) return absl::NotFoundError("no watermark");
    return seq;
  }

  absl::Status Rebuild(Connection& conn) {
    absl::StatusOr<int64_t> seq = conn.LastLogSeq();
    if (!seq.ok()) return seq.status();
    absl::StatusOr<Filter> filter = Create();
    if (!filter.ok()) return filter.status();
    filter_.emplace(*std::move(filter));
    if (absl::Status s = conn.ScanKeys(
            [&](std::span<const std::string_view> keys) { (void)filter_->InsertMany(keys); });
        !s.ok()) {
      return s;
    }
    watermark_ = *seq;
    // Entries after the watermark may already be in the scan: replaying them costs a BlockedFilter
    // nothing, but would count a created row twice in a CountingFilter, so the rebuild ends with a
    // save under the scan's own watermark instead.
    return Save(conn);
  }

  absl::Status CatchUp(Connection& conn) {
    return conn.ScanLog(watermark_, [&](int64_t seq, std::string_view key, LogOp op) {
      if (op == LogOp::kCreated) {
        (void)filter_->Insert(key);
      } else if constexpr (kCounting) {
        (void)filter_->Erase(key);
      }
      watermark_ = seq;
      ++replayed_;
    });
  }

  absl::StatusOr<Filter> Create() const {
    if constexpr (kWindowed) {
      bloomery::WindowedOptions windowed;
      windowed.capacity = options_.capacity;
      windowed.fpr = options_.fpr;
      windowed.generations = options_.generations;
      // Kept at least W*(G-1)/G: make that the TTL.
      const int64_t g = options_.generations;
      windowed.window = std::chrono::seconds((options_.ttl_seconds * g + g - 2) / (g - 1));
      windowed.memory.concurrent = true;
      windowed.clock = options_.clock;
      return bloomery::WindowedFilter::Create(windowed);
    } else if constexpr (kCounting) {
      return bloomery::CountingFilter::Create(
          {.capacity = options_.capacity, .fpr = options_.fpr, .memory = {.concurrent = true}});
    } else {
      return bloomery::BlockedFilter::Create(
          {.capacity = options_.capacity, .fpr = options_.fpr, .memory = {.concurrent = true}});
    }
  }

  GuardOptions options_;
  std::optional<Filter> filter_;
  Lru lru_;
  GuardCounters counters_;
  int64_t watermark_ = 0;
  bool restored_ = false;
  uint64_t replayed_ = 0;
};

}  // namespace cache_guard

#endif  // BLOOMERY_EXAMPLES_CACHE_GUARD_GUARD_H_
