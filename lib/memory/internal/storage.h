// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// storage.h (internal): the one owner of a filter's memory.
//
// Storage is a move-only owner of zero-filled memory, aligned to 2 MiB when it is at least that
// large, obtained with an anonymous mmap; or from the embedder's MemoryAllocator (options.h) when
// one is given, then 64-byte aligned, huge pages asked for its 2 MiB-aligned interior, and zeroed
// here unless the allocator says it comes zeroed. With HugePages::kAuto (the default) it asks the
// kernel for transparent huge pages with madvise(MADV_HUGEPAGE): a random probe over a large filter
// then costs one cache miss and almost never a TLB miss. If the kernel refuses (THP disabled, no
// huge pages free), the memory is still valid, on normal 4 KiB pages; HugePageBytes() says what was
// obtained.
// Filters hold it through the opaque FilterMemory (filter.h), which users see; how the memory was
// obtained (an fd, the mapping's base) stays here.
//
// Memory is never copied implicitly. Allocation is the only thing that can fail:
// ResourceExhausted when the size exceeds the caller's cap (or, with none, this machine's memory:
// the mapping is MAP_NORESERVE, so the kernel alone would grant far more than it can back) or the
// kernel (or the embedder's allocator) refuses the memory.
#ifndef BLOOMERY_LIB_MEMORY_INTERNAL_STORAGE_H_
#define BLOOMERY_LIB_MEMORY_INTERNAL_STORAGE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "bloomery/filter.h"
#include "bloomery/options.h"

namespace bloomery::detail {

// `x` rounded up to a multiple of `unit` (> 0); the caller keeps x + unit below 2^64.
[[nodiscard]] constexpr uint64_t RoundUp(uint64_t x, uint64_t unit) noexcept {
  return (x + unit - 1) / unit * unit;
}

struct StorageOptions {
  HugePages huge_pages = HugePages::kAuto;
  // Fault every page in now (MADV_POPULATE_WRITE, or a write per page), the mapping's or an
  // allocator's block alike, instead of on first use: slower creation, no page faults on the hot
  // path later. Benchmarks use it.
  bool populate = false;
  // Refuse sizes above this many bytes (0: this machine's memory: physical memory, or the
  // process's cgroup memory limit when lower). The message names the size, the limit and its
  // source.
  uint64_t max_bytes = 0;
  // The embedder's allocator, used instead of mmap when set.
  MemoryAllocator allocator;
};

class Storage {
 public:
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  // `bytes` of zero-filled memory, 64-byte aligned always and, when mmap'ed, 2 MiB aligned when
  // bytes >= 2 MiB. bytes == 0 gives an empty Storage. ResourceExhausted when an allocator
  // refuses.
  [[nodiscard]] static absl::StatusOr<Storage> Allocate(uint64_t bytes,
                                                        const StorageOptions& options = {});

  // Maps the whole of the open file `fd` (`file_bytes` long); data() is the file's byte
  // `data_offset` (a multiple of the page size) and size() is `data_bytes`. `shared_write`: a
  // MAP_SHARED writable mapping whose writes reach the file; otherwise MAP_PRIVATE copy-on-write.
  // The fd may be closed afterwards.
  [[nodiscard]] static absl::StatusOr<Storage> MapFile(int fd, uint64_t file_bytes,
                                                       uint64_t data_offset, uint64_t data_bytes,
                                                       bool shared_write);

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
  // (0 if unavailable; for an allocator's block, the smaps figure of the mappings it lies in, at
  // most its size). Pages are backed on first touch, so ask after the filter has been filled.
  // Cost: one read of /proc/self/smaps, O(number of mappings in the process).
  [[nodiscard]] uint64_t HugePageBytes() const;

