// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_kernels.h (internal): the blocked filter's hot loops, written once with Highway
// (block_kernels-inl.h) and dispatched at run time to the best target the CPU supports: AVX-512
// (AVX3), AVX2, SSE4 or Highway's scalar target. No Highway type appears here.
//
// Every kernel is bit-identical to the scalar reference (internal/block_layout.h MakeMaskScalar,
// internal/line_ops.h SetLineScalar/TestLineScalar); tests/simd_test.cc holds every compiled target
// the machine supports to that.
//
// How a key's mask is built: one key per call, its 8 (k <= 8) or 16 (k >= 9) slices spread over
// SIMD lanes. Lane j computes the probe i = (j - start) mod slices that lands in slice j,
// ((h1 + i*h2) * salt_i) >> (32 - log2(slice bits)), and shifts a 1 (or 0 when i >= k) left by it
// with a variable shift: the whole line mask takes 1 (AVX-512), 2 (AVX2) or 4 (SSE4) vectors and no
// branch. Single-writer filters then test with and-not over vector loads and set with
// load/or/store; concurrent filters store the mask and use the relaxed-atomic reference line ops.
//
// Each target's speed, in cache and out, against the memory floor is measured in
// benchmarks/README.md: the time out of cache follows the time in cache about one for one, so
// the probe's own work, not the memory system, is what keeps batched lookups above the floor.
//
// Choosing the target: the best supported one by default; the environment variable
// BLOOMERY_SIMD=avx3|avx2|sse4|scalar (read once, at the first use) or ForceSimdTarget
// (include/bloomery/simd.h) choose another. Switching is an atomic pointer store; calls already
// running finish on the target they started with, which is harmless since all agree bit for bit.
#ifndef BLOOMERY_LIB_SIMD_BLOCK_KERNELS_H_
#define BLOOMERY_LIB_SIMD_BLOCK_KERNELS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "bloomery/key.h"
#include "internal/block_layout.h"

namespace bloomery::simd {

// One target's kernels. `blocks` arrays hold the block index of each key (BlockIndex), `hashes`
// the keys' hashes, `k` the number of probes (1..16). `results`, when not null, receives one
// answer per key.
struct BlockKernels {
  int64_t hwy_target;     // HWY_AVX3, HWY_AVX2, ... (hwy/detect_targets.h)
  std::string_view name;  // "avx3", "avx2", "sse4", "scalar"

  // masks[i] = MakeMaskScalar(hashes[i], k).
  void (*make_masks)(const KeyHash* hashes, size_t n, uint32_t k,
                     internal::LineMask* masks) noexcept;
  // Whether all of the key's bits are set in `line` (its 64-byte line).
  bool (*test_line)(const uint64_t* line, const KeyHash& hash, uint32_t k,
                    bool concurrent) noexcept;
  // Sets the key's bits in `line`; whether any was 0 before.
  bool (*set_line)(uint64_t* line, const KeyHash& hash, uint32_t k, bool concurrent) noexcept;
  // test_line for key i against line blocks[i] of `words`; returns how many answered true.
  // While it works on key i it prefetches line prefetch[i] (i < prefetch_count): the next batch's
  // lines, so the misses in flight stay at about one batch instead of coming in bursts.
  size_t (*test_lines)(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes,
                       size_t n, uint32_t k, bool concurrent, bool* results,
                       const uint64_t* prefetch, size_t prefetch_count) noexcept;
  // set_line for key i on line blocks[i] of `words`, in order (a key repeated in the batch is new
  // only the first time); returns how many were new. Prefetches like test_lines, for writing.
  size_t (*set_lines)(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                      uint32_t k, bool concurrent, bool* was_new, const uint64_t* prefetch,
                      size_t prefetch_count) noexcept;
};

// The kernels of every compiled target this CPU supports, best first.
[[nodiscard]] std::span<const BlockKernels* const> SupportedKernels() noexcept;

// The kernels of the named target ("avx3", "avx2", "sse4", "scalar", case-insensitive), or null
// if it is unknown, not compiled in, or not supported by this CPU.
[[nodiscard]] const BlockKernels* FindKernels(std::string_view name) noexcept;

// Makes `kernels` (one of SupportedKernels()) the active target.
void SetActiveKernels(const BlockKernels* kernels) noexcept;

namespace detail {
extern std::atomic<const BlockKernels*> g_active_kernels;
const BlockKernels* InitActiveKernels() noexcept;
}  // namespace detail

// The active target's kernels: the best supported, unless BLOOMERY_SIMD or SetActiveKernels chose
// another. One relaxed load on the hot path (a plain mov on x86-64).
[[nodiscard]] inline const BlockKernels& ActiveKernels() noexcept {
  const BlockKernels* kernels = detail::g_active_kernels.load(std::memory_order_relaxed);
  if (kernels == nullptr) [[unlikely]] {
    kernels = detail::InitActiveKernels();
  }
  return *kernels;
}

}  // namespace bloomery::simd

#endif  // BLOOMERY_LIB_SIMD_BLOCK_KERNELS_H_
