// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// memory_floor.h: the physical limit a filter is measured against, shared by bloomery_benchmark
// (BM_Floor, BM_WriteFloor and every row's x_floor) and `bloomery bench`.
//
// A blocked-filter lookup out of cache costs at least one random 64-byte line read, and an insert
// one random line read for ownership and written. FloorMemory holds memory of a filter's size,
// allocated the way a filter's is (populated, transparent huge pages when the kernel gives them),
// and TouchLines performs exactly those reads (FloorAccess::kRead), or a prefetch-for-write and an
// or into the line (kWrite), and nothing else. How many misses a core keeps in flight decides
// their speed, and the best way to keep them there depends on the machine (32 lines ahead read 10.3
// ns per line where 4 read 8.3 on the Zen 4 VM of issue #11; batches may beat both), so the floor
// is not one loop but the best of a sweep (Measure): a software prefetch 0..128 lines ahead, and
// batches of 8..64 lines each prefetched whole while the previous one is touched (the shape of the
// filters' own batch kernels). A single fixed loop would be a ceiling, not a floor: nothing the
// project runs may beat it (issue #39).
#ifndef BLOOMERY_LIB_MEASURE_MEMORY_FLOOR_H_
#define BLOOMERY_LIB_MEASURE_MEMORY_FLOOR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bloomery/blocked_filter.h"

namespace bloomery::measure {

// What a floor does to each line: read its first word (a lookup's least), or prefetch it for
// writing and or a bit into its first word (an insert's least: the line is read for ownership,
// dirtied, and written back when evicted).
enum class FloorAccess { kRead, kWrite };

// One way of keeping misses in flight: a software prefetch `depth` lines ahead of the line touched
// (0: none, only the out-of-order window overlaps the misses), or, `batched`, lines in batches of
// `depth`, every line of batch b + 1 prefetched before batch b is touched.
struct FloorStrategy {
  bool batched = false;
  size_t depth = 0;
  friend bool operator==(const FloorStrategy&, const FloorStrategy&) = default;
};
// The sweep: every distance, then every batch size (kFloorSweep, the one list its users walk).
inline constexpr size_t kFloorDistances[] = {0, 2, 4, 8, 16, 32, 64, 128};
inline constexpr size_t kFloorBatches[] = {8, 16, 32, 64};
inline constexpr auto kFloorSweep = [] {
  std::array<FloorStrategy, std::size(kFloorDistances) + std::size(kFloorBatches)> sweep{};
  size_t i = 0;
  for (size_t distance : kFloorDistances) sweep[i++] = {false, distance};
  for (size_t batch : kFloorBatches) sweep[i++] = {true, batch};
  return sweep;
}();
// "distance 16" or "batches of 32", for reports.
[[nodiscard]] std::string StrategyName(const FloorStrategy& strategy);

// A floor measured: ns per line of the fastest strategy, and which it was.
struct FloorReading {
  double ns_per_line = 0;
  FloorStrategy strategy;
};

// Of repetitions' readings (not empty), the one of median ns per line (the faster of the middle
// two for an even count), with its strategy.
[[nodiscard]] FloorReading MedianReading(std::vector<FloorReading> readings);

class FloorMemory {
 public:
  // Allocates and faults in `bytes`, then measures the read floor over 256 Ki random lines (best
  // of three sweeps, well under a second) and keeps its strategy for ReadLines.
  // Errors: those of allocating `bytes` (ResourceExhausted).
  [[nodiscard]] static absl::StatusOr<FloorMemory> Allocate(uint64_t bytes);
  FloorMemory(FloorMemory&&) noexcept;
  FloorMemory& operator=(FloorMemory&&) noexcept;
  ~FloorMemory();

  // The floor over `lines` (each < lines(); none where lines() is 0): TouchLines with every
  // strategy of the sweep, each over all of `lines`, timed once; the fastest. Call it once per
  // repetition and take the median of the readings: noise only adds, so each reading is the best of
  // its sweep. kWrite changes the memory's bits (nothing reads them).
  [[nodiscard]] FloorReading Measure(std::span<const uint64_t> lines, FloorAccess access);
  // Touches line lines[i] (each < lines()) as `access` says, for every i, keeping misses in flight
  // as `strategy` says; returns the xor of the words read so that no read can be optimised away.
  // Line indices come from the caller (e.g. a fastrange of random 64-bit values), so generating
  // them is not part of the floor.
  uint64_t TouchLines(std::span<const uint64_t> lines, FloorAccess access,
                      const FloorStrategy& strategy) noexcept;
  // Reads with the strategy that read fastest when the memory was allocated (strategy()).
  [[nodiscard]] uint64_t ReadLines(std::span<const uint64_t> lines) noexcept {
    return TouchLines(lines, FloorAccess::kRead, strategy());
  }
  // Reads with a prefetch `distance` lines ahead, with `rounds` rounds of computation per line
  // besides its read: a xorshift-multiply chain of the line's own that touches no memory, as a
  // lookup hashes and builds its mask. Over memory that fits the cache it costs the work alone; out
  // of cache it says whether this machine overlaps a lookup's work with its prefetched miss or adds
  // the two (BM_FloorWork).
  [[nodiscard]] uint64_t ReadLinesWithWork(std::span<const uint64_t> lines, size_t distance,
                                           uint32_t rounds) const noexcept;
  // The strategy that read fastest when allocated; its prefetch distance (or batch size).
  [[nodiscard]] const FloorStrategy& strategy() const noexcept;
  [[nodiscard]] size_t distance() const noexcept { return strategy().depth; }

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
// The L2 sizes the L2 floor takes: at least two lines (its memory, half the L2, must hold a line
// to read), at most 4 GiB (2 GiB of floor memory, far beyond any core's L2).
inline constexpr uint64_t kMinL2Bytes = 128;
inline constexpr uint64_t kMaxL2Bytes = uint64_t{1} << 32;
// The floor over memory that fits L2 (half of `l2_bytes`, kAssumedL2Bytes when 0, so the reads'
// own lines stay in): what a random line read costs when it certainly hits the cache, in ns per
// line, the best of `rounds` (at least 1) sweeps (Measure) over 4 Mi reads (noise only adds).
// Errors: InvalidArgument for an `l2_bytes` outside [kMinL2Bytes, kMaxL2Bytes] (other than 0) or
// `rounds` < 1; FloorMemory's.
[[nodiscard]] absl::StatusOr<double> L2FloorNsPerLine(uint64_t l2_bytes, int rounds);
// Memory larger than L2 counts as in cache when its floor is at most this many times the L2 floor:
// an L3 hit costs a few L2 hits, a DRAM miss many.
inline constexpr double kInCacheFloorRatio = 3;

}  // namespace bloomery::measure

#endif  // BLOOMERY_LIB_MEASURE_MEMORY_FLOOR_H_
