// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "memory/internal/storage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "plan/internal/memory_limit.h"

namespace bloomery {
namespace detail {

namespace {

// Whether memory of `bytes` asks for huge pages: only where a whole one fits.
bool WantsHugePages(const StorageOptions& options, uint64_t bytes) {
  return options.huge_pages == HugePages::kAuto && bytes >= Storage::kHugePageBytes;
}

// Faults the pages of [from, to) in for writing, one byte per page written with the value it
// holds, so nothing changes (an allocator's block is not ours to zero).
void TouchPages(uint8_t* data, uint64_t bytes, uint64_t page) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  for (uintptr_t at = begin; at < begin + bytes; at = at / page * page + page) {
    volatile uint8_t* byte = data + (at - begin);
    *byte = *byte;
  }
}

// The one place both allocation paths (our mapping, an embedder's block) advise and populate.
// [data, data + bytes) may share its first and last pages with other memory (an allocator's
// block lies where the allocator put it), so advice goes only to the whole pages inside it: of
// 2 MiB, MADV_HUGEPAGE, when `huge`; of the base size, MADV_NOHUGEPAGE, for HugePages::kNever
// (with THP in "always" mode the kernel would use huge pages unasked). Then, when `populate`,
// every page is faulted in for writing, after the advice so that each 2 MiB page's first touch
// can get a huge one: MADV_POPULATE_WRITE (Linux 5.14) on the whole pages, which faults them in
// one call, and then one write per page from user mode. The kernel's populate alone is not
// enough under a hypervisor that tracks a guest page's first write itself: on the 2-core CI VM
// the first write to each page after MADV_POPULATE_WRITE cost ~3 us (a trap), 22 ns after the
// touch, and a 2^20-key word64 filter's inserts paid ~30 % for it (docs/DESIGN.md, "Tried and
// rejected").
// Populating 256 MiB there: 45 ms by the madvise alone, 330 ms with the touch, 670 ms by the
// touch alone (a fault per page). Returns whether MADV_HUGEPAGE was accepted.
bool AdviseAndPopulate(uint8_t* data, uint64_t bytes, bool huge, HugePages huge_pages,
                       bool populate) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = begin + bytes;
  const uint64_t unit = huge ? Storage::kHugePageBytes : page;
  const uintptr_t first_unit = RoundUp(begin, unit);
  const uintptr_t last_unit = end / unit * unit;
  bool advised = false;
  if (first_unit < last_unit) {
    uint8_t* interior = data + (first_unit - begin);
    if (huge) advised = madvise(interior, last_unit - first_unit, MADV_HUGEPAGE) == 0;
    if (huge_pages == HugePages::kNever) madvise(interior, last_unit - first_unit, MADV_NOHUGEPAGE);
  }
  if (!populate) return advised;
#ifdef MADV_POPULATE_WRITE
  const uintptr_t first = RoundUp(begin, page);
  const uintptr_t last = end / page * page;
  if (first < last) madvise(data + (first - begin), last - first, MADV_POPULATE_WRITE);
#endif
  TouchPages(data, bytes, page);
  return advised;
}

}  // namespace

absl::StatusOr<Storage> Storage::Allocate(uint64_t bytes, const StorageOptions& options) {
  if (absl::Status s = detail::CheckMemoryCap(bytes, options.max_bytes); !s.ok()) return s;
  if (bytes == 0) return Storage();
  if (options.allocator.set()) return AllocateFrom(bytes, options);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const bool huge = WantsHugePages(options, bytes);
  const uint64_t align = huge ? kHugePageBytes : page;
  const uint64_t mapped = RoundUp(bytes, align);
  // Over-map by one alignment unit, then trim the head and tail so the region starts on a 2 MiB
  // boundary: that is what lets the kernel back it with whole huge pages.
  const uint64_t reserve = huge ? mapped + align : mapped;
  if (reserve < bytes || reserve > (uint64_t{1} << 56)) {
    return absl::ResourceExhaustedError(absl::StrFormat("%d bytes cannot be mapped", bytes));
  }
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  void* raw = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (raw == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of %d bytes failed: %s", reserve, std::strerror(errno)));
  }
  auto* base = static_cast<uint8_t*>(raw);
  uint8_t* aligned = base;
  if (huge) {
    const auto addr = reinterpret_cast<uintptr_t>(base);
    aligned = base + (RoundUp(addr, align) - addr);
    const uint64_t head = static_cast<uint64_t>(aligned - base);
    const uint64_t tail = reserve - head - mapped;
    if (head) munmap(base, head);
    if (tail) munmap(aligned + mapped, tail);
  }
  const bool advised =
      AdviseAndPopulate(aligned, mapped, huge, options.huge_pages, options.populate);
  return Storage(aligned, mapped, aligned, bytes, advised, /*from_file=*/false,
                 /*file_shared=*/false);
}

