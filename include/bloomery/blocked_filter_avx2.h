// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_filter_avx2.h: avx2::Prober and avx2::VisitProber, a BlockedFilter's single-key Insert
// and MayContain for the hottest loops of files compiled for AVX2 (-mavx2, -march=x86-64-v3): the
// filter's fields read once before the loop and, with VisitProber, the block shape and integer
// hash fixed at compile time, so the loop tests neither (docs/PERFORMANCE.md). Same answers and
// bits as the filter's own calls. Caveat: an explicit opt-in; elsewhere it stops with #error.
//
//   #include "bloomery/blocked_filter_avx2.h"
//   size_t found = bloomery::avx2::VisitProber(filter, [&](const auto& probe) {
//     size_t n = 0;
//     for (uint64_t key : keys) n += probe.MayContain(key);
//     return n;
//   });
#ifndef BLOOMERY_BLOCKED_FILTER_AVX2_H_
#define BLOOMERY_BLOCKED_FILTER_AVX2_H_

#if !defined(__AVX2__)
#error \
    "bloomery/blocked_filter_avx2.h is for files compiled for AVX2 (-mavx2 or -march=x86-64-v3); elsewhere call BlockedFilter's own Insert and MayContain"
#endif

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "bloomery/blocked_filter.h"
#include "bloomery/detail/stored_layouts.h"
#include "bloomery/key.h"

namespace bloomery {

namespace avx2 {

// Prober's layout argument: a place in kBlockLayouts (layout.h), or kAnyShape: the filter's.
inline constexpr int kAnyShape = -1;

// A filter's fields, read once, for a loop of single-key calls probing inline: a local the
// compiler keeps in registers, where the filter's own Insert re-reads them (its stores may alias).
//   bloomery::avx2::Prober probe(filter);
//   for (uint64_t key : keys) added += probe.Insert(key);
// Valid until the filter is destroyed, moved from or assigned to. From a const filter it offers
// MayContain only. BlockedFilter's thread-safety contract applies. kStored and kIntegers, when set
// (VisitProber sets them), fix the stored layout and integer hash at compile time: a kStored not
// the filter's answers through the filter's kernels; kIntegers must be its integer_hash().
template <class Filter, int kStored = kAnyShape, IntegerHash kIntegers = IntegerHash::kAuto>
class Prober {
  static_assert(std::is_same_v<std::remove_const_t<Filter>, BlockedFilter>);
  static_assert(kStored == kAnyShape ||
                (kStored >= 0 && kStored < static_cast<int>(std::size(kBlockLayouts))));

 public:
  explicit Prober(Filter& filter) noexcept
      : filter_(&filter),
        words_(filter.block_at(0)),
        blocks_(filter.blocks_),
        hasher_(filter.hasher()),
        block_shift_(filter.block_shift_),
        stored_(filter.stored_),
        concurrent_(filter.concurrent()),
        test_(Fits(filter) ? filter.inline_test_ : nullptr),
        set_(Fits(filter) && filter.set_path_ != detail::kOutOfLinePath ? filter.inline_test_
                                                                        : nullptr) {}

  // filter.Insert(key): whether the key was new.
  [[gnu::always_inline]] bool Insert(const KeyHash& hash) const noexcept {
    static_assert(!std::is_const_v<Filter>, "a Prober of a const filter only looks keys up");
    if (set_ != nullptr) [[likely]] {
      uint64_t* block = Block(hash);
      return Visit([&]<uint32_t kIndex>() {
        return detail::SetInline<kIndex>(block, hash, *set_, concurrent_);
      });
    }
    return filter_->InsertOutOfLine(hash);
  }
  [[gnu::always_inline]] bool Insert(std::string_view key) const noexcept {
    return Insert(hasher_(key));
  }
  [[gnu::always_inline]] bool Insert(uint64_t key) const noexcept { return Insert(Hash(key)); }

  // filter.MayContain(key).
  [[nodiscard, gnu::always_inline]] bool MayContain(const KeyHash& hash) const noexcept {
    if (test_ != nullptr) [[likely]] {
      const uint64_t* block = Block(hash);
      return Visit(
          [&]<uint32_t kIndex>() { return detail::TestInline<kIndex>(block, hash, *test_); });
    }
    return filter_->MayContainOutOfLine(BlockedFilter::Unhoisted(hash));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(std::string_view key) const noexcept {
    return MayContain(hasher_(key));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(uint64_t key) const noexcept {
    return MayContain(Hash(key));
  }

 private:
  [[nodiscard]] static bool Fits(const Filter& filter) noexcept {
    return kStored == kAnyShape || static_cast<uint32_t>(kStored) == filter.stored_;
  }
  // fn.template operator()<kIndex>() for kStored, or the filter's stored layout at run time.
  template <class Fn>
  [[gnu::always_inline]] decltype(auto) Visit(Fn&& fn) const noexcept {
    if constexpr (kStored == kAnyShape) {
      return VisitBlockLayout(stored_, fn);
    } else {
      return fn.template operator()<static_cast<uint32_t>(kStored)>();
    }
  }
  [[nodiscard, gnu::always_inline]] uint32_t Shift() const noexcept {
    if constexpr (kStored == kAnyShape) {
      return block_shift_;
    } else {
      return BlockShift(kBlockLayouts[kStored].layout);
    }
  }
  [[nodiscard, gnu::always_inline]] KeyHash Hash(uint64_t key) const noexcept {
    if constexpr (kIntegers == IntegerHash::kAuto) {
      return hasher_(key);
    } else {
      return HashInteger<kIntegers>(key, hasher_);
    }
  }
  [[nodiscard, gnu::always_inline]] uint64_t* Block(const KeyHash& hash) const noexcept {
    return words_ + (detail::LineIndex(hash, blocks_) << Shift());
  }

  Filter* filter_;
  uint64_t* words_;
  uint64_t blocks_;
  KeyHasher hasher_;
  uint32_t block_shift_;
  uint32_t stored_;
  bool concurrent_;
  // BlockedFilter's inline_test_ where its lookups / inserts run inline, or null.
  const detail::UnusedProbes* test_;
  const detail::UnusedProbes* set_;
};
template <class Filter>
Prober(Filter&) -> Prober<Filter>;

// fn(probe) with the Prober of the filter's stored layout and integer hash: fn is instantiated
// for each (kBlockLayouts x integer hashes) and must return one type for all (example above).
template <class Filter, class Fn>
decltype(auto) VisitProber(Filter& filter, Fn&& fn) {
  const auto with_shape = [&]<IntegerHash kIntegers>() -> decltype(auto) {
    return VisitBlockLayout(filter.stored_, [&]<uint32_t kIndex>() -> decltype(auto) {
      return fn(Prober<Filter, static_cast<int>(kIndex), kIntegers>(filter));
    });
  };
  switch (filter.integer_hash()) {
    case IntegerHash::kSeededMix:
      return with_shape.template operator()<IntegerHash::kSeededMix>();
    case IntegerHash::kMix:
      return with_shape.template operator()<IntegerHash::kMix>();
    default:
      return with_shape.template operator()<IntegerHash::kXxh3>();
  }
}

}  // namespace avx2
}  // namespace bloomery

#endif  // BLOOMERY_BLOCKED_FILTER_AVX2_H_
