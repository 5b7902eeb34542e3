// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// format.h (internal): the one container every filter kind is saved in (docs/FORMAT.md).
//
// Filters describe themselves as a FileHeader plus one payload per stage; this module writes that
// crash-safely, reads and validates it against hostile input, and maps it. One validator
// (ValidateHeader) serves the writer and every reader.
#ifndef BLOOMERY_LIB_INTERNAL_FORMAT_H_
#define BLOOMERY_LIB_INTERNAL_FORMAT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bloomery/filter.h"
#include "bloomery/filter_kind.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"
#include "internal/storage.h"

namespace bloomery::internal {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kFixedHeaderBytes = 256;
inline constexpr uint64_t kStageEntryBytes = 32;
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

// Everything in a file but the payload. The derived fields (payload_offset, payload_bytes) are
// filled in by the validator and by EncodeHeader.
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
  uint64_t param3 = 0;
  std::vector<StageInfo> stages;
  uint32_t chunk_shift = kDefaultChunkShift;
  uint64_t payload_offset = 0;
  uint64_t payload_bytes = 0;
};

// A filter kind as the file format sees it. Each kind defines its row beside its persistence
// (lib/<kind>_io.cc) and lib/filter_kind.cc lists the rows once; the validator applies a header's
// row, so format.cc names no kind and a new kind adds a row, not a branch.
struct KindRow {
  FilterKind kind;
  std::string_view name;  // what FilterKindName and ParseFilterKind spell
  // stage_count is in [1, max_stages].
  uint32_t max_stages;
  // The values counter_bits may hold: {0, 0} for a filter of bits.
  std::array<uint32_t, 2> counter_bits;
  // A stage's bits are a whole number of these (0: of the stage's hashes, one slice per hash).
  uint64_t stage_bits_unit;
  // param0 .. param{params - 1} are the kind's own; the others must be 0.
  uint32_t params;
  // Whether insert_count is kept (per stage, the header holding their sum); when not, every
  // insert_count is 0.
  bool counts_inserts;
  // The kind's own rules, applied to a header whose every generic rule holds (stage table read):
  // DataLoss unless it is a header the kind's writer could have produced (its planner's geometry,
  // its options). The same rules for InspectFile, Load and Map: one verdict.
  absl::Status (*check)(const FileHeader& header);
};

// The row of `kind`; nullptr for a number no kind has.
[[nodiscard]] const KindRow* FindKindRow(FilterKind kind) noexcept;
// The most stages any kind allows (the stage table's bound).
[[nodiscard]] uint32_t MaxStagesOfAnyKind() noexcept;

// DataLoss "corrupted bloomery file: <what>", the code and words of every check a file fails.
[[nodiscard]] absl::Status Corrupt(absl::string_view what);

// The header of a one-stage filter of `kind` with geometry `plan` (counter_bits 0).
[[nodiscard]] FileHeader SingleStageHeader(FilterKind kind, const Plan& plan,
                                           const KeyHasher& hasher);

// A validated header's key hashing (its seed and hash_id), and the fields that hold it.
[[nodiscard]] inline KeyHasher HasherOf(const FileHeader& header) noexcept {
  return KeyHasher{header.seed, static_cast<IntegerHash>(header.hash_id)};
}
inline void PutHasher(FileHeader& header, const KeyHasher& hasher) noexcept {
  header.seed = hasher.seed;
  header.hash_id = static_cast<uint32_t>(hasher.integers);
}

// A one-stage header's geometry as a Plan of `layout`: DataLoss unless the planner accepts it
// unchanged (so a loaded filter is one Create could have made).
[[nodiscard]] absl::StatusOr<Plan> PlanFromHeader(const FileHeader& header, Layout layout);

// The check of a row whose header is its plan's: DataLoss unless `plan` (the kind's plan of
// `header`) was made and predicts the header's fpr.
[[nodiscard]] absl::Status CheckPlannedFpr(const FileHeader& header, double predicted_fpr);
template <typename KindPlan>
[[nodiscard]] absl::Status CheckPlanned(const absl::StatusOr<KindPlan>& plan,
                                        const FileHeader& header) {
  if (!plan.ok()) return plan.status();
  return CheckPlannedFpr(header, plan->expected_fpr);
}
// The row check of a kind whose geometry is a Plan of `layout`.
template <Layout layout>
[[nodiscard]] absl::Status CheckLayoutHeader(const FileHeader& header) {
  return CheckPlanned(PlanFromHeader(header, layout), header);
}

