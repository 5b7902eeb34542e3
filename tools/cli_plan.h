// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_plan.h: what `bloomery plan` (cli_plan.cc) and `bloomery table` (cli_table.cc) compute and
// their SVG charts (cli_svg.cc) draw: plan's candidates, one per layout, and table's sweep of
// m/n x k, predicted and measured.
#ifndef BLOOMERY_TOOLS_CLI_PLAN_H_
#define BLOOMERY_TOOLS_CLI_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"

namespace bloomery::cli {

// ---------------------------------------------------------------------------------------------
// plan

// ns/key of single-key Insert and MayContain (absent keys) on this machine, and the FPR those
// lookups measured.
struct Speed {
  double insert_ns = 0;
  double may_contain_ns = 0;
  double measured_fpr = 0;
};

// A candidate of `plan`: each blocked shape and the classic (partitioned) filter, against the
// request's target and the --max-memory budget.
struct Candidate {
  std::string name;  // "line512", ..., "classic"
  std::optional<Plan>
      plan;          // what Create makes of the request; none where the shape cannot take it
  bool fits = true;  // its memory is within the budget (true without one)
  std::optional<Plan> best;  // with a budget and a capacity: the lowest FPR within the budget
  std::optional<Speed> speed;
};

// `plan --svg`: each candidate's predicted FPR at the request's capacity against its memory (its
// best k at each size, or --hashes), its plan as a dot, the target FPR and the budget as dashed
// lines, the pick ringed. Memory runs from a quarter of the smallest plan to twice the largest (and
// the budget).
[[nodiscard]] absl::StatusOr<std::string> RenderPlanSvg(const FilterOptions& request,
                                                        const std::vector<Candidate>& candidates,
                                                        int pick, uint64_t budget);

// ---------------------------------------------------------------------------------------------
// table

inline constexpr uint32_t kMinBitsPerKey = 2;
inline constexpr uint32_t kMaxBitsPerKey = 32;

// The columns k = 1.. of a layout's table: every k its filters take (16 for the line and the
// partitioned layout, whose best k at 1e-4 and below is 12 to 16; 8 for block256 and word64).
[[nodiscard]] uint32_t TableHashes(Layout layout);

struct Cell {
  uint32_t hashes = 0;
  uint64_t bits = 0;  // after the layout's rounding
  double predicted_fpr = 0;
  uint64_t false_positives = 0;  // among `keys` queries of keys never inserted
};

struct Row {
  uint32_t bits_per_key = 0;
  uint32_t optimal_hashes = 0;  // best k in 1..16 for this layout at this m/n
  std::vector<Cell> cells;
};

struct Table {
  Layout layout = Layout::kLine512;
  uint64_t keys = 0;
  std::vector<Row> rows;
};

// --layout's names: the line is "blocked" (its old name), the partitioned layout "classic".
[[nodiscard]] std::string TableLayoutName(Layout layout);

[[nodiscard]] double MeasuredFpr(const Cell& cell, uint64_t queries);

// `table --svg`: FPR (log scale) against bits/key for each k, the exact formula's curves and the
// measured cells' dots.
[[nodiscard]] absl::StatusOr<std::string> RenderTableSvg(const Table& table);

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_PLAN_H_
