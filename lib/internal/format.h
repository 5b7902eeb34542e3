// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// format.h (internal): the one container every filter kind is saved in (docs/FORMAT.md).
//
// Filters describe themselves as a FileHeader plus one payload per stage; this module writes that
// crash-safely, reads and validates it against hostile input, and maps it. One validator
// (ValidateHeader) serves the writer and every reader.
#ifndef BLOOMERY_LIB_INTERNAL_FORMAT_H_
#define BLOOMERY_LIB_INTERNAL_FORMAT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/filter_kind.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"
#include "internal/storage.h"

namespace bloomery::internal {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kFixedHeaderBytes = 256;
inline constexpr uint64_t kStageEntryBytes = 32;
inline constexpr uint32_t kMaxStages = 64;
inline constexpr uint64_t kPayloadAlignment = 4096;
inline constexpr uint32_t kDefaultChunkShift = 20;
inline constexpr uint32_t kFlagDirty = 1;

struct StageInfo {
  uint64_t bits = 0;
  uint32_t hashes = 0;
  uint64_t capacity = 0;
  uint64_t insert_count = 0;
  friend bool operator==(const StageInfo&, const StageInfo&) = default;
};

// Everything in a file but the payload. The derived fields (payload_offset, payload_bytes,
// chunk_shift) are filled in by ValidateHeader / ComputeLayout.
struct FileHeader {
  FilterKind kind = FilterKind::kBlocked;
  uint32_t flags = 0;
  uint32_t hash_id = 0;
  uint64_t seed = 0;
  uint32_t hashes = 0;
  uint32_t counter_bits = 0;
  uint64_t bits = 0;
  uint64_t capacity = 0;
  double fpr = 0;
  uint64_t insert_count = 0;
  uint64_t param0 = 0;
  uint64_t param1 = 0;
  uint64_t param2 = 0;
  std::vector<StageInfo> stages;
  uint32_t chunk_shift = kDefaultChunkShift;
  uint64_t payload_offset = 0;
  uint64_t payload_bytes = 0;
};

// Bytes of a stage's payload: bits/8 rounded up to a multiple of 64. Filters allocate exactly this
// much, so their memory is their payload.
[[nodiscard]] uint64_t StagePayloadBytes(uint64_t bits);

// The header of a one-stage filter of `kind` with geometry `plan` (counter_bits 0).
[[nodiscard]] FileHeader SingleStageHeader(FilterKind kind, const Plan& plan, uint64_t seed);

// A validated one-stage header's geometry as a Plan of `layout`: DataLoss unless the planner
// accepts it unchanged (so a loaded filter is one Create could have made).
[[nodiscard]] absl::StatusOr<Plan> PlanFromHeader(const FileHeader& header, Layout layout);

// Writes `header` and the stages' payloads (payloads[i] must hold StagePayloadBytes of stage i).
// With a `path`: to that file crash-safely (temp file in the same directory, fsync, rename, fsync
// of the directory; on failure the previous file at `path` is untouched), returning "". Without
// one: returns the file's bytes, the very bytes a saved file holds.
[[nodiscard]] absl::StatusOr<std::string> WriteFilter(
    const std::string* path, FileHeader header, std::span<const std::span<const uint8_t>> payloads);

// The file a save to `path` replaces: `path` with its symlinks followed (a dangling link's target
// is created). FailedPrecondition if that is not a regular file (a device, FIFO, directory...): a
// filter never replaces one.
[[nodiscard]] absl::StatusOr<std::string> ResolveSaveTarget(const std::string& path);

// What a filter is read from: the file at `name`, or `bytes` when set (`name` then only labels
// the bytes in error messages).
struct Input {
  std::string name;
  std::optional<std::string_view> bytes;
};
// What errors call bytes given to LoadFromBytes / InspectBytes.
inline constexpr std::string_view kBytesName = "in-memory filter bytes";

// Reads and validates a file of kind `expected`; each stage's payload lands in its own Storage
// (aligned, huge pages per `options`). Never allocates more than options.max_bytes.
struct LoadedFile {
  FileHeader header;
  std::vector<Storage> stages;
};
[[nodiscard]] absl::StatusOr<LoadedFile> LoadFilter(const Input& input, FilterKind expected,
                                                    const LoadOptions& options);

// Maps a validated file of kind `expected`: the Storage spans the whole file, data() is the
// payload. Read-write mode sets the DIRTY flag (synced) before returning.
struct MappedFile {
  FileHeader header;
  Storage mapping;
};
[[nodiscard]] absl::StatusOr<MappedFile> MapFilterFile(const std::string& path, FilterKind expected,
                                                       MapMode mode, const LoadOptions& options);

// Load and Map for a one-stage filter: `plan_of(header)` turns the validated header into the
// kind's plan (a StatusOr: DataLoss for a geometry the kind would not create), and `make(memory,
// plan, header)` builds the filter (a lambda in a member function can reach a private
// constructor).
template <typename PlanOf, typename Make>
auto LoadSingleStage(const Input& input, FilterKind kind, const LoadOptions& options,
                     PlanOf plan_of, Make make)
    -> absl::StatusOr<decltype(make(FilterMemory(), *plan_of(FileHeader()), FileHeader()))> {
  absl::StatusOr<LoadedFile> file = LoadFilter(input, kind, options);
  if (!file.ok()) return file.status();
  auto plan = plan_of(file->header);
  if (!plan.ok()) return plan.status();
  return make(Own(std::move(file->stages[0])), *plan, file->header);
}
template <typename PlanOf, typename Make>
auto MapSingleStage(const std::string& path, FilterKind kind, MapMode mode,
                    const LoadOptions& options, PlanOf plan_of, Make make)
    -> absl::StatusOr<decltype(make(FilterMemory(), *plan_of(FileHeader()), FileHeader()))> {
  absl::StatusOr<MappedFile> file = MapFilterFile(path, kind, mode, options);
  if (!file.ok()) return file.status();
  auto plan = plan_of(file->header);
  if (!plan.ok()) return plan.status();
  return make(Own(std::move(file->mapping)), *plan, file->header);
}

// plan_of for the layouts of plan.h.
[[nodiscard]] inline auto PlanOfLayout(Layout layout) {
  return [layout](const FileHeader& header) { return PlanFromHeader(header, layout); };
}

// Flush for a filter's memory: FailedPrecondition unless it is a read-write mapping.
[[nodiscard]] absl::Status FlushStorage(const FilterMemory& memory);

// For a read-write mapping: recompute the checksums, clear DIRTY, msync.
[[nodiscard]] absl::Status FlushMappedFile(const Storage& mapping);

// The validator: parses the header region `bytes` (at least the first kFixedHeaderBytes of the
// file; the whole [0, payload_offset) for a full check) of a file of `file_size` bytes.
// With a region shorter than payload_offset only the fixed header is checked (stage table and
// checksum are not).
[[nodiscard]] absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes,
                                                        uint64_t file_size);

// Rewrites the chunk checksums, the checksum table's checksum and the header checksum of a whole
// file image in place, whatever else it holds, where its stage count, chunk size and payload offset
// are in range (returns false otherwise). For fuzzers and tests: it lets mutated files reach the
// validation that sits behind the checksums.
bool RecomputeChecksums(std::span<uint8_t> file);

// Serialises `header` (derived fields computed here) into its header region, checksums filled in
// from `chunk_checksums` (one per payload chunk).
[[nodiscard]] absl::StatusOr<std::vector<uint8_t>> EncodeHeader(
    FileHeader& header, std::span<const uint64_t> chunk_checksums);

}  // namespace bloomery::internal

#endif  // BLOOMERY_LIB_INTERNAL_FORMAT_H_
