// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The exact FPR of the sliced layout (see plan/internal/sliced_fpr.h), evaluated so that it stays
// right to a few ulps at every rate, 1e-20 and below included.
//
// Two exact formulas, one fast and one stable:
//
//  1. Inclusion-exclusion. A query probes slices W = {0..k-1} (by symmetry) at one cell each. With
//     a = 1 - 1/cells, the chance that a query cell is still empty after its slice received c
//     probes is a^c, so the FPR of a line holding L keys is
//       FPR(L) = E[prod_{j in W} (1 - a^{c_j})] = sum_{S subset W} (-1)^|S| g_S^L,
//     g_S = (1/s) sum_{start} a^{|S intersect window(start)|}, and over Binomial(n, 1/B) line loads
//     E[g^L] = (1 - (1 - g)/B)^n. Subsets are grouped by their overlap histogram, signs summed as
//     integers. The terms alternate: their sum cancels to FPR while the terms stay near 1, so in
//     floating point the relative error grows like (sum of |terms|) / FPR. Below ~1e-12 a double
//     evaluation has no correct digit left (issue #10 item 4).
//
//  2. A sum of positive terms. The coverage of W after L keys is a Markov chain on subsets of W:
//     a key picks a start, then hits each query cell its window covers with probability 1/cells.
//     FPR(L) is the chance the chain has reached W after L steps, computed by pushing the
//     distribution forward (multiplications and additions of non-negative numbers only), and the
//     FPR over line loads is sum_L Binomial(n, 1/B)(L) * FPR(L), again non-negative terms. Every
//     rounding is then relative: the result is right to a few ulps whatever its size. It costs
//     2^k states per step, so FPR(L) is tabulated once per layout and load, and only where needed.
//
// Each evaluation first runs formula 1 in long double with a running bound on its rounding error;
// if the bound is within 2^-52 of the result (FPR not far below 1, where cancellation is mild) that
// result is returned, otherwise formula 2. Formula 2 only runs where the FPR is small, which means
// lines are lightly loaded and the table stays short (tens to a few hundred loads).
#include "plan/internal/sliced_fpr.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace bloomery::detail {
namespace {

using Real = long double;
constexpr uint32_t kMaxSlices = 16;
constexpr Real kEpsilon = std::numeric_limits<Real>::epsilon();
// Accept formula 1 when its error bound is below this fraction of the result: 2^-52 is about one
// double ulp, so after the final rounding to double the result is within ~1.5 ulps.
constexpr Real kAcceptRelativeError = 0x1p-52L;
// Formula 2 tabulates FPR(L) up to this load. Formula 1 is accurate long before: a 512-bit line
// with hundreds of keys has an FPR near 1, where there is nothing to cancel.
constexpr uint64_t kMaxTabulatedLoad = 4096;

struct Term {
  Real coef;  // summed signs of the subsets with this overlap histogram
  Real h;     // 1 - g_S, computed directly (no cancellation): (1/s) sum_start (1 - a^overlap)
};

// Result of formula 1 with a bound on its rounding error.
struct Estimate {
  Real value;
  Real error;
  [[nodiscard]] bool accurate() const { return value > 0 && error <= value * kAcceptRelativeError; }
};

class SlicedModel {
 public:
  SlicedModel(uint32_t k, uint32_t slices, uint32_t cells) : k_(k), slices_(slices) {
    p_ = 1.0L / cells;
    log_a_ = std::log1p(-p_);
    for (uint32_t start = 0; start < slices; ++start) {
      uint32_t w = 0;
      for (uint32_t i = 0; i < k; ++i) w |= 1u << ((start + i) % slices);
      windows_[start] = w;
    }
    std::map<std::array<uint8_t, kMaxSlices + 1>, int64_t> grouped;
    for (uint32_t subset = 0; subset < (1u << k); ++subset) {
      std::array<uint8_t, kMaxSlices + 1> histogram{};
      for (uint32_t s = 0; s < slices; ++s) ++histogram[std::popcount(subset & windows_[s])];
      grouped[histogram] += (std::popcount(subset) % 2 == 0) ? 1 : -1;
    }
    for (const auto& [histogram, coef] : grouped) {
      if (coef == 0) continue;
      Real h = 0;
      for (uint32_t c = 1; c <= k; ++c) h += histogram[c] * -std::expm1(c * log_a_);
      terms_.push_back({static_cast<Real>(coef), h / slices});
    }
    // Coverage masks: the query cells (bits of W) that a key starting at `start` can hit.
    const uint32_t query = (1u << k) - 1;
    for (uint32_t start = 0; start < slices; ++start) masks_.push_back(windows_[start] & query);
    state_.assign(size_t{1} << k, 0.0L);
    state_[0] = 1.0L;
    load_fpr_.push_back(0.0L);
  }

  // Formula 1 for one line holding `load` keys.
  Estimate AtLoadByInclusionExclusion(Real load) const {
    return Sum([&](const Term& t) { return load * std::log1p(-t.h); });
  }

