// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/plan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "plan/internal/memory_limit.h"
#include "plan/internal/sliced_fpr.h"

namespace bloomery {
namespace {

// The one sliced-layout model behind every kind's sizing. A key's k probes land in k distinct
// slices, one cell (a bit, or a counter of `cell_bits`) in each. Blocked and counting filters
// slice each block (layout.h: a 512-bit line, a 256-bit block or a 64-bit word) into
// SlicesOf(layout, k) slices of block_bits / slices / cell_bits cells and use k consecutive slices
// from a hash-chosen start: the exact sliced formula (plan/internal/sliced_fpr.h). A partitioned
// filter is one "line" of exactly k slices spanning the array, whose FPR has the closed form
// PartitionedFpr. The planner sizes in whole units: a block, or (partitioned) one more cell in
// each of the k slices.
struct SlicedModel {
  Layout layout = Layout::kLine512;
  uint32_t cell_bits = 1;

  [[nodiscard]] uint32_t block_bits() const {
    const BlockShape* shape = FindBlockShape(layout);
    return shape != nullptr ? shape->block_bits : kBlockBits;
  }
  [[nodiscard]] uint32_t max_hashes() const {
    if (cell_bits != 1) return kMaxCountingHashes;
    const BlockShape* shape = FindBlockShape(layout);
    return shape != nullptr ? shape->max_hashes : kMaxHashes;
  }
  [[nodiscard]] uint64_t unit_bits(uint32_t k) const {
    return layout == Layout::kPartitioned ? k : block_bits();
  }
  [[nodiscard]] uint32_t cells_per_slice(uint32_t k) const {
    return block_bits() / SlicesOf(layout, k) / cell_bits;
  }
  [[nodiscard]] double LineFpr(double keys, uint64_t blocks, uint32_t k) const {
    if (k < kMinHashes || k > max_hashes()) return 1.0;
    return detail::SlicedFpr(keys, blocks, k, SlicesOf(layout, k), cells_per_slice(k));
  }
  // Predicted FPR with `keys` keys in `bits` bits (a whole number of units).
  [[nodiscard]] double Fpr(double keys, uint64_t bits, uint32_t k) const {
    if (layout == Layout::kPartitioned) return PartitionedFpr(keys, static_cast<double>(bits), k);
    return LineFpr(keys, bits / block_bits(), k);
  }
  // Fpr(keys, bits, k) <= target, decided cheaply where the sliced formula's bound allows.
  [[nodiscard]] bool FprAtMost(double target, double keys, uint64_t bits, uint32_t k) const {
    if (layout == Layout::kPartitioned) return Fpr(keys, bits, k) <= target;
    return detail::SlicedFprAtMost(target, keys, bits / block_bits(), k, SlicesOf(layout, k),
                                   cells_per_slice(k));
  }
};

absl::Status CheckHashes(uint32_t hashes, uint32_t max_hashes) {
  if (hashes > max_hashes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("hashes must be in [%d, %d], got %d", kMinHashes, max_hashes, hashes));
  }
  return absl::OkStatus();
}

absl::Status CheckPromise(uint64_t capacity, double fpr) {
  if (capacity == 0) return absl::InvalidArgumentError("capacity must be at least 1 key");
  if (!(fpr > 0.0 && fpr < 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("fpr must be in (0, 1), got %g", fpr));
  }
  return absl::OkStatus();
}

// What the library creates it can save (the format holds a planned FPR in [0, 1)), and a filter
// whose FPR at its capacity rounds to 1 answers "maybe" to every key: such a geometry is refused
// when it is asked for, never found out at the first Save (`--bits 4K` for `4G`, say).
absl::Status CheckHolds(uint64_t capacity, uint64_t bits, double fpr) {
  if (fpr < 1.0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "%d bits cannot hold %d keys: the planned FPR is 1 (every lookup would answer maybe); give "
      "more bits or a smaller capacity",
      bits, capacity));
}

