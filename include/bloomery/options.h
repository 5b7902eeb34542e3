// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// options.h: how every filter kind is sized and configured, as plain aggregates composed of parts.
//
// Each kind's options hold its sizing fields, then `hashing` (the filter's identity) and `memory`.
// Sized by promise (capacity and fpr: the planner, plan.h, picks the bits, and k unless `hashes`
// is set) or by geometry (`bits`, which then wins: capacity only chooses k). Caveat: ClassicFilter
// shares FilterOptions, refuses a `layout` but the default and ignores `layout_choice` and `probe`.
//   bloomery::FilterOptions opts{.capacity = 1'000'000, .fpr = 0.01};
#ifndef BLOOMERY_OPTIONS_H_
#define BLOOMERY_OPTIONS_H_

#include <cstdint>

#include "bloomery/key.h"
#include "bloomery/layout.h"

namespace bloomery {

// Transparent huge pages for a filter's memory; a refusal is not an error (normal pages then).
enum class HugePages : uint8_t {
  kAuto = 0,   // madvise(MADV_HUGEPAGE) on filters of 2 MiB or more; fall back silently
  kNever = 1,  // normal pages only (MADV_NOHUGEPAGE)
};

// The integer hash a new filter of `layout` gets for `requested`: an explicit one is kept; kAuto
// is kSeededMix for kWord64 and kBlock256 and kXxh3 for the line, where an integer and its 8-byte
// string stay one key. Create resolves it from the layout its plan chose; Load keeps the file's.
[[nodiscard]] constexpr IntegerHash ResolveIntegerHash(IntegerHash requested,
                                                       Layout layout) noexcept {
  if (requested != IntegerHash::kAuto) return requested;
  return layout == Layout::kWord64 || layout == Layout::kBlock256 ? IntegerHash::kSeededMix
                                                                  : IntegerHash::kXxh3;
}

// How keys are hashed: a filter's identity, stored in its file; filters merge only when it matches.
struct HashOptions {
  // Hash seed; filters with different seeds cannot be merged. Under kXxh3 and kSeededMix two
  // seeds give unrelated filters. kMix only xors it into each integer key, so seeds 0..3 over the
  // keys 0..99,999 give one filter's bits: for kMix filters meant to err independently on small
  // integers, give seeds that differ in their high 32 bits. Strings always hash by seeded XXH3.
  uint64_t seed = kDefaultSeed;
  IntegerHash integer_hash = IntegerHash::kAuto;  // uint64_t keys' hash (key.h); kAuto: by layout

  [[nodiscard]] KeyHasher hasher(Layout layout) const noexcept {
    return KeyHasher{seed, ResolveIntegerHash(integer_hash, layout)};
  }
};

// Memory an embedder supplies in place of bloomery's own mmap (a Redis module passes Redis's
// allocator, so its filters count in used_memory). Set both functions or neither (the default:
// mmap'ed, faulted in on first use).
struct MemoryAllocator {
  // `bytes` (> 0) aligned to `alignment` (a power of two, >= 64), or null to refuse (reported by
  // Create, Load or growth as ResourceExhausted).
  void* (*allocate)(uint64_t bytes, uint64_t alignment) noexcept = nullptr;
  void (*release)(void* block, uint64_t bytes) noexcept = nullptr;
  bool zero_filled = false;  // allocate's blocks come zeroed; else bloomery zeroes each

  [[nodiscard]] bool set() const noexcept { return allocate != nullptr; }
};

// Where and how a filter's memory lives; not part of its file.
struct MemoryOptions {
  // false: single writer (the caller serialises writers). true: any number of threads may insert
  // and look up at once (atomic fetch_or).
  bool concurrent = false;
  // Refuse to allocate more bytes than this (ResourceExhausted). 0: physical memory, or the
  // cgroup's limit when lower. A nonzero cap replaces it: set one above to over-commit on purpose.
  uint64_t max_memory_bytes = 0;
  HugePages huge_pages = HugePages::kAuto;
  bool populate = false;  // fault all memory in at creation
  MemoryAllocator allocator;
};

// The options of BlockedFilter and ClassicFilter (BlockedOptions, ClassicOptions).
struct FilterOptions {
  uint64_t capacity = 0;  // keys planned for; required unless `bits` and `hashes` are both set
  double fpr = 0.01;      // target false-positive rate at `capacity` keys, in (0, 1)
  uint64_t bits = 0;      // explicit size (0: planned), rounded up to the layout's unit
  uint32_t hashes = 0;    // probes per key, 1..16 (0: chosen by the planner)
  // BlockedFilter's block shape (layout.h), or kAuto for the planner's choice by `layout_choice`.
  // ClassicFilter refuses any value but the default.
  Layout layout = Layout::kLine512;
  LayoutChoice layout_choice = LayoutChoice::kSmallest;
  // BlockedFilter's probe (layout.h): kSalted builds a filter that merges with a kSalted file.
  // ClassicFilter ignores it.
  Probe probe = Probe::kLatest;
  HashOptions hashing;
  MemoryOptions memory;

  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};
using BlockedOptions = FilterOptions;
using ClassicOptions = FilterOptions;

// A CountingFilter's options. `hashes` is 1..8; `bits` is counters times counter_bits.
struct CountingOptions {
  uint64_t capacity = 0;
  double fpr = 0.01;
  uint64_t bits = 0;
  uint32_t hashes = 0;
  uint32_t counter_bits = 4;  // 4 (saturates at 15) or 8 (saturates at 255)
  HashOptions hashing;
  MemoryOptions memory;

  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(Layout::kLine512); }
};

// How a saved filter is read back (docs/FORMAT.md). Load copies the file into fresh memory.
struct LoadOptions {
  // Refuse files needing more memory than this (ResourceExhausted; 0: as max_memory_bytes),
  // checked before anything is allocated.
  uint64_t max_bytes = 0;
  bool verify_checksums = true;  // the payload's (the header's checksum is always verified)
  // Accept a DIRTY file (mapped read-write now, or after a crash) without its payload checksums.
  // Without it a DIRTY file loads only if its checksums match, and is not mapped read-write.
  bool allow_dirty = false;
  bool concurrent = false;
  HugePages huge_pages = HugePages::kAuto;
  MemoryAllocator allocator;  // for the loaded filter, and a scalable filter's later stages
};

enum class MapMode : uint8_t {
  kReadOnly = 0,   // copy-on-write: this process's inserts never reach the file
  kReadWrite = 1,  // shared: inserts reach the file; Flush() makes them durable and checksummed
};

}  // namespace bloomery

#endif  // BLOOMERY_OPTIONS_H_
