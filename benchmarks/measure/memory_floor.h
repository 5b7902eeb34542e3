// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// memory_floor.h: the physical limit a filter lookup is measured against, shared by
// bloomery_benchmark (BM_Floor) and `bloomery bench`.
//
// A blocked-filter lookup out of cache costs at least one random 64-byte line read. FloorMemory
// holds memory of a filter's size, allocated the way a filter's is (populated, transparent huge
// pages when the kernel gives them), and ReadLines performs exactly those reads and nothing else,
// in the fastest way this machine has: with a software prefetch `distance` lines ahead, the
// distance of kFloorDistances that read random lines fastest when the memory was allocated. The
// best distance depends on the machine (32 read 10.3 ns per line where 4 read 8.3 on the Zen 4 VM
// of issue #11), so a fixed one would be a ceiling, not a floor.
#ifndef BLOOMERY_BENCHMARKS_MEASURE_MEMORY_FLOOR_H_
#define BLOOMERY_BENCHMARKS_MEASURE_MEMORY_FLOOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "absl/status/statusor.h"
#include "bloomery/blocked_filter.h"

namespace bloomery::measure {

// Prefetch distances the floor is swept over (0: none; only the out-of-order window overlaps the
// misses).
inline constexpr size_t kFloorDistances[] = {0, 2, 4, 8, 16, 32, 64};

class FloorMemory {
 public:
  // Allocates and faults in `bytes`, then times ReadLinesAt over 256 Ki random lines at each of
  // kFloorDistances (best of three, well under a second) and keeps the fastest for ReadLines.
  // Errors: those of allocating `bytes` (ResourceExhausted).
  [[nodiscard]] static absl::StatusOr<FloorMemory> Allocate(uint64_t bytes);
  FloorMemory(FloorMemory&&) noexcept;
  FloorMemory& operator=(FloorMemory&&) noexcept;
  ~FloorMemory();

  // Reads the first word of every 64-byte line lines[i] (each < lines()), and returns their xor so
  // the reads cannot be optimised away. Line indices come from the caller (e.g. a fastrange of
  // random 64-bit values), so generating them is not part of the floor.
  [[nodiscard]] uint64_t ReadLines(std::span<const uint64_t> lines) const noexcept {
    return ReadLinesAt(lines, distance());
  }
  // The same with a prefetch of line lines[i + distance] while line lines[i] is read.
  [[nodiscard]] uint64_t ReadLinesAt(std::span<const uint64_t> lines,
                                     size_t distance) const noexcept;
  // ReadLinesAt, with `rounds` rounds of computation per line besides its read: a xorshift-multiply
  // chain of the line's own that touches no memory, as a lookup hashes and builds its mask. Over
  // memory that fits the cache it costs the work alone; out of cache it says whether this machine
  // overlaps a lookup's work with its prefetched miss or adds the two (BM_FloorWork), which bounds
  // MayContainMany / BM_Floor from below.
  [[nodiscard]] uint64_t ReadLinesWithWork(std::span<const uint64_t> lines, size_t distance,
                                           uint32_t rounds) const noexcept;
  // The prefetch distance ReadLines uses: the fastest of kFloorDistances here.
  [[nodiscard]] size_t distance() const noexcept;

  [[nodiscard]] uint64_t bytes() const noexcept;
  [[nodiscard]] uint64_t lines() const noexcept { return bytes() / 64; }
  // Bytes backed by transparent huge pages: with 4 KiB pages a random line also costs a TLB miss,
  // so the floor and the filter must be compared on the same footing.
  [[nodiscard]] uint64_t huge_page_bytes() const;

 private:
  struct Impl;
  explicit FloorMemory(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Bytes of `filter` backed by transparent huge pages, to compare with the floor's.
[[nodiscard]] uint64_t HugePageBytes(const BlockedFilter& filter);
// Memory below this size cannot get a huge page.
inline constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;

// Size of cpu0's largest unified cache (0 when unknown). Not what "in cache" means: a VM's CPUID
// and sysfs may report the host's whole L3 (508 MiB on the Zen 4 VM of issue #11).
[[nodiscard]] uint64_t LastLevelCacheBytes();
// Size of cpu0's level-2 data or unified cache (0 when unknown), from sysfs, else from CPUID: the
// cache one core has to itself, which a filter that fits is certainly "in cache".
[[nodiscard]] uint64_t L2CacheBytes();

// L2 size assumed when it is unknown: every x86-64 core since 2008 has at least 256 KiB.
inline constexpr uint64_t kAssumedL2Bytes = 256 << 10;
// The floor over memory that fits L2 (half of `l2_bytes`, kAssumedL2Bytes when 0, so the reads'
// own lines stay in): what a random line read costs when it certainly hits the cache, in ns per
// line, the best of `rounds` runs over 4 Mi reads (noise only adds). Errors: FloorMemory's.
[[nodiscard]] absl::StatusOr<double> L2FloorNsPerLine(uint64_t l2_bytes, int rounds);
// Memory larger than L2 counts as in cache when its floor is at most this many times the L2 floor:
// an L3 hit costs a few L2 hits, a DRAM miss many (benchmarks/README.md has the ratios measured).
inline constexpr double kInCacheFloorRatio = 3;

}  // namespace bloomery::measure

#endif  // BLOOMERY_BENCHMARKS_MEASURE_MEMORY_FLOOR_H_
