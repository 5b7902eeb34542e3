// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/blocked_filter.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_format.h"
#include "internal/block_layout.h"

namespace bloomery {
namespace {

using internal::BlockIndex;
using internal::kWordsPerBlock;
using internal::LineMask;
using internal::MakeMaskScalar;

// Keys per batch: enough independent misses in flight to saturate the memory system, few enough that
// the hashes, indices and masks stay in L1.
constexpr size_t kBatch = 32;

// In concurrent mode every access to the bits is a relaxed atomic: fetch_or publishes bits, loads
// may see them late but never torn, and ThreadSanitizer sees no data race. On x86-64 the relaxed
// loads are plain movs.
uint64_t LoadRelaxed(uint64_t* word) noexcept {
  return std::atomic_ref<uint64_t>(*word).load(std::memory_order_relaxed);
}

// Sets `mask` in `line`; returns whether any of its bits was 0 before.
bool SetLine(uint64_t* line, const LineMask& mask, bool concurrent) noexcept {
  uint64_t missing = 0;
  if (!concurrent) {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) {
      missing |= mask.word[j] & ~line[j];
      line[j] |= mask.word[j];
    }
    return missing != 0;
  }
  for (uint32_t j = 0; j < kWordsPerBlock; ++j) {
    const uint64_t m = mask.word[j];
    // Only words whose bits are missing are written: a duplicate insert stays a pure read and
    // never takes the line exclusive, so concurrent lookups of hot keys do not bounce it.
    if ((m & ~LoadRelaxed(line + j)) == 0) continue;
    const uint64_t before =
        std::atomic_ref<uint64_t>(line[j]).fetch_or(m, std::memory_order_relaxed);
    missing |= m & ~before;
  }
  return missing != 0;
}

bool TestLine(uint64_t* line, const LineMask& mask, bool concurrent) noexcept {
  uint64_t missing = 0;
  if (!concurrent) {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) missing |= mask.word[j] & ~line[j];
  } else {
    for (uint32_t j = 0; j < kWordsPerBlock; ++j) missing |= mask.word[j] & ~LoadRelaxed(line + j);
  }
  return missing == 0;
}

void HashBatch(const std::string_view* keys, size_t n, uint64_t seed, KeyHash* out) noexcept {
  HashKeys(keys, n, seed, out);
}
void HashBatch(const uint64_t* keys, size_t n, uint64_t seed, KeyHash* out) noexcept {
  HashKeys(keys, n, seed, out);
}
void HashBatch(const KeyHash* keys, size_t n, uint64_t /*seed*/, KeyHash* out) noexcept {
  std::copy(keys, keys + n, out);
}

template <bool kWrite>
void Prefetch(const uint64_t* line) noexcept {
  __builtin_prefetch(line, kWrite ? 1 : 0, 3);
}

}  // namespace

absl::StatusOr<BlockedFilter> BlockedFilter::Create(const FilterOptions& options) {
  absl::StatusOr<Plan> plan =
      options.bits != 0
          ? PlanForSize(options.bits, options.hashes, options.capacity, Layout::kBlocked)
          : PlanFor(options.capacity, options.fpr, Layout::kBlocked, options.hashes);
  if (!plan.ok()) return plan.status();
  StorageOptions storage_options;
  storage_options.huge_pages = options.huge_pages;
  storage_options.populate = options.populate;
  storage_options.max_bytes = options.max_memory_bytes;
  absl::StatusOr<Storage> storage = Storage::Allocate(plan->bytes(), storage_options);
  if (!storage.ok()) return storage.status();
  return BlockedFilter(*std::move(storage), *plan, options.seed, options.concurrent);
}

BlockedFilter::BlockedFilter(Storage storage, const Plan& plan, uint64_t seed,
                             bool concurrent) noexcept
    : storage_(std::move(storage)),
      words_(reinterpret_cast<uint64_t*>(storage_.data())),
      blocks_(plan.blocks()),
      hashes_(plan.hashes),
      seed_(seed),
      concurrent_(concurrent),
      plan_(plan) {}

bool BlockedFilter::Insert(const KeyHash& hash) noexcept {
  LineMask mask;
  MakeMaskScalar(hash, hashes_, mask);
  return SetLine(line(BlockIndex(hash, blocks_)), mask, concurrent_);
}

bool BlockedFilter::MayContain(const KeyHash& hash) const noexcept {
  LineMask mask;
  MakeMaskScalar(hash, hashes_, mask);
  return TestLine(line(BlockIndex(hash, blocks_)), mask, concurrent_);
}

