// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/classic_filter.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#include "bits/internal/bit_count.h"
#include "bits/internal/fill_estimate.h"
#include "bits/internal/filter_ops.h"
#include "filters/internal/batch_pipeline.h"
#include "filters/internal/create.h"
#include "filters/internal/fold.h"
#include "filters/internal/health_scan.h"
#include "format/internal/persistence.h"
#include "layouts/internal/classic_layout.h"

namespace bloomery {
namespace {

using detail::BurstEach;
using detail::ClassicProbeBit;
using detail::LoadRelaxed;
using detail::LoadWord;
using detail::SetBits;

// Where a key's k bits are, computed once per key of a batch (filters/internal/batch_pipeline.h).
struct ProbeBits {
  uint64_t bit[kMaxHashes];
};

// Fills the first `hashes` entries only (the rest are never read) and prefetches each line as
// soon as its position is known.
template <bool kWrite>
struct LocateBits {
  using Where = ProbeBits;
  // 16 keys put ~100 misses in flight at the usual k = 6-7, as many as the core overlaps.
  static constexpr size_t kKeys = 16;
  const uint64_t* words;
  uint64_t slice_bits;
  uint32_t hashes;
  void operator()(const KeyHash& hash, ProbeBits& probes) const noexcept {
    for (uint32_t i = 0; i < hashes; ++i) {
      probes.bit[i] = ClassicProbeBit(hash, i, slice_bits);
      __builtin_prefetch(words + probes.bit[i] / 64, kWrite, 3);
    }
  }
};

// The batch loop of InsertKeys (kWrite: `answers` are "was new") and LookupKeys ("present"):
// bursts of located keys (BurstEach), each key's k bits then set or tested in turn.
template <bool kWrite, typename Key, typename Word>
size_t ProbeKeys(std::span<const Key> keys, std::span<bool> answers, const KeyHasher& hasher,
                 Word* words, uint64_t slice_bits, uint32_t k, bool concurrent) noexcept {
  size_t count = 0;
  BurstEach(keys, answers, hasher, LocateBits<kWrite>{words, slice_bits, k},
            [&](const KeyHash&, const ProbeBits& probes) {
              bool answer;
              if constexpr (kWrite) {
                uint64_t missing = 0;
                for (uint32_t i = 0; i < k; ++i) {
                  const uint64_t bit = probes.bit[i];
                  missing |= SetBits(words + bit / 64, uint64_t{1} << (bit % 64), concurrent);
                }
                answer = missing != 0;
              } else {
                // The lines are already on their way: test every probe without a branch on each.
                uint64_t all = 1;
                for (uint32_t i = 0; i < k; ++i) {
                  all &= LoadWord(words + probes.bit[i] / 64, concurrent) >> (probes.bit[i] % 64);
                }
                answer = (all & 1) != 0;
              }
              count += answer;
              return answer;
            });
  return count;
}

}  // namespace

absl::StatusOr<ClassicFilter> ClassicFilter::Create(const FilterOptions& options) {
  // FilterOptions::layout shapes BlockedFilter; a classic filter is partitioned.
  if (options.layout != FilterOptions{}.layout) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a classic filter is partitioned: layout %s is for blocked filters",
                        LayoutName(options.layout)));
  }
  // Sized by capacity and fpr: slices that halve (FoldablePlan); by bits: exactly those.
  absl::StatusOr<Plan> plan = PlanForCreate(options, Layout::kPartitioned);
  return detail::CreateArrayFilter(
      plan, options, [&](FilterMemory memory, const Plan& planned, const KeyHasher& hasher) {
        return ClassicFilter(std::move(memory), planned, hasher, options.memory.concurrent);
      });
}

absl::StatusOr<ClassicFilter> ClassicFilter::EmptyLike(uint64_t slice_bits, uint64_t capacity,
                                                       const MemoryOptions& memory) const {
  return detail::CreateArrayFilter(
      PlanForSize(slice_bits * hashes_, hashes_, capacity, Layout::kPartitioned),
      detail::OptionsLike(hasher_, memory),
      [&](FilterMemory bits, const Plan& planned, const KeyHasher& hasher) {
        return ClassicFilter(std::move(bits), planned, hasher, memory.concurrent);
      });
}

