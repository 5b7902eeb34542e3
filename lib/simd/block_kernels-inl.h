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

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

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

// Internal linkage: addressed directly (RIP-relative) rather than through the GOT of a shared
// library.
static constexpr SliceTables<8> kSliceTables8 = MakeSliceTables<8>();
static constexpr SliceTables<16> kSliceTables16 = MakeSliceTables<16>();

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

// Bits of probes probe[0 .. Lanes(d32)) (k <= 8: 6 bits; k >= 9: 5 bits), and a 1 in lanes whose
// probe is used (i < k) or a 0 in the others. h1, h2 and k are broadcast; `probe` and `salt` point
// into the key's start row.
template <int kBitsShift, class D32, class V32 = hn::Vec<D32>>
HWY_INLINE void ProbeBits(D32 d32, V32 h1, V32 h2, V32 k, const uint32_t* probe,
                          const uint32_t* salt, V32& bit, V32& one) {
  const V32 i = hn::Load(d32, probe);
  // Arithmetic mod 2^32, as in ProbeBit: the top bits of the salted progression.
  bit = hn::ShiftRight<kBitsShift>((h1 + i * h2) * hn::Load(d32, salt));
  // i < k exactly when i - k wraps around (i <= 15, k <= 16): its top bit is the probe's 1 or 0.
  one = hn::ShiftRight<31>(i - k);
}

// k <= 8: calls visit(lane, words) for each u64 vector of the key's line mask; `lane` is the
// vector's first word in the line. The eight 32-bit products are computed in as few vectors as
// the target allows (one on AVX2 and AVX-512) and widened to 64-bit lanes for the shifts.
// (D64 and D32 are template parameters only so that `if constexpr` discards the branch that does
// not apply to this target.)
template <class Visit, class D64 = hn::ScalableTag<uint64_t>,
          class D32 = hn::CappedTag<uint32_t, 8>>
HWY_INLINE void ForEachMaskVector64(const KeyHash& hash, uint32_t k, const Visit& visit) {
  const D64 d64;
  const D32 d32;
  const auto start = static_cast<uint32_t>(hash.hi & 7);
  const uint32_t* probe = detail::kSliceTables8.probe[start];
  const uint32_t* salt = detail::kSliceTables8.salt[start];
  const auto h1 = hn::Set(d32, static_cast<uint32_t>(hash.lo));
  const auto h2 = hn::Set(d32, static_cast<uint32_t>(hash.lo >> 32));
  const auto vk = hn::Set(d32, k);
  for (size_t j = 0; j < 8; j += hn::Lanes(d32)) {
    hn::Vec<D32> bit, one;
    ProbeBits<26>(d32, h1, h2, vk, probe + j, salt + j, bit, one);
    if constexpr (std::is_same_v<D32, hn::Rebind<uint32_t, D64>>) {
      // As many u32 as u64 lanes (AVX-512, scalar).
      visit(j, hn::PromoteTo(d64, one) << hn::PromoteTo(d64, bit));
    } else {
      // Twice as many (AVX2, SSE4): widen each half. (UpperHalf unqualified: the scalar target
      // has none, and this branch is discarded there.)
      const hn::Half<D32> dh;
      visit(j, hn::PromoteTo(d64, hn::LowerHalf(dh, one))
                   << hn::PromoteTo(d64, hn::LowerHalf(dh, bit)));
      visit(j + hn::Lanes(d64), hn::PromoteTo(d64, UpperHalf(dh, one))
                                    << hn::PromoteTo(d64, UpperHalf(dh, bit)));
    }
  }
}

// k >= 9: the same for u32 vectors over the line's 16 32-bit slices.
template <class Visit>
HWY_INLINE void ForEachMaskVector32(const KeyHash& hash, uint32_t k, const Visit& visit) {
  const hn::ScalableTag<uint32_t> d32;
  const auto start = static_cast<uint32_t>(hash.hi & 15);
  const uint32_t* probe = detail::kSliceTables16.probe[start];
  const uint32_t* salt = detail::kSliceTables16.salt[start];
  const auto h1 = hn::Set(d32, static_cast<uint32_t>(hash.lo));
  const auto h2 = hn::Set(d32, static_cast<uint32_t>(hash.lo >> 32));
  const auto vk = hn::Set(d32, k);
  for (size_t j = 0; j < 16; j += hn::Lanes(d32)) {
    hn::Vec<decltype(d32)> bit, one;
    ProbeBits<27>(d32, h1, h2, vk, probe + j, salt + j, bit, one);
    visit(j, one << bit);
  }
}

HWY_INLINE void MakeMask(const KeyHash& hash, uint32_t k, LineMask& mask) {
  if (k <= 8) {
    const hn::ScalableTag<uint64_t> d;
    ForEachMaskVector64(hash, k,
                        [&](size_t lane, auto words) { hn::Store(words, d, mask.word + lane); });
  } else {
    const hn::ScalableTag<uint32_t> d;
    ForEachMaskVector32(hash, k, [&](size_t lane, auto words) {
      hn::Store(words, d, reinterpret_cast<uint32_t*>(mask.word) + lane);
    });
  }
}

