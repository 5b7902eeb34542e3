// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "memory_floor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bloomery/storage.h"

namespace bloomery::measure {

struct FloorMemory::Impl {
  Storage storage;
};

FloorMemory::FloorMemory(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FloorMemory::FloorMemory(FloorMemory&&) noexcept = default;
FloorMemory& FloorMemory::operator=(FloorMemory&&) noexcept = default;
FloorMemory::~FloorMemory() = default;

absl::StatusOr<FloorMemory> FloorMemory::Allocate(uint64_t bytes) {
  StorageOptions options;
  options.populate = true;  // same huge-page policy (kAuto) as a filter's, faults taken up front
  absl::StatusOr<Storage> storage = Storage::Allocate(bytes, options);
  if (!storage.ok()) return storage.status();
  return FloorMemory(std::make_unique<Impl>(Impl{*std::move(storage)}));
}

uint64_t FloorMemory::ReadLines(std::span<const uint64_t> lines) const noexcept {
  // 32 lines per burst: the filter keeps about as many misses in flight, and bursts of 24..64
  // measured the same.
  constexpr size_t kBurst = 32;
  const auto* base = reinterpret_cast<const uint64_t*>(impl_->storage.data());
  uint64_t acc = 0;
  for (size_t start = 0; start < lines.size(); start += kBurst) {
    const size_t n = std::min(kBurst, lines.size() - start);
    for (size_t i = 0; i < n; ++i) __builtin_prefetch(base + lines[start + i] * 8, 0, 3);
    for (size_t i = 0; i < n; ++i) acc ^= base[lines[start + i] * 8];
  }
  return acc;
}

uint64_t FloorMemory::bytes() const noexcept { return impl_->storage.size(); }

uint64_t FloorMemory::huge_page_bytes() const { return impl_->storage.HugePageBytes(); }

uint64_t HugePageBytes(const BlockedFilter& filter) { return filter.storage().HugePageBytes(); }

// From sysfs: glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) reports the whole package's (or host's) L3 on
// some machines, e.g. 256 MiB on a VM whose cpu0 sees 32 MiB.
uint64_t LastLevelCacheBytes() {
  uint64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    std::FILE* type = std::fopen((dir + "type").c_str(), "re");
    if (type == nullptr) break;
    char kind[32] = {};
    const bool unified =
        std::fscanf(type, "%31s", kind) == 1 && std::string_view(kind) == "Unified";
    std::fclose(type);
    std::FILE* size = std::fopen((dir + "size").c_str(), "re");
    if (size == nullptr) continue;
    unsigned long long amount = 0;
    char unit = 0;
    if (unified && std::fscanf(size, "%llu%c", &amount, &unit) >= 1) {
      const uint64_t scale = unit == 'K'   ? 1024
                             : unit == 'M' ? 1024 * 1024
                             : unit == 'G' ? 1 << 30
                                           : 1;
      best = std::max<uint64_t>(best, amount * scale);
    }
    std::fclose(size);
  }
  if (best != 0) return best;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? static_cast<uint64_t>(l3) : 0;
}

}  // namespace bloomery::measure
