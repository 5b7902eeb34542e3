// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// options.h: how every filter kind is sized and configured, as plain aggregates composed of parts.
//
// Each kind's options struct (FilterOptions for BlockedFilter and ClassicFilter, CountingOptions,
// ScalableOptions in scalable_filter.h, WindowedOptions in windowed_filter.h) declares the sizing
// fields that kind takes, capacity and fpr first, and then two shared parts: `hashing`
// (HashOptions, the filter's identity) and `memory` (MemoryOptions, where its memory lives). One
// field is taken only to be refused: BlockedFilter and ClassicFilter share FilterOptions, and
// ClassicFilter, always partitioned, refuses a `layout` other than the default (InvalidArgument).
// Designated initializers work:
//
//   bloomery::FilterOptions opts{.capacity = 1'000'000, .fpr = 0.01,
//                                .memory = {.concurrent = true}};
//
// A filter is sized in one of two ways:
//   - by promise: capacity (keys) and fpr; the planner (plan.h) picks the bits, and k unless
//     `hashes` is set;
//   - by geometry: bits, with hashes or a capacity to choose them for ("2^30 bits, 6 hashes", the
//     configuration Redis- and Scrapy-based de-duplicators use).
// When `bits` is set it wins: fpr is then unused, and capacity only chooses k (if `hashes` is 0)
// and the FPR the plan predicts. Every kind checks its sizing fields with CheckSizing (plan.h).
#ifndef BLOOMERY_OPTIONS_H_
#define BLOOMERY_OPTIONS_H_

#include <cstdint>

#include "bloomery/key.h"
#include "bloomery/layout.h"

namespace bloomery {

// Whether a filter's memory asks the kernel for transparent huge pages: with them a random probe
// over a large filter costs one cache miss and almost never a TLB miss. A refusal (THP disabled,
// none free) is not an error: the memory is then on normal 4 KiB pages.
enum class HugePages : uint8_t {
  kAuto = 0,   // madvise(MADV_HUGEPAGE) on filters of 2 MiB or more; fall back silently
  kNever = 1,  // normal pages only (MADV_NOHUGEPAGE)
};

// The integer hash a new filter of `layout` takes when asked for `requested`: an explicit kXxh3,
// kMix or kSeededMix is kept; kAuto (unset) is kSeededMix for kWord64 and kBlock256, whose probes
// are so cheap that XXH3 was a large share of an integer key's call (measured: MixKey made every
// one of their four operations faster at 2^20 and 2^26 keys; docs/PERFORMANCE.md, "How fast against
// Boost.Bloom?", counts XXH3's 23 instructions against the mix's 11). kSeededMix, not kMix: it is
// MixKey with the seed premixed, the same code per key (KeyHasher runs SeededMixKey for both;
// measured paired on the 2-core VM, medians of 5 to 15 runs, seeded-mix / mix over the four
// operations of both layouts: 0.98-1.09 at 2^20 keys, 0.975-1.03 at 2^26, the VM's noise), and two
// seeds give unrelated filters where kMix's seeds 0..3 give one (HashOptions::seed). kXxh3 for the
// line (and every other layout), so a default line filter keeps its bytes and digests, and an
// integer and its 8-byte string stay one key there, as Python documents for its int keys
// (bloomery's module docstring; its batch calls mix ints and 8-byte strings as one key). (A mix
// would save the line ~12 of its ~69 instructions per key; measured on the 2-core VM, 0.95x the
// time of its lookup out of cache and 0.75x of its insert, docs/DESIGN.md, "Tried and rejected".)
// Every Create resolves it here, once, from the layout its plan chose; Load keeps the file's
// hash_id.
[[nodiscard]] constexpr IntegerHash ResolveIntegerHash(IntegerHash requested,
                                                       Layout layout) noexcept {
  if (requested != IntegerHash::kAuto) return requested;
  return layout == Layout::kWord64 || layout == Layout::kBlock256 ? IntegerHash::kSeededMix
                                                                  : IntegerHash::kXxh3;
}

// How keys are hashed: a filter's identity, stored in its file; filters merge only when it matches.
struct HashOptions {
  // Hash seed (filters with different seeds cannot be merged). What each integer hash does with
  // it (key.h): kXxh3 seeds XXH3-128 (strings are hashed so under every integer hash), so two
  // seeds give unrelated filters. kSeededMix premixes it once, when the filter is made, into the
  // value xored into each key and the first multiplier (PremixSeed): two seeds give unrelated
  // filters too. kMix only xors it into each integer key (MixKey), so kMix filters whose seeds
  // differ by d hash a key set that xor by d maps onto itself alike: seeds 0, 1, 2 and 3 over the
  // keys 0..99,999 give one filter's bits; for kMix filters meant to err independently on small or
  // consecutive integers, give seeds that differ in their high 32 bits.
  uint64_t seed = kDefaultSeed;
  // How uint64_t keys are hashed (key.h). kSeededMix and kMix make single-key calls on integers
  // about a quarter cheaper; kXxh3 hashes an integer as its 8-byte string, which every filter did
  // before kMix. kAuto (unset): the layout's default, ResolveIntegerHash (kSeededMix for kWord64
  // and kBlock256, kXxh3 for the line).
  IntegerHash integer_hash = IntegerHash::kAuto;

