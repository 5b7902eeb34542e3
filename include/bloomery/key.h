// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// key.h: how a key becomes the 128 bits every filter works from.
//
// Every key is hashed exactly once, with XXH3-128 (xxHash 0.8) and the filter's 64-bit seed, into a
// KeyHash; a filter created with IntegerHash::kMix (a word64 or block256 filter's default,
// options.h's ResolveIntegerHash) hashes its uint64_t keys with MixKey instead.
// The hash functions and the seed are part of a filter's identity and of its file format (hash_id,
// seed): two filters can be merged only if both match. (Never absl::Hash or std::hash: they may
// change between processes and builds.)
//
// How the bits are used by blocked filters (see docs/DESIGN.md):
//   block  = (hi * blocks) >> 64            64-bit fastrange: uniform for any block count < 2^64
//   start  = hi mod slices                  first slice of the key's k consecutive slices
// line512 and block256: probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32, with
// h1 = lo mod 2^32 and h2 = lo >> 32. Taking the top bits of a 32-bit product (rather than the sum
// mod 64) keeps 2^64 distinct probe patterns per block, and the per-probe odd salt keeps the
// probes independent of each other. word64 (8 slices of 8 bits) takes no salt and no double
// hashing: probe i's bit is the top 3 bits of byte i of lo, eight independent fields of the hash.
//
// Keys may be byte strings (std::string_view), unsigned 64-bit integers (under kXxh3, the line's
// default, hashed as their 8 little-endian bytes, so an integer and its 8-byte
// string form collide on purpose; under kMix by MixKey), or a KeyHash the caller computed itself
// (its 128 bits must be uniformly distributed).
#ifndef BLOOMERY_KEY_H_
#define BLOOMERY_KEY_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bloomery/export.h"

namespace bloomery {

// Seed used when FilterOptions leaves it unset: the first 64 bits of pi's fractional part.
inline constexpr uint64_t kDefaultSeed = 0x243F6A8885A308D3ull;

struct KeyHash {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const KeyHash&, const KeyHash&) = default;
};

// XXH3-128 of `key` with `seed`. Thread-safe, allocation-free (its cost: BM_Hash,
// docs/PERFORMANCE.md, "How fast against libbloom?").
[[nodiscard]] BLOOMERY_EXPORT KeyHash HashKey(std::string_view key, uint64_t seed) noexcept;
// XXH3-128 of the 8 little-endian bytes of `key`: xxHash 0.8's path for 4..8-byte inputs,
// written out inline (one 64x64->128 multiply and two xorshift-multiply rounds) so that a filter's
// single-key call on an integer hashes in the caller's loop. tests/key_test.cc holds it
// bit-identical to libxxhash's XXH3_128bits_withSeed.
[[nodiscard, gnu::always_inline]] inline KeyHash HashKey(uint64_t key, uint64_t seed) noexcept {
  // XXH3's default secret, bytes 16..23 xor bytes 24..31 (little-endian).
  constexpr uint64_t kSecretFlip = 0xC4F023344DC994ACull;
  constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ull;
  seed ^= static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32;
  const uint64_t keyed = key ^ (kSecretFlip + seed);
  // len << 2 with len = 8.
  const unsigned __int128 m = static_cast<unsigned __int128>(keyed) * (kPrime64_1 + (8 << 2));
  auto lo = static_cast<uint64_t>(m);
  auto hi = static_cast<uint64_t>(m >> 64);
  hi += lo << 1;
  lo ^= hi >> 3;
  lo ^= lo >> 35;
  lo *= 0x9FB21C651E98DF25ull;
  lo ^= lo >> 28;
  hi ^= hi >> 37;  // XXH3_avalanche
  hi *= 0x165667919E3779F9ull;
  hi ^= hi >> 32;
  return KeyHash{lo, hi};
}

namespace detail {
// The two halves of x * c (64 x 64 -> 128 bits) folded by xor: every input bit reaches the
// upper output bits through the high half and the lower ones through the low half.
[[nodiscard, gnu::always_inline]] inline uint64_t FoldedProduct(uint64_t x, uint64_t c) noexcept {
  const unsigned __int128 m = static_cast<unsigned __int128>(x) * c;
  return static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
}
}  // namespace detail

