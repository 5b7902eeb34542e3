// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery plan`: what a filter costs in each blocked layout (layout.h) and the classic one.
// `bloomery table`: the tuning table (m/n against k), predicted by the exact formulas of plan.h and
// measured on real filters, as text, JSON, CSV and an SVG chart.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <numbers>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"
#include "cli_svg.h"
#include "timing.h"

namespace bloomery::cli {
namespace {

Json PlanJson(const Plan& plan, uint32_t lines_per_lookup) {
  return {{"bits", plan.bits},
          {"bytes", plan.bytes()},
          {"hashes", plan.hashes},
          {"bits_per_key", plan.capacity ? Json(plan.bits_per_key) : Json()},
          {"expected_fpr", plan.capacity ? Json(plan.expected_fpr) : Json()},
          {"cache_lines_per_lookup", lines_per_lookup}};
}

struct PlanFlags {
  SizingFlags sizing;
  bool json = false;
  bool measure = false;
  uint64_t max_memory = 0;  // the budget (0: none)
  std::string prefer = "smallest";
  std::string svg;  // --svg FILE: the chart of every candidate's FPR against its memory
  CLI::Option* svg_flag = nullptr;
};

// Keys a --measure run inserts and queries: enough for a steady rate, few enough to be brief.
constexpr uint64_t kMeasureKeys = uint64_t{1} << 20;

// ns/key of single-key Insert and MayContain (absent keys) on this machine, and the FPR those
// lookups measured.
struct Speed {
  double insert_ns = 0;
  double may_contain_ns = 0;
  double measured_fpr = 0;
};

// Times `plan`'s shape at its bits/key and k, on a filter of min(capacity, kMeasureKeys) keys:
// one Insert pass into a new filter, the best of three MayContain passes. A BlockedFilter of the
// plan's layout, or a ClassicFilter for the partitioned one.
template <typename Filter>
absl::StatusOr<Speed> MeasureSpeedOf(const Plan& plan) {
  const uint64_t keys = std::min(plan.capacity, kMeasureKeys);
  FilterOptions options;
  options.capacity = keys;
  options.bits = static_cast<uint64_t>(std::ceil(plan.bits_per_key * static_cast<double>(keys)));
  options.hashes = plan.hashes;
  if constexpr (std::is_same_v<Filter, BlockedFilter>) options.layout = plan.layout;
  options.memory.populate = true;  // page faults are not the layout's cost
  absl::StatusOr<Filter> filter = Filter::Create(options);
  if (!filter.ok()) return filter.status();
  Speed speed;
  speed.insert_ns = measure::NsPerItem(keys, [&] {
    for (uint64_t key = 0; key < keys; ++key) filter->Insert(key);
  });
  speed.may_contain_ns = std::numeric_limits<double>::infinity();
  uint64_t false_positives = 0;
  for (int pass = 0; pass < 3; ++pass) {
    false_positives = 0;
    speed.may_contain_ns = std::min(speed.may_contain_ns, measure::NsPerItem(keys, [&] {
                                      for (uint64_t key = 0; key < keys; ++key) {
                                        false_positives +=
                                            filter->MayContain((uint64_t{1} << 63) + key) ? 1 : 0;
                                      }
                                    }));
  }
  speed.measured_fpr = static_cast<double>(false_positives) / static_cast<double>(keys);
  return speed;
}

absl::StatusOr<Speed> MeasureSpeed(const Plan& plan) {
  return plan.layout == Layout::kPartitioned ? MeasureSpeedOf<ClassicFilter>(plan)
                                             : MeasureSpeedOf<BlockedFilter>(plan);
}

// A candidate of `plan`: each blocked shape and the classic (partitioned) filter, against the
// request's target and the --max-memory budget.
struct Candidate {
  std::string name;          // "line512", ..., "classic"
  const Plan* plan;          // the request's plan; nullptr where the shape cannot take it
  bool fits = true;          // its memory is within the budget (true without one)
  std::optional<Plan> best;  // with a budget and a capacity: the lowest FPR within the budget
  std::optional<Speed> speed;
};

// The geometry of the lowest FPR for `capacity` keys in at most `budget` bytes, in `layout` (k the
// planner's best, or `hashes`): whole 512-bit lines (a multiple of every blocked shape's block),
// less 16 bits for the partitioned layout's rounding up to whole slices.
std::optional<Plan> BestWithin(uint64_t budget, uint64_t capacity, uint32_t hashes, Layout layout) {
  const uint64_t room = layout == Layout::kPartitioned
                            ? budget * 8 - std::min<uint64_t>(budget * 8, kMaxHashes)
                            : budget * 8;
  const uint64_t bits = std::min(room / kBlockBits * kBlockBits, kMaxBits);
  if (bits == 0) return std::nullopt;
  absl::StatusOr<Plan> plan = PlanForSize(bits, hashes, capacity, layout);
  if (!plan.ok() || plan->bytes() > budget) return std::nullopt;
  return *plan;
}

// The candidate --prefer picks among those whose plan meets the request and fits the budget:
// smallest, the fewest bytes (ties to the faster); fastest, the least MayContain ns/key measured
// when --measure timed them, else the planner's order (word64, block256, line512, then the
// classic filter's k cache lines). -1 where none fits.
int Pick(const std::vector<Candidate>& candidates, bool fastest) {
  int pick = -1;
  // Candidates are in kBlockShapes' order (fewest bits first, so fastest last), classic last: the
  // planner's speed rank is that order reversed for the blocked shapes, classic slowest.
  auto rank = [&](size_t i) { return i + 1 == candidates.size() ? -1 : static_cast<int>(i); };
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.plan == nullptr || !c.fits) continue;
    if (pick < 0) {
      pick = static_cast<int>(i);
      continue;
    }
    const Candidate& best = candidates[static_cast<size_t>(pick)];
    bool better = false;
    if (!fastest) {
      better = c.plan->bytes() < best.plan->bytes() ||
               (c.plan->bytes() == best.plan->bytes() && rank(i) > rank(static_cast<size_t>(pick)));
    } else if (c.speed && best.speed) {
      better = c.speed->may_contain_ns < best.speed->may_contain_ns;
    } else {
      better = rank(i) > rank(static_cast<size_t>(pick));
    }
    if (better) pick = static_cast<int>(i);
  }
  return pick;
}

