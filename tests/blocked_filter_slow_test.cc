// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The multi-second tests: large filters and long key streams ("slow" suite).
#include <doctest/doctest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "test_util.h"

namespace bloomery {
namespace {

using testing::SplitMix64;
using testing::WithinBinomialBound;

TEST_CASE("word list: 10M random words, 'already present' count equals the exact duplicates" *
          doctest::test_suite("slow")) {
  // Random lowercase words of 4-12 letters from a fixed-seed generator: with 26^4 four-letter words
  // and 10^7 draws there are many exact duplicates, which a hash set counts exactly.
  SplitMix64 rng(20261122);
  constexpr size_t kWords = 10'000'000;
  std::vector<std::string> words;
  words.reserve(kWords);
  for (size_t i = 0; i < kWords; ++i) {
    std::string w(4 + rng.Below(9), 'a');
    for (char& c : w) c = static_cast<char>('a' + rng.Below(26));
    words.push_back(std::move(w));
  }
  size_t duplicates = 0;
  {
    std::unordered_set<std::string_view> seen;
    seen.reserve(kWords);
    for (const std::string& w : words) duplicates += !seen.insert(w).second;
  }
  FilterOptions o;
  o.bits = uint64_t{1} << 32;
  o.hashes = 8;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  size_t already_present = 0;
  for (const std::string& w : words) already_present += !f->Insert(w);
  MESSAGE("words " << kWords << ", exact duplicates " << duplicates << ", filter said present "
                   << already_present << ", predicted FPR at this load "
                   << BlockedFpr(kWords - duplicates, f->blocks(), 8));
  CHECK(duplicates > 100'000);  // the test means something only if duplicates are common
  CHECK(already_present == duplicates);
}

TEST_CASE("a 2^33-bit filter uses blocks past 2^32/512 uniformly, FPR within bound" *
          doctest::test_suite("slow")) {
  // k = 1 keeps the FPR large enough to measure with few keys: 2^24 blocks, 16 * 2^20 keys.
  FilterOptions o;
  o.bits = uint64_t{1} << 33;
  o.hashes = 1;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  REQUIRE(f->blocks() == uint64_t{1} << 24);
  constexpr uint64_t kChunk = 1 << 20;
  constexpr uint64_t kKeys = 16 * kChunk;
  std::vector<uint64_t> keys(kChunk);
  for (uint64_t base = 0; base < kKeys; base += keys.size()) {
    for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = (base + i) * 2;
    f->InsertMany(std::span<const uint64_t>(keys));
  }
  // Bits set in each eighth of the array: a 32-bit truncation anywhere would leave the upper half
  // empty or pile keys into the lower blocks.
  const uint64_t total = f->PopCount();
  const std::span<const uint8_t> bytes = f->bytes();
  const uint64_t eighth = bytes.size() / 8;
  for (int part = 0; part < 8; ++part) {
    uint64_t set = 0;
    const auto* words = reinterpret_cast<const uint64_t*>(bytes.data() + part * eighth);
    for (uint64_t i = 0; i < eighth / 8; ++i) set += std::popcount(words[i]);
    CAPTURE(part);
    CHECK(WithinBinomialBound(set, total, 1.0 / 8, 6.0));
  }
  for (uint64_t i = 0; i < kKeys; i += 997) REQUIRE(f->MayContain(i * 2));
  const uint64_t queries = 4 * kChunk;
  uint64_t hits = 0;
  for (uint64_t base = 0; base < queries; base += keys.size()) {
    for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = (base + i) * 2 + 1;
    hits += f->MayContainMany(std::span<const uint64_t>(keys));
  }
  const double predicted = BlockedFpr(kKeys, f->blocks(), 1);
  MESSAGE("2^33 bits, k=1, " << kKeys << " keys: measured " << static_cast<double>(hits) / queries
                             << ", predicted " << predicted);
  CHECK(WithinBinomialBound(hits, queries, predicted));
}

}  // namespace
}  // namespace bloomery