// A 64 -> 128-bit mix of `key` under `seed`: lo = FoldedProduct(key ^ seed, 2^64/phi), hi =
// FoldedProduct(lo, a second odd constant). Two multiplies (~6 instructions against XXH3's ~25),
// so an integer key's single-key call costs less (the line's out of cache: 0.95x the lookup, 0.75x
// the insert; docs/DESIGN.md, "Tried and rejected", which has the one-fold FPRs too). One fold
// alone is not enough: with the probes taken from a function of the line's own bits, consecutive
// keys measured 10% under the planned FPR and keys spaced 2^20 apart 6% over it; the second fold
// makes the line (hi) and the probes (lo) independent, and tests hold both filters' FPR on
// consecutive and strided keys to the plan. The seed is only xored into the key: MixKey(k, s) ==
// MixKey(k ^ s ^ t, t), which HashOptions::seed spells out for filters that differ by seed.
[[nodiscard, gnu::always_inline]] inline KeyHash MixKey(uint64_t key, uint64_t seed) noexcept {
  const uint64_t lo = detail::FoldedProduct(key ^ seed, 0x9E3779B97F4A7C15ull);
  return KeyHash{lo, detail::FoldedProduct(lo, 0xD6E8FEB86659FD93ull)};
}

// How a filter hashes integer keys; byte strings are XXH3-128 under either. The value is the
// file format's hash_id: chosen at creation (HashOptions::integer_hash), kept by Save and Load,
// and part of the filter's identity (filters hashing differently cannot be merged).
enum class IntegerHash : uint32_t {
  // Unset (an option, never a filter's or a file's): a new filter takes its layout's default,
  // ResolveIntegerHash (options.h): kMix for kWord64 and kBlock256, kXxh3 for the line.
  kAuto = 0,
  // hash_id 1: XXH3-128 of the integer's 8 little-endian bytes (an integer and its 8-byte string
  // form are one key). Every filter before hash_id 2 existed.
  kXxh3 = 1,
  // hash_id 2: MixKey, for filters whose keys are integers and whose single-key calls are hot.
  kMix = 2,
};

// "xxh3", "mix" or "auto": the name the CLI and Python use.
[[nodiscard]] constexpr std::string_view IntegerHashName(IntegerHash integers) noexcept {
  if (integers == IntegerHash::kAuto) return "auto";
  return integers == IntegerHash::kMix ? "mix" : "xxh3";
}

// Whether `hash_id` names an IntegerHash (a file's hash_id, or an option cast from an integer).
[[nodiscard]] constexpr bool IsIntegerHash(uint32_t hash_id) noexcept {
  return hash_id == static_cast<uint32_t>(IntegerHash::kXxh3) ||
         hash_id == static_cast<uint32_t>(IntegerHash::kMix);
}

// An integer key's hash under kIntegers (kXxh3: HashKey; kMix: MixKey), chosen at compile time:
// KeyHasher's choice, for a caller that fixed the filter's integer hash (avx2::VisitProber).
template <IntegerHash kIntegers>
[[nodiscard, gnu::always_inline]] inline KeyHash HashInteger(uint64_t key, uint64_t seed) noexcept {
  static_assert(kIntegers == IntegerHash::kXxh3 || kIntegers == IntegerHash::kMix);
  if constexpr (kIntegers == IntegerHash::kMix) {
    return MixKey(key, seed);
  } else {
    return HashKey(key, seed);
  }
}

// The key -> KeyHash mapping of one filter: its seed and its integer hash.
struct KeyHasher {
  uint64_t seed = kDefaultSeed;
  IntegerHash integers = IntegerHash::kXxh3;

  [[nodiscard, gnu::always_inline]] KeyHash operator()(std::string_view key) const noexcept {
    return HashKey(key, seed);
  }
  [[nodiscard, gnu::always_inline]] KeyHash operator()(uint64_t key) const noexcept {
    return integers == IntegerHash::kMix ? HashInteger<IntegerHash::kMix>(key, seed)
                                         : HashInteger<IntegerHash::kXxh3>(key, seed);
  }
  friend bool operator==(const KeyHasher&, const KeyHasher&) = default;
};

// Batch forms: out[i] = HashKey(keys[i], seed), or hasher(keys[i]), for i < count.
BLOOMERY_EXPORT void HashKeys(const std::string_view* keys, size_t count, uint64_t seed,
                              KeyHash* out) noexcept;
BLOOMERY_EXPORT void HashKeys(const uint64_t* keys, size_t count, uint64_t seed,
                              KeyHash* out) noexcept;
BLOOMERY_EXPORT void HashKeys(const uint64_t* keys, size_t count, const KeyHasher& hasher,
                              KeyHash* out) noexcept;

}  // namespace bloomery

#endif  // BLOOMERY_KEY_H_