// The embedder's block lies where its allocator puts it, 64-byte aligned (a filter's line).
absl::StatusOr<Storage> Storage::AllocateFrom(uint64_t bytes, const StorageOptions& options) {
  if (bytes > (uint64_t{1} << 56)) {
    return absl::ResourceExhaustedError(absl::StrFormat("%d bytes cannot be allocated", bytes));
  }
  auto* data = static_cast<uint8_t*>(options.allocator.allocate(bytes, kBlockBytes));
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("the memory allocator refused %d bytes", bytes));
  }
  // An allocator's block that is not zeroed is zeroed here, after the advice (a page touched
  // before it keeps its small pages until khugepaged collapses them, if ever): the memset
  // populates every page as it goes.
  const bool zeroed = options.allocator.zero_filled;
  const bool advised = AdviseAndPopulate(data, bytes, WantsHugePages(options, bytes),
                                         options.huge_pages, options.populate && zeroed);
  if (!zeroed) std::memset(data, 0, bytes);
  return Storage(data, bytes, data, bytes, advised, /*from_file=*/false, /*file_shared=*/false,
                 options.allocator);
}

absl::StatusOr<Storage> Storage::MapFile(int fd, uint64_t file_bytes, uint64_t data_offset,
                                         uint64_t data_bytes, bool shared_write) {
  if (data_offset > file_bytes || data_bytes > file_bytes - data_offset) {
    return absl::InvalidArgumentError("mapped range lies outside the file");
  }
  if (file_bytes == 0) return Storage();
  const int flags = shared_write ? MAP_SHARED : MAP_PRIVATE;
  void* raw = mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, flags, fd, 0);
  if (raw == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of a %d-byte file failed: %s", file_bytes, std::strerror(errno)));
  }
  auto* base = static_cast<uint8_t*>(raw);
  return Storage(base, file_bytes, base + data_offset, data_bytes, false, /*from_file=*/true,
                 shared_write);
}

absl::Status Storage::Sync() const {
  if (!file_shared_ || base_ == nullptr) return absl::OkStatus();
  if (msync(base_, mapped_, MS_SYNC) != 0) {
    return absl::DataLossError(absl::StrFormat("msync failed: %s", std::strerror(errno)));
  }
  return absl::OkStatus();
}