// Single-writer mode: vector loads (and stores) of the line. `missing` collects the mask bits the
// line lacks; one horizontal test at the end.
template <class D, class ForEach>
HWY_INLINE bool TestLineVector(D d, const uint64_t* line, const KeyHash& hash, uint32_t k,
                               const ForEach& for_each) {
  using T = hn::TFromD<D>;
  const T* bits = reinterpret_cast<const T*>(line);
  auto missing = hn::Zero(d);
  for_each(hash, k, [&](size_t lane, auto words) {
    missing = hn::Or(missing, hn::AndNot(hn::Load(d, bits + lane), words));
  });
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

template <class D, class ForEach>
HWY_INLINE bool SetLineVector(D d, uint64_t* line, const KeyHash& hash, uint32_t k,
                              const ForEach& for_each) {
  using T = hn::TFromD<D>;
  T* bits = reinterpret_cast<T*>(line);
  auto missing = hn::Zero(d);
  for_each(hash, k, [&](size_t lane, auto words) {
    const auto old = hn::Load(d, bits + lane);
    missing = hn::Or(missing, hn::AndNot(old, words));
    hn::Store(hn::Or(old, words), d, bits + lane);
  });
  return !hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

// kSlices64: k <= 8 (64-bit slices), known outside the batch loops so the choice is made once.
template <bool kSlices64>
HWY_INLINE bool TestLineVector(const uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kSlices64) {
    return TestLineVector(hn::ScalableTag<uint64_t>(), line, hash, k,
                          [](const KeyHash& h, uint32_t kk, const auto& visit) {
                            ForEachMaskVector64(h, kk, visit);
                          });
  } else {
    return TestLineVector(hn::ScalableTag<uint32_t>(), line, hash, k,
                          [](const KeyHash& h, uint32_t kk, const auto& visit) {
                            ForEachMaskVector32(h, kk, visit);
                          });
  }
}

template <bool kSlices64>
HWY_INLINE bool SetLineVector(uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kSlices64) {
    return SetLineVector(hn::ScalableTag<uint64_t>(), line, hash, k,
                         [](const KeyHash& h, uint32_t kk, const auto& visit) {
                           ForEachMaskVector64(h, kk, visit);
                         });
  } else {
    return SetLineVector(hn::ScalableTag<uint32_t>(), line, hash, k,
                         [](const KeyHash& h, uint32_t kk, const auto& visit) {
                           ForEachMaskVector32(h, kk, visit);
                         });
  }
}

template <bool kConcurrent, bool kSlices64>
HWY_INLINE bool TestOne(const uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    // Relaxed atomic loads only (no vector loads): see internal/line_ops.h.
    LineMask mask;
    MakeMask(hash, k, mask);
    return internal::TestLineScalar(line, mask, /*concurrent=*/true);
  } else {
    return TestLineVector<kSlices64>(line, hash, k);
  }
}

// Concurrent mode: SetLineScalar's contract (relaxed loads, fetch_or only on the words whose bits
// are missing, "new" if some fetch_or found a bit missing), done faster:
//  - the words to update are collected as a bit set first, so the loop runs once per such word with
//    one hard-to-predict branch per key, not one per word (the words missing bits are random);
//  - with 64-bit slices (k <= 8) each word of the mask has one bit, and a fetch_or of one bit whose
//    old value is tested compiles to `lock bts`, where a general fetch_or whose result is used
//    needs a `lock cmpxchg` retry loop.
// Together ~20% faster than SetLineScalar in BM_ConcurrentInsertMany. What remains is the locked
// instructions themselves: ~4.5 per key on average over a fill at k = 6, and a `lock bts` on a
// random word of a 1.3 MB array measured 7.8 ns (plain test-and-or: 3.5 ns) on the 2-core AVX2 VM
// this was tuned on, since a locked instruction does not overlap with other memory accesses.
// Running a batch in two phases (all masks and relaxed loads first, then all locked instructions
// back to back) was measured no faster, so it is not done.
// The words of `line` that lack some bit of `mask`, as a bit set, from relaxed loads (setcc, no
// branch).
HWY_INLINE uint32_t MissingWords(const uint64_t* line, const LineMask& mask) {
  uint32_t todo = 0;
  for (uint32_t j = 0; j < internal::kWordsPerBlock; ++j) {
    const uint64_t missing = mask.word[j] & ~internal::LoadRelaxed(line + j);
    todo |= static_cast<uint32_t>(missing != 0) << j;
  }
  return todo;
}

