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

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bloomery/options.h"
#include "timing.h"

namespace bloomery::measure {

struct FloorMemory::Impl {
  // A filter's own memory, so the floor's pages are obtained exactly as a filter's are; none for
  // 0 bytes.
  std::optional<BlockedFilter> memory;
  FloorStrategy strategy{false, 8};
  // The memory's first word: a filter's bits, owned here and never read as a filter (null for 0
  // bytes, where no line index is valid and nothing is touched).
  uint64_t* base() const {
    if (!memory) return nullptr;
    return const_cast<uint64_t*>(reinterpret_cast<const uint64_t*>(memory->bytes().data()));
  }
};

FloorMemory::FloorMemory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FloorMemory::FloorMemory(FloorMemory&&) noexcept = default;
FloorMemory& FloorMemory::operator=(FloorMemory&&) noexcept = default;
FloorMemory::~FloorMemory() = default;

std::string StrategyName(const FloorStrategy& strategy) {
  if (strategy.batched) return absl::StrCat("batches of ", strategy.depth);
  return strategy.depth == 0 ? std::string("no prefetch")
                             : absl::StrCat("prefetch ", strategy.depth, " ahead");
}

FloorReading MedianReading(std::vector<FloorReading> readings) {
  std::sort(readings.begin(), readings.end(), [](const FloorReading& a, const FloorReading& b) {
    return a.ns_per_line < b.ns_per_line;
  });
  return readings[(readings.size() - 1) / 2];
}

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
  // 256 Ki lines: 16 MiB of misses, far more than the out-of-order window or any prefetch depth.
  const std::vector<uint64_t> lines =
      RandomLines(std::min<uint64_t>(uint64_t{1} << 18, 64 * memory.lines()), memory.lines());
  FloorReading best{std::numeric_limits<double>::infinity(), {}};
  for (int round = 0; round < 3; ++round) {
    const FloorReading reading = memory.Measure(lines, FloorAccess::kRead);
    if (reading.ns_per_line < best.ns_per_line) best = reading;
  }
  memory.impl_->strategy = best.strategy;
  return memory;
}

namespace {

// Touches line `line` of `base`: reads its first word into `acc`, or ors a bit into it. With
// kWork, first `rounds` rounds of a chain seeded by `i`, whose result picks the word read (so the
// work cannot be dropped).
template <FloorAccess kAccess, bool kWork = false>
[[gnu::always_inline]] inline void Touch(uint64_t* base, uint64_t line, size_t i, uint64_t& acc,
                                         uint32_t rounds = 0) noexcept {
  if constexpr (kAccess == FloorAccess::kWrite) {
    base[line * 8] |= uint64_t{1} << (line & 63);
  } else if constexpr (kWork) {
    uint64_t w = i * 0x9E3779B97F4A7C15ull;
    for (uint32_t r = 0; r < rounds; ++r) {
      w ^= w >> 29;
      w *= 0xBF58476D1CE4E5B9ull;
    }
    acc ^= base[line * 8 + (w >> 61)];
  } else {
    acc ^= base[line * 8];
  }
}

template <FloorAccess kAccess>
[[gnu::always_inline]] inline void PrefetchLine(const uint64_t* base, uint64_t line) noexcept {
  __builtin_prefetch(base + line * 8, kAccess == FloorAccess::kWrite ? 1 : 0, 3);
}

// A prefetch `distance` lines ahead of each touch.
template <FloorAccess kAccess, bool kWork = false>
uint64_t TouchAhead(uint64_t* base, std::span<const uint64_t> lines, size_t distance,
                    uint32_t rounds = 0) noexcept {
  const size_t count = lines.size();
  uint64_t acc = 0;
  for (size_t i = 0; i < std::min(distance, count); ++i) PrefetchLine<kAccess>(base, lines[i]);
  size_t i = 0;
  for (; i + distance < count; ++i) {
    PrefetchLine<kAccess>(base, lines[i + distance]);
    Touch<kAccess, kWork>(base, lines[i], i, acc, rounds);
  }
  for (; i < count; ++i) Touch<kAccess, kWork>(base, lines[i], i, acc, rounds);
  return acc;
}

// Batches of `batch` lines: batch b + 1 prefetched whole, then batch b touched.
template <FloorAccess kAccess>
uint64_t TouchInBatches(uint64_t* base, std::span<const uint64_t> lines, size_t batch) noexcept {
  const size_t count = lines.size();
  uint64_t acc = 0;
  for (size_t i = 0; i < std::min(batch, count); ++i) PrefetchLine<kAccess>(base, lines[i]);
  for (size_t first = 0; first < count; first += batch) {
    const size_t end = std::min(first + batch, count);
    for (size_t i = end; i < std::min(end + batch, count); ++i) {
      PrefetchLine<kAccess>(base, lines[i]);
    }
    for (size_t i = first; i < end; ++i) Touch<kAccess>(base, lines[i], i, acc);
  }
  return acc;
}

template <FloorAccess kAccess>
uint64_t TouchWith(uint64_t* base, std::span<const uint64_t> lines,
                   const FloorStrategy& strategy) noexcept {
  return strategy.batched ? TouchInBatches<kAccess>(base, lines, strategy.depth)
                          : TouchAhead<kAccess>(base, lines, strategy.depth);
}

}  // namespace

uint64_t FloorMemory::TouchLines(std::span<const uint64_t> lines, FloorAccess access,
                                 const FloorStrategy& strategy) noexcept {
  uint64_t* base = impl_->base();
  return access == FloorAccess::kWrite ? TouchWith<FloorAccess::kWrite>(base, lines, strategy)
                                       : TouchWith<FloorAccess::kRead>(base, lines, strategy);
}

FloorReading FloorMemory::Measure(std::span<const uint64_t> lines, FloorAccess access) {
  FloorReading best{std::numeric_limits<double>::infinity(), {}};
  uint64_t sink = 0;
  auto time = [&](const FloorStrategy& strategy) {
    const double ns = NsPerItem(lines.size(), [&] { sink ^= TouchLines(lines, access, strategy); });
    if (ns < best.ns_per_line) best = {ns, strategy};
  };
  for (const FloorStrategy& strategy : kFloorSweep) time(strategy);
  // A volatile store keeps the timed reads observable.
  [[maybe_unused]] volatile uint64_t observed = sink;
  return best;
}

uint64_t FloorMemory::ReadLinesWithWork(std::span<const uint64_t> lines, size_t distance,
                                        uint32_t rounds) const noexcept {
  return TouchAhead<FloorAccess::kRead, true>(impl_->base(), lines, distance, rounds);
}

const FloorStrategy& FloorMemory::strategy() const noexcept { return impl_->strategy; }

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
  if (l2_bytes != 0 && (l2_bytes < kMinL2Bytes || l2_bytes > kMaxL2Bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("an L2 cache of ", l2_bytes,
                                                   " bytes is outside what the L2 floor takes (",
                                                   kMinL2Bytes, " to ", kMaxL2Bytes, " bytes)"));
  }
  if (rounds < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the L2 floor needs at least one round, got ", rounds));
  }
  absl::StatusOr<FloorMemory> memory =
      FloorMemory::Allocate((l2_bytes != 0 ? l2_bytes : kAssumedL2Bytes) / 2);
  if (!memory.ok()) return memory.status();
  const std::vector<uint64_t> lines = RandomLines(size_t{1} << 22, memory->lines());
  double best = std::numeric_limits<double>::infinity();
  for (int round = 0; round < rounds; ++round) {
    best = std::min(best, memory->Measure(lines, FloorAccess::kRead).ns_per_line);
  }
  return best;
}

}  // namespace bloomery::measure