  // For file mappings: the start of the whole mapping (the file's byte 0) and its length.
  [[nodiscard]] uint8_t* mapping_base() const noexcept { return base_; }
  [[nodiscard]] uint64_t mapping_size() const noexcept { return mapped_; }
  [[nodiscard]] bool file_shared() const noexcept { return file_shared_; }
  [[nodiscard]] bool from_file() const noexcept { return from_file_; }
  // The allocator whose block this is (unset: mmap'ed).
  [[nodiscard]] const MemoryAllocator& allocator() const noexcept { return allocator_; }
  // msync(MS_SYNC) of the whole mapping; a no-op for anonymous memory.
  [[nodiscard]] absl::Status Sync() const;
  // What runs just before a shared writable file mapping is unmapped (the format layer's
  // CloseMappedFile: it marks the file clean when nothing was written since the last Flush).
  // Must not throw; errors leave the file as it is.
  using CloseHook = void (*)(const Storage& mapping) noexcept;
  void set_close_hook(CloseHook hook) noexcept { close_hook_ = hook; }
  // A descriptor the mapping owns and closes after it is unmapped (and its close hook ran): the
  // one holding a read-write mapping's shared flock (file_lock.cc, LockMapped), and the path
  // that named the file when it was mapped (absolute), which Flush checks still does.
  void set_file_lock(int fd, std::string path) noexcept {
    lock_fd_ = fd;
    path_ = std::move(path);
  }
  [[nodiscard]] int lock_fd() const noexcept { return lock_fd_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

 private:
  Storage(uint8_t* base, uint64_t mapped, uint8_t* data, uint64_t size, bool huge, bool from_file,
          bool file_shared, MemoryAllocator allocator = {}) noexcept
      : base_(base),
        data_(data),
        size_(size),
        mapped_(mapped),
        huge_pages_requested_(huge),
        from_file_(from_file),
        file_shared_(file_shared),
        allocator_(allocator) {}
  static absl::StatusOr<Storage> AllocateFrom(uint64_t bytes, const StorageOptions& options);
  void Release() noexcept;

  uint8_t* base_ = nullptr;  // what munmap (or allocator_.release) releases
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;    // bytes the caller asked for
  uint64_t mapped_ = 0;  // bytes mapped from base_
  bool huge_pages_requested_ = false;
  bool from_file_ = false;
  bool file_shared_ = false;
  MemoryAllocator allocator_;  // set: base_ is its block, of mapped_ bytes
  CloseHook close_hook_ = nullptr;
  int lock_fd_ = -1;
  std::string path_;
};

// `bytes` of zeroed memory for a new filter, owned by the FilterMemory returned.
[[nodiscard]] absl::StatusOr<FilterMemory> AllocateFilterMemory(uint64_t bytes,
                                                                const StorageOptions& options);
// The same for a filter created with `memory` (its huge pages, populate and cap).
[[nodiscard]] absl::StatusOr<FilterMemory> AllocateFilterMemory(uint64_t bytes,
                                                                const MemoryOptions& memory);

// Memory for an object a filter keeps beside its bits (its memory's owner, a scalable chain's
// table and stages): from `allocator` when one is set, so that an embedder that counts its
// allocator's blocks (the Redis module: used_memory, maxmemory) counts these too. Where there is
// none, or it refuses (an object of a few hundred bytes, beside the bits it just gave), from
// operator new, and `allocator` is reset to say so. Throws std::bad_alloc as operator new does.
[[nodiscard]] void* AllocateKept(MemoryAllocator& allocator, size_t bytes);
void ReleaseKept(const MemoryAllocator& allocator, void* block, size_t bytes) noexcept;

// Owns a T made by MakeKept; T has a member `MemoryAllocator kept_allocator` naming where its
// block came from (the deleter holds no state, so a table of these stays one pointer a slot).
template <typename T>
struct KeptDelete {
  void operator()(T* object) const noexcept {
    const MemoryAllocator allocator = object->kept_allocator;
    object->~T();
    ReleaseKept(allocator, object, sizeof(T));
  }
};
template <typename T>
using KeptPtr = std::unique_ptr<T, KeptDelete<T>>;

// A T constructed from `args` in `allocator`'s memory (AllocateKept).
template <typename T, typename... Args>
[[nodiscard]] KeptPtr<T> MakeKept(MemoryAllocator allocator, Args&&... args) {
  void* block = AllocateKept(allocator, sizeof(T));
  T* object;
  try {
    object = new (block) T(std::forward<Args>(args)...);
  } catch (...) {
    ReleaseKept(allocator, block, sizeof(T));
    throw;
  }
  object->kept_allocator = allocator;
  return KeptPtr<T>(object);
}

// Hands `storage` to a filter: the FilterMemory owns it from now on, the owner itself kept in the
// storage's allocator (MakeKept).
[[nodiscard]] FilterMemory Own(Storage storage);
// The Storage a FilterMemory owns (an empty one for a default-constructed FilterMemory).
[[nodiscard]] const Storage& StorageOf(const FilterMemory& memory) noexcept;

}  // namespace bloomery::detail

namespace bloomery {
struct FilterMemory::Owner {
  explicit Owner(detail::Storage s) noexcept : storage(std::move(s)) {}

  detail::Storage storage;
  // Where this object's block came from (detail::AllocateKept).
  MemoryAllocator kept_allocator;

  // FilterMemory's std::unique_ptr<Owner> deletes through here: the block goes back to its
  // allocator.
  void operator delete(Owner* owner, std::destroying_delete_t) noexcept {
    detail::KeptDelete<Owner>()(owner);
  }
};
}  // namespace bloomery

#endif  // BLOOMERY_LIB_MEMORY_INTERNAL_STORAGE_H_
