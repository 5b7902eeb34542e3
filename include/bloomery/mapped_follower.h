// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// mapped_follower.h: one writer, many mapped readers. MappedFollower<Kind> maps a saved filter
// read-only and follows the file at its path as a writer replaces it (Save's rename): Refresh()
// stats the path and, only when it names another file, maps and verifies that one and swaps it in.
// A mapping holds its file, not the path, so a reader never sees a torn file: a lookup answers
// from the filter current() gave it (kept mapped while held), and a replacement is seen by the
// first Refresh() after the rename. Caveats: a file written in place (a read-write Map, `cp`) is
// not followed, and truncating a mapped file is SIGBUS. A new file that does not map is refused
// (Refresh returns Map's error, the old mapping stays); one refused for its content (DataLoss,
// InvalidArgument, Unimplemented, FailedPrecondition) is not mapped again until the path names
// another file. Thread safety: every member may be called from any number of threads at once.
// Guide and costs: docs/CPP.md, "One writer, many mapped readers".
//
//   auto seen = bloomery::MappedFollower<bloomery::BlockedFilter>::Open("seen.bloom");
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

// Which file a path names (device, inode) and what a write in place changes (size, mtime).
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t modified_ns = 0;  // st_mtim, in ns since the epoch

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

// One stat(2) of `path` (symlinks followed). Errors: NotFound, PermissionDenied and the other
// stat errors; FailedPrecondition for anything but a regular file.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileStamp> StampFile(const std::string& path);

// Movable, not copyable; moving one while another thread uses it is a race.
template <MappableFilter Kind>
class MappedFollower {
 public:
  // Kind::Map(path, kReadOnly, options); Refresh maps with `options` too. StampFile's and Map's
  // errors.
  [[nodiscard]] static absl::StatusOr<MappedFollower> Open(std::string path,
                                                           const LoadOptions& options = {});

  // The filter mapped now, kept mapped while the pointer lives: take it once per batch.
  [[nodiscard]] std::shared_ptr<const Kind> current() const noexcept {
    std::shared_ptr<const Mapping> held = Held();
    const Kind* filter = &held->filter;
    return std::shared_ptr<const Kind>(std::move(held), filter);  // sharing the Mapping's count
  }

  // True when it swapped a new file in; false when the path names the mapped file. On an error
  // (StampFile's, Map's) current() keeps returning the mapping held.
  [[nodiscard]] absl::StatusOr<bool> Refresh() {
    absl::StatusOr<FileStamp> now = StampFile(state_->path);
    if (!now.ok()) return now.status();
    // Stamped before Map opens the file: a replacement between the two is mapped by the next call.
    if (Held()->stamp == *now) return false;
    return Swap(*now);
  }

  [[nodiscard]] const std::string& path() const noexcept { return state_->path; }
  [[nodiscard]] FileStamp stamp() const noexcept { return Held()->stamp; }  // the mapped file's
  // How many times Refresh swapped a new file in since Open.
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
  // Standard mutexes, which ThreadSanitizer sees in programs linked to an uninstrumented Abseil.
  struct State {
    std::string path;
    LoadOptions options;
    std::mutex swap_mutex;           // one Map at a time; never taken when nothing changed
    std::optional<Refused> refused;  // guarded by swap_mutex
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
    // The old mapping ends here, outside the lock, or with the last lookup holding it.
    return true;
  }

  // Verdicts on a file's content, which mapping it again cannot change.
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
