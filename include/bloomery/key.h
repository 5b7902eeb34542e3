// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// key.h: how a key becomes the 128 bits every filter works from.
//
// Every key is hashed exactly once, with XXH3-128 (xxHash 0.8) and the filter's 64-bit seed, into a
// KeyHash; a filter created with IntegerHash::kSeededMix (a word64 or block256 filter's default,
// options.h's ResolveIntegerHash) or kMix hashes its uint64_t keys with SeededMixKey or MixKey
// instead. What each hash_id does with the seed:
//   1 kXxh3       XXH3-128's own seeding (the seed enters its secret): two seeds, unrelated hashes.
//   2 kMix        xored into the key: MixKey(k, s) == MixKey(k ^ s ^ t, t), so seeds that differ
//                 in low bits give alike filters of small or consecutive integers.
//   3 kSeededMix  premixed once per filter (MixSeed: two SplitMix64 steps) into the value xored
//                 into the key and the odd multiplier: two seeds, unrelated filters, and the
//                 per-key cost of MixKey.
// The hash functions and the seed are part of a filter's identity and of its file format (hash_id,
// seed): two filters can be merged only if both match. (Never absl::Hash or std::hash: they may
// change between processes and builds.)
//
// How the bits are used by blocked filters (docs/FORMAT.md, "Layout codes", has every code's):
//   block  = (hi * blocks) >> 64            64-bit fastrange: uniform for any block count < 2^64
// The fields probe (Probe::kFields, every new filter): the start slice is lo mod 8 and each
// slice's bit a field of lo's other bits (detail/probe_common.h, SliceField), so block, start and
// bits share no hash bit. word64's: start hi mod 8, probe i's bit the top 3 bits of byte i of lo.
// The salted probe (files of the line and block256 written before kFields): start hi mod slices,
// probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32, h1 = lo mod 2^32, h2 = lo >> 32.
//
// Keys may be byte strings (std::string_view), unsigned 64-bit integers (under kXxh3, the line's
// default, hashed as their 8 little-endian bytes, so an integer and its 8-byte
// string form collide on purpose; under kMix by MixKey, under kSeededMix by SeededMixKey), or a
// KeyHash the caller computed itself (its 128 bits must be uniformly distributed).
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
namespace detail {
// The 128-bit product x * c as its low half, the high half in *high. On x86-64 one `mul` in
// inline assembly, whose two outputs are plain registers: GCC 12 keeps an unsigned __int128 in a
// register pair that it spills to the stack and reloads in loops of many live values.
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
// XXH3-128's value xored into an 8-byte key under `seed` (xxHash 0.8's path for 4..8-byte inputs:
// its default secret's bytes 16..31 folded, plus the seed with its low half byte-swapped into the
// high half). A function of the seed alone: KeyHasher computes it once per filter.
[[nodiscard]] constexpr uint64_t Xxh3IntegerOffset(uint64_t seed) noexcept {
  constexpr uint64_t kSecretFlip = 0xC4F023344DC994ACull;  // secret bytes 16..23 ^ 24..31
  return kSecretFlip +
         (seed ^ static_cast<uint64_t>(__builtin_bswap32(static_cast<uint32_t>(seed))) << 32);
}
// XXH3's multiplier of an 8-byte key: its PRIME64_1 plus the length shifted left by 2.
inline constexpr uint64_t kXxh3IntegerMultiplier = 0x9E3779B185EBCA87ull + (8 << 2);
// XXH3-128 of the 8 little-endian bytes of `key`, from Xxh3IntegerOffset(seed) and
// kXxh3IntegerMultiplier: one 64x64->128 multiply and two xorshift-multiply rounds.
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

// XXH3-128 of the 8 little-endian bytes of `key`, inline, so that a filter's single-key call on an
// integer hashes in the caller's loop; bit-identical to libxxhash's XXH3_128bits_withSeed.
[[nodiscard, gnu::always_inline]] constexpr KeyHash HashKey(uint64_t key, uint64_t seed) noexcept {
  return detail::Xxh3Integer(key, detail::Xxh3IntegerOffset(seed), detail::kXxh3IntegerMultiplier);
}

namespace detail {
// The two halves of x * c (64 x 64 -> 128 bits) folded by xor: every input bit reaches the
// upper output bits through the high half and the lower ones through the low half.
[[nodiscard, gnu::always_inline]] constexpr uint64_t FoldedProduct(uint64_t x,
                                                                   uint64_t c) noexcept {
  uint64_t high = 0;
  const uint64_t low = WideMultiply(x, c, &high);
  return high ^ low;
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
// MixKey(k ^ s ^ t, t), which HashOptions::seed spells out for filters that differ by seed;
// SeededMixKey mixes the seed in first.
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
// One SplitMix64 step (Steele, Lea and Flood; java.util.SplittableRandom): advances `state` by
// 2^64/phi and returns its finalised value, a bijection of the new state.
[[nodiscard]] constexpr uint64_t SplitMix64(uint64_t& state) noexcept {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace detail

// The two SplitMix64 outputs that follow `seed`: the first is the offset, the second (made odd) the
// multiplier. Every bit of the seed reaches every bit of both, so seeds that differ in any way
// give unrelated offsets and multipliers. Part of the file format (hash_id 3).
[[nodiscard]] constexpr MixSeed PremixSeed(uint64_t seed) noexcept {
  const uint64_t offset = detail::SplitMix64(seed);
  return MixSeed{offset, detail::SplitMix64(seed) | 1};
}

// IntegerHash::kSeededMix: MixKey's two folds, with the seed premixed into the xored value and the
// first multiplier: lo = FoldedProduct(key ^ premixed.offset, premixed.multiplier), hi =
// FoldedProduct(lo, MixKey's second constant). Per key the instructions of MixKey (xor, multiply,
// fold, multiply, fold; the multiplier is a register either way, x86 has no 64-bit immediate
// multiply); the premix is paid once, by KeyHasher's constructor.
[[nodiscard, gnu::always_inline]] constexpr KeyHash SeededMixKey(uint64_t key,
                                                                 const MixSeed& premixed) noexcept {
  const uint64_t lo = detail::FoldedProduct(key ^ premixed.offset, premixed.multiplier);
  return KeyHash{lo, detail::FoldedProduct(lo, detail::kMixSecond)};
}
// The same from the seed itself (the premix per call: for tests and one-off hashes).
[[nodiscard]] constexpr KeyHash SeededMixKey(uint64_t key, uint64_t seed) noexcept {
  return SeededMixKey(key, PremixSeed(seed));
}

// How a filter hashes integer keys; byte strings are XXH3-128 under every one. The value is the
// file format's hash_id: chosen at creation (HashOptions::integer_hash), kept by Save and Load,
// and part of the filter's identity (filters hashing differently cannot be merged).
enum class IntegerHash : uint32_t {
  // Unset (an option, never a filter's or a file's): a new filter takes its layout's default,
  // ResolveIntegerHash (options.h): kSeededMix for kWord64 and kBlock256, kXxh3 for the line.
  kAuto = 0,
  // hash_id 1: XXH3-128 of the integer's 8 little-endian bytes (an integer and its 8-byte string
  // form are one key). Every filter before hash_id 2 existed.
  kXxh3 = 1,
  // hash_id 2: MixKey, the seed xored into the key (seeds differing in low bits hash small
  // integers alike). What word64 and block256 filters took by default before hash_id 3 existed.
  kMix = 2,
  // hash_id 3: SeededMixKey, MixKey's cost with the seed premixed: for filters whose keys are
  // integers and whose single-key calls are hot.
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

// An integer key's hash under kIntegers (kXxh3: HashKey; kMix: MixKey), chosen at compile time.
// kSeededMix needs the premixed seed: HashInteger(key, hasher) below.
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

// The key -> KeyHash mapping of one filter: its seed and its integer hash, and the mix's constants.
// Built by its constructor (KeyHasher{seed, integers}), which premixes; `seed` and `integers` are
// there to read (assigning one leaves `premixed` stale). Two hashers compare equal when they hash
// alike.
struct KeyHasher {
  uint64_t seed = kDefaultSeed;
  IntegerHash integers = IntegerHash::kXxh3;
  // The integer hash's per-filter constants, so that no key pays for the seed: under kSeededMix
  // PremixSeed(seed); under kMix the seed and MixKey's first multiplier, with which SeededMixKey
  // is MixKey (both mixes run one code, differing in two loaded values); under kXxh3 (and any
  // value that hashes as it) XXH3's offset and multiplier (detail::Xxh3Integer).
  MixSeed premixed = Premixed(kDefaultSeed, IntegerHash::kXxh3);

  constexpr KeyHasher() noexcept = default;
  constexpr KeyHasher(uint64_t hash_seed, IntegerHash integer_hash) noexcept
      : seed(hash_seed), integers(integer_hash), premixed(Premixed(hash_seed, integer_hash)) {}

  [[nodiscard, gnu::always_inline]] KeyHash operator()(std::string_view key) const noexcept {
    return HashKey(key, seed);
  }
  [[nodiscard, gnu::always_inline]] KeyHash operator()(uint64_t key) const noexcept {
    return mixes() ? SeededMixKey(key, premixed)
                   : detail::Xxh3Integer(key, premixed.offset, premixed.multiplier);
  }
  // Whether integers are hashed by a mix (kMix or kSeededMix: SeededMixKey with `premixed`).
  [[nodiscard, gnu::always_inline]] constexpr bool mixes() const noexcept {
    return integers == IntegerHash::kMix || integers == IntegerHash::kSeededMix;
  }
  friend bool operator==(const KeyHasher&, const KeyHasher&) = default;

 private:
  [[nodiscard]] static constexpr MixSeed Premixed(uint64_t hash_seed,
                                                  IntegerHash integer_hash) noexcept {
    if (integer_hash == IntegerHash::kMix) return MixSeed{hash_seed, detail::kMixFirst};
    if (integer_hash == IntegerHash::kSeededMix) return PremixSeed(hash_seed);
    return MixSeed{detail::Xxh3IntegerOffset(hash_seed), detail::kXxh3IntegerMultiplier};
  }
};

// An integer key's hash under kIntegers by `hasher` (whose integers must be kIntegers), chosen at
// compile time: KeyHasher's choice, for a caller that fixed the filter's integer hash
// (avx2::VisitProber).
template <IntegerHash kIntegers>
[[nodiscard, gnu::always_inline]] inline KeyHash HashInteger(uint64_t key,
                                                             const KeyHasher& hasher) noexcept {
  static_assert(kIntegers == IntegerHash::kXxh3 || kIntegers == IntegerHash::kMix ||
                kIntegers == IntegerHash::kSeededMix);
  if constexpr (kIntegers == IntegerHash::kXxh3) {
    return detail::Xxh3Integer(key, hasher.premixed.offset, hasher.premixed.multiplier);
  } else {
    return SeededMixKey(key, hasher.premixed);
  }
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