// Writes `header` and the stages' payloads (payloads[i] must hold WholeLineBytes of stage i's
// bits). With a `path`: to that file crash-safely (temp file in the same directory, fsync, rename,
// fsync of the directory; on failure the previous file at `path` is untouched), returning "".
// Without one: returns the file's bytes, the very bytes a saved file holds.
[[nodiscard]] absl::StatusOr<std::string> WriteFilter(
    const std::string* path, FileHeader header, std::span<const std::span<const uint8_t>> payloads);

// The file a save to `path` replaces: `path` with its symlinks followed (a dangling link's target
// is created). FailedPrecondition if that is not a regular file (a device, FIFO, directory...): a
// filter never replaces one.
[[nodiscard]] absl::StatusOr<std::string> ResolveSaveTarget(const std::string& path);

// A read-write mapping's hold on its file (lib/file_lock.cc, beside LockForUpdate): a shared
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
// What errors call bytes given to LoadFromBytes / InspectBytes.
inline constexpr std::string_view kBytesName = "in-memory filter bytes";

// Reads and validates a file of kind `expected`; each stage's payload lands in its own Storage
// (aligned, huge pages per `options`). Never allocates more than options.max_bytes.
struct LoadedFile {
  FileHeader header;
  std::vector<Storage> stages;
  Storage& storage() { return stages[0]; }  // a one-stage file's
};
[[nodiscard]] absl::StatusOr<LoadedFile> LoadFilter(const Input& input, FilterKind expected,
                                                    const LoadOptions& options);

// Maps a validated file of kind `expected`: the Storage spans the whole file, data() is the
// payload. Read-write mode sets the DIRTY flag (synced) before returning.
struct MappedFile {
  FileHeader header;
  Storage mapping;
  Storage& storage() { return mapping; }
};
[[nodiscard]] absl::StatusOr<MappedFile> MapFilterFile(const std::string& path, FilterKind expected,
                                                       MapMode mode, const LoadOptions& options);

// A one-stage filter from a loaded or mapped file: `plan_of(header)` turns the validated header
// into the kind's plan, `make(memory, plan, hasher)` builds the filter.
template <typename File, typename PlanOf, typename Make>
auto OpenSingleStage(absl::StatusOr<File> file, PlanOf plan_of, Make make)
    -> absl::StatusOr<decltype(make(FilterMemory(), *plan_of(file->header), KeyHasher()))> {
  if (!file.ok()) return file.status();
  auto plan = plan_of(file->header);
  if (!plan.ok()) return plan.status();
  return make(Own(std::move(file->storage())), *plan, HasherOf(file->header));
}

// plan_of for the layouts of plan.h.
[[nodiscard]] inline auto PlanOfLayout(Layout layout) {
  return [layout](const FileHeader& header) { return PlanFromHeader(header, layout); };
}

// Read of a one-stage kind (Mappable, filter.h): `kind` is its FilterKind, `plan_of` as for
// OpenSingleStage, and `finish` a callable run on each filter built around loaded or mapped memory
// (a lambda written at the call site may reach private members). With Persistent's and Mappable's
// members instantiated: the kind defines only Write.
#define BLOOMERY_DEFINE_SINGLE_STAGE_IO(Kind, kind, plan_of, finish)                         \
  absl::StatusOr<Kind> Kind::Read(const std::string& name, const std::string_view* bytes,    \
                                  const LoadOptions& options, std::optional<MapMode> map) {  \
    if (map) {                                                                               \
      return internal::OpenSingleStage(internal::MapFilterFile(name, (kind), *map, options), \
                                       plan_of, BLOOMERY_SINGLE_STAGE_MAKE_(Kind, finish));  \
    }                                                                                        \
    const internal::Input input{name, bytes ? std::optional(*bytes) : std::nullopt};         \
    return internal::OpenSingleStage(internal::LoadFilter(input, (kind), options), plan_of,  \
                                     BLOOMERY_SINGLE_STAGE_MAKE_(Kind, finish));             \
  }                                                                                          \
  template class Persistent<Kind>;                                                           \
  template class Mappable<Kind>;
