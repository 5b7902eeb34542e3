// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// counting_filter.h: CountingFilter, a Bloom filter that can erase keys and count them, at one
// cache line per key.
//
// A counting Bloom filter (Fan, Cao, Almeida, Broder, "Summary Cache: A Scalable Wide-Area Web
// Cache Sharing Protocol", 2000) keeps a small counter where a Bloom filter keeps a bit: Insert
// increments a key's k counters, Erase decrements them, and a key may be present while all of
// them are non-zero. Unlike the flat original (k counters anywhere, k cache misses), the counters
// here are laid out like BlockedFilter's bits: the key's 64-byte line is split into 8 slices of 16
// four-bit counters (or 8 eight-bit counters), one slice per 64-bit word, and the key's k <= 8
// counters lie in k consecutive slices from a hash-chosen start (block index, start slice and the
// salted double hashing are BlockedFilter's; see lib/layouts/internal/counting_layout.h). Insert, Erase,
// Count and MayContain touch exactly one cache line. A counting filter stays on the line: it has
// no FilterOptions::layout (layout.h), since a 64-bit word or 32-byte block holds too few
// counters for k of them to give a useful FPR at its 4x memory.
//
// Sizing. A counter is "set" when non-zero, so the FPR is the blocked formula with slices of 16
// (or 8) counters instead of 64 bits; CountingFpr (plan.h) computes it exactly and the planner
// sizes for it. Four-bit counters cost 4x the bits of a bit and the slices are 4x narrower, so at
// 1% a counting filter needs about 4.4x the memory of a BlockedFilter (see PlanCountingFilter).
//
// Saturation. A counter that reaches its maximum (15, or 255) is saturated and sticky: Insert
// leaves it there and Erase never decrements it again. Its true count is then unknown, so it
// stays non-zero forever: overflow can never cause a false negative, it only keeps the counter
// set (a slightly higher FPR). saturated_counters() says how many there are. With 4-bit counters
// a counter saturates only when 15 insertions land on it: for distinct keys at the planned load
// that is negligible (at 1%, k = 6, a counter receives 0.55 keys on average and reaches 15 with
// probability ~6e-17, over the Poisson line loads; Fan et al. give < 1.4e-15 for a flat filter),
// but a key inserted 15 times saturates its own counters: choose 8-bit counters when keys repeat.
//
// Erasing. Erase a key only as many times as it was inserted. Erase refuses a key the filter
// says is absent (nothing changes). But a key that was never inserted may still look present (a
// false positive, probability ~fpr): erasing it decrements counters that belong to other keys,
// and those keys can then be reported absent: FALSE NEGATIVES FOR OTHER KEYS. The filter cannot
// tell a false positive from a real member; only the caller can.
//
// Example:
//   absl::StatusOr<bloomery::CountingFilter> f =
//       bloomery::CountingFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   f->Insert("user-42");
//   f->Insert("user-42");
//   uint32_t n = f->Count("user-42");                          // >= 2 (2 unless it collides)
//   bloomery::EraseResult r = f->Erase("user-42");            // kErased
//   bool maybe = f->MayContain("user-42");                     // true: inserted twice, erased once
//
// Thread safety. With `concurrent = false` (single writer) any number of const calls may run at
// once, but Insert*, Erase*, Clear and UnionWith must not overlap with any other call. With
// `concurrent = true`, Insert*, Erase*, MayContain*, Count and UnionWith may all run at once from
// any number of threads: each counter update is a relaxed compare-and-swap loop on its 64-bit
// word (a plain fetch_add could carry into the neighbouring counter when a racing insert
// saturates it first), and lookups are relaxed atomic loads that never block or write. Relaxed is
// enough: a counter's value is defined by its word's modification order, in which every
// increment and decrement lands exactly once, and the filter publishes no other data through
// these words. A lookup that overlaps an update of the same key may answer either way. An Erase
// checks the key's counters and then decrements them one by one, so the concurrent contract is
// the single-threaded one: every Erase of a key must follow (happen after) a completed Insert of
// it that no other Erase has consumed. Clear is not atomic with respect to concurrent updates.
//
// Keys: std::string_view (bytes), uint64_t (its 8 little-endian bytes), or a KeyHash (key.h).
// Hot-path calls are noexcept, allocate nothing and cannot fail.
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

  // Creates an empty filter sized by `options` (see PlanCountingFilter, plan.h).
  // Errors: those of PlanCountingFilter; ResourceExhausted when the memory exceeds
  // options.memory.max_memory_bytes (0: this machine's memory) or the kernel refuses it; the
  // message names the size and the limit.
  [[nodiscard]] static absl::StatusOr<CountingFilter> Create(const CountingOptions& options);

  // Increments the key's k counters (a saturated counter stays saturated). Returns true if the
  // key was new (one of its counters was 0), false if the filter already reported it present (it
  // was inserted before and not erased since, or a false positive). Under concurrency, of several
  // racing inserters of a new key at least one is told it was new.
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // Removes one occurrence of the key: kNotFound (nothing changes) if the filter says it is
  // absent, else its non-saturated counters are decremented and kErased is returned.
  // Precondition (not checkable): the key was inserted more times than it was erased. Erasing a
  // false positive can make OTHER keys disappear (false negatives); see the file comment.
  EraseResult Erase(std::string_view key) noexcept { return Erase(hasher_(key)); }
  EraseResult Erase(uint64_t key) noexcept { return Erase(hasher_(key)); }
  EraseResult Erase(const KeyHash& hash) noexcept;

  // False: the key is certainly not in the filter (never inserted, or erased as often as
  // inserted, given the Erase precondition). True: it is, or it is a false positive.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // The minimum of the key's counters. 0 means absent. A value below max_count() is an upper
  // bound on the key's multiplicity (insertions minus erasures); other keys sharing all its
  // counters can only raise it. max_count() means "saturated": the multiplicity is unknown.
  [[nodiscard]] uint32_t Count(std::string_view key) const noexcept { return Count(hasher_(key)); }
  [[nodiscard]] uint32_t Count(uint64_t key) const noexcept { return Count(hasher_(key)); }
  [[nodiscard]] uint32_t Count(const KeyHash& hash) const noexcept;

  // Batch forms (filter.h): InsertMany(keys, was_new) and MayContainMany(keys, results) from
  // BatchForms, and EraseMany(keys, erased), which returns the number of keys erased
  // (erased[i] is true for kErased), for a contiguous run of any key type.
  template <KeyRange Keys>
  size_t EraseMany(const Keys& keys, std::span<bool> erased = {}) noexcept {
    return EraseKeys(KeySpan(keys), erased);
  }

  // this += other, counter by counter, saturating at max_count() (a sum that reaches it is
  // saturated and sticky). Afterwards each key's count is the sum of its counts in both, so
  // per-worker filters merge into one. `other` may be this filter (doubles every count).
  // Thread safety: in concurrent mode it may overlap updates of this filter; `other` must not be
  // written meanwhile. O(bytes).
  // Errors: FailedPrecondition unless both have the same lines, hashes, counter width and seed.
  absl::Status UnionWith(const CountingFilter& other);

  // Persistence (filter.h, docs/FORMAT.md): Save, SaveToBytes, Load, LoadFromBytes, Map and
  // Flush, from Mappable. Load recomputes the saturated count from the counters, O(bytes).
  // Whether UnionWith would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const CountingFilter& other) const;

  // Sets every counter to 0. O(bytes).
  void Clear() noexcept;

  // Number of counters that reached max_count() (inserts and UnionWith count each once, when it
  // saturates; Clear resets). O(1).
  [[nodiscard]] uint64_t saturated_counters() const noexcept;
  // Number of non-zero counters. O(bytes).
  [[nodiscard]] uint64_t NonZeroCounters() const noexcept;
  // Insertions minus erasures (with multiplicity): the sum of all counters / k. Exact while
  // saturated_counters() == 0 and no false positive was erased; a saturated counter stops
  // counting, so beyond that it is an underestimate. O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The FPR this filter has now: the exact probability, over a random key absent from the
  // filter, that all its k counters are non-zero, computed from the actual counters (every
  // line, every start slice, each slice's fraction of non-zero counters). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h): from the counters, EstimatedFpr's reading and EstimatedCount's sum (so
  // estimated_count is insertions minus erasures, with multiplicity, and its error only the
  // sample's), fill_ratio the fraction of non-zero counters; read whole up to
  // kHealthExactBytes, above from a stratified sample of lines. Unset `inserted`.
  [[nodiscard]] FilterHealth Health() const;

  [[nodiscard]] const CountingPlan& plan() const noexcept { return plan_; }
  // Keys planned for (PlannedCapacity, plan.h) and the FPR the plan predicts at that many keys.
  [[nodiscard]] uint64_t capacity() const noexcept {
    return PlannedCapacity(plan_.capacity, plan_.counters(), plan_.hashes);
  }
  [[nodiscard]] double planned_fpr() const noexcept { return planned_fpr_; }
  [[nodiscard]] uint64_t blocks() const noexcept { return plan_.blocks; }
  [[nodiscard]] uint64_t counters() const noexcept { return plan_.counters(); }
  [[nodiscard]] uint32_t hashes() const noexcept { return plan_.hashes; }
  [[nodiscard]] uint32_t counter_bits() const noexcept { return plan_.counter_bits; }
  // The saturation value: 15 for 4-bit counters, 255 for 8-bit ones.
  [[nodiscard]] uint32_t max_count() const noexcept { return max_count_; }
  // seed(), integer_hash(), hasher(), concurrent(), memory_bytes(), huge_page_bytes(), mapped() and
  // bytes() come from WordArray (filter.h). bytes() holds the counters: blocks() lines of 8
  // little-endian 64-bit words, each word a slice of 64 / counter_bits() counters, counter c at
  // bits [c * counter_bits, (c + 1) * counter_bits).

 private:
  CountingFilter(FilterMemory memory, const CountingPlan& plan, const KeyHasher& hasher,
                 bool concurrent) noexcept;
  // Persistence's hooks (lib/format/internal/persistence.h).
  friend class detail::FilterAccess;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<CountingFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options);
  // Per line: its FPR term, its non-zero counters and its counters' sum (ScanUnits,
  // health_scan.h).
  [[nodiscard]] detail::ScanTotals Scan(bool sample) const;
  // Sets saturated_ from the counters themselves (after a load).
  void RecountSaturated() noexcept;

  friend class BatchForms<CountingFilter>;
  // The batch loops, instantiated in counting_filter.cc for every FilterKey.
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t EraseKeys(std::span<const Key> keys, std::span<bool> erased) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  // Runs `op(hash, line)` for every key, hashing, locating and prefetching a batch at a time.
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
  // Written through std::atomic_ref in concurrent mode; mutable only so that the const accessor
  // can form one (const calls never write it).
  mutable uint64_t saturated_ = 0;
};

}  // namespace bloomery

#endif  // BLOOMERY_COUNTING_FILTER_H_
