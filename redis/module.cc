// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery_redis.so: a Redis module speaking RedisBloom's BF.* commands over bloomery filters.
//
//   redis-server --loadmodule /path/bloomery_redis.so [MAX_BYTES n] [SCANDUMP_CHUNK_BYTES n]
//                [TESTING-CLOCK 1]
//
// This file is the module's bootstrap: RedisModule_OnLoad reads the module arguments, installs
// the server's allocator, registers the data types and the commands, and answers INFO bf. The
// BF.* commands and their data type are bf.h's; the BFW.* commands, filters whose keys expire,
// are windowed.h's (TESTING-CLOCK is theirs).
//
// Redis runs module commands on its main thread, so filters are single-writer; the forked RDB and
// AOF children read their own copy. Filter memory comes from the server's allocator
// (server_memory.h; huge pages asked for where a block is large), so it counts in used_memory,
// maxmemory, eviction and deny-oom like any other key's, and MEMORY USAGE (mem_usage) answers
// what the allocator holds for it.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "bf.h"
#include "bf_args.h"
#include "bloomery/version.h"
#include "chunks.h"
#include "commands.h"
#include "health.h"
#include "module_api.h"
#include "server_memory.h"
#include "windowed.h"

namespace bloomery::redis {
namespace {

// The module registers under RedisBloom's name and a RedisBloom version (major * 10000 + minor *
// 100 + patch), so that clients and test kits that gate on MODULE LIST (redis-py's
// skip_ifmodversion_lt("2.4.0", "bf")) find it: 2.4.4, the first RedisBloom whose Bloom commands
// are all ours (BF.CARD came in 2.4.4). Nothing looks the module up by name; the type name
// (kTypeName, bf.h) is what RDB files hold, so renaming the module changes nothing for them.
constexpr const char* kModuleName = "bf";
constexpr int kModuleVersion = 20404;
// bloomery's own version (VERSION) is in the module's INFO section instead: `INFO bf` answers
// bf_bloomery_version (fields take the module's name as prefix).
//
// INFO bf also answers the health of every filter of both types, kept as writes happen (health.h):
// bf_filters, bf_bytes, bf_filters_near_limit, bf_filters_over_limit and bf_worst_fpr_ratio (the
// largest estimated / planned FPR), what to alert on. Redis 7.0 leaves a module's section out of
// INFO and INFO all, and redis_exporter exports only the fields it knows, so they reach
// Prometheus through redis/bloomery_metrics.lua, which the exporter runs (docs/OPERATING.md,
// "Alerts").
void AddInfo(RedisModuleInfoCtx* ctx, int /*for_crash_report*/) {
  api::InfoAddSection(ctx, "");
  api::InfoAddFieldCString(ctx, "bloomery_version", BLOOMERY_VERSION_STRING);
  const HealthTotals totals = CurrentHealthTotals();
  api::InfoAddFieldULongLong(ctx, "filters", totals.filters);
  api::InfoAddFieldULongLong(ctx, "bytes", totals.bytes);
  api::InfoAddFieldULongLong(ctx, "filters_near_limit", totals.near_limit);
  api::InfoAddFieldULongLong(ctx, "filters_over_limit", totals.over_limit);
  api::InfoAddFieldDouble(ctx, "worst_fpr_ratio", totals.worst_fpr_ratio);
}
// INFO bf's totals follow what writes left behind, and windowed filters' generations as they
// expire, once a second (TrackedHealth::RefreshFollowed, health.h), from the server's cron.
void FollowHealthOnCron(RedisModuleCtx* ctx, api::ServerEvent /*event*/, uint64_t /*subevent*/,
                        void* /*data*/) {
  static std::chrono::steady_clock::time_point last;
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::seconds(1)) return;
  last = now;
  TrackedHealth::RefreshFollowed(ctx);
}

// TESTING-CLOCK (windowed.h); MAX_BYTES and SCANDUMP_CHUNK_BYTES are bf.h's.
bool g_testing_clock = false;

// Module arguments: pairs of NAME value.
int ParseModuleArgs(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc % 2 != 0) {
    api::Log(ctx, "warning", "bloomery: module arguments come in pairs: NAME value");
    return api::kErr;
  }
  for (int i = 0; i < argc; i += 2) {
    const std::string_view name = Arg(argv[i]);
    long long value = 0;
    if (api::StringToLongLong(argv[i + 1], &value) != api::kOk || value < 0) {
      api::Log(ctx, "warning", "bloomery: %s needs a non-negative integer",
               std::string(name).c_str());
      return api::kErr;
    }
    if (EqualsIgnoreCase(name, "MAX_BYTES")) {
      g_max_bytes = static_cast<uint64_t>(value);
    } else if (EqualsIgnoreCase(name, "SCANDUMP_CHUNK_BYTES")) {
      if (value == 0) {
        api::Log(ctx, "warning", "bloomery: SCANDUMP_CHUNK_BYTES must be at least 1");
        return api::kErr;
      }
      g_chunk_bytes = static_cast<uint64_t>(value);
    } else if (EqualsIgnoreCase(name, "TESTING-CLOCK")) {
      g_testing_clock = value != 0;  // windowed.h
    } else {
      api::Log(ctx, "warning", "bloomery: unknown module argument %s", std::string(name).c_str());
      return api::kErr;
    }
  }
  return api::kOk;
}

}  // namespace
}  // namespace bloomery::redis

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString** argv,
                                                                         int argc) {
  namespace br = bloomery::redis;
  namespace api = bloomery::redis::api;
  if (api::Bind(ctx, br::kModuleName, br::kModuleVersion) != api::kOk) return api::kErr;
  br::SetModuleAllocator(br::ServerAllocator());
  // What a client makes the module hold between commands counts where the filters do.
  br::SetHeldAllocator({.allocate = api::TryAlloc, .release = api::Free});
  if (br::ParseModuleArgs(ctx, argv, argc) != api::kOk) return api::kErr;
  if (api::RegisterInfoFunc(ctx, br::AddInfo) != api::kOk) return api::kErr;
  if (api::SubscribeToServerEvent(ctx, api::kCronLoopEvent, br::FollowHealthOnCron) != api::kOk) {
    return api::kErr;
  }
  // rdb_load checks IsIOError after every read, so a truncated RDB or RESTORE payload is
  // reported instead of ending the server.
  api::SetModuleOptions(ctx, api::kOptionHandleIoErrors);

  api::TypeMethods methods = br::BloomTypeMethods();
  br::g_type = api::CreateDataType(ctx, br::kTypeName, br::kEncodingVersion, &methods);
  if (br::g_type == nullptr) return api::kErr;

  for (const br::CommandSpec& command : br::BloomCommands()) {
    if (br::RegisterCommand(ctx, command) != api::kOk) return api::kErr;
  }
  // The BFW.* windowed family: its own data type and commands (windowed.h).
  return br::RegisterWindowed(ctx,
                              {.max_bytes = br::g_max_bytes, .testing_clock = br::g_testing_clock});
}
