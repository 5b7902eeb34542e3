// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_filter.h: BlockedFilter, the default filter: one 64-byte cache line per key.
//
// A cache-blocked Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom
// Filters", 2007) with pybloom-style partitioning inside the line: the line is split into 8 slices
// of 64 bits (k <= 8) or 16 slices of 32 bits (k <= 16); a key's k probes go to k consecutive
// slices from a hash-chosen start, each probe's bit a field of the key's hash that no other part
// of the probe reads (Probe::kFields, layout.h; files written before it keep the salted double
// hashing they were written with, Probe::kSalted). Insert and lookup touch exactly one cache line,
// so a lookup costs about one memory access even for filters of many GiB; the price is a higher
// FPR than a classic filter at the same bits/key (plan.h computes it exactly and the planner sizes
// for it).
//
// At 10 bits/key the planner picks k = 6 and predicts 0.97%; a classic partitioned filter would
// give 0.82% but needs 6 cache misses per key.
//
// Layouts (FilterOptions::layout, layout.h): the line above is the default; Layout::kBlock256
// keeps a key in a 32-byte block of 8 x 32-bit slices (k <= 8; 1.11% at 10 bits/key, k = 6) and
// Layout::kWord64 in one 64-bit word of 8 x 8-bit slices (k <= 8; 1.90% at 10 bits/key, k = 5),
// fewer instructions per key for a higher FPR; Layout::kAuto lets the planner choose. Every
// layout is planned exactly, saved in the file, and merges only with its own.
//
// Example:
//   absl::StatusOr<bloomery::BlockedFilter> f =
//       bloomery::BlockedFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   bool added = f->Insert("https://example.com/a");  // true: the key was new
//   bool maybe = f->MayContain("https://example.com/a");  // true
//
// Thread safety. A filter created with `concurrent = false` (single writer) allows any number of
// concurrent const calls (lookups) but writes (Insert*, Clear, UnionWith, IntersectWith) must not
// overlap with any other call. With `concurrent = true`, Insert*, MayContain* and UnionWith may all
// run at once from any number of threads: inserts use relaxed atomic fetch_or on the 64-bit words
// whose bits are missing, lookups only read (relaxed atomic loads, or on x86 vector loads of the
// line: docs/DESIGN.md, "Concurrency contract") and never block or write. A lookup that
// overlaps an insert of the same key may answer either way; once Insert returns, every later
// lookup (in any thread that synchronises with it, or simply after it in time) answers true.
// When several threads insert the same new key at once, at least one of them is told it was new
// (each missing bit is set by exactly one fetch_or, and that thread reports "new"); more than one
// may be told so, except with Layout::kWord64, whose key is one word set by one fetch_or:
// exactly one is told so. Clear and IntersectWith are not atomic with respect to concurrent
// inserts.
//
// Keys: std::string_view (bytes), uint64_t (its 8 little-endian bytes), or a KeyHash (key.h).
// Hot-path calls are noexcept, allocate nothing and cannot fail.
#ifndef BLOOMERY_BLOCKED_FILTER_H_
#define BLOOMERY_BLOCKED_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/detail/stored_layouts.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {
namespace avx2 {
template <class Filter, int kStored, IntegerHash kIntegers>
class Prober;  // bloomery/blocked_filter_avx2.h
template <class Filter, class Fn>
decltype(auto) VisitProber(Filter& filter, Fn&& fn);
}  // namespace avx2

