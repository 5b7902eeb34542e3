// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// health_scan.h (internal): the one reading of a filter's blocks that EstimatedFpr,
// EstimatedCount and Health share. A kind reads a few numbers from each unit (a block's FPR
// term, its set bits, ...); ScanUnits adds them over every unit, or over the stratified sample
// health.h describes, scaled to every unit, with each total's standard error.
#ifndef BLOOMERY_LIB_FILTERS_INTERNAL_HEALTH_SCAN_H_
#define BLOOMERY_LIB_FILTERS_INTERNAL_HEALTH_SCAN_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "bits/internal/fill_estimate.h"
#include "bloomery/health.h"

namespace bloomery::detail {

// The totals of each reading over all units, and the standard error (1 sigma) of each: 0 when
// every unit was read.
struct ScanTotals {
  std::vector<double> total;
  std::vector<double> error;
  bool sampled = false;
};

// The sampling seed: fixed, so the same bits give the same Health().
inline constexpr uint64_t kHealthSeed = 0x9e3779b97f4a7c15;

// SplitMix64 (Steele et al. 2014): the strata's offsets.
[[nodiscard]] inline uint64_t NextSampleOffset(uint64_t& state) noexcept {
  uint64_t z = (state += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

// Calls read(unit, out) (which writes out[0, values)) for every unit of [0, units) and adds the
// readings, or, with `sample`, for one run of `run` contiguous units at a pseudo-random offset
// in each of `strata` equal strata, each stratum's mean per unit scaled to its size. A stratum
// shorter than a run is read whole; with fewer units than strata, everything is.
template <typename Read>
[[nodiscard]] ScanTotals ScanUnits(uint64_t units, size_t values, Read&& read, bool sample = false,
                                   uint64_t run = 1, uint32_t strata = kHealthStrata) {
  ScanTotals scan;
  scan.total.assign(values, 0.0);
  scan.error.assign(values, 0.0);
  std::vector<double> reading(values);
  if (!sample || units < uint64_t{strata} * 2) {
    for (uint64_t u = 0; u < units; ++u) {
      read(u, reading.data());
      for (size_t v = 0; v < values; ++v) scan.total[v] += reading[v];
    }
    return scan;
  }
  scan.sampled = true;
  // Per value: the sum and the sum of squares of the strata's means per unit.
  std::vector<double> sum(values, 0.0);
  std::vector<double> squares(values, 0.0);
  std::vector<double> stratum(values);
  uint64_t state = kHealthSeed;
  for (uint32_t s = 0; s < strata; ++s) {
    // Unit bounds without overflow for units up to 2^56.
    const uint64_t begin = units / strata * s + units % strata * s / strata;
    const uint64_t end = units / strata * (s + 1) + units % strata * (s + 1) / strata;
    const uint64_t size = end - begin;
    const uint64_t length = std::min(run, size);
    const uint64_t first = begin + NextSampleOffset(state) % (size - length + 1);
    std::fill(stratum.begin(), stratum.end(), 0.0);
    for (uint64_t u = first; u < first + length; ++u) {
      read(u, reading.data());
      for (size_t v = 0; v < values; ++v) stratum[v] += reading[v];
    }
    for (size_t v = 0; v < values; ++v) {
      const double mean = stratum[v] / static_cast<double>(length);
      scan.total[v] += mean * static_cast<double>(size);
      sum[v] += mean;
      squares[v] += mean * mean;
    }
  }
  // The runs are blocks of hashed keys, independent of each other: the error of the mean of
  // the strata's means is their spread over sqrt(strata) (the stratification's gain ignored).
  const double n = strata;
  for (size_t v = 0; v < values; ++v) {
    const double variance = std::max(0.0, (squares[v] - sum[v] * sum[v] / n) / (n - 1));
    scan.error[v] = static_cast<double>(units) * std::sqrt(variance / n);
  }
  return scan;
}

// Units per run of kHealthRunBytes for units of `unit_bytes`.
[[nodiscard]] constexpr uint64_t RunUnits(uint64_t unit_bytes) noexcept {
  return std::max<uint64_t>(1, kHealthRunBytes / std::max<uint64_t>(unit_bytes, 1));
}

struct CountReading {
  double count = 0;
  double error = 0;  // 3 sigma
};

// The distinct keys behind `set` (standard error `set_error`) of `bits` bits set by `probes`
// bits per key (CountFromFill), with the 3-sigma half-width of the estimator's error
// (CountStandardError) and the sample's, carried through the estimator's slope
// dn/dset = 1 / ((bits - set) * -ln(1 - probes / bits)).
[[nodiscard]] inline CountReading CountFromSample(double set, double set_error, uint64_t bits,
                                                  uint32_t probes) noexcept {
  const double whole = std::clamp(std::round(set), 0.0, static_cast<double>(bits));
  CountReading reading;
  reading.count = CountFromFill(static_cast<uint64_t>(whole), bits, probes);
  if (!std::isfinite(reading.count)) {
    reading.error = std::numeric_limits<double>::infinity();
    return reading;
  }
  const double slope =
      1.0 / ((static_cast<double>(bits) - whole) *
             -std::log1p(-static_cast<double>(probes) / static_cast<double>(bits)));
  reading.error =
      3 * std::hypot(CountStandardError(reading.count, bits, probes), set_error * slope);
  return reading;
}

// The health of a filter made of parts any of which may answer "maybe" (a scalable chain's stages,
// a window's live generations), from each part's reading: the FPR is 1 - prod(1 - fpr_i), counts
// and set bits add, and the parts' independent errors (3-sigma, as FilterHealth states them) add
// in quadrature. Fills the estimates and the fill of `health`; capacity, planned_fpr, sampled and
// state are the kind's to set.
class HealthOfParts {
 public:
  void Add(double fpr, double fpr_error, double count, double count_error, double set_bits,
           double bits) noexcept {
    none_ *= 1.0 - fpr;
    fpr_variance_ += (fpr_error / 3) * (fpr_error / 3);
    count_ += count;
    count_variance_ += (count_error / 3) * (count_error / 3);
    set_ += set_bits;
    bits_ += bits;
  }
  void Into(FilterHealth& health) const noexcept {
    health.estimated_count = count_;
    health.estimated_count_error = 3 * std::sqrt(count_variance_);
    health.fill_ratio = bits_ > 0 ? set_ / bits_ : 0.0;
    health.estimated_fpr = 1.0 - none_;
    health.estimated_fpr_error = 3 * std::sqrt(fpr_variance_);
  }

 private:
  double none_ = 1.0;  // probability that no part answers "maybe"
  double fpr_variance_ = 0;
  double count_ = 0;
  double count_variance_ = 0;
  double set_ = 0;
  double bits_ = 0;
};

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FILTERS_INTERNAL_HEALTH_SCAN_H_
