// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter_ops.h (internal): the one home of the word-array operations every filter kind uses
// (relaxed access, set-only-the-missing-bits, clear, popcount, union, intersection) and batch
// hashing.
//
// Concurrent filters touch their words only through these: relaxed atomic loads for reads and
// fetch_or for writes, so ThreadSanitizer sees no data race and x86-64 still gets plain movs for
// the loads.
#ifndef BLOOMERY_LIB_BITS_INTERNAL_FILTER_OPS_H_
#define BLOOMERY_LIB_BITS_INTERNAL_FILTER_OPS_H_

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "bits/internal/bit_count.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery::detail {

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

// The whole-array operations. They use relaxed atomics, so they may overlap concurrent lookups
// (and UnionWords concurrent inserts) without a data race.

// words[0, n) = 0.
inline void ClearWords(uint64_t* words, uint64_t n) noexcept {
  for (uint64_t i = 0; i < n; ++i) {
    std::atomic_ref<uint64_t>(words[i]).store(0, std::memory_order_relaxed);
  }
}

// Bits set in words[0, n).
[[nodiscard]] inline uint64_t PopCountWords(const uint64_t* words, uint64_t n) noexcept {
  uint64_t count = 0;
  for (uint64_t i = 0; i < n; ++i) count += BitCount(LoadRelaxed(words + i));
  return count;
}

// words[i] |= from[i] for i < n, writing only the words that miss a bit (SetBits).
inline void UnionWords(uint64_t* words, const uint64_t* from, uint64_t n,
                       bool concurrent) noexcept {
  for (uint64_t i = 0; i < n; ++i) (void)SetBits(words + i, LoadRelaxed(from + i), concurrent);
}

// words[i] &= from[i] for i < n.
inline void IntersectWords(uint64_t* words, const uint64_t* from, uint64_t n) noexcept {
  for (uint64_t i = 0; i < n; ++i) {
    std::atomic_ref<uint64_t>(words[i]).fetch_and(LoadRelaxed(from + i), std::memory_order_relaxed);
  }
}

// out[i] = hasher(keys[i]), for any key type a filter accepts.
inline void HashBatch(const std::string_view* keys, size_t n, const KeyHasher& hasher,
                      KeyHash* out) noexcept {
  HashKeys(keys, n, hasher.seed(), out);
}
inline void HashBatch(const uint64_t* keys, size_t n, const KeyHasher& hasher,
                      KeyHash* out) noexcept {
  HashKeys(keys, n, hasher, out);
}
inline void HashBatch(const KeyHash* keys, size_t n, const KeyHasher& /*hasher*/,
                      KeyHash* out) noexcept {
  std::copy(keys, keys + n, out);
}

// InvalidArgument unless `integers` is an IntegerHash option: kAuto, or one a file can hold (not
// an option cast from a stray integer).
[[nodiscard]] inline absl::Status CheckIntegerHash(IntegerHash integers) {
  if (integers == IntegerHash::kAuto || IsIntegerHash(static_cast<uint32_t>(integers))) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "integer_hash must be kAuto (0), kXxh3 (1), kMix (2) or kSeededMix (3), got %d",
      static_cast<uint32_t>(integers)));
}

// The part of an incompatibility message that names a filter's hashing.
[[nodiscard]] inline std::string HasherName(const KeyHasher& hasher) {
  return absl::StrFormat("seed %#x, hash_id %d", hasher.seed(),
                         static_cast<uint32_t>(hasher.integers()));
}

// Filters of different layouts or probes (layout.h) hold a key's bits in different places, so no
// union or intersection of them keeps its keys: FailedPrecondition naming both, or OkStatus when
// both plans have one layout and (blocked) one probe.
[[nodiscard]] inline absl::Status CheckSameLayout(const Plan& a, const Plan& b) {
  if (a.layout != b.layout) {
    return absl::FailedPreconditionError(
        absl::StrFormat("filters have different layouts (%s and %s): a key's bits are not in the "
                        "same places",
                        LayoutName(a.layout), LayoutName(b.layout)));
  }
  if (FindBlockShape(a.layout) != nullptr && a.probe != b.probe) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "filters have different probes (%s %s and %s %s): a key's bits are not in the same "
        "places; build one from its keys with the other's probe (FilterOptions::probe)",
        LayoutName(a.layout), ProbeName(a.probe), LayoutName(b.layout), ProbeName(b.probe)));
  }
  return absl::OkStatus();
}

// Whether two filters over one bit array can be merged word by word: OkStatus when bits, hashes
// and hashing (seed, integer hash) match, else FailedPrecondition naming both.
[[nodiscard]] inline absl::Status CheckSameArray(uint64_t bits, uint32_t hashes,
                                                 const KeyHasher& hasher, uint64_t other_bits,
                                                 uint32_t other_hashes,
                                                 const KeyHasher& other_hasher) {
  if (bits == other_bits && hashes == other_hashes && hasher == other_hasher) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "incompatible filters: (bits %d, hashes %d, %s) vs (bits %d, hashes %d, %s)", bits, hashes,
      HasherName(hasher), other_bits, other_hashes, HasherName(other_hasher)));
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_BITS_INTERNAL_FILTER_OPS_H_