class BLOOMERY_EXPORT BlockedFilter : public BatchForms<BlockedFilter>,
                                      public Mappable<BlockedFilter>,
                                      public BitArray {
 public:
  using Options = FilterOptions;

  // Creates an empty filter sized by `options` (see options.h).
  // Errors: InvalidArgument for inconsistent or out-of-range options (capacity 0 without bits and
  // hashes, fpr outside (0, 1) or NaN, hashes above 16, bits above 2^48: CheckSizing, plan.h);
  // ResourceExhausted when the memory needed exceeds options.memory.max_memory_bytes (0: this
  // machine's memory) or the kernel refuses it; the message names the size and the limit.
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Create(const FilterOptions& options);

  // Adds a key. Returns true if it was new (at least one of its bits was 0), false if the filter
  // already reported it present (a duplicate, or a false positive with probability ~fpr).
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  // Single keys probe inline, in AVX2 whatever this file's flags, where the CPU runs it and k <= 8
  // (bloomery/detail/stored_layouts.h): inlined into the caller's loop where the file is built for
  // AVX2, one direct call elsewhere. Other filters, and inserts into a concurrent line or block256
  // filter, take the SIMD kernels chosen at run time (block_kernels.h). Same answers and bits
  // either way.
  using BatchForms::Insert;
  [[gnu::always_inline]] bool Insert(uint64_t key) noexcept { return InsertKey(key); }
  [[gnu::always_inline]] bool Insert(const KeyHash& hash) noexcept { return InsertKey(hash); }

  // False: the key was certainly never inserted. True: it was, or it is a false positive.
  using BatchForms::MayContain;
  [[nodiscard, gnu::always_inline]] bool MayContain(uint64_t key) const noexcept {
    return MayContainKey(key);
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(const KeyHash& hash) const noexcept {
    return MayContainKey(hash);
  }

  // Batch forms (filter.h): InsertMany(keys, was_new) and MayContainMany(keys, results) for a
  // contiguous run of any key type, from BatchForms.

  // this |= other: afterwards this filter contains every key of both. Merging per-worker filters
  // is how a distributed de-duplication combines its state.
  // Errors: FailedPrecondition unless both have the same layout, bits, hashes, seed and integer
  // hash.
  absl::Status UnionWith(const BlockedFilter& other);
  // this &= other: keeps keys that may be in both (the FPR of the result is at most that of
  // either; a key in both is never lost). Same compatibility rule as UnionWith.
  absl::Status IntersectWith(const BlockedFilter& other);
  // Whether UnionWith/IntersectWith would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const BlockedFilter& other) const;

  // Persistence (filter.h, docs/FORMAT.md): Save, SaveToBytes, Load, LoadFromBytes, Map and
  // Flush, from Mappable.

  // The FPR this filter has now: the exact probability, over a random key absent from the
  // filter, that all its k bits are set, computed from the actual bits (every block, every start
  // slice, each slice's fill). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h): EstimatedFpr's reading of every block, with each block's set bits for the
  // fill and the count, over the whole filter up to kHealthExactBytes and over a stratified
  // sample of ~1 MiB above (~1-2 ms for 1 GiB: docs/PERFORMANCE.md, "Health"). Unset `inserted`:
  // a blocked filter counts nothing on insert. May overlap inserts in concurrent mode (a reading
  // of some state between them). Allocates a few small vectors.
  [[nodiscard]] FilterHealth Health() const;

  // Folding an over-sized filter (docs/OPERATING.md): the smallest copy, by halvings, whose FPR
  // with the keys in it now, computed exactly from its bits (EstimatedFpr), is <= max_fpr. A
  // halving ors blocks 2j and 2j + 1 into block j; a key's block, fastrange(hash.hi, blocks),
  // halves with the block count exactly, so every inserted key still answers true, and the result
  // has the very bits of a filter of that size built from the same keys. Create plans a filter
  // sized by capacity and fpr to halve at least log2(blocks) - 8 times (FoldablePlan, plan.h); one
  // with an odd block count (planned before folding, or sized by explicit bits) cannot halve. The
  // result keeps the layout, k, seed and integer hash, takes `memory` (the concurrency mode and
  // cap included), and is planned for the most keys its geometry holds at <= max_fpr (at most
  // this filter's capacity), so that planned_fpr() <= max_fpr and Health() watches that promise.
  // No halving within max_fpr: an unfolded copy. O(bytes); may overlap inserts in concurrent mode
  // (folds some state between them).
  // Errors: InvalidArgument for max_fpr outside (0, 1) or NaN; FailedPrecondition when the FPR
  // is already above max_fpr, or the block count is odd (the message says which and what to do);
  // ResourceExhausted when the result is over memory.max_memory_bytes, the cap being the
  // result's alone (the halvings on the way to it, each larger, are held to the machine's memory),
  // or an allocation fails.
  [[nodiscard]] absl::StatusOr<BlockedFilter> FoldedTo(double max_fpr,
                                                       const MemoryOptions& memory = {}) const;

  // Blocks of the layout's shape (512-bit lines, 256-bit blocks or 64-bit words).
  [[nodiscard]] uint64_t blocks() const noexcept { return blocks_; }
  // Prefetches the block `hash` maps to, for a caller that pipelines its own lookups (as
  // ScalableFilter does over its stages). Answers nothing, changes nothing.
  void Prefetch(const KeyHash& hash) const noexcept { __builtin_prefetch(block(hash), 0, 3); }
  // The block shape (never kAuto: the planner's choice once created).
  [[nodiscard]] Layout layout() const noexcept { return plan_.layout; }
  // The probe (layout.h): kFields for a new filter, the file's for a loaded one.
  [[nodiscard]] Probe probe() const noexcept { return plan_.probe; }
  // plan(), bits(), hashes(), Clear, PopCount, FillRatio and EstimatedCount come from BitArray;
  // seed(), integer_hash(), hasher(), concurrent(), memory_bytes(), huge_page_bytes(), mapped() and
  // bytes() (the bits, bytes().size() == bits() / 8) from WordArray (filter.h).

 private:
  // Wraps memory that already holds a filter's bits (a loaded file, a ScalableFilter stage); the
  // library reaches it through detail::FilterAccess.
  BlockedFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                bool concurrent) noexcept;
  // Persistence's hooks (lib/format/internal/persistence.h): a BitArray kind's Write and Open are
  // persistence.h's, over the Plan of kLayout (here: of the blocked shape the file's layout field
  // names, PlanFromHeader).
  friend class detail::FilterAccess;
  static constexpr Layout kLayout = Layout::kLine512;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;

  // A key's hash on call path kPath (detail::VisitCallPath): an integer by the path's hash, with
  // the hasher's per-filter constants; a KeyHash as it is; bytes by XXH3.
  template <uint32_t kPath>
  [[nodiscard, gnu::always_inline]] static KeyHash HashOnPath(uint64_t key,
                                                              const MixSeed& premixed) noexcept {
    if constexpr (detail::MixesOnPath(kPath)) {
      return SeededMixKey(key, premixed);
    } else {
      return detail::Xxh3Integer(key, premixed.offset, premixed.multiplier);
    }
  }
  template <uint32_t kPath>
  [[nodiscard, gnu::always_inline]] static const KeyHash& HashOnPath(const KeyHash& hash,
                                                                     const MixSeed&) noexcept {
    return hash;
  }

  // A key's hash by the filter's hasher; a KeyHash as it is.
  [[nodiscard, gnu::always_inline]] KeyHash HashOf(uint64_t key) const noexcept {
    return hasher_(key);
  }
  [[nodiscard, gnu::always_inline]] static const KeyHash& HashOf(const KeyHash& hash) noexcept {
    return hash;
  }

  // The single-key calls: one switch on the path the constructor chose (test_path_, set_path_),
  // whose case hashes and probes inline for that stored layout and integer hash, or calls the
  // kernels. Every field MayContain reads is read before the switch, and the fallback is declared
  // pure (it changes no memory): in a loop of these calls nothing may change them, so the compiler
  // reads them once, before the loop.
  template <class Key>
  [[gnu::always_inline]] bool InsertKey(const Key& key) noexcept {
#if BLOOMERY_INLINE_PROBE
    return detail::VisitCallPath(
        set_path_, [&]<uint32_t kPath>() __attribute__((always_inline))->bool {
          if constexpr (kPath == detail::kOutOfLinePath) {
            return InsertOutOfLine(HashOf(key));
          } else {
            constexpr uint32_t kStored = detail::StoredOfPath(kPath);
            const KeyHash hash = HashOnPath<kPath>(key, hasher_.premixed);
            return detail::SetInline<kStored>(BlockOnPath<kStored>(words_, blocks_, hash), hash,
                                              *inline_set_, detail::ConcurrentOnPath(kPath));
          }
        });
#else
    return InsertOutOfLine(HashOf(key));
#endif
  }
  template <class Key>
  [[nodiscard, gnu::always_inline]] bool MayContainKey(const Key& key) const noexcept {
#if BLOOMERY_INLINE_PROBE
    uint64_t* const words = words_;
    const uint64_t blocks = blocks_;
    const MixSeed premixed = hasher_.premixed;
    const detail::UnusedProbes* const unused = inline_test_;
    return detail::VisitCallPath(
        test_path_, [&]<uint32_t kPath>() __attribute__((always_inline))->bool {
          if constexpr (kPath == detail::kOutOfLinePath) {
            return MayContainOutOfLine(Unhoisted(HashOf(key)));
          } else {
            constexpr uint32_t kStored = detail::StoredOfPath(kPath);
            const KeyHash hash = HashOnPath<kPath>(key, premixed);
            return detail::TestInline<kStored>(BlockOnPath<kStored>(words, blocks, hash), hash,
                                               *unused);
          }
        });
#else
    return MayContainOutOfLine(Unhoisted(HashOf(key)));
#endif
  }
  // The block of a key in a filter of stored layout kStored.
  template <uint32_t kStored>
  [[nodiscard, gnu::always_inline]] static uint64_t* BlockOnPath(uint64_t* words, uint64_t blocks,
                                                                 const KeyHash& hash) noexcept {
    return words + (detail::LineIndex(hash, blocks) << BlockShift(kBlockLayouts[kStored].layout));
  }

  // The single-key calls through the SIMD kernels, dispatched at run time.
  // (By value: the callers then need not spill the hash for the call.)
  bool InsertOutOfLine(KeyHash hash) noexcept;
  // Pure: it reads the bits and changes nothing, so a loop calling it keeps the filter's fields in
  // registers (MayContain). Its argument comes through Unhoisted.
  [[nodiscard, gnu::pure]] bool MayContainOutOfLine(KeyHash hash) const noexcept;
  // `hash`, through an empty asm the compiler cannot see into: a pure call on it is never taken
  // out of a loop or merged with another call on the same key, so a caller polling a concurrent
  // filter for a key another thread inserts reads the bits on every call. (Changes no memory: the
  // fields stay in registers.)
  [[nodiscard, gnu::always_inline]] static KeyHash Unhoisted(KeyHash hash) noexcept {
    asm volatile("" : "+r"(hash.lo), "+r"(hash.hi));
    return hash;
  }

  // Per block: its FPR term (BlockFpr) and its set bits, totalled (ScanUnits, health_scan.h).
  [[nodiscard]] detail::ScanTotals Scan(bool sample) const;

  friend class BatchForms<BlockedFilter>;
  // The batch loops, instantiated in blocked_filter.cc for every FilterKey.
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  // Their one loop: `kernel` (set_blocks or test_blocks) on every batch of blocks, in order.
  template <bool kWrite, typename Key, typename Kernel>
  size_t RunKernel(std::span<const Key> keys, std::span<bool> results,
                   Kernel kernel) const noexcept;
  // A filter of this one's layout, k and hasher with `blocks` blocks, planned for `capacity`
  // keys; its bits all 0.
  [[nodiscard]] absl::StatusOr<BlockedFilter> EmptyLike(uint64_t blocks, uint64_t capacity,
                                                        const MemoryOptions& memory) const;
  // Block `index` of the layout's shape.
  [[nodiscard, gnu::always_inline]] uint64_t* block_at(uint64_t index) const noexcept {
    return words_ + (index << block_shift_);
  }
  // The block of a key, of the layout's shape (detail::LineIndex is the layouts' one index).
  [[nodiscard, gnu::always_inline]] uint64_t* block(const KeyHash& hash) const noexcept {
    return block_at(detail::LineIndex(hash, blocks_));
  }

  // plan_'s, read by the hot path without reaching into the plan.
  uint64_t blocks_ = 0;
  uint32_t hashes_ = 0;
  // log2 of the words of a block: 3 (line), 2 (block256), 0 (word64).
  uint32_t block_shift_ = 3;
  // The place of the layout and probe in kBlockLayouts (layout.h): which kernels and which inline
  // probe serve it.
  uint32_t stored_ = 0;
  // The single-key calls' paths (detail::VisitCallPath): the stored layout and integer hash of the
  // inline probe, or detail::kOutOfLinePath where inline_test_ / inline_set_ is null.
  uint16_t test_path_ = detail::kOutOfLinePath;
  uint16_t set_path_ = detail::kOutOfLinePath;
  // avx2::Prober (bloomery/blocked_filter_avx2.h) reads block_at(), blocks_, block_shift_ and
  // these two.
  template <class Filter, int kStored, IntegerHash kIntegers>
  friend class avx2::Prober;
  template <class Filter, class Fn>
  friend decltype(auto) avx2::VisitProber(Filter& filter, Fn&& fn);
  // &detail::kUnusedProbes[hashes_] where the inline probe may run, else null: one test per
  // call picks the path. Both: the SIMD target chosen when the filter was made runs AVX2 (avx2 or
  // avx3). Lookups: k <= 8. Inserts: k <= 8 and single writer (Set64 stores), or word64 in either
  // mode.
  const detail::UnusedProbes* inline_test_ = nullptr;
  const detail::UnusedProbes* inline_set_ = nullptr;
};

}  // namespace bloomery

#endif  // BLOOMERY_BLOCKED_FILTER_H_
