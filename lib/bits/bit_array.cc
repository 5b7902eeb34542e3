// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// BitArray (filter.h): what BlockedFilter and ClassicFilter do to every word alike. Padding bits
// past bits() are always 0, so whole-array word loops count and copy exactly the filter's bits.
#include "absl/status/status.h"
#include "bits/internal/fill_estimate.h"
#include "bits/internal/filter_ops.h"
#include "bloomery/filter.h"

namespace bloomery {

void BitArray::Clear() noexcept { detail::ClearWords(words_, words()); }

uint64_t BitArray::PopCount() const noexcept { return detail::PopCountWords(words_, words()); }

double BitArray::FillRatio() const noexcept {
  return bits() ? static_cast<double>(PopCount()) / static_cast<double>(bits()) : 0.0;
}

double BitArray::EstimatedCount() const noexcept {
  return detail::CountFromFill(PopCount(), bits(), hashes());
}

absl::Status BitArray::CheckSameBits(const BitArray& other) const {
  // The layout first: arrays of one size in different layouts hold a key's bits in different
  // places, so no union or intersection of them keeps its keys.
  if (absl::Status s = detail::CheckSameLayout(plan_, other.plan_); !s.ok()) {
    return s;
  }
  return detail::CheckSameArray(bits(), hashes(), hasher_, other.bits(), other.hashes(),
                                other.hasher_);
}

absl::Status BitArray::UniteBits(const BitArray& other) {
  if (absl::Status s = CheckSameBits(other); !s.ok()) return s;
  detail::UnionWords(words_, other.words_, words(), concurrent_);
  return absl::OkStatus();
}

}  // namespace bloomery