namespace {

// dst's slices from src's (k of each): bit j of dst's slice i is the or of bits factor*j ..
// factor*j + factor - 1 of src's slice i (factor 1: a copy, 2: a halving; src_slice even for 2).
// 64 bits of a source slice at a time, read at any bit offset (relaxed loads where other threads
// may be setting them); dst is new, so plain or-stores.
void FoldSlices(const uint64_t* src, bool concurrent, uint64_t src_slice, uint32_t k, uint64_t* dst,
                uint64_t factor) noexcept {
  const uint64_t dst_slice = src_slice / factor;
  const auto mask = [](uint64_t n) { return n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; };
  for (uint64_t i = 0; i < k; ++i) {
    for (uint64_t c = 0; c * 64 < src_slice; ++c) {
      const uint64_t n = std::min<uint64_t>(64, src_slice - c * 64);
      const uint64_t from = i * src_slice + c * 64;
      const uint64_t offset = from % 64;
      uint64_t x = LoadWord(src + from / 64, concurrent) >> offset;
      if (offset != 0 && offset + n > 64) {
        x |= LoadWord(src + from / 64 + 1, concurrent) << (64 - offset);
      }
      x &= mask(n);
      uint64_t out_bits = n;
      if (factor == 2) {  // or each pair, then gather the pairs' bits into the low half
        x = (x | (x >> 1)) & 0x5555555555555555ull;
        x = (x | (x >> 1)) & 0x3333333333333333ull;
        x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
        x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
        x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
        x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
        out_bits = n / 2;
      }
      const uint64_t to = i * dst_slice + c * (64 / factor);
      dst[to / 64] |= x << (to % 64);
      if (to % 64 != 0 && to % 64 + out_bits > 64) dst[to / 64 + 1] |= x >> (64 - to % 64);
    }
  }
}

}  // namespace

absl::StatusOr<ClassicFilter> ClassicFilter::FoldedTo(double max_fpr,
                                                      const MemoryOptions& memory) const {
  const auto planned = [&](uint64_t slice_bits) {
    return detail::CapacityWithin(Layout::kPartitioned, slice_bits * hashes_, hashes_, capacity(),
                                  max_fpr);
  };
  return detail::FoldWithin(
      *this, max_fpr, slice_bits_, "bits per slice", memory,
      [&](const ClassicFilter& from, uint64_t slice_bits,
          const MemoryOptions& in) -> absl::StatusOr<ClassicFilter> {
        absl::StatusOr<ClassicFilter> half = EmptyLike(slice_bits / 2, planned(slice_bits / 2), in);
        if (half.ok()) {
          FoldSlices(from.words_, from.concurrent_, slice_bits, hashes_, half->words_, 2);
        }
        return half;
      },
      [&](const MemoryOptions& in) -> absl::StatusOr<ClassicFilter> {
        absl::StatusOr<ClassicFilter> copy = EmptyLike(slice_bits_, planned(slice_bits_), in);
        if (copy.ok()) FoldSlices(words_, concurrent_, slice_bits_, hashes_, copy->words_, 1);
        return copy;
      });
}

ClassicFilter::ClassicFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                             bool concurrent) noexcept
    : BitArray(std::move(memory), plan, hasher, concurrent),
      slice_bits_(plan.bits / plan.hashes),
      hashes_(plan.hashes) {}

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

void ClassicFilter::Prefetch(const KeyHash& hash) const noexcept {
  for (uint32_t i = 0; i < hashes_; ++i) {
    __builtin_prefetch(words_ + ClassicProbeBit(hash, i, slice_bits_) / 64, 0, 3);
  }
}

template <FilterKey Key>
size_t ClassicFilter::InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept {
  return ProbeKeys<true>(keys, was_new, hasher_, words_, slice_bits_, hashes_, concurrent_);
}

template <FilterKey Key>
size_t ClassicFilter::LookupKeys(std::span<const Key> keys,
                                 std::span<bool> results) const noexcept {
  return ProbeKeys<false>(keys, results, hasher_, words_, slice_bits_, hashes_, concurrent_);
}

