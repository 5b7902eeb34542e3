// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/plan.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "internal/sliced_fpr.h"

namespace bloomery {
namespace {

bool ValidHashes(uint32_t k) { return k >= kMinHashes && k <= kMaxHashes; }

absl::Status CheckCapacityAndFpr(uint64_t capacity, double fpr) {
  if (capacity == 0) return absl::InvalidArgumentError("capacity must be at least 1 key");
  if (!(fpr > 0.0 && fpr < 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("fpr must be in (0, 1), got %g", fpr));
  }
  return absl::OkStatus();
}

Plan MakePlan(Layout layout, uint64_t capacity, uint64_t bits, uint32_t k) {
  Plan plan;
  plan.layout = layout;
  plan.capacity = capacity;
  plan.bits = bits;
  plan.hashes = k;
  plan.bits_per_key = capacity ? static_cast<double>(bits) / static_cast<double>(capacity) : 0.0;
  plan.expected_fpr = PredictedFpr(layout, static_cast<double>(capacity), bits, k);
  return plan;
}

// Smallest unit count u in [1, max_units] with fits(u) (fits monotone: once true, true for every
// larger u), or 0.
template <typename Fits>
uint64_t SmallestUnits(uint64_t max_units, Fits fits) {
  uint64_t hi = 1;
  while (!fits(hi)) {
    if (hi >= max_units) return 0;
    hi = std::min(max_units, hi * 2);
  }
  uint64_t lo = hi / 2;  // !fits(lo), or lo == 0
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

// Bits a filter of `layout` with k probes needs for `capacity` keys at `fpr`; 0 if over kMaxBits.
uint64_t BitsNeeded(Layout layout, uint64_t capacity, double fpr, uint32_t k) {
  const double n = static_cast<double>(capacity);
  if (layout == Layout::kBlocked) {
    const uint32_t slices = SlicesPerBlock(k);
    const uint64_t blocks = SmallestUnits(kMaxBits / kBlockBits, [&](uint64_t b) {
      return internal::SlicedFprAtMost(fpr, n, b, k, slices, kBlockBits / slices);
    });
    return blocks * kBlockBits;
  }
  const uint64_t slice = SmallestUnits(kMaxBits / k, [&](uint64_t s) {
    return PartitionedFpr(n, static_cast<double>(s) * k, k) <= fpr;
  });
  return slice * k;
}

}  // namespace

double StandardFpr(double keys, double bits, uint32_t hashes) {
  if (keys <= 0) return 0.0;
  if (bits <= 0) return 1.0;
  return std::pow(-std::expm1(-static_cast<double>(hashes) * keys / bits), hashes);
}

double PartitionedFpr(double keys, double bits, uint32_t hashes) {
  if (keys <= 0) return 0.0;
  const double slice = bits / hashes;
  if (slice <= 1.0) return 1.0;
  // Each slice receives exactly one probe per key: P(bit set) = 1 - (1 - 1/slice)^n.
  return std::pow(-std::expm1(keys * std::log1p(-1.0 / slice)), hashes);
}

double BlockedFprAtLoad(double load, uint32_t hashes) {
  if (!ValidHashes(hashes)) return 1.0;
  const uint32_t slices = SlicesPerBlock(hashes);
  return internal::SlicedFprAtLoad(load, hashes, slices, kBlockBits / slices);
}

double BlockedFpr(double keys, uint64_t blocks, uint32_t hashes) {
  if (!ValidHashes(hashes)) return 1.0;
  const uint32_t slices = SlicesPerBlock(hashes);
  return internal::SlicedFpr(keys, blocks, hashes, slices, kBlockBits / slices);
}

double OptimalHashes(double bits_per_key) { return bits_per_key * std::numbers::ln2; }

double PredictedFpr(Layout layout, double keys, uint64_t bits, uint32_t hashes) {
  if (layout == Layout::kBlocked) return BlockedFpr(keys, bits / kBlockBits, hashes);
  return PartitionedFpr(keys, static_cast<double>(bits), hashes);
}

absl::StatusOr<Plan> PlanFor(uint64_t capacity, double fpr, Layout layout, uint32_t hashes) {
  if (absl::Status s = CheckCapacityAndFpr(capacity, fpr); !s.ok()) return s;
  if (hashes > kMaxHashes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("hashes must be in [%d, %d], got %d", kMinHashes, kMaxHashes, hashes));
  }
  const uint32_t k_lo = hashes ? hashes : kMinHashes;
  const uint32_t k_hi = hashes ? hashes : kMaxHashes;
  uint64_t best_bits = 0;
  uint32_t best_k = 0;
  for (uint32_t k = k_lo; k <= k_hi; ++k) {
    const uint64_t bits = BitsNeeded(layout, capacity, fpr, k);
    if (bits != 0 && (best_bits == 0 || bits < best_bits)) {
      best_bits = bits;
      best_k = k;
    }
  }
  if (best_bits == 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%d keys at fpr %g need more than the %d-bit maximum", capacity, fpr, kMaxBits));
  }
  return MakePlan(layout, capacity, best_bits, best_k);
}

absl::StatusOr<Plan> PlanForSize(uint64_t bits, uint32_t hashes, uint64_t capacity, Layout layout) {
  if (bits == 0 || bits > kMaxBits) {
    return absl::InvalidArgumentError(absl::StrFormat("bits must be in [1, 2^48], got %d", bits));
  }
  if (hashes > kMaxHashes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("hashes must be in [%d, %d], got %d", kMinHashes, kMaxHashes, hashes));
  }
  if (hashes == 0 && capacity == 0) {
    return absl::InvalidArgumentError("choose hashes, or give a capacity to choose them for");
  }
  auto rounded = [&](uint32_t k) -> uint64_t {
    if (layout == Layout::kBlocked) return (bits + kBlockBits - 1) / kBlockBits * kBlockBits;
    return (bits + k - 1) / k * k;
  };
  uint32_t k = hashes;
  if (k == 0) {
    double best = 2.0;
    for (uint32_t c = kMinHashes; c <= kMaxHashes; ++c) {
      const double f = PredictedFpr(layout, static_cast<double>(capacity), rounded(c), c);
      if (f < best) best = f, k = c;
    }
  }
  const uint64_t final_bits = rounded(k);
  if (final_bits > kMaxBits) {
    return absl::InvalidArgumentError("bits round up past the 2^48 maximum");
  }
  return MakePlan(layout, capacity, final_bits, k);
}

}  // namespace bloomery
