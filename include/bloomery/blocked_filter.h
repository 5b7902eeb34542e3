// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_filter.h: BlockedFilter, the default filter: all k bits of a key in one block.
//
// A cache-blocked Bloom filter (Putze, Sanders, Singler 2007): a key's block is chosen by its
// hash and its k probes go to k consecutive slices of the block from a hash-chosen start, so an
// insert or a lookup touches one cache line however large the filter. The price is a higher FPR
// than a classic filter at the same bits/key; the planner (plan.h) computes it exactly and sizes
// for it. Layouts (layout.h): the 64-byte line (the default), block256 and word64, fewer
// instructions per key for a higher FPR; each is saved in the file and merges only with its own.
//
// Example:
//   absl::StatusOr<bloomery::BlockedFilter> f =
//       bloomery::BlockedFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   bool added = f->Insert("https://example.com/a");      // true: the key was new
//   bool maybe = f->MayContain("https://example.com/a");  // true
//
// Thread safety: with `concurrent = false` any number of const calls may overlap, but a write
// (Insert*, Clear, UnionWith, IntersectWith) may overlap no other call. With `concurrent = true`,
// Insert*, MayContain* and UnionWith may run at once from any threads (inserts: relaxed atomic
// fetch_or; lookups only read: docs/DESIGN.md, "Concurrency contract"). A lookup overlapping the
// insert of its key may answer either way; once Insert returns, every later lookup answers true.
// Of several threads inserting one new key at least one is told "new" (exactly one with word64,
// whose key is one word). Clear and IntersectWith are not atomic.
//
// Keys: std::string_view (bytes), uint64_t, or a KeyHash (key.h). Hot-path calls are noexcept,
// allocate nothing and cannot fail.
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

  // An empty filter sized by `options` (options.h). Errors: InvalidArgument for options out of
  // range (CheckSizing, plan.h); ResourceExhausted over memory.max_memory_bytes (0: this machine's
  // memory) or when the kernel refuses the memory; the message names the size and the limit.
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Create(const FilterOptions& options);

  // Adds a key: true if it was new (one of its bits was 0), false if the filter already said it
  // was present (a duplicate, or a false positive). Where the CPU runs AVX2 and k <= 8 the probe is
  // inline (detail/stored_layouts.h), chosen by one jump on the filter's path: layout, integer
  // hash and concurrency are fixed when the filter is made, not tested per key. Elsewhere, and for
  // inserts into a concurrent line or block256 filter, the SIMD kernels. Same bits either way.
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

  // InsertMany and MayContainMany come from BatchForms (filter.h).

  // this |= other: this filter then holds every key of both. Errors: FailedPrecondition unless
  // both have the same layout, probe, bits, hashes, seed and integer hash.
  absl::Status UnionWith(const BlockedFilter& other);
  // this &= other: keeps the keys that may be in both (none of them is lost). As UnionWith.
  absl::Status IntersectWith(const BlockedFilter& other);
  // Whether UnionWith/IntersectWith would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const BlockedFilter& other) const;

  // Save, Load, Map and the rest come from Mappable (filter.h, docs/FORMAT.md).

  // The exact probability that an absent key finds all its bits set, from the bits. O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h): EstimatedFpr, fill and count over every block up to kHealthExactBytes, over
  // a stratified sample of about 1 MiB above. `inserted` is unset (nothing is counted on insert).
  // May overlap concurrent inserts. Allocates a few small vectors.
  [[nodiscard]] FilterHealth Health() const;

  // The smallest copy, by halvings (blocks 2j and 2j + 1 or-ed into j), whose exact FPR with
  // its keys is <= max_fpr (docs/OPERATING.md): every key still answers true, and the bits are
  // those of a filter of that size built from the same keys. The copy keeps layout, k and hasher,
  // takes `memory`, and is planned for the most keys it holds at <= max_fpr. No halving fits: an
  // unfolded copy. Only even block counts halve (Create plans filters sized by capacity so).
  // Errors: InvalidArgument for max_fpr outside (0, 1); FailedPrecondition when the FPR is already
  // above it or the block count is odd; ResourceExhausted over memory.max_memory_bytes.
  [[nodiscard]] absl::StatusOr<BlockedFilter> FoldedTo(double max_fpr,
                                                       const MemoryOptions& memory = {}) const;

  // Blocks of the layout's shape.
  [[nodiscard]] uint64_t blocks() const noexcept { return blocks_; }
  // Prefetches the block of `hash`, for a caller that pipelines its own lookups.
  void Prefetch(const KeyHash& hash) const noexcept { __builtin_prefetch(block(hash), 0, 3); }
  // The block shape (never kAuto).
  [[nodiscard]] Layout layout() const noexcept { return plan_.layout; }
  // The probe (layout.h): kFields for a new filter, the file's for a loaded one.
  [[nodiscard]] Probe probe() const noexcept { return plan_.probe; }
  // plan(), bits(), hashes(), Clear and the counts come from BitArray, seed(), hasher(), bytes()
  // and the rest from WordArray (filter.h).

 private:
  // Wraps memory that already holds a filter's bits (a loaded file, a stage).
  BlockedFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                bool concurrent) noexcept;
  // Persistence's hooks: the file's layout field names the blocked shape.
  friend class detail::FilterAccess;
  static constexpr Layout kLayout = Layout::kLine512;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;

  // A key's hash on call path kPath (detail::VisitCallPath), from the hasher's premixed constants.
  template <uint32_t kPath>
  [[nodiscard, gnu::always_inline]] static KeyHash HashOnPath(uint64_t key,
                                                              const MixSeed& premixed) noexcept {
    return HashInteger < detail::MixesOnPath(kPath) ? IntegerHash::kSeededMix
                                                    : IntegerHash::kXxh3 > (key, premixed);
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

  // One jump on the constructor's path, to the inline hash and probe of that layout and integer
  // hash, or to the kernels. MayContain reads every field before the jump and its fallback is
  // pure, so in a caller's loop the compiler reads them, and computes the jump's target, once.
  template <class Key>
  [[gnu::always_inline]] bool InsertKey(const Key& key) noexcept {
#if BLOOMERY_INLINE_PROBE
    return detail::VisitCallPath(
        set_path_, [&]<uint32_t kPath>() __attribute__((always_inline)) {
          if constexpr (kPath == detail::kOutOfLinePath) {
            return InsertOutOfLine(HashOf(key));
          } else {
            constexpr uint32_t kStored = detail::StoredOfPath(kPath);
            const KeyHash hash = HashOnPath<kPath>(key, hasher_.premixed());
            return detail::SetInline<kStored>(BlockOnPath<kStored>(words_, blocks_, hash), hash,
                                              *inline_test_, detail::ConcurrentOnPath(kPath));
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
    const MixSeed premixed = hasher_.premixed();
    const detail::UnusedProbes* const unused = inline_test_;
    return detail::VisitCallPath(
        test_path_, [&]<uint32_t kPath>() __attribute__((always_inline)) {
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
  template <uint32_t kStored>
  [[nodiscard, gnu::always_inline]] static uint64_t* BlockOnPath(uint64_t* words, uint64_t blocks,
                                                                 const KeyHash& hash) noexcept {
    return words + (detail::LineIndex(hash, blocks) << BlockShift(kBlockLayouts[kStored].layout));
  }

  // The single-key calls through the SIMD kernels (the hash by value: no spill for the call).
  bool InsertOutOfLine(KeyHash hash) noexcept;
  [[nodiscard, gnu::pure]] bool MayContainOutOfLine(KeyHash hash) const noexcept;
  // `hash` through an empty asm: a pure call on it is never hoisted or merged, so a caller polling
  // a concurrent filter reads the bits on every call.
  [[nodiscard, gnu::always_inline]] static KeyHash Unhoisted(KeyHash hash) noexcept {
    asm volatile("" : "+r"(hash.lo), "+r"(hash.hi));
    return hash;
  }

  [[nodiscard]] detail::ScanTotals Scan(bool sample) const;

  friend class BatchForms<BlockedFilter>;
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  template <bool kWrite, typename Key, typename Kernel>
  size_t RunKernel(std::span<const Key> keys, std::span<bool> results,
                   Kernel kernel) const noexcept;
  // An empty filter like this one with `blocks` blocks, planned for `capacity` keys.
  [[nodiscard]] absl::StatusOr<BlockedFilter> EmptyLike(uint64_t blocks, uint64_t capacity,
                                                        const MemoryOptions& memory) const;
  [[nodiscard, gnu::always_inline]] uint64_t* block_at(uint64_t index) const noexcept {
    return words_ + (index << block_shift_);
  }
  [[nodiscard, gnu::always_inline]] uint64_t* block(const KeyHash& hash) const noexcept {
    return block_at(detail::LineIndex(hash, blocks_));
  }

  uint64_t blocks_ = 0;
  uint32_t hashes_ = 0;
  uint32_t block_shift_ = 3;  // log2 of a block's words
  uint32_t stored_ = 0;       // the layout's place in kBlockLayouts: its kernels and inline probe
  // The single-key calls' paths (detail::VisitCallPath).
  uint16_t test_path_ = detail::kOutOfLinePath;
  uint16_t set_path_ = detail::kOutOfLinePath;
  template <class Filter, int kStored, IntegerHash kIntegers>
  friend class avx2::Prober;
  template <class Filter, class Fn>
  friend decltype(auto) avx2::VisitProber(Filter& filter, Fn&& fn);
  // &detail::kUnusedProbes[k] where the inline probe runs (AVX2 and k <= 8), else null; inserts
  // use it where set_path_ is inline too (single writer, or word64).
  const detail::UnusedProbes* inline_test_ = nullptr;
};

}  // namespace bloomery

#endif  // BLOOMERY_BLOCKED_FILTER_H_
