// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// format_io.h (internal): the container of format_codec.h as files. Writes a filter crash-safely,
// reads and validates one (from a file or from bytes) and maps one, under the one validator of the
// codec. The POSIX half of the format; lib/format/internal/persistence.h puts every kind on it.
#ifndef BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_IO_H_
#define BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_IO_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/filter.h"
#include "bloomery/filter_kind.h"
#include "bloomery/options.h"
#include "format/internal/format_codec.h"
#include "memory/internal/storage.h"

namespace bloomery::detail {

// Writes `header` and the stages' payloads (payloads[i] must hold WholeLineBytes of stage i's
// bits). With a `path`: to that file crash-safely (temp file in the same directory, fsync, rename,
// fsync of the directory; on failure the previous file at `path` is untouched), returning "".
// Without one: returns the file's bytes, the very bytes a saved file holds.
[[nodiscard]] absl::StatusOr<std::string> WriteFilter(
    const std::string* path, FileHeader header, std::span<const std::span<const uint8_t>> payloads);

// The first payload_offset bytes WriteFilter writes for `header` and `payloads` (the header, the
// stage table and the chunk checksums of the payloads as they are now), validated as a written
// file is (InternalError if a reader would refuse it). WriteFilter's bytes are these followed by
// the payloads: an embedder can send a file image in pieces without a copy of the payload
// (ScalableFilter::SaveHeaderToBytes).
[[nodiscard]] absl::StatusOr<std::string> EncodeFileRegion(
    FileHeader header, std::span<const std::span<const uint8_t>> payloads);

// The file a save to `path` replaces: `path` with its symlinks followed (a dangling link's target
// is created). FailedPrecondition if that is not a regular file (a device, FIFO, directory...): a
// filter never replaces one.
[[nodiscard]] absl::StatusOr<std::string> ResolveSaveTarget(const std::string& path);

// A read-write mapping's hold on its file (lib/format/file_lock.cc, beside LockForUpdate): a shared
// flock on a duplicate of `fd` for as long as the mapping lives, the lock LockForUpdate takes
// exclusively. So a cooperating updater (bloomery add, remove, merge -o, repair, dedupe --state)
// waits for the mapping to end, or fails with LockWait::kFailFast, instead of renaming a new file
// over it: the mapping would go on writing, and Flush succeeding, to a file no path names. Waits
// while an updater holds the lock. Returns the descriptor that holds it, or -1 when `path` no
// longer names the file `fd` is (an updater saved while this waited: the new file is the one to
// map).
[[nodiscard]] absl::StatusOr<int> LockMapped(int fd, const std::string& path);

// Whether `path` (symlinks followed) names the file open as `fd` now: false when it names nothing
// or another file (one saved, i.e. renamed, over it). Errors: those of fstat on `fd`.
[[nodiscard]] absl::StatusOr<bool> PathNamesFile(const std::string& path, int fd);

// What a filter is read from: the file at `name`, or `bytes` when set (`name` then only labels
// the bytes in error messages).
struct Input {
  std::string name;
  std::optional<std::string_view> bytes;
};

// A filter's file, read or mapped: its validated header and its stages' memory. Loaded, each
// stage's payload is in its own Storage; mapped, the one Storage spans the whole file, data() the
// payload.
struct FilterFile {
  FileHeader header;
  std::vector<Storage> stages;
};

// Reads and validates a file of kind `expected` (unset: of any kind, the header's), opened and its
// header read once; each stage's payload lands in its own Storage (aligned, huge pages per
// `options`). Never allocates more than options.max_bytes.
[[nodiscard]] absl::StatusOr<FilterFile> LoadFilter(const Input& input,
                                                    std::optional<FilterKind> expected,
                                                    const LoadOptions& options);

// Maps a validated file of kind `expected` (one stage), opened and its header read once.
// Read-write mode sets the DIRTY flag (synced) before returning.
[[nodiscard]] absl::StatusOr<FilterFile> MapFilterFile(const std::string& path, FilterKind expected,
                                                       MapMode mode, const LoadOptions& options);

// What a Flush brings up to date in the mapped header besides the checksums and DIRTY: the fields
// of a kind whose state lives in the header (WindowedFilter's clock in its params). Empty: none.
// The amended header is validated as a written one is (InternalError if a reader would refuse it).
using HeaderAmend = std::function<void(FileHeader& header)>;

// Flush for a filter's memory: FailedPrecondition unless it is a read-write mapping.
[[nodiscard]] absl::Status FlushStorage(const FilterMemory& memory,
                                        const HeaderAmend& amend = nullptr);

// For a read-write mapping: apply `amend`, recompute the checksums, clear DIRTY, msync.
// FailedPrecondition, changing nothing, when the path it was mapped from no longer names its file
// (a save renamed another file over it): its inserts are then in a file no path names.
[[nodiscard]] absl::Status FlushMappedFile(const Storage& mapping,
                                           const HeaderAmend& amend = nullptr);

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_IO_H_
