// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// key.h: how a key becomes the 128 bits (KeyHash) every filter works from.
//
// Every key is hashed once, by XXH3-128 (xxHash 0.8) with the filter's 64-bit seed; uint64_t keys
// by the filter's IntegerHash, its hash_id in the file (the default: kSeededMix for word64 and
// block256, kXxh3 for the line, options.h's ResolveIntegerHash). What each does with the seed:
//   1 kXxh3       XXH3-128 of the integer's 8 little-endian bytes (an integer and its 8-byte string
//                 are one key); the seed enters XXH3's secret.
//   2 kMix        MixKey: the seed xored into the key, so seeds that differ in low bits give alike
//                 filters of small or consecutive integers.
//   3 kSeededMix  SeededMixKey: the seed premixed once per filter: two seeds, unrelated filters.
// Hash and seed are part of a filter's identity: filters merge only when both match. (Never
// absl::Hash or std::hash: they may change between processes and builds.) A caller's own KeyHash
// must have uniformly distributed bits.
//
// How blocked filters use the bits (docs/FORMAT.md, "Layout codes", for each layout code): the
// block is (hi * blocks) >> 64. The line's (k <= 8) and block256's fields probe take the start
// slice from lo mod 8 and each slice's bit from its own field of lo (detail/probe_common.h), so
// block, start and bits share no hash bit. word64 takes its start from hi mod 8 and probe i's bit
// from the top 3 bits of byte i of lo. The salted probe (the line with k > 8, and files of layout
// codes 0 and 1) puts probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32, h1 and h2 the
// halves of lo, from the start hi mod slices.
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

// XXH3-128 of `key` with `seed`. Thread-safe, allocation-free.
[[nodiscard]] BLOOMERY_EXPORT KeyHash HashKey(std::string_view key, uint64_t seed) noexcept;
namespace detail {
// The 128-bit product x * c: its low half, the high half in *high. On x86-64 one `mul` in inline
// assembly, whose outputs are two plain registers (GCC spills an __int128 pair in busy loops).
[[nodiscard, gnu::always_inline]] constexpr uint64_t WideMultiply(uint64_t x, uint64_t c,
                                                                  uint64_t* high) noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!__builtin_is_constant_evaluated()) {
    uint64_t low;
    asm("mulq %3" : "=a"(low), "=d"(*high) : "a"(x), "rm"(c));
    return low;
  }
#endif
  const unsigned __int128 m = static_cast<unsigned __int128>(x) * c;
  *high = static_cast<uint64_t>(m >> 64);
  return static_cast<uint64_t>(m);
}
}  // namespace detail

