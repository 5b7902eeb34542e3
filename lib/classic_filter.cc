// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/classic_filter.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_format.h"
#include "internal/classic_layout.h"
#include "internal/filter_ops.h"
#include "internal/format.h"

namespace bloomery {
namespace {

using internal::ClassicProbeBit;
using internal::HashBatch;
using internal::LoadRelaxed;
using internal::LoadWord;
using internal::SetBits;

// Keys per batch. Every key has up to 16 lines to fetch, so a batch of 16 keys already puts ~100
// prefetches in flight at the usual k = 6-7, more than the memory system can overlap; the
// positions (16 x 16 x 8 bytes) stay in L1.
constexpr size_t kBatch = 16;

}  // namespace

absl::StatusOr<ClassicFilter> ClassicFilter::Create(const FilterOptions& options) {
  absl::StatusOr<Plan> plan =
      options.bits != 0
          ? PlanForSize(options.bits, options.hashes, options.capacity, Layout::kPartitioned)
          : PlanFor(options.capacity, options.fpr, Layout::kPartitioned, options.hashes);
  if (!plan.ok()) return plan.status();
  // Whole 64-byte lines: the file format's stage payload, so memory and file agree byte for byte.
  absl::StatusOr<Storage> storage = Storage::Allocate(internal::StagePayloadBytes(plan->bits),
                                                      internal::StorageOptionsFor(options));
  if (!storage.ok()) return storage.status();
  return ClassicFilter(*std::move(storage), *plan, options.seed, options.concurrent);
}

ClassicFilter::ClassicFilter(Storage storage, const Plan& plan, uint64_t seed,
                             bool concurrent) noexcept
    : storage_(std::move(storage)),
      words_(reinterpret_cast<uint64_t*>(storage_.data())),
      slice_bits_(plan.bits / plan.hashes),
      hashes_(plan.hashes),
      seed_(seed),
      concurrent_(concurrent),
      plan_(plan) {}

bool ClassicFilter::Insert(const KeyHash& hash) noexcept {
  uint64_t missing = 0;
  for (uint32_t i = 0; i < hashes_; ++i) {
    const uint64_t bit = ClassicProbeBit(hash, i, slice_bits_);
    missing |= SetBits(words_ + bit / 64, uint64_t{1} << (bit % 64), concurrent_);
  }
  return missing != 0;
}

bool ClassicFilter::MayContain(const KeyHash& hash) const noexcept {
  for (uint32_t i = 0; i < hashes_; ++i) {
    const uint64_t bit = ClassicProbeBit(hash, i, slice_bits_);
    if ((LoadWord(words_ + bit / 64, concurrent_) >> (bit % 64) & 1) == 0) return false;
  }
  return true;
}

template <typename Key>
size_t ClassicFilter::InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept {
  KeyHash hashes[kBatch];
  uint64_t bits[kBatch][kMaxHashes];
  size_t added = 0;
  for (size_t base = 0; base < keys.size(); base += kBatch) {
    const size_t n = std::min(kBatch, keys.size() - base);
    HashBatch(keys.data() + base, n, seed_, hashes);
    for (size_t j = 0; j < n; ++j) {
      for (uint32_t i = 0; i < hashes_; ++i) {
        bits[j][i] = ClassicProbeBit(hashes[j], i, slice_bits_);
        __builtin_prefetch(words_ + bits[j][i] / 64, 1, 3);
      }
    }
    for (size_t j = 0; j < n; ++j) {
      uint64_t missing = 0;
      for (uint32_t i = 0; i < hashes_; ++i) {
        missing |= SetBits(words_ + bits[j][i] / 64, uint64_t{1} << (bits[j][i] % 64), concurrent_);
      }
      added += missing != 0;
      if (base + j < was_new.size()) was_new[base + j] = missing != 0;
    }
  }
  return added;
}

template <typename Key>
size_t ClassicFilter::LookupKeys(std::span<const Key> keys,
                                 std::span<bool> results) const noexcept {
  KeyHash hashes[kBatch];
  uint64_t bits[kBatch][kMaxHashes];
  size_t found = 0;
  for (size_t base = 0; base < keys.size(); base += kBatch) {
    const size_t n = std::min(kBatch, keys.size() - base);
    HashBatch(keys.data() + base, n, seed_, hashes);
    for (size_t j = 0; j < n; ++j) {
      for (uint32_t i = 0; i < hashes_; ++i) {
        bits[j][i] = ClassicProbeBit(hashes[j], i, slice_bits_);
        __builtin_prefetch(words_ + bits[j][i] / 64, 0, 3);
      }
    }
    for (size_t j = 0; j < n; ++j) {
      // All lines are already on their way, so test every probe without branching on each.
      uint64_t all = 1;
      for (uint32_t i = 0; i < hashes_; ++i) {
        all &= LoadWord(words_ + bits[j][i] / 64, concurrent_) >> (bits[j][i] % 64);
      }
      const bool hit = (all & 1) != 0;
      found += hit;
      if (base + j < results.size()) results[base + j] = hit;
    }
  }
  return found;
}

size_t ClassicFilter::InsertMany(std::span<const std::string_view> keys,
                                 std::span<bool> was_new) noexcept {
  return InsertKeys(keys, was_new);
}
size_t ClassicFilter::InsertMany(std::span<const uint64_t> keys, std::span<bool> was_new) noexcept {
  return InsertKeys(keys, was_new);
}
size_t ClassicFilter::InsertMany(std::span<const KeyHash> hashes,
                                 std::span<bool> was_new) noexcept {
  return InsertKeys(hashes, was_new);
}
size_t ClassicFilter::MayContainMany(std::span<const std::string_view> keys,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(keys, results);
}
size_t ClassicFilter::MayContainMany(std::span<const uint64_t> keys,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(keys, results);
}
size_t ClassicFilter::MayContainMany(std::span<const KeyHash> hashes,
                                     std::span<bool> results) const noexcept {
  return LookupKeys(hashes, results);
}

absl::Status ClassicFilter::CheckCompatible(const ClassicFilter& other) const {
  if (slice_bits_ != other.slice_bits_ || hashes_ != other.hashes_ || seed_ != other.seed_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "incompatible filters: (bits %d, hashes %d, seed %#x) vs (bits %d, hashes %d, seed %#x)",
        bits(), hashes_, seed_, other.bits(), other.hashes_, other.seed_));
  }
  return absl::OkStatus();
}

