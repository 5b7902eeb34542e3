// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "memory_floor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/options.h"
#include "timing.h"

namespace bloomery::measure {

struct FloorMemory::Impl {
  // A filter's own memory, so the floor's pages are obtained exactly as a filter's are; none for
  // 0 bytes.
  std::optional<BlockedFilter> memory;
  size_t distance = 8;
};

FloorMemory::FloorMemory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FloorMemory::FloorMemory(FloorMemory&&) noexcept = default;
FloorMemory& FloorMemory::operator=(FloorMemory&&) noexcept = default;
FloorMemory::~FloorMemory() = default;

namespace {

// The fastest of kFloorDistances for reading random lines of `memory`, best of three rounds.
size_t SweepDistance(const FloorMemory& memory) {
  // 256 Ki lines: 16 MiB of misses, far more than the out-of-order window or any prefetch depth.
  const std::vector<uint64_t> lines =
      RandomLines(std::min<uint64_t>(uint64_t{1} << 18, 64 * memory.lines()), memory.lines());
  size_t best = kFloorDistances[0];
  double best_ns = std::numeric_limits<double>::infinity();
  uint64_t sink = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t distance : kFloorDistances) {
      const double ns =
          NsPerItem(lines.size(), [&] { sink ^= memory.ReadLinesAt(lines, distance); });
      if (ns < best_ns) {
        best_ns = ns;
        best = distance;
      }
    }
  }
  // A volatile store keeps the timed reads observable.
  [[maybe_unused]] volatile uint64_t observed = sink;
  return best;
}

}  // namespace

absl::StatusOr<FloorMemory> FloorMemory::Allocate(uint64_t bytes) {
  FloorMemory memory(std::make_unique<Impl>());
  if (bytes == 0) return memory;
  FilterOptions options;
  options.bits = (bytes + 63) / 64 * 512;  // whole lines
  options.hashes = 1;
  // Same huge-page policy (kAuto) as a filter's, faults taken up front.
  options.memory.populate = true;
  absl::StatusOr<BlockedFilter> filter = BlockedFilter::Create(options);
  if (!filter.ok()) return filter.status();
  memory.impl_->memory.emplace(*std::move(filter));
  memory.impl_->distance = SweepDistance(memory);
  return memory;
}

namespace {

// The floor's loop over `base`; with kWork, each line also runs `rounds` rounds of a chain seeded
// by its index, whose result picks the word read (so the work cannot be dropped).
template <bool kWork>
uint64_t ReadLinesOf(const uint64_t* base, std::span<const uint64_t> lines, size_t distance,
                     uint32_t rounds) noexcept {
  const size_t count = lines.size();
  uint64_t acc = 0;
  auto read = [&](size_t i) {
    if constexpr (kWork) {
      uint64_t w = i * 0x9E3779B97F4A7C15ull;
      for (uint32_t r = 0; r < rounds; ++r) {
        w ^= w >> 29;
        w *= 0xBF58476D1CE4E5B9ull;
      }
      acc ^= base[lines[i] * 8 + (w >> 61)];
    } else {
      acc ^= base[lines[i] * 8];
    }
  };
  for (size_t i = 0; i < std::min(distance, count); ++i) {
    __builtin_prefetch(base + lines[i] * 8, 0, 3);
  }
  size_t i = 0;
  for (; i + distance < count; ++i) {
    __builtin_prefetch(base + lines[i + distance] * 8, 0, 3);
    read(i);
  }
  for (; i < count; ++i) read(i);
  return acc;
}

}  // namespace

uint64_t FloorMemory::ReadLinesAt(std::span<const uint64_t> lines, size_t distance) const noexcept {
  const auto* base = reinterpret_cast<const uint64_t*>(impl_->memory->bytes().data());
  return ReadLinesOf<false>(base, lines, distance, 0);
}

uint64_t FloorMemory::ReadLinesWithWork(std::span<const uint64_t> lines, size_t distance,
                                        uint32_t rounds) const noexcept {
  const auto* base = reinterpret_cast<const uint64_t*>(impl_->memory->bytes().data());
  return ReadLinesOf<true>(base, lines, distance, rounds);
}

size_t FloorMemory::distance() const noexcept { return impl_->distance; }

uint64_t FloorMemory::bytes() const noexcept {
  return impl_->memory ? impl_->memory->memory_bytes() : 0;
}

uint64_t FloorMemory::huge_page_bytes() const {
  return impl_->memory ? impl_->memory->huge_page_bytes() : 0;
}

uint64_t HugePageBytes(const BlockedFilter& filter) { return filter.huge_page_bytes(); }

namespace {

// cpu0's caches of `level` (0: any) that hold data, largest first from sysfs; 0 when sysfs has
// none.
uint64_t SysfsCacheBytes(int level) {
  uint64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::FILE* type = std::fopen((dir + "type").c_str(), "re");
    if (type == nullptr) break;
    char kind[32] = {};
    const bool data =
        std::fscanf(type, "%31s", kind) == 1 &&
        (std::string_view(kind) == "Unified" || (level != 0 && std::string_view(kind) == "Data"));
    std::fclose(type);
    int cache_level = 0;
    if (std::FILE* file = std::fopen((dir + "level").c_str(), "re")) {
      if (std::fscanf(file, "%d", &cache_level) != 1) cache_level = 0;
      std::fclose(file);
    }
    std::FILE* size = std::fopen((dir + "size").c_str(), "re");
    if (size == nullptr) continue;
    unsigned long long amount = 0;
    char unit = 0;
    if (data && (level == 0 || cache_level == level) &&
        std::fscanf(size, "%llu%c", &amount, &unit) >= 1) {
      const uint64_t scale = unit == 'K'   ? 1024
                             : unit == 'M' ? 1024 * 1024
                             : unit == 'G' ? 1 << 30
                                           : 1;
      best = std::max<uint64_t>(best, amount * scale);
    }
    std::fclose(size);
  }
  return best;
}

uint64_t SysconfBytes(int name) {
  const long bytes = sysconf(name);
  return bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
}

}  // namespace

// From sysfs: glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reports the whole package's (or host's) L3 on
// some machines, e.g. 256 MiB on a VM whose cpu0 sees 32 MiB.
uint64_t LastLevelCacheBytes() {
  const uint64_t bytes = SysfsCacheBytes(0);
  return bytes != 0 ? bytes : SysconfBytes(_SC_LEVEL3_CACHE_SIZE);
}

uint64_t L2CacheBytes() {
  const uint64_t bytes = SysfsCacheBytes(2);
  return bytes != 0 ? bytes : SysconfBytes(_SC_LEVEL2_CACHE_SIZE);
}

absl::StatusOr<double> L2FloorNsPerLine(uint64_t l2_bytes, int rounds) {
  absl::StatusOr<FloorMemory> memory =
      FloorMemory::Allocate((l2_bytes != 0 ? l2_bytes : kAssumedL2Bytes) / 2);
  if (!memory.ok()) return memory.status();
  const std::vector<uint64_t> lines = RandomLines(size_t{1} << 22, memory->lines());
  double best = std::numeric_limits<double>::infinity();
  uint64_t sink = 0;
  for (int round = 0; round < rounds; ++round) {
    best = std::min(best, NsPerItem(lines.size(), [&] { sink ^= memory->ReadLines(lines); }));
  }
  [[maybe_unused]] volatile uint64_t observed = sink;
  return best;
}

}  // namespace bloomery::measure
