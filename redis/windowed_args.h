// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// windowed_args.h: the arguments of BFW.RESERVE and BFW.INSERT (windowed.h), parsed without
// Redis, in RedisBloom's manner (bf_args.h: its number syntax, its error rate and capacity texts).
#ifndef BLOOMERY_REDIS_WINDOWED_ARGS_H_
#define BLOOMERY_REDIS_WINDOWED_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "bloomery/windowed_filter.h"

namespace bloomery::redis {

// How a new windowed filter is sized (WindowedOptions, windowed_filter.h).
struct WindowedParams {
  uint64_t capacity = 0;  // keys in one window; KEYS mode: the window itself
  double error_rate = 0.01;
  int64_t window_ms = 0;  // 0: KEYS mode (the window is `capacity` inserts)
  uint32_t generations = 4;
  Refresh refresh = Refresh::kOnInsert;
  Layout layout = Layout::kLine512;  // LAYOUT l: every generation's block (bf_args.h)
};

// BFW.INSERT's options and where its items start.
struct WindowedInsertArgs {
  WindowedParams params;
  bool create = true;     // false with NOCREATE
  bool sized = false;     // WINDOW or KEYS given: a missing key can be created
  size_t first_item = 0;  // index into the arguments after the key
};

// `args` are the arguments after the key. Errors are InvalidArgument whose message is the reply;
// arity problems are FailedPrecondition (the caller answers with the server's wrong-arity error).
//   BFW.RESERVE key error_rate capacity WINDOW duration|KEYS n [GENERATIONS g]
//               [REFRESH ON_INSERT|KEEP_FIRST_SEEN] [LAYOUT line512|block256|word64]
[[nodiscard]] absl::StatusOr<WindowedParams> ParseWindowedReserve(
    std::span<const std::string_view> args);
//   BFW.INSERT key [CAPACITY c] [ERROR e] [WINDOW duration|KEYS n] [GENERATIONS g]
//              [REFRESH ON_INSERT|KEEP_FIRST_SEEN] [LAYOUT l] [NOCREATE] ITEMS item...
[[nodiscard]] absl::StatusOr<WindowedInsertArgs> ParseWindowedInsert(
    std::span<const std::string_view> args);

// A window: a positive integer with a unit, ms, s, m, h or d ("1500ms", "90s", "30m", "12h",
// "7d"), or a bare integer of milliseconds; at most 100 years.
[[nodiscard]] bool ParseWindow(std::string_view text, int64_t* ms);

// The library's options for `params` under a memory cap of `max_bytes` (0: none); the caller sets
// the clock.
[[nodiscard]] WindowedOptions ToWindowedOptions(const WindowedParams& params, uint64_t max_bytes);

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_WINDOWED_ARGS_H_
