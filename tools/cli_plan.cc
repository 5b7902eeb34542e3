// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery plan`: what a filter costs in each blocked layout (layout.h) and the classic one, as
// Create would make it, against a --max-memory budget; timed with --measure, charted with --svg
// (cli_svg.cc). `bloomery table` is its neighbour (cli_table.cc).
#include "cli_plan.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"
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
    if (!c.plan || !c.fits) continue;
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

// The request: --capacity N --fpr P, or --bits B [--hashes K] [--capacity N]. --measure and --svg
// need a capacity.
absl::StatusOr<FilterOptions> PlanRequest(const PlanFlags& plan_flags) {
  const SizingFlags& flags = plan_flags.sizing;
  if (!flags.Given("--bits") && !(flags.Given("--capacity") && flags.Given("--fpr"))) {
    return UsageError("give --capacity N --fpr P, or --bits B [--hashes K]");
  }
  absl::StatusOr<FilterOptions> request = flags.Options(0, 0.01);
  if (!request.ok()) return request.status();
  if (plan_flags.measure && request->capacity == 0) {
    return UsageError("--measure needs --capacity: the keys to time");
  }
  if (Given(plan_flags.svg_flag) && request->capacity == 0) {
    return UsageError("--svg needs --capacity: the chart is the FPR at N keys");
  }
  return request;
}

// One candidate per blocked shape (kBlockShapes' order, the line first), then the classic filter,
// each with the plan its Create makes of the request (PlanForCreate, plan.h). A shape that cannot
// take the request (--hashes above its k) has no plan; the classic filter's error, then the
// line's, is the request's.
absl::StatusOr<std::vector<Candidate>> PlanCandidates(const FilterOptions& request) {
  absl::StatusOr<Plan> partitioned = PlanForCreate(request, Layout::kPartitioned);
  if (!partitioned.ok()) return partitioned.status();
  std::vector<Candidate> candidates;
  for (const BlockShape& shape : kBlockShapes) {
    absl::StatusOr<Plan> plan = PlanForCreate(request, shape.layout);
    if (candidates.empty() && !plan.ok()) return plan.status();
    candidates.push_back(
        {std::string(shape.name), plan.ok() ? std::optional<Plan>(*plan) : std::nullopt});
  }
  candidates.push_back({"classic", *partitioned});
  return candidates;
}

// What --layout auto creates for the request, by --prefer (layout.h LayoutChoice, indexed by it):
// the planner's own choice (PlanFilter), not a rule restated here; none where it takes no layout.
using AutoLayouts = std::array<std::optional<Layout>, 2>;
AutoLayouts AutoLayoutsFor(const FilterOptions& request) {
  AutoLayouts chosen;
  for (const LayoutChoice choice : {LayoutChoice::kSmallest, LayoutChoice::kFastest}) {
    FilterOptions options = request;
    options.layout_choice = choice;
    absl::StatusOr<Plan> plan = PlanFilter(options, Layout::kAuto);
    if (plan.ok()) chosen[static_cast<int>(choice)] = plan->layout;
  }
  return chosen;
}

// Times each candidate (--measure) and holds it to the budget (--max-memory, 0: none).
absl::Status MeasureAndFit(const PlanFlags& plan_flags, const FilterOptions& request,
                           std::vector<Candidate>& candidates) {
  const uint64_t budget = plan_flags.max_memory;
  for (Candidate& c : candidates) {
    if (!c.plan) continue;
    if (plan_flags.measure) {
      absl::StatusOr<Speed> speed = MeasureSpeed(*c.plan);
      if (!speed.ok()) return speed.status();
      c.speed = *speed;
    }
    if (budget != 0) {
      c.fits = c.plan->bytes() <= budget;
      if (request.capacity != 0) {
        c.best = BestWithin(budget, request.capacity, request.hashes, c.plan->layout);
      }
    }
  }
  return absl::OkStatus();
}

// With a budget: the candidate that reaches the lowest FPR within it (-1 without one).
int BestWithinBudget(const std::vector<Candidate>& candidates) {
  int best_within = -1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::optional<Plan>& best = candidates[i].best;
    if (best &&
        (best_within < 0 ||
         best->expected_fpr < candidates[static_cast<size_t>(best_within)].best->expected_fpr)) {
      best_within = static_cast<int>(i);
    }
  }
  return best_within;
}

// What plan found, for the JSON and the text: the candidates (the classic filter last), the layouts
// --layout auto takes, the pick and the best within the budget (-1 for none).
struct PlanReport {
  const PlanFlags& flags;
  const FilterOptions& request;
  std::vector<Candidate> candidates;
  AutoLayouts chosen;
  int pick = -1;
  int best_within = -1;

