// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// fill_estimate.h (internal): what a filter's bits say about its contents, one home for every
// kind. The count of distinct keys from the fill (Swamidass & Baldi, "Mathematical correction for
// fingerprint similarity measures", 2007) with its standard error, and the FPR of a sliced line
// (blocked and counting layouts, see sliced_fpr.h) from the fill of its slices.
//
// Saturation. When every bit is set the count is unknowable: CountFromFill returns +infinity
// (never a finite guess, and never a value a caller may cast to an integer unchecked).
#ifndef BLOOMERY_LIB_BITS_INTERNAL_FILL_ESTIMATE_H_
#define BLOOMERY_LIB_BITS_INTERNAL_FILL_ESTIMATE_H_

#include <cmath>
#include <cstdint>
#include <limits>

namespace bloomery::detail {

// Distinct keys that leave `set` of `bits` bits set when each key sets `probes` distinct bits and
// any given bit with probability probes / bits (true of the blocked, classic and counting
// layouts): n = ln(1 - set/bits) / ln(1 - probes/bits). 0 for an empty filter, +infinity when
// every bit is set.
[[nodiscard]] inline double CountFromFill(uint64_t set, uint64_t bits, uint32_t probes) noexcept {
  if (bits == 0 || set == 0) return 0.0;
  if (set >= bits) return std::numeric_limits<double>::infinity();
  const double fill = static_cast<double>(set) / static_cast<double>(bits);
  return std::log1p(-fill) / std::log1p(-static_cast<double>(probes) / static_cast<double>(bits));
}

// Standard error of CountFromFill when the filter holds `count` keys: with t = probes * count /
// bits, Var(n) ~ bits * (e^t - 1 - t) / probes^2 (Swamidass & Baldi 2007; Papapetrou et al. 2010).
// About 0.8% of the count at 10 bits/key and k = 7.
[[nodiscard]] inline double CountStandardError(double count, uint64_t bits,
                                               uint32_t probes) noexcept {
  if (bits == 0 || probes == 0 || !(count > 0)) return 0.0;
  const double m = static_cast<double>(bits);
  const double t = static_cast<double>(probes) * count / m;
  return std::sqrt(m * (std::expm1(t) - t)) / probes;
}

// FPR of one sliced line from the fraction of each slice's cells that are set: a query starts at
// a uniform slice and needs its cell set in `hashes` consecutive slices (cyclically). At most 16
// slices.
[[nodiscard]] inline double SlicedLineFprFromFill(const double* fill, uint32_t slices,
                                                  uint32_t hashes) noexcept {
  // The slices twice over, so a window never wraps: no compare or `% slices` per probe. The
  // starts' products advance together, one probe at a time, so each multiply waits on its own
  // start's last one only: k multiplies of latency per line, not k x slices (the products one
  // start at a time took ~75 ns a line, most of Health()'s time). Each start's product is still
  // ((1 * f[s]) * f[s+1]) * ..., summed over s in order: the same result to the bit.
  double twice[32];
  for (uint32_t j = 0; j < slices; ++j) twice[j] = twice[j + slices] = fill[j];
  double product[16];
  for (uint32_t start = 0; start < slices; ++start) product[start] = 1;
  const uint32_t probes = hashes < slices ? hashes : slices;  // always hashes: k <= slices
  for (uint32_t i = 0; i < probes; ++i) {
    for (uint32_t start = 0; start < slices; ++start) product[start] *= twice[start + i];
  }
  double line = 0;
  for (uint32_t start = 0; start < slices; ++start) line += product[start];
  return line / slices;
}

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_BITS_INTERNAL_FILL_ESTIMATE_H_
