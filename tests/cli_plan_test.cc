// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_plan_test.cc: `bloomery plan` (a plan per layout, --max-memory, --prefer, --measure, --svg)
// and `bloomery table` (predicted and measured FPR, as text, JSON, CSV and SVG).
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"
#include "cli_test_util.h"
#include "test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// plan

TEST_CASE("plan --json reports what the library's planner says, for both layouts") {
  RunResult r = Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--json"});
  REQUIRE(r.exit_code == 0);
  const Json json = ParseJson(r.out);
  CHECK(json["capacity"].U64() == 1'000'000);
  CHECK(json["target_fpr"].Num() == doctest::Approx(0.01));
  for (const auto& row :
       {std::pair{"blocked", Layout::kLine512}, std::pair{"partitioned", Layout::kPartitioned}}) {
    const char* name = row.first;  // named, not bound: clang 14's CAPTURE takes no binding
    const Layout layout = row.second;
    CAPTURE(name);
    // Each row is what Create makes: blocks or slices that halve (FoldablePlan).
    absl::StatusOr<Plan> plan = PlanFor(1'000'000, 0.01, layout);
    REQUIRE(plan.ok());
    plan = FoldablePlan(*plan);
    REQUIRE(plan.ok());
    const Json& got = json[name];
    CHECK(got["bits"].U64() == plan->bits);
    CHECK(got["bytes"].U64() == plan->bytes());
    CHECK(got["hashes"].U64() == plan->hashes);
    CHECK(got["bits_per_key"].Num() == doctest::Approx(plan->bits_per_key));
    CHECK(got["expected_fpr"].Num() == doctest::Approx(plan->expected_fpr).epsilon(1e-6));
    CHECK(got["expected_fpr"].Num() <= 0.01);
  }
  CHECK(json["blocked"]["cache_lines_per_lookup"].U64() == 1);

  RunResult text = Run({"plan", "--capacity", "1e6", "--fpr", "0.01"});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, "blocked"));
  CHECK(Contains(text.out, "partitioned"));
  CHECK(Contains(text.out, "1,000,000 keys"));
}

TEST_CASE("plan --svg draws every candidate's FPR against memory, the target, budget and pick") {
  const std::string chart = Scratch().File("plan.svg");
  RunResult r =
      Run({"plan", "--capacity", "1M", "--fpr", "1e-4", "--max-memory", "2.5MiB", "--svg", chart});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(Contains(r.out, "<- pick"));  // the table is printed as without --svg
  const std::string svg = ReadFile(chart);
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.ends_with("</svg>\n"));
  // One curve per candidate: three layouts and the classic filter.
  size_t paths = 0;
  for (size_t at = svg.find("<path "); at != std::string::npos; at = svg.find("<path ", at + 1)) {
    ++paths;
  }
  CHECK(paths == 4);
  for (const char* label : {"line512", "block256", "word64", "classic", "target 0.0001",
                            "budget 2.50 MiB", "the pick"}) {
    CAPTURE(label);
    CHECK(Contains(svg, label));
  }
  CHECK(Contains(svg, R"(r="9" fill="none")"));  // the pick's ring
  RunResult no_capacity = Run({"plan", "--bits", "1M", "--hashes", "4", "--svg", chart});
  CHECK(no_capacity.exit_code == 2);
  CHECK(Contains(no_capacity.err, "--svg needs --capacity"));
}

