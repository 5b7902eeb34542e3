// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/key.h"

#include <doctest/doctest.h>
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <set>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "layouts/internal/block_layout.h"
#include "test_util.h"

namespace bloomery {
namespace {

using detail::BlockIndex;
using detail::LineMask;
using detail::MakeMaskScalar;

// Whether a hasher's seed or integer hash can be assigned alone (its premixed constants stale).
template <typename Hasher>
constexpr bool kAssignsAField = requires(Hasher h) {
  h.seed = 1;
}
|| requires(Hasher h) { h.integers = IntegerHash::kMix; };

TEST_CASE("HashKey is XXH3-128 with the seed") {
  for (const char* text :
       {"", "a", "https://example.com/a", "a fairly long key of 40+ bytes......."}) {
    const XXH128_hash_t want = XXH3_128bits_withSeed(text, std::strlen(text), 42);
    const KeyHash got = HashKey(std::string_view(text), 42);
    CHECK(got.lo == want.low64);
    CHECK(got.hi == want.high64);
  }
  CHECK(HashKey("x", 1) != HashKey("x", 2));
}

TEST_CASE("the inline integer hash is libxxhash's XXH3-128 of the 8 bytes, for any key and seed") {
  testing::SplitMix64 rng(11);
  const uint64_t special[] = {0, 1, ~uint64_t{0}, uint64_t{1} << 63, 0xFFFFFFFFull, kDefaultSeed};
  auto check = [](uint64_t key, uint64_t seed) {
    const XXH128_hash_t want = XXH3_128bits_withSeed(&key, sizeof(key), seed);
    const KeyHash got = HashKey(key, seed);
    REQUIRE(got.lo == want.low64);
    REQUIRE(got.hi == want.high64);
  };
  for (uint64_t key : special) {
    for (uint64_t seed : special) check(key, seed);
  }
  for (int i = 0; i < 100'000; ++i) check(rng.Next(), rng.Next());
}

TEST_CASE("an integer key hashes as its 8 little-endian bytes") {
  const uint64_t value = 0x0123456789ABCDEFull;
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  CHECK(HashKey(value, kDefaultSeed) == HashKey(std::string_view(bytes, 8), kDefaultSeed));
  std::vector<uint64_t> keys = {1, 2, 3};
  std::vector<KeyHash> out(3);
  HashKeys(keys.data(), keys.size(), 7, out.data());
  for (size_t i = 0; i < keys.size(); ++i) CHECK(out[i] == HashKey(keys[i], 7));
}

// The high and low 64 bits of x * c, xored, with 32-bit limbs (no __int128).
uint64_t FoldedProductReference(uint64_t x, uint64_t c) {
  const uint64_t x0 = x & 0xFFFFFFFFu, x1 = x >> 32, c0 = c & 0xFFFFFFFFu, c1 = c >> 32;
  const uint64_t p00 = x0 * c0, p01 = x0 * c1, p10 = x1 * c0, p11 = x1 * c1;
  const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  const uint64_t high = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
  const uint64_t low = (middle << 32) | (p00 & 0xFFFFFFFFu);
  return high ^ low;
}

// MixKey's definition.
KeyHash MixReference(uint64_t key, uint64_t seed) {
  const uint64_t lo = FoldedProductReference(key ^ seed, 0x9E3779B97F4A7C15ull);
  return KeyHash{lo, FoldedProductReference(lo, 0xD6E8FEB86659FD93ull)};
}

TEST_CASE("MixKey is its definition, and its values are part of the file format") {
  testing::SplitMix64 rng(12);
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t key = rng.Next(), seed = rng.Next();
    REQUIRE(MixKey(key, seed) == MixReference(key, seed));
  }
  // Computed with arbitrary-precision integers: a filter saved with hash_id 2 finds its integer
  // keys only while these hold.
  CHECK(MixKey(0, kDefaultSeed) == KeyHash{0xE18485764BA03644ull, 0xE88D2CD17C058B32ull});
  CHECK(MixKey(1, kDefaultSeed) == KeyHash{0x4FCDFCACCA5AAA31ull, 0xEDDE968D37237E9Full});
  CHECK(MixKey(12345678901234567890ull, 42) ==
        KeyHash{0x95BBCC58096AAE50ull, 0x55F68B18A76842F9ull});
  CHECK(MixKey(1, 1) != MixKey(1, 2));
  // The seed is xored into the key, as HashOptions::seed warns: seeds 0 and 1 swap keys 2i and
  // 2i + 1, so their filters over 0..2n-1 hold the same bits.
  CHECK(MixKey(1, 2) == MixKey(3, 0));
  CHECK(MixKey(12345678901234567890ull, 42) == MixKey(12345678901234567890ull ^ 42 ^ 7, 7));
}

// SeededMixKey's definition: the offset and the multiplier are the two SplitMix64 outputs that
// follow the seed (testing::SplitMix64 is that generator), then MixReference's two folds.
KeyHash SeededMixReference(uint64_t key, uint64_t seed) {
  testing::SplitMix64 premix(seed);
  const uint64_t offset = premix.Next();
  const uint64_t multiplier = premix.Next() | 1;
  const uint64_t lo = FoldedProductReference(key ^ offset, multiplier);
  return KeyHash{lo, FoldedProductReference(lo, 0xD6E8FEB86659FD93ull)};
}

TEST_CASE("SeededMixKey is its definition, and its values are part of the file format") {
  testing::SplitMix64 rng(14);
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t key = rng.Next(), seed = rng.Next();
    REQUIRE(SeededMixKey(key, seed) == SeededMixReference(key, seed));
    REQUIRE(SeededMixKey(key, PremixSeed(seed)) == SeededMixKey(key, seed));
  }
  static_assert(PremixSeed(0).multiplier % 2 == 1);
  // Computed with arbitrary-precision integers: a filter saved with hash_id 3 finds its integer
  // keys only while these hold.
  CHECK(PremixSeed(0) == MixSeed{0xE220A8397B1DCDAFull, 0x6E789E6AA1B965F5ull});
  CHECK(SeededMixKey(0, kDefaultSeed) == KeyHash{0x5FCF28798FC194DEull, 0x72EB9EEBC8C7E494ull});
  CHECK(SeededMixKey(1, kDefaultSeed) == KeyHash{0xA8242B22B2DA1B56ull, 0x36AB5A151DDEEB54ull});
  CHECK(SeededMixKey(12345678901234567890ull, 42) ==
        KeyHash{0x906F4584F1AB0C88ull, 0x06FB13C8C8D0605Dull});
  // The seed is not a xor of the key: MixKey's identity does not carry over.
  CHECK(SeededMixKey(1, 2) != SeededMixKey(3, 0));
  CHECK(SeededMixKey(12345678901234567890ull, 42) !=
        SeededMixKey(12345678901234567890ull ^ 42 ^ 7, 7));
}

TEST_CASE("kSeededMix: seeds 0..3 give four different filters of 0..99,999; kMix gives one") {
  // kMix xors the seed into the key and 0..99,999 is closed under xor by 1, 2 and 3 (100,000 is a
  // multiple of 4): its four filters hold the same bits, the weakness kSeededMix removes.
  for (Layout layout : {Layout::kWord64, Layout::kBlock256}) {
    CAPTURE(LayoutName(layout));
    for (IntegerHash integers : {IntegerHash::kMix, IntegerHash::kSeededMix}) {
      CAPTURE(IntegerHashName(integers));
      std::set<std::string> distinct;
      for (uint64_t seed = 0; seed < 4; ++seed) {
        absl::StatusOr<BlockedFilter> f =
            BlockedFilter::Create({.capacity = 100'000,
                                   .fpr = 0.01,
                                   .layout = layout,
                                   .hashing = {.seed = seed, .integer_hash = integers}});
        REQUIRE(f.ok());
        for (uint64_t key = 0; key < 100'000; ++key) (void)f->Insert(key);
        const std::span<const uint8_t> bytes = f->bytes();
        distinct.emplace(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }
      CHECK(distinct.size() == (integers == IntegerHash::kMix ? 1u : 4u));
    }
  }
}

TEST_CASE("a KeyHasher hashes integers as its IntegerHash says and strings always by XXH3") {
  const KeyHasher xxh3{99, IntegerHash::kXxh3};
  const KeyHasher mix{99, IntegerHash::kMix};
  const KeyHasher seeded{99, IntegerHash::kSeededMix};
  CHECK(xxh3(uint64_t{7}) == HashKey(uint64_t{7}, 99));
  CHECK(mix(uint64_t{7}) == MixKey(7, 99));
  CHECK(seeded(uint64_t{7}) == SeededMixKey(7, 99));
  CHECK(HashInteger<IntegerHash::kSeededMix>(7, seeded) == SeededMixKey(7, 99));
  CHECK(HashInteger<IntegerHash::kMix>(7, mix) == MixKey(7, 99));
  CHECK(mix(std::string_view("seven")) == HashKey("seven", 99));
  CHECK(seeded(std::string_view("seven")) == HashKey("seven", 99));
  CHECK(xxh3 != mix);
  CHECK(seeded != mix);
  CHECK(seeded != KeyHasher{98, IntegerHash::kSeededMix});
  CHECK(seeded == KeyHasher{99, IntegerHash::kSeededMix});
  // The default hasher premixes the default seed, as one built from it does.
  CHECK(KeyHasher{} == KeyHasher{kDefaultSeed, IntegerHash::kXxh3});
  // Its constants are premixed from its seed and integer hash, so neither can change alone: a
  // hasher changes only by assigning a whole new one.
  static_assert(!kAssignsAField<KeyHasher>);
  KeyHasher reassigned;
  reassigned = seeded;
  CHECK(reassigned(uint64_t{7}) == seeded(uint64_t{7}));
  // Both mixes run SeededMixKey: under kMix with the seed and MixKey's multiplier, which is MixKey.
  CHECK(mix.mixes());
  CHECK(seeded.mixes());
  CHECK_FALSE(xxh3.mixes());
  testing::SplitMix64 keys_and_seeds(15);
  for (int i = 0; i < 10'000; ++i) {
    const uint64_t key = keys_and_seeds.Next(), seed = keys_and_seeds.Next();
    const KeyHasher hasher{seed, IntegerHash::kMix};
    REQUIRE(SeededMixKey(key, hasher.premixed()) == MixKey(key, seed));
    REQUIRE(hasher(key) == MixKey(key, seed));
  }
  // The values are the file's hash_id: every file written before hash_id 2 existed says 1.
  CHECK(static_cast<uint32_t>(IntegerHash::kXxh3) == 1);
  CHECK(static_cast<uint32_t>(IntegerHash::kMix) == 2);
  CHECK(static_cast<uint32_t>(IntegerHash::kSeededMix) == 3);
  CHECK(IsIntegerHash(1));
  CHECK(IsIntegerHash(2));
  CHECK(IsIntegerHash(3));
  CHECK_FALSE(IsIntegerHash(0));  // kAuto is an option, never a file's hash_id
  CHECK_FALSE(IsIntegerHash(4));
  CHECK(IntegerHashName(IntegerHash::kMix) == "mix");
  CHECK(IntegerHashName(IntegerHash::kSeededMix) == "seeded-mix");
  CHECK(IntegerHashName(IntegerHash::kXxh3) == "xxh3");
  CHECK(IntegerHashName(IntegerHash::kAuto) == "auto");
  testing::SplitMix64 rng(13);
  std::vector<uint64_t> keys(1000);
  for (uint64_t& key : keys) key = rng.Next();
  for (const KeyHasher& hasher : {xxh3, mix, seeded}) {
    std::vector<KeyHash> out(keys.size());
    HashKeys(keys.data(), keys.size(), hasher, out.data());
    for (size_t i = 0; i < keys.size(); ++i) REQUIRE(out[i] == hasher(keys[i]));
  }
}

TEST_CASE("fastrange block index is uniform far past 2^32 blocks") {
  const uint64_t blocks = (uint64_t{3} << 32) + 7;  // 1.5 TiB worth of lines
  testing::SplitMix64 rng(1);
  constexpr int kBuckets = 64;
  std::vector<int> histogram(kBuckets, 0);
  constexpr int kDraws = 640'000;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t b = BlockIndex(KeyHash{rng.Next(), rng.Next()}, blocks);
    REQUIRE(b < blocks);
    ++histogram[static_cast<size_t>(static_cast<unsigned __int128>(b) * kBuckets / blocks)];
  }
  // Chi-square with 63 degrees of freedom: 120 is far in the tail (p ~ 1e-5).
  double chi2 = 0;
  for (int count : histogram) chi2 += (count - 10'000.0) * (count - 10'000.0) / 10'000.0;
  CHECK(chi2 < 120);
  CHECK(BlockIndex(KeyHash{0, ~uint64_t{0}}, blocks) == blocks - 1);
  CHECK(BlockIndex(KeyHash{0, 0}, blocks) == 0);
}

TEST_CASE("a key's mask has exactly k bits, one in each of k consecutive slices") {
  testing::SplitMix64 rng(2);
  for (uint32_t k = 1; k <= 16; ++k) {
    const uint32_t slices = k <= 8 ? 8 : 16;
    const uint32_t slice_bits = 512 / slices;
    for (int trial = 0; trial < 2000; ++trial) {
      const KeyHash h{rng.Next(), rng.Next()};
      LineMask mask;
      MakeMaskScalar(h, k, mask);
      std::set<uint32_t> used;
      for (uint32_t bit = 0; bit < 512; ++bit) {
        if (mask.word[bit / 64] >> (bit % 64) & 1) used.insert(bit / slice_bits);
      }
      int total = 0;
      for (uint64_t w : mask.word) total += std::popcount(w);
      REQUIRE(total == static_cast<int>(k));
      REQUIRE(used.size() == k);
      const uint32_t start = static_cast<uint32_t>(h.hi % slices);
      for (uint32_t i = 0; i < k; ++i) REQUIRE(used.count((start + i) % slices) == 1);
    }
  }
}

TEST_CASE("probe positions within a slice are uniform") {
  testing::SplitMix64 rng(3);
  std::vector<int> per_bit(64, 0);
  for (int trial = 0; trial < 64'000; ++trial) {
    LineMask mask;
    MakeMaskScalar(KeyHash{rng.Next(), rng.Next()}, 8, mask);
    per_bit[std::countr_zero(mask.word[5])]++;  // slice 5 is always used when k == 8
  }
  double chi2 = 0;
  for (int count : per_bit) chi2 += (count - 1000.0) * (count - 1000.0) / 1000.0;
  CHECK(chi2 < 120);  // 63 degrees of freedom
}

}  // namespace
}  // namespace bloomery
