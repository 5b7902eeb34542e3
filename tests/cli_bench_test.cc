// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_bench_test.cc: `bloomery bench`: its operations, floors, L2 decision, kinds and output.
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"
#include "cli_test_util.h"
#include "test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// bench

TEST_CASE("bench --json reports every operation, both floors and an FPR that matches the plan") {
  RunResult r = Run({"bench", "--keys", "10000", "--reps", "1", "--threads", "2", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Json json = ParseJson(r.out);
  CHECK_FALSE(json["simd_target"].string.empty());
  CHECK(json["threads"].U64() == 2);
  REQUIRE(json["sizes"].items.size() == 1);
  const Json& size = json["sizes"][0];
  CHECK(size["keys"].U64() == 10'000);
  absl::StatusOr<Plan> plan = PlanForSize(100'000, 0, 10'000, Layout::kLine512);
  REQUIRE(plan.ok());
  CHECK(size["bits"].U64() == plan->bits);
  CHECK(size["hashes"].U64() == plan->hashes);
  CHECK(size["bits_per_key"].Num() == doctest::Approx(plan->bits_per_key));
  CHECK(size["planned_fpr"].Num() == doctest::Approx(plan->expected_fpr).epsilon(1e-6));
  CHECK(WithinBinomialBound(size["false_positives"].U64(), size["lookups"].U64(),
                            plan->expected_fpr));
  CHECK(size["floor_ns_per_key"].Num() > 0);
  CHECK(size["write_floor_ns_per_key"].Num() > 0);
  // The best of each sweep, by name.
  for (const char* strategy : {"floor_strategy", "write_floor_strategy"}) {
    CAPTURE(strategy);
    const std::string& name = size[strategy].string;
    CHECK((name == "no prefetch" || name.starts_with("prefetch ") ||
           name.starts_with("batches of ")));
  }
  CHECK(size["huge_pages"].type == Json::Type::kBool);
  // Inserts are held to the write floor, lookups to the read floor.
  for (const char* op : {"insert", "insert_many", "may_contain_absent", "may_contain_present",
                         "may_contain_many_absent", "may_contain_many_present",
                         "concurrent_insert_many", "concurrent_may_contain_many_absent"}) {
    CAPTURE(op);
    const Json& timing = size["operations"][op];
    const bool writes = std::string_view(op).find("insert") != std::string_view::npos;
    CHECK(timing["floor"].string == (writes ? "write" : "read"));
    CHECK(timing["ns_per_key"].Num() > 0);
    CHECK(timing["ratio_to_floor"].Num() ==
          doctest::Approx(timing["ns_per_key"].Num() /
                          size[writes ? "write_floor_ns_per_key" : "floor_ns_per_key"].Num()));
  }
}

TEST_CASE(
    "bench --kind classic times a ClassicFilter of the planner's geometry; other kinds exit 2") {
  RunResult r = Run(
      {"bench", "--kind", "classic", "--keys", "20000", "--reps", "1", "--threads", "2", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Json json = ParseJson(r.out);
  CHECK(json["filter"].string == "ClassicFilter");
  CHECK(json["kind"].string == "classic");
  CHECK(json["layout"].string == "partitioned");
  const Json& size = json["sizes"][0];
  absl::StatusOr<Plan> plan = PlanForSize(200'000, 0, 20'000, Layout::kPartitioned);
  REQUIRE(plan.ok());
  CHECK(size["bits"].U64() == plan->bits);
  CHECK(size["hashes"].U64() == plan->hashes);
  CHECK(WithinBinomialBound(size["false_positives"].U64(), size["lookups"].U64(),
                            plan->expected_fpr));
  for (const char* op : {"insert", "insert_many", "may_contain_absent", "may_contain_many_absent",
                         "concurrent_insert_many"}) {
    CAPTURE(op);
    CHECK(size["operations"][op]["ns_per_key"].Num() > 0);
  }
  const std::string chart = Scratch().File("bench.svg");
  RunResult text =
      Run({"bench", "--kind", "classic", "--keys", "20000", "--reps", "1", "--svg", chart});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, "ClassicFilter (partitioned"));
  // The chart: the page, then one bar per operation (six) and the two floors'.
  const std::string svg = ReadFile(chart);
  CHECK(svg.ends_with("</svg>\n"));
  size_t bars = 0;
  for (size_t at = svg.find("<rect "); at != std::string::npos; at = svg.find("<rect ", at + 1)) {
    ++bars;
  }
  CHECK(bars == 1 + 6 + 2);
  for (const char* label : {"ClassicFilter", "InsertMany", "MayContainMany, absent", "read floor",
                            "write floor", "x)"}) {
    CAPTURE(label);
    CHECK(Contains(svg, label));
  }
  RunResult counting = Run({"bench", "--kind", "counting"});
  CHECK(counting.exit_code == 2);
  CHECK(Contains(counting.err, "--kind must be blocked or classic"));
  RunResult layout = Run({"bench", "--kind", "classic", "--layout", "word64"});
  CHECK(layout.exit_code == 2);
  CHECK(Contains(layout.err, "a classic filter has none"));
}

TEST_CASE("bench calls a size in cache by the core's L2, else by measurement, and says which") {
  // 10,000 keys: a 12 KiB filter, inside a 1 MiB L2: decided by size.
  RunResult fits = Run({"bench", "--keys", "10000", "--reps", "1", "--l2", "1MiB", "--json"});
  REQUIRE_MESSAGE(fits.exit_code == 0, fits.err);
  const Json fits_json = ParseJson(fits.out);
  CHECK(fits_json["l2_cache_bytes"].U64() == 1 << 20);
  CHECK(fits_json["l2_floor_ns_per_key"].Num() > 0);
  CHECK(fits_json["sizes"][0]["in_cache"].boolean);
  CHECK(fits_json["sizes"][0]["in_cache_decided_by"].string == "size");
  // The same filter past a 4 KiB L2: the floors decide, whatever the last-level cache claims.
  RunResult past = Run({"bench", "--keys", "10000", "--reps", "1", "--l2", "4K", "--json"});
  REQUIRE_MESSAGE(past.exit_code == 0, past.err);
  const Json past_json = ParseJson(past.out);
  const Json& size = past_json["sizes"][0];
  CHECK(size["in_cache_decided_by"].string == "measurement");
  CHECK(size["floor_ratio_to_l2_floor"].Num() ==
        doctest::Approx(size["floor_ns_per_key"].Num() / past_json["l2_floor_ns_per_key"].Num()));
  CHECK(size["in_cache"].boolean == (size["floor_ratio_to_l2_floor"].Num() <= 3));
  RunResult text = Run({"bench", "--keys", "10000", "--reps", "1", "--l2", "1Mi"});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, "L2 cache: 1.00 MiB"));
  CHECK(Contains(text.out, "cache decided by"));
  CHECK(Contains(text.out, "size (fits L2)"));
}

TEST_CASE("bench prints a table; --fpr sizes the filter; bad numbers exit 2") {
  RunResult r = Run({"bench", "--keys", "10000", "--reps", "1"});
  REQUIRE(r.exit_code == 0);
  for (const char* row :
       {"MayContainMany, absent", "InsertMany", "read floor", "write floor", "x floor",
        "FPR measured", "huge pages", "SIMD target", "inserts against the write floor"}) {
    CHECK(Contains(r.out, row));
  }
  RunResult fpr = Run({"bench", "--keys", "10000", "--reps", "1", "--fpr", "0.001", "--json"});
  REQUIRE(fpr.exit_code == 0);
  CHECK(ParseJson(fpr.out)["sizes"][0]["planned_fpr"].Num() <= 0.001);
  CHECK(Run({"bench", "--threads", "0"}).exit_code == 2);
  CHECK(Run({"bench", "--keys", "ten"}).exit_code == 2);
  CHECK(Run({"bench", "--reps", "0"}).exit_code == 2);
}

}  // namespace
}  // namespace bloomery::cli_test
