// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// detail/stored_layouts.h: every stored blocked layout's probe (kBlockLayouts, layout.h), chosen
// by its place in that table: the scalar reference (ReferenceMask) that every kernel and inline
// probe is held to, and the inline AVX2 entries BlockedFilter's single-key calls make
// (TestInline, SetInline). A layout is one unit: its row in kBlockLayouts, its file here
// (detail/line512.h, block256.h, word64.h: reference and inline probe), its kernels
// (lib/layouts/block_kernels.cc, one row), and its cases in tests/simd_test.cc and probe_test.cc,
// which run over the table. Not an API: use BlockedFilter.
//
// Why inline, and in AVX2 whatever the includer's flags: out of cache a single lookup is one DRAM
// miss, and independent lookups in a caller's loop overlap only as far as the core's out-of-order
// window holds them, so the instructions per lookup set its speed. The SIMD kernels chosen at run
// time (lib/layouts/block_kernels.h) cost a call and an indirect call per key; the inline probe is
// ~15-30 instructions (mask, load, test) with no call and no branch. A scalar probe in the
// baseline ISA measured 1.5-1.9x slower than the kernel for the line and block256, and for word64
// 0-9 % faster in cache, within 1 % out (docs/DESIGN.md, "Tried and rejected"), so the probe is
// AVX2 code in every file:
// - Every function of the inline probes carries `target("avx2")`, so it compiles to the same AVX2
//   instructions whatever flags the including file has: the text of these headers never depends
//   on them (tests/header_flags_test.py).
// - The helpers are always_inline, so they never exist as an out-of-line copy of their own.
// - The entries the filter calls (TestInline<kIndex> and SetInline<kIndex>, one per stored layout
//   and operation) are `static`: each file holds its own copy, which no other file can link to. A
//   file built for AVX2 (-march=x86-64-v3) inlines them into its loop; any other file calls its
//   copy directly (one near call, no dispatch).
// - They run only where BlockedFilter's constructor found the CPU running AVX2 (its inline_test_
//   is null elsewhere, and its call paths out of line; then the filter takes the kernels).
// tests/inline_probe_test.py checks that no AVX2 code is exported from a file that calls them.
// Filters with k > 8, and inserts into a concurrent line or block256 filter, take the kernels; a
// concurrent word64 insert is inline too (its one fetch_or, the reference's); lookups are inline
// in either concurrency mode (avx2_probe::LoadShared).
#ifndef BLOOMERY_DETAIL_STORED_LAYOUTS_H_
#define BLOOMERY_DETAIL_STORED_LAYOUTS_H_

#include <cstdint>
#include <cstring>
#include <iterator>

#include "bloomery/detail/block256.h"
#include "bloomery/detail/line512.h"
#include "bloomery/detail/probe_common.h"
#include "bloomery/detail/word64.h"
#include "bloomery/key.h"
#include "bloomery/layout.h"

