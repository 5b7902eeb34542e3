// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// key.h: how a key becomes the 128 bits every filter works from.
//
// Every key is hashed exactly once, with XXH3-128 (xxHash 0.8) and the filter's 64-bit seed, into a
// KeyHash. The hash function and the seed are part of a filter's identity and of its file format:
// two filters can be merged only if both match. (Never absl::Hash or std::hash: they may change
// between processes and builds.)
//
// How the bits are used by blocked filters (see docs/DESIGN.md):
//   block  = (hi * blocks) >> 64            64-bit fastrange: uniform for any block count < 2^64
//   start  = hi mod slices                  first slice of the key's k consecutive slices
//   probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32,   h1 = lo mod 2^32, h2 = lo >> 32
// Taking the top bits of a 32-bit product (rather than the sum mod 64) keeps 2^64 distinct probe
// patterns per block, and the per-probe odd salt keeps the probes independent of each other.
//
// Keys may be byte strings (std::string_view), unsigned 64-bit integers (hashed as their 8
// little-endian bytes, so an integer and its 8-byte string form collide on purpose), or a KeyHash
// the caller computed itself (its 128 bits must be uniformly distributed).
#ifndef BLOOMERY_KEY_H_
#define BLOOMERY_KEY_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bloomery {

// Seed used when FilterOptions leaves it unset: the first 64 bits of pi's fractional part.
inline constexpr uint64_t kDefaultSeed = 0x243F6A8885A308D3ull;

// Identifies the key hash in filter files; a different function would get a new id.
inline constexpr uint32_t kHashIdXxh3_128 = 1;

struct KeyHash {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const KeyHash&, const KeyHash&) = default;
};

// XXH3-128 of `key` with `seed`. Thread-safe, allocation-free; ~3-5 ns for short keys.
[[nodiscard]] KeyHash HashKey(std::string_view key, uint64_t seed) noexcept;
// XXH3-128 of the 8 little-endian bytes of `key`: xxHash 0.8's path for 4..8-byte inputs,
// written out inline (one 64x64->128 multiply and two xorshift-multiply rounds) so that a filter's
// single-key call on an integer hashes in the caller's loop. tests/key_test.cc holds it
// bit-identical to libxxhash's XXH3_128bits_withSeed.
[[nodiscard]] inline KeyHash HashKey(uint64_t key, uint64_t seed) noexcept {
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

// Batch forms: out[i] = HashKey(keys[i], seed) for i < count.
void HashKeys(const std::string_view* keys, size_t count, uint64_t seed, KeyHash* out) noexcept;
void HashKeys(const uint64_t* keys, size_t count, uint64_t seed, KeyHash* out) noexcept;

}  // namespace bloomery

#endif  // BLOOMERY_KEY_H_