// fetch_or of mask.word[j] into line[j] for each j in `todo`; whether some bit was missing.
template <bool kSlices64>
HWY_INLINE bool OrMissingWords(uint64_t* line, const LineMask& mask, uint32_t todo) {
  bool fresh = false;
  for (; todo != 0; todo &= todo - 1) {
    const int j = std::countr_zero(todo);
    std::atomic_ref<uint64_t> word(line[j]);
    if constexpr (kSlices64) {
      const uint64_t bit = uint64_t{1} << std::countr_zero(mask.word[j]);
      fresh |= (word.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
    } else {
      const uint64_t bits = mask.word[j];
      fresh |= (bits & ~word.fetch_or(bits, std::memory_order_relaxed)) != 0;
    }
  }
  return fresh;
}

template <bool kSlices64>
HWY_INLINE bool SetLineConcurrent(uint64_t* line, const KeyHash& hash, uint32_t k) {
  LineMask mask;
  MakeMask(hash, k, mask);
  return OrMissingWords<kSlices64>(line, mask, MissingWords(line, mask));
}

template <bool kConcurrent, bool kSlices64>
HWY_INLINE bool SetOne(uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    return SetLineConcurrent<kSlices64>(line, hash, k);
  } else {
    return SetLineVector<kSlices64>(line, hash, k);
  }
}

void MakeMasks(const KeyHash* hashes, size_t n, uint32_t k, LineMask* masks) noexcept {
  for (size_t i = 0; i < n; ++i) MakeMask(hashes[i], k, masks[i]);
}

bool TestLine(const uint64_t* line, const KeyHash& hash, uint32_t k, bool concurrent) noexcept {
  if (concurrent) return TestOne<true, true>(line, hash, k);
  return k <= 8 ? TestOne<false, true>(line, hash, k) : TestOne<false, false>(line, hash, k);
}

bool SetLine(uint64_t* line, const KeyHash& hash, uint32_t k, bool concurrent) noexcept {
  if (concurrent) {
    return k <= 8 ? SetOne<true, true>(line, hash, k) : SetOne<true, false>(line, hash, k);
  }
  return k <= 8 ? SetOne<false, true>(line, hash, k) : SetOne<false, false>(line, hash, k);
}

template <bool kConcurrent, bool kSlices64>
HWY_INLINE size_t TestLinesImpl(const uint64_t* words, const uint64_t* blocks,
                                const KeyHash* hashes, size_t n, uint32_t k, bool* results,
                                const uint64_t* prefetch, size_t prefetch_count) {
  size_t found = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i < prefetch_count) {
      __builtin_prefetch(words + prefetch[i] * internal::kWordsPerBlock, 0, 3);
    }
    const bool hit =
        TestOne<kConcurrent, kSlices64>(words + blocks[i] * internal::kWordsPerBlock, hashes[i], k);
    found += hit;
    if (results != nullptr) results[i] = hit;
  }
  return found;
}

template <bool kConcurrent, bool kSlices64>
HWY_INLINE size_t SetLinesImpl(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes,
                               size_t n, uint32_t k, bool* was_new, const uint64_t* prefetch,
                               size_t prefetch_count) {
  size_t added = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i < prefetch_count) {
      // Write intent: the line arrives exclusive, so the store needs no second transaction.
      __builtin_prefetch(words + prefetch[i] * internal::kWordsPerBlock, 1, 3);
    }
    const bool fresh =
        SetOne<kConcurrent, kSlices64>(words + blocks[i] * internal::kWordsPerBlock, hashes[i], k);
    added += fresh;
    if (was_new != nullptr) was_new[i] = fresh;
  }
  return added;
}

size_t TestLines(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                 uint32_t k, bool concurrent, bool* results, const uint64_t* prefetch,
                 size_t prefetch_count) noexcept {
  if (concurrent) {
    return TestLinesImpl<true, true>(words, blocks, hashes, n, k, results, prefetch,
                                     prefetch_count);
  }
  return k <= 8 ? TestLinesImpl<false, true>(words, blocks, hashes, n, k, results, prefetch,
                                             prefetch_count)
                : TestLinesImpl<false, false>(words, blocks, hashes, n, k, results, prefetch,
                                              prefetch_count);
}

size_t SetLines(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                uint32_t k, bool concurrent, bool* was_new, const uint64_t* prefetch,
                size_t prefetch_count) noexcept {
  if (concurrent) {
    return k <= 8 ? SetLinesImpl<true, true>(words, blocks, hashes, n, k, was_new, prefetch,
                                             prefetch_count)
                  : SetLinesImpl<true, false>(words, blocks, hashes, n, k, was_new, prefetch,
                                              prefetch_count);
  }
  return k <= 8 ? SetLinesImpl<false, true>(words, blocks, hashes, n, k, was_new, prefetch,
                                            prefetch_count)
                : SetLinesImpl<false, false>(words, blocks, hashes, n, k, was_new, prefetch,
                                             prefetch_count);
}

}  // namespace bloomery::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // BLOOMERY_LIB_SIMD_BLOCK_KERNELS_INL_H_
