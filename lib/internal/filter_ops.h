// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_ops.h (internal): the word-level operations and batch hashing that the filters built on a
// plain bit array (ClassicFilter, ScalableFilter's stages) share.
//
// Concurrent filters touch their words only through these: relaxed atomic loads for reads and
// fetch_or for writes, so ThreadSanitizer sees no data race and x86-64 still gets plain movs for
// the loads. Every filter kind uses this header.
#ifndef BLOOMERY_LIB_INTERNAL_FILTER_OPS_H_
#define BLOOMERY_LIB_INTERNAL_FILTER_OPS_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/storage.h"

namespace bloomery::internal {

[[nodiscard]] inline uint64_t LoadRelaxed(const uint64_t* word) noexcept {
  // atomic_ref needs a non-const object; a relaxed load never writes it.
  return std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(word)).load(std::memory_order_relaxed);
}

// Sets `mask` in `*word`; returns the bits of `mask` that were 0 before. In concurrent mode the
// word is written only if a bit is missing: a duplicate insert stays a pure read and never takes
// the line exclusive, so concurrent lookups of hot keys do not bounce it between cores.
[[nodiscard]] inline uint64_t SetBits(uint64_t* word, uint64_t mask, bool concurrent) noexcept {
  if (!concurrent) {
    const uint64_t missing = mask & ~*word;
    *word |= mask;
    return missing;
  }
  if ((mask & ~LoadRelaxed(word)) == 0) return 0;
  return mask & ~std::atomic_ref<uint64_t>(*word).fetch_or(mask, std::memory_order_relaxed);
}

[[nodiscard]] inline uint64_t LoadWord(const uint64_t* word, bool concurrent) noexcept {
  return concurrent ? LoadRelaxed(word) : *word;
}

// out[i] = the KeyHash of keys[i] under `seed`, for any key type a filter accepts.
inline void HashBatch(const std::string_view* keys, size_t n, uint64_t seed,
                      KeyHash* out) noexcept {
  HashKeys(keys, n, seed, out);
}
inline void HashBatch(const uint64_t* keys, size_t n, uint64_t seed, KeyHash* out) noexcept {
  HashKeys(keys, n, seed, out);
}
inline void HashBatch(const KeyHash* keys, size_t n, uint64_t /*seed*/, KeyHash* out) noexcept {
  std::copy(keys, keys + n, out);
}

// The storage a filter created from `options` asks for.
[[nodiscard]] inline StorageOptions StorageOptionsFor(const FilterOptions& options) noexcept {
  StorageOptions storage;
  storage.huge_pages = options.huge_pages;
  storage.populate = options.populate;
  storage.max_bytes = options.max_memory_bytes;
  return storage;
}

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_FILTER_OPS_H_