absl::Status CheckGeometry(uint64_t bits, uint32_t hashes, uint64_t capacity) {
  if (bits == 0 || bits > kMaxBits) {
    return absl::InvalidArgumentError(absl::StrFormat("bits must be in [1, 2^48], got %d", bits));
  }
  if (hashes == 0 && capacity == 0) {
    return absl::InvalidArgumentError("choose hashes, or give a capacity to choose them for");
  }
  return absl::OkStatus();
}

// Smallest u in (lo, hi] with fits(u), given fits(hi) and !fits(lo) (or lo == 0); fits is
// monotone: once true, true for every larger u.
template <typename Fits>
uint64_t Bisect(uint64_t lo, uint64_t hi, Fits fits) {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

// Smallest unit count u in [1, max_units] with fits(u) (monotone), or 0: doubles from 1, then
// bisects.
template <typename Fits>
uint64_t SmallestUnits(uint64_t max_units, Fits fits) {
  uint64_t hi = 1;
  while (!fits(hi)) {
    if (hi >= max_units) return 0;
    hi = std::min(max_units, hi * 2);
  }
  return Bisect(hi / 2, hi, fits);
}

struct Geometry {
  uint64_t bits = 0;
  uint32_t hashes = 0;
};

// The geometry `options` (checked by CheckSizing) asks of `model`: by promise, the fewest bits
// whose predicted FPR at capacity is <= fpr (ties go to the smaller k: fewer probes, same
// memory); by geometry, bits rounded up to whole units and the k with the lowest predicted FPR.
absl::StatusOr<Geometry> Size(const SlicedModel& model, const Sizing& options) {
  const double n = static_cast<double>(options.capacity);
  const uint32_t k_lo = options.hashes ? options.hashes : kMinHashes;
  const uint32_t k_hi = options.hashes ? options.hashes : model.max_hashes();
  Geometry best;
  if (options.bits != 0) {
    auto rounded = [&](uint32_t k) {
      const uint64_t unit = model.unit_bits(k);
      return (options.bits + unit - 1) / unit * unit;
    };
    best = {rounded(k_lo), k_lo};
    double best_fpr = 2.0;
    for (uint32_t k = k_lo; k_lo != k_hi && k <= k_hi; ++k) {
      const double f = model.Fpr(n, rounded(k), k);
      if (f < best_fpr) best_fpr = f, best = {rounded(k), k};
    }
    if (best.bits > kMaxBits) {
      return absl::InvalidArgumentError("bits round up past the 2^48 maximum");
    }
    return best;
  }
  for (uint32_t k = k_lo; k <= k_hi; ++k) {
    const uint64_t unit = model.unit_bits(k);
    auto fits = [&](uint64_t u) { return model.FprAtMost(options.fpr, n, u * unit, k); };
    uint64_t units = 0;
    if (best.bits == 0) {
      units = SmallestUnits(kMaxBits / unit, fits);
    } else {
      // k wins only with fewer bits than the best so far; fits is monotone, so one test at the
      // most units below that decides, and the search then bisects below it from the top: the
      // exact FPR of a few heavily loaded lines is what costs (thousands of long-double states
      // per key), so small unit counts are asked least. Same plan, asked less.
      const uint64_t below_best = (best.bits - 1) / unit;
      if (below_best != 0 && fits(below_best)) units = Bisect(0, below_best, fits);
    }
    if (units != 0) best = {units * unit, k};
  }
  if (best.bits == 0) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%d keys at fpr %g need more than the %d-bit maximum", options.capacity,
                        options.fpr, kMaxBits));
  }
  return best;
}

bool ValidCounterBits(uint32_t counter_bits) { return counter_bits == 4 || counter_bits == 8; }

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
  if (hashes < kMinHashes || hashes > kMaxHashes) return 1.0;
  const uint32_t slices = SlicesPerBlock(hashes);
  return detail::SlicedFprAtLoad(load, hashes, slices, kBlockBits / slices);
}

double BlockedFpr(double keys, uint64_t blocks, uint32_t hashes) {
  return SlicedModel{Layout::kLine512, 1}.LineFpr(keys, blocks, hashes);
}

double CountingFpr(double keys, uint64_t blocks, uint32_t hashes, uint32_t counter_bits) {
  if (!ValidCounterBits(counter_bits)) return 1.0;
  return SlicedModel{Layout::kLine512, counter_bits}.LineFpr(keys, blocks, hashes);
}

