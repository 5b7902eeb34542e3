// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// windowed.h: the BFW.* commands of bloomery_redis.so, filters whose keys expire
// (WindowedFilter, include/bloomery/windowed_filter.h), and their data type "bloomeryw".
//
//   BFW.RESERVE key error_rate capacity WINDOW duration|KEYS n [GENERATIONS g]
//               [REFRESH ON_INSERT|KEEP_FIRST_SEEN]
//   BFW.ADD key item / BFW.MADD key item... / BFW.EXISTS key item / BFW.MEXISTS key item...
//   BFW.INSERT key [CAPACITY c] [ERROR e] [WINDOW duration|KEYS n] [GENERATIONS g] [REFRESH r]
//              [NOCREATE] ITEMS item...
//   BFW.INFO key
//
// The clock is the master's. A duration window expires by time, and a replica, an AOF replay or
// a restarted server must expire exactly what the master did whatever its own clock says, so the
// filter's WindowClock reads no clock: it returns the logical time of the command being run. A
// write on the master reads the wall clock once (never going back from the key's last write) and
// replicates itself, to replicas and the AOF, as `BFW.AT ms <command> key args...` with that time
// made explicit; BFW.AT is refused from clients. Each key keeps the time of its last write, at
// which the RDB, DUMP and the AOF rewrite save it and a load restores it, so every server holds
// the same bits (DEBUG DIGEST-VALUE agrees) after the same writes.
// Reads never write. On the master a read answers at the master's clock: a generation whose time
// is over is skipped, though not yet cleared (the library skips expired generations by epoch), so
// keys expire on time without a write. A replica (or a server loading) answers at the time of the
// key's last write from its master: it may still report a key the master already reports expired,
// never the reverse, until the master's next write to that key.
//
// Module argument `TESTING-CLOCK 1` (tests only) adds BFW.TESTING-CLOCK-OFFSET ms, which moves
// this server's wall clock by ms, so that a test steps a master past a window.
#ifndef BLOOMERY_REDIS_WINDOWED_H_
#define BLOOMERY_REDIS_WINDOWED_H_

#include <cstdint>

#include "module_api.h"

namespace bloomery::redis {

struct WindowedConfig {
  uint64_t max_bytes = 0;  // MAX_BYTES: a client's filter stays under it (0: no cap)
  bool testing_clock = false;
};

// Creates the data type and registers the commands; from RedisModule_OnLoad, after the module
// arguments are read. Returns kOk or kErr.
int RegisterWindowed(RedisModuleCtx* ctx, const WindowedConfig& config);

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_WINDOWED_H_