  // Formula 1 over Binomial(keys, 1/blocks) line loads.
  Estimate MixtureByInclusionExclusion(Real keys, Real blocks) const {
    return Sum([&](const Term& t) { return keys * std::log1p(-t.h / blocks); });
  }

  // Formula 2 for one line holding `load` keys; load <= kMaxTabulatedLoad.
  Real AtLoadByCoverage(uint64_t load) {
    absl::MutexLock lock(&mutex_);
    return LoadFpr(load);
  }

  // Formula 2 over Binomial(keys, 1/blocks) line loads, keys a whole number, blocks >= 2. Returns
  // a negative number when the loads that matter pass kMaxTabulatedLoad.
  Real MixtureByCoverage(Real keys, Real blocks) {
    const Real lambda = keys / blocks;
    if (lambda > static_cast<Real>(kMaxTabulatedLoad) / 4) return -1.0L;
    // pmf(L+1) / pmf(L) = (n - L) / ((L + 1) (B - 1)); pmf(0) = (1 - 1/B)^n.
    Real pmf = std::exp(keys * std::log1p(-1.0L / blocks));
    Real total = 0;
    absl::MutexLock lock(&mutex_);
    for (uint64_t load = 0;; ++load) {
      if (load > kMaxTabulatedLoad) return -1.0L;
      total += pmf * LoadFpr(load);
      const Real l = static_cast<Real>(load);
      if (l >= keys) break;
      const Real ratio = (keys - l) / ((l + 1) * (blocks - 1));
      pmf *= ratio;
      // Past the mode the pmf falls at least geometrically by `ratio`; FPR(L) <= 1 bounds the rest.
      if (l + 1 > lambda && ratio < 1 &&
          pmf / (1 - ratio) <= total * std::numeric_limits<Real>::epsilon()) {
        break;
      }
      if (pmf == 0) break;
    }
    return total;
  }

  uint32_t hashes() const { return k_; }
  uint32_t slices() const { return slices_; }

 private:
  template <typename Exponent>
  Estimate Sum(Exponent exponent) const {
    Real sum = 0;
    Real bound = 0;
    for (const Term& t : terms_) {
      const Real x = exponent(t);
      const Real term = t.coef * std::exp(x);
      sum += term;
      // exp(x) inherits x's absolute error (a few ulps of |x|), plus its own rounding and the
      // summation's: a few eps per term, scaled by the term's size.
      bound += std::fabs(term) * (4 * std::fabs(x) + 4 + static_cast<Real>(terms_.size()));
    }
    return {sum, bound * kEpsilon};
  }

  // FPR(load) from the table, extending it as needed.
  Real LoadFpr(uint64_t load) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    while (load_fpr_.size() <= load) {
      if (k_ == slices_) {
        // Every key covers every query slice: the slices are independent, (1 - a^L)^k exactly.
        const Real l = static_cast<Real>(load_fpr_.size());
        load_fpr_.push_back(std::exp(k_ * std::log(-std::expm1(l * log_a_))));
      } else {
        Step();
        load_fpr_.push_back(state_.back());
      }
    }
    return load_fpr_[load];
  }

  // One more key: state <- (1/s) sum_start Hit(start) state. Starts are visited in cyclic order
  // and split in halves, so the hits shared by a range of starts are applied once for all of it.
  void Step() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    next_.assign(state_.size(), 0.0L);
    scratch_.resize(std::bit_width(slices_) + 1);
    Accumulate(0, slices_, state_, 0, 0);
    const Real inv = 1.0L / slices_;
    for (size_t i = 0; i < state_.size(); ++i) state_[i] = next_[i] * inv;
  }

  void Accumulate(uint32_t lo, uint32_t hi, const std::vector<Real>& in, uint32_t applied,
                  uint32_t depth) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    uint32_t common = ~0u;
    for (uint32_t s = lo; s < hi; ++s) common &= masks_[s];
    const uint32_t todo = common & ~applied;
    const std::vector<Real>* current = &in;
    if (todo != 0) {
      std::vector<Real>& out = scratch_[depth];
      out = in;
      for (uint32_t rest = todo; rest != 0; rest &= rest - 1) Hit(out, std::countr_zero(rest));
      current = &out;
    }
    if (hi - lo == 1) {
      for (size_t i = 0; i < next_.size(); ++i) next_[i] += (*current)[i];
      return;
    }
    const uint32_t mid = lo + (hi - lo) / 2;
    Accumulate(lo, mid, *current, applied | common, depth + 1);
    Accumulate(mid, hi, *current, applied | common, depth + 1);
  }

  // A probe lands in query slice `j`: its query cell becomes set with probability p.
  void Hit(std::vector<Real>& dist, uint32_t j) const {
    const size_t bit = size_t{1} << j;
    const Real a = 1 - p_;
    for (size_t base = 0; base < dist.size(); base += 2 * bit) {
      for (size_t i = base; i < base + bit; ++i) {
        dist[i | bit] += p_ * dist[i];
        dist[i] *= a;
      }
    }
  }

  const uint32_t k_;
  const uint32_t slices_;
  Real p_;
  Real log_a_;
  std::array<uint32_t, kMaxSlices> windows_{};
  std::vector<uint32_t> masks_;
  std::vector<Term> terms_;

  absl::Mutex mutex_;
  std::vector<Real> state_ ABSL_GUARDED_BY(mutex_);     // distribution over covered subsets of W
  std::vector<Real> load_fpr_ ABSL_GUARDED_BY(mutex_);  // FPR(L) for L < size
  std::vector<Real> next_ ABSL_GUARDED_BY(mutex_);
  std::vector<std::vector<Real>> scratch_ ABSL_GUARDED_BY(mutex_);
};

