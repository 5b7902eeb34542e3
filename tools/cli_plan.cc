// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery plan`: what a filter costs, blocked layout next to the classic partitioned one.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_commands.h"
#include "cli_common.h"

namespace bloomery::cli {
namespace {

constexpr char kPlanHelp[] = R"(usage: bloomery plan --capacity N --fpr P [--hashes K] [--json]
       bloomery plan --bits B [--hashes K] [--capacity N] [--json]

Sizes a Bloom filter in the two layouts bloomery offers, side by side:
  blocked      BlockedFilter: a key's k bits live in one 64-byte cache line (1 miss per lookup)
  partitioned  ClassicFilter: k slices over the whole array, one bit per slice (k misses per lookup)

The first form asks the planner for the smallest filter whose predicted FPR at N keys is <= P.
The second describes a given geometry (e.g. "2^30 bits, 6 hashes") and what it gives at N keys.

options:
  --capacity N   keys the filter holds: 1000000, 1e6, 2^20, 10M (k, M, G, T are powers of 1000)
  --fpr P        target false-positive rate: 0.01, 1e-3, 1%
  --bits B       size in bits: 1073741824, 2^30, 1G (K, M, G, T are powers of 1024)
  --hashes K     probes per key, 1..16 (default: the planner's choice)
  --json         print JSON instead of a table
)";

struct PlanPair {
  Plan blocked;
  Plan partitioned;
};

void AppendPlanJson(JsonWriter& json, const Plan& plan, uint32_t lines_per_lookup) {
  json.BeginObject()
      .Key("bits")
      .Integer(plan.bits)
      .Key("bytes")
      .Integer(plan.bytes())
      .Key("hashes")
      .Integer(plan.hashes)
      .Key("bits_per_key");
  plan.capacity ? json.Number(plan.bits_per_key) : json.Null();
  json.Key("expected_fpr");
  plan.capacity ? json.Number(plan.expected_fpr) : json.Null();
  json.Key("cache_lines_per_lookup").Integer(lines_per_lookup).EndObject();
}

std::string Render(const PlanPair& plans, bool json_output, const FilterOptions& request) {
  const bool with_capacity = request.capacity != 0;
  if (json_output) {
    JsonWriter json;
    json.BeginObject().Key("capacity").Integer(request.capacity).Key("target_fpr");
    request.bits == 0 ? json.Number(request.fpr) : json.Null();
    json.Key("requested_bits").Integer(request.bits).Key("blocked");
    AppendPlanJson(json, plans.blocked, 1);
    json.Key("partitioned");
    AppendPlanJson(json, plans.partitioned, plans.partitioned.hashes);
    return json.EndObject().Finish();
  }
  std::string out;
  if (request.bits == 0) {
    absl::StrAppend(&out, FormatCount(request.capacity), " keys at a false-positive rate of ",
                    FormatFpr(request.fpr), "\n\n");
  } else {
    absl::StrAppend(&out, FormatCount(request.bits), " bits",
                    request.hashes ? absl::StrCat(", ", request.hashes, " hashes") : "",
                    with_capacity ? absl::StrCat(", ", FormatCount(request.capacity), " keys") : "",
                    "\n\n");
  }
  auto per_key = [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.2f", p.bits_per_key) : std::string("-");
  };
  auto fpr = [&](const Plan& p) {
    return with_capacity ? absl::StrFormat("%.4g", p.expected_fpr) : std::string("-");
  };
  TextTable table;
  table.AddRow({"", "blocked", "partitioned (classic)"});
  table.AddRow({"bits", FormatCount(plans.blocked.bits), FormatCount(plans.partitioned.bits)});
  table.AddRow({"memory", FormatBytes(static_cast<double>(plans.blocked.bytes())),
                FormatBytes(static_cast<double>(plans.partitioned.bytes()))});
  table.AddRow(
      {"hashes (k)", absl::StrCat(plans.blocked.hashes), absl::StrCat(plans.partitioned.hashes)});
  table.AddRow({"bits/key", per_key(plans.blocked), per_key(plans.partitioned)});
  table.AddRow({"predicted FPR", fpr(plans.blocked), fpr(plans.partitioned)});
  table.AddRow({"cache lines per lookup", "1", absl::StrCat(plans.partitioned.hashes)});
  absl::StrAppend(&out, table.Render());
  if (!with_capacity) absl::StrAppend(&out, "\n(give --capacity N to see the FPR at N keys)\n");
  return out;
}

}  // namespace

absl::Status PlanCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(
      argc, argv,
      {{"capacity", true}, {"fpr", true}, {"bits", true}, {"hashes", true}, {"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kPlanHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(0, 0); !s.ok()) return s;
  if (!args->Has("bits") && !(args->Has("capacity") && args->Has("fpr"))) {
    return UsageError("give --capacity N --fpr P, or --bits B [--hashes K]");
  }
  absl::StatusOr<FilterOptions> request = SizingFromFlags(*args, 0, 0.01);
  if (!request.ok()) return request.status();

  PlanPair plans;
  for (const Layout layout : {Layout::kBlocked, Layout::kPartitioned}) {
    absl::StatusOr<Plan> plan =
        request->bits != 0 ? PlanForSize(request->bits, request->hashes, request->capacity, layout)
                           : PlanFor(request->capacity, request->fpr, layout, request->hashes);
    if (!plan.ok()) return plan.status();
    (layout == Layout::kBlocked ? plans.blocked : plans.partitioned) = *plan;
  }
  const std::string out = Render(plans, args->Has("json"), *request);
  std::fputs(out.c_str(), stdout);
  return absl::OkStatus();
}

}  // namespace bloomery::cli
