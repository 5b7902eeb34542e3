// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter.h: the vocabulary every filter kind speaks, named so the compiler checks it.
//
// `Filter<F>` is what generic code may rely on for any kind: Create from its options, Insert and
// MayContain for the three key types and their batch forms, UnionWith with CheckCompatible,
// capacity, planned_fpr, EstimatedCount, EstimatedFpr, Health, Clear, Save and Load (to a file or
// to bytes), memory_bytes, seed and concurrent, each with one meaning for every kind.
// `MappableFilter<F>` adds Map and Flush. Caveat: Insert answers a bool or an InsertResult
// (`InsertAnswer<F>` says why).
//
//   template <bloomery::Filter F>
//   size_t CountPresent(const F& filter, std::span<const std::string_view> keys) {
//     return filter.MayContainMany(keys);  // ... or anything else the concept names
//   }
#ifndef BLOOMERY_FILTER_H_
#define BLOOMERY_FILTER_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/health.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {

namespace detail {  // the library's own: not for users
class FilterAccess;
struct FilterFile;
struct KindFormat;
struct ScanTotals;
}  // namespace detail

// The memory a filter's bits live in: its own anonymous pages (huge pages where the kernel grants
// them) or a mapped file (Map), released with the filter. Opaque and move-only.
class BLOOMERY_EXPORT FilterMemory {
 public:
  struct Owner;  // defined by the library

  FilterMemory() noexcept;
  FilterMemory(std::unique_ptr<Owner> owner, uint8_t* data, uint64_t size) noexcept;
  FilterMemory(FilterMemory&& other) noexcept;
  FilterMemory& operator=(FilterMemory&& other) noexcept;
  ~FilterMemory();

  // The first byte, 64-byte aligned (2 MiB aligned for own memory of 2 MiB or more).
  [[nodiscard]] uint8_t* data() const noexcept { return data_; }
  [[nodiscard]] uint64_t* words() const noexcept { return reinterpret_cast<uint64_t*>(data_); }
  [[nodiscard]] uint64_t size() const noexcept { return size_; }
  // Bytes backed by transparent huge pages now (0 if unknown); ask after filling the filter.
  // O(mappings in the process): one read of /proc/self/smaps.
  [[nodiscard]] uint64_t HugePageBytes() const;
  // Whether the bits are a mapped file rather than the filter's own memory.
  [[nodiscard]] bool mapped() const noexcept;
  // The embedder's allocator the memory came from; unset for bloomery's mmap and mapped files.
  [[nodiscard]] MemoryAllocator allocator() const noexcept;
  [[nodiscard]] const Owner* owner() const noexcept { return owner_.get(); }