template <typename Key>
size_t BlockedFilter::InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept {
  KeyHash hashes[kBatch];
  uint64_t* lines[kBatch];
  size_t added = 0;
  for (size_t base = 0; base < keys.size(); base += kBatch) {
    const size_t n = std::min(kBatch, keys.size() - base);
    HashBatch(keys.data() + base, n, seed_, hashes);
    for (size_t i = 0; i < n; ++i) {
      lines[i] = line(BlockIndex(hashes[i], blocks_));
      Prefetch<true>(lines[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      LineMask mask;
      MakeMaskScalar(hashes[i], hashes_, mask);
      const bool fresh = SetLine(lines[i], mask, concurrent_);
      added += fresh;
      if (base + i < was_new.size()) was_new[base + i] = fresh;
    }
  }
  return added;
}

template <typename Key>
size_t BlockedFilter::LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept {
  KeyHash hashes[kBatch];
  uint64_t* lines[kBatch];
  size_t found = 0;
  for (size_t base = 0; base < keys.size(); base += kBatch) {
    const size_t n = std::min(kBatch, keys.size() - base);
    HashBatch(keys.data() + base, n, seed_, hashes);
    for (size_t i = 0; i < n; ++i) {
      lines[i] = line(BlockIndex(hashes[i], blocks_));
      Prefetch<false>(lines[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      LineMask mask;
      MakeMaskScalar(hashes[i], hashes_, mask);
      const bool hit = TestLine(lines[i], mask, concurrent_);
      found += hit;
      if (base + i < results.size()) results[base + i] = hit;
    }
  }
  return found;
}

size_t BlockedFilter::InsertMany(std::span<const std::string_view> keys,
                                 std::span<bool> was_new) noexcept {
  return InsertKeys(keys, was_new);
}
size_t BlockedFilter::InsertMany(std::span<const uint64_t> keys, std::span<bool> was_new) noexcept {
  return InsertKeys(keys, was_new);
}
size_t BlockedFilter::InsertMany(std::span<const KeyHash> hashes,
                                 std::span<bool> was_new) noexcept {
  return InsertKeys(hashes, was_new);
}
size_t BlockedFilter::MayContainMany(std::span<const std::string_view> keys,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(keys, results);
}
size_t BlockedFilter::MayContainMany(std::span<const uint64_t> keys,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(keys, results);
}
size_t BlockedFilter::MayContainMany(std::span<const KeyHash> hashes,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(hashes, results);
}

absl::Status BlockedFilter::CheckCompatible(const BlockedFilter& other) const {
  if (blocks_ != other.blocks_ || hashes_ != other.hashes_ || seed_ != other.seed_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "incompatible filters: (bits %d, hashes %d, seed %#x) vs (bits %d, hashes %d, seed %#x)",
        bits(), hashes_, seed_, other.bits(), other.hashes_, other.seed_));
  }
  return absl::OkStatus();
}

absl::Status BlockedFilter::UnionWith(const BlockedFilter& other) {
  if (absl::Status s = CheckCompatible(other); !s.ok()) return s;
  const uint64_t words = blocks_ * kWordsPerBlock;
  for (uint64_t i = 0; i < words; ++i) {
    const uint64_t theirs = LoadRelaxed(other.words_ + i);
    if (concurrent_) {
      if (theirs & ~LoadRelaxed(words_ + i)) {
        std::atomic_ref<uint64_t>(words_[i]).fetch_or(theirs, std::memory_order_relaxed);
      }
    } else {
      words_[i] |= theirs;
    }
  }
  return absl::OkStatus();
}

absl::Status BlockedFilter::IntersectWith(const BlockedFilter& other) {
  if (absl::Status s = CheckCompatible(other); !s.ok()) return s;
  const uint64_t words = blocks_ * kWordsPerBlock;
  for (uint64_t i = 0; i < words; ++i) {
    const uint64_t theirs = LoadRelaxed(other.words_ + i);
    std::atomic_ref<uint64_t>(words_[i]).fetch_and(theirs, std::memory_order_relaxed);
  }
  return absl::OkStatus();
}

void BlockedFilter::Clear() noexcept {
  const uint64_t words = blocks_ * kWordsPerBlock;
  for (uint64_t i = 0; i < words; ++i) {
    std::atomic_ref<uint64_t>(words_[i]).store(0, std::memory_order_relaxed);
  }
}

uint64_t BlockedFilter::PopCount() const noexcept {
  const uint64_t words = blocks_ * kWordsPerBlock;
  uint64_t count = 0;
  for (uint64_t i = 0; i < words; ++i) count += std::popcount(LoadRelaxed(words_ + i));
  return count;
}

double BlockedFilter::FillRatio() const noexcept {
  return bits() ? static_cast<double>(PopCount()) / static_cast<double>(bits()) : 0.0;
}

double BlockedFilter::EstimatedCount() const noexcept {
  const double fill = FillRatio();
  if (fill >= 1.0) return std::numeric_limits<double>::infinity();
  return std::log1p(-fill) / std::log1p(-static_cast<double>(hashes_) / static_cast<double>(bits()));
}

double BlockedFilter::EstimatedFpr() const noexcept {
  const uint32_t slices = SlicesPerBlock(hashes_);
  const uint32_t slice_bits = kBlockBits / slices;
  double total = 0;
  for (uint64_t b = 0; b < blocks_; ++b) {
    double fill[16];
    for (uint32_t j = 0; j < slices; ++j) {
      const uint64_t word = LoadRelaxed(line(b) + j * slice_bits / 64);
      const uint64_t bits = slice_bits == 64 ? word : (word >> (32 * (j & 1))) & 0xFFFFFFFFu;
      fill[j] = static_cast<double>(std::popcount(bits)) / slice_bits;
    }
    double block = 0;
    for (uint32_t start = 0; start < slices; ++start) {
      double p = 1;
      for (uint32_t i = 0; i < hashes_ && p != 0; ++i) p *= fill[(start + i) % slices];
      block += p;
    }
    total += block / slices;
  }
  return blocks_ ? total / static_cast<double>(blocks_) : 0.0;
}

}  // namespace bloomery