absl::StatusOr<std::string> RenderPlanSvg(const FilterOptions& request,
                                          const std::vector<Candidate>& candidates, int pick,
                                          uint64_t budget);

absl::Status RunPlan(const PlanFlags& plan_flags) {
  const SizingFlags& flags = plan_flags.sizing;
  if (!flags.Given("--bits") && !(flags.Given("--capacity") && flags.Given("--fpr"))) {
    return UsageError("give --capacity N --fpr P, or --bits B [--hashes K]");
  }
  absl::StatusOr<FilterOptions> request = flags.Options(0, 0.01);
  if (!request.ok()) return request.status();
  const bool with_capacity = request->capacity != 0;
  if (plan_flags.measure && !with_capacity) {
    return UsageError("--measure needs --capacity: the keys to time");
  }
  if (Given(plan_flags.svg_flag) && !with_capacity) {
    return UsageError("--svg needs --capacity: the chart is the FPR at N keys");
  }
  absl::StatusOr<Plan> partitioned =
      request->bits != 0
          ? PlanForSize(request->bits, request->hashes, request->capacity, Layout::kPartitioned)
          : PlanFor(request->capacity, request->fpr, Layout::kPartitioned, request->hashes);
  if (!partitioned.ok()) return partitioned.status();
  // What ClassicFilter::Create makes of a capacity and an fpr: slices that halve (FoldablePlan).
  if (request->bits == 0) partitioned = FoldablePlan(*partitioned);
  if (!partitioned.ok()) return partitioned.status();
  // One plan per blocked shape (kBlockShapes' order, the line first); a shape that cannot take
  // the request (--hashes above its k) shows "-". The line's error is the request's.
  std::vector<absl::StatusOr<Plan>> blocked = PlanEachLayout(*request);
  if (!blocked.front().ok()) return blocked.front().status();
  // What BlockedFilter::Create makes of a capacity and an fpr: blocks that halve, as above.
  for (absl::StatusOr<Plan>& plan : blocked) {
    if (plan.ok() && request->bits == 0) plan = FoldablePlan(*plan);
  }
  // What --layout auto creates for this request, by --prefer (layout.h LayoutChoice): the
  // planner's own choice (PlanFilter), not a rule restated here.
  std::optional<Layout> chosen[2];
  for (const LayoutChoice choice : {LayoutChoice::kSmallest, LayoutChoice::kFastest}) {
    FilterOptions options = *request;
    options.layout_choice = choice;
    absl::StatusOr<Plan> plan = PlanFilter(options, Layout::kAuto);
    if (plan.ok()) chosen[static_cast<int>(choice)] = plan->layout;
  }
  // Every candidate: the blocked shapes, then the classic filter; measured, fitted to the budget.
  const uint64_t budget = plan_flags.max_memory;
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < blocked.size(); ++i) {
    candidates.push_back(
        {std::string(kBlockShapes[i].name), blocked[i].ok() ? &*blocked[i] : nullptr});
  }
  candidates.push_back({"classic", &*partitioned});
  for (Candidate& c : candidates) {
    if (c.plan == nullptr) continue;
    if (plan_flags.measure) {
      absl::StatusOr<Speed> speed = MeasureSpeed(*c.plan);
      if (!speed.ok()) return speed.status();
      c.speed = *speed;
    }
    if (budget != 0) {
      c.fits = c.plan->bytes() <= budget;
      if (with_capacity)
        c.best = BestWithin(budget, request->capacity, request->hashes, c.plan->layout);
    }
  }
  const int pick = Pick(candidates, plan_flags.prefer == "fastest");
  // With a budget none fits: the candidate that reaches the lowest FPR within it.
  int best_within = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::optional<Plan>& best = candidates[i].best;
    if (best &&
        (best_within < 0 ||
         best->expected_fpr < candidates[static_cast<size_t>(best_within)].best->expected_fpr)) {
      best_within = static_cast<int>(i);
    }
  }
  if (Given(plan_flags.svg_flag)) {
    absl::StatusOr<std::string> chart = RenderPlanSvg(*request, candidates, pick, budget);
    if (!chart.ok()) return chart.status();
    if (absl::Status s = WriteTextFile(plan_flags.svg, *chart); !s.ok()) return s;
  }
  // A candidate's figures beyond its plan: its speed, and against the budget.
  auto candidate_json = [&](const Candidate& c, Json row) {
    if (c.speed) {
      row["insert_ns_per_key"] = c.speed->insert_ns;
      row["may_contain_ns_per_key"] = c.speed->may_contain_ns;
      row["measured_fpr"] = c.speed->measured_fpr;
      row["measured_keys"] = std::min(c.plan->capacity, kMeasureKeys);
    }
    if (budget != 0) {
      row["fits_max_memory"] = c.fits;
      row["best_fpr_within_max_memory"] = c.best ? Json(c.best->expected_fpr) : Json();
      row["best_hashes_within_max_memory"] = c.best ? Json(c.best->hashes) : Json();
    }
    return row;
  };
  if (plan_flags.json) {
    Json layouts = Json::array();
    for (size_t i = 0; i < blocked.size(); ++i) {
      if (!blocked[i].ok()) continue;
      Json row = {{"layout", std::string(kBlockShapes[i].name)}};
      row.update(PlanJson(*blocked[i], 1));
      layouts.push_back(candidate_json(candidates[i], std::move(row)));
    }
    // "" where auto takes no layout (the request fits none).
    auto chosen_name = [](const std::optional<Layout>& layout) {
      return layout ? std::string(LayoutName(*layout)) : std::string();
    };
    PrintJson(
        {{"capacity", request->capacity},
         {"target_fpr", request->bits == 0 ? Json(request->fpr) : Json()},
         {"requested_bits", request->bits},
         {"blocked", PlanJson(*blocked.front(), 1)},
         {"partitioned",
          candidate_json(candidates.back(), PlanJson(*partitioned, partitioned->hashes))},
         {"layouts", std::move(layouts)},
         {"auto", {{"smallest", chosen_name(chosen[0])}, {"fastest", chosen_name(chosen[1])}}},
         {"max_memory", budget},
         {"prefer", plan_flags.prefer},
         // The candidate --prefer picks ("" where none meets the request within the budget), and
         // with a budget the one reaching the lowest FPR within it.
         {"pick", pick < 0 ? std::string() : candidates[static_cast<size_t>(pick)].name},
         {"best_within_max_memory",
          best_within < 0 ? std::string() : candidates[static_cast<size_t>(best_within)].name}});
    return absl::OkStatus();
  }
  std::string out =
      request->bits == 0
          ? absl::StrCat(FormatCount(request->capacity), " keys at a false-positive rate of ",
                         FormatFpr(request->fpr), "\n\n")
          : absl::StrCat(
                FormatCount(request->bits), " bits",
                request->hashes ? absl::StrCat(", ", request->hashes, " hashes") : "",
                with_capacity ? absl::StrCat(", ", FormatCount(request->capacity), " keys") : "",
                "\n\n");
  // One column per layout: the blocked shapes, then the classic filter's.
  std::vector<const Plan*> plans;
  std::vector<std::string> header = {""};
  for (size_t i = 0; i < blocked.size(); ++i) {
    plans.push_back(blocked[i].ok() ? &*blocked[i] : nullptr);
    header.push_back(i == 0 ? absl::StrCat(AsAbsl(kBlockShapes[i].name), " (blocked)")
                            : std::string(kBlockShapes[i].name));
  }
  plans.push_back(&*partitioned);
  header.emplace_back("partitioned (classic)");
  TextTable table;
  table.AddRow(std::move(header));
  auto add_row = [&](std::string name, auto cell) {
    std::vector<std::string> row = {std::move(name)};
    for (const Plan* plan : plans) row.push_back(plan != nullptr ? cell(*plan) : "-");
    table.AddRow(std::move(row));
  };
  add_row("bits", [](const Plan& p) { return FormatCount(p.bits); });
  add_row("memory", [](const Plan& p) { return FormatBytes(static_cast<double>(p.bytes())); });
  add_row("hashes (k)", [](const Plan& p) { return absl::StrCat(p.hashes); });
  add_row("bits/key", [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.2f", p.bits_per_key) : std::string("-");
  });
  add_row("predicted FPR", [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.4g", p.expected_fpr) : std::string("-");
  });
  add_row("cache lines per lookup", [](const Plan& p) {
    return absl::StrCat(p.layout == Layout::kPartitioned ? p.hashes : 1);
  });
  add_row("--layout auto --prefer", [&](const Plan& p) {
    const bool smallest = chosen[0] == p.layout;
    const bool fastest = chosen[1] == p.layout;
    return smallest && fastest ? std::string("both")
           : smallest          ? std::string("smallest")
           : fastest           ? std::string("fastest")
                               : std::string();
  });
  if (plan_flags.measure) {
    for (const bool insert : {true, false}) {
      std::vector<std::string> row = {insert ? "Insert ns/key" : "MayContain ns/key"};
      for (const Candidate& c : candidates) {
        row.push_back(
            c.speed ? absl::StrFormat("%.1f", insert ? c.speed->insert_ns : c.speed->may_contain_ns)
                    : "-");
      }
      table.AddRow(std::move(row));
    }
  }
  // Per candidate, by index (the columns are the candidates, in order).
  auto add_candidate_row = [&](std::string name, auto cell) {
    std::vector<std::string> row = {std::move(name)};
    for (size_t i = 0; i < candidates.size(); ++i) {
      row.push_back(candidates[i].plan != nullptr ? cell(i) : "-");
    }
    table.AddRow(std::move(row));
  };
  if (budget != 0) {
    add_candidate_row(absl::StrCat("fits ", FormatBytes(static_cast<double>(budget))),
                      [&](size_t i) { return std::string(candidates[i].fits ? "yes" : "no"); });
    if (with_capacity) {
      add_candidate_row("best FPR within it", [&](size_t i) {
        const std::optional<Plan>& best = candidates[i].best;
        return best ? absl::StrFormat("%.4g (k = %d)", best->expected_fpr, best->hashes)
                    : std::string("-");
      });
    }
  }
  add_candidate_row(absl::StrCat("--prefer ", plan_flags.prefer), [&](size_t i) {
    return std::string(static_cast<int>(i) == pick ? "<- pick" : "");
  });
  absl::StrAppend(&out, table.Render());
  if (pick < 0) {
    absl::StrAppend(&out, "\nNo candidate meets the target within ",
                    FormatBytes(static_cast<double>(budget)), ".");
    if (best_within >= 0) {
      const Candidate& c = candidates[static_cast<size_t>(best_within)];
      absl::StrAppend(&out,
                      " The lowest FPR it allows: ", absl::StrFormat("%.4g", c.best->expected_fpr),
                      " (", c.name, ", k = ", c.best->hashes, ").");
    }
    absl::StrAppend(&out, "\n");
  } else {
    const Candidate& c = candidates[static_cast<size_t>(pick)];
    absl::StrAppend(&out, "\nPick (--prefer ", plan_flags.prefer, "): ", c.name, ", ",
                    FormatBytes(static_cast<double>(c.plan->bytes())),
                    c.name == "classic" ? " (bloomery build --kind classic)"
                                        : absl::StrCat(" (bloomery build --layout ", c.name, ")"),
                    "\n");
  }
  if (!with_capacity) absl::StrAppend(&out, "\n(give --capacity N to see the FPR at N keys)\n");
  if (plan_flags.measure) {
    absl::StrAppend(&out, "\n(ns/key: single-key calls on this machine, ",
                    FormatCount(std::min(request->capacity, kMeasureKeys)),
                    " keys at each layout's bits/key; MayContain of absent keys)\n");
  }
  std::fputs(out.c_str(), stdout);
  return absl::OkStatus();
}

