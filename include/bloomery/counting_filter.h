// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// counting_filter.h: CountingFilter, a Bloom filter that can erase and count keys (Fan, Cao,
// Almeida, Broder 2000), a 4- or 8-bit counter where a Bloom filter keeps a bit, laid out like
// BlockedFilter's line: every call touches one cache line. At 1% it needs about 4.4x the memory of
// a BlockedFilter (PlanCountingFilter). Always on the line (no `layout` option).
//
// Saturation: a counter that reaches max_count() is sticky (Insert and Erase leave it), so
// overflow never causes a false negative; a key inserted 15 times saturates its own 4-bit
// counters: choose 8-bit counters when keys repeat.
// Erasing: erase a key only as many times as it was inserted. Erase refuses a key that looks
// absent, but a false positive looks present: erasing it decrements other keys' counters and can
// make THEM look absent (false negatives). Only the caller can tell a false positive apart.
//
//   absl::StatusOr<bloomery::CountingFilter> f =
//       bloomery::CountingFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   f->Insert("user-42");
//   bloomery::EraseResult r = f->Erase("user-42");  // kErased
//
// Thread safety: with `concurrent = false`, const calls may run at once, but Insert*, Erase*,
// Clear and UnionWith overlap no other call. With `concurrent = true`, Insert*, Erase*,
// MayContain*, Count and UnionWith may run at once (lock-free); a lookup overlapping an update of
// the same key may answer either way; every Erase of a key must follow a completed Insert of it
// that no other Erase consumed; Clear is not atomic with respect to updates. Keys and errors: as
// BlockedFilter's. Hot-path calls are noexcept, allocate nothing and cannot fail.
#ifndef BLOOMERY_COUNTING_FILTER_H_
#define BLOOMERY_COUNTING_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {

enum class EraseResult : uint8_t {
  kErased = 0,    // the key looked present; its non-saturated counters were decremented
  kNotFound = 1,  // some counter was 0: the key is certainly absent; nothing changed
};

class BLOOMERY_EXPORT CountingFilter : public BatchForms<CountingFilter>,
                                       public Mappable<CountingFilter>,
                                       public WordArray {
 public:
  using Options = CountingOptions;

  // Errors: PlanCountingFilter's (plan.h); ResourceExhausted past max_memory_bytes.
  [[nodiscard]] static absl::StatusOr<CountingFilter> Create(const CountingOptions& options);

  // Increments the key's k counters. True if it was new (a counter was 0); of racing inserters of
  // a new key at least one is told so.
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // Removes one occurrence. Precondition (not checkable): the key was inserted more times than it
  // was erased; erasing a false positive can make OTHER keys disappear (see above).
  EraseResult Erase(std::string_view key) noexcept { return Erase(hasher_(key)); }
  EraseResult Erase(uint64_t key) noexcept { return Erase(hasher_(key)); }
  EraseResult Erase(const KeyHash& hash) noexcept;

  // False: certainly absent (given Erase's precondition). True: present, or a false positive.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // The minimum of the key's counters: 0 is absent; below max_count() an upper bound on its
  // insertions minus erasures; max_count(): saturated, unknown.
  [[nodiscard]] uint32_t Count(std::string_view key) const noexcept { return Count(hasher_(key)); }
  [[nodiscard]] uint32_t Count(uint64_t key) const noexcept { return Count(hasher_(key)); }
  [[nodiscard]] uint32_t Count(const KeyHash& hash) const noexcept;

  // Erase over a batch (filter.h's batch contract): the count of kErased, erased[i] for each.
  template <KeyRange Keys>
  size_t EraseMany(const Keys& keys, std::span<bool> erased = {}) noexcept {
    return EraseKeys(KeySpan(keys), erased);
  }

  // this += other, counter by counter, saturating: each key's count is the sum of both (`other`
  // may be this). Concurrent mode: may overlap updates of this filter, not writes to `other`.
  // O(bytes). FailedPrecondition unless lines, hashes, counter width and seed match.
  absl::Status UnionWith(const CountingFilter& other);
  [[nodiscard]] absl::Status CheckCompatible(const CountingFilter& other) const;

  void Clear() noexcept;  // O(bytes)

  // Counters that reached max_count() (Clear resets). O(1).
  [[nodiscard]] uint64_t saturated_counters() const noexcept;
  [[nodiscard]] uint64_t NonZeroCounters() const noexcept;  // O(bytes)
  // Insertions minus erasures: the counters' sum / k; exact while nothing saturated and no false
  // positive was erased, else an underestimate. O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The FPR now, exactly, from the counters. O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  [[nodiscard]] FilterHealth Health() const;  // health.h; fill_ratio: non-zero counters

  [[nodiscard]] const CountingPlan& plan() const noexcept { return plan_; }
  [[nodiscard]] uint64_t capacity() const noexcept {
    return PlannedCapacity(plan_.capacity, plan_.counters(), plan_.hashes);
  }
  [[nodiscard]] double planned_fpr() const noexcept { return planned_fpr_; }
  [[nodiscard]] uint64_t blocks() const noexcept { return plan_.blocks; }
  [[nodiscard]] uint64_t counters() const noexcept { return plan_.counters(); }
  [[nodiscard]] uint32_t hashes() const noexcept { return plan_.hashes; }
  [[nodiscard]] uint32_t counter_bits() const noexcept { return plan_.counter_bits; }
  [[nodiscard]] uint32_t max_count() const noexcept { return max_count_; }  // 15 or 255
  // In bytes() (filter.h) each 64-bit word is a slice of counters, counter c at bit c * width.

 private:
  CountingFilter(FilterMemory memory, const CountingPlan& plan, const KeyHasher& hasher,
                 bool concurrent) noexcept;
  friend class detail::FilterAccess;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<CountingFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options);
  [[nodiscard]] detail::ScanTotals Scan(bool sample) const;
  void RecountSaturated() noexcept;

  friend class BatchForms<CountingFilter>;
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t EraseKeys(std::span<const Key> keys, std::span<bool> erased) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  template <bool kWrite, typename Key, typename Op>
  size_t ForEachKey(std::span<const Key> keys, std::span<bool> results, Op op) const noexcept;
  bool InsertAt(const KeyHash& hash, uint64_t* line) noexcept;
  EraseResult EraseAt(const KeyHash& hash, uint64_t* line) noexcept;
  [[nodiscard]] bool TestAt(const KeyHash& hash, const uint64_t* line) const noexcept;
  void NoteSaturated(uint64_t count) noexcept;
  // plan_.hashes, which Create bounds to 1..8; the min lets the compiler see the bound too.
  [[nodiscard]] uint32_t probe_count() const noexcept {
    return plan_.hashes < kMaxCountingHashes ? plan_.hashes : kMaxCountingHashes;
  }
  [[nodiscard]] uint64_t* line(uint64_t block) const noexcept { return words_ + block * 8; }

  CountingPlan plan_;
  double planned_fpr_;          // PlannedFpr(plan_), once
  uint32_t counter_shift_ = 2;  // log2(counter_bits)
  uint32_t max_count_ = 15;
  mutable uint64_t saturated_ = 0;
};

}  // namespace bloomery

#endif  // BLOOMERY_COUNTING_FILTER_H_
