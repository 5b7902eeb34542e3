// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/plan.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "plan/internal/sliced_fpr.h"

namespace bloomery {
namespace {

// Poisson(lambda) mixture of BlockedFprAtLoad, summed directly: an independent route to the blocked
// formula, which the closed form must match for many blocks (binomial ~ Poisson).
double PoissonMixture(double lambda, uint32_t k) {
  double total = 0;
  for (int load = 0; load < lambda * 4 + 200; ++load) {
    const double pmf = std::exp(-lambda + load * std::log(lambda) - std::lgamma(load + 1.0));
    total += pmf * BlockedFprAtLoad(load, k);
  }
  return total;
}

// An independent evaluation of the sliced layout in 113-bit arithmetic, from its definition:
// a line holding L keys, each with a uniform start among `slices`, then one uniform cell in each of
// its k consecutive slices. Summing over the start counts (m_0..m_{s-1}) with their multinomial
// weights, a query's cell in slice j is set with probability 1 - a^{c_j} = p (1 + a + ... +
// a^{c_j - 1}), c_j the keys whose window covers j. Every term is positive: exact to ~1e-32.
__extension__ typedef __float128 Quad;

Quad ReferenceFprAtLoad(uint32_t load, uint32_t k, uint32_t slices, uint32_t cells) {
  const Quad p = Quad(1) / cells;
  const Quad a = Quad(1) - p;
  std::vector<Quad> factorial(load + 1, Quad(1));
  for (uint32_t i = 1; i <= load; ++i) factorial[i] = factorial[i - 1] * i;
  std::vector<uint32_t> starts(slices, 0);
  Quad total = 0;
  std::function<void(uint32_t, uint32_t)> visit = [&](uint32_t start, uint32_t left) {
    if (start + 1 == slices) {
      starts[start] = left;
      Quad weight = factorial[load];
      for (uint32_t m : starts) weight /= factorial[m];
      for (uint32_t i = 0; i < load; ++i) weight /= slices;
      Quad product = 1;
      for (uint32_t j = 0; j < k; ++j) {
        uint32_t c = 0;
        for (uint32_t s = 0; s < slices; ++s) {
          if ((j + slices - s) % slices < k) c += starts[s];  // window of s covers j
        }
        Quad set = 0;
        Quad power = 1;
        for (uint32_t i = 0; i < c; ++i) set += power, power *= a;
        product *= p * set;
      }
      total += weight * product;
      return;
    }
    for (uint32_t m = 0; m <= left; ++m) {
      starts[start] = m;
      visit(start + 1, left - m);
    }
  };
  visit(0, load);
  return total;
}

// Binomial(keys, 1/blocks) mixture of the reference: exact when keys is small.
Quad ReferenceFpr(uint32_t keys, uint64_t blocks, uint32_t k, uint32_t slices, uint32_t cells) {
  const Quad q = Quad(1) / static_cast<Quad>(blocks);
  Quad total = 0;
  Quad choose = 1;
  for (uint32_t load = 0; load <= keys; ++load) {
    Quad pmf = choose;
    for (uint32_t i = 0; i < load; ++i) pmf *= q;
    for (uint32_t i = load; i < keys; ++i) pmf *= Quad(1) - q;
    if (load > 0) total += pmf * ReferenceFprAtLoad(load, k, slices, cells);
    choose = choose * (keys - load) / (load + 1);
  }
  return total;
}

// Inclusion-exclusion over every subset of the query's slices (no grouping), in 113-bit
// arithmetic: independent of the library's code. Its terms alternate, so it also returns a bound
// on its own rounding error: each term's power carries about keys * 2^-113 relative error.
struct QuadEstimate {
  Quad value;
  Quad error;
};

QuadEstimate ReferenceInclusionExclusion(uint64_t keys, uint64_t blocks, uint32_t k,
                                         uint32_t slices, uint32_t cells) {
  const Quad a = Quad(1) - Quad(1) / cells;
  QuadEstimate estimate{0, 0};
  for (uint32_t subset = 0; subset < (1u << k); ++subset) {
    Quad g = 0;
    for (uint32_t start = 0; start < slices; ++start) {
      Quad power = 1;
      for (uint32_t i = 0; i < k; ++i) {
        if (subset >> ((start + i) % slices) & 1) power *= a;
      }
      g += power;
    }
    g /= slices;
    Quad base = Quad(1) - (Quad(1) - g) / static_cast<Quad>(blocks);
    Quad result = 1;
    for (uint64_t e = keys; e != 0; e >>= 1, base *= base) {
      if (e & 1) result *= base;
    }
    estimate.value += (std::popcount(subset) % 2 == 0) ? result : -result;
    estimate.error += result * static_cast<Quad>(2 * keys + 4 * slices + 8);
  }
  for (int i = 0; i < 113; ++i) estimate.error /= 2;
  return estimate;
}

double RelativeError(double value, Quad reference) {
  return static_cast<double>((static_cast<Quad>(value) - reference) / reference);
}

struct SlicedLayout {
  uint32_t k;
  uint32_t slices;
  uint32_t cells;
};

// Blocked (8 x 64 for k <= 8, 16 x 32 above) and counting (8 slices of 16 or 8 counters).
std::vector<SlicedLayout> AllSlicedLayouts() {
  std::vector<SlicedLayout> layouts;
  for (uint32_t k = 1; k <= kMaxHashes; ++k) {
    layouts.push_back({k, SlicesPerBlock(k), kBlockBits / SlicesPerBlock(k)});
  }
  for (uint32_t k = 1; k <= 8; ++k) {
    layouts.push_back({k, 8, 16});
    layouts.push_back({k, 8, 8});
  }
  return layouts;
}

TEST_CASE("sliced FPR of a line is right to a few ulps at every rate, however small") {
  for (const SlicedLayout& layout : AllSlicedLayouts()) {
    const uint32_t max_load = layout.slices == 8 ? 6 : 4;  // the reference enumerates start counts
    for (uint32_t load = 1; load <= max_load; ++load) {
      CAPTURE(layout.k);
      CAPTURE(layout.slices);
      CAPTURE(layout.cells);
      CAPTURE(load);
      const Quad reference = ReferenceFprAtLoad(load, layout.k, layout.slices, layout.cells);
      const double fpr = detail::SlicedFprAtLoad(load, layout.k, layout.slices, layout.cells);
      CAPTURE(fpr);
      REQUIRE(fpr > 0);
      CHECK(std::fabs(RelativeError(fpr, reference)) <= 4 * std::numeric_limits<double>::epsilon());
    }
  }
}

TEST_CASE("sliced FPR over many lines is right to a few ulps for a few keys in 2^39 lines") {
  const uint64_t blocks = uint64_t{1} << 39;
  for (const SlicedLayout& layout : AllSlicedLayouts()) {
    for (uint32_t keys : {1u, 2u, 3u}) {
      CAPTURE(layout.k);
      CAPTURE(layout.slices);
      CAPTURE(layout.cells);
      CAPTURE(keys);
      const Quad reference = ReferenceFpr(keys, blocks, layout.k, layout.slices, layout.cells);
      const double fpr = detail::SlicedFpr(keys, blocks, layout.k, layout.slices, layout.cells);
      CAPTURE(fpr);
      REQUIRE(fpr > 0);
      CHECK(std::fabs(RelativeError(fpr, reference)) <= 4 * std::numeric_limits<double>::epsilon());
    }
  }
}

TEST_CASE("blocked FPR of planned filters at 1e-12 .. 1e-20 agrees with 113-bit arithmetic") {
  // Issue #10: 1e6 keys, 267,910,656 bits, k = 14 was predicted 3.73e-14; at 60 digits it is
  // 4.06e-13.
  CHECK(BlockedFpr(1e6, 267'910'656 / kBlockBits, 14) == doctest::Approx(4.06e-13).epsilon(1e-3));
  for (double p : {1e-12, 1e-13, 1e-15, 1e-16, 1e-18, 1e-20}) {
    absl::StatusOr<Plan> plan = PlanFor(1000, p);
    REQUIRE(plan.ok());
    for (uint64_t blocks : {plan->blocks(), plan->blocks() - 1}) {
      CAPTURE(p);
      CAPTURE(blocks);
      const uint32_t slices = SlicesPerBlock(plan->hashes);
      const QuadEstimate reference =
          ReferenceInclusionExclusion(1000, blocks, plan->hashes, slices, kBlockBits / slices);
      const double tolerance = static_cast<double>(reference.error / reference.value) +
                               4 * std::numeric_limits<double>::epsilon();
      CAPTURE(tolerance);
      REQUIRE(tolerance < 1e-5);
      CHECK(std::fabs(RelativeError(BlockedFpr(1000, blocks, plan->hashes), reference.value)) <=
            tolerance);
    }
  }
}

TEST_CASE("standard filter formula matches the textbook table") {
  // Fan et al. / the classic table: m/n = 10, k = 7 gives 0.00819; m/n = 8, k = 6 gives 0.0216.
  CHECK(StandardFpr(1000, 10000, 7) == doctest::Approx(0.00819).epsilon(0.005));
  CHECK(StandardFpr(1000, 8000, 6) == doctest::Approx(0.0216).epsilon(0.005));
  CHECK(StandardFpr(0, 100, 3) == 0.0);
  CHECK(OptimalHashes(10) == doctest::Approx(6.931).epsilon(0.001));
}

TEST_CASE("partitioned filter is slightly worse than the standard one at the same size") {
  for (uint32_t k = 2; k <= 8; ++k) {
    const double standard = StandardFpr(1e5, 1e6, k);
    const double partitioned = PartitionedFpr(1e5, 1e6, k);
    CHECK(partitioned >= standard);
    CHECK(partitioned <= standard * 1.01);
  }
}

TEST_CASE("blocked formula: a line holding L keys with k == slices is (1 - (1 - 1/w)^L)^k") {
  for (double load : {1.0, 10.0, 51.2, 100.0}) {
    CHECK(BlockedFprAtLoad(load, 8) ==
          doctest::Approx(std::pow(1 - std::pow(1 - 1.0 / 64, load), 8)).epsilon(1e-9));
    CHECK(BlockedFprAtLoad(load, 16) ==
          doctest::Approx(std::pow(1 - std::pow(1 - 1.0 / 32, load), 16)).epsilon(1e-9));
  }
  CHECK(BlockedFprAtLoad(0, 6) == 0.0);
  CHECK(BlockedFprAtLoad(1, 1) == doctest::Approx(1.0 / 512 * 8 / 8).epsilon(1e-9));
}

TEST_CASE("blocked formula: closed form equals the direct Poisson mixture for many blocks") {
  for (uint32_t k = 1; k <= kMaxHashes; ++k) {
    for (double bits_per_key : {6.0, 10.0, 20.0}) {
      const uint64_t blocks = 1 << 20;
      const double keys = blocks * kBlockBits / bits_per_key;
      CHECK(BlockedFpr(keys, blocks, k) ==
            doctest::Approx(PoissonMixture(kBlockBits / bits_per_key, k)).epsilon(1e-4));
    }
  }
}

TEST_CASE("blocked layout at 10 bits/key: k = 6 predicts ~0.973%, above the classic 0.82%") {
  const double keys = 1e6;
  const uint64_t blocks = static_cast<uint64_t>(keys * 10 / kBlockBits);
  CHECK(BlockedFpr(keys, blocks, 6) == doctest::Approx(0.009727).epsilon(0.002));
  CHECK(BlockedFpr(keys, blocks, 6) > StandardFpr(keys, blocks * kBlockBits, 7));
  // Distinct-slice partitioning beats the 8-probe split block filter (1.05%) at the same size.
  CHECK(BlockedFpr(keys, blocks, 6) < BlockedFpr(keys, blocks, 8));
}

TEST_CASE("planner: predicted FPR <= requested, and one unit less would break the promise") {
  for (double n : {1.0, 7.0, 1000.0, 1e6, 1e8, 1e10}) {
    for (double p = 0.5; p >= 1e-7; p /= 3.7) {
      for (Layout layout : {Layout::kLine512, Layout::kPartitioned}) {
        CAPTURE(n);
        CAPTURE(p);
        absl::StatusOr<Plan> plan = PlanFor(static_cast<uint64_t>(n), p, layout);
        REQUIRE(plan.ok());
        CHECK(plan->expected_fpr <= p);
        CHECK(plan->expected_fpr == PredictedFpr(layout, n, plan->bits, plan->hashes));
        CHECK(plan->hashes >= kMinHashes);
        CHECK(plan->hashes <= kMaxHashes);
        const uint64_t unit = layout == Layout::kLine512 ? kBlockBits : plan->hashes;
        if (plan->bits > unit) {
          CHECK(PredictedFpr(layout, n, plan->bits - unit, plan->hashes) > p);
        }
        if (layout == Layout::kLine512) CHECK(plan->bits % kBlockBits == 0);
      }
    }
  }
}

TEST_CASE("planner: the promise holds at 1e-12 .. 1e-20 too, with no FPR of 0") {
  for (double n : {1.0, 1000.0, 1e6, 1e9}) {
    for (double p : {1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-18, 1e-20}) {
      for (Layout layout : {Layout::kLine512, Layout::kPartitioned}) {
        CAPTURE(n);
        CAPTURE(p);
        absl::StatusOr<Plan> plan = PlanFor(static_cast<uint64_t>(n), p, layout);
        REQUIRE(plan.ok());
        CHECK(plan->expected_fpr > 0);
        CHECK(plan->expected_fpr <= p);
        const uint64_t unit = layout == Layout::kLine512 ? kBlockBits : plan->hashes;
        if (plan->bits > unit) {
          CHECK(PredictedFpr(layout, n, plan->bits - unit, plan->hashes) > p);
        }
      }
    }
  }
}

TEST_CASE("planner: 1% costs ~10 bits/key blocked with k = 6 or 7, ~9.6 classic") {
  absl::StatusOr<Plan> blocked = PlanFor(1'000'000, 0.01);
  REQUIRE(blocked.ok());
  CHECK(blocked->bits_per_key > 9.5);
  CHECK(blocked->bits_per_key < 10.5);
  CHECK((blocked->hashes == 6 || blocked->hashes == 7));
  absl::StatusOr<Plan> classic = PlanFor(1'000'000, 0.01, Layout::kPartitioned);
  REQUIRE(classic.ok());
  CHECK(classic->bits_per_key < blocked->bits_per_key);
  CHECK(classic->bits_per_key == doctest::Approx(9.59).epsilon(0.01));
}

TEST_CASE("planner: the chosen k needs no more bits than any other k") {
  absl::StatusOr<Plan> chosen = PlanFor(5'000'000, 1e-4);
  REQUIRE(chosen.ok());
  for (uint32_t k = kMinHashes; k <= kMaxHashes; ++k) {
    absl::StatusOr<Plan> fixed = PlanFor(5'000'000, 1e-4, Layout::kLine512, k);
    REQUIRE(fixed.ok());
    CHECK(fixed->hashes == k);
    CHECK(fixed->bits >= chosen->bits);
  }
}

// SlicedFprAtMost decides by formula 1's error bound where it can (plan/internal/sliced_fpr.h): its
// answer must be the exact value's, however close the target, in one line and over many.
TEST_CASE("SlicedFprAtMost answers as the exact FPR compared with the target does") {
  for (const SlicedLayout& layout : AllSlicedLayouts()) {
    for (const uint64_t blocks : {uint64_t{1}, uint64_t{2}, uint64_t{1000}}) {
      for (const double keys : {1.0, 3.0, 10.0, 40.0}) {
        CAPTURE(layout.k);
        CAPTURE(layout.slices);
        CAPTURE(layout.cells);
        CAPTURE(blocks);
        CAPTURE(keys);
        const double exact = detail::SlicedFpr(keys, blocks, layout.k, layout.slices, layout.cells);
        for (const double scale : {0.5, 1 - 1e-12, 1.0, 1 + 1e-12, 2.0}) {
          const double target = exact * scale;
          CAPTURE(target);
          CHECK(detail::SlicedFprAtMost(target, keys, blocks, layout.k, layout.slices,
                                        layout.cells) == (exact <= target));
        }
      }
    }
  }
}

// The planner skips a k that cannot beat the best so far (lib/plan/plan.cc); tiny filters, where
// one or two lines hold every key, are where that matters.
TEST_CASE("planner: for tiny filters too, the chosen k needs no more bits than any other k") {
  for (const uint64_t capacity : {1u, 20u, 40u, 200u}) {
    for (const double fpr : {0.01, 0.0025, 1e-6}) {
      CAPTURE(capacity);
      CAPTURE(fpr);
      absl::StatusOr<Plan> chosen = PlanFor(capacity, fpr);
      REQUIRE(chosen.ok());
      for (uint32_t k = kMinHashes; k <= kMaxHashes; ++k) {
        CAPTURE(k);
        absl::StatusOr<Plan> fixed = PlanFor(capacity, fpr, Layout::kLine512, k);
        if (!fixed.ok()) continue;  // no size of this k keeps the promise
        CHECK(fixed->bits >= chosen->bits);
        if (fixed->bits == chosen->bits) CHECK(k >= chosen->hashes);
      }
    }
  }
}

TEST_CASE("planner: explicit geometry, the common 2^30 bits with 6 hashes") {
  absl::StatusOr<Plan> plan = PlanForSize(uint64_t{1} << 30, 6, 100'000'000);
  REQUIRE(plan.ok());
  CHECK(plan->bits == uint64_t{1} << 30);
  CHECK(plan->hashes == 6);
  CHECK(plan->blocks() == uint64_t{1} << 21);
  CHECK(plan->bits_per_key == doctest::Approx(10.737).epsilon(0.001));
  CHECK(plan->expected_fpr == doctest::Approx(BlockedFpr(1e8, 1 << 21, 6)));
  // Bits round up to whole blocks; hashes == 0 picks the best k for the capacity.
  absl::StatusOr<Plan> rounded = PlanForSize(1000, 0, 100);
  REQUIRE(rounded.ok());
  CHECK(rounded->bits == 1024);
  for (uint32_t k = 1; k <= kMaxHashes; ++k) {
    CHECK(rounded->expected_fpr <= BlockedFpr(100, 2, k));
  }
}

TEST_CASE("planner: bad input gets InvalidArgument or ResourceExhausted, never an abort") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(PlanFor(0, 0.01).status().code() == absl::StatusCode::kInvalidArgument);
  for (double bad : {0.0, -0.1, 1.0, 1.5, nan, std::numeric_limits<double>::infinity()}) {
    absl::Status s = PlanFor(1000, bad).status();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(s.message().find("fpr") != std::string_view::npos);
  }
  CHECK(PlanFor(1000, 0.01, Layout::kLine512, 17).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(PlanFor(uint64_t{1} << 62, 1e-7).status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(PlanForSize(0, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(kMaxBits + 1, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(~uint64_t{0}, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(1024, 0, 0).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("one validation: every kind's planner refuses bad sizing with CheckSizing's message") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<FilterOptions> bad(8);
  bad[0].capacity = 0;
  for (size_t i = 1; i < 4; ++i) bad[i].capacity = 1000;
  bad[1].fpr = 0.0;
  bad[2].fpr = 1.0;
  bad[3].fpr = nan;
  bad[4].bits = kMaxBits + 1;
  bad[4].hashes = 3;
  bad[5].bits = 4096;  // neither hashes nor a capacity to choose them for
  bad[6].capacity = 1000;
  bad[6].hashes = kMaxHashes + 1;
  bad[7].bits = 4096;
  bad[7].hashes = kMaxHashes + 1;
  for (const FilterOptions& o : bad) {
    const absl::Status s = CheckSizing(o);
    CAPTURE(s.message());
    REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(PlanFilter(o, Layout::kLine512).status() == s);
    CHECK(PlanFilter(o, Layout::kPartitioned).status() == s);
    const CountingOptions counting{
        .capacity = o.capacity, .fpr = o.fpr, .bits = o.bits, .hashes = o.hashes};
    CHECK(PlanCountingFilter(counting).status() == CheckSizing(o, kMaxCountingHashes));
  }
  // A counting filter allows fewer probes (one slice each), with the same message shape.
  const FilterOptions nine{.capacity = 1000, .hashes = kMaxCountingHashes + 1};
  CHECK(CheckSizing(nine).ok());
  const absl::Status s = CheckSizing(nine, kMaxCountingHashes);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanCountingFilter({.capacity = nine.capacity, .hashes = nine.hashes}).status() == s);
  CHECK(PlanFilter(nine, Layout::kLine512).ok());
}

TEST_CASE("PlanFilter is PlanForSize with bits, PlanFor without") {
  FilterOptions o;
  o.capacity = 123'456;
  o.fpr = 0.003;
  for (Layout layout : {Layout::kLine512, Layout::kPartitioned}) {
    for (uint32_t k : {0u, 5u}) {
      o.hashes = k;
      o.bits = 0;
      absl::StatusOr<Plan> promise = PlanFilter(o, layout);
      absl::StatusOr<Plan> direct = PlanFor(o.capacity, o.fpr, layout, k);
      REQUIRE(promise.ok());
      REQUIRE(direct.ok());
      CHECK(promise->bits == direct->bits);
      CHECK(promise->hashes == direct->hashes);
      CHECK(promise->expected_fpr == direct->expected_fpr);
      o.bits = 1'000'003;
      absl::StatusOr<Plan> geometry = PlanFilter(o, layout);
      absl::StatusOr<Plan> sized = PlanForSize(o.bits, k, o.capacity, layout);
      REQUIRE(geometry.ok());
      REQUIRE(sized.ok());
      CHECK(geometry->bits == sized->bits);
      CHECK(geometry->hashes == sized->hashes);
      CHECK(geometry->expected_fpr == sized->expected_fpr);
    }
  }
}

TEST_CASE("PlanForCreate folds a plan sized by capacity and fpr, and keeps one sized by bits") {
  for (const Layout layout :
       {Layout::kLine512, Layout::kBlock256, Layout::kWord64, Layout::kPartitioned}) {
    CAPTURE(LayoutName(layout));
    const FilterOptions promise{.capacity = 1'000'000, .fpr = 0.01};
    absl::StatusOr<Plan> planned = PlanFilter(promise, layout);
    REQUIRE(planned.ok());
    absl::StatusOr<Plan> foldable = FoldablePlan(*planned);
    REQUIRE(foldable.ok());
    REQUIRE(foldable->bits != planned->bits);  // the case tells folding from none
    absl::StatusOr<Plan> created = PlanForCreate(promise, layout);
    REQUIRE(created.ok());
    CHECK(created->bits == foldable->bits);
    CHECK(created->hashes == foldable->hashes);
    CHECK(created->expected_fpr == foldable->expected_fpr);

    // Given bits (and a capacity, which FoldablePlan would round for): exactly those.
    const FilterOptions geometry{.capacity = 100'000, .bits = planned->bits};
    absl::StatusOr<Plan> exact = PlanFilter(geometry, layout);
    REQUIRE(exact.ok());
    REQUIRE(FoldablePlan(*exact)->bits != exact->bits);
    absl::StatusOr<Plan> kept = PlanForCreate(geometry, layout);
    REQUIRE(kept.ok());
    CHECK(kept->bits == exact->bits);
    CHECK(kept->hashes == exact->hashes);
  }
}

}  // namespace
}  // namespace bloomery