  [[nodiscard]] uint64_t budget() const { return flags.max_memory; }
  [[nodiscard]] bool with_capacity() const { return request.capacity != 0; }
  [[nodiscard]] const Candidate& classic() const { return candidates.back(); }
  // The candidates of the blocked shapes: all but the last.
  [[nodiscard]] size_t blocked() const { return candidates.size() - 1; }
};

// A candidate's figures beyond its plan: its speed, and against the budget.
Json CandidateJson(const PlanReport& report, const Candidate& c, Json row) {
  if (c.speed) {
    row["insert_ns_per_key"] = c.speed->insert_ns;
    row["may_contain_ns_per_key"] = c.speed->may_contain_ns;
    row["measured_fpr"] = c.speed->measured_fpr;
    row["measured_keys"] = std::min(c.plan->capacity, kMeasureKeys);
  }
  if (report.budget() != 0) {
    row["fits_max_memory"] = c.fits;
    row["best_fpr_within_max_memory"] = c.best ? Json(c.best->expected_fpr) : Json();
    row["best_hashes_within_max_memory"] = c.best ? Json(c.best->hashes) : Json();
  }
  return row;
}

void PrintPlanJson(const PlanReport& report) {
  const std::vector<Candidate>& candidates = report.candidates;
  Json layouts = Json::array();
  for (size_t i = 0; i < report.blocked(); ++i) {
    if (!candidates[i].plan) continue;
    Json row = {{"layout", candidates[i].name}};
    row.update(PlanJson(*candidates[i].plan, 1));
    layouts.push_back(CandidateJson(report, candidates[i], std::move(row)));
  }
  // "" where auto takes no layout (the request fits none).
  auto chosen_name = [](const std::optional<Layout>& layout) {
    return layout ? std::string(LayoutName(*layout)) : std::string();
  };
  // "" for no candidate.
  auto name_of = [&](int i) {
    return i < 0 ? std::string() : candidates[static_cast<size_t>(i)].name;
  };
  const FilterOptions& request = report.request;
  const Plan& partitioned = *report.classic().plan;
  PrintJson(
      {{"capacity", request.capacity},
       {"target_fpr", request.bits == 0 ? Json(request.fpr) : Json()},
       {"requested_bits", request.bits},
       {"blocked", PlanJson(*candidates.front().plan, 1)},
       {"partitioned",
        CandidateJson(report, report.classic(), PlanJson(partitioned, partitioned.hashes))},
       {"layouts", std::move(layouts)},
       {"auto",
        {{"smallest", chosen_name(report.chosen[0])}, {"fastest", chosen_name(report.chosen[1])}}},
       {"max_memory", report.budget()},
       {"prefer", report.flags.prefer},
       // The candidate --prefer picks ("" where none meets the request within the budget),
       // and with a budget the one reaching the lowest FPR within it.
       {"pick", name_of(report.pick)},
       {"best_within_max_memory", name_of(report.best_within)}});
}

