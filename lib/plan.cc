// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/plan.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <map>
#include <numbers>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "internal/sliced_fpr.h"

namespace bloomery {
namespace {

// The sliced formula for one (k, slices, cells), as FPR(line holding L keys) = sum_j coef_j *
// value_j^L.
//
// A query probes slices W = {0..k-1} (by symmetry) at one cell each. With a = 1 - 1/cells, the
// chance that a given query cell is still empty after its slice received c probes is a^c, so
//   FPR(L) = E[prod_{j in W} (1 - a^{c_j})] = sum_{S subset W} (-1)^|S| E[a^{sum_{j in S} c_j}],
// and since the L keys are independent, E[a^{sum_S c_j}] = g_S^L with
//   g_S = (1/s) * sum_{start} a^{|S intersect window(start)|}.
// g_S depends only on how many starts see each overlap size, so subsets are grouped by that
// histogram and their signs summed exactly (integers) before any floating point is involved.
struct SlicedTerms {
  std::vector<double> value;
  std::vector<double> coef;
};

SlicedTerms ComputeSlicedTerms(uint32_t k, uint32_t slices, uint32_t cells) {
  const double a = 1.0 - 1.0 / cells;
  std::vector<uint32_t> windows(slices);
  for (uint32_t start = 0; start < slices; ++start) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < k; ++i) w |= 1u << ((start + i) % slices);
    windows[start] = w;
  }
  std::map<std::array<uint8_t, kMaxHashes + 1>, int64_t> grouped;
  for (uint32_t subset = 0; subset < (1u << k); ++subset) {
    std::array<uint8_t, kMaxHashes + 1> histogram{};
    for (uint32_t w : windows) ++histogram[std::popcount(subset & w)];
    grouped[histogram] += (std::popcount(subset) % 2 == 0) ? 1 : -1;
  }
  SlicedTerms terms;
  for (const auto& [histogram, coef] : grouped) {
    if (coef == 0) continue;
    double g = 0;
    for (uint32_t c = 0; c <= k; ++c) g += histogram[c] * std::pow(a, c);
    terms.value.push_back(g / slices);
    terms.coef.push_back(static_cast<double>(coef));
  }
  return terms;
}

// Computed once per (k, slices, cells) and kept: the planner evaluates the formula hundreds of
// times. std::map nodes never move, so the returned reference stays valid.
const SlicedTerms& TermsFor(uint32_t k, uint32_t slices, uint32_t cells) {
  static absl::Mutex mutex(absl::kConstInit);
  static std::map<std::array<uint32_t, 3>, SlicedTerms>* cache =
      new std::map<std::array<uint32_t, 3>, SlicedTerms>();  // never destroyed: no exit race
  absl::MutexLock lock(&mutex);
  auto [it, inserted] = cache->try_emplace({k, slices, cells});
  if (inserted) it->second = ComputeSlicedTerms(k, slices, cells);
  return it->second;
}

bool ValidSliced(uint32_t k, uint32_t slices, uint32_t cells) {
  return k >= 1 && k <= slices && slices <= kMaxHashes && cells >= 1;
}

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

// Smallest unit count u in [1, max_units] with fpr(u) <= target (fpr non-increasing in u), or 0.
template <typename Fpr>
uint64_t SmallestUnits(uint64_t max_units, double target, Fpr fpr) {
  uint64_t hi = 1;
  while (fpr(hi) > target) {
    if (hi >= max_units) return 0;
    hi = std::min(max_units, hi * 2);
  }
  uint64_t lo = hi / 2;  // fpr(lo) > target, or lo == 0
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fpr(mid) <= target ? hi : lo) = mid;
  }
  return hi;
}

// Bits a filter of `layout` with k probes needs for `capacity` keys at `fpr`; 0 if over kMaxBits.
uint64_t BitsNeeded(Layout layout, uint64_t capacity, double fpr, uint32_t k) {
  const double n = static_cast<double>(capacity);
  if (layout == Layout::kBlocked) {
    const uint64_t blocks =
        SmallestUnits(kMaxBits / kBlockBits, fpr, [&](uint64_t b) { return BlockedFpr(n, b, k); });
    return blocks * kBlockBits;
  }
  const uint64_t slice = SmallestUnits(kMaxBits / k, fpr, [&](uint64_t s) {
    return PartitionedFpr(n, static_cast<double>(s) * k, k);
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

namespace internal {

double SlicedFprAtLoad(double load, uint32_t hashes, uint32_t slices, uint32_t cells_per_slice) {
  if (!ValidSliced(hashes, slices, cells_per_slice)) return 1.0;
  if (load <= 0) return 0.0;
  const SlicedTerms& terms = TermsFor(hashes, slices, cells_per_slice);
  double fpr = 0;
  for (size_t j = 0; j < terms.value.size(); ++j) {
    fpr += terms.coef[j] * std::pow(terms.value[j], load);
  }
  return std::clamp(fpr, 0.0, 1.0);
}

double SlicedFpr(double keys, uint64_t blocks, uint32_t hashes, uint32_t slices,
                 uint32_t cells_per_slice) {
  if (!ValidSliced(hashes, slices, cells_per_slice)) return 1.0;
  if (keys <= 0) return 0.0;
  if (blocks == 0) return 1.0;
  if (blocks == 1) return SlicedFprAtLoad(keys, hashes, slices, cells_per_slice);
  // Line loads are Binomial(n, 1/B); E[v^L] = (1 - (1 - v)/B)^n is its generating function.
  const SlicedTerms& terms = TermsFor(hashes, slices, cells_per_slice);
  const double b = static_cast<double>(blocks);
  double fpr = 0;
  for (size_t j = 0; j < terms.value.size(); ++j) {
    fpr += terms.coef[j] * std::exp(keys * std::log1p(-(1.0 - terms.value[j]) / b));
  }
  return std::clamp(fpr, 0.0, 1.0);
}

}  // namespace internal

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
