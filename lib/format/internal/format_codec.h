// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// format_codec.h (internal): the one container every filter kind is saved in (docs/FORMAT.md), as
// bytes. Filters describe themselves as a FileHeader plus one payload per stage; this module
// encodes that header, checks every header against hostile input and computes the checksums. One
// validator (Validate) serves the writer and every reader, and one chunk-checksum routine (behind
// HashChunks and VerifyPayload) every writer and verifier. It reads through a ByteSource and
// touches no file: saving, loading and mapping are format_io.h's, and the fuzzers
// (fuzz/load_fuzzer.cc, fuzz/map_fuzzer.cc) reach this codec through both.
#ifndef BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_CODEC_H_
#define BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_CODEC_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bloomery/filter_kind.h"
#include "bloomery/key.h"
#include "bloomery/plan.h"

namespace bloomery::detail {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kFixedHeaderBytes = 256;
inline constexpr uint64_t kStageEntryBytes = 32;
inline constexpr uint64_t kPayloadAlignment = 4096;
inline constexpr uint32_t kDefaultChunkShift = 20;
inline constexpr uint32_t kFlagDirty = 1;
// What the readers hold of a file at a time while they check what they do not keep (the header
// region, a chunk of payload), whatever sizes the file claims.
inline constexpr uint64_t kPieceBytes = uint64_t{1} << 16;

struct StageInfo {
  uint64_t bits = 0;
  uint32_t hashes = 0;
  uint64_t capacity = 0;
  uint64_t insert_count = 0;
  // The entry's u32 at offset 12: 0 unless the kind's row has stage_tags (scalable: the stage's
  // level + 1 where it differs from the stage's index, after a union).
  uint32_t tag = 0;
  friend bool operator==(const StageInfo&, const StageInfo&) = default;
};

// Everything in a file but the payload. The derived fields (payload_offset, payload_bytes,
// header_checksum) are filled in by the validator and by EncodeHeader.
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
  // The blocked layout's file code (layout.h, kBlockLayouts: shape and probe): 0, the line, for
  // every kind without layouts and for every file written before layouts.
  uint32_t layout = 0;
  std::vector<StageInfo> stages;
  uint32_t chunk_shift = kDefaultChunkShift;
  uint64_t payload_offset = 0;
  uint64_t payload_bytes = 0;
  // The header region's checksum: what tells a mapping that the region it maps is the one read.
  uint64_t header_checksum = 0;
};

// A filter kind as the file format sees it: what the kind supplies (its private static
// FileFormat(), beside its persistence in lib/<kind>_filter.cc), which lib/format/kind_table.cc
// puts in the kind's row. The validator applies a header's row, so this codec names no kind and a
// new kind brings its row, not a branch. A kind states only where it differs from the defaults (one
// stage of whole lines of bits, no params, no insert counts).
struct KindFormat {
  // stage_count is in [1, max_stages].
  uint32_t max_stages = 1;
  // The values counter_bits may hold: {0, 0} for a filter of bits.
  std::array<uint32_t, 2> counter_bits = {0, 0};
  // A stage's bits are a whole number of these (0: of the stage's hashes, one slice per hash).
  uint64_t stage_bits_unit = kBlockBits;
  // param0 .. param{params - 1} are the kind's own; the others must be 0.
  uint32_t params = 0;
  // Whether insert_count is kept (per stage, the header holding their sum); when not, every
  // insert_count is 0.
  bool counts_inserts = false;
  // Whether each stage entry's tag (StageInfo::tag) is the kind's to check; when not, it is 0.
  bool stage_tags = false;
  // Whether the header's layout field may name a blocked shape other than the line; a stage's
  // bits are then a whole number of that shape's blocks (in place of stage_bits_unit).
  bool layouts = false;
  // Whether the layout field may also be kPartitionedFileCode (layout.h): stages of the classic
  // partitioned layout, each a whole number of its hashes (one slice per hash).
  bool partitioned_stages = false;
  // The kind's own rules, applied to a header whose every generic rule holds (stage table read):
  // DataLoss unless it is a header the kind's writer could have produced (its planner's geometry,
  // its options). The same rules for InspectFile, Load and Map: one verdict.
  absl::Status (*check)(const FileHeader& header) = nullptr;
};
struct KindRow : KindFormat {
  FilterKind kind;
  std::string_view name;  // what FilterKindName and ParseFilterKind spell
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
  header.seed = hasher.seed();
  header.hash_id = static_cast<uint32_t>(hasher.integers());
}

