// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// fold_memory_test.cc: a fold under a memory cap (issue #50). The cap is the result's: a fold is
// refused only when the folded filter is over it, never for the halvings made on the way to it,
// each larger than the result (the first is half the filter).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "test_util.h"

namespace bloomery {
namespace {

// The cap of exactly the result's size takes the result, one byte less refuses it naming its size
// (not the first halving's), and the cap does not change a bit of it.
template <typename F>
void CheckCapIsTheResults(const F& f) {
  absl::StatusOr<F> uncapped = f.FoldedTo(0.01);
  REQUIRE_MESSAGE(uncapped.ok(), uncapped.status());
  const uint64_t result = uncapped->memory_bytes();
  const uint64_t first_halving = f.memory_bytes() / 2;
  MESSAGE(f.memory_bytes() << " bytes fold to " << result);
  REQUIRE(result * 8 <= first_halving);  // halvings over the result's size came first

  absl::StatusOr<F> capped = f.FoldedTo(0.01, {.max_memory_bytes = result});
  REQUIRE_MESSAGE(capped.ok(), capped.status());
  CHECK(capped->memory_bytes() == result);
  CHECK(testing::Bytes(*capped) == testing::Bytes(*uncapped));

  absl::StatusOr<F> over = f.FoldedTo(0.01, {.max_memory_bytes = result - 1});
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().code() == absl::StatusCode::kResourceExhausted);
  const std::string message(over.status().message());
  CAPTURE(message);
  CHECK(message.find(absl::StrCat(result, " bytes")) != std::string::npos);
  CHECK(message.find(absl::StrCat(first_halving, " bytes")) == std::string::npos);

  // No halving within the FPR: the result is a copy of the whole filter, held to the cap as well.
  const double now = f.EstimatedFpr();
  absl::StatusOr<F> copy = f.FoldedTo(now * 1.0001, {.max_memory_bytes = f.memory_bytes()});
  REQUIRE_MESSAGE(copy.ok(), copy.status());
  CHECK(copy->memory_bytes() == f.memory_bytes());
  absl::StatusOr<F> copy_over =
      f.FoldedTo(now * 1.0001, {.max_memory_bytes = f.memory_bytes() - 1});
  REQUIRE_FALSE(copy_over.ok());
  CHECK(copy_over.status().code() == absl::StatusCode::kResourceExhausted);
}

TEST_CASE("FoldedTo under a memory cap refuses only a result over it (blocked, every layout)") {
  for (const Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
    CAPTURE(LayoutName(layout));
    FilterOptions options;
    options.capacity = 1'000'000;
    options.fpr = 0.01;
    options.layout = layout;
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(options);
    REQUIRE(f.ok());
    f->InsertMany(testing::DistinctInts(2'000, 11));
    CheckCapIsTheResults(*f);
  }
}

TEST_CASE("FoldedTo under a memory cap refuses only a result over it (classic)") {
  FilterOptions options;
  options.capacity = 1'000'000;
  options.fpr = 0.01;
  absl::StatusOr<ClassicFilter> f = ClassicFilter::Create(options);
  REQUIRE(f.ok());
  f->InsertMany(testing::DistinctInts(2'000, 12));
  CheckCapIsTheResults(*f);
}

}  // namespace
}  // namespace bloomery