// All of the persistence of a one-stage kind whose geometry is a Plan of plan.h's `layout` and
// whose members are plan_, hasher_, memory_ and bytes() (BlockedFilter, ClassicFilter).
#define BLOOMERY_DEFINE_LAYOUT_IO(Kind, kind, layout)                                     \
  absl::StatusOr<std::string> Kind::Write(const std::string* path) const {                \
    const std::span<const uint8_t> payload[] = {bytes()};                                 \
    return internal::WriteFilter(path, internal::SingleStageHeader(kind, plan_, hasher_), \
                                 payload);                                                \
  }                                                                                       \
  BLOOMERY_DEFINE_SINGLE_STAGE_IO(Kind, kind, internal::PlanOfLayout(layout), [](Kind&) {})
#define BLOOMERY_SINGLE_STAGE_MAKE_(Kind, finish)                       \
  [&](FilterMemory memory, const auto& plan, const KeyHasher& hasher) { \
    Kind filter(std::move(memory), plan, hasher, options.concurrent);   \
    finish(filter);                                                     \
    return filter;                                                      \
  }

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

// The validator, the one verdict on a header for the writer, InspectFile and every loader: `bytes`
// are the first bytes (at least [0, payload_offset)) of a file of `file_size` bytes. Checks the
// fixed header, both checksums of the header region, the stage table and the kind's row.
[[nodiscard]] absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes,
                                                        uint64_t file_size);

// Rewrites the chunk checksums, the checksum table's checksum and the header checksum of a whole
// file image in place, whatever else it holds, where its stage count, chunk size and payload offset
// are in range (returns false otherwise). For fuzzers and tests: it lets mutated files reach the
// validation that sits behind the checksums.
bool RecomputeChecksums(std::span<uint8_t> file);

// Runs `check(file)`, then `check` on a copy of `file` resealed by RecomputeChecksums where it can
// be: the one loop of the fuzzers, whose mutations must reach past the checksums.
template <typename Check>
void CheckAsIsAndResealed(std::span<const uint8_t> file, Check check) {
  check(file);
  std::vector<uint8_t> sealed(file.begin(), file.end());
  if (RecomputeChecksums(sealed)) check(std::span<const uint8_t>(sealed));
}

// Serialises `header` (derived fields computed here) into its header region, checksums filled in
// from `chunk_checksums` (one per payload chunk).
[[nodiscard]] absl::StatusOr<std::vector<uint8_t>> EncodeHeader(
    FileHeader& header, std::span<const uint64_t> chunk_checksums);

}  // namespace bloomery::internal

namespace bloomery {

// The members of Persistent and Mappable (filter.h), from the kind's Write and Read; each kind's
// _io.cc instantiates them (`template class Persistent<Kind>;`).
template <typename Kind>
absl::Status Persistent<Kind>::Save(const std::string& path) const {
  return static_cast<const Kind&>(*this).Write(&path).status();
}
template <typename Kind>
absl::StatusOr<std::string> Persistent<Kind>::SaveToBytes() const {
  return static_cast<const Kind&>(*this).Write(nullptr);
}
template <typename Kind>
absl::StatusOr<Kind> Persistent<Kind>::Load(const std::string& path, const LoadOptions& options) {
  return Kind::Read(path, nullptr, options);
}
template <typename Kind>
absl::StatusOr<Kind> Persistent<Kind>::LoadFromBytes(std::string_view bytes,
                                                     const LoadOptions& options) {
  return Kind::Read(std::string(internal::kBytesName), &bytes, options);
}
template <typename Kind>
absl::StatusOr<Kind> Mappable<Kind>::Map(const std::string& path, MapMode mode,
                                         const LoadOptions& options) {
  return Kind::Read(path, nullptr, options, mode);
}
template <typename Kind>
absl::Status Mappable<Kind>::Flush() {
  return internal::FlushStorage(static_cast<Kind&>(*this).memory_);
}

}  // namespace bloomery

#endif  // BLOOMERY_LIB_INTERNAL_FORMAT_H_