 private:
  std::unique_ptr<Owner> owner_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// What happened to a key given to an Insert that may refuse it (ScalableFilter).
enum class InsertResult : uint8_t {
  kPresent = 0,  // the filter already reported it present (a duplicate or a false positive)
  kAdded = 1,    // it was new and is now in the filter
  kRefused = 2,  // it was new and was NOT added: the filter is full (see its FullStatus())
};

// Totals of an InsertMany call on such a filter; the remaining keys were kPresent.
struct InsertCounts {
  size_t added = 0;
  size_t refused = 0;
};

// The key types every filter accepts: bytes, an integer, or a KeyHash computed by the caller.
template <typename T>
concept FilterKey =
    std::same_as<T, std::string_view> || std::same_as<T, uint64_t> || std::same_as<T, KeyHash>;

// A contiguous run of keys of one FilterKey type: what the batch forms take.
template <typename R>
concept KeyRange = std::ranges::contiguous_range<const R> && std::ranges::sized_range<const R> &&
    FilterKey<std::remove_cv_t<std::ranges::range_value_t<const R>>>;

// The keys of a KeyRange as the span the filters' batch loops are compiled for.
template <KeyRange R>
[[nodiscard]] std::span<const std::remove_cv_t<std::ranges::range_value_t<const R>>> KeySpan(
    const R& keys) noexcept {
  return {std::ranges::data(keys), std::ranges::size(keys)};
}

// The key forms, written once for every kind (CRTP). Single keys: a string or integer is hashed by
// the filter's hasher() (key.h). Batches (`InsertMany(keys, answers)`, `MayContainMany(keys,
// results)`): the same answers as the single-key calls in order (a key repeated within a batch is
// new only the first time), hashed and prefetched many at a time to hide memory latency: use them
// whenever keys come in groups. A non-empty `answers` / `results` gets one answer per key (the
// first min(keys, answers)). Returns the count of keys new (InsertMany; InsertCounts for kinds
// that may refuse keys) or maybe present (MayContainMany).
template <typename Kind, typename InsertAnswer = bool>
class BatchForms {
 public:
  // always_inline: no out-of-line copy built with one file's instruction-set flags is linked.
  [[gnu::always_inline]] InsertAnswer Insert(std::string_view key) noexcept {
    return self().Insert(self().hasher()(key));
  }
  [[gnu::always_inline]] InsertAnswer Insert(uint64_t key) noexcept {
    return self().Insert(self().hasher()(key));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(std::string_view key) const noexcept {
    return self().MayContain(self().hasher()(key));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(uint64_t key) const noexcept {
    return self().MayContain(self().hasher()(key));
  }

  template <KeyRange Keys>
  auto InsertMany(const Keys& keys, std::span<InsertAnswer> answers = {}) noexcept {
    return self().InsertKeys(KeySpan(keys), answers);
  }
  template <KeyRange Keys>
  size_t MayContainMany(const Keys& keys, std::span<bool> results = {}) const noexcept {
    return self().LookupKeys(KeySpan(keys), results);
  }

 private:
  [[gnu::always_inline]] Kind& self() noexcept { return static_cast<Kind&>(*this); }
  [[gnu::always_inline]] const Kind& self() const noexcept {
    return static_cast<const Kind&>(*this);
  }
};

// Persistence (docs/FORMAT.md), written once for every kind.
// Save writes `path` atomically (temp file, fsync, rename, fsync of the directory); on failure
// (ResourceExhausted, DataLoss, PermissionDenied) the old file is intact. Not concurrent with
// inserts. Processes that each Load, insert and Save one file race (the last rename wins): hold
// LockForUpdate (file.h) around the load-modify-save. A symlink's target is replaced; a device,
// FIFO or directory is refused (FailedPrecondition); a new file gets 0666 & ~umask.
// Load reads a saved filter of this kind into fresh memory. Errors: NotFound / PermissionDenied;
// InvalidArgument (not a bloomery file); Unimplemented (newer format); FailedPrecondition (another
// kind); ResourceExhausted (over options.max_bytes); DataLoss (truncated, bad checksum or
// parameters). Never crashes nor allocates beyond options.max_bytes, whatever the file holds.
// SaveToBytes returns exactly the bytes Save writes; LoadFromBytes reads them as Load does.
template <typename Kind>
class BLOOMERY_EXPORT Persistent {
 public:
  [[nodiscard]] absl::Status Save(const std::string& path) const;
  [[nodiscard]] absl::StatusOr<std::string> SaveToBytes() const;
  [[nodiscard]] static absl::StatusOr<Kind> Load(const std::string& path,
                                                 const LoadOptions& options = {});
  [[nodiscard]] static absl::StatusOr<Kind> LoadFromBytes(std::string_view bytes,
                                                          const LoadOptions& options = {});
};

// Persistent plus zero-copy use of a file (MapMode, options.h). Map: the file must keep its size
// while mapped (truncating it is SIGBUS, as with any mmap). kReadOnly is copy-on-write; kReadWrite
// writes inserts to the file, which is DIRTY while mapped (a second read-write Map needs
// allow_dirty); a crash keeps what the kernel wrote back. Unmapped with nothing written since the
// last Flush, the file is clean again, byte for byte what Save writes. Same errors as Load.
// Flush (kReadWrite only, else FailedPrecondition): checksums and msync, payload then header; the
// file stays DIRTY. FailedPrecondition too if the path now names another file (a Save without
// LockForUpdate renamed over it). Not concurrent with inserts. Ending a mapping reads its payload
// once, as Flush does.
template <typename Kind>
class BLOOMERY_EXPORT Mappable : public Persistent<Kind> {
 public:
  [[nodiscard]] static absl::StatusOr<Kind> Map(const std::string& path, MapMode mode,
                                                const LoadOptions& options = {});
  [[nodiscard]] absl::Status Flush();
};

// What the kinds kept in one array of 64-bit words share: memory, hashing, concurrency. Move-only.
class BLOOMERY_EXPORT WordArray {
 public:
  [[nodiscard]] uint64_t seed() const noexcept { return hasher_.seed(); }
  [[nodiscard]] IntegerHash integer_hash() const noexcept { return hasher_.integers(); }
  [[nodiscard, gnu::always_inline]] const KeyHasher& hasher() const noexcept { return hasher_; }
  [[nodiscard]] bool concurrent() const noexcept { return concurrent_; }
  [[nodiscard]] uint64_t memory_bytes() const noexcept { return memory_.size(); }
  // Bytes backed by transparent huge pages (FilterMemory::HugePageBytes; ask after filling).
  [[nodiscard]] uint64_t huge_page_bytes() const { return memory_.HugePageBytes(); }
  // Whether the words are a mapped file (Map) rather than the filter's own memory.
  [[nodiscard]] bool mapped() const noexcept { return memory_.mapped(); }
  // The embedder's allocator the words came from (MemoryOptions::allocator); unset otherwise.
  [[nodiscard]] MemoryAllocator memory_allocator() const noexcept { return memory_.allocator(); }
  // The words, little-endian, in whole 64-byte lines (padding is 0). Reading them while another
  // thread writes is a data race.
  [[nodiscard]] std::span<const uint8_t> bytes() const noexcept {
    return {memory_.data(), memory_.size()};
  }

 protected:
  WordArray(FilterMemory memory, const KeyHasher& hasher, bool concurrent) noexcept
      : memory_(std::move(memory)),
        words_(memory_.words()),
        hasher_(hasher),
        concurrent_(concurrent) {}

  FilterMemory memory_;
  uint64_t* words_ = nullptr;
  KeyHasher hasher_;
  bool concurrent_ = false;
};

// What BlockedFilter and ClassicFilter (one array of bits laid out by a Plan) share. Move-only.
class BLOOMERY_EXPORT BitArray : public WordArray {
 public:
  [[nodiscard]] const Plan& plan() const noexcept { return plan_; }
  [[nodiscard]] uint64_t bits() const noexcept { return plan_.bits; }
  [[nodiscard]] uint32_t hashes() const noexcept { return plan_.hashes; }
  // Keys planned for (PlannedCapacity, plan.h) and the FPR the plan predicts there.
  [[nodiscard]] uint64_t capacity() const noexcept {
    return PlannedCapacity(plan_.capacity, plan_.bits, plan_.hashes);
  }
  [[nodiscard]] double planned_fpr() const noexcept { return planned_fpr_; }

  // Removes every key. O(bytes).
  void Clear() noexcept;
  // Number of bits set. O(bytes).
  [[nodiscard]] uint64_t PopCount() const noexcept;
  // Fraction of bits set. O(bytes).
  [[nodiscard]] double FillRatio() const noexcept;
  // Distinct keys inserted, estimated from the fill: n ~ ln(1 - fill) / ln(1 - k/m) (Swamidass &
  // Baldi 2007). +infinity once every bit is set: check std::isinf before converting. O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;

 protected:
  BitArray(FilterMemory memory, const Plan& plan, const KeyHasher& hasher, bool concurrent) noexcept
      : WordArray(std::move(memory), hasher, concurrent),
        plan_(plan),
        planned_fpr_(PlannedFpr(plan)) {}
  // The kinds' CheckCompatible and UnionWith: FailedPrecondition unless both have the same bits,
  // hashes and hasher (seed and integer hash); this |= other.
  [[nodiscard]] absl::Status CheckSameBits(const BitArray& other) const;
  [[nodiscard]] absl::Status UniteBits(const BitArray& other);
  [[nodiscard]] uint64_t words() const noexcept { return memory_.size() / 8; }

  Plan plan_;
  double planned_fpr_;  // PlannedFpr(plan_), once
};

// What F::Insert returns: "was it new?" as a bool, or an InsertResult for a kind that may refuse a
// key (ScalableFilter at its limit), where a bool would call a refused key new or present, a lie
// either way.
template <typename F>
using InsertAnswer = decltype(std::declval<F&>().Insert(KeyHash{}));

// The vocabulary of every filter kind. (clang-format 14 cannot lay out `{ e } noexcept -> C;`.)
// clang-format off
template <typename F>
concept Filter =
    std::movable<F> && !std::copy_constructible<F> &&
    (std::same_as<InsertAnswer<F>, bool> || std::same_as<InsertAnswer<F>, InsertResult>) &&
    requires(F& f, const F& cf, std::string_view s, uint64_t u, KeyHash h,
             std::span<const std::string_view> ss, std::span<const uint64_t> us,
             std::span<const KeyHash> hs, std::span<bool> out, std::span<InsertAnswer<F>> answers,
             const std::string& path, const LoadOptions& load) {
      // Sizing: every kind is created from one options struct and sized by the planner.
      typename F::Options;
      { F::Create(std::declval<const typename F::Options&>()) } -> std::same_as<absl::StatusOr<F>>;
      // Single keys.
      { f.Insert(s) } -> std::same_as<InsertAnswer<F>>;
      { f.Insert(u) } -> std::same_as<InsertAnswer<F>>;
      { cf.MayContain(s) } noexcept -> std::same_as<bool>;
      { cf.MayContain(u) } noexcept -> std::same_as<bool>;
      { cf.MayContain(h) } noexcept -> std::same_as<bool>;
      // Batches, for each key type.
      f.InsertMany(ss, answers);
      f.InsertMany(us, answers);
      f.InsertMany(hs, answers);
      { cf.MayContainMany(ss, out) } noexcept -> std::same_as<size_t>;
      { cf.MayContainMany(us, out) } noexcept -> std::same_as<size_t>;
      { cf.MayContainMany(hs, out) } noexcept -> std::same_as<size_t>;
      // Merging.
      { cf.CheckCompatible(cf) } -> std::same_as<absl::Status>;
      { f.UnionWith(cf) } -> std::same_as<absl::Status>;
      // capacity(): keys planned for (scalable: its stages so far; windowed: the window).
      // planned_fpr(): the FPR planned at capacity() keys (scalable: the chain's bound).
      { cf.capacity() } noexcept -> std::same_as<uint64_t>;
      { cf.planned_fpr() } noexcept -> std::same_as<double>;
      { cf.EstimatedCount() } noexcept -> std::same_as<double>;
      { cf.EstimatedFpr() } noexcept -> std::same_as<double>;
      { cf.Health() } -> std::same_as<FilterHealth>;
      { f.Clear() } noexcept;
      { cf.memory_bytes() } noexcept -> std::same_as<uint64_t>;
      { cf.seed() } noexcept -> std::same_as<uint64_t>;
      { cf.integer_hash() } noexcept -> std::same_as<IntegerHash>;
      { cf.concurrent() } noexcept -> std::same_as<bool>;
      // Persistence (docs/FORMAT.md), to a file or to bytes.
      { cf.Save(path) } -> std::same_as<absl::Status>;
      { F::Load(path, load) } -> std::same_as<absl::StatusOr<F>>;
      { cf.SaveToBytes() } -> std::same_as<absl::StatusOr<std::string>>;
      { F::LoadFromBytes(s, load) } -> std::same_as<absl::StatusOr<F>>;
    };
// clang-format on

// A filter stored as one fixed-size array, which can be used in place from a file mapping.
template <typename F>
concept MappableFilter = Filter<F> && requires(F& f, const std::string& path, MapMode mode) {
  { F::Map(path, mode) } -> std::same_as<absl::StatusOr<F>>;
  { f.Flush() } -> std::same_as<absl::Status>;
};

}  // namespace bloomery

#endif  // BLOOMERY_FILTER_H_
