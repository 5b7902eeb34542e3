// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_kernels-inl.h (internal): the per-target code behind block_kernels.h. Included once per
// Highway target by block_kernels.cc (foreach_target.h); include nothing else from here.
//
// Layout (internal/block_layout.h): k <= 8 uses 8 slices of 64 bits, lane j of a u64 vector is
// slice j; k >= 9 uses 16 slices of 32 bits, lane j of a u32 vector is slice j (the line's
// little-endian u32 view). A lane computes the probe that lands in its slice, i = (j - start) mod
// slices, from per-start tables of i and of salt_i, so there is no shuffle and no branch on start
// or k: lanes with i >= k shift a 0 instead of a 1.

// Target-independent tables: a normal include guard.
#ifndef BLOOMERY_LIB_SIMD_BLOCK_KERNELS_TABLES_
#define BLOOMERY_LIB_SIMD_BLOCK_KERNELS_TABLES_

#include <cstddef>
#include <cstdint>

#include "bloomery/key.h"
#include "internal/block_layout.h"
#include "internal/line_ops.h"

namespace bloomery::simd::detail {

// For each start slice s: probe[s][j] is the probe that lands in slice j, salt[s][j] its salt.
// Rows are 32 (8 slices) or 64 (16 slices) bytes, so every vector load from them is aligned.
template <uint32_t kSlices>
struct SliceTables {
  alignas(64) uint32_t probe[kSlices][kSlices];
  alignas(64) uint32_t salt[kSlices][kSlices];
};

template <uint32_t kSlices>
constexpr SliceTables<kSlices> MakeSliceTables() {
  SliceTables<kSlices> tables{};
  for (uint32_t start = 0; start < kSlices; ++start) {
    for (uint32_t j = 0; j < kSlices; ++j) {
      const uint32_t i = (j - start) & (kSlices - 1);
      tables.probe[start][j] = i;
      tables.salt[start][j] = internal::kProbeSalt[i];
    }
  }
  return tables;
}

inline constexpr SliceTables<8> kSliceTables8 = MakeSliceTables<8>();
inline constexpr SliceTables<16> kSliceTables16 = MakeSliceTables<16>();

}  // namespace bloomery::simd::detail

#endif  // BLOOMERY_LIB_SIMD_BLOCK_KERNELS_TABLES_

// Per-target code: the toggling include guard of Highway's skeleton.
#if defined(BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_
#undef BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_
#else
#define BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace bloomery::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using internal::LineMask;

// The 64-bit words of slices j .. j + Lanes(d64) - 1 (k <= 8). h1, h2 and k are broadcast u32.
// `probe` and `salt` point at lane j of the key's start row.
template <class D64, class V32 = hn::Vec<hn::Rebind<uint32_t, D64>>>
HWY_INLINE hn::Vec<D64> SliceWords64(D64 d64, V32 h1, V32 h2, V32 k, const uint32_t* probe,
                                     const uint32_t* salt) {
  const hn::Rebind<uint32_t, D64> d32;
  const V32 i = hn::Load(d32, probe);
  // Arithmetic mod 2^32, as in ProbeBit: the top 6 bits of the salted progression.
  const V32 bit = hn::ShiftRight<26>((h1 + i * h2) * hn::Load(d32, salt));
  // i < k exactly when i - k wraps around (i <= 15, k <= 16): its top bit is the probe's 1 or 0.
  const V32 one = hn::ShiftRight<31>(i - k);
  return hn::PromoteTo(d64, one) << hn::PromoteTo(d64, bit);
}

// The 32-bit words of slices j .. j + Lanes(d32) - 1 (k >= 9).
template <class D32, class V32 = hn::Vec<D32>>
HWY_INLINE V32 SliceWords32(D32 d32, V32 h1, V32 h2, V32 k, const uint32_t* probe,
                            const uint32_t* salt) {
  const V32 i = hn::Load(d32, probe);
  const V32 bit = hn::ShiftRight<27>((h1 + i * h2) * hn::Load(d32, salt));
  const V32 one = hn::ShiftRight<31>(i - k);
  return one << bit;
}

// Calls visit(d, lane, mask_vector) for each vector of the key's line mask, where d is the tag
// (u64 lanes for k <= 8, u32 lanes for k >= 9) and `lane` the vector's first lane in that view of
// the line. Everything inlines: the visitor's loads and stores meet the mask in registers.
template <class Visit>
HWY_INLINE void ForEachMaskVector(const KeyHash& hash, uint32_t k, const Visit& visit) {
  const auto h1 = static_cast<uint32_t>(hash.lo);
  const auto h2 = static_cast<uint32_t>(hash.lo >> 32);
  if (k <= 8) {
    const hn::ScalableTag<uint64_t> d64;
    const hn::Rebind<uint32_t, decltype(d64)> d32;
    const auto start = static_cast<uint32_t>(hash.hi & 7);
    const uint32_t* probe = detail::kSliceTables8.probe[start];
    const uint32_t* salt = detail::kSliceTables8.salt[start];
    const auto vh1 = hn::Set(d32, h1);
    const auto vh2 = hn::Set(d32, h2);
    const auto vk = hn::Set(d32, k);
    for (size_t j = 0; j < 8; j += hn::Lanes(d64)) {
      visit(d64, j, SliceWords64(d64, vh1, vh2, vk, probe + j, salt + j));
    }
  } else {
    const hn::ScalableTag<uint32_t> d32;
    const auto start = static_cast<uint32_t>(hash.hi & 15);
    const uint32_t* probe = detail::kSliceTables16.probe[start];
    const uint32_t* salt = detail::kSliceTables16.salt[start];
    const auto vh1 = hn::Set(d32, h1);
    const auto vh2 = hn::Set(d32, h2);
    const auto vk = hn::Set(d32, k);
    for (size_t j = 0; j < 16; j += hn::Lanes(d32)) {
      visit(d32, j, SliceWords32(d32, vh1, vh2, vk, probe + j, salt + j));
    }
  }
}

