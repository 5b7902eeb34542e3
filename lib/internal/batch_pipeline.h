// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// batch_pipeline.h (internal): the batch loop of the one-line-per-key filters (BlockedFilter,
// CountingFilter): hash a batch, locate its lines, and keep about one batch of line misses in
// flight while the previous batch is probed.
#ifndef BLOOMERY_LIB_INTERNAL_BATCH_PIPELINE_H_
#define BLOOMERY_LIB_INTERNAL_BATCH_PIPELINE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "bloomery/key.h"
#include "internal/block_layout.h"
#include "internal/filter_ops.h"

namespace bloomery::internal {

// Keys per batch, which is also the prefetch distance (see Pipeline): enough misses in flight to
// cover the memory latency (~215 ns for one random line on the 2-core AVX2 VM this was tuned on,
// ~7.5 ns of work per key in cache), few enough that two batches of hashes and block indices stay
// in L1. BM_MayContainMany/BM_Floor out of cache, medians of 3: 24..64 within noise of each other
// (1.27..1.34), 16 and 96 slower (1.4 and more).
constexpr size_t kBatch = 32;

// One batch in flight: its hashes and the block index of each.
struct Batch {
  KeyHash hashes[kBatch];
  uint64_t blocks[kBatch];
  size_t size = 0;
};

// Hashes keys[0, n) into `batch` and locates their lines.
template <typename Key>
inline void StartBatch(const Key* keys, size_t n, uint64_t seed, uint64_t blocks,
                       Batch& batch) noexcept {
  internal::HashBatch(keys, n, seed, batch.hashes);
  for (size_t i = 0; i < n; ++i) batch.blocks[i] = BlockIndex(batch.hashes[i], blocks);
  batch.size = n;
}

// Runs `keys` through `finish(batch, out, next)` one batch at a time, software-pipelined: batch
// b + 1 is hashed and located before batch b is probed, and `finish` prefetches batch b + 1's
// line i while it probes key i of batch b (`next`; null for the last batch). So hashing overlaps
// the memory latency, and about one batch of misses is in flight at any time, a steady stream
// rather than bursts that overflow the core's miss buffers. `out` receives the batch's answers
// (null when the caller wants none); the return value sums finish's counts.
template <bool kWrite, typename Key, typename Finish>
inline size_t Pipeline(std::span<const Key> keys, std::span<bool> out, uint64_t seed,
                       const uint64_t* words, uint64_t blocks, const Finish& finish) noexcept {
  Batch batches[2];
  size_t count = 0;
  const size_t total = keys.size();
  if (total == 0) return 0;
  StartBatch(keys.data(), std::min(kBatch, total), seed, blocks, batches[0]);
  for (size_t i = 0; i < batches[0].size; ++i) {
    __builtin_prefetch(words + batches[0].blocks[i] * kWordsPerBlock, kWrite ? 1 : 0, 3);
  }
  for (size_t base = 0, b = 0; base < total; base += kBatch, b ^= 1) {
    const Batch* next = nullptr;
    if (const size_t start = base + kBatch; start < total) {
      StartBatch(keys.data() + start, std::min(kBatch, total - start), seed, blocks,
                 batches[b ^ 1]);
      next = &batches[b ^ 1];
    }
    const Batch& batch = batches[b];
    if (base + batch.size <= out.size()) {
      count += finish(batch, out.data() + base, next);
    } else if (base < out.size()) {
      bool answers[kBatch];
      count += finish(batch, answers, next);
      std::copy(answers, answers + (out.size() - base), out.data() + base);
    } else {
      count += finish(batch, nullptr, next);
    }
  }
  return count;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_BATCH_PIPELINE_H_
