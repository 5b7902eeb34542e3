// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// storage.h: the one owner of a filter's memory.
//
// Storage is a move-only owner of zero-filled memory, aligned to 2 MiB when it is at least that
// large, obtained with an anonymous mmap. With HugePages::kAuto (the default) it asks the kernel for
// transparent huge pages with madvise(MADV_HUGEPAGE): a random probe over a large filter then costs
// one cache miss and almost never a TLB miss. If the kernel refuses (THP disabled, no huge pages
// free), the memory is still valid, on normal 4 KiB pages; HugePageBytes() says what was obtained.
//
// Memory is never copied implicitly. Allocation is the only thing that can fail:
// ResourceExhausted when the size exceeds the caller's cap or the kernel refuses the mapping.
#ifndef BLOOMERY_STORAGE_H_
#define BLOOMERY_STORAGE_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"

namespace bloomery {

enum class HugePages : uint8_t {
  kAuto = 0,   // madvise(MADV_HUGEPAGE) on mappings of 2 MiB or more; fall back silently
  kNever = 1,  // normal pages only
};

struct StorageOptions {
  HugePages huge_pages = HugePages::kAuto;
  // Touch every page now (MAP_POPULATE) instead of on first use: slower creation, no page faults
  // on the hot path later. Benchmarks use it.
  bool populate = false;
  // Refuse sizes above this many bytes (0: no cap besides what the kernel grants).
  uint64_t max_bytes = 0;
};

class Storage {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // `bytes` of zero-filled memory, 64-byte aligned always and 2 MiB aligned when bytes >= 2 MiB.
  // bytes == 0 gives an empty Storage.
  [[nodiscard]] static absl::StatusOr<Storage> Allocate(uint64_t bytes,
                                                        const StorageOptions& options = {});

  Storage() = default;
  Storage(Storage&& other) noexcept;
  Storage& operator=(Storage&& other) noexcept;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  [[nodiscard]] uint8_t* data() const noexcept { return data_; }
  [[nodiscard]] uint64_t size() const noexcept { return size_; }
  // Whether madvise(MADV_HUGEPAGE) was asked for and accepted.
  [[nodiscard]] bool huge_pages_requested() const noexcept { return huge_pages_requested_; }
  // Bytes of this mapping currently backed by transparent huge pages, read from /proc/self/smaps
  // (0 if unavailable). Pages are backed on first touch, so ask after the filter has been filled.
  // Cost: one read of /proc/self/smaps, O(number of mappings in the process).
  [[nodiscard]] uint64_t HugePageBytes() const;

 private:
  Storage(uint8_t* data, uint64_t size, uint64_t mapped, bool huge) noexcept
      : data_(data), size_(size), mapped_(mapped), huge_pages_requested_(huge) {}
  void Release() noexcept;

  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;    // bytes the caller asked for
  uint64_t mapped_ = 0;  // bytes mapped (size_ rounded up to the page size used)
  bool huge_pages_requested_ = false;
};

}  // namespace bloomery

#endif  // BLOOMERY_STORAGE_H_