TEST_CASE("plan --bits 2^30 --hashes 6 describes that geometry at a capacity") {
  RunResult r = Run({"plan", "--bits", "2^30", "--hashes", "6", "--capacity", "1e8", "--json"});
  REQUIRE(r.exit_code == 0);
  const Json json = ParseJson(r.out);
  absl::StatusOr<Plan> blocked = PlanForSize(uint64_t{1} << 30, 6, 100'000'000, Layout::kLine512);
  REQUIRE(blocked.ok());
  CHECK(json["blocked"]["bits"].U64() == uint64_t{1} << 30);
  CHECK(json["blocked"]["hashes"].U64() == 6);
  CHECK(json["blocked"]["expected_fpr"].Num() ==
        doctest::Approx(blocked->expected_fpr).epsilon(1e-6));
  CHECK(json["partitioned"]["hashes"].U64() == 6);

  RunResult no_capacity = Run({"plan", "--bits", "2^30", "--hashes", "6", "--json"});
  REQUIRE(no_capacity.exit_code == 0);
  CHECK(ParseJson(no_capacity.out)["blocked"]["expected_fpr"].type == Json::Type::kNull);
}

TEST_CASE(
    "plan --max-memory answers the budget question across every layout and the classic kind") {
  // 10^6 keys at 1% in 1.21 MB: only the classic filter (9.61 bits/key, 1,200,640 bytes with its
  // slices rounded to fold) fits; the lowest FPR each reaches in the budget is its plan for the
  // budget's bits.
  RunResult r = Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--max-memory", "1.21MB",
                     "--prefer", "fastest", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Json json = ParseJson(r.out);
  CHECK(json["max_memory"].U64() == 1'210'000);
  std::vector<const Json*> candidates;
  for (const Json& row : json["layouts"].items) candidates.push_back(&row);
  candidates.push_back(&json["partitioned"]);
  for (const Json* c : candidates) {
    const uint64_t bytes = (*c)["bytes"].U64();
    CHECK((*c)["fits_max_memory"].boolean == (bytes <= 1'210'000));
    const double best = (*c)["best_fpr_within_max_memory"].Num();
    // Within the budget: better than the target where the plan fits, worse where it does not.
    CHECK((best <= 0.01) == (bytes <= 1'210'000));
  }
  CHECK(json["layouts"][0]["best_fpr_within_max_memory"].Num() ==
        doctest::Approx(
            PlanForSize(1'210'000 / 64 * 512, 0, 1'000'000, Layout::kLine512)->expected_fpr)
            .epsilon(1e-9));
  CHECK(json["pick"].string == "classic");  // the only one that fits, whatever --prefer says
  CHECK(json["best_within_max_memory"].string == "classic");

  // No budget: --prefer smallest picks the fewest bytes (classic), fastest the planner's fastest
  // blocked shape; --measure's timings decide fastest when given, and the pick is the one with
  // the least MayContain ns/key printed.
  CHECK(
      ParseJson(Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--json"}).out)["pick"].string ==
      "classic");
  CHECK(
      ParseJson(Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--prefer", "fastest", "--json"})
                    .out)["pick"]
          .string == "word64");
  const Json measured = ParseJson(Run({"plan", "--capacity", "1e5", "--fpr", "0.01", "--prefer",
                                       "fastest", "--measure", "--json"})
                                      .out);
  std::string fastest;
  double least = 1e300;
  std::vector<const Json*> timed;
  for (const Json& row : measured["layouts"].items) timed.push_back(&row);
  timed.push_back(&measured["partitioned"]);
  for (const Json* row : timed) {
    REQUIRE((*row)["may_contain_ns_per_key"].Num() > 0);  // classic is timed too
    if ((*row)["may_contain_ns_per_key"].Num() < least) {
      least = (*row)["may_contain_ns_per_key"].Num();
      fastest = row == timed.back() ? "classic" : (*row)["layout"].string;
    }
  }
  CHECK(measured["pick"].string == fastest);

  // Text: the rows and the answer in words; the issue's question, 10^9 keys at 1e-4 in 2.5 GiB.
  RunResult text = Run({"plan", "--capacity", "1G", "--fpr", "1e-4", "--max-memory", "2.5GiB"});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(Contains(text.out, "fits 2.50 GiB"));
  CHECK(Contains(text.out, "best FPR within it"));
  CHECK(Contains(text.out, "Pick (--prefer smallest): classic"));
  RunResult none = Run({"plan", "--capacity", "1G", "--fpr", "1e-4", "--max-memory", "1GiB"});
  REQUIRE(none.exit_code == 0);
  CHECK(Contains(none.out, "No candidate meets the target within 1.00 GiB"));
  CHECK(Contains(none.out, "The lowest FPR it allows"));
  CHECK(Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--prefer", "cheapest"}).exit_code == 2);
}

TEST_CASE("plan prints one plan per layout, each the library's, and --measure times each") {
  RunResult r = Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Json json = ParseJson(r.out);
  const Json& layouts = json["layouts"];
  REQUIRE(layouts.items.size() == std::size(kBlockShapes));
  for (size_t i = 0; i < std::size(kBlockShapes); ++i) {
    const Layout layout = kBlockShapes[i].layout;
    CAPTURE(LayoutName(layout));
    CHECK(layouts[i]["layout"].string == LayoutName(layout));
    absl::StatusOr<Plan> plan = PlanFor(1'000'000, 0.01, layout);
    REQUIRE(plan.ok());
    plan = FoldablePlan(*plan);  // what BlockedFilter::Create makes of it
    REQUIRE(plan.ok());
    CHECK(layouts[i]["bits"].U64() == plan->bits);
    CHECK(layouts[i]["hashes"].U64() == plan->hashes);
    CHECK(layouts[i]["expected_fpr"].Num() == doctest::Approx(plan->expected_fpr).epsilon(1e-6));
    CHECK(layouts[i]["expected_fpr"].Num() <= 0.01);
  }
  CHECK(layouts[0]["bits"].U64() == json["blocked"]["bits"].U64());

  RunResult text = Run({"plan", "--capacity", "1e6", "--fpr", "0.01"});
  REQUIRE(text.exit_code == 0);
  for (const BlockShape& shape : kBlockShapes) CHECK(Contains(text.out, std::string(shape.name)));
  CHECK_FALSE(Contains(text.out, "ns/key"));

  // The row of what --layout auto creates, by --prefer, and the same in JSON.
  CHECK(Contains(text.out, "--layout auto --prefer"));
  CHECK(Contains(text.out, "smallest"));
  CHECK(Contains(text.out, "fastest"));
  const Json auto_json =
      ParseJson(Run({"plan", "--capacity", "1e6", "--fpr", "0.01", "--json"}).out)["auto"];
  CHECK(auto_json["smallest"].string == "line512");
  CHECK(auto_json["fastest"].string == "word64");

  // k = 12 is the line's alone: the other shapes show no plan.
  RunResult wide = Run({"plan", "--bits", "2^20", "--hashes", "12", "--capacity", "1e5", "--json"});
  REQUIRE(wide.exit_code == 0);
  const Json wide_json = ParseJson(wide.out);
  REQUIRE(wide_json["layouts"].items.size() == 1);
  CHECK(wide_json["layouts"][0]["layout"].string == "line512");

  RunResult measured = Run({"plan", "--capacity", "1e4", "--fpr", "0.01", "--measure", "--json"});
  REQUIRE_MESSAGE(measured.exit_code == 0, measured.err);
  const Json measured_json = ParseJson(measured.out);
  for (const Json& row : measured_json["layouts"].items) {
    CHECK(row["insert_ns_per_key"].Num() > 0);
    CHECK(row["may_contain_ns_per_key"].Num() > 0);
    // The timed lookups are of absent keys: their FPR is the plan's.
    const auto false_positives = static_cast<uint64_t>(row["measured_fpr"].Num() * 1e4 + 0.5);
    CHECK(WithinBinomialBound(false_positives, 10'000, row["expected_fpr"].Num(), 6.0));
  }
  RunResult measured_text = Run({"plan", "--capacity", "1e4", "--fpr", "0.01", "--measure"});
  REQUIRE(measured_text.exit_code == 0);
  CHECK(Contains(measured_text.out, "Insert ns/key"));
  CHECK(Contains(measured_text.out, "MayContain ns/key"));
  CHECK(Run({"plan", "--bits", "2^20", "--hashes", "4", "--measure"}).exit_code == 2);
}

// ---------------------------------------------------------------------------------------------
// table

// Checks a `table --json` document: every cell's geometry and prediction are the planner's, and
// every measured FPR is within a binomial bound of the prediction.
void CheckMeasuredTable(const Json& json, Layout layout, uint64_t keys) {
  CHECK(json["keys"].U64() == keys);
  const Json& rows = json["rows"];
  REQUIRE(rows.items.size() == 31);
  for (size_t i = 0; i < rows.items.size(); ++i) {
    const Json& row = rows[i];
    const uint64_t m = row["bits_per_key"].U64();
    CAPTURE(m);
    CHECK(m == i + 2);
    absl::StatusOr<Plan> best = PlanForSize(m * keys, 0, keys, layout);
    REQUIRE(best.ok());
    CHECK(row["best_k"].U64() == best->hashes);
    // Every k the layout takes: 1..16 for the line and the partitioned layout.
    const BlockShape* shape = FindBlockShape(layout);
    REQUIRE(row["cells"].items.size() == (shape != nullptr ? shape->max_hashes : kMaxHashes));
    for (const Json& cell : row["cells"].items) {
      const uint32_t k = static_cast<uint32_t>(cell["k"].U64());
      CAPTURE(k);
      absl::StatusOr<Plan> plan = PlanForSize(m * keys, k, keys, layout);
      REQUIRE(plan.ok());
      CHECK(cell["bits"].U64() == plan->bits);
      CHECK(cell["predicted_fpr"].Num() == doctest::Approx(plan->expected_fpr).epsilon(1e-6));
      const uint64_t fp = cell["false_positives"].U64();
      CHECK(cell["measured_fpr"].Num() ==
            doctest::Approx(static_cast<double>(fp) / static_cast<double>(keys)));
      // 496 cells: 6 sigmas keeps a correct filter from ever failing here by chance.
      CHECK(WithinBinomialBound(fp, keys, plan->expected_fpr, 6.0));
    }
  }
}

// `table --keys N --json` plus `flags` (--layout L): JSON names the layout `name`, and every cell
// is measured on that layout's filters (CheckMeasuredTable).
void CheckTableRun(const std::vector<std::string>& flags, const std::string& name, Layout layout,
                   uint64_t keys) {
  std::vector<std::string> args = {"table", "--keys", std::to_string(keys), "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  RunResult r = Run(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Json json = ParseJson(r.out);
  CHECK(json["layout"].string == name);
  CheckMeasuredTable(json, layout, keys);
}

TEST_CASE("table --json: blocked filters measured, and the measurements agree with the formula") {
  CheckTableRun({}, "blocked", Layout::kLine512, 20'000);
}

TEST_CASE("table --layout classic measures real ClassicFilters, in JSON, text and SVG") {
  CheckTableRun({"--layout", "classic"}, "classic", Layout::kPartitioned, 20'000);

  RunResult text = Run({"table", "--keys", "5000", "--layout", "classic"});
  REQUIRE(text.exit_code == 0);
  CHECK_FALSE(Contains(text.out, "theory only"));
  CHECK(Contains(text.out, "measured  "));

  const std::string svg_path = Scratch().File("classic.svg");
  REQUIRE(Run({"table", "--keys", "5000", "--layout", "classic", "--svg", svg_path}).exit_code ==
          0);
  const std::string svg = ReadFile(svg_path);
  CHECK_FALSE(Contains(svg, "no measurement"));
  CHECK(Contains(svg, "<circle"));
}

TEST_CASE("table --csv has one line per (m/n, k)") {
  RunResult r = Run({"table", "--keys", "3000", "--csv"});
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> lines = SplitLines(r.out);
  REQUIRE(lines.size() == 1 + 31 * 16);  // k = 1..16: the best k at 1e-4 is 12-13
  CHECK(lines[0].starts_with("layout,keys,bits_per_key,best_k,k,"));
  for (const std::string& line : lines) CHECK(std::count(line.begin(), line.end(), ',') == 9);
  CHECK(lines[1].starts_with("blocked,3000,2,"));
}

TEST_CASE("table --svg draws one dot per measurable cell, a curve and a legend entry per k") {
  const std::string svg_path = Scratch().File("table.svg");
  RunResult r = Run({"table", "--keys", "5000", "--json", "--svg", svg_path});
  REQUIRE(r.exit_code == 0);
  const std::string svg = ReadFile(svg_path);
  CHECK(svg.starts_with("<svg"));
  CHECK(Contains(svg, "</svg>"));
  for (int k = 1; k <= 16; ++k) CHECK(Contains(svg, "k = " + std::to_string(k)));
  CHECK(Contains(svg, "bits per key"));
  size_t positive_cells = 0;
  const Json json = ParseJson(r.out);
  for (const Json& row : json["rows"].items) {
    for (const Json& cell : row["cells"].items) positive_cells += cell["false_positives"].U64() > 0;
  }
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
    ++circles;
  }
  CHECK(circles == positive_cells + 16 + 1);  // + a dot per k and one for "measured" in the legend
  size_t paths = 0;
  for (size_t at = svg.find("<path"); at != std::string::npos; at = svg.find("<path", at + 1)) {
    ++paths;
  }
  CHECK(paths == 16);

  RunResult unwritable =
      Run({"table", "--keys", "100", "--svg", Scratch().File("no/such/dir/x.svg")});
  CHECK(unwritable.exit_code == 1);
  CHECK(Contains(unwritable.err, "cannot write"));
  CHECK(Run({"table", "--layout", "fancy"}).exit_code == 2);
  CHECK(Run({"table", "--json", "--csv", "--keys", "10"}).exit_code == 2);
  CHECK(Run({"table", "--keys", "0"}).exit_code == 2);
}

TEST_CASE("table --layout takes every blocked shape of layout.h, and its help names them") {
  const std::string help = Run({"table", "--help"}).out;
  for (const BlockShape& shape : kBlockShapes) {
    const std::string name(shape.name);
    CAPTURE(name);
    CHECK(Contains(help, name));
    // The table's JSON keeps the line's old name, "blocked".
    CheckTableRun({"--layout", name}, shape.layout == Layout::kLine512 ? "blocked" : name,
                  shape.layout, 2'000);
  }
}

TEST_CASE("table and bench --layout measure that layout's filters") {
  CheckTableRun({"--layout", "word64"}, "word64", Layout::kWord64, 5'000);
  RunResult text = Run({"table", "--keys", "2000", "--layout", "block256"});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, "BlockedFilter (block256 layout)"));

  RunResult bench =
      Run({"bench", "--keys", "10000", "--reps", "1", "--layout", "word64", "--json"});
  REQUIRE_MESSAGE(bench.exit_code == 0, bench.err);
  const Json bench_json = ParseJson(bench.out);
  CHECK(bench_json["layout"].string == "word64");
  absl::StatusOr<Plan> plan = PlanForSize(100'000, 0, 10'000, Layout::kWord64);
  REQUIRE(plan.ok());
  const Json& size = bench_json["sizes"][0];
  CHECK(size["bits"].U64() == plan->bits);
  CHECK(size["hashes"].U64() == plan->hashes);
  CHECK(size["planned_fpr"].Num() == doctest::Approx(plan->expected_fpr).epsilon(1e-6));
  CHECK(WithinBinomialBound(size["false_positives"].U64(), size["lookups"].U64(),
                            plan->expected_fpr));
  RunResult bad = Run({"bench", "--keys", "100", "--layout", "partitioned"});
  CHECK(bad.exit_code == 2);
  CHECK(Contains(bad.err, "--layout"));
}

}  // namespace
}  // namespace bloomery::cli_test
