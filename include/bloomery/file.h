// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// file.h: what a saved filter file holds, without loading it.
//
// Every filter kind is saved in one format (docs/FORMAT.md). InspectFile validates a file's header
// (always) and its payload checksums (optionally, streaming: memory stays O(1 MiB) whatever the
// file's size) and reports the filter's kind and parameters, so a tool can pick the right loader
// or print what a file is.
//
//   absl::StatusOr<bloomery::FileInfo> info = bloomery::InspectFile("urls.bloom");
//   if (info.ok() && info->kind == bloomery::FilterKind::kBlocked) {
//     auto f = bloomery::BlockedFilter::Load(...);
//   }
//
// bloomery::AnyFilter::Load (any_filter.h) does that for every kind.
#ifndef BLOOMERY_FILE_H_
#define BLOOMERY_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/filter_kind.h"
#include "bloomery/key.h"

namespace bloomery {

struct FileInfo {
  FilterKind kind = FilterKind::kBlocked;
  uint32_t version = 0;     // file format version
  uint64_t file_bytes = 0;  // size of the file
  uint64_t payload_bytes = 0;
  uint64_t bits = 0;    // total over all stages (counting: counters * counter_bits)
  uint32_t hashes = 0;  // k (scalable: of the first stage)
  uint32_t counter_bits = 0;
  uint32_t stages = 0;
  uint64_t capacity = 0;      // planned keys (scalable: of the first stage)
  double fpr = 0;             // planned FPR (scalable: the chain's bound)
  uint64_t insert_count = 0;  // keys counted in (scalable: sum over stages), 0 if not tracked
  uint64_t seed = 0;
  IntegerHash integer_hash = IntegerHash::kXxh3;  // the header's hash_id (key.h)
  bool dirty = false;               // mapped read-write now, or its mapping ended changed (a crash)
  bool checksums_verified = false;  // payload checksums were checked and match
};

// Validates `path` and describes it. verify_checksums: also stream the payload through its
// checksums (skipped for a DIRTY file, whose checksums are stale by definition).
// Errors: as BlockedFilter::Load (NotFound, InvalidArgument for a non-bloomery file,
// Unimplemented for a newer version, DataLoss for corruption).
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileInfo> InspectFile(const std::string& path,
                                                                   bool verify_checksums = true);

// The same for a file's bytes held in memory (what a filter's SaveToBytes returns): the same
// validator, the same verdicts and errors.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileInfo> InspectBytes(std::string_view bytes,
                                                                    bool verify_checksums = true);

// Read-modify-write of a filter file by several processes. Load, insert, Save is a race: two
// processes that load the same file and each save lose one's keys (the later rename wins), and
// both succeed. An advisory lock taken around the whole load-modify-save serialises them:
//
//   absl::StatusOr<bloomery::FileLock> lock = bloomery::LockForUpdate("seen.bloom");
//   if (!lock.ok()) return lock.status();
//   auto filter = bloomery::BlockedFilter::Load("seen.bloom");   // (or a new one: NotFound)
//   ... insert ...
//   return filter->Save("seen.bloom");                            // then `lock` goes out of scope
//
// The lock is an flock(2) on the file the path names (symlinks followed), so it binds only
// cooperating processes that also call LockForUpdate; readers need none (Save is atomic). Save
// replaces the file by rename, so the path then names a new, unlocked file: a waiter that wakes on
// the old one notices and locks the new one, and so always loads what the last holder saved. One
// lock therefore covers ONE load-modify-save: take a new lock for the next. While the file does
// not exist yet its directory is locked instead (other not-yet-existing files of that directory
// wait too). Locks are released when the FileLock is destroyed, or when the process dies. A
// read-write mapping (Map with MapMode::kReadWrite) holds the same lock shared for as long as it
// lives, so an update waits for it (or fails fast) rather than rename a new file over a mapping
// that would go on writing to a file no path names; mapping a file waits for an update in
// progress. (So a process must not map read-write a file it holds the lock on: it would wait
// for itself.)
enum class LockWait : uint8_t {
  kWait,      // block until the holder releases
  kFailFast,  // Unavailable at once if someone holds it
};

class BLOOMERY_EXPORT FileLock {
 public:
  FileLock() = default;
  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // The file locked (the path with its symlinks followed).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] bool held() const noexcept { return fd_ >= 0; }

 private:
  friend absl::StatusOr<FileLock> LockForUpdate(const std::string& path, LockWait wait);
  void Release() noexcept;

  int fd_ = -1;
  std::string path_;
};

// Takes the exclusive update lock on the filter file at `path` (see above). Errors:
// Unavailable with kFailFast when another process (or another FileLock in this one) holds it:
// "PATH is locked by pid N", N read from /proc/locks (Linux; "by another process" where it cannot
// be read); FailedPrecondition if `path` names something other than a regular file; the open and
// flock errors otherwise.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileLock> LockForUpdate(
    const std::string& path, LockWait wait = LockWait::kWait);

// Opt-in, for programs that save filters: SIGINT and SIGTERM first remove the temp file of every
// save in progress (`.NAME.tmp.PID.*` beside the target; the target itself is untouched), then do
// what they did before: run the program's own handler if it had one, else kill the process by the
// signal as the default action would. A signal the program ignores stays ignored. Call it once,
// early (before starting threads); calling it again does nothing. Errors: Internal if sigaction
// fails. (Without it, a later save of the same name removes temp files that dead processes left.)
[[nodiscard]] BLOOMERY_EXPORT absl::Status InstallSaveCleanupOnSignals();

}  // namespace bloomery

#endif  // BLOOMERY_FILE_H_
