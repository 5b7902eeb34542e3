// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "server_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>

#include "module_api.h"

namespace bloomery::redis {
namespace {

// The server's allocator aligns to 16 bytes, a filter's line needs 64: each block is taken with
// room for its alignment and, just before the aligned start, the server's own pointer, which is
// what RedisModule_Free and RedisModule_MallocSize take.
void*& ServerPointerOf(void* block) noexcept { return static_cast<void**>(block)[-1]; }

// Zeroes `block` without writing its whole pages: the server's allocator (jemalloc) hands out
// private anonymous memory, whose pages MADV_DONTNEED gives back so that the next touch of each
// reads zeros (a huge page, where the library advised one). A large BF.RESERVE then takes no
// longer than with the library's mmap, and memory is faulted in as it is used (what writing the
// zeros cost: docs/DESIGN.md, "Tried and rejected"). Only the partial pages at either end are
// written.
void ZeroFill(uint8_t* block, size_t bytes) noexcept {
  static const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first = (begin + kPage - 1) / kPage * kPage;
  const uintptr_t last = (begin + bytes) / kPage * kPage;
  if (first >= last || madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED) != 0) {
    std::memset(block, 0, bytes);
    return;
  }
  std::memset(block, 0, first - begin);
  std::memset(reinterpret_cast<void*>(last), 0, begin + bytes - last);
}

void* Allocate(uint64_t bytes, uint64_t alignment) noexcept {
  constexpr uint64_t kRoom = sizeof(void*);
  if (bytes > std::numeric_limits<size_t>::max() - alignment - kRoom) return nullptr;
  void* server = api::TryAlloc(bytes + alignment - 1 + kRoom);
  if (server == nullptr) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(server) + kRoom;
  void* block = reinterpret_cast<void*>((first + alignment - 1) & ~uintptr_t{alignment - 1});
  ServerPointerOf(block) = server;
  ZeroFill(static_cast<uint8_t*>(block), bytes);
  return block;
}

void Release(void* block, uint64_t /*bytes*/) noexcept { api::Free(ServerPointerOf(block)); }

}  // namespace

MemoryAllocator ServerAllocator() noexcept {
  return {.allocate = &Allocate, .release = &Release, .zero_filled = true};
}

void* InServerMemory::operator new(size_t bytes) {
  void* block = api::TryAlloc(bytes);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

void InServerMemory::operator delete(void* block) noexcept { api::Free(block); }

uint64_t ServerBytes(const WordArray& words) noexcept {
  if (words.memory_allocator().allocate != &Allocate || words.memory_bytes() == 0) {
    return words.memory_bytes();
  }
  // const_cast: the block is only read, to find the server's pointer before it.
  return api::MallocSize(ServerPointerOf(const_cast<uint8_t*>(words.bytes().data())));
}

}  // namespace bloomery::redis