  // The hasher of a filter of `layout` (integer_hash resolved by ResolveIntegerHash). No default
  // layout: a kind that forgot its own would silently hash as the line.
  [[nodiscard]] KeyHasher hasher(Layout layout) const noexcept {
    return KeyHasher{seed, ResolveIntegerHash(integer_hash, layout)};
  }
};

// Memory an embedder supplies in place of bloomery's own anonymous mmap: a Redis module passes
// Redis's allocator, so that its filters count in used_memory, maxmemory and eviction as any other
// key does. Set both functions or neither; with neither (the default) memory is mmap'ed, 2 MiB
// aligned when large, and faulted in on first use. An allocator's block is advised for huge pages
// on its 2 MiB-aligned interior (as huge_pages says), then zero-filled unless it comes so.
struct MemoryAllocator {
  // `bytes` (> 0) aligned to `alignment` (a power of two, at least 64), or null to refuse, which
  // the filter's Create, Load or growth reports as ResourceExhausted.
  void* (*allocate)(uint64_t bytes, uint64_t alignment) noexcept = nullptr;
  // Gives back a block `allocate` returned, with the byte count it was asked for.
  void (*release)(void* block, uint64_t bytes) noexcept = nullptr;
  // Whether allocate's blocks come zero-filled (calloc's fresh pages, or pages it gave back with
  // MADV_DONTNEED): bloomery then never writes them before use, so they are faulted in on first
  // touch, as mmap'ed memory is. Otherwise bloomery zero-fills each block, touching all of it at
  // once: about a second per GiB, more with huge pages (docs/DESIGN.md, "Tried and rejected").
  bool zero_filled = false;

