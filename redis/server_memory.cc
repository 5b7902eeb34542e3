// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "server_memory.h"

#include <cstddef>
#include <cstdint>
#include <limits>

#include "module_api.h"

namespace bloomery::redis {
namespace {

// The server's allocator aligns to 16 bytes, a filter's line needs 64: each block is taken with
// room for its alignment and, just before the aligned start, the server's own pointer, which is
// what RedisModule_Free and RedisModule_MallocSize take.
void*& ServerPointerOf(void* block) noexcept { return static_cast<void**>(block)[-1]; }

void* Allocate(uint64_t bytes, uint64_t alignment) noexcept {
  constexpr uint64_t kRoom = sizeof(void*);
  if (bytes > std::numeric_limits<size_t>::max() - alignment - kRoom) return nullptr;
  void* server = api::TryAlloc(bytes + alignment - 1 + kRoom);
  if (server == nullptr) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(server) + kRoom;
  void* block = reinterpret_cast<void*>((first + alignment - 1) & ~uintptr_t{alignment - 1});
  ServerPointerOf(block) = server;
  return block;
}

void Release(void* block, uint64_t /*bytes*/) noexcept { api::Free(ServerPointerOf(block)); }

}  // namespace

MemoryAllocator ServerAllocator() noexcept { return {.allocate = &Allocate, .release = &Release}; }

uint64_t ServerBytes(const WordArray& words) noexcept {
  if (words.memory_allocator().allocate != &Allocate || words.memory_bytes() == 0) {
    return words.memory_bytes();
  }
  // const_cast: the block is only read, to find the server's pointer before it.
  return api::MallocSize(ServerPointerOf(const_cast<uint8_t*>(words.bytes().data())));
}

}  // namespace bloomery::redis
