// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/key.h"

#include <bit>

// Inline the whole of XXH3 so the per-key call is a direct, specialised one; no xxHash symbol or
// type leaves this file.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bloomery {

static_assert(std::endian::native == std::endian::little,
              "filter bytes and integer keys are defined as little-endian");

KeyHash HashKey(std::string_view key, uint64_t seed) noexcept {
  const XXH128_hash_t h = XXH3_128bits_withSeed(key.data(), key.size(), seed);
  return KeyHash{h.low64, h.high64};
}

void HashKeys(const std::string_view* keys, size_t count, uint64_t seed, KeyHash* out) noexcept {
  for (size_t i = 0; i < count; ++i) out[i] = HashKey(keys[i], seed);
}

void HashKeys(const uint64_t* keys, size_t count, uint64_t seed, KeyHash* out) noexcept {
  for (size_t i = 0; i < count; ++i) out[i] = HashKey(keys[i], seed);
}

void HashKeys(const uint64_t* keys, size_t count, const KeyHasher& hasher, KeyHash* out) noexcept {
  // One loop per function, so each is the tight loop the compiler can unroll.
  if (hasher.mixes()) {
    const MixSeed premixed = hasher.premixed();  // a local: the stores to out cannot change it
    for (size_t i = 0; i < count; ++i) out[i] = SeededMixKey(keys[i], premixed);
  } else {
    HashKeys(keys, count, hasher.seed(), out);
  }
}

}  // namespace bloomery
