// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// classic_filter.h: ClassicFilter, the textbook partitioned Bloom filter (the lowest FPR per bit).
//
// A Bloom filter (Bloom 1970) in the partitioned form used by pybloom and analysed by Almeida et
// al. 2007 ("Scalable Bloom Filters", section 3): the m bits are split into k slices of m/k bits
// and probe i of a key sets one bit in slice i, at a position from double hashing (Kirsch &
// Mitzenmacher 2006) of the key's 128-bit KeyHash, each probe salted by its own odd multiplier so
// the probes behave independently (lib/layouts/internal/classic_layout.h). Its FPR is
// (1 - (1 - k/m)^n)^k, within a fraction of a percent of the standard (1 - e^{-kn/m})^k of Fan et
// al. 2000's table; plan.h computes both, and tests/classic_filter_test.cc reproduces that table.
//
// Against BlockedFilter: a key costs k cache misses instead of one, so lookups out of cache are
// several times slower (`bloomery plan --measure` times both on the machine at hand); in exchange
// the FPR per bit is the best a Bloom filter gets: at 10 bits/key, k = 7 predicts 0.819% where the
// blocked layout gives 0.97%. Use it when memory is what matters, when the filter fits in cache,
// or to compare with the textbook numbers.
//
// Example:
//   absl::StatusOr<bloomery::ClassicFilter> f =
//       bloomery::ClassicFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   bool added = f->Insert("https://example.com/a");      // true: the key was new
//   bool maybe = f->MayContain("https://example.com/a");  // true
//
// Thread safety: the same contract as BlockedFilter (blocked_filter.h). With `concurrent = false`
// any number of concurrent lookups, but writes (Insert*, Clear, UnionWith) must not overlap any
// other call. With `concurrent = true`, Insert*, MayContain* and UnionWith may run at once from
// any number of threads: inserts use relaxed atomic fetch_or only on the 64-bit words whose bit is
// missing, lookups use relaxed atomic loads and never block or write. When several threads insert
// the same new key at once, at least one of them is told it was new. Clear is not atomic with
// respect to concurrent inserts.
//
// Keys: std::string_view (bytes), uint64_t (its 8 little-endian bytes), or a KeyHash (key.h).
// Hot-path calls are noexcept, allocate nothing and cannot fail.
#ifndef BLOOMERY_CLASSIC_FILTER_H_
#define BLOOMERY_CLASSIC_FILTER_H_

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

