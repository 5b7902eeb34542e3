// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bf_args.h: the arguments of BF.RESERVE and BF.INSERT, parsed without Redis.
//
// Plain C++ so that unit tests and the fuzzer reach it without a server. The accepted syntax and
// the error texts follow RedisBloom's (what redis-py's `bf()` client sends and expects), EXPANSION
// included: 1..32768 is the growth of a scaling filter, 0 makes it non-scaling. One option is
// bloomery's own, which RedisBloom clients never send: LAYOUT partitioned|line512|block256|word64,
// every stage's layout (bloomery/layout.h). Without it a filter is RedisBloom's: partitioned
// (classic) stages, the first at half the error rate and each next at half the one before, so it
// takes RedisBloom's memory for the same reserve; a blocked shape costs more bits (its first
// stage at a tenth of the error rate, bloomery's tightening 0.9) and one cache line per key and
// stage instead of k.
#ifndef BLOOMERY_REDIS_BF_ARGS_H_
#define BLOOMERY_REDIS_BF_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/scalable_filter.h"

namespace bloomery::redis {

// How a new filter is sized; the defaults are RedisBloom's for a filter that BF.ADD, BF.MADD or
// BF.INSERT create.
struct FilterParams {
  uint64_t capacity = 100;
  double error_rate = 0.01;
  uint32_t expansion = 2;
  bool scaling = true;
  Layout layout = Layout::kPartitioned;
};

// RedisBloom's tightening ratio (its ERROR_TIGHTENING_RATIO): stage i of a scaling filter gets
// error rate e / 2^(i+1). The module's default, partitioned filters use it.
inline constexpr double kRedisBloomTightening = 0.5;

// BF.INSERT's options and where its items start.
struct InsertArgs {
  FilterParams params;
  bool create = true;     // false with NOCREATE
  size_t first_item = 0;  // index into the arguments after the key
};

// `args` are the arguments after the key. Errors are InvalidArgument whose message is the reply,
// verbatim (RedisBloom's text, with "ERR " where RedisBloom sends it); arity problems are
// FailedPrecondition (the caller answers with the server's own wrong-arity error).
//   BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING] [LAYOUT l]
[[nodiscard]] absl::StatusOr<FilterParams> ParseReserve(std::span<const std::string_view> args);
//   BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION x] [NOCREATE] [NONSCALING] [LAYOUT l]
//             ITEMS item...
[[nodiscard]] absl::StatusOr<InsertArgs> ParseInsert(std::span<const std::string_view> args);

// LAYOUT's value, any case, for BFW.* (whose generations are blocked): a blocked shape's name
// (kBlockShapes) into *layout, or InvalidArgument "ERR bad layout (line512, block256 or word64)".
[[nodiscard]] absl::Status ParseLayoutValue(std::string_view value, Layout* layout);
// LAYOUT's value for BF.*: "partitioned" or a blocked shape's name, any case, into *layout, or
// InvalidArgument "ERR bad layout (partitioned, line512, block256 or word64)".
[[nodiscard]] absl::Status ParseFilterLayout(std::string_view value, Layout* layout);

// The option loop BF.INSERT and BFW.INSERT share: `args` (after the key) are options, then ITEMS
// and one item at least. ITEMS, NOCREATE, CAPACITY c and ERROR e are read here, with RedisBloom's
// texts, their values checked whether or not the key exists. Any other option goes to
// `own(&i)`, with args[i] the option: true once it has read the option (and its values, moving
// i past them), false if the option is not the command's (an "unknown argument"), or an error.
struct InsertCommon {
  uint64_t* capacity;
  double* error_rate;
  bool create = true;  // false with NOCREATE
  bool capacity_given = false;
  size_t first_item = 0;  // index into `args` of the first item
};
[[nodiscard]] absl::Status ParseInsertOptions(
    std::span<const std::string_view> args, InsertCommon& common,
    absl::FunctionRef<absl::StatusOr<bool>(size_t* i)> own);

// The memory options of every filter the module makes, under a cap of `max_bytes` (0: none): the
// one place that says how the module's filters get their memory, from the allocator
// SetModuleAllocator installed (RedisModule_OnLoad installs the server's, server_memory.h; before
// that, as in unit tests, bloomery's own mmap).
[[nodiscard]] MemoryOptions ModuleMemory(uint64_t max_bytes);
// How the module loads every filter image (RDB, RESTORE, LOADCHUNK): under `max_bytes` (0: none),
// into ModuleMemory's memory.
[[nodiscard]] LoadOptions ModuleLoadOptions(uint64_t max_bytes);
void SetModuleAllocator(const MemoryAllocator& allocator);

// The ScalableFilter options for `params` under a memory cap of `max_bytes` (0: none): tightening
// kRedisBloomTightening for partitioned stages, kDefaultTightening for blocked ones. A non-scaling
// filter is one stage planned at the full error rate (as RedisBloom's), which refuses new keys
// past its capacity.
[[nodiscard]] ScalableOptions ToScalableOptions(const FilterParams& params, uint64_t max_bytes);

// Redis's own number syntax (no leading/trailing spaces, no hex, no NaN), so that a value the
// server would reject is rejected here too.
[[nodiscard]] bool ParseInteger(std::string_view text, long long* value);
[[nodiscard]] bool ParseDouble(std::string_view text, double* value);
// ASCII case-insensitive equality, how Redis compares option names.
[[nodiscard]] bool EqualsIgnoreCase(std::string_view a, std::string_view b) noexcept;

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_BF_ARGS_H_
