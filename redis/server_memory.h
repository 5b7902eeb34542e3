// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// server_memory.h: filters' memory from the server's allocator (RedisModule_TryAlloc), so that it
// counts in INFO memory's used_memory, and so in maxmemory, eviction and deny-oom, as any other
// key's memory does. RedisModule_OnLoad installs ServerAllocator() as the module's allocator
// (SetModuleAllocator, bf_args.h), which every filter the module creates or loads takes through
// ModuleMemory or ModuleLoadOptions; a scalable filter's later stages grow through it too.
#ifndef BLOOMERY_REDIS_SERVER_MEMORY_H_
#define BLOOMERY_REDIS_SERVER_MEMORY_H_

#include <cstddef>
#include <cstdint>

#include "bloomery/filter.h"
#include "bloomery/options.h"

namespace bloomery::redis {

// The module's one allocator for filter memory. Needs api::Bind to have run (RedisModule_OnLoad).
// A refusal (the server's allocator has no memory) is the library's ResourceExhausted; the
// server's panic on out-of-memory is never reached from a filter's allocation.
[[nodiscard]] MemoryAllocator ServerAllocator() noexcept;

// What the server counts for `words` (a filter, or a scalable filter's stage): for memory from
// ServerAllocator, the size class the server's allocator gave the block, the alignment's slack
// included (what used_memory grew by); otherwise its memory_bytes().
[[nodiscard]] uint64_t ServerBytes(const WordArray& words) noexcept;

// A base for the module's key values: their objects are allocated from the server's allocator too
// (RedisModule_TryAlloc), so that nothing a key holds is outside used_memory. std::bad_alloc when
// the server's allocator refuses, as operator new.
struct InServerMemory {
  [[nodiscard]] static void* operator new(size_t bytes);
  static void operator delete(void* block) noexcept;
};

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_SERVER_MEMORY_H_