class BLOOMERY_EXPORT ClassicFilter : public BatchForms<ClassicFilter>,
                                      public Mappable<ClassicFilter>,
                                      public BitArray {
 public:
  using Options = FilterOptions;

  // Creates an empty filter sized by `options` (see options.h), planned with Layout::kPartitioned:
  // by capacity and fpr, or by explicit bits (rounded up to a multiple of k) and hashes.
  // Errors: InvalidArgument for inconsistent or out-of-range options (capacity 0 without bits and
  // hashes, fpr outside (0, 1) or NaN, hashes above 16, bits above 2^48: CheckSizing, plan.h);
  // ResourceExhausted when the memory needed exceeds options.memory.max_memory_bytes (0: this
  // machine's memory) or the kernel refuses it; the message names the size and the limit.
  [[nodiscard]] static absl::StatusOr<ClassicFilter> Create(const FilterOptions& options);

  // Adds a key. Returns true if it was new (at least one of its k bits was 0), false if the filter
  // already reported it present (a duplicate, or a false positive with probability ~fpr).
  // Cost: k random memory accesses.
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // False: the key was certainly never inserted. True: it was, or it is a false positive.
  // Cost: up to k random memory accesses (stops at the first 0 bit).
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // Prefetches the k lines `hash` maps to, for a caller that pipelines its own lookups (as
  // ScalableFilter does across its stages).
  void Prefetch(const KeyHash& hash) const noexcept;

  // Batch forms (filter.h): InsertMany(keys, was_new) and MayContainMany(keys, results) for a
  // contiguous run of any key type, from BatchForms. All k lines of every key of a batch are
  // prefetched before any is probed, so the k misses per key overlap.

  // this |= other: afterwards this filter contains every key of both. O(bytes).
  // Errors: FailedPrecondition unless both have the same bits, hashes, seed and integer hash.
  absl::Status UnionWith(const ClassicFilter& other);
  // Whether UnionWith would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const ClassicFilter& other) const;

  // Persistence (filter.h, docs/FORMAT.md): Save, SaveToBytes, Load, LoadFromBytes, Map and
  // Flush, from Mappable.

  // The FPR this filter has now: the product over slices of each slice's fill ratio, which is the
  // exact probability that a random absent key finds its k bits set (one per slice). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h): the same product from each slice's fill, read whole up to
  // kHealthExactBytes, above from a stratified sample of each slice (kHealthStrata / k strata,
  // at least 16, of one kHealthRunBytes run each: ~1 MiB in all). Unset `inserted`.
  [[nodiscard]] FilterHealth Health() const;

  // Folding an over-sized filter (docs/OPERATING.md), as BlockedFilter::FoldedTo: the smallest
  // copy, by halvings of every slice, whose FPR with the keys in it now (EstimatedFpr, exact) is
  // <= max_fpr. A halving ors bits 2j and 2j + 1 of each slice into its bit j; a probe's offset,
  // fastrange(x, slice_bits), halves with an even slice exactly, so every inserted key still
  // answers true and the result has the very bits a filter of that size gets from the same keys.
  // Create plans a filter sized by capacity and fpr to halve at least log2(slice_bits) - 8 times
  // (FoldablePlan, plan.h); an odd slice (explicit bits, or planned before folding) cannot halve.
  // The result keeps k, seed and integer hash, takes `memory`, and is planned for the most keys
  // its size holds at <= max_fpr (at most this filter's capacity). No halving within max_fpr: an
  // unfolded copy. O(bytes). Errors: as BlockedFilter::FoldedTo's.
  [[nodiscard]] absl::StatusOr<ClassicFilter> FoldedTo(double max_fpr,
                                                       const MemoryOptions& memory = {}) const;

  [[nodiscard]] uint64_t slice_bits() const noexcept { return slice_bits_; }
  // plan(), bits() (slice_bits() * hashes()), hashes(), Clear, PopCount, FillRatio and
  // EstimatedCount come from BitArray; seed(), integer_hash(), hasher(), concurrent(),
  // memory_bytes(), huge_page_bytes(), mapped() and bytes() from WordArray (filter.h). In bytes(),
  // bit b is bit b % 64 of word b / 64; its size is bits() rounded up to whole 64-byte lines, and
  // the padding bits are always 0.

 private:
  ClassicFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                bool concurrent) noexcept;
  // Persistence's hooks (lib/format/internal/persistence.h): a BitArray kind's Write and Open are
  // persistence.h's, over the Plan of kLayout.
  friend class detail::FilterAccess;
  static constexpr Layout kLayout = Layout::kPartitioned;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;

  friend class BatchForms<ClassicFilter>;
  // The batch loops, instantiated in classic_filter.cc for every FilterKey.
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  // A filter of this one's k and hasher with slices of `slice_bits`, planned for `capacity` keys;
  // its bits all 0.
  [[nodiscard]] absl::StatusOr<ClassicFilter> EmptyLike(uint64_t slice_bits, uint64_t capacity,
                                                        const MemoryOptions& memory) const;
  // Set bits among bits [begin, end).
  [[nodiscard]] uint64_t PopCountRange(uint64_t begin, uint64_t end) const noexcept;

  // plan_'s, read by the hot path without reaching into the plan.
  uint64_t slice_bits_ = 0;
  uint32_t hashes_ = 0;
};

}  // namespace bloomery

#endif  // BLOOMERY_CLASSIC_FILTER_H_