HWY_INLINE void MakeMask(const KeyHash& hash, uint32_t k, LineMask& mask) {
  ForEachMaskVector(hash, k, [&mask](auto d, size_t lane, auto words) {
    using T = hn::TFromD<decltype(d)>;
    hn::Store(words, d, reinterpret_cast<T*>(mask.word) + lane);
  });
}

// Single-writer mode: vector loads (and stores) of the line.
HWY_INLINE bool TestLineVector(const uint64_t* line, const KeyHash& hash, uint32_t k) {
  // An OR of per-vector "missing bits" flags; one horizontal test per vector is cheap next to the
  // line's load, and keeps the accumulator independent of the lane type.
  bool missing = false;
  ForEachMaskVector(hash, k, [&](auto d, size_t lane, auto words) {
    using T = hn::TFromD<decltype(d)>;
    const auto bits = hn::Load(d, reinterpret_cast<const T*>(line) + lane);
    missing |= !hn::AllTrue(d, hn::Eq(hn::AndNot(bits, words), hn::Zero(d)));
  });
  return !missing;
}

HWY_INLINE bool SetLineVector(uint64_t* line, const KeyHash& hash, uint32_t k) {
  bool missing = false;
  ForEachMaskVector(hash, k, [&](auto d, size_t lane, auto words) {
    using T = hn::TFromD<decltype(d)>;
    T* at = reinterpret_cast<T*>(line) + lane;
    const auto bits = hn::Load(d, at);
    missing |= !hn::AllTrue(d, hn::Eq(hn::AndNot(bits, words), hn::Zero(d)));
    hn::Store(hn::Or(bits, words), d, at);
  });
  return missing;
}

template <bool kConcurrent>
HWY_INLINE bool TestOne(const uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    // Relaxed atomic loads only (no vector loads): see internal/line_ops.h.
    LineMask mask;
    MakeMask(hash, k, mask);
    return internal::TestLineScalar(line, mask, /*concurrent=*/true);
  } else {
    return TestLineVector(line, hash, k);
  }
}

template <bool kConcurrent>
HWY_INLINE bool SetOne(uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    // fetch_or only on the words whose bits are missing: see internal/line_ops.h.
    LineMask mask;
    MakeMask(hash, k, mask);
    return internal::SetLineScalar(line, mask, /*concurrent=*/true);
  } else {
    return SetLineVector(line, hash, k);
  }
}

void MakeMasks(const KeyHash* hashes, size_t n, uint32_t k, LineMask* masks) noexcept {
  for (size_t i = 0; i < n; ++i) MakeMask(hashes[i], k, masks[i]);
}

bool TestLine(const uint64_t* line, const KeyHash& hash, uint32_t k, bool concurrent) noexcept {
  return concurrent ? TestOne<true>(line, hash, k) : TestOne<false>(line, hash, k);
}

bool SetLine(uint64_t* line, const KeyHash& hash, uint32_t k, bool concurrent) noexcept {
  return concurrent ? SetOne<true>(line, hash, k) : SetOne<false>(line, hash, k);
}

template <bool kConcurrent>
HWY_INLINE size_t TestLinesImpl(const uint64_t* words, const uint64_t* blocks,
                                const KeyHash* hashes, size_t n, uint32_t k, bool* results) {
  size_t found = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool hit =
        TestOne<kConcurrent>(words + blocks[i] * internal::kWordsPerBlock, hashes[i], k);
    found += hit;
    if (results != nullptr) results[i] = hit;
  }
  return found;
}

template <bool kConcurrent>
HWY_INLINE size_t SetLinesImpl(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes,
                               size_t n, uint32_t k, bool* was_new) {
  size_t added = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool fresh =
        SetOne<kConcurrent>(words + blocks[i] * internal::kWordsPerBlock, hashes[i], k);
    added += fresh;
    if (was_new != nullptr) was_new[i] = fresh;
  }
  return added;
}

size_t TestLines(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                 uint32_t k, bool concurrent, bool* results) noexcept {
  return concurrent ? TestLinesImpl<true>(words, blocks, hashes, n, k, results)
                    : TestLinesImpl<false>(words, blocks, hashes, n, k, results);
}

size_t SetLines(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                uint32_t k, bool concurrent, bool* was_new) noexcept {
  return concurrent ? SetLinesImpl<true>(words, blocks, hashes, n, k, was_new)
                    : SetLinesImpl<false>(words, blocks, hashes, n, k, was_new);
}

}  // namespace bloomery::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_
