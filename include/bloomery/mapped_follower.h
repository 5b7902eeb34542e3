// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// mapped_follower.h: one writer, many mapped readers. MappedFollower<Kind> maps a saved filter
// read-only and follows the file at its path as a writer replaces it: Refresh() checks, with one
// stat(2), whether the path names another file than the one mapped and, only then, maps and
// validates the new one and swaps it in. docs/CPP.md ("One writer, many mapped readers") is the
// user's guide.
//
// Why it works. Save (filter.h) writes a complete file beside the target, fsyncs it and renames it
// over the target. A mapping holds the file it mapped (its inode), not the path: the old file
// lives on, whole and unchanged, for as long as a mapping of it does, and the path names the new
// file from the rename on. So a reader never sees a torn file: it answers from the old file until
// it swaps, then from the new one, and each answer comes from one whole file.
//
// What a reader sees during a swap. current() hands out a shared_ptr to the filter mapped now. A
// lookup that took it before a swap goes on answering from the old file for as long as it holds
// it (the swap unmaps nothing); one that takes it after the swap answers from the new file. The
// old mapping ends when the last holder lets go, so two files are mapped for as long as a lookup
// from before the swap runs. A lookup never fails: the filter it holds stays mapped.
//
// The bound. A replacement is seen by the first Refresh() that starts after the writer's rename:
// that call maps the new file (one pass over its payload to verify the checksums, as Map does),
// and current() returns it from then on. Calling Refresh() once per request batch bounds how
// stale a reader is by one batch plus one Map.
//
// Cost. Refresh() when nothing changed: the stat(2) of the path and a copy of the shared_ptr under
// a reader lock that is never held across a Map: ~320 ns of CPU on a 2-core VM, the stat's own
// cost. current(): ~16 ns. A swap: one Map, ~0.27 ms of CPU for a filter of 1M keys at 1% (1.2
// MB). benchmarks/mapped_follower_benchmark.cc measures them; docs/CPP.md has the figures.
//
// What it follows. Files replaced by rename: Save, the `bloomery` tool's commands that write a
// file, or any writer that renames a complete file over the path. A file rewritten in place (a
// read-write mapping, `cp` over the path) is not a replacement: a read-only mapping may see its
// pages change, and truncating a mapped file kills the reader with SIGBUS, as with any mmap.
//
// Bad new files. A new file that does not map (corrupt, truncated, another kind, a newer format)
// is refused: Refresh() returns Map's error and the old mapping stays in use. A refused file whose
// fault is its content (DataLoss, InvalidArgument, Unimplemented, FailedPrecondition) is not mapped
// again: later calls return the same error at the cost of the stat, until the path names another
// file. Other errors (the path missing for a moment, out of memory) are retried on each call.
//
// Thread safety: every member may be called from any number of threads at once; concurrent
// Refresh() calls that see the same change map it once.
//
// Example:
//   absl::StatusOr<bloomery::MappedFollower<bloomery::BlockedFilter>> seen =
//       bloomery::MappedFollower<bloomery::BlockedFilter>::Open("seen.bloom");
//   if (!seen.ok()) return seen.status();
//   for (const Batch& batch : requests) {
//     if (absl::StatusOr<bool> swapped = seen->Refresh(); !swapped.ok()) LOG(WARNING) << ...;
//     std::shared_ptr<const bloomery::BlockedFilter> filter = seen->current();
//     for (const auto& key : batch) Answer(key, filter->MayContain(key));
//   }
#ifndef BLOOMERY_MAPPED_FOLLOWER_H_
#define BLOOMERY_MAPPED_FOLLOWER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/options.h"

namespace bloomery {

// Which file a path names, as one stat(2) describes it: the file's identity (device and inode)
// and what changes when it is written in place (size, modification time). A rename over the path
// changes the inode; the old file keeps its inode while anything maps it, so its number cannot be
// taken by the file that replaces it.
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t modified_ns = 0;  // st_mtim, in ns since the epoch

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

// Stamps the file `path` names now (symlinks followed): one stat(2). Errors: NotFound,
// PermissionDenied and the other stat errors (naming the path); FailedPrecondition if `path`
// names something other than a regular file.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileStamp> StampFile(const std::string& path);

// A read-only mapping of the filter file at a path that follows the file as it is replaced (see
// the file comment). Movable, not copyable; moving one while another thread uses it is a race.
template <MappableFilter Kind>
class MappedFollower {
 public:
  // Maps `path` read-only (Kind::Map with MapMode::kReadOnly and `options`, which Refresh uses for
  // every new file too). Errors: those of StampFile and of Map (filter.h).
  [[nodiscard]] static absl::StatusOr<MappedFollower> Open(std::string path,
                                                           const LoadOptions& options = {});

