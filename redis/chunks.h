// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// chunks.h: BF.SCANDUMP / BF.LOADCHUNK over a filter's serialized bytes, without Redis.
//
// A dump is the filter's bloomery file image (ScalableFilter::SaveToBytes, docs/FORMAT.md) cut
// into chunks, preceded by a 16-byte prefix that announces its length:
//   SCANDUMP key 0     -> [1, prefix]               prefix = "BLMRDUMP" + u64le(total bytes)
//   SCANDUMP key it    -> [end + 1, bytes[it-1, end)] for it >= 1, end = min(it-1 + chunk, total)
//   SCANDUMP key it    -> [0, ""]                   once it-1 >= total
// Each (iterator, data) pair is self-describing: the chunk ends at byte iterator - 1, so
// LOADCHUNK needs no other state than how many bytes it has already received. LOADCHUNK with
// iterator 1 takes the prefix and starts a ChunkAssembler; the others must arrive in order.
//
// Hostile input. The prefix is checked before anything is allocated: a total above the cap is
// refused, and memory grows only with bytes actually received, never past the announced total.
// The complete image is then validated by the one format validator (LoadFromBytes): a wrong
// order, a gap, a truncated or corrupted chunk is an error, never a crash. A dump taken while
// the filter was being written to is refused by SCANDUMP itself (bf_dump.cc); one that mixed two
// states all the same would fail its checksums on load.
#ifndef BLOOMERY_REDIS_CHUNKS_H_
#define BLOOMERY_REDIS_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace bloomery::redis {

inline constexpr std::string_view kDumpMagic = "BLMRDUMP";
inline constexpr size_t kDumpPrefixBytes = 16;
// RedisBloom's chunk size: well under Redis's 512 MiB bulk limit, large enough that a 1 GiB
// filter is 64 round trips.
inline constexpr uint64_t kDumpChunkBytes = uint64_t{16} << 20;

// The prefix SCANDUMP's first call returns for an image of `total` bytes.
[[nodiscard]] std::string EncodeDumpPrefix(uint64_t total);

// Where SCANDUMP `iterator` (>= 1) reads in an image of `total` bytes: [begin, begin + length),
// and the iterator to reply; next_iterator 0 and length 0 when the dump is complete.
struct DumpSlice {
  uint64_t begin = 0;
  uint64_t length = 0;
  long long next_iterator = 0;
};
[[nodiscard]] DumpSlice SliceForIterator(uint64_t total, long long iterator,
                                         uint64_t chunk_bytes = kDumpChunkBytes);

// Where the module keeps bytes that a client's commands make it hold between commands (a pending
// LOADCHUNK image, SCANDUMP's header): by default the C++ heap (tests, fuzzers); RedisModule_OnLoad
// sets the server's allocator (RedisModule_TryAlloc and RedisModule_Free), so that they count in
// used_memory, and so in maxmemory, eviction and deny-oom, as the filters do. Set once, before
// anything is allocated through it. `allocate` answers null when there is no memory.
struct HeldAllocator {
  void* (*allocate)(size_t bytes) = nullptr;
  void (*release)(void* block) = nullptr;
};
void SetHeldAllocator(HeldAllocator allocator) noexcept;
[[nodiscard]] void* AllocateHeld(size_t bytes);  // std::bad_alloc when refused
void ReleaseHeld(void* block) noexcept;

// A std allocator over the held allocator above.
template <typename T>
struct HeldAllocation {
  using value_type = T;
  HeldAllocation() noexcept = default;
  template <typename U>
  HeldAllocation(const HeldAllocation<U>&) noexcept {}  // NOLINT: rebinding converts implicitly
  [[nodiscard]] T* allocate(size_t n) { return static_cast<T*>(AllocateHeld(n * sizeof(T))); }
  void deallocate(T* block, size_t) noexcept { ReleaseHeld(block); }
  template <typename U>
  bool operator==(const HeldAllocation<U>&) const noexcept {
    return true;
  }
};
// Bytes in the held allocator.
using HeldBytes = std::basic_string<char, std::char_traits<char>, HeldAllocation<char>>;

// Reassembles one image from LOADCHUNK calls. Move-only value; holds at most `total()` bytes, in
// the held allocator.
class ChunkAssembler {
 public:
  // From the prefix chunk. InvalidArgument unless it is a well-formed prefix;
  // ResourceExhausted if it announces more than `max_total` bytes (0: no cap).
  [[nodiscard]] static absl::StatusOr<ChunkAssembler> Start(std::string_view prefix,
                                                            uint64_t max_total);
  // A half-received image, as an RDB saved it: the same checks as Start, and `received` must
  // be shorter than `total` (a complete image is never pending; no chunk could finish it).
  [[nodiscard]] static absl::StatusOr<ChunkAssembler> Resume(uint64_t total,
                                                             std::string_view received,
                                                             uint64_t max_total);

  // Appends the chunk LOADCHUNK got with `iterator`. InvalidArgument (nothing appended) if it is
  // empty, does not start where the received bytes end, or runs past the announced total.
  [[nodiscard]] absl::Status Append(long long iterator, std::string_view data);

  [[nodiscard]] bool complete() const noexcept { return bytes_.size() == total_; }
  [[nodiscard]] uint64_t total() const noexcept { return total_; }
  [[nodiscard]] std::string_view received() const noexcept {
    return {bytes_.data(), bytes_.size()};
  }

 private:
  explicit ChunkAssembler(uint64_t total) : total_(total) {}

  uint64_t total_;
  HeldBytes bytes_;
};

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_CHUNKS_H_