// One model per (k, slices, cells), built on first use and kept: the planner evaluates the formula
// hundreds of times. Models never move or die, so the returned reference stays valid.
SlicedModel& ModelFor(uint32_t k, uint32_t slices, uint32_t cells) {
  static absl::Mutex mutex(absl::kConstInit);
  static auto* cache = new std::map<std::array<uint32_t, 3>, std::unique_ptr<SlicedModel>>();
  absl::MutexLock lock(&mutex);
  std::unique_ptr<SlicedModel>& model = (*cache)[{k, slices, cells}];
  if (model == nullptr) model = std::make_unique<SlicedModel>(k, slices, cells);
  return *model;
}

bool ValidSliced(uint32_t k, uint32_t slices, uint32_t cells) {
  return k >= 1 && k <= slices && slices <= kMaxSlices && cells >= 1;
}

double ToProbability(Real x) { return static_cast<double>(std::clamp(x, 0.0L, 1.0L)); }

// The exact value for one line of `load` keys when formula 1 (`estimate`) cannot vouch for its
// digits. Formula 2 counts whole keys; a fractional load (an average, not a line) keeps formula 1.
double LineExact(SlicedModel& model, double load, const Estimate& estimate) {
  if (estimate.accurate()) return ToProbability(estimate.value);
  if (load == std::floor(load) && load <= kMaxTabulatedLoad) {
    return ToProbability(model.AtLoadByCoverage(static_cast<uint64_t>(load)));
  }
  return ToProbability(estimate.value);
}

}  // namespace

double SlicedFprAtLoad(double load, uint32_t hashes, uint32_t slices, uint32_t cells_per_slice) {
  if (!ValidSliced(hashes, slices, cells_per_slice)) return 1.0;
  if (!(load > 0)) return 0.0;
  SlicedModel& model = ModelFor(hashes, slices, cells_per_slice);
  return LineExact(model, load, model.AtLoadByInclusionExclusion(load));
}

namespace {

// Formula 1 for `keys` keys in `blocks` lines; keys a whole number, blocks >= 2.
Estimate MixtureEstimate(SlicedModel& model, double keys, uint64_t blocks) {
  return model.MixtureByInclusionExclusion(keys, static_cast<Real>(blocks));
}

// The exact value when formula 1 cannot vouch for its digits.
double MixtureExact(SlicedModel& model, double keys, uint64_t blocks, const Estimate& estimate) {
  if (estimate.accurate()) return ToProbability(estimate.value);
  const Real exact = model.MixtureByCoverage(keys, static_cast<Real>(blocks));
  return ToProbability(exact >= 0 ? exact : estimate.value);
}

}  // namespace

double SlicedFpr(double keys, uint64_t blocks, uint32_t hashes, uint32_t slices,
                 uint32_t cells_per_slice) {
  if (!ValidSliced(hashes, slices, cells_per_slice)) return 1.0;
  if (!(keys > 0)) return 0.0;
  if (blocks == 0) return 1.0;
  // A fractional key count is rounded up: the FPR grows with the keys, so this never flatters.
  const double n = std::ceil(keys);
  if (blocks == 1) return SlicedFprAtLoad(n, hashes, slices, cells_per_slice);
  SlicedModel& model = ModelFor(hashes, slices, cells_per_slice);
  return MixtureExact(model, n, blocks, MixtureEstimate(model, n, blocks));
}

bool SlicedFprAtMost(double target, double keys, uint64_t blocks, uint32_t hashes, uint32_t slices,
                     uint32_t cells_per_slice) {
  if (!ValidSliced(hashes, slices, cells_per_slice) || !(keys > 0) || blocks == 0) {
    return SlicedFpr(keys, blocks, hashes, slices, cells_per_slice) <= target;
  }
  const double n = std::ceil(keys);
  SlicedModel& model = ModelFor(hashes, slices, cells_per_slice);
  const Estimate estimate =
      blocks == 1 ? model.AtLoadByInclusionExclusion(n) : MixtureEstimate(model, n, blocks);
  // Most comparisons are decided by formula 1 with its error bound; only those too close to call
  // pay for the exact sum. The bounds are rounded as the exact value would be (rounding is
  // monotone), so the answer is always SlicedFpr(...) <= target, a tie included.
  if (ToProbability(estimate.value + estimate.error) <= target) return true;
  if (ToProbability(estimate.value - estimate.error) > target) return false;
  if (blocks == 1) return LineExact(model, n, estimate) <= target;
  return MixtureExact(model, n, blocks, estimate) <= target;
}

}  // namespace bloomery::detail
