// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli_common.h"

namespace bloomery::cli {
namespace {

// The kinds of the library's list, in its order: "blocked, classic, ...", or with summaries
// "blocked (the default: one cache line per key), classic (...), ...".
std::string KindList(bool summaries) {
  std::string list;
  for (uint32_t number = 1; number <= kFilterKindCount; ++number) {
    const auto kind = static_cast<FilterKind>(number);
    absl::StrAppend(&list, list.empty() ? "" : ", ", AbslView(FilterKindName(kind)));
    if (summaries) absl::StrAppend(&list, " (", AbslView(FilterKindSummary(kind)), ")");
  }
  return list;
}

}  // namespace

void CreateFlags::Add(CLI::App& app, const std::string& capacity_help,
                      const std::string& fpr_help) {
  app.add_option("--kind", kind, KindList(/*summaries=*/true))->type_name("K");
  sizing.Add(app, capacity_help, fpr_help);
  AddInteger(app, "--counter-bits", counter_bits, 1, 64,
             "counting filters: 4 (the default, counts to 15) or 8 (to 255)");
  app.add_option("--layout", layout,
                 absl::StrCat("blocked, scalable and windowed filters: the block a key's bits live "
                              "in: ",
                              BlockLayoutList(),
                              " (the default: the 64-byte line), auto (blocked and windowed: "
                              "the planner's choice by --prefer), or partitioned (scalable: "
                              "every stage a classic filter, the fewest bits, k lines a key)"))
      ->type_name("L");
  app.add_option("--prefer", prefer,
                 "with --layout auto: smallest (the default: the fewest bits that meet --fpr) or "
                 "fastest (the fastest layout whose filter fits --max-memory)")
      ->type_name("P")
      ->check(CLI::IsMember({"smallest", "fastest"}));
  AddMaxMemory(app, max_memory);
  app.add_option("--window", window_ns,
                 "windowed: a line is forgotten D after it was first seen (kept for "
                 "at least 3/4 of D): 90s, 30m, 12h, 7d")
      ->type_name("D")
      ->transform(
          CLI::AsNumberWithUnit(std::map<std::string, int64_t>{{"s", int64_t{1'000'000'000}},
                                                               {"m", int64_t{60'000'000'000}},
                                                               {"h", int64_t{3'600'000'000'000}},
                                                               {"d", int64_t{86'400'000'000'000}}},
                                CLI::AsNumberWithUnit::UNIT_REQUIRED)
              .description(""))  // help shows "D", not CLI11's "D:INT UNIT"
      ->check(CLI::Validator(
          [](const std::string& ns) {  // the transform's nanoseconds: [1, 2^63)
            return ns.starts_with('-') || ns == "0" ? std::string("must be longer than zero")
                                                    : std::string();
          },
          ""));
  AddNumber(app, "--window-keys", window_keys, Unit::kCount, {},
            "windowed: a line is forgotten after N lines first seen after it "
            "(kept for at least 3N/4 of them, rounded down); it is then the capacity")
      ->excludes("--window");
}

std::vector<std::string> CreateFlags::Given() const {
  std::vector<std::string> names;
  for (const char* flag : {"--kind", "--capacity", "--fpr", "--bits", "--hashes", "--counter-bits",
                           "--layout", "--prefer", "--window", "--window-keys"}) {
    if (Given(flag)) names.push_back(flag);
  }
  return names;
}

absl::StatusOr<CreateSpec> CreateFlags::Spec(uint64_t default_capacity, double default_fpr) const {
  CreateSpec spec;
  const std::optional<FilterKind> parsed = ParseFilterKind(kind);
  if (!parsed) {
    return UsageError(
        absl::StrCat("unknown --kind \"", kind, "\" (", KindList(/*summaries=*/false), ")"));
  }
  spec.kind = *parsed;
  const bool window_given = Given("--window") || Given("--window-keys");
  if (window_given && Given("--kind") && spec.kind != FilterKind::kWindowed) {
    return UsageError("--window and --window-keys need --kind windowed (or no --kind)");
  }
  if (window_given) spec.kind = FilterKind::kWindowed;
  if (spec.kind == FilterKind::kWindowed && !window_given) {
    return UsageError("a windowed filter needs one of --window D and --window-keys N");
  }
  if (Given("--window-keys")) {
    // The window is the capacity: it stands in for --capacity, so a command that needs one
    // (build) is satisfied by it.
    if (Given("--capacity")) return UsageError("--window-keys is the capacity");
    default_capacity = window_keys;
  }
  absl::StatusOr<FilterOptions> sized = sizing.Options(default_capacity, default_fpr);
  if (!sized.ok()) return sized.status();
  AnyOptions& options = spec.options;
  options.capacity = sized->capacity;
  options.fpr = sized->fpr;
  options.bits = sized->bits;
  options.hashes = sized->hashes;
  options.memory.max_memory_bytes = max_memory;
  if (spec.kind == FilterKind::kWindowed) {
    options.window = std::chrono::nanoseconds(Given("--window") ? window_ns : 0);
    // Revisit crawls: a line comes back once W has passed since it was first seen, however often
    // it is seen meanwhile.
    options.refresh = Refresh::kKeepFirstSeen;
    options.clock = ClockFromEnvironment();
  }
  if (Given("--counter-bits")) {
    if (spec.kind != FilterKind::kCounting)
      return UsageError("--counter-bits needs --kind counting");
    if (counter_bits != 4 && counter_bits != 8) return UsageError("--counter-bits must be 4 or 8");
    options.counter_bits = counter_bits;
  }
  if (Given("--layout")) {
    if (spec.kind != FilterKind::kBlocked && spec.kind != FilterKind::kScalable &&
        spec.kind != FilterKind::kWindowed) {
      return UsageError("--layout needs --kind blocked, scalable or windowed");
    }
    absl::StatusOr<Layout> parsed_layout =
        ParseLayoutFlag(layout, /*allow_auto=*/spec.kind != FilterKind::kScalable,
                        /*allow_partitioned=*/spec.kind == FilterKind::kScalable);
    if (!parsed_layout.ok()) return parsed_layout.status();
    options.layout = *parsed_layout;
  }
  if (Given("--prefer")) {
    if (options.layout != Layout::kAuto) return UsageError("--prefer needs --layout auto");
    options.layout_choice =
        prefer == "fastest" ? LayoutChoice::kFastest : LayoutChoice::kSmallest;  // IsMember'd
  }
  return spec;
}

absl::StatusOr<AnyFilter> CreateFilter(const CreateSpec& spec) {
  // The flags' own words for what AnyFilter::Create would refuse as "takes no bits/hashes".
  const bool planned = spec.kind == FilterKind::kScalable || spec.kind == FilterKind::kWindowed;
  if (planned && spec.options.bits != 0) {
    return UsageError(absl::StrCat(
        "a ", AbslView(FilterKindName(spec.kind)), " filter is sized by --capacity",
        spec.kind == FilterKind::kWindowed ? " (or --window-keys)" : "", " and --fpr, not --bits"));
  }
  if (spec.kind == FilterKind::kScalable && spec.options.hashes != 0) {
    return UsageError("a scalable filter plans each stage's hashes: --hashes is refused");
  }
  return AnyFilter::Create(spec.kind, spec.options);
}

absl::Status FileStatus(const absl::Status& status, const std::string& path) {
  if (status.ok()) return status;
  const absl::StatusCode code = status.code() == absl::StatusCode::kInvalidArgument
                                    ? absl::StatusCode::kFailedPrecondition
                                    : status.code();
  if (absl::StrContains(status.message(), path)) return absl::Status(code, status.message());
  return absl::Status(code, absl::StrCat(path, ": ", status.message()));
}

absl::StatusOr<FileLock> LockFile(const std::string& path, bool no_wait) {
  absl::StatusOr<FileLock> lock = LockForUpdate(path, LockWait::kFailFast);
  if (!no_wait && lock.status().code() == absl::StatusCode::kUnavailable) {
    // Say why nothing happens: another update, or a read-write mapping for as long as it lives.
    std::fprintf(stderr, "bloomery: %s; waiting for it (--no-wait fails instead)\n",
                 std::string(lock.status().message()).c_str());
    lock = LockForUpdate(path, LockWait::kWait);
  }
  if (!lock.ok()) return FileStatus(lock.status(), path);
  return lock;
}

absl::StatusOr<AnyFilter> LoadFilter(const std::string& path, const LoadOptions& options) {
  absl::StatusOr<AnyFilter> filter = AnyFilter::Load(path, options, ClockFromEnvironment());
  if (!filter.ok()) return FileStatus(filter.status(), path);
  return filter;
}

WindowClock ClockFromEnvironment() {
  const char* fixed = std::getenv("BLOOMERY_FAKE_CLOCK_NS");
  int64_t now = 0;
  if (fixed == nullptr || !absl::SimpleAtoi(fixed, &now)) return {};
  return [now] { return now; };
}

std::string FormatEstimate(double count) {
  if (!std::isfinite(count)) return "saturated";
  return FormatCount(static_cast<uint64_t>(count + 0.5));
}

Json EstimateJson(double count) { return std::isfinite(count) ? Json(count) : Json("saturated"); }

}  // namespace bloomery::cli