double OptimalHashes(double bits_per_key) { return bits_per_key * std::numbers::ln2; }

double PredictedFpr(Layout layout, double keys, uint64_t bits, uint32_t hashes) {
  if (layout == Layout::kAuto) return 1.0;
  const SlicedModel model{layout, 1};
  if (hashes < kMinHashes || hashes > model.max_hashes()) return 1.0;
  return model.Fpr(keys, bits, hashes);
}

uint64_t PlannedCapacity(uint64_t capacity, uint64_t cells, uint32_t hashes) noexcept {
  if (capacity != 0 || hashes == 0) return capacity;
  return static_cast<uint64_t>(static_cast<double>(cells) * std::numbers::ln2 / hashes);
}

double PlannedFpr(const Plan& plan) noexcept {
  if (plan.capacity != 0) return plan.expected_fpr;
  const uint64_t keys = PlannedCapacity(0, plan.bits, plan.hashes);
  return PredictedFpr(plan.layout, static_cast<double>(keys), plan.bits, plan.hashes);
}

double PlannedFpr(const CountingPlan& plan) noexcept {
  if (plan.capacity != 0) return plan.expected_fpr;
  const uint64_t keys = PlannedCapacity(0, plan.counters(), plan.hashes);
  return CountingFpr(static_cast<double>(keys), plan.blocks, plan.hashes, plan.counter_bits);
}

absl::Status CheckSizing(const Sizing& options, uint32_t max_hashes) {
  if (absl::Status s = CheckHashes(options.hashes, max_hashes); !s.ok()) return s;
  if (options.bits != 0) return CheckGeometry(options.bits, options.hashes, options.capacity);
  return CheckPromise(options.capacity, options.fpr);
}

namespace {

absl::StatusOr<Plan> PlanShape(const FilterOptions& options, Layout layout) {
  const SlicedModel model{layout, 1};
  const Sizing sizing{options.capacity, options.fpr, options.bits, options.hashes};
  if (absl::Status s = CheckSizing(sizing, model.max_hashes()); !s.ok()) return s;
  absl::StatusOr<Geometry> g = Size(model, sizing);
  if (!g.ok()) return g.status();
  Plan plan;
  plan.layout = layout;
  plan.probe = ResolveProbe(options.probe);
  if (layout != Layout::kPartitioned && FindBlockLayout(layout, plan.probe) == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("layout %s has no %s probe", LayoutName(layout), ProbeName(options.probe)));
  }
  plan.capacity = options.capacity;
  plan.bits = g->bits;
  plan.hashes = g->hashes;
  plan.bits_per_key =
      options.capacity ? static_cast<double>(g->bits) / static_cast<double>(options.capacity) : 0;
  plan.expected_fpr = model.Fpr(static_cast<double>(options.capacity), g->bits, g->hashes);
  if (absl::Status s = CheckHolds(plan.capacity, plan.bits, plan.expected_fpr); !s.ok()) return s;
  return plan;
}

// Layout::kAuto (PlanFilter's contract).
absl::StatusOr<Plan> PlanAuto(const FilterOptions& options) {
  std::vector<absl::StatusOr<Plan>> plans = PlanEachLayout(options);
  const Plan* chosen = nullptr;
  for (const absl::StatusOr<Plan>& plan : plans) {  // fewest bits first: ties go to the later
    if (!plan.ok()) continue;
    if (chosen == nullptr || (options.bits != 0 ? plan->expected_fpr < chosen->expected_fpr
                                                : plan->bits <= chosen->bits)) {
      chosen = &*plan;
    }
  }
  if (chosen == nullptr) return plans.front().status();
  if (options.layout_choice == LayoutChoice::kFastest) {
    for (auto plan = plans.rbegin(); plan != plans.rend(); ++plan) {
      if (plan->ok() &&
          detail::CheckMemoryCap(WholeLineBytes((*plan)->bits), options.memory.max_memory_bytes)
              .ok()) {
        return **plan;
      }
    }
  }
  return *chosen;
}

}  // namespace

