// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery plan`: what a filter costs, blocked layout next to the classic partitioned one.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"

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

absl::Status RunPlan(const SizingFlags& flags, bool json) {
  if (!Given(flags.bits_flag) && !(Given(flags.capacity_flag) && Given(flags.fpr_flag))) {
    return UsageError("give --capacity N --fpr P, or --bits B [--hashes K]");
  }
  absl::StatusOr<FilterOptions> request = flags.Options(0, 0.01);
  if (!request.ok()) return request.status();
  Plan plans[2];
  for (const Layout layout : {Layout::kBlocked, Layout::kPartitioned}) {
    absl::StatusOr<Plan> plan =
        request->bits != 0 ? PlanForSize(request->bits, request->hashes, request->capacity, layout)
                           : PlanFor(request->capacity, request->fpr, layout, request->hashes);
    if (!plan.ok()) return plan.status();
    plans[layout == Layout::kBlocked ? 0 : 1] = *plan;
  }
  const Plan& blocked = plans[0];
  const Plan& partitioned = plans[1];
  const bool with_capacity = request->capacity != 0;
  if (json) {
    PrintJson({{"capacity", request->capacity},
               {"target_fpr", request->bits == 0 ? Json(request->fpr) : Json()},
               {"requested_bits", request->bits},
               {"blocked", PlanJson(blocked, 1)},
               {"partitioned", PlanJson(partitioned, partitioned.hashes)}});
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
  auto per_key = [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.2f", p.bits_per_key) : std::string("-");
  };
  auto fpr = [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.4g", p.expected_fpr) : std::string("-");
  };
  TextTable table;
  table.AddRow({"", "blocked", "partitioned (classic)"});
  table.AddRow({"bits", FormatCount(blocked.bits), FormatCount(partitioned.bits)});
  table.AddRow({"memory", FormatBytes(static_cast<double>(blocked.bytes())),
                FormatBytes(static_cast<double>(partitioned.bytes()))});
  table.AddRow({"hashes (k)", absl::StrCat(blocked.hashes), absl::StrCat(partitioned.hashes)});
  table.AddRow({"bits/key", per_key(blocked), per_key(partitioned)});
  table.AddRow({"predicted FPR", fpr(blocked), fpr(partitioned)});
  table.AddRow({"cache lines per lookup", "1", absl::StrCat(partitioned.hashes)});
  absl::StrAppend(&out, table.Render());
  if (!with_capacity) absl::StrAppend(&out, "\n(give --capacity N to see the FPR at N keys)\n");
  std::fputs(out.c_str(), stdout);
  return absl::OkStatus();
}

Command AddPlanCommand(CLI::App& root) {
  auto [app, flags] = NewCommand<SizingFlags>(
      root, "plan", "size a filter for N keys at FPR p (or B bits, K hashes): blocked vs classic",
      "Sizes a Bloom filter in the two layouts bloomery offers, side by side:\n"
      "  blocked      BlockedFilter: a key's k bits live in one 64-byte cache line (1 miss per "
      "lookup)\n"
      "  partitioned  ClassicFilter: k slices over the whole array, one bit per slice (k misses)\n"
      "--capacity N --fpr P asks the planner for the smallest filter whose predicted FPR at N "
      "keys\n"
      "is <= P; --bits B [--hashes K] describes a given geometry and what it gives at N keys.");
  auto json = std::make_shared<bool>(false);
  flags->Add(*app, "keys the filter holds: 1000000, 1e6, 2^20, 10M (k, M, G, T: powers of 1000)",
             "target false-positive rate: 0.01, 1e-3, 1%");
  AddFlag(*app, "--json", *json, "print JSON instead of a table");
  return {app, [flags, json] { return RunPlan(*flags, *json); }};
}

}  // namespace

void AddPlanCommands(CLI::App& root, std::vector<Command>& commands) {
  commands.push_back(AddPlanCommand(root));
}

}  // namespace bloomery::cli
