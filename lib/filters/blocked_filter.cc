// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/blocked_filter.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>

#include "bits/internal/fill_estimate.h"
#include "filters/internal/batch_pipeline.h"
#include "filters/internal/create.h"
#include "filters/internal/fold.h"
#include "filters/internal/health_scan.h"
#include "format/internal/persistence.h"
#include "layouts/block_kernels.h"
#include "layouts/internal/block_layout.h"
#include "layouts/internal/line_ops.h"

namespace bloomery {
namespace {

using detail::Batch;
using detail::BlockIndex;
using detail::kWordsPerBlock;
using detail::LineOf;
using detail::LoadRelaxed;
using detail::Pipeline;

}  // namespace

absl::StatusOr<BlockedFilter> BlockedFilter::Create(const FilterOptions& options) {
  // Sized by capacity and fpr: blocks that halve (FoldablePlan); by bits: exactly those.
  absl::StatusOr<Plan> plan = PlanForCreate(options, options.layout);
  return detail::CreateArrayFilter(
      plan, options, [&](FilterMemory memory, const Plan& planned, const KeyHasher& hasher) {
        return BlockedFilter(std::move(memory), planned, hasher, options.memory.concurrent);
      });
}

BlockedFilter::BlockedFilter(FilterMemory memory, const Plan& plan, const KeyHasher& hasher,
                             bool concurrent) noexcept
    : BitArray(std::move(memory), plan, hasher, concurrent),
      blocks_(plan.blocks()),
      hashes_(plan.hashes),
      block_shift_(BlockShift(plan.layout)),
      stored_(BlockLayoutIndex(plan.layout, plan.probe)),
      // Chooses the SIMD target now, so that the single-key calls below may skip the test.
      inline_test_(simd::ActiveKernels().runs_avx2() && plan.hashes <= 8
                       ? &detail::kUnusedProbes[plan.hashes]
                       : nullptr) {
  const bool mixes = hasher.mixes();
  // A concurrent insert runs inline only for word64 (its one fetch_or).
  const bool sets_inline =
      inline_test_ != nullptr && (!concurrent || plan.layout == Layout::kWord64);
  test_path_ = static_cast<uint16_t>(inline_test_ ? detail::CallPathOf(stored_, mixes, false)
                                                  : detail::kOutOfLinePath);
  set_path_ = static_cast<uint16_t>(sets_inline ? detail::CallPathOf(stored_, mixes, concurrent)
                                                : detail::kOutOfLinePath);
}

// The layout's kernels are chosen by index (stored_), with no branch on the layout; every filter
// was constructed after the target was chosen (InitializedKernels).
bool BlockedFilter::InsertOutOfLine(KeyHash hash) noexcept {
  return simd::InitializedKernels().shapes[stored_].set_block(block(hash), hash, hashes_,
                                                              concurrent_);
}

bool BlockedFilter::MayContainOutOfLine(KeyHash hash) const noexcept {
  return simd::InitializedKernels().shapes[stored_].test_block(block(hash), hash, hashes_,
                                                               concurrent_);
}

template <bool kWrite, typename Key, typename Kernel>
size_t BlockedFilter::RunKernel(std::span<const Key> keys, std::span<bool> results,
                                Kernel kernel) const noexcept {
  size_t count = 0;
  Pipeline(
      keys, results, hasher_, LineOf{blocks_},
      [&](const KeyHash& /*hash*/, uint64_t block) {
        __builtin_prefetch(words_ + (block << block_shift_), kWrite ? 1 : 0, 3);
      },
      [&](const Batch<uint64_t>& batch, bool* out, const Batch<uint64_t>* next) {
        count += kernel(words_, batch.where, batch.hashes, batch.size, hashes_, concurrent_, out,
                        next ? next->where : nullptr, next ? next->size : 0);
      });
  return count;
}

template <FilterKey Key>
size_t BlockedFilter::InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept {
  return RunKernel<true>(keys, was_new, simd::ActiveKernels().shapes[stored_].set_blocks);
}

template <FilterKey Key>
size_t BlockedFilter::LookupKeys(std::span<const Key> keys,
                                 std::span<bool> results) const noexcept {
  return RunKernel<false>(keys, results, simd::ActiveKernels().shapes[stored_].test_blocks);
}

BLOOMERY_INSTANTIATE_BATCH_FORMS(BlockedFilter)

absl::Status BlockedFilter::CheckCompatible(const BlockedFilter& other) const {
  return CheckSameBits(other);
}

absl::Status BlockedFilter::UnionWith(const BlockedFilter& other) { return UniteBits(other); }

absl::Status BlockedFilter::IntersectWith(const BlockedFilter& other) {
  if (absl::Status s = CheckCompatible(other); !s.ok()) return s;
  detail::IntersectWords(words_, other.words_, words());
  return absl::OkStatus();
}

detail::ScanTotals BlockedFilter::Scan(bool sample) const {
  const detail::BlockSlices slices = detail::SlicesOfBlock(plan_.layout, hashes_);
  return detail::ScanUnits(
      blocks_, 2,
      [&](uint64_t b, double* out) {
        uint32_t set = 0;
        out[0] = detail::BlockFpr(block_at(b), slices, hashes_, &set);
        out[1] = set;
      },
      sample, detail::RunUnits(uint64_t{8} << block_shift_));
}

double BlockedFilter::EstimatedFpr() const noexcept {
  return blocks_ ? Scan(false).total[0] / static_cast<double>(blocks_) : 0.0;
}

FilterHealth BlockedFilter::Health() const {
  const detail::ScanTotals scan = Scan(memory_bytes() > kHealthExactBytes);
  const double blocks = static_cast<double>(std::max<uint64_t>(blocks_, 1));
  const detail::CountReading count =
      detail::CountFromSample(scan.total[1], scan.error[1], bits(), hashes_);
  FilterHealth health;
  health.capacity = capacity();
  health.estimated_count = count.count;
  health.estimated_count_error = count.error;
  health.fill_ratio = bits() ? scan.total[1] / static_cast<double>(bits()) : 0.0;
  health.planned_fpr = planned_fpr();
  health.estimated_fpr = scan.total[0] / blocks;
  health.estimated_fpr_error = 3 * scan.error[0] / blocks;
  health.sampled = scan.sampled;
  health.state =
      ClassifyHealth(health.estimated_fpr, health.planned_fpr,
                     count.count / static_cast<double>(std::max<uint64_t>(health.capacity, 1)));
  return health;
}

absl::StatusOr<BlockedFilter> BlockedFilter::EmptyLike(uint64_t blocks, uint64_t capacity,
                                                       const MemoryOptions& memory) const {
  const uint64_t block_bits = uint64_t{64} << block_shift_;
  return detail::CreateArrayFilter(
      PlanForSize(blocks * block_bits, hashes_, capacity, plan_.layout, plan_.probe),
      detail::OptionsLike(hasher_, memory),
      [&](FilterMemory bits, const Plan& planned, const KeyHasher& hasher) {
        return BlockedFilter(std::move(bits), planned, hasher, memory.concurrent);
      });
}

namespace {

// dst's blocks from src's: block j of dst is the or of blocks factor*j .. factor*j + factor - 1
// of src (factor 1: a copy, 2: a halving). `words` per block; src read with relaxed loads where
// other threads may be setting its bits.
void FoldBlocks(const uint64_t* src, bool concurrent, uint64_t* dst, uint64_t dst_blocks,
                uint64_t words, uint64_t factor) noexcept {
  for (uint64_t j = 0; j < dst_blocks; ++j) {
    for (uint64_t w = 0; w < words; ++w) {
      uint64_t folded = 0;
      for (uint64_t f = 0; f < factor; ++f) {
        folded |= detail::LoadWord(src + (j * factor + f) * words + w, concurrent);
      }
      dst[j * words + w] = folded;
    }
  }
}

}  // namespace

absl::StatusOr<BlockedFilter> BlockedFilter::FoldedTo(double max_fpr,
                                                      const MemoryOptions& memory) const {
  const uint64_t words = uint64_t{1} << block_shift_;
  const uint64_t block_bits = 64 * words;
  const auto planned = [&](uint64_t blocks) {
    return detail::CapacityWithin(plan_.layout, blocks * block_bits, hashes_, capacity(), max_fpr);
  };
  return detail::FoldWithin(
      *this, max_fpr, blocks_, "blocks", memory,
      [&](const BlockedFilter& from, uint64_t blocks,
          const MemoryOptions& in) -> absl::StatusOr<BlockedFilter> {
        absl::StatusOr<BlockedFilter> half = EmptyLike(blocks / 2, planned(blocks / 2), in);
        if (half.ok())
          FoldBlocks(from.words_, from.concurrent_, half->words_, blocks / 2, words, 2);
        return half;
      },
      [&](const MemoryOptions& in) -> absl::StatusOr<BlockedFilter> {
        absl::StatusOr<BlockedFilter> copy = EmptyLike(blocks_, planned(blocks_), in);
        if (copy.ok()) FoldBlocks(words_, concurrent_, copy->words_, blocks_, words, 1);
        return copy;
      });
}

// Persistence (lib/format/internal/persistence.h): a one-stage file of kind "blocked"
// (docs/FORMAT.md).

detail::KindFormat BlockedFilter::FileFormat() noexcept {
  // The header's layout field picks the shape (PlanFromHeader).
  return {.layouts = true, .check = &detail::CheckLayoutHeader<kLayout>};
}

template class Persistent<BlockedFilter>;
template class Mappable<BlockedFilter>;

}  // namespace bloomery
