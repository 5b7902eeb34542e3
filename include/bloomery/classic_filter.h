// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// classic_filter.h: ClassicFilter, the textbook partitioned Bloom filter (Bloom 1970; the form of
// Almeida et al. 2007): k slices of m/k bits, probe i of a key sets one bit of slice i (double
// hashing, Kirsch & Mitzenmacher 2006). FPR (1 - (1 - k/m)^n)^k, the lowest a Bloom filter gets
// per bit. Caveat: a key costs k cache misses where BlockedFilter's costs one, so lookups out of
// cache are several times slower: use it when memory matters most or the filter fits in cache.
//
//   absl::StatusOr<bloomery::ClassicFilter> f =
//       bloomery::ClassicFilter::Create({.capacity = 1'000'000, .fpr = 0.01});
//   if (!f.ok()) return f.status();
//   bool added = f->Insert("https://example.com/a");  // true: the key was new
//
// Thread safety, keys and errors: as BlockedFilter's (blocked_filter.h). Hot-path calls are
// noexcept, allocate nothing and cannot fail.
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

  // An empty filter sized by `options` (bits rounded up to a multiple of k). InvalidArgument for
  // bad sizing (CheckSizing, plan.h) or a layout; ResourceExhausted past max_memory_bytes.
  [[nodiscard]] static absl::StatusOr<ClassicFilter> Create(const FilterOptions& options);

  // True if the key was new; false if it was reported present (a duplicate or a false positive).
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // False: the key was certainly never inserted. True: it was, or it is a false positive.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // Prefetches the k lines `hash` maps to, for a caller that pipelines its own lookups.
  void Prefetch(const KeyHash& hash) const noexcept;

  // this |= other. O(bytes). FailedPrecondition unless both have the same bits, hashes, seed and
  // integer hash (CheckCompatible says whether).
  absl::Status UnionWith(const ClassicFilter& other);
  [[nodiscard]] absl::Status CheckCompatible(const ClassicFilter& other) const;

  // The FPR now: the product of the slices' fill ratios (exact). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  [[nodiscard]] FilterHealth Health() const;  // health.h

  // As BlockedFilter::FoldedTo, halving every slice (bits 2j and 2j + 1 into bit j): the smallest
  // copy whose FPR with its keys is <= max_fpr, every key still present. An odd slice (explicit
  // bits) cannot halve. O(bytes). Errors: as BlockedFilter::FoldedTo's.
  [[nodiscard]] absl::StatusOr<ClassicFilter> FoldedTo(double max_fpr,
                                                       const MemoryOptions& memory = {}) const;

  // bits() is slice_bits() * hashes(); in bytes() (filter.h), bit b is bit b % 64 of word b / 64.
  [[nodiscard]] uint64_t slice_bits() const noexcept { return slice_bits_; }

 private:
  ClassicFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                bool concurrent) noexcept;
  friend class detail::FilterAccess;
  static constexpr Layout kLayout = Layout::kPartitioned;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;

  friend class BatchForms<ClassicFilter>;
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  // An empty filter of this one's k and hasher with slices of `slice_bits`.
  [[nodiscard]] absl::StatusOr<ClassicFilter> EmptyLike(uint64_t slice_bits, uint64_t capacity,
                                                        const MemoryOptions& memory) const;
  [[nodiscard]] uint64_t PopCountRange(uint64_t begin, uint64_t end) const noexcept;

  uint64_t slice_bits_ = 0;
  uint32_t hashes_ = 0;
};

}  // namespace bloomery

#endif  // BLOOMERY_CLASSIC_FILTER_H_
