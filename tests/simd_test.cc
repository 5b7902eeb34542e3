// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// Every SIMD target this build compiled and this CPU supports, held to the scalar reference of
// every stored layout (bloomery/detail/stored_layouts.h, layouts/internal/stored_layout_ops.h):
// identical masks, identical answers, and bit-identical filter bytes, for single and batch calls,
// in both concurrency modes, for every k the layout takes, block counts that are not powers of two
// and batches that are not multiples of any vector width.
#include "bloomery/simd.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/blocked_filter.h"
#if defined(__AVX2__)
#include "bloomery/blocked_filter_avx2.h"
#endif
#include "hwy/targets.h"
#include "layouts/block_kernels.h"
#include "layouts/internal/block_layout.h"
#include "layouts/internal/line_ops.h"
#include "layouts/internal/stored_layout_ops.h"
#include "test_util.h"

namespace bloomery {
namespace {

using detail::BlockIndex;
using detail::kWordsPerBlock;
using detail::LineMask;
using detail::MakeMaskScalar;
using testing::DistinctInts;
using testing::RacedInserts;
using testing::RaceSameKeys;
using testing::SplitMix64;

bool Contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Restores the best target when a test case ends, so the cases do not depend on their order.
struct RestoreBestTarget {
  ~RestoreBestTarget() { CHECK(ForceSimdTarget("best").ok()); }
};

// Hashes with every start slice, all-zero and all-one halves, and random bits.
std::vector<KeyHash> TestHashes(size_t random_count) {
  std::vector<KeyHash> hashes;
  for (uint64_t start = 0; start < 16; ++start) {
    hashes.push_back({0, start});
    hashes.push_back({~uint64_t{0}, ~uint64_t{15} | start});
    hashes.push_back({0xFFFFFFFF00000000ull, start});
    hashes.push_back({0x00000000FFFFFFFFull, start});
  }
  SplitMix64 rng(42);
  for (size_t i = 0; i < random_count; ++i) hashes.push_back({rng.Next(), rng.Next()});
  return hashes;
}

// Runs first (doctest's default order is the file's): nothing has chosen a target yet, so this
// sees the choice made from BLOOMERY_SIMD (tests/meson.build runs it with and without).
TEST_CASE("the initial target is the best one, or the one BLOOMERY_SIMD names") {
  const std::vector<std::string_view> supported = SupportedSimdTargets();
  REQUIRE(!supported.empty());
  const char* env = std::getenv("BLOOMERY_SIMD");
  if (env != nullptr && Contains(supported, env)) {
    CHECK(ActiveSimdTarget() == std::string_view(env));
  } else {
    CHECK(ActiveSimdTarget() == supported.front());
  }
}

TEST_CASE("supported targets match the CPU; ForceSimdTarget validates its argument") {
  RestoreBestTarget restore;
  const std::vector<std::string_view> supported = SupportedSimdTargets();
  const int64_t cpu = hwy::SupportedTargets();
  // The four targets compiled in; each is listed exactly when the CPU has it.
  const struct {
    std::string_view name;
    int64_t bit;
  } kTargets[] = {{"avx3", HWY_AVX3}, {"avx2", HWY_AVX2}, {"sse4", HWY_SSE4}};
  for (const auto& target : kTargets) {
    CAPTURE(target.name);
    CHECK(Contains(supported, target.name) == ((cpu & target.bit) != 0));
    const absl::Status s = ForceSimdTarget(target.name);
    if (Contains(supported, target.name)) {
      CHECK(s.ok());
      CHECK(ActiveSimdTarget() == target.name);
    } else {
      CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    }
  }
  CHECK(Contains(supported, "scalar"));
  CHECK(supported.back() == "scalar");    // best first, and scalar is the least
  CHECK(ForceSimdTarget("SCALAR").ok());  // case-insensitive
  CHECK(ActiveSimdTarget() == "scalar");
  CHECK(ForceSimdTarget("neon").code() == absl::StatusCode::kInvalidArgument);
  CHECK(ForceSimdTarget("").code() == absl::StatusCode::kInvalidArgument);
  CHECK(ActiveSimdTarget() == "scalar");  // a refused request changes nothing
  CHECK(ForceSimdTarget("best").ok());
  CHECK(ActiveSimdTarget() == supported.front());
}

// The words of a block of stored layout kBlockLayouts[stored].
uint32_t WordsOf(uint32_t stored) {
  return FindBlockShape(kBlockLayouts[stored].layout)->block_bits / 64;
}

// The stored layout's scalar reference (layouts/internal/stored_layout_ops.h) on the key's block of
// `words` (`blocks` blocks of the layout): sets the key's bits and answers whether one was missing.
bool ReferenceSet(uint32_t stored, uint64_t* words, const KeyHash& hash, uint64_t blocks,
                  uint32_t k) {
  return detail::ReferenceSetScalar(stored, words + BlockIndex(hash, blocks) * WordsOf(stored),
                                    hash, k, false);
}
// ... or answers whether all are set.
bool ReferenceTest(uint32_t stored, const uint64_t* words, const KeyHash& hash, uint64_t blocks,
                   uint32_t k) {
  return detail::ReferenceTestScalar(stored, words + BlockIndex(hash, blocks) * WordsOf(stored),
                                     hash, k, false);
}

// CheckLineOps for any stored layout's block: `test` and `set` (bound to `hash` and `k`) against
// its reference on a random block from empty to nearly full.
template <typename Test, typename Set>
void CheckBlockOps(SplitMix64& rng, uint32_t stored, const KeyHash& hash, uint32_t k, Test test,
                   Set set) {
  alignas(64) uint64_t block[8] = {};
  const uint32_t density = static_cast<uint32_t>(rng.Below(5));
  for (uint32_t w = 0; w < WordsOf(stored); ++w) {
    for (uint32_t d = 0; d < density; ++d) block[w] |= rng.Next();
  }
  alignas(64) uint64_t reference[8];
  std::memcpy(reference, block, sizeof(block));
  REQUIRE(test(block) == ReferenceTest(stored, reference, hash, 1, k));
  REQUIRE(set(block) == ReferenceSet(stored, reference, hash, 1, k));
  REQUIRE(std::memcmp(block, reference, sizeof(block)) == 0);
  REQUIRE(test(block));
}

TEST_CASE("every target builds the reference masks") {
  const std::vector<KeyHash> hashes = TestHashes(3000);
  std::vector<LineMask> masks(hashes.size());
  for (const simd::BlockKernels* kernels : simd::SupportedKernels()) {
    for (uint32_t k = kMinHashes; k <= kMaxHashes; ++k) {
      CAPTURE(kernels->name);
      CAPTURE(k);
      std::fill(masks.begin(), masks.end(), LineMask{{1, 2, 3, 4, 5, 6, 7, 8}});
      kernels->line().make_masks(hashes.data(), hashes.size(), k,
                                 reinterpret_cast<uint64_t*>(masks.data()));
      for (size_t i = 0; i < hashes.size(); ++i) {
        LineMask expected;
        MakeMaskScalar(hashes[i], k, expected);
        REQUIRE(std::memcmp(&masks[i], &expected, sizeof(LineMask)) == 0);
      }
    }
  }
}

// Runs `test` and `set` (a kernel's line operations, bound to `hash` and `k`) and the scalar
// reference side by side on a random line, from empty to nearly full (0 to 4 random words ORed) so
// that both answers occur often: the same answers and the same bytes.
template <typename Test, typename Set>
void CheckLineOps(SplitMix64& rng, const KeyHash& hash, uint32_t k, Test test, Set set) {
  alignas(64) uint64_t line[kWordsPerBlock];
  alignas(64) uint64_t expected[kWordsPerBlock];
  const uint32_t density = static_cast<uint32_t>(rng.Below(5));
  for (uint64_t& word : line) {
    word = 0;
    for (uint32_t d = 0; d < density; ++d) word |= rng.Next();
  }
  std::memcpy(expected, line, sizeof(line));
  LineMask mask;
  MakeMaskScalar(hash, k, mask);
  REQUIRE(test(line) == detail::TestBlockScalar(expected, mask, false));
  REQUIRE(set(line) == detail::SetBlockScalar(expected, mask, false));
  REQUIRE(std::memcmp(line, expected, sizeof(line)) == 0);
  REQUIRE(test(line));
}

TEST_CASE("every target tests and sets lines like the reference, in both modes") {
  const std::vector<KeyHash> hashes = TestHashes(500);
  SplitMix64 rng(7);
  for (const simd::BlockKernels* kernels : simd::SupportedKernels()) {
    for (bool concurrent : {false, true}) {
      for (uint32_t k = kMinHashes; k <= kMaxHashes; ++k) {
        CAPTURE(kernels->name);
        CAPTURE(concurrent);
        CAPTURE(k);
        for (const KeyHash& hash : hashes) {
          CheckLineOps(
              rng, hash, k,
              [&](const uint64_t* line) {
                return kernels->line().test_block(line, hash, k, concurrent);
              },
              [&](uint64_t* line) { return kernels->line().set_block(line, hash, k, concurrent); });
        }
      }
    }
  }
}

#if defined(__AVX2__)
// Only in the build for x86-64-v3 (simd_test_v3): the probe of bloomery/detail/stored_layouts.h,
// called directly.
TEST_CASE("the inline single-key probe (k <= 8) tests and sets lines like the reference") {
  const std::vector<KeyHash> hashes = TestHashes(2000);
  SplitMix64 rng(8);
  for (uint32_t k = kMinHashes; k <= 8; ++k) {
    CAPTURE(k);
    for (const KeyHash& hash : hashes) {
      CheckLineOps(
          rng, hash, k,
          [&](const uint64_t* line) {
            return detail::Test64(line, hash, detail::kUnusedProbes[k]);
          },
          [&](uint64_t* line) { return detail::Set64(line, hash, detail::kUnusedProbes[k]); });
    }
  }
}

TEST_CASE("every stored layout's inline probe tests and sets blocks like the reference") {
  const std::vector<KeyHash> hashes = TestHashes(2000);
  SplitMix64 rng(10);
  for (uint32_t stored = 0; stored < std::size(kBlockLayouts); ++stored) {
    for (bool concurrent : {false, true}) {
      for (uint32_t k = kMinHashes; k <= 8; ++k) {
        CAPTURE(LayoutName(kBlockLayouts[stored].layout));
        CAPTURE(ProbeName(kBlockLayouts[stored].probe));
        CAPTURE(concurrent);
        CAPTURE(k);
        const detail::UnusedProbes& unused = detail::kUnusedProbes[k];
        // The inline line and block256 inserts are single-writer only (BlockedFilter's
        // contract); word64's is inline in either mode.
        const bool set_concurrent = concurrent && kBlockLayouts[stored].layout == Layout::kWord64;
        for (const KeyHash& hash : hashes) {
          VisitBlockLayout(stored, [&]<uint32_t kIndex>() {
            CheckBlockOps(
                rng, stored, hash, k,
                [&](const uint64_t* block) {
                  return detail::TestInline<kIndex>(block, hash, unused);
                },
                [&](uint64_t* block) {
                  return detail::SetInline<kIndex>(block, hash, unused, set_concurrent);
                });
          });
        }
      }
    }
  }
}
#endif

// The filter's single-key calls (the inline probe of bloomery/detail/stored_layouts.h where this
// CPU runs AVX2); in the build for x86-64-v3 (simd_test_v3) two of every three go through
// bloomery/blocked_filter_avx2.h instead (a Prober, the Prober of the filter's shape and integer
// hash from VisitProber), so every path is held to the reference.
template <typename Key>
bool InsertOne(BlockedFilter& f, const Key& key, size_t i) {
#if defined(__AVX2__)
  if (i % 3 == 1) return avx2::Prober(f).Insert(key);
  if (i % 3 == 2) {
    return avx2::VisitProber(f, [&](const auto& probe) { return probe.Insert(key); });
  }
#endif
  (void)i;
  return f.Insert(key);
}

#if defined(__AVX2__)
// Every inline lookup path of bloomery/blocked_filter_avx2.h, checked to agree on `key`; returns
// the answer.
template <typename Key>
bool InlineMayContain(const BlockedFilter& f, const Key& key) {
  const bool answer = f.MayContain(key);
  const avx2::Prober probe(f);  // Prober<const BlockedFilter>: lookups only
  REQUIRE(probe.MayContain(key) == answer);
  REQUIRE(avx2::VisitProber(f, [&](const auto& shaped) { return shaped.MayContain(key); }) ==
          answer);
  return answer;
}
#endif

// The filter a reference implementation builds: every key's mask ORed into its block, in order.
struct Reference {
  std::vector<uint64_t> words;
  std::vector<bool> was_new;
};

Reference BuildReference(uint32_t stored, const std::vector<KeyHash>& hashes, uint64_t blocks,
                         uint32_t k) {
  const uint64_t bits = blocks * 64 * WordsOf(stored);
  Reference ref{std::vector<uint64_t>(WholeLineBytes(bits) / 8), {}};
  for (const KeyHash& hash : hashes) {
    ref.was_new.push_back(ReferenceSet(stored, ref.words.data(), hash, blocks, k));
  }
  return ref;
}

bool ReferenceMayContain(uint32_t stored, const Reference& ref, const KeyHash& hash,
                         uint64_t blocks, uint32_t k) {
  return ReferenceTest(stored, ref.words.data(), hash, blocks, k);
}

// Each shape's kernels (block_kernels.h ShapeKernels) against its scalar reference: masks, and
// test then set on random blocks from empty to nearly full, in both modes.
#if defined(__AVX2__)
TEST_CASE(
    "the inline word64 insert, concurrent: of two threads inserting the same new keys, one "
    "is told new" *
    doctest::test_suite("concurrency")) {
  // Each thread through the Prober of the filter's shape and integer hash (one fetch_or a key).
  const uint64_t n = uint64_t{1} << 18;
  absl::StatusOr<BlockedFilter> made = BlockedFilter::Create(
      {.capacity = n, .fpr = 0.01, .layout = Layout::kWord64, .memory = {.concurrent = true}});
  REQUIRE(made.ok());
  BlockedFilter& f = *made;
  const std::vector<uint64_t> keys = DistinctInts(n, 0);
  const RacedInserts raced = RaceSameKeys(keys, [&f](uint64_t key) {
    return avx2::VisitProber(f, [key](const auto& probe) { return probe.Insert(key); });
  });
  MESSAGE("keys told new twice: " << raced.twice << "; by neither: " << raced.never);
  CHECK(raced.twice == 0);
  CHECK(static_cast<double>(raced.never) <= 0.01 * static_cast<double>(n));
  CHECK(f.MayContainMany(keys) == n);
}
#endif

TEST_CASE(
    "the filter's own word64 insert, concurrent: its call path is the fetch_or, so of two "
    "threads inserting the same new keys one is told new" *
    doctest::test_suite("concurrency")) {
  const uint64_t n = uint64_t{1} << 18;
  for (IntegerHash integers : {IntegerHash::kXxh3, IntegerHash::kSeededMix}) {
    CAPTURE(IntegerHashName(integers));
    absl::StatusOr<BlockedFilter> made =
        BlockedFilter::Create({.capacity = n,
                               .fpr = 0.01,
                               .layout = Layout::kWord64,
                               .hashing = {.integer_hash = integers},
                               .memory = {.concurrent = true}});
    REQUIRE(made.ok());
    BlockedFilter& f = *made;
    const std::vector<uint64_t> keys = DistinctInts(n, 1);
    const RacedInserts raced = RaceSameKeys(keys, [&f](uint64_t key) { return f.Insert(key); });
    MESSAGE("keys told new twice: " << raced.twice << "; by neither: " << raced.never);
    CHECK(raced.twice == 0);
    CHECK(static_cast<double>(raced.never) <= 0.01 * static_cast<double>(n));
    CHECK(f.MayContainMany(keys) == n);
  }
}

TEST_CASE("every target makes, tests and sets every stored layout's blocks like the reference") {
  const std::vector<KeyHash> hashes = TestHashes(1000);
  SplitMix64 rng(9);
  for (const simd::BlockKernels* kernels : simd::SupportedKernels()) {
    for (uint32_t stored = 0; stored < std::size(kBlockLayouts); ++stored) {
      const simd::ShapeKernels& shape = kernels->shapes[stored];
      const uint32_t words = WordsOf(stored);
      for (bool concurrent : {false, true}) {
        const uint32_t max_hashes = FindBlockShape(kBlockLayouts[stored].layout)->max_hashes;
        for (uint32_t k = kMinHashes; k <= max_hashes; ++k) {
          CAPTURE(kernels->name);
          CAPTURE(LayoutName(kBlockLayouts[stored].layout));
          CAPTURE(ProbeName(kBlockLayouts[stored].probe));
          CAPTURE(concurrent);
          CAPTURE(k);
          // Aligned as the kernels' own mask arrays are (a LineMask's 64 bytes).
          std::vector<LineMask> storage(hashes.size());
          uint64_t* masks = storage.front().word;
          std::fill(masks, masks + hashes.size() * words, 0x5A5A);
          shape.make_masks(hashes.data(), hashes.size(), k, masks);
          for (size_t i = 0; i < hashes.size(); ++i) {
            uint64_t expected[8] = {};
            (void)ReferenceSet(stored, expected, hashes[i], 1, k);
            REQUIRE(std::memcmp(&masks[i * words], expected, words * 8) == 0);
            CheckBlockOps(
                rng, stored, hashes[i], k,
                [&](const uint64_t* block) {
                  return shape.test_block(block, hashes[i], k, concurrent);
                },
                [&](uint64_t* block) { return shape.set_block(block, hashes[i], k, concurrent); });
          }
        }
      }
    }
  }
}

TEST_CASE("every target builds bit-identical filters and gives the reference's answers") {
  RestoreBestTarget restore;
  // Block counts 1, 3, 7, 97 (prime) and 1000; key counts that overfill the small filters so both
  // answers occur, and batch lengths that no vector width divides.
  const uint64_t kBlockCounts[] = {1, 3, 7, 97, 1000};
  const size_t kBatchLengths[] = {1, 7, 33, 100, 1001};
  constexpr uint64_t kSeed = 0x5EED;
  for (std::string_view target : SupportedSimdTargets()) {
    REQUIRE(ForceSimdTarget(target).ok());
    for (uint32_t stored = 0; stored < std::size(kBlockLayouts); ++stored) {
      const BlockShape& shape = *FindBlockShape(kBlockLayouts[stored].layout);
      for (bool concurrent : {false, true}) {
        for (uint64_t blocks : kBlockCounts) {
          for (uint32_t k = kMinHashes; k <= shape.max_hashes; ++k) {
            // Each integer hash in turn (the inline probes specialise on it, VisitProber).
            constexpr IntegerHash kIntegerHashes[] = {IntegerHash::kXxh3, IntegerHash::kMix,
                                                      IntegerHash::kSeededMix};
            const IntegerHash integers = kIntegerHashes[(blocks + k) % 3];
            CAPTURE(target);
            CAPTURE(shape.name);
            CAPTURE(ProbeName(kBlockLayouts[stored].probe));
            CAPTURE(concurrent);
            CAPTURE(blocks);
            CAPTURE(k);
            CAPTURE(IntegerHashName(integers));
            FilterOptions o;
            o.bits = blocks * shape.block_bits;
            o.hashes = k;
            o.layout = shape.layout;
            o.probe = kBlockLayouts[stored].probe;
            o.hashing.seed = kSeed;
            o.hashing.integer_hash = integers;
            o.memory.concurrent = concurrent;
            absl::StatusOr<BlockedFilter> made = BlockedFilter::Create(o);
            REQUIRE(made.ok());
            BlockedFilter& f = *made;
            REQUIRE(f.blocks() == blocks);
            REQUIRE(f.probe() == kBlockLayouts[stored].probe);

            // Insert keys 0..n-1 (with some repeated) alternating single calls and batches of
            // varying length, as integers and as strings.
            const size_t n = std::min<size_t>(blocks * 40, 6000);
            std::vector<uint64_t> ints(n);
            SplitMix64 rng(blocks * 100 + k);
            for (size_t i = 0; i < n; ++i) ints[i] = i % 7 == 6 ? ints[rng.Below(i)] : rng.Next();
            std::vector<std::string> strings;
            for (size_t i = 0; i < n / 4; ++i) strings.push_back(std::to_string(ints[i]) + "s");
            std::vector<KeyHash> order;  // every insert's hash, in insertion order
            std::vector<bool> was_new;
            size_t pos = 0;
            for (size_t round = 0; pos < n; ++round) {
              const size_t len = std::min(kBatchLengths[round % 5], n - pos);
              if (round % 2 == 0) {
                for (size_t i = pos; i < pos + len; ++i) {
                  order.push_back(f.hasher()(ints[i]));
                  was_new.push_back(InsertOne(f, ints[i], i));
                }
              } else {
                std::unique_ptr<bool[]> fresh(new bool[len]);
                const size_t added = f.InsertMany(std::span<const uint64_t>(ints.data() + pos, len),
                                                  std::span<bool>(fresh.get(), len));
                REQUIRE(added ==
                        static_cast<size_t>(std::count(fresh.get(), fresh.get() + len, true)));
                for (size_t i = 0; i < len; ++i) {
                  order.push_back(f.hasher()(ints[pos + i]));
                  was_new.push_back(fresh[i]);
                }
              }
              pos += len;
            }
            std::vector<std::string_view> views(strings.begin(), strings.end());
            std::unique_ptr<bool[]> fresh(new bool[views.size()]);
            f.InsertMany(std::span<const std::string_view>(views),
                         std::span<bool>(fresh.get(), views.size()));
            for (size_t i = 0; i < views.size(); ++i) {
              order.push_back(HashKey(views[i], kSeed));
              was_new.push_back(fresh[i]);
            }

            const Reference ref = BuildReference(stored, order, blocks, k);
            REQUIRE(was_new == ref.was_new);
            REQUIRE(f.bytes().size() == ref.words.size() * 8);
            REQUIRE(std::memcmp(f.bytes().data(), ref.words.data(), f.bytes().size()) == 0);

            // Lookups of inserted and fresh keys, single and batch, against the reference.
            std::vector<KeyHash> probes(order.begin(), order.begin() + std::min<size_t>(500, n));
            for (size_t i = 0; i < 1500; ++i) probes.push_back({rng.Next(), rng.Next()});
            std::unique_ptr<bool[]> hits(new bool[probes.size()]);
            const size_t found = f.MayContainMany(std::span<const KeyHash>(probes),
                                                  std::span<bool>(hits.get(), probes.size()));
            size_t expected_found = 0;
            for (size_t i = 0; i < probes.size(); ++i) {
              const bool expected = ReferenceMayContain(stored, ref, probes[i], blocks, k);
              expected_found += expected;
              REQUIRE(f.MayContain(probes[i]) == expected);
#if defined(__AVX2__)
              REQUIRE(InlineMayContain(f, probes[i]) == expected);
#endif
              REQUIRE(hits[i] == expected);
            }
            CHECK(found == expected_found);
#if defined(__AVX2__)
            // The key forms hash as the filter does: every inserted key is found.
            for (size_t i = 0; i < std::min<size_t>(n, 200); ++i) {
              REQUIRE(InlineMayContain(f, ints[i]));
            }
            for (std::string_view view : views) REQUIRE(InlineMayContain(f, view));
#endif
          }
        }
      }
    }
  }
}

TEST_CASE("a results span shorter than the batch gets exactly its own answers") {
  RestoreBestTarget restore;
  for (std::string_view target : SupportedSimdTargets()) {
    CAPTURE(target);
    REQUIRE(ForceSimdTarget(target).ok());
    FilterOptions o;
    o.capacity = 1000;
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
    REQUIRE(f.ok());
    const std::vector<uint64_t> keys = testing::DistinctInts(100, 0);
    // 50 answers for 100 keys: the cut falls inside the second 32-key batch.
    std::vector<char> was_new(60, 2);
    CHECK(f->InsertMany(std::span<const uint64_t>(keys),
                        std::span<bool>(reinterpret_cast<bool*>(was_new.data()), 50)) == 100);
    for (size_t i = 0; i < 50; ++i) REQUIRE(was_new[i] == 1);
    for (size_t i = 50; i < 60; ++i) REQUIRE(was_new[i] == 2);  // untouched
    std::vector<char> hits(60, 2);
    CHECK(f->MayContainMany(std::span<const uint64_t>(keys),
                            std::span<bool>(reinterpret_cast<bool*>(hits.data()), 45)) == 100);
    for (size_t i = 0; i < 45; ++i) REQUIRE(hits[i] == 1);
    for (size_t i = 45; i < 60; ++i) REQUIRE(hits[i] == 2);
  }
}

}  // namespace
}  // namespace bloomery