BLOOMERY_INSTANTIATE_BATCH_FORMS(ClassicFilter)

absl::Status ClassicFilter::CheckCompatible(const ClassicFilter& other) const {
  return CheckSameBits(other);
}

absl::Status ClassicFilter::UnionWith(const ClassicFilter& other) { return UniteBits(other); }

uint64_t ClassicFilter::PopCountRange(uint64_t begin, uint64_t end) const noexcept {
  uint64_t count = 0;
  while (begin < end) {
    const uint64_t word = LoadRelaxed(words_ + begin / 64);
    const uint64_t first = begin % 64;
    const uint64_t last = std::min<uint64_t>(64, first + (end - begin));  // exclusive
    const uint64_t width = last - first;
    const uint64_t mask = width == 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1) << first;
    count += detail::BitCount(word & mask);
    begin += width;
  }
  return count;
}

double ClassicFilter::EstimatedFpr() const noexcept {
  double fpr = 1.0;
  for (uint32_t i = 0; i < hashes_ && fpr != 0; ++i) {
    const uint64_t set = PopCountRange(i * slice_bits_, (i + 1) * slice_bits_);
    fpr *= static_cast<double>(set) / static_cast<double>(slice_bits_);
  }
  return fpr;
}

FilterHealth ClassicFilter::Health() const {
  const bool sample = memory_bytes() > kHealthExactBytes;
  // A slice's units are its 512-bit chunks (the last may be shorter), read by PopCountRange.
  constexpr uint64_t kChunkBits = 512;
  const uint64_t chunks = (slice_bits_ + kChunkBits - 1) / kChunkBits;
  const uint32_t strata = std::max<uint32_t>(16, kHealthStrata / hashes_);
  double fpr = 1.0;
  double relative_variance = 0;  // of the FPR, summed over slices (the delta method)
  double set = 0;
  double set_variance = 0;
  bool sampled = false;
  for (uint32_t i = 0; i < hashes_; ++i) {
    const uint64_t start = i * slice_bits_;
    const detail::ScanTotals scan = detail::ScanUnits(
        chunks, 1,
        [&](uint64_t c, double* out) {
          out[0] = static_cast<double>(PopCountRange(
              start + c * kChunkBits, std::min(start + (c + 1) * kChunkBits, start + slice_bits_)));
        },
        sample, detail::RunUnits(kChunkBits / 8), strata);
    sampled = scan.sampled;
    const double slice_set = std::min(scan.total[0], static_cast<double>(slice_bits_));
    fpr *= slice_set / static_cast<double>(slice_bits_);
    if (slice_set > 0) relative_variance += std::pow(scan.error[0] / slice_set, 2);
    set += slice_set;
    set_variance += scan.error[0] * scan.error[0];
  }
  const detail::CountReading count =
      detail::CountFromSample(set, std::sqrt(set_variance), bits(), hashes_);
  FilterHealth health;
  health.capacity = capacity();
  health.estimated_count = count.count;
  health.estimated_count_error = count.error;
  health.fill_ratio = bits() ? set / static_cast<double>(bits()) : 0.0;
  health.planned_fpr = planned_fpr();
  health.estimated_fpr = fpr;
  health.estimated_fpr_error = 3 * fpr * std::sqrt(relative_variance);
  health.sampled = sampled;
  health.state =
      ClassifyHealth(fpr, health.planned_fpr,
                     count.count / static_cast<double>(std::max<uint64_t>(health.capacity, 1)));
  return health;
}

// Persistence (lib/format/internal/persistence.h): a one-stage file of kind "classic"
// (docs/FORMAT.md), k slices of bits/k bits each, stored in whole lines.

detail::KindFormat ClassicFilter::FileFormat() noexcept {
  return {.stage_bits_unit = 0,  // a stage is its hashes' slices
          .check = &detail::CheckLayoutHeader<kLayout>};
}

template class Persistent<ClassicFilter>;
template class Mappable<ClassicFilter>;

}  // namespace bloomery
