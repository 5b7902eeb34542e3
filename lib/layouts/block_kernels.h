// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_kernels.h (internal): the blocked filter's hot loops, written once with Highway
// (block_kernels-inl.h) and dispatched at run time to the best target the CPU supports: AVX-512
// (AVX3), AVX2, SSE4 or Highway's scalar target. No Highway type appears here.
//
// Every kernel is bit-identical to its block shape's scalar reference (the line's:
// layouts/internal/block_layout.h MakeMaskScalar, layouts/internal/line_ops.h
// SetBlockScalar/TestBlockScalar; block256's and word64's: bloomery/detail/block256.h and word64.h,
// set and tested as the line's, all of them gathered in layouts/internal/stored_layout_ops.h);
// tests/simd_test.cc holds every compiled target the machine supports to that.
//
// How a key's mask is built (the line; block256 the same with 8 u32 lanes of 32-bit slices;
// word64 by one byte-table lookup of its probe fields and a rotate, Word64Mask): one key per call,
// its 8 (k <= 8) or 16 (k >= 9) slices spread over SIMD lanes. Lane j computes the probe
// i = (j - start) mod slices that lands in slice j,
// ((h1 + i*h2) * salt_i) >> (32 - log2(slice bits)), and shifts a 1 (or 0 when i >= k) left by it
// with a variable shift: the whole line mask takes 1 (AVX-512), 2 (AVX2) or 4 (SSE4) vectors and no
// branch. Single-writer filters then test with and-not over vector loads and set with
// load/or/store; concurrent filters store the mask and use the relaxed-atomic reference line ops.
//
// The speed in cache and out against the memory floor is measured in docs/PERFORMANCE.md ("How
// close to the memory floor?"): the time out of cache follows the time in cache about one for
// one, so the probe's own work, not the memory system, is what keeps batched lookups above the
// floor.
//
// Choosing the target: the best supported one by default; the environment variable
// BLOOMERY_SIMD=avx3|avx2|sse4|scalar (read once, at the first use) or ForceSimdTarget
// (include/bloomery/simd.h) choose another. Switching is an atomic pointer store; calls already
// running finish on the target they started with, which is harmless since all agree bit for bit.
#ifndef BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_H_
#define BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>

#include "bloomery/key.h"
#include "bloomery/layout.h"
#include "layouts/internal/block_layout.h"

namespace bloomery::simd {

// One block shape's kernels (layout.h: the line, block256, word64). `blocks` arrays hold the
// block index of each key (BlockIndex over the shape's block count), `hashes` the keys' hashes,
// `k` the number of probes (1..16 for the line, 1..8 for the others); a block is the shape's
// words (8, 4 or 1) at words + index * those. `results`, when not null, receives one answer per
// key.
struct ShapeKernels {
  // masks[i * words per block ..] = the scalar reference's mask of hashes[i].
  void (*make_masks)(const KeyHash* hashes, size_t n, uint32_t k, uint64_t* masks) noexcept;
  // Whether all of the key's bits are set in `block` (its block). The hash by value: it travels
  // in two registers, so a single-key call neither spills it nor reloads it.
  bool (*test_block)(const uint64_t* block, KeyHash hash, uint32_t k, bool concurrent) noexcept;
  // Sets the key's bits in `block`; whether any was 0 before.
  bool (*set_block)(uint64_t* block, KeyHash hash, uint32_t k, bool concurrent) noexcept;
  // test_block for key i against block blocks[i] of `words`; returns how many answered true.
  // While it works on key i it prefetches block prefetch[i] (i < prefetch_count): the next
  // batch's, so the misses in flight stay at about one batch instead of coming in bursts.
  size_t (*test_blocks)(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes,
                        size_t n, uint32_t k, bool concurrent, bool* results,
                        const uint64_t* prefetch, size_t prefetch_count) noexcept;
  // set_block for key i on block blocks[i] of `words`, in order (a key repeated in the batch is
  // new only the first time); returns how many were new. Prefetches like test_blocks, for writing.
  size_t (*set_blocks)(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                       uint32_t k, bool concurrent, bool* was_new, const uint64_t* prefetch,
                       size_t prefetch_count) noexcept;
};

// One target's kernels.
struct BlockKernels {
  int64_t hwy_target;     // HWY_AVX3, HWY_AVX2, ... (hwy/detect_targets.h)
  std::string_view name;  // "avx3", "avx2", "sse4", "scalar"
  // Each stored layout's, in kBlockLayouts' order (layout.h; BlockLayoutIndex).
  ShapeKernels shapes[std::size(kBlockLayouts)];

  [[nodiscard]] const ShapeKernels& line() const noexcept { return shapes[0]; }
  // Whether the target runs AVX2 (avx2, avx3): where it is active when a BlockedFilter is made,
  // that filter's single-key calls take the inline AVX2 probe (bloomery/detail/stored_layouts.h).
  [[nodiscard]] bool runs_avx2() const noexcept { return name == "avx2" || name == "avx3"; }
};

// The kernels of every compiled target this CPU supports, best first.
[[nodiscard]] std::span<const BlockKernels* const> SupportedKernels() noexcept;

// The kernels of the named target ("avx3", "avx2", "sse4", "scalar", case-insensitive), or null
// if it is unknown, not compiled in, or not supported by this CPU.
[[nodiscard]] const BlockKernels* FindKernels(std::string_view name) noexcept;

// Makes `kernels` (one of SupportedKernels()) the active target.
void SetActiveKernels(const BlockKernels* kernels) noexcept;

namespace impl {
extern std::atomic<const BlockKernels*> g_active_kernels;
const BlockKernels* InitActiveKernels() noexcept;
}  // namespace impl

// The active target's kernels: the best supported, unless BLOOMERY_SIMD or SetActiveKernels chose
// another. One relaxed load on the hot path (a plain mov on x86-64).
[[nodiscard]] inline const BlockKernels& ActiveKernels() noexcept {
  const BlockKernels* kernels = impl::g_active_kernels.load(std::memory_order_relaxed);
  if (kernels == nullptr) [[unlikely]] {
    kernels = impl::InitActiveKernels();
  }
  return *kernels;
}

// ActiveKernels without its first-use test, for a caller that ActiveKernels certainly preceded: a
// BlockedFilter's single-key calls, since its constructor calls ActiveKernels (so "the first filter
// operation" that chooses the target is, at the latest, the first filter's creation). One load, no
// branch: the call through it needs no frame and is a tail jump.
[[nodiscard]] inline const BlockKernels& InitializedKernels() noexcept {
  return *impl::g_active_kernels.load(std::memory_order_relaxed);
}

}  // namespace bloomery::simd

#endif  // BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_H_