  [[nodiscard]] bool set() const noexcept { return allocate != nullptr; }
};

// Where and how a filter's memory lives; not part of its file.
struct MemoryOptions {
  // false: single writer (plain stores; the fastest; the caller serialises writers).
  // true: any number of threads may insert and look up at once; inserts use atomic fetch_or.
  bool concurrent = false;
  // Refuse to allocate more than this many bytes; exceeding it is ResourceExhausted. 0: this
  // machine's memory, i.e. physical memory, or the process's cgroup memory limit when one is set
  // and lower. Memory is mapped without reserving swap (MAP_NORESERVE), so without this check the
  // kernel would grant a filter far larger than memory and the process would die when filling it.
  // A nonzero cap replaces the machine's: set one above it to over-commit on purpose.
  uint64_t max_memory_bytes = 0;
  HugePages huge_pages = HugePages::kAuto;
  // Fault all memory in at creation, every page written once (no page faults on the hot path
  // later, nor a hypervisor's trap on a page's first write).
  bool populate = false;
  // Where the memory comes from (default: bloomery's own mmap). Plain function pointers, copied
  // with the options: each block goes back through `release` when the filter holding it ends.
  MemoryAllocator allocator;
};

// The options of BlockedFilter and ClassicFilter (BlockedOptions, ClassicOptions).
struct FilterOptions {
  // Keys the filter is planned for. Required unless `bits` and `hashes` are both set.
  uint64_t capacity = 0;
  // Target false-positive rate at `capacity` keys, in (0, 1).
  double fpr = 0.01;
  // Explicit size in bits (0: planned from capacity and fpr). Rounded up to the layout's unit.
  uint64_t bits = 0;
  // Explicit number of probes per key, 1..16 (0: chosen by the planner).
  uint32_t hashes = 0;
  // BlockedFilter's block shape (layout.h): the 64-byte line by default, kBlock256, kWord64, or
  // kAuto for the planner's choice by `layout_choice`. ClassicFilter is always partitioned and
  // refuses any other value than the default.
  Layout layout = Layout::kLine512;
  LayoutChoice layout_choice = LayoutChoice::kSmallest;
  // BlockedFilter's probe (layout.h): the newest (kFields) unless kSalted is asked for, to build a
  // filter that merges with one saved before kFields. ClassicFilter has no probe and ignores it.
  Probe probe = Probe::kLatest;
  HashOptions hashing;
  MemoryOptions memory;

  // The hasher of a filter of `layout` (under kAuto, Create resolves by the layout its plan chose).
  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};
using BlockedOptions = FilterOptions;
using ClassicOptions = FilterOptions;

// The options of a CountingFilter: FilterOptions' fields plus the counter width. `hashes` is
// limited to 1..8 (one slice per probe); `bits` (explicit geometry) is the filter's memory in
// bits, counters times counter_bits.
struct CountingOptions {
  // As in FilterOptions.
  uint64_t capacity = 0;
  double fpr = 0.01;
  uint64_t bits = 0;
  uint32_t hashes = 0;
  // Bits per counter: 4 (saturates at 15; the default) or 8 (saturates at 255).
  uint32_t counter_bits = 4;
  HashOptions hashing;
  MemoryOptions memory;

  // Counters are always on the line.
  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(Layout::kLine512); }
};

// How a saved filter is read back (docs/FORMAT.md). Load copies the file into fresh memory.
struct LoadOptions {
  // Refuse files whose filter would need more than this many bytes of memory (ResourceExhausted;
  // 0: this machine's memory, as for MemoryOptions::max_memory_bytes). Checked against the file's
  // header before anything is allocated: a hostile file cannot make Load allocate more than this.
  uint64_t max_bytes = 0;
  // Verify the payload's XXH3-64 chunk checksums (the header's checksum is always verified).
  bool verify_checksums = true;
  // Accept a DIRTY file (mapped read-write by a process now, or left by one that crashed or wrote
  // after its last Flush) as it is: its payload checksums, which may be stale, are not verified.
  // Without it a DIRTY file loads only if its checksums match, and is not mapped read-write.
  bool allow_dirty = false;
  // Mode of the loaded filter (see MemoryOptions::concurrent).
  bool concurrent = false;
  HugePages huge_pages = HugePages::kAuto;
  // Where the loaded filter's memory comes from (see MemoryOptions::allocator); a scalable
  // filter's later stages grow through it too.
  MemoryAllocator allocator;
};

enum class MapMode : uint8_t {
  // Copy-on-write mapping: processes share the file's pages; this process's inserts stay private
  // and never reach the file.
  kReadOnly = 0,
  // Shared writable mapping: inserts go to the file; Flush() makes them durable and checksummed;
  // the file is DIRTY until the mapping ends with nothing written since its last Flush.
  kReadWrite = 1,
};

}  // namespace bloomery

#endif  // BLOOMERY_OPTIONS_H_
