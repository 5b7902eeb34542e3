// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// batch_pipeline.h (internal): the one batch loop of every filter kind: hash a batch, locate its
// keys, and keep about one batch of line misses in flight while the previous batch is probed.
#ifndef BLOOMERY_LIB_FILTERS_INTERNAL_BATCH_PIPELINE_H_
#define BLOOMERY_LIB_FILTERS_INTERNAL_BATCH_PIPELINE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "bits/internal/filter_ops.h"
#include "bloomery/key.h"
#include "layouts/internal/block_layout.h"

// Explicit instantiation of a kind's batch templates for every key type the filters accept
// (bloomery::FilterKey): X(std::string_view) X(uint64_t) X(KeyHash).
#define BLOOMERY_FOR_EACH_FILTER_KEY(X) X(std::string_view) X(uint64_t) X(KeyHash)
// The batch templates of a kind whose InsertKeys answers bool ("was new"), for every key type.
#define BLOOMERY_INSTANTIATE_BOOL_BATCH(Kind, Key)                                  \
  template size_t Kind::InsertKeys(std::span<const Key>, std::span<bool>) noexcept; \
  template size_t Kind::LookupKeys(std::span<const Key>, std::span<bool>) const noexcept;
#define BLOOMERY_INSTANTIATE_BATCH_FORMS(Kind)            \
  BLOOMERY_INSTANTIATE_BOOL_BATCH(Kind, std::string_view) \
  BLOOMERY_INSTANTIATE_BOOL_BATCH(Kind, uint64_t)         \
  BLOOMERY_INSTANTIATE_BOOL_BATCH(Kind, KeyHash)