// The table's rows: one column per candidate (the blocked shapes, then the classic filter's).
TextTable PlanTable(const PlanReport& report) {
  const std::vector<Candidate>& candidates = report.candidates;
  const bool with_capacity = report.with_capacity();
  std::vector<std::string> header = {""};
  for (size_t i = 0; i < report.blocked(); ++i) {
    header.push_back(i == 0 ? absl::StrCat(candidates[i].name, " (blocked)") : candidates[i].name);
  }
  header.emplace_back("partitioned (classic)");
  TextTable table;
  table.AddRow(std::move(header));
  // A row of `cell(i)` for each candidate i with a plan, "-" for one without.
  auto add_row = [&](std::string name, auto cell) {
    std::vector<std::string> row = {std::move(name)};
    for (size_t i = 0; i < candidates.size(); ++i) {
      row.push_back(candidates[i].plan ? cell(i) : "-");
    }
    table.AddRow(std::move(row));
  };
  auto plan_of = [&](size_t i) -> const Plan& { return *candidates[i].plan; };
  add_row("bits", [&](size_t i) { return FormatCount(plan_of(i).bits); });
  add_row("memory", [&](size_t i) { return FormatBytes(static_cast<double>(plan_of(i).bytes())); });
  add_row("hashes (k)", [&](size_t i) { return absl::StrCat(plan_of(i).hashes); });
  add_row("bits/key", [&](size_t i) {
    return with_capacity ? absl::StrFormat("%.2f", plan_of(i).bits_per_key) : std::string("-");
  });
  add_row("predicted FPR", [&](size_t i) {
    return with_capacity ? absl::StrFormat("%.4g", plan_of(i).expected_fpr) : std::string("-");
  });
  add_row("cache lines per lookup", [&](size_t i) {
    const Plan& p = plan_of(i);
    return absl::StrCat(p.layout == Layout::kPartitioned ? p.hashes : 1);
  });
  add_row("--layout auto --prefer", [&](size_t i) {
    const bool smallest = report.chosen[0] == plan_of(i).layout;
    const bool fastest = report.chosen[1] == plan_of(i).layout;
    return smallest && fastest ? std::string("both")
           : smallest          ? std::string("smallest")
           : fastest           ? std::string("fastest")
                               : std::string();
  });
  if (report.flags.measure) {
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
  if (report.budget() != 0) {
    add_row(absl::StrCat("fits ", FormatBytes(static_cast<double>(report.budget()))),
            [&](size_t i) { return std::string(candidates[i].fits ? "yes" : "no"); });
    if (with_capacity) {
      add_row("best FPR within it", [&](size_t i) {
        const std::optional<Plan>& best = candidates[i].best;
        return best ? absl::StrFormat("%.4g (k = %d)", best->expected_fpr, best->hashes)
                    : std::string("-");
      });
    }
  }
  add_row(absl::StrCat("--prefer ", report.flags.prefer), [&](size_t i) {
    return std::string(static_cast<int>(i) == report.pick ? "<- pick" : "");
  });
  return table;
}

// The text: the request, the table, the pick (or the lowest FPR the budget allows) and notes.
std::string RenderPlanText(const PlanReport& report) {
  const FilterOptions& request = report.request;
  const bool with_capacity = report.with_capacity();
  std::string out =
      request.bits == 0
          ? absl::StrCat(FormatCount(request.capacity), " keys at a false-positive rate of ",
                         FormatFpr(request.fpr), "\n\n")
          : absl::StrCat(
                FormatCount(request.bits), " bits",
                request.hashes ? absl::StrCat(", ", request.hashes, " hashes") : "",
                with_capacity ? absl::StrCat(", ", FormatCount(request.capacity), " keys") : "",
                "\n\n");
  absl::StrAppend(&out, PlanTable(report).Render());
  if (report.pick < 0) {
    absl::StrAppend(&out, "\nNo candidate meets the target within ",
                    FormatBytes(static_cast<double>(report.budget())), ".");
    if (report.best_within >= 0) {
      const Candidate& c = report.candidates[static_cast<size_t>(report.best_within)];
      absl::StrAppend(&out,
                      " The lowest FPR it allows: ", absl::StrFormat("%.4g", c.best->expected_fpr),
                      " (", c.name, ", k = ", c.best->hashes, ").");
    }
    absl::StrAppend(&out, "\n");
  } else {
    const Candidate& c = report.candidates[static_cast<size_t>(report.pick)];
    absl::StrAppend(&out, "\nPick (--prefer ", report.flags.prefer, "): ", c.name, ", ",
                    FormatBytes(static_cast<double>(c.plan->bytes())),
                    c.name == "classic" ? " (bloomery build --kind classic)"
                                        : absl::StrCat(" (bloomery build --layout ", c.name, ")"),
                    "\n");
  }
  if (!with_capacity) absl::StrAppend(&out, "\n(give --capacity N to see the FPR at N keys)\n");
  if (report.flags.measure) {
    absl::StrAppend(&out, "\n(ns/key: single-key calls on this machine, ",
                    FormatCount(std::min(request.capacity, kMeasureKeys)),
                    " keys at each layout's bits/key; MayContain of absent keys)\n");
  }
  return out;
}

absl::Status RunPlan(const PlanFlags& plan_flags) {
  absl::StatusOr<FilterOptions> request = PlanRequest(plan_flags);
  if (!request.ok()) return request.status();
  absl::StatusOr<std::vector<Candidate>> candidates = PlanCandidates(*request);
  if (!candidates.ok()) return candidates.status();
  PlanReport report{plan_flags, *request, *std::move(candidates), AutoLayoutsFor(*request)};
  if (absl::Status s = MeasureAndFit(plan_flags, *request, report.candidates); !s.ok()) return s;
  report.pick = Pick(report.candidates, plan_flags.prefer == "fastest");
  report.best_within = BestWithinBudget(report.candidates);
  if (Given(plan_flags.svg_flag)) {
    absl::StatusOr<std::string> chart =
        RenderPlanSvg(*request, report.candidates, report.pick, report.budget());
    if (!chart.ok()) return chart.status();
    if (absl::Status s = WriteTextFile(plan_flags.svg, *chart); !s.ok()) return s;
  }
  if (plan_flags.json) {
    PrintPlanJson(report);
  } else {
    std::fputs(RenderPlanText(report).c_str(), stdout);
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

  AddTableCommand(commands);
}

}  // namespace bloomery::cli
