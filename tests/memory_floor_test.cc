// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// memory_floor_test.cc: the L2 floor (lib/measure) refuses an L2 size it cannot work with, rather
// than reading memory it does not have (issue #50: `bloomery bench --l2 1` read through a null
// pointer), and works at the least size it takes.
#include "memory_floor.h"

#include <doctest/doctest.h>

#include "absl/status/status.h"

namespace bloomery::measure {
namespace {

TEST_CASE("L2FloorNsPerLine refuses an L2 too small to hold a line, or too large, by name") {
  for (const uint64_t bytes : {uint64_t{1}, uint64_t{64}, kMinL2Bytes - 1, kMaxL2Bytes + 1}) {
    CAPTURE(bytes);
    const absl::StatusOr<double> floor = L2FloorNsPerLine(bytes, 1);
    REQUIRE_FALSE(floor.ok());
    CHECK(floor.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(floor.status().message().find("L2") != absl::string_view::npos);
  }
  const absl::StatusOr<double> no_rounds = L2FloorNsPerLine(kMinL2Bytes, 0);
  CHECK(no_rounds.status().code() == absl::StatusCode::kInvalidArgument);
  // The least size it takes: one line of memory, read 4 Mi times.
  const absl::StatusOr<double> least = L2FloorNsPerLine(kMinL2Bytes, 1);
  REQUIRE_MESSAGE(least.ok(), least.status());
  CHECK(*least > 0);
}

}  // namespace
}  // namespace bloomery::measure
