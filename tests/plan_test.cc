// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/plan.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

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
      for (Layout layout : {Layout::kBlocked, Layout::kPartitioned}) {
        CAPTURE(n);
        CAPTURE(p);
        absl::StatusOr<Plan> plan = PlanFor(static_cast<uint64_t>(n), p, layout);
        REQUIRE(plan.ok());
        CHECK(plan->expected_fpr <= p);
        CHECK(plan->expected_fpr == PredictedFpr(layout, n, plan->bits, plan->hashes));
        CHECK(plan->hashes >= kMinHashes);
        CHECK(plan->hashes <= kMaxHashes);
        const uint64_t unit = layout == Layout::kBlocked ? kBlockBits : plan->hashes;
        if (plan->bits > unit) {
          CHECK(PredictedFpr(layout, n, plan->bits - unit, plan->hashes) > p);
        }
        if (layout == Layout::kBlocked) CHECK(plan->bits % kBlockBits == 0);
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
    absl::StatusOr<Plan> fixed = PlanFor(5'000'000, 1e-4, Layout::kBlocked, k);
    REQUIRE(fixed.ok());
    CHECK(fixed->hashes == k);
    CHECK(fixed->bits >= chosen->bits);
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
  CHECK(PlanFor(1000, 0.01, Layout::kBlocked, 17).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(PlanFor(uint64_t{1} << 62, 1e-7).status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(PlanForSize(0, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(kMaxBits + 1, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(~uint64_t{0}, 6, 10).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PlanForSize(1024, 0, 0).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bloomery
