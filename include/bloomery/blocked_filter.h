// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_filter.h: BlockedFilter, the default filter: one 64-byte cache line per key.
//
// A cache-blocked Bloom filter (Putze, Sanders, Singler, "Cache-, Hash- and Space-Efficient Bloom
// Filters", 2007) with pybloom-style partitioning inside the line: the line is split into 8 slices
// of 64 bits (k <= 8) or 16 slices of 32 bits (k <= 16); a key's k probes go to k consecutive
// slices from a hash-chosen start, probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32
// (double hashing, Kirsch & Mitzenmacher 2006, with an odd salt per probe that keeps the probes
// independent; lib/internal/block_layout.h). Insert and lookup touch exactly one cache line, so a
// lookup costs about one memory access even for filters of many GiB; the price is a higher FPR
// than a classic filter at the same bits/key (plan.h computes it exactly and the planner sizes
// for it).
//
// At 10 bits/key the planner picks k = 6 and predicts 0.97%; a classic partitioned filter would
// give 0.82% but needs 6 cache misses per key.
//
// Example:
//   bloomery::FilterOptions opts;
//   opts.capacity = 1'000'000;
//   opts.fpr = 0.01;
//   absl::StatusOr<bloomery::BlockedFilter> f = bloomery::BlockedFilter::Create(opts);
//   if (!f.ok()) return f.status();
//   bool added = f->Insert("https://example.com/a");  // true: the key was new
//   bool maybe = f->MayContain("https://example.com/a");  // true
//
// Thread safety. A filter created with `concurrent = false` (single writer) allows any number of
// concurrent const calls (lookups) but writes (Insert*, Clear, UnionWith, IntersectWith) must not
// overlap with any other call. With `concurrent = true`, Insert*, MayContain* and UnionWith may all
// run at once from any number of threads: inserts use relaxed atomic fetch_or on the 64-bit words
// whose bits are missing, lookups use relaxed atomic loads and never block or write. A lookup that
// overlaps an insert of the same key may answer either way; once Insert returns, every later
// lookup (in any thread that synchronises with it, or simply after it in time) answers true.
// When several threads insert the same new key at once, at least one of them is told it was new
// (each missing bit is set by exactly one fetch_or, and that thread reports "new"); more than one
// may be told so. Clear and IntersectWith are not atomic with respect to concurrent inserts.
//
// Keys: std::string_view (bytes), uint64_t (its 8 little-endian bytes), or a KeyHash (key.h).
// Hot-path calls are noexcept, allocate nothing and cannot fail.
#ifndef BLOOMERY_BLOCKED_FILTER_H_
#define BLOOMERY_BLOCKED_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/blocked_line.h"
#include "bloomery/filter.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {

class BlockedFilter : public BatchForms<BlockedFilter>, public WordArray {
 public:
  using Options = FilterOptions;

  // Creates an empty filter sized by `options` (see options.h).
  // Errors: InvalidArgument for inconsistent or out-of-range options (capacity 0 without bits and
  // hashes, fpr outside (0, 1) or NaN, hashes above 16, bits above 2^48); ResourceExhausted when
  // the memory needed exceeds options.max_memory_bytes (0: this machine's memory) or the kernel
  // refuses it; the message names the size and the limit.
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Create(const FilterOptions& options);

  // Adds a key. Returns true if it was new (at least one of its bits was 0), false if the filter
  // already reported it present (a duplicate, or a false positive with probability ~fpr).
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  using BatchForms::Insert;
  // Inline where the caller is compiled for AVX2 (blocked_line.h says why), else the dispatched
  // kernel. always_inline: the body depends on the caller's target, so no copy may be shared.
  [[gnu::always_inline]] bool Insert(const KeyHash& hash) noexcept {
#ifdef BLOOMERY_INLINE_LINE_PROBE
    if (hashes_ <= 8 && !concurrent_) {
      return blocked_line::Set64(line(blocked_line::LineIndex(hash, blocks_)), hash, hashes_);
    }
#endif
    return InsertOutOfLine(hash);
  }

  // False: the key was certainly never inserted. True: it was, or it is a false positive.
  using BatchForms::MayContain;
  [[nodiscard, gnu::always_inline]] bool MayContain(const KeyHash& hash) const noexcept {
#ifdef BLOOMERY_INLINE_LINE_PROBE
    if (hashes_ <= 8 && !concurrent_) {
      return blocked_line::Test64(line(blocked_line::LineIndex(hash, blocks_)), hash, hashes_);
    }
#endif
    return MayContainOutOfLine(hash);
  }

  // Batch forms (filter.h): InsertMany(keys, was_new) and MayContainMany(keys, results) for a
  // contiguous run of any key type, from BatchForms.

  // this |= other: afterwards this filter contains every key of both. Merging per-worker filters
  // is how a distributed de-duplication combines its state.
  // Errors: FailedPrecondition unless both have the same bits, hashes and seed.
  absl::Status UnionWith(const BlockedFilter& other);
  // this &= other: keeps keys that may be in both (the FPR of the result is at most that of
  // either; a key in both is never lost). Same compatibility rule as UnionWith.
  absl::Status IntersectWith(const BlockedFilter& other);
  // Whether UnionWith/IntersectWith would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const BlockedFilter& other) const;