  // The filter mapped now, kept mapped for as long as the returned pointer (or a copy) lives. Take
  // it once per batch of lookups: every lookup through it answers from one file.
  [[nodiscard]] std::shared_ptr<const Kind> current() const noexcept {
    std::shared_ptr<const Mapping> held = Held();
    const Kind* filter = &held->filter;
    return std::shared_ptr<const Kind>(std::move(held), filter);  // sharing the Mapping's count
  }

  // Maps the file the path names now if it is not the one mapped (see the file comment). Returns
  // true when it swapped a new file in, false when the path still names the mapped file (or
  // another thread's Refresh swapped it in first). On an error the mapping held is kept and
  // current() goes on returning it: the errors of StampFile (the path missing, a directory), and
  // of Map for a new file that does not map.
  [[nodiscard]] absl::StatusOr<bool> Refresh() {
    absl::StatusOr<FileStamp> now = StampFile(state_->path);
    if (!now.ok()) return now.status();
    // The stamp is taken before Map opens the file, so the file mapped is never older than its
    // stamp: a replacement between the two makes the next Refresh map again, never miss one.
    if (Held()->stamp == *now) return false;
    return Swap(*now);
  }

  // The path followed, as given to Open.
  [[nodiscard]] const std::string& path() const noexcept { return state_->path; }
  // The stamp of the file mapped now (as StampFile read it before mapping it).
  [[nodiscard]] FileStamp stamp() const noexcept { return Held()->stamp; }
  // How many times Refresh swapped a new file in since Open (0: the file Open mapped).
  [[nodiscard]] uint64_t generation() const noexcept { return Held()->generation; }

 private:
  struct Mapping {
    Kind filter;
    FileStamp stamp;
    uint64_t generation = 0;
  };
  struct Refused {
    FileStamp stamp;
    absl::Status status;
  };
  // (Not std::atomic<std::shared_ptr>: libstdc++ 12's load unlocks with a relaxed store, a data
  // race ThreadSanitizer reports. Standard mutexes rather than absl::Mutex, so that
  // ThreadSanitizer sees them in programs linked to an uninstrumented Abseil.)
  struct State {
    std::string path;
    LoadOptions options;
    std::mutex swap_mutex;           // one Map at a time; never taken when nothing changed
    std::optional<Refused> refused;  // guarded by swap_mutex
    // Held only to copy or replace `current` (taken after swap_mutex).
    mutable std::shared_mutex current_mutex;
    std::shared_ptr<const Mapping> current;  // guarded by current_mutex
  };

  explicit MappedFollower(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}

  std::shared_ptr<const Mapping> Held() const noexcept {
    std::shared_lock lock(state_->current_mutex);
    return state_->current;
  }

  absl::StatusOr<bool> Swap(const FileStamp& now) {
    std::lock_guard lock(state_->swap_mutex);
    std::shared_ptr<const Mapping> held = Held();
    if (held->stamp == now) return false;
    if (state_->refused.has_value() && state_->refused->stamp == now) {
      return state_->refused->status;
    }
    absl::StatusOr<Kind> mapped = Kind::Map(state_->path, MapMode::kReadOnly, state_->options);
    if (!mapped.ok()) {
      if (RefusedForGood(mapped.status())) state_->refused = Refused{now, mapped.status()};
      return mapped.status();
    }
    state_->refused.reset();
    auto next =
        std::make_shared<const Mapping>(Mapping{*std::move(mapped), now, held->generation + 1});
    {
      std::lock_guard swap(state_->current_mutex);
      state_->current.swap(next);
    }
    // `next` and `held` now hold the old mapping: it is unmapped here, outside the lock, when no
    // lookup holds it any more, or later by the last lookup that does.
    return true;
  }

  // Map's verdicts on a file's content, which mapping the same file again cannot change.
  static bool RefusedForGood(const absl::Status& status) noexcept {
    return absl::IsDataLoss(status) || absl::IsInvalidArgument(status) ||
           absl::IsUnimplemented(status) || absl::IsFailedPrecondition(status);
  }

  std::unique_ptr<State> state_;
};

template <MappableFilter Kind>
absl::StatusOr<MappedFollower<Kind>> MappedFollower<Kind>::Open(std::string path,
                                                                const LoadOptions& options) {
  absl::StatusOr<FileStamp> stamp = StampFile(path);
  if (!stamp.ok()) return stamp.status();
  absl::StatusOr<Kind> mapped = Kind::Map(path, MapMode::kReadOnly, options);
  if (!mapped.ok()) return mapped.status();
  auto state = std::make_unique<State>();
  state->path = std::move(path);
  state->options = options;
  {
    std::lock_guard lock(state->current_mutex);
    state->current = std::make_shared<const Mapping>(Mapping{*std::move(mapped), *stamp, 0});
  }
  return MappedFollower(std::move(state));
}

}  // namespace bloomery

#endif  // BLOOMERY_MAPPED_FOLLOWER_H_