constexpr uint64_t kDefaultKeys = 200'000;
constexpr uint32_t kMinBitsPerKey = 2;
constexpr uint32_t kMaxBitsPerKey = 32;

// The columns k = 1.. of a layout's table: every k its filters take (16 for the line and the
// partitioned layout, whose best k at 1e-4 and below is 12 to 16; 8 for block256 and word64).
uint32_t TableHashes(Layout layout) {
  const BlockShape* shape = FindBlockShape(layout);
  return shape != nullptr ? shape->max_hashes : kMaxHashes;
}

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

// --layout's names: the line is "blocked" (its old name), the partitioned layout "classic".
std::string TableLayoutName(Layout layout) {
  if (layout == Layout::kLine512) return "blocked";
  if (layout == Layout::kPartitioned) return "classic";
  return std::string(LayoutName(layout));
}

double MeasuredFpr(const Cell& cell, uint64_t queries) {
  return static_cast<double>(cell.false_positives) / static_cast<double>(queries);
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

// The FPR charts of table --svg and plan --svg: FPR (log scale) against a linear x, on cli_svg.h's
// page.
namespace chart {
using namespace svg;  // NOLINT: the drawing primitives

static_assert(std::size(kPalette) == kMaxHashes);

struct Axes {
  double decade_lo, decade_hi;
  double x_lo = 0, x_hi = kMaxBitsPerKey;  // linear
  [[nodiscard]] double X(double x) const {
    return kLeft + (x - x_lo) / (x_hi - x_lo) * (kRight - kLeft);
  }
  [[nodiscard]] double Y(double y) const {
    return kBottom - (std::log10(y) - decade_lo) / (decade_hi - decade_lo) * (kBottom - kTop);
  }
  [[nodiscard]] bool Visible(double y) const {
    return y > 0 && std::log10(y) >= decade_lo - 1e-9 && std::log10(y) <= decade_hi + 1e-9;
  }
};

// The frame every chart shares: the white page, a title and subtitle, the log-scale FPR axis's
// decades and the plot's border, with `y_label` and `x_label`.
std::string Frame(const Axes& axes, std::string_view title, std::string_view subtitle,
                  std::string_view x_label, std::string_view y_label) {
  std::string out = Page();
  const double middle = (kLeft + kRight) / 2;
  out += Text(middle, 32, R"(text-anchor="middle" font-size="20" font-weight="bold")", title);
  out += Text(middle, 56, R"(text-anchor="middle" font-size="14" fill="#444")", subtitle);
  for (int d = static_cast<int>(axes.decade_lo); d <= static_cast<int>(axes.decade_hi); ++d) {
    const double y = axes.Y(std::pow(10.0, d));
    out += Line(kLeft, y, kRight, y, R"(stroke="#cfcfcf")");
    out += Text(kLeft - 8, y + 5, R"(text-anchor="end")",
                d == 0 ? std::string("1")
                       : absl::StrCat(R"(10<tspan dy="-7" font-size="10">)", d, "</tspan>"));
  }
  out += absl::StrFormat(
      R"(<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#555"/>)"
      "\n",
      kLeft, kTop, kRight - kLeft, kBottom - kTop);
  out += Text(middle, 652, R"(text-anchor="middle" font-size="15")", x_label);
  out +=
      Text(30, 345, R"svg(text-anchor="middle" font-size="15" transform="rotate(-90 30 345)")svg",
           y_label);
  return out;
}

// An SVG path through the points of `curve` inside the plot, lifting the pen where it leaves it.
std::string Path(const Axes& axes, const std::vector<std::pair<double, double>>& curve,
                 std::string_view color) {
  std::string path;
  bool pen_down = false;
  for (const auto& [x, y] : curve) {
    pen_down = pen_down && axes.Visible(y);
    if (!axes.Visible(y)) continue;
    absl::StrAppendFormat(&path, "%c%.1f,%.1f ", pen_down ? 'L' : 'M', axes.X(x), axes.Y(y));
    pen_down = true;
  }
  return absl::StrFormat(R"(<path d="%s" fill="none" stroke="%s" stroke-width="2"/>)"
                         "\n",
                         path, color);
}

}  // namespace chart

absl::StatusOr<std::string> RenderSvg(const Table& table) {
  const double resolution = 1.0 / static_cast<double>(table.keys);
  const uint32_t hashes = TableHashes(table.layout);
  std::vector<std::vector<std::pair<double, double>>> curves(hashes);
  double lo = resolution;
  double hi = resolution;
  for (uint32_t k = 1; k <= hashes; ++k) {
    for (double x = kMinBitsPerKey; x <= kMaxBitsPerKey + 1e-9; x += 0.25) {
      const auto bits = static_cast<uint64_t>(std::llround(x * static_cast<double>(table.keys)));
      absl::StatusOr<Plan> plan = PlanForSize(bits, k, table.keys, table.layout);
      if (!plan.ok()) return plan.status();
      curves[k - 1].emplace_back(x, plan->expected_fpr);
      if (plan->expected_fpr > 0) lo = std::min(lo, plan->expected_fpr);
      hi = std::max(hi, plan->expected_fpr);
    }
  }
  // Curves plunge fast at large x; past 12 decades below the top the chart would be all axis.
  const double top = std::ceil(std::log10(hi) - 1e-9);
  const chart::Axes axes{std::max(std::floor(std::log10(lo) + 1e-9), top - 12), top};
  std::string out = chart::Frame(
      axes,
      absl::StrCat("Bloom filter false-positive rate: ", TableLayoutName(table.layout), " layout"),
      absl::StrFormat("lines: exact formula; dots: measured with %s keys inserted and %s absent "
                      "keys queried",
                      FormatCount(table.keys), FormatCount(table.keys)),
      "bits per key (m/n)", "false-positive rate (log scale)");
  for (uint32_t x = 0; x <= kMaxBitsPerKey; x += 4) {
    out += svg::Line(axes.X(x), svg::kTop, axes.X(x), svg::kBottom, R"(stroke="#e4e4e4")");
    out += svg::Text(axes.X(x), svg::kBottom + 21, R"(text-anchor="middle")", absl::StrCat(x));
  }
  if (axes.Visible(resolution)) {
    const double y = axes.Y(resolution);
    out += svg::Line(svg::kLeft, y, svg::kRight, y, R"(stroke="#333" stroke-dasharray="6 4")");
    out += svg::Text(svg::kRight - 6, y - 6, R"(text-anchor="end" font-style="italic")",
                     "1 / queries: smallest measurable FPR");
  }
  // Curves leave a gap where they leave the plot; dots only for cells with false positives.
  for (uint32_t k = 1; k <= hashes; ++k) {
    out += chart::Path(axes, curves[k - 1], svg::kPalette[k - 1]);
    for (const Row& row : table.rows) {
      const double fpr = MeasuredFpr(row.cells[k - 1], table.keys);
      if (fpr > 0 && axes.Visible(fpr)) {
        out += svg::Dot(axes.X(row.bits_per_key), axes.Y(fpr), svg::kPalette[k - 1]);
      }
    }
    // The legend, right of the plot: the k's line and dot.
    const double y = svg::kTop + 8 + 22 * (k - 1);
    out += svg::Line(832, y, 860, y,
                     absl::StrFormat(R"(stroke="%s" stroke-width="2")", svg::kPalette[k - 1]));
    out += svg::Dot(846, y, svg::kPalette[k - 1]);
    out += svg::Text(870, y + 4.5, "", absl::StrCat("k = ", k));
  }
  const double legend = svg::kTop + 22 * hashes + 22;
  out += svg::Line(832, legend, 860, legend, R"(stroke="#333" stroke-width="2")");
  out += svg::Text(870, legend + 4.5, "", "predicted");
  out += svg::Dot(846, legend + 22, "#333");
  out += svg::Text(870, legend + 26.5, "", "measured");
  return out + "</svg>\n";
}

// `plan --svg`: each candidate's predicted FPR at the request's capacity against its memory (its
// best k at each size, or --hashes), its plan as a dot, the target FPR and the budget as dashed
// lines, the pick ringed. Memory runs from a quarter of the smallest plan to twice the largest (and
// the budget).
absl::StatusOr<std::string> RenderPlanSvg(const FilterOptions& request,
                                          const std::vector<Candidate>& candidates, int pick,
                                          uint64_t budget) {
  double bytes_lo = std::numeric_limits<double>::infinity();
  double bytes_hi = 0;
  for (const Candidate& c : candidates) {
    if (c.plan == nullptr) continue;
    bytes_lo = std::min(bytes_lo, static_cast<double>(c.plan->bytes()) / 4);
    bytes_hi = std::max(bytes_hi, static_cast<double>(c.plan->bytes()) * 2);
  }
  if (budget != 0) bytes_hi = std::max(bytes_hi, static_cast<double>(budget) * 1.25);
  constexpr int kSamples = 96;
  std::vector<std::vector<std::pair<double, double>>> curves(candidates.size());
  double lo = request.fpr > 0 ? request.fpr : 1.0;
  double hi = lo;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].plan == nullptr) continue;
    for (int j = 0; j <= kSamples; ++j) {
      const double bytes = bytes_lo + (bytes_hi - bytes_lo) * j / kSamples;
      const auto bits = static_cast<uint64_t>(bytes * 8);
      absl::StatusOr<Plan> plan = PlanForSize(std::max<uint64_t>(bits, 1), request.hashes,
                                              request.capacity, candidates[i].plan->layout);
      if (!plan.ok() || !(plan->expected_fpr > 0)) continue;
      curves[i].emplace_back(static_cast<double>(plan->bytes()), plan->expected_fpr);
      lo = std::min(lo, plan->expected_fpr);
      hi = std::max(hi, plan->expected_fpr);
    }
  }
  const double top = std::min(0.0, std::ceil(std::log10(hi) - 1e-9));
  chart::Axes axes{std::max(std::floor(std::log10(lo) + 1e-9), top - 12), top};
  axes.x_lo = bytes_lo;
  axes.x_hi = bytes_hi;
  std::string out = chart::Frame(
      axes,
      absl::StrCat("Memory and false-positive rate for ", FormatCount(request.capacity), " keys"),
      absl::StrCat("lines: each candidate's exact FPR at its best k; dots: the planner's plans",
                   request.fpr > 0 ? absl::StrCat(" for ", FormatFpr(request.fpr)) : ""),
      "memory", "false-positive rate at capacity (log scale)");
  for (int t = 0; t <= 5; ++t) {
    const double bytes = bytes_lo + (bytes_hi - bytes_lo) * t / 5;
    out += svg::Line(axes.X(bytes), svg::kTop, axes.X(bytes), svg::kBottom, R"(stroke="#e4e4e4")");
    out +=
        svg::Text(axes.X(bytes), svg::kBottom + 21, R"(text-anchor="middle")", FormatBytes(bytes));
  }
  if (request.fpr > 0 && axes.Visible(request.fpr)) {
    const double y = axes.Y(request.fpr);
    out += svg::Line(svg::kLeft, y, svg::kRight, y, R"(stroke="#333" stroke-dasharray="6 4")");
    out += svg::Text(svg::kRight - 6, y - 6, R"(text-anchor="end" font-style="italic")",
                     absl::StrCat("target ", FormatFpr(request.fpr)));
  }
  if (budget != 0) {
    const double x = axes.X(static_cast<double>(budget));
    out += svg::Line(x, svg::kTop, x, svg::kBottom, R"(stroke="#b00" stroke-dasharray="6 4")");
    out += svg::Text(x - 6, svg::kTop + 16, R"(text-anchor="end" font-style="italic" fill="#b00")",
                     absl::StrCat("budget ", FormatBytes(static_cast<double>(budget))));
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.plan == nullptr) continue;
    const char* color = svg::kPalette[i];
    out += chart::Path(axes, curves[i], color);
    const double x = axes.X(static_cast<double>(c.plan->bytes()));
    if (axes.Visible(c.plan->expected_fpr)) {
      out += svg::Dot(x, axes.Y(c.plan->expected_fpr), color);
      if (static_cast<int>(i) == pick) {
        out += absl::StrFormat(
            R"(<circle cx="%.1f" cy="%.1f" r="9" fill="none" stroke="#000" stroke-width="2"/>)"
            "\n",
            x, axes.Y(c.plan->expected_fpr));
      }
    }
    const double y = svg::kTop + 8 + 22 * static_cast<double>(i);
    out += svg::Line(832, y, 860, y, absl::StrFormat(R"(stroke="%s" stroke-width="2")", color));
    out += svg::Dot(846, y, color);
    out += svg::Text(870, y + 4.5, "", c.name);
  }
  const double legend = svg::kTop + 22 * static_cast<double>(candidates.size()) + 14;
  out += absl::StrFormat(
      R"(<circle cx="846" cy="%.1f" r="9" fill="none" stroke="#000" stroke-width="2"/>)"
      "\n",
      legend);
  out += svg::Text(870, legend + 4.5, "", pick >= 0 ? "the pick" : "(none fits)");
  return out + "</svg>\n";
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
    absl::StatusOr<std::string> svg = RenderSvg(*table);
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

void AddPlanCommands(Commands& commands) {
  auto [plan, plan_flags] = commands.Add<PlanFlags>(
      "plan", "size a filter for N keys at FPR p (or B bits, K hashes): each layout side by side",
      R"(Sizes a Bloom filter in every layout bloomery offers, side by side:
  line512      BlockedFilter (blocked): a key's k bits live in one 64-byte cache line
  block256     BlockedFilter --layout block256: in one 32-byte block, k <= 8 (faster, more bits)
  word64       BlockedFilter --layout word64: in one 64-bit word, k <= 8 (fastest, most bits)
  partitioned  ClassicFilter: k slices over the whole array, one bit per slice (k misses)
--capacity N --fpr P asks the planner for the smallest filter whose predicted FPR at N keys
is <= P; --bits B [--hashes K] describes a given geometry and what it gives at N keys.)",
      RunPlan);
  plan_flags->sizing.Add(*plan, "keys the filter holds: 1000000, 1e6, 2^20, 10M",
                         "target false-positive rate: 0.01, 1e-3, 1%");
  AddNumber(*plan, "--max-memory", plan_flags->max_memory, Unit::kBytes, kMemoryCapRange,
            "a memory budget (2.5GiB, 512M): say which candidates fit it, and the lowest FPR each "
            "reaches within it");
  plan->add_option("--prefer", plan_flags->prefer,
                   "which candidate to pick among those that meet the target within the budget: "
                   "smallest (the default: the fewest bytes) or fastest (by --measure's MayContain "
                   "timings when given, else word64, block256, line512, classic)")
      ->type_name("P")
      ->check(CLI::IsMember({"smallest", "fastest"}));
  AddJson(*plan, plan_flags->json);
  AddFlag(*plan, "--measure", plan_flags->measure,
          "also time each blocked layout's Insert and MayContain here (ns/key, about a second)");
  plan_flags->svg_flag = plan->add_option("--svg", plan_flags->svg,
                                          "also write a chart of every candidate's FPR against "
                                          "its memory, the target, the budget and the pick")
                             ->type_name("FILE");

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
    if (shape.layout != Layout::kLine512) absl::StrAppend(&others, AsAbsl(shape.name), ", ");
  }
  layouts.emplace_back("classic");
  app->add_option("--layout", flags->layout,
                  absl::StrCat("blocked (BlockedFilter's ", AsAbsl(LayoutName(Layout::kLine512)),
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