// A one-stage header's geometry as a Plan of `layout` (for Layout::kLine512, of the blocked shape
// the header's layout field names): DataLoss unless the planner accepts it unchanged (so a loaded
// filter is one Create could have made).
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

// What errors call bytes given to LoadFromBytes / InspectBytes.
inline constexpr std::string_view kBytesName = "in-memory filter bytes";

// Where a header is read from: a file (format_io.h) or memory. Its size is fixed when it is opened;
// reading past what is there is truncation (DataLoss).
class ByteSource {
 public:
  explicit ByteSource(uint64_t size) : size_(size) {}
  virtual ~ByteSource() = default;
  [[nodiscard]] uint64_t size() const { return size_; }
  // Exactly `size` bytes at `offset` into `out`.
  [[nodiscard]] virtual absl::Status Read(uint8_t* out, uint64_t size, uint64_t offset) const = 0;

 private:
  uint64_t size_;
};

// `bytes` as the first bytes of a file of `size` bytes (the writer checks its header region before
// the payload exists; reads past `bytes` are truncation).
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::span<const uint8_t> bytes, uint64_t size) : ByteSource(size), bytes_(bytes) {}
  explicit MemorySource(std::string_view bytes)
      : MemorySource({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, bytes.size()) {
  }
  [[nodiscard]] absl::Status Read(uint8_t* out, uint64_t size, uint64_t offset) const override;

 private:
  std::span<const uint8_t> bytes_;
};

// What a reader asks of a file beyond the format's rules, checked on the fixed header before the
// rest of the header region is read.
struct Expect {
  // FailedPrecondition ("the file holds a counting filter, not a blocked filter") for another.
  std::optional<FilterKind> kind;
  // A load's memory cap on the payload, the memory the filter will hold (CheckMemoryCap,
  // memory_limit.h: 0 is this machine's memory). Unset for a mapping and InspectFile.
  std::optional<uint64_t> max_payload_bytes;
};

// The validator, the one verdict on a header for the writer, InspectFile, every loader and every
// mapping. Reads [0, payload_offset) once, a piece at a time (a header claiming a huge chunk table
// costs time, never memory): the fixed header first, every field in range, in agreement with the
// others, with the source's size and with its kind's row, then `expect`; then the rest of the
// region through both checksums; then the stage table and the kind's rules.
[[nodiscard]] absl::StatusOr<FileHeader> Validate(const ByteSource& source,
                                                  const Expect& expect = {});

// Validate over `bytes`, the first bytes (at least [0, payload_offset)) of a file of `file_size`
// bytes.
[[nodiscard]] absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes,
                                                        uint64_t file_size);

// Whether `file`, a file image from its first byte (a mapping), still holds the header region that
// `header` was validated from.
[[nodiscard]] bool HoldsHeader(std::span<const uint8_t> file, const FileHeader& header) noexcept;

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

// The chunk checksums are XXH3-64 of each 2^chunk_shift-byte chunk of the payload, the stages'
// payloads in order, computed by one routine that takes the payload a piece at a time, whatever
// the pieces' sizes: a stage's memory, or what was read of a file.

// The checksums of the concatenation of `parts`: a file's chunk table.
[[nodiscard]] std::vector<uint64_t> HashChunks(std::span<const std::span<const uint8_t>> parts,
                                               uint32_t chunk_shift);

// The payload in memory (`parts`, the stages in order) against the chunk table of the validated
// header `h` in `source`, read a piece at a time (memory: one piece, whatever the table's size).
[[nodiscard]] absl::Status VerifyPayload(std::span<const std::span<const uint8_t>> parts,
                                         const ByteSource& source, const FileHeader& h);

// The payload in `source` against its chunk table, both read a piece at a time.
[[nodiscard]] absl::Status VerifyStoredPayload(const ByteSource& source, const FileHeader& h);

// The stages' payloads, in order, in the payload at `payload` of a validated `header`.
[[nodiscard]] std::vector<std::span<const uint8_t>> StageSpans(const uint8_t* payload,
                                                               const FileHeader& header);

// Sets the flags of the valid header region `region` ([0, payload_offset)) to `flags` and seals
// its header checksum again; returns that checksum.
uint64_t RewriteFlags(std::span<uint8_t> region, uint32_t flags);

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_FORMAT_INTERNAL_FORMAT_CODEC_H_
