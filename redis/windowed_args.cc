// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "windowed_args.h"

#include <chrono>
#include <string>

#include "bf_args.h"

namespace bloomery::redis {
namespace {

absl::Status Reply(const char* text) { return absl::InvalidArgumentError(text); }
absl::Status Arity() { return absl::FailedPreconditionError("wrong number of arguments"); }

constexpr int64_t kMaxWindowMs = int64_t{100} * 366 * 24 * 3600 * 1000;
constexpr long long kMinGenerations = 2;
constexpr long long kMaxGenerations = 64;

// The options both commands share, one at args[*i] (advanced past it and its value). Returns
// false when args[*i] is none of them; an error for a bad value.
absl::StatusOr<bool> ParseWindowOption(std::span<const std::string_view> args, size_t* i,
                                       WindowedParams* params, bool* window_given,
                                       uint64_t* keys_window) {
  const std::string_view option = args[*i];
  const bool window = EqualsIgnoreCase(option, "WINDOW");
  const bool keys = EqualsIgnoreCase(option, "KEYS");
  const bool generations = EqualsIgnoreCase(option, "GENERATIONS");
  const bool refresh = EqualsIgnoreCase(option, "REFRESH");
  const bool layout = EqualsIgnoreCase(option, "LAYOUT");
  if (!window && !keys && !generations && !refresh && !layout) return false;
  if (*i + 1 == args.size()) return Arity();
  const std::string_view value = args[*i + 1];
  *i += 2;
  long long integer = 0;
  if (window || keys) {
    if (*window_given) return Reply("ERR give one WINDOW or KEYS");
    *window_given = true;
    if (window) {
      if (!ParseWindow(value, &params->window_ms)) {
        return Reply("ERR bad window: a duration such as 1500ms, 90s, 30m, 12h or 7d");
      }
    } else {
      if (!ParseInteger(value, &integer) || integer <= 0) return Reply("ERR bad KEYS window");
      *keys_window = static_cast<uint64_t>(integer);
    }
  } else if (generations) {
    if (!ParseInteger(value, &integer) || integer < kMinGenerations || integer > kMaxGenerations) {
      return Reply("ERR GENERATIONS must be in the range [2, 64]");
    }
    params->generations = static_cast<uint32_t>(integer);
  } else if (layout) {
    if (absl::Status s = ParseLayoutValue(value, &params->layout); !s.ok()) return s;
  } else if (EqualsIgnoreCase(value, "ON_INSERT")) {
    params->refresh = Refresh::kOnInsert;
  } else if (EqualsIgnoreCase(value, "KEEP_FIRST_SEEN")) {
    params->refresh = Refresh::kKeepFirstSeen;
  } else {
    return Reply("ERR REFRESH must be ON_INSERT or KEEP_FIRST_SEEN");
  }
  return true;
}

// KEYS n: the window is n inserts, which is what a key-count filter holds, so its capacity.
absl::Status ApplyKeysWindow(uint64_t keys_window, bool capacity_given, WindowedParams* params) {
  if (keys_window == 0) return absl::OkStatus();
  if (capacity_given && params->capacity != keys_window) {
    return Reply("ERR a KEYS window holds its n keys: capacity must equal n");
  }
  params->capacity = keys_window;
  params->window_ms = 0;
  return absl::OkStatus();
}

}  // namespace

bool ParseWindow(std::string_view text, int64_t* ms) {
  struct Unit {
    std::string_view suffix;
    int64_t ms;
  };
  // "ms" before "s" and "m": the longest suffix that matches.
  static constexpr Unit kUnits[] = {{"ms", 1},        {"s", 1000},       {"m", 60'000},
                                    {"h", 3'600'000}, {"d", 86'400'000}, {"", 1}};
  for (const Unit& unit : kUnits) {
    if (text.size() <= unit.suffix.size()) continue;
    const std::string_view number = text.substr(0, text.size() - unit.suffix.size());
    if (!EqualsIgnoreCase(text.substr(number.size()), unit.suffix)) continue;
    long long count = 0;
    if (!ParseInteger(number, &count)) return false;
    if (count <= 0 || count > kMaxWindowMs / unit.ms) return false;
    *ms = count * unit.ms;
    return true;
  }
  return false;
}

absl::StatusOr<WindowedParams> ParseWindowedReserve(std::span<const std::string_view> args) {
  // The rate and capacity are required; a missing window is named below, not an arity error.
  if (args.size() < 2) return Arity();
  // The error rate and capacity as BF.RESERVE reads them, with its texts.
  absl::StatusOr<FilterParams> sizing = ParseReserve(args.first(2));
  if (!sizing.ok()) return sizing.status();
  WindowedParams params;
  params.error_rate = sizing->error_rate;
  params.capacity = sizing->capacity;
  bool window_given = false;
  uint64_t keys_window = 0;
  for (size_t i = 2; i < args.size();) {
    absl::StatusOr<bool> parsed = ParseWindowOption(args, &i, &params, &window_given, &keys_window);
    if (!parsed.ok()) return parsed.status();
    if (!*parsed) return Reply("ERR unknown argument");
  }
  if (!window_given) return Reply("ERR BFW.RESERVE needs WINDOW duration or KEYS n");
  if (absl::Status keys = ApplyKeysWindow(keys_window, true, &params); !keys.ok()) return keys;
  return params;
}

absl::StatusOr<WindowedInsertArgs> ParseWindowedInsert(std::span<const std::string_view> args) {
  WindowedInsertArgs insert;
  WindowedParams& params = insert.params;
  params.capacity = 100;  // BF.INSERT's default
  uint64_t keys_window = 0;
  InsertCommon common{.capacity = &params.capacity, .error_rate = &params.error_rate};
  absl::Status parsed = ParseInsertOptions(args, common, [&](size_t* i) {
    return ParseWindowOption(args, i, &params, &insert.sized, &keys_window);
  });
  if (!parsed.ok()) return parsed;
  insert.create = common.create;
  insert.first_item = common.first_item;
  if (absl::Status keys = ApplyKeysWindow(keys_window, common.capacity_given, &params);
      !keys.ok()) {
    return keys;
  }
  return insert;
}

WindowedOptions ToWindowedOptions(const WindowedParams& params, uint64_t max_bytes) {
  return {.capacity = params.capacity,
          .fpr = params.error_rate,
          .window = std::chrono::milliseconds(params.window_ms),
          .generations = params.generations,
          .refresh = params.refresh,
          .layout = params.layout,
          .memory = ModuleMemory(max_bytes)};
}

}  // namespace bloomery::redis
