// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// file.h: a saved filter file without loading it (InspectFile), and the file's updates by several
// processes (LockForUpdate, InstallSaveCleanupOnSignals). Every kind is saved in one format,
// docs/FORMAT.md; AnyFilter::Load (any_filter.h) loads a file of any kind.
//   absl::StatusOr<bloomery::FileInfo> info = bloomery::InspectFile("urls.bloom");  // ->kind
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

// Validates `path` and describes it; verify_checksums: also the payload's checksums, in bounded
// memory (not for a DIRTY file, whose checksums are stale). Errors: as a kind's Load (NotFound,
// InvalidArgument for a non-bloomery file, Unimplemented for a newer version, DataLoss).
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileInfo> InspectFile(const std::string& path,
                                                                   bool verify_checksums = true);

// The same for a file's bytes (what SaveToBytes returns), with the same verdicts.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileInfo> InspectBytes(std::string_view bytes,
                                                                    bool verify_checksums = true);

// Two processes that each load, insert into and save one file race: the later rename wins and
// drops the other's keys. An advisory lock held around one load-modify-save serialises them:
//   absl::StatusOr<bloomery::FileLock> lock = bloomery::LockForUpdate("seen.bloom");
//   if (!lock.ok()) return lock.status();
//   auto filter = bloomery::BlockedFilter::Load("seen.bloom");   // (or a new one: NotFound)
//   ... insert ...
//   return filter->Save("seen.bloom");                            // then `lock` goes out of scope
// Caveats: an flock(2), binding only processes that call LockForUpdate; one lock covers one
// load-modify-save; a read-write mapping holds it shared for its life, so a process must not map
// read-write a file it holds the lock on. docs/FORMAT.md ("Saving", "Mapping") says more.
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

// Takes the exclusive update lock on the filter file at `path`, released with the FileLock or the
// process. Errors: Unavailable with kFailFast while another holds it ("PATH is locked by pid N",
// or "by another process" where /proc/locks cannot say); FailedPrecondition for a path naming
// anything but a regular file; open and flock errors.
[[nodiscard]] BLOOMERY_EXPORT absl::StatusOr<FileLock> LockForUpdate(
    const std::string& path, LockWait wait = LockWait::kWait);

// Opt-in, for programs that save filters: SIGINT and SIGTERM remove the temp file of every save in
// progress (`.NAME.tmp.PID.*`; the target is untouched), then run the program's own handler, or
// the default action. An ignored signal stays ignored. Call it early, while the process has one
// thread; calling it again does nothing. Errors: Internal if sigaction fails.
[[nodiscard]] BLOOMERY_EXPORT absl::Status InstallSaveCleanupOnSignals();

}  // namespace bloomery

#endif  // BLOOMERY_FILE_H_