Storage::Storage(Storage&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      huge_pages_requested_(std::exchange(other.huge_pages_requested_, false)),
      from_file_(std::exchange(other.from_file_, false)),
      file_shared_(std::exchange(other.file_shared_, false)),
      allocator_(std::exchange(other.allocator_, {})),
      close_hook_(std::exchange(other.close_hook_, nullptr)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      path_(std::move(other.path_)) {}

Storage& Storage::operator=(Storage&& other) noexcept {
  if (this != &other) {
    Release();
    base_ = std::exchange(other.base_, nullptr);
    file_shared_ = std::exchange(other.file_shared_, false);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    huge_pages_requested_ = std::exchange(other.huge_pages_requested_, false);
    from_file_ = std::exchange(other.from_file_, false);
    allocator_ = std::exchange(other.allocator_, {});
    close_hook_ = std::exchange(other.close_hook_, nullptr);
    lock_fd_ = std::exchange(other.lock_fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

Storage::~Storage() { Release(); }

void Storage::Release() noexcept {
  if (base_ != nullptr && close_hook_ != nullptr) std::exchange(close_hook_, nullptr)(*this);
  if (base_ != nullptr && allocator_.set()) {
    allocator_.release(base_, mapped_);
  } else if (base_ != nullptr) {
    munmap(base_, mapped_);
  }
  allocator_ = {};
  if (lock_fd_ >= 0) close(std::exchange(lock_fd_, -1));
  path_.clear();
  base_ = data_ = nullptr;
  size_ = mapped_ = 0;
}

uint64_t Storage::HugePageBytes() const {
  if (data_ == nullptr) return 0;
  FILE* smaps = std::fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return 0;
  const auto lo = reinterpret_cast<uintptr_t>(base_);
  const uintptr_t hi = lo + mapped_;
  uint64_t total = 0;
  bool inside = false;
  char line[512];
  while (std::fgets(line, sizeof(line), smaps) != nullptr) {
    uintptr_t start = 0;
    uintptr_t end = 0;
    // A mapping's header line is "start-end perms ..."; attribute lines are "Name: value kB", and
    // no attribute name is a hex number followed by '-'.
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &start, &end) == 2) {
      inside = start < hi && end > lo;
      continue;
    }
    unsigned long long kib = 0;
    if (inside && std::sscanf(line, "AnonHugePages: %llu kB", &kib) == 1) total += kib * 1024;
  }
  std::fclose(smaps);
  // An allocator's block may share its mappings with other memory.
  return allocator_.set() ? std::min(total, size_) : total;
}

absl::StatusOr<FilterMemory> AllocateFilterMemory(uint64_t bytes, const StorageOptions& options) {
  absl::StatusOr<Storage> storage = Storage::Allocate(bytes, options);
  if (!storage.ok()) return storage.status();
  return Own(*std::move(storage));
}

absl::StatusOr<FilterMemory> AllocateFilterMemory(uint64_t bytes, const MemoryOptions& memory) {
  return AllocateFilterMemory(bytes, StorageOptions{.huge_pages = memory.huge_pages,
                                                    .populate = memory.populate,
                                                    .max_bytes = memory.max_memory_bytes,
                                                    .allocator = memory.allocator});
}

void* AllocateKept(MemoryAllocator& allocator, size_t bytes) {
  if (allocator.set()) {
    // The allocator's contract is blocks of 64-byte alignment or more.
    if (void* block = allocator.allocate(bytes, kBlockBytes)) return block;
    allocator = MemoryAllocator();
  }
  return ::operator new(bytes);
}

void ReleaseKept(const MemoryAllocator& allocator, void* block, size_t bytes) noexcept {
  if (allocator.set()) {
    allocator.release(block, bytes);
  } else {
    ::operator delete(block);
  }
}

FilterMemory Own(Storage storage) {
  uint8_t* data = storage.data();
  const uint64_t size = storage.size();
  const MemoryAllocator allocator = storage.allocator();
  KeptPtr<FilterMemory::Owner> owner = MakeKept<FilterMemory::Owner>(allocator, std::move(storage));
  return FilterMemory(std::unique_ptr<FilterMemory::Owner>(owner.release()), data, size);
}

const Storage& StorageOf(const FilterMemory& memory) noexcept {
  static const Storage kNone;
  return memory.owner() == nullptr ? kNone : memory.owner()->storage;
}

}  // namespace detail

FilterMemory::FilterMemory() noexcept = default;

FilterMemory::FilterMemory(std::unique_ptr<Owner> owner, uint8_t* data, uint64_t size) noexcept
    : owner_(std::move(owner)), data_(data), size_(size) {}

FilterMemory::FilterMemory(FilterMemory&& other) noexcept
    : owner_(std::move(other.owner_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

FilterMemory& FilterMemory::operator=(FilterMemory&& other) noexcept {
  owner_ = std::move(other.owner_);
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  return *this;
}

FilterMemory::~FilterMemory() = default;

uint64_t FilterMemory::HugePageBytes() const { return detail::StorageOf(*this).HugePageBytes(); }

bool FilterMemory::mapped() const noexcept { return detail::StorageOf(*this).from_file(); }

MemoryAllocator FilterMemory::allocator() const noexcept {
  return detail::StorageOf(*this).allocator();
}

}  // namespace bloomery
