// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery table`: the tuning table (m/n against k), predicted by the exact formulas of plan.h and
// measured on real filters, as text, JSON, CSV and an SVG chart (cli_svg.cc).
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "bloomery/detail/absl_compat.h"
#include "cli_common.h"
#include "cli_plan.h"

namespace bloomery::cli {

uint32_t TableHashes(Layout layout) {
  const BlockShape* shape = FindBlockShape(layout);
  return shape != nullptr ? shape->max_hashes : kMaxHashes;
}

std::string TableLayoutName(Layout layout) {
  if (layout == Layout::kLine512) return "blocked";
  if (layout == Layout::kPartitioned) return "classic";
  return std::string(LayoutName(layout));
}

double MeasuredFpr(const Cell& cell, uint64_t queries) {
  return static_cast<double>(cell.false_positives) / static_cast<double>(queries);
}

namespace {

constexpr uint64_t kDefaultKeys = 200'000;

// False positives among `queries.size()` absent keys of a `Filter` (BlockedFilter or
// ClassicFilter) with `plan`'s geometry that holds `inserted`. The plan's bits are already rounded
// to the layout's unit, so the filter is exactly the one the prediction is for.
template <typename Filter>
absl::StatusOr<uint64_t> Measure(const Plan& plan, uint64_t seed,
                                 std::span<const uint64_t> inserted,
                                 std::span<const uint64_t> queries) {
  FilterOptions options;
  options.bits = plan.bits;
  options.hashes = plan.hashes;
  options.capacity = plan.capacity;
  options.hashing.seed = seed;
  if constexpr (std::is_same_v<Filter, BlockedFilter>) options.layout = plan.layout;
  absl::StatusOr<Filter> filter = Filter::Create(options);
  if (!filter.ok()) return filter.status();
  filter->InsertMany(inserted);
  return filter->MayContainMany(queries);
}

absl::StatusOr<Table> BuildTable(Layout layout, uint64_t keys) {
  Table table;
  table.layout = layout;
  table.keys = keys;
  // Inserted keys 0..n-1, queries 2^63 + i: disjoint, and hashed (XXH3) like any other key.
  std::vector<uint64_t> inserted(keys);
  std::iota(inserted.begin(), inserted.end(), uint64_t{0});
  std::vector<uint64_t> queries(keys);
  std::iota(queries.begin(), queries.end(), uint64_t{1} << 63);
  for (uint32_t m = kMinBitsPerKey; m <= kMaxBitsPerKey; ++m) {
    Row row;
    row.bits_per_key = m;
    absl::StatusOr<Plan> best = PlanForSize(uint64_t{m} * keys, 0, keys, layout);
    if (!best.ok()) return best.status();
    row.optimal_hashes = best->hashes;
    for (uint32_t k = 1; k <= TableHashes(layout); ++k) {
      absl::StatusOr<Plan> plan = PlanForSize(uint64_t{m} * keys, k, keys, layout);
      if (!plan.ok()) return plan.status();
      Cell cell;
      cell.hashes = k;
      cell.bits = plan->bits;
      cell.predicted_fpr = plan->expected_fpr;
      // A seed per cell keeps the cells' measurement errors independent of each other.
      const uint64_t seed = kDefaultSeed + m * 64 + k;
      absl::StatusOr<uint64_t> fp = layout == Layout::kPartitioned
                                        ? Measure<ClassicFilter>(*plan, seed, inserted, queries)
                                        : Measure<BlockedFilter>(*plan, seed, inserted, queries);
      if (!fp.ok()) return fp.status();
      cell.false_positives = *fp;
      row.cells.push_back(cell);
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

std::string RenderText(const Table& table) {
  std::string out = absl::StrFormat(
      "False-positive rate of %s holding %s keys\n"
      "predicted: the exact formula of plan.h; measured: a real filter queried with %s absent "
      "keys\n\n",
      table.layout == Layout::kPartitioned
          ? std::string("ClassicFilter (partitioned layout)")
          : absl::StrCat("BlockedFilter (", TableLayoutName(table.layout), " layout)"),
      FormatCount(table.keys), FormatCount(table.keys));
  TextTable text;
  std::vector<std::string> header = {"m/n", "best k", ""};
  for (uint32_t k = 1; k <= TableHashes(table.layout); ++k) {
    header.push_back(absl::StrCat("k=", k));
  }
  text.AddRow(header);
  const std::string floor_text = absl::StrFormat("<%.0e", 1.0 / static_cast<double>(table.keys));
  for (const Row& row : table.rows) {
    std::vector<std::string> predicted = {absl::StrCat(row.bits_per_key),
                                          absl::StrCat(row.optimal_hashes), "predicted"};
    std::vector<std::string> measured = {"", "", "measured"};
    for (const Cell& cell : row.cells) {
      predicted.push_back(FormatFpr(cell.predicted_fpr));
      if (cell.false_positives == 0) {
        measured.push_back(floor_text);
      } else {
        measured.push_back(FormatFpr(MeasuredFpr(cell, table.keys)));
      }
    }
    text.AddRow(std::move(predicted));
    text.AddRow(std::move(measured));
  }
  return out + text.Render();
}

std::string RenderCsv(const Table& table) {
  std::string out =
      "layout,keys,bits_per_key,best_k,k,bits,predicted_fpr,measured_fpr,false_positives,queries\n";
  for (const Row& row : table.rows) {
    for (const Cell& cell : row.cells) {
      absl::StrAppendFormat(&out, "%s,%d,%d,%d,%d,%d,%.6g,", TableLayoutName(table.layout),
                            table.keys, row.bits_per_key, row.optimal_hashes, cell.hashes,
                            cell.bits, cell.predicted_fpr);
      absl::StrAppendFormat(&out, "%.6g,%d,%d\n", MeasuredFpr(cell, table.keys),
                            cell.false_positives, table.keys);
    }
  }
  return out;
}

Json TableJson(const Table& table) {
  Json rows = Json::array();
  for (const Row& row : table.rows) {
    Json cells = Json::array();
    for (const Cell& cell : row.cells) {
      cells.push_back({{"k", cell.hashes},
                       {"bits", cell.bits},
                       {"predicted_fpr", cell.predicted_fpr},
                       {"measured_fpr", MeasuredFpr(cell, table.keys)},
                       {"false_positives", cell.false_positives}});
    }
    rows.push_back({{"bits_per_key", row.bits_per_key},
                    {"best_k", row.optimal_hashes},
                    {"optimal_k_standard", OptimalHashes(row.bits_per_key)},
                    {"cells", std::move(cells)}});
  }
  return {{"layout", TableLayoutName(table.layout)},
          {"keys", table.keys},
          {"queries", table.keys},
          {"rows", std::move(rows)}};
}

struct TableFlags {
  uint64_t keys = kDefaultKeys;
  std::string layout = "blocked";
  bool json = false;
  bool csv = false;
  std::string svg;
  CLI::Option* svg_flag = nullptr;
};

absl::Status RunTable(const TableFlags& flags) {
  const std::optional<Layout> layout =
      flags.layout == "classic" ? Layout::kPartitioned : ParseLayout(flags.layout);
  absl::StatusOr<Table> table = BuildTable(*layout, flags.keys);
  if (!table.ok()) return table.status();
  if (Given(flags.svg_flag)) {
    absl::StatusOr<std::string> svg = RenderTableSvg(*table);
    if (!svg.ok()) return svg.status();
    if (absl::Status s = WriteTextFile(flags.svg, *svg); !s.ok()) return s;
  }
  if (flags.json) {
    PrintJson(TableJson(*table));
  } else {
    std::fputs((flags.csv ? RenderCsv(*table) : RenderText(*table)).c_str(), stdout);
  }
  return absl::OkStatus();
}

}  // namespace

void AddTableCommand(Commands& commands) {
  auto [app, flags] = commands.Add<TableFlags>(
      "table", "the m/n x k table of predicted and measured FPR (text, JSON, CSV, SVG chart)",
      R"(For m/n = 2..32 bits per key: the best number of hashes and the false-positive rate for
every k the layout takes (1..16; 1..8 for block256 and word64), predicted by the layout's exact formula (plan.h) and measured on a real filter of
that geometry holding N keys, queried with N keys that were never inserted.)",
      RunTable);
  AddNumber(*app, "--keys", flags->keys, Unit::kCount, {1, uint64_t{1} << 32},
            "keys per filter (default 200000); measured FPRs below 1/N read as \"<1/N\"");
  // The choices and their help from layout.h's shapes: "blocked" (the line's old name, the
  // default), each blocked shape, and "classic".
  std::vector<std::string> layouts = {"blocked"};
  std::string others;
  for (const BlockShape& shape : kBlockShapes) {
    layouts.emplace_back(shape.name);
    if (shape.layout != Layout::kLine512) absl::StrAppend(&others, AbslView(shape.name), ", ");
  }
  layouts.emplace_back("classic");
  app->add_option("--layout", flags->layout,
                  absl::StrCat("blocked (BlockedFilter's ", AbslView(LayoutName(Layout::kLine512)),
                               ", the default), ", others,
                               "or classic (ClassicFilter: partitioned, k slices)"))
      ->type_name("L")
      ->check(CLI::IsMember(layouts));
  CLI::Option* json = AddJson(*app, flags->json);
  AddFlag(*app, "--csv", flags->csv, "print CSV, one line per (m/n, k)")->excludes(json);
  flags->svg_flag =
      app->add_option("--svg", flags->svg,
                      "also draw FPR (log scale) against bits/key for each k: theory lines, "
                      "measured dots")
          ->type_name("FILE")
          ->check(FileName());
}

}  // namespace bloomery::cli