  // Persistence (docs/FORMAT.md). Save writes the filter to `path` atomically: a temp file in the
  // same directory, fsync, rename over `path`, fsync of the directory; on any failure (disk full,
  // fsync error: ResourceExhausted / DataLoss / PermissionDenied) the old file is left intact.
  // Must not overlap with inserts (single-writer contract; in concurrent mode the bits written are
  // some state between the inserts that overlapped it).
  // Processes that each Load, insert and Save one file race: the last rename wins and the others'
  // keys are lost. Hold LockForUpdate (file.h) around the whole load-modify-save. A symlink is
  // followed (its target is replaced); a path naming a device, FIFO or directory is refused
  // (FailedPrecondition); the file keeps its mode, a new one gets 0666 & ~umask.
  [[nodiscard]] absl::Status Save(const std::string& path) const;
  // Reads a saved blocked filter into fresh memory. Errors: NotFound / PermissionDenied for the
  // file; InvalidArgument if it is not a bloomery file; Unimplemented for a newer format version;
  // FailedPrecondition for another filter kind; ResourceExhausted over options.max_bytes; DataLoss
  // for truncation, checksum mismatch or inconsistent parameters. Never crashes and never allocates
  // beyond options.max_bytes, whatever the file holds.
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Load(const std::string& path,
                                                          const LoadOptions& options = {});
  // In-memory serialization (pickling, a database column, a Redis value): SaveToBytes returns
  // exactly the bytes Save writes to a file; LoadFromBytes reads them (or a file's contents) with
  // the same validator, errors and options.max_bytes cap as Load, copying them into fresh memory.
  [[nodiscard]] absl::StatusOr<std::string> SaveToBytes() const;
  [[nodiscard]] static absl::StatusOr<BlockedFilter> LoadFromBytes(std::string_view bytes,
                                                                   const LoadOptions& options = {});
  // Maps a saved filter without copying it (see MapMode in options.h). The file must stay the same
  // size while mapped (truncating a mapped file kills the process with SIGBUS, as with any mmap).
  // kReadWrite: inserts reach the file; what survives a crash is every bit the kernel wrote back,
  // and the file is marked DIRTY until Flush() (Load then needs allow_dirty). Same errors as Load.
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Map(const std::string& path, MapMode mode,
                                                         const LoadOptions& options = {});
  // For a kReadWrite mapping: recomputes checksums, clears DIRTY and msyncs. FailedPrecondition for
  // a filter that is not a read-write mapping. Not concurrent with inserts.
  [[nodiscard]] absl::Status Flush();

  // Removes every key. O(bytes).
  void Clear() noexcept;

  // Number of bits set. O(bytes).
  [[nodiscard]] uint64_t PopCount() const noexcept;
  // Fraction of bits set. O(bytes).
  [[nodiscard]] double FillRatio() const noexcept;
  // Estimate of the number of distinct keys inserted, from the fill ratio: each key sets k bits,
  // each bit of the array with probability k/m, so n ~ ln(1 - fill) / ln(1 - k/m) (Swamidass &
  // Baldi 2007). Within ~1% of the truth up to capacity. +infinity once every bit is set (the
  // filter is saturated: the count is unknowable); check std::isinf before converting. O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The FPR this filter has now: the exact probability, over a random key absent from the
  // filter, that all its k bits are set, computed from the actual bits (every block, every start
  // slice, each slice's fill). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;

  [[nodiscard]] const Plan& plan() const noexcept { return plan_; }
  [[nodiscard]] uint64_t bits() const noexcept { return blocks_ * kBlockBits; }
  [[nodiscard]] uint64_t blocks() const noexcept { return blocks_; }
  [[nodiscard]] uint32_t hashes() const noexcept { return hashes_; }
  // seed(), concurrent(), memory_bytes(), huge_page_bytes(), mapped() and bytes() (the bits,
  // bytes().size() == bits() / 8) come from WordArray (filter.h).

 protected:
  // Wraps memory that already holds a filter's bits (a loaded ScalableFilter stage); reached from
  // outside the class only through lib/internal/filter_factory.h.
  BlockedFilter(FilterMemory memory, const Plan& plan, uint64_t seed, bool concurrent) noexcept;

 private:
  // Save / SaveToBytes: to the file at *path (returning ""), or the bytes when path is null.
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  // Load / LoadFromBytes: the file at `name`, or *bytes when non-null (`name` labels errors).
  [[nodiscard]] static absl::StatusOr<BlockedFilter> Read(const std::string& name,
                                                          const std::string_view* bytes,
                                                          const LoadOptions& options);

  // The single-key calls through the SIMD kernels, dispatched at run time.
  // (By value: the inline callers then need not spill the hash for the call they rarely make.)
  bool InsertOutOfLine(KeyHash hash) noexcept;
  [[nodiscard]] bool MayContainOutOfLine(KeyHash hash) const noexcept;

  friend class BatchForms<BlockedFilter>;
  // The batch loops, instantiated in blocked_filter.cc for every FilterKey.
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;
  [[nodiscard]] uint64_t* line(uint64_t block) const noexcept { return words_ + block * 8; }

  uint64_t blocks_ = 0;
  uint32_t hashes_ = 0;
  Plan plan_;
};

}  // namespace bloomery

#endif  // BLOOMERY_BLOCKED_FILTER_H_