namespace bloomery::detail {

// Keys per batch, which is also the prefetch distance (see Pipeline): enough misses in flight to
// cover the memory latency, few enough that two batches of hashes and locations stay in L1.
// docs/DESIGN.md ("Tried and rejected") has the sweep behind the value.
constexpr size_t kBatch = 32;

// Keys per batch of a kind: kBatch, or `Locate::kKeys` where the kind sets one (a kind whose key
// touches many lines has that many more misses in flight per key).
template <typename Locate>
constexpr size_t KeysPerBatch() noexcept {
  if constexpr (requires { Locate::kKeys; }) {
    return Locate::kKeys;
  } else {
    return kBatch;
  }
}

// One batch in flight: its hashes and where each key lives (a block index, a list of bit
// positions, a stage count: whatever the kind's `locate` returns).
template <typename Where, size_t kKeys = kBatch>
struct Batch {
  KeyHash hashes[kKeys];
  Where where[kKeys];
  size_t size = 0;
};

// Hashes keys[begin, begin + kKeys) into `batch` and locates each.
template <typename Key, typename Locate, size_t kKeys>
inline void StartBatch(std::span<const Key> keys, size_t begin, const KeyHasher& hasher,
                       const Locate& locate, Batch<typename Locate::Where, kKeys>& batch) noexcept {
  batch.size = std::min(kKeys, keys.size() - begin);
  HashBatch(keys.data() + begin, batch.size, hasher, batch.hashes);
  for (size_t i = 0; i < batch.size; ++i) locate(batch.hashes[i], batch.where[i]);
}

// Runs `keys` through `finish(batch, out, next)` one batch at a time, software-pipelined: batch
// b + 1 is hashed and located (`locate(hash, where)`, which fills the `Locate::Where` of a key in
// place: a kind's Where may be large, and copying it per key cost ClassicFilter half its speed)
// before batch b is probed, and `finish`
// prefetches batch b + 1's key i while it probes key i of batch b (`next`; null for the last
// batch); the first batch is prefetched whole with `prefetch(hash, where)`. So hashing overlaps
// the memory latency, and about one batch of misses is in flight at any time, a steady stream
// rather than bursts that overflow the core's miss buffers. `out` receives the batch's answers
// (null when the caller wants none); only the first out.size() answers are kept.
template <typename Key, typename Answer, typename Locate, typename Prefetch, typename Finish>
inline void Pipeline(std::span<const Key> keys, std::span<Answer> out, const KeyHasher& hasher,
                     const Locate& locate, const Prefetch& prefetch,
                     const Finish& finish) noexcept {
  using Where = typename Locate::Where;
  Batch<Where> batches[2];
  const size_t total = keys.size();
  if (total == 0) return;
  StartBatch(keys, 0, hasher, locate, batches[0]);
  for (size_t i = 0; i < batches[0].size; ++i) prefetch(batches[0].hashes[i], batches[0].where[i]);
  for (size_t base = 0, b = 0; base < total; base += kBatch, b ^= 1) {
    const Batch<Where>* next = nullptr;
    if (base + kBatch < total) {
      StartBatch(keys, base + kBatch, hasher, locate, batches[b ^ 1]);
      next = &batches[b ^ 1];
    }
    const Batch<Where>& batch = batches[b];
    if (base + batch.size <= out.size()) {
      finish(batch, out.data() + base, next);
    } else if (base < out.size()) {
      Answer answers[kBatch];
      finish(batch, answers, next);
      std::copy(answers, answers + (out.size() - base), out.data() + base);
    } else {
      finish(batch, static_cast<Answer*>(nullptr), next);
    }
  }
}

// Pipeline for kinds that probe one key at a time: `probe(hash, where) -> Answer`, with key i of
// the next batch prefetched just before key i of this one is probed.
template <typename Key, typename Answer, typename Locate, typename Prefetch, typename Probe>
inline void PipelineEach(std::span<const Key> keys, std::span<Answer> out, const KeyHasher& hasher,
                         const Locate& locate, const Prefetch& prefetch,
                         const Probe& probe) noexcept {
  Pipeline(keys, out, hasher, locate, prefetch,
           [&](const auto& batch, Answer* answers, const auto* next) {
             for (size_t i = 0; i < batch.size; ++i) {
               if (next != nullptr && i < next->size) prefetch(next->hashes[i], next->where[i]);
               const Answer answer = probe(batch.hashes[i], batch.where[i]);
               if (answers != nullptr) answers[i] = answer;
             }
           });
}

// The batch loop of a kind whose key touches many lines (ClassicFilter: k lines per key): hash a
// batch, `locate` each key (which also prefetches its lines: re-reading k positions from a second
// loop measured 10-20% slower in L2), then probe the batch key by key. One batch already puts
// k x kKeys misses in flight, as many as the core overlaps, so pipelining batches as Pipeline
// does buys nothing out of cache, and its bookkeeping cost in L2 (docs/DESIGN.md, "Tried and
// rejected").
template <typename Key, typename Answer, typename Locate, typename Probe>
inline void BurstEach(std::span<const Key> keys, std::span<Answer> out, const KeyHasher& hasher,
                      const Locate& locate, const Probe& probe) noexcept {
  constexpr size_t kKeys = KeysPerBatch<Locate>();
  Batch<typename Locate::Where, kKeys> batch;
  for (size_t base = 0; base < keys.size(); base += kKeys) {
    StartBatch(keys, base, hasher, locate, batch);
    for (size_t i = 0; i < batch.size; ++i) {
      const Answer answer = probe(batch.hashes[i], batch.where[i]);
      if (base + i < out.size()) out[base + i] = answer;
    }
  }
}

// `locate` and `prefetch` of the kinds that keep a key in one 64-byte line of `words`.
struct LineOf {
  using Where = uint64_t;  // the block index
  uint64_t blocks;
  void operator()(const KeyHash& hash, uint64_t& block) const noexcept {
    block = BlockIndex(hash, blocks);
  }
};
template <bool kWrite>
struct PrefetchLine {
  const uint64_t* words;
  void operator()(const KeyHash& /*hash*/, uint64_t block) const noexcept {
    __builtin_prefetch(words + block * kWordsPerBlock, kWrite ? 1 : 0, 3);
  }
};

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FILTERS_INTERNAL_BATCH_PIPELINE_H_