namespace bloomery::detail {

// The key's k bits in a block of stored layout kBlockLayouts[index]: its block_bits / 64 words at
// `mask`. The scalar reference of every kernel and inline probe.
inline void ReferenceMask(uint32_t index, const KeyHash& hash, uint32_t hashes,
                          uint64_t* mask) noexcept {
  const BlockLayout& stored = kBlockLayouts[index];
  const bool fields = stored.probe == Probe::kFields;
  if (stored.layout == Layout::kWord64) {
    *mask = Word64MaskScalar(hash, hashes);
  } else if (stored.layout == Layout::kBlock256) {
    const Block256Mask block =
        fields ? Block256FieldsMaskScalar(hash, hashes) : Block256MaskScalar(hash, hashes);
    std::memcpy(mask, block.word, sizeof(block.word));
  } else {
    BlockMask<8> line;
    if (fields) {
      MakeFieldsMaskScalar(hash, hashes, line);
    } else {
      MakeMaskScalar(hash, hashes, line);
    }
    std::memcpy(mask, line.word, sizeof(line.word));
  }
}

// A BlockedFilter single-key call's path, fixed when the filter is made: which stored layout's
// inline probe runs, how an integer key is hashed (XXH3, or a mix: SeededMixKey, which serves kMix
// and kSeededMix) and whether an insert is concurrent (word64's fetch_or; a concurrent line or
// block256 insert takes the kernels), or kOutOfLinePath (the kernels: no AVX2, or k > 8). Paths
// 2 * stored + mixes, then the concurrent word64 inserts, then kOutOfLinePath. One switch on it
// per call (VisitCallPath: a jump table) in place of a test of the inline row, compares on the
// stored layout, a branch on the integer hash and one on the concurrency mode.
inline constexpr uint32_t kConcurrentWord64Path = 2 * std::size(kBlockLayouts);
inline constexpr uint32_t kOutOfLinePath = kConcurrentWord64Path + 2;
[[nodiscard]] constexpr uint32_t CallPathOf(uint32_t stored, bool mixes, bool concurrent) noexcept {
  return (concurrent ? kConcurrentWord64Path : 2 * stored) + (mixes ? 1 : 0);
}
[[nodiscard]] constexpr bool ConcurrentOnPath(uint32_t path) noexcept {
  return path >= kConcurrentWord64Path;
}
[[nodiscard]] constexpr uint32_t StoredOfPath(uint32_t path) noexcept {
  return ConcurrentOnPath(path) ? BlockLayoutIndex(Layout::kWord64, Probe::kFields) : path / 2;
}
[[nodiscard]] constexpr bool MixesOnPath(uint32_t path) noexcept { return (path & 1) != 0; }

// fn.template operator()<kPath>() for `path` (<= kOutOfLinePath), kPath a compile-time constant.
template <class Fn>
[[gnu::always_inline]] inline decltype(auto) VisitCallPath(uint32_t path, Fn&& fn) {
  static_assert(kOutOfLinePath < 16, "VisitCallPath has 16 cases");
#define BLOOMERY_CALL_PATH_CASE(n)                                             \
  case (n):                                                                    \
    if constexpr ((n) <= kOutOfLinePath) return fn.template operator()<(n)>(); \
    [[fallthrough]]
  switch (path) {
    BLOOMERY_CALL_PATH_CASE(0);
    BLOOMERY_CALL_PATH_CASE(1);
    BLOOMERY_CALL_PATH_CASE(2);
    BLOOMERY_CALL_PATH_CASE(3);
    BLOOMERY_CALL_PATH_CASE(4);
    BLOOMERY_CALL_PATH_CASE(5);
    BLOOMERY_CALL_PATH_CASE(6);
    BLOOMERY_CALL_PATH_CASE(7);
    BLOOMERY_CALL_PATH_CASE(8);
    BLOOMERY_CALL_PATH_CASE(9);
    BLOOMERY_CALL_PATH_CASE(10);
    BLOOMERY_CALL_PATH_CASE(11);
    BLOOMERY_CALL_PATH_CASE(12);
    BLOOMERY_CALL_PATH_CASE(13);
    BLOOMERY_CALL_PATH_CASE(14);
    BLOOMERY_CALL_PATH_CASE(15);
    default:
      __builtin_unreachable();
  }
#undef BLOOMERY_CALL_PATH_CASE
}

#if BLOOMERY_INLINE_PROBE

// The entries BlockedFilter's Insert and MayContain call (see the file comment: static, so each
// file has its own copy; inlined where the file is built for AVX2), one per stored layout:
// kIndex is its place in kBlockLayouts (VisitCallPath or VisitBlockLayout chooses it). `block` is
// the key's block of that layout; `unused` is kUnusedProbes[k], k <= 8. One function per layout
// keeps each small enough to inline.
template <uint32_t kIndex>
[[nodiscard, gnu::target("avx2")]] static inline bool TestInline(
    const uint64_t* block, const KeyHash& hash, const UnusedProbes& unused) noexcept {
  constexpr BlockLayout kStored = kBlockLayouts[kIndex];
  if constexpr (kStored.layout == Layout::kLine512) {
    return Test64<kStored.probe>(block, hash, unused);
  } else if constexpr (kStored.layout == Layout::kBlock256) {
    return TestBlock256<kStored.probe>(block, hash, unused);
  } else {
    static_assert(kStored.layout == Layout::kWord64);
    return TestWord64(block, hash, unused);
  }
}
// Single writer, or word64 in either mode (`concurrent`: its one fetch_or).
template <uint32_t kIndex>
[[gnu::target("avx2")]] static inline bool SetInline(uint64_t* block, const KeyHash& hash,
                                                     const UnusedProbes& unused,
                                                     bool concurrent) noexcept {
  constexpr BlockLayout kStored = kBlockLayouts[kIndex];
  if constexpr (kStored.layout == Layout::kLine512) {
    return Set64<kStored.probe>(block, hash, unused);
  } else if constexpr (kStored.layout == Layout::kBlock256) {
    return SetBlock256<kStored.probe>(block, hash, unused);
  } else {
    static_assert(kStored.layout == Layout::kWord64);
    return SetWord64(block, hash, unused, concurrent);
  }
}

#endif  // BLOOMERY_INLINE_PROBE

}  // namespace bloomery::detail

#endif  // BLOOMERY_DETAIL_STORED_LAYOUTS_H_