absl::StatusOr<Plan> PlanFilter(const FilterOptions& options, Layout layout) {
  return layout == Layout::kAuto ? PlanAuto(options) : PlanShape(options, layout);
}

absl::StatusOr<Plan> FoldablePlan(const Plan& plan) {
  // The units a fold halves: blocks of the shape, or the bits of each of the k slices.
  const BlockShape* shape = FindBlockShape(plan.layout);
  if (plan.capacity == 0 || (shape == nullptr && plan.layout != Layout::kPartitioned)) {
    return plan;
  }
  const uint64_t unit_bits = shape != nullptr ? shape->block_bits : 1;
  const uint64_t units = shape != nullptr ? plan.blocks() : plan.bits / plan.hashes;
  const uint64_t per_unit = shape != nullptr ? unit_bits : unit_bits * plan.hashes;
  const int log2 = static_cast<int>(std::bit_width(units)) - 1;
  if (log2 <= 8) return plan;
  const uint64_t multiple = uint64_t{1} << (log2 - 8);
  const uint64_t rounded = (units + multiple - 1) / multiple * multiple;
  if (rounded > kMaxBits / per_unit) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("%d bits rounded for folding pass 2^48 bits", plan.bits));
  }
  Plan foldable = plan;
  foldable.bits = rounded * per_unit;
  foldable.bits_per_key =
      static_cast<double>(foldable.bits) / static_cast<double>(foldable.capacity);
  foldable.expected_fpr =
      PredictedFpr(plan.layout, static_cast<double>(plan.capacity), foldable.bits, plan.hashes);
  return foldable;
}

absl::StatusOr<Plan> PlanForCreate(const FilterOptions& options, Layout layout) {
  absl::StatusOr<Plan> plan = PlanFilter(options, layout);
  if (plan.ok() && options.bits == 0) plan = FoldablePlan(*plan);
  return plan;
}

std::vector<absl::StatusOr<Plan>> PlanEachLayout(const FilterOptions& options) {
  std::vector<absl::StatusOr<Plan>> plans;
  for (const BlockShape& shape : kBlockShapes) plans.push_back(PlanShape(options, shape.layout));
  return plans;
}

absl::StatusOr<Plan> PlanFor(uint64_t capacity, double fpr, Layout layout, uint32_t hashes,
                             Probe probe) {
  FilterOptions options;
  options.capacity = capacity;
  options.fpr = fpr;
  options.hashes = hashes;
  options.probe = probe;
  return PlanFilter(options, layout);
}

absl::StatusOr<Plan> PlanForSize(uint64_t bits, uint32_t hashes, uint64_t capacity, Layout layout,
                                 Probe probe) {
  if (absl::Status s = CheckGeometry(bits, hashes, capacity); !s.ok()) return s;
  FilterOptions options;
  options.bits = bits;
  options.hashes = hashes;
  options.capacity = capacity;
  options.probe = probe;
  return PlanFilter(options, layout);
}

absl::StatusOr<CountingPlan> PlanCountingFilter(const CountingOptions& options) {
  if (!ValidCounterBits(options.counter_bits)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("counter_bits must be 4 or 8, got %d", options.counter_bits));
  }
  const SlicedModel model{Layout::kLine512, options.counter_bits};
  const Sizing sizing{options.capacity, options.fpr, options.bits, options.hashes};
  if (absl::Status s = CheckSizing(sizing, model.max_hashes()); !s.ok()) return s;
  absl::StatusOr<Geometry> g = Size(model, sizing);
  if (!g.ok()) return g.status();
  CountingPlan plan;
  plan.capacity = options.capacity;
  plan.blocks = g->bits / kBlockBits;
  plan.hashes = g->hashes;
  plan.counter_bits = options.counter_bits;
  const double n = static_cast<double>(options.capacity);
  plan.bits_per_key = options.capacity ? static_cast<double>(g->bits) / n : 0.0;
  plan.expected_fpr = model.Fpr(n, g->bits, g->hashes);
  if (absl::Status s = CheckHolds(plan.capacity, g->bits, plan.expected_fpr); !s.ok()) return s;
  return plan;
}

}  // namespace bloomery