namespace detail {
// XXH3-128's value xored into an 8-byte key under `seed` (its 4..8-byte path): a function of the
// seed alone, which KeyHasher computes once per filter.
[[nodiscard]] constexpr uint64_t Xxh3IntegerOffset(uint64_t seed) noexcept {
  constexpr uint64_t kSecretFlip = 0xC4F023344DC994ACull;  // secret bytes 16..23 ^ 24..31
  return kSecretFlip +
         (seed ^ static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32);
}
// XXH3's multiplier of an 8-byte key: PRIME64_1 + (8 << 2).
inline constexpr uint64_t kXxh3IntegerMultiplier = 0x9E3779B185EBCA87ull + (8 << 2);
// XXH3-128 of the 8 little-endian bytes of `key`, from Xxh3IntegerOffset(seed) and
// kXxh3IntegerMultiplier.
[[nodiscard, gnu::always_inline]] constexpr KeyHash Xxh3Integer(uint64_t key, uint64_t offset,
                                                                uint64_t multiplier) noexcept {
  uint64_t hi = 0;
  uint64_t lo = WideMultiply(key ^ offset, multiplier, &hi);
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
}  // namespace detail

// XXH3-128 of the 8 little-endian bytes of `key` (libxxhash's XXH3_128bits_withSeed), inline.
[[nodiscard, gnu::always_inline]] constexpr KeyHash HashKey(uint64_t key, uint64_t seed) noexcept {
  return detail::Xxh3Integer(key, detail::Xxh3IntegerOffset(seed), detail::kXxh3IntegerMultiplier);
}

namespace detail {
// The two halves of x * c (64 x 64 -> 128 bits) folded by xor.
[[nodiscard, gnu::always_inline]] constexpr uint64_t FoldedProduct(uint64_t x,
                                                                   uint64_t c) noexcept {
  uint64_t high = 0;
  const uint64_t low = WideMultiply(x, c, &high);
  return high ^ low;
}
}  // namespace detail

// IntegerHash::kMix: lo = FoldedProduct(key ^ seed, 2^64/phi), hi = FoldedProduct(lo, a second odd
// constant). Two multiplies, a few instructions against XXH3's ~25; the second fold makes the
// block (hi) and the probes (lo) independent (one fold misses the plan's FPR: docs/DESIGN.md,
// "Tried and rejected"). The seed is only xored in: MixKey(k, s) == MixKey(k ^ s ^ t, t).
namespace detail {
// MixKey's first and second multipliers (SeededMixKey's second).
inline constexpr uint64_t kMixFirst = 0x9E3779B97F4A7C15ull;
inline constexpr uint64_t kMixSecond = 0xD6E8FEB86659FD93ull;
}  // namespace detail
[[nodiscard, gnu::always_inline]] inline KeyHash MixKey(uint64_t key, uint64_t seed) noexcept {
  const uint64_t lo = detail::FoldedProduct(key ^ seed, detail::kMixFirst);
  return KeyHash{lo, detail::FoldedProduct(lo, detail::kMixSecond)};
}

// SeededMixKey's per-filter constants, derived from the seed once (PremixSeed).
struct MixSeed {
  uint64_t offset = 0;      // xored into each key
  uint64_t multiplier = 1;  // odd: the first fold's factor
  friend bool operator==(const MixSeed&, const MixSeed&) = default;
};

namespace detail {
// One SplitMix64 step (java.util.SplittableRandom): advances `state`, returns its mix.
[[nodiscard]] constexpr uint64_t SplitMix64(uint64_t& state) noexcept {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace detail

// The two SplitMix64 outputs after `seed`: the offset and (made odd) the multiplier, each bit of
// the seed reaching each bit of both. Part of the file format (hash_id 3).
[[nodiscard]] constexpr MixSeed PremixSeed(uint64_t seed) noexcept {
  const uint64_t offset = detail::SplitMix64(seed);
  return MixSeed{offset, detail::SplitMix64(seed) | 1};
}

// IntegerHash::kSeededMix: lo = FoldedProduct(key ^ premixed.offset, premixed.multiplier), hi =
// FoldedProduct(lo, MixKey's second constant): MixKey's cost per key, the premix paid once.
[[nodiscard, gnu::always_inline]] constexpr KeyHash SeededMixKey(uint64_t key,
                                                                 const MixSeed& premixed) noexcept {
  const uint64_t lo = detail::FoldedProduct(key ^ premixed.offset, premixed.multiplier);
  return KeyHash{lo, detail::FoldedProduct(lo, detail::kMixSecond)};
}
// The same from the seed itself (the premix per call: for tests and one-off hashes).
[[nodiscard]] constexpr KeyHash SeededMixKey(uint64_t key, uint64_t seed) noexcept {
  return SeededMixKey(key, PremixSeed(seed));
}

// How a filter hashes integer keys (strings are XXH3-128 under every one): the file's hash_id, set
// at creation (HashOptions::integer_hash) and part of the filter's identity. The file comment says
// what each does with the seed.
enum class IntegerHash : uint32_t {
  kAuto = 0,  // an option only: the layout's default (ResolveIntegerHash, options.h)
  kXxh3 = 1,
  kMix = 2,
  kSeededMix = 3,
};

// "xxh3", "mix", "seeded-mix" or "auto": the name the CLI and Python use.
[[nodiscard]] constexpr std::string_view IntegerHashName(IntegerHash integers) noexcept {
  switch (integers) {
    case IntegerHash::kAuto:
      return "auto";
    case IntegerHash::kMix:
      return "mix";
    case IntegerHash::kSeededMix:
      return "seeded-mix";
    default:
      return "xxh3";
  }
}

// Whether `hash_id` names an IntegerHash (a file's hash_id, or an option cast from an integer).
[[nodiscard]] constexpr bool IsIntegerHash(uint32_t hash_id) noexcept {
  return hash_id == static_cast<uint32_t>(IntegerHash::kXxh3) ||
         hash_id == static_cast<uint32_t>(IntegerHash::kMix) ||
         hash_id == static_cast<uint32_t>(IntegerHash::kSeededMix);
}

// An integer key's hash under kIntegers (kXxh3 or kMix; kSeededMix takes a hasher, below).
template <IntegerHash kIntegers>
[[nodiscard, gnu::always_inline]] inline KeyHash HashInteger(uint64_t key, uint64_t seed) noexcept {
  static_assert(kIntegers == IntegerHash::kXxh3 || kIntegers == IntegerHash::kMix,
                "kSeededMix hashes by the premixed seed: HashInteger<kIntegers>(key, hasher)");
  if constexpr (kIntegers == IntegerHash::kMix) {
    return MixKey(key, seed);
  } else {
    return HashKey(key, seed);
  }
}

// One filter's key -> KeyHash mapping: KeyHasher{seed, integers}, its per-filter constants
// premixed once. Immutable but for assignment of a whole hasher. Equal hashers hash alike.
class KeyHasher {
 public:
  constexpr KeyHasher() noexcept = default;
  constexpr KeyHasher(uint64_t hash_seed, IntegerHash integer_hash) noexcept
      : seed_(hash_seed), integers_(integer_hash), premixed_(Premixed(hash_seed, integer_hash)) {}

  [[nodiscard]] constexpr uint64_t seed() const noexcept { return seed_; }
  [[nodiscard]] constexpr IntegerHash integers() const noexcept { return integers_; }
  // The integer hash's per-filter constants, so that no key pays for the seed: PremixSeed(seed)
  // (kSeededMix); the seed and MixKey's first multiplier, SeededMixKey then being MixKey (kMix);
  // XXH3's offset and multiplier (kXxh3, and any value that hashes as it).
  [[nodiscard, gnu::always_inline]] constexpr const MixSeed& premixed() const noexcept {
    return premixed_;
  }

  [[nodiscard, gnu::always_inline]] KeyHash operator()(std::string_view key) const noexcept {
    return HashKey(key, seed_);
  }
  [[nodiscard, gnu::always_inline]] KeyHash operator()(uint64_t key) const noexcept {
    return mixes() ? SeededMixKey(key, premixed_)
                   : detail::Xxh3Integer(key, premixed_.offset, premixed_.multiplier);
  }
  // Whether integers are hashed by SeededMixKey with premixed() (kMix, kSeededMix).
  [[nodiscard, gnu::always_inline]] constexpr bool mixes() const noexcept {
    return integers_ == IntegerHash::kMix || integers_ == IntegerHash::kSeededMix;
  }
  friend bool operator==(const KeyHasher&, const KeyHasher&) = default;

 private:
  [[nodiscard]] static constexpr MixSeed Premixed(uint64_t hash_seed,
                                                  IntegerHash integer_hash) noexcept {
    if (integer_hash == IntegerHash::kMix) return MixSeed{hash_seed, detail::kMixFirst};
    if (integer_hash == IntegerHash::kSeededMix) return PremixSeed(hash_seed);
    return MixSeed{detail::Xxh3IntegerOffset(hash_seed), detail::kXxh3IntegerMultiplier};
  }

  uint64_t seed_ = kDefaultSeed;
  IntegerHash integers_ = IntegerHash::kXxh3;
  MixSeed premixed_ = Premixed(kDefaultSeed, IntegerHash::kXxh3);
};

// The integer hash kIntegers (fixed at compile time) of `key`, from a hasher's premixed()
// constants.
template <IntegerHash kIntegers>
[[nodiscard, gnu::always_inline]] inline KeyHash HashInteger(uint64_t key,
                                                             const MixSeed& premixed) noexcept {
  static_assert(kIntegers == IntegerHash::kXxh3 || kIntegers == IntegerHash::kMix ||
                kIntegers == IntegerHash::kSeededMix);
  if constexpr (kIntegers == IntegerHash::kXxh3) {
    return detail::Xxh3Integer(key, premixed.offset, premixed.multiplier);
  } else {
    return SeededMixKey(key, premixed);
  }
}
// hasher(key) for a caller that fixed hasher.integers() == kIntegers at compile time.
template <IntegerHash kIntegers>
[[nodiscard, gnu::always_inline]] inline KeyHash HashInteger(uint64_t key,
                                                             const KeyHasher& hasher) noexcept {
  return HashInteger<kIntegers>(key, hasher.premixed());
}

// Batch forms: out[i] = HashKey(keys[i], seed), or hasher(keys[i]), for i < count.
BLOOMERY_EXPORT void HashKeys(const std::string_view* keys, size_t count, uint64_t seed,
                              KeyHash* out) noexcept;
BLOOMERY_EXPORT void HashKeys(const uint64_t* keys, size_t count, uint64_t seed,
                              KeyHash* out) noexcept;
BLOOMERY_EXPORT void HashKeys(const uint64_t* keys, size_t count, const KeyHasher& hasher,
                              KeyHash* out) noexcept;

}  // namespace bloomery

#endif  // BLOOMERY_KEY_H_