absl::Status ClassicFilter::UnionWith(const ClassicFilter& other) {
  if (absl::Status s = CheckCompatible(other); !s.ok()) return s;
  for (uint64_t i = 0; i < words(); ++i) {
    (void)SetBits(words_ + i, LoadRelaxed(other.words_ + i), concurrent_);
  }
  return absl::OkStatus();
}

void ClassicFilter::Clear() noexcept {
  for (uint64_t i = 0; i < words(); ++i) {
    std::atomic_ref<uint64_t>(words_[i]).store(0, std::memory_order_relaxed);
  }
}

uint64_t ClassicFilter::PopCountRange(uint64_t begin, uint64_t end) const noexcept {
  uint64_t count = 0;
  while (begin < end) {
    const uint64_t word = LoadRelaxed(words_ + begin / 64);
    const uint64_t first = begin % 64;
    const uint64_t last = std::min<uint64_t>(64, first + (end - begin));  // exclusive
    const uint64_t width = last - first;
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1) << first;
    count += std::popcount(word & mask);
    begin += width;
  }
  return count;
}

uint64_t ClassicFilter::PopCount() const noexcept { return PopCountRange(0, bits()); }

double ClassicFilter::FillRatio() const noexcept {
  return bits() ? static_cast<double>(PopCount()) / static_cast<double>(bits()) : 0.0;
}

double ClassicFilter::EstimatedCount() const noexcept {
  const double fill = FillRatio();
  if (fill >= 1.0) return std::numeric_limits<double>::infinity();
  return std::log1p(-fill) / std::log1p(-1.0 / static_cast<double>(slice_bits_));
}

double ClassicFilter::EstimatedFpr() const noexcept {
  double fpr = 1.0;
  for (uint32_t i = 0; i < hashes_ && fpr != 0; ++i) {
    const uint64_t set = PopCountRange(i * slice_bits_, (i + 1) * slice_bits_);
    fpr *= static_cast<double>(set) / static_cast<double>(slice_bits_);
  }
  return fpr;
}

}  // namespace bloomery
