// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The container's codec (format/internal/format_codec.h): the header's encoding, the one validator,
// the stage table and the checksums, over bytes from any ByteSource. Nothing here opens, maps or
// writes a file: that is format_io.cc.
#include "format/internal/format_codec.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/plan.h"
#include "memory/internal/storage.h"  // RoundUp
#include "plan/internal/memory_limit.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bloomery::detail {

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupted bloomery file: ", what));
}

namespace {

constexpr char kMagic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};
constexpr uint64_t kHeaderChecksumOffset = 248;
constexpr uint64_t kPayloadChecksumOffset = 240;
constexpr uint64_t kReservedBegin = 132;
constexpr uint32_t kMinChunkShift = 12;
constexpr uint32_t kMaxChunkShift = 30;

// Field offsets in the fixed header (docs/FORMAT.md).
enum Offset : uint64_t {
  kVersion = 8,
  kKind = 12,
  kFlags = 16,
  kHashId = 20,
  kSeed = 24,
  kHashes = 32,
  kCounterBits = 36,
  kBits = 40,
  kCapacity = 48,
  kFpr = 56,
  kInsertCount = 64,
  kStageCount = 72,
  kChunkShift = 76,
  kPayloadOffset = 80,
  kPayloadBytes = 88,
  kParam0 = 96,
  kParam1 = 104,
  kParam2 = 112,
  kParam3 = 120,
  kLayout = 128,
};

// Calls visit(offset, field) for each of the fixed header's fields stored as they are, at the
// field's own width (4 or 8 bytes, little-endian; fpr as its IEEE bits): one list for the reader
// and the writer.
template <typename Header, typename Visit>
void ForEachStoredField(Header& h, const Visit& visit) {
  visit(kFlags, h.flags);
  visit(kHashId, h.hash_id);
  visit(kSeed, h.seed);
  visit(kHashes, h.hashes);
  visit(kCounterBits, h.counter_bits);
  visit(kBits, h.bits);
  visit(kCapacity, h.capacity);
  visit(kFpr, h.fpr);
  visit(kInsertCount, h.insert_count);
  visit(kChunkShift, h.chunk_shift);
  visit(kPayloadOffset, h.payload_offset);
  visit(kPayloadBytes, h.payload_bytes);
  visit(kParam0, h.param0);
  visit(kParam1, h.param1);
  visit(kParam2, h.param2);
  visit(kParam3, h.param3);
  visit(kLayout, h.layout);
}

uint32_t Get32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t Get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void Put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void Put64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

double GetDouble(const uint8_t* p) {
  double v;
  std::memcpy(&v, p, 8);
  return v;
}

// pybloom-live's files (pybloom_live/pybloom.py, 4.0), all little-endian. A BloomFilter: a
// 40-byte header `<dQQQQ` (error_rate, num_slices, bits_per_slice, capacity, count), then its bit
// array's bytes. A ScalableBloomFilter: `<idQd` (scale, ratio, initial_capacity, error_rate), `<l`
// (the number of filters), one `<Q` length per filter, then each filter's BloomFilter file.
// bloomery.BloomFilter.tofile (python/bloomery/pybloom.py) writes that 40-byte header with
// bits_per_slice 0 and a bloomery file after it.
constexpr uint64_t kPybloomHeaderBytes = 40;
constexpr uint64_t kPybloomScalableHeaderBytes = 32;

// What the file whose first bytes are `head` (at most kFixedHeaderBytes of them) and whose size is
// `file_size` is, with the call that opens it, when it is one of the formats above; nullopt for
// anything else. The sizes the headers imply must match the file's, so bytes that merely parse
// are not named.
std::optional<std::string> NameForeignFile(std::span<const uint8_t> head, uint64_t file_size) {
  if (head.size() >= kPybloomHeaderBytes) {
    const double error_rate = GetDouble(head.data());
    const uint64_t slices = Get64(head.data() + 8);
    const uint64_t bits_per_slice = Get64(head.data() + 16);
    const uint64_t capacity = Get64(head.data() + 24);
    const uint64_t count = Get64(head.data() + 32);
    // pybloom-live <= 4.0.0 admitted one key past capacity.
    const bool plausible = error_rate > 0 && error_rate < 1 && slices >= 1 && slices <= 4096 &&
                           capacity >= 1 && count <= capacity + 1;
    if (plausible && bits_per_slice == 0 && head.size() >= kPybloomHeaderBytes + sizeof(kMagic) &&
        std::memcmp(head.data() + kPybloomHeaderBytes, kMagic, sizeof(kMagic)) == 0) {
      return absl::StrFormat(
          "a bloomery.BloomFilter.tofile() file (pybloom-live's 40-byte header: capacity %d, "
          "error rate %g, count %d; then a bloomery file): open it with bloomery.load or "
          "bloomery.BloomFilter.fromfile in Python, or drop the header with "
          "`tail -c +41 FILE > FILE.bloom`",
          capacity, error_rate, count);
    }
    if (plausible && bits_per_slice >= 1 && bits_per_slice <= (uint64_t{1} << 50) &&
        file_size == kPybloomHeaderBytes + (slices * bits_per_slice + 7) / 8) {
      return absl::StrFormat(
          "a pybloom-live file (BloomFilter, capacity %d, error rate %g, count %d, %d slices of "
          "%d bits): open it with bloomery.BloomFilter.fromfile in Python",
          capacity, error_rate, count, slices, bits_per_slice);
    }
  }
  if (head.size() >= kPybloomScalableHeaderBytes) {
    int32_t scale;
    std::memcpy(&scale, head.data(), 4);
    const double ratio = GetDouble(head.data() + 4);
    const uint64_t initial_capacity = Get64(head.data() + 12);
    const double error_rate = GetDouble(head.data() + 20);
    int32_t filters;
    std::memcpy(&filters, head.data() + 28, 4);
    if (!(scale >= 1 && ratio > 0 && ratio < 1 && initial_capacity >= 1 && error_rate > 0 &&
          error_rate < 1 && filters >= 0)) {
      return std::nullopt;
    }
    // The lengths that are in `head` must each hold a BloomFilter file and, when all are, add up
    // to the file's size.
    uint64_t end = kPybloomScalableHeaderBytes + 8 * static_cast<uint64_t>(filters);
    if (end > file_size) return std::nullopt;
    const uint64_t seen =
        std::min<uint64_t>(filters, (head.size() - kPybloomScalableHeaderBytes) / 8);
    for (uint64_t i = 0; i < seen; ++i) {
      const uint64_t length = Get64(head.data() + kPybloomScalableHeaderBytes + 8 * i);
      if (length <= kPybloomHeaderBytes || length > file_size - end) return std::nullopt;
      end += length;
    }
    if (seen == static_cast<uint64_t>(filters) && end != file_size) return std::nullopt;
    return absl::StrFormat(
        "a pybloom-live file (ScalableBloomFilter, initial capacity %d, error rate %g, scale %d, "
        "%d filters): open it with bloomery.ScalableBloomFilter.fromfile in Python",
        initial_capacity, error_rate, scale, filters);
  }
  return std::nullopt;
}

uint64_t ChunkCount(uint64_t payload_bytes, uint32_t chunk_shift) {
  return (payload_bytes >> chunk_shift) +
         ((payload_bytes & ((uint64_t{1} << chunk_shift) - 1)) != 0);
}

// The header region's size for a layout; every term is bounded by the validated fields.
uint64_t HeaderRegionBytes(uint64_t stages, uint64_t chunks) {
  return RoundUp(kFixedHeaderBytes + kStageEntryBytes * stages + 8 * chunks, kPayloadAlignment);
}

uint64_t HeaderChecksum(std::span<const uint8_t> region) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const uint8_t zero[8] = {};
  XXH3_64bits_update(&state, region.data(), kHeaderChecksumOffset);
  XXH3_64bits_update(&state, zero, 8);
  XXH3_64bits_update(&state, region.data() + kHeaderChecksumOffset + 8,
                     region.size() - kHeaderChecksumOffset - 8);
  return XXH3_64bits_digest(&state);
}

// The payload, a piece at a time in order: each call returns the next piece (any size); an empty
// piece is the end.
using PayloadPieces = absl::FunctionRef<absl::StatusOr<std::span<const uint8_t>>()>;

// The one chunk-checksum routine: XXH3-64 of each 2^chunk_shift-byte chunk of the payload that
// `next` hands out (the last chunk may be short), passed to `each(chunk index, checksum)` in order.
// Stops at the first error of either.
absl::Status ForEachChunkSum(uint32_t chunk_shift, PayloadPieces next,
                             absl::FunctionRef<absl::Status(uint64_t, uint64_t)> each) {
  const uint64_t chunk = uint64_t{1} << chunk_shift;
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  uint64_t in_chunk = 0;
  uint64_t index = 0;
  for (;;) {
    absl::StatusOr<std::span<const uint8_t>> piece = next();
    if (!piece.ok()) return piece.status();
    if (piece->empty()) break;
    for (std::span<const uint8_t> rest = *piece; !rest.empty();) {
      const uint64_t take = std::min<uint64_t>(chunk - in_chunk, rest.size());
      XXH3_64bits_update(&state, rest.data(), take);
      in_chunk += take;
      rest = rest.subspan(take);
      if (in_chunk == chunk) {
        if (absl::Status s = each(index++, XXH3_64bits_digest(&state)); !s.ok()) return s;
        XXH3_64bits_reset(&state);
        in_chunk = 0;
      }
    }
  }
  if (in_chunk != 0) return each(index, XXH3_64bits_digest(&state));
  return absl::OkStatus();
}

// `parts`, in order, as PayloadPieces hands them out.
class PiecesOf {
 public:
  explicit PiecesOf(std::span<const std::span<const uint8_t>> parts) : parts_(parts) {}
  absl::StatusOr<std::span<const uint8_t>> operator()() const {
    while (next_ < parts_.size() && parts_[next_].empty()) ++next_;
    return next_ < parts_.size() ? parts_[next_++] : std::span<const uint8_t>();
  }

 private:
  std::span<const std::span<const uint8_t>> parts_;
  mutable size_t next_ = 0;
};

// The payload `next` hands out against the chunk table of the validated header `h` in `source`,
// read a piece at a time (memory: one piece, whatever the table's claimed size).
absl::Status CompareWithChunkTable(const ByteSource& source, const FileHeader& h,
                                   PayloadPieces next) {
  const uint64_t chunks = ChunkCount(h.payload_bytes, h.chunk_shift);
  const uint64_t table = kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  std::vector<uint8_t> want(std::min<uint64_t>(8 * chunks, kPieceBytes));
  uint64_t held_from = 0;  // `want` holds the table's entries [held_from, held_from + held)
  uint64_t held = 0;
  uint64_t compared = 0;
  absl::Status s =
      ForEachChunkSum(h.chunk_shift, next, [&](uint64_t i, uint64_t sum) -> absl::Status {
        if (i >= chunks) return absl::InternalError("payload longer than its chunk table");
        if (i >= held_from + held) {
          held_from = i;
          held = std::min<uint64_t>(want.size() / 8, chunks - i);
          if (absl::Status r = source.Read(want.data(), 8 * held, table + 8 * i); !r.ok()) return r;
        }
        if (sum != Get64(want.data() + 8 * (i - held_from))) {
          return Corrupt(absl::StrFormat("payload checksum mismatch in chunk %d (bytes %d..)", i,
                                         i << h.chunk_shift));
        }
        compared = i + 1;
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (compared != chunks) return absl::InternalError("payload shorter than its chunk table");
  return absl::OkStatus();
}

}  // namespace

std::vector<uint64_t> HashChunks(std::span<const std::span<const uint8_t>> parts,
                                 uint32_t chunk_shift) {
  std::vector<uint64_t> out;
  (void)ForEachChunkSum(chunk_shift, PiecesOf(parts), [&](uint64_t, uint64_t sum) {
    out.push_back(sum);
    return absl::OkStatus();
  });
  return out;
}

absl::Status MemorySource::Read(uint8_t* out, uint64_t size, uint64_t offset) const {
  if (offset > bytes_.size() || size > bytes_.size() - offset) {
    return Corrupt("shorter than its header says (truncated)");
  }
  std::memcpy(out, bytes_.data() + offset, size);
  return absl::OkStatus();
}

absl::Status VerifyPayload(std::span<const std::span<const uint8_t>> parts,
                           const ByteSource& source, const FileHeader& h) {
  return CompareWithChunkTable(source, h, PiecesOf(parts));
}

absl::Status VerifyStoredPayload(const ByteSource& source, const FileHeader& h) {
  std::vector<uint8_t> piece(std::min<uint64_t>(kPieceBytes, h.payload_bytes));
  uint64_t at = 0;
  return CompareWithChunkTable(source, h, [&]() -> absl::StatusOr<std::span<const uint8_t>> {
    const uint64_t n = std::min<uint64_t>(piece.size(), h.payload_bytes - at);
    if (n == 0) return std::span<const uint8_t>();
    if (absl::Status s = source.Read(piece.data(), n, h.payload_offset + at); !s.ok()) return s;
    at += n;
    return std::span<const uint8_t>(piece.data(), n);
  });
}

std::vector<std::span<const uint8_t>> StageSpans(const uint8_t* payload, const FileHeader& header) {
  std::vector<std::span<const uint8_t>> parts;
  for (const StageInfo& stage : header.stages) {
    const uint64_t bytes = WholeLineBytes(stage.bits);
    parts.emplace_back(payload, bytes);
    payload += bytes;
  }
  return parts;
}

FileHeader SingleStageHeader(FilterKind kind, const Plan& plan, const KeyHasher& hasher) {
  FileHeader header;
  header.kind = kind;
  PutHasher(header, hasher);
  header.hashes = plan.hashes;
  header.bits = plan.bits;
  header.capacity = plan.capacity;
  header.fpr = plan.expected_fpr;
  if (FindBlockShape(plan.layout) != nullptr) header.layout = FileCodeOf(plan.layout, plan.probe);
  header.stages.push_back({plan.bits, plan.hashes, plan.capacity, 0});
  return header;
}

absl::StatusOr<Plan> PlanFromHeader(const FileHeader& header, Layout layout) {
  // A blocked kind's shape is the header's layout field (0, the line, in every file written
  // before layouts; the validator has refused unknown codes and codes where the row has none).
  Probe probe = Probe::kLatest;
  if (layout == Layout::kLine512) {
    const BlockLayout& stored = *FindBlockLayoutByFileCode(header.layout);
    layout = stored.layout;
    probe = stored.probe;
  }
  absl::StatusOr<Plan> plan =
      PlanForSize(header.bits, header.hashes, header.capacity, layout, probe);
  if (!plan.ok() || plan->bits != header.bits) {
    return Corrupt(
        absl::StrFormat("bits %d with %d hashes is not a valid %s geometry%s", header.bits,
                        header.hashes, FilterKindName(header.kind),
                        plan.ok() ? "" : absl::StrCat(" (", plan.status().message(), ")")));
  }
  return plan;
}

absl::Status CheckPlannedFpr(const FileHeader& header, double predicted_fpr) {
  // A header states the fpr its geometry predicts (0 without a capacity to predict it for). The
  // tolerance admits a predictor that moved by some ulps since the file was written, and nothing
  // a contradictory header could claim.
  const double tolerance = 1e-6 * predicted_fpr;
  if (header.capacity == 0 ? header.fpr != 0
                           : !(std::abs(header.fpr - predicted_fpr) <= tolerance)) {
    return Corrupt(
        absl::StrFormat("planned fpr %g contradicts the geometry's %g", header.fpr, predicted_fpr));
  }
  return absl::OkStatus();
}

namespace {

// The fixed header, `head` (the file's first bytes, at most kFixedHeaderBytes of them), of a file
// of `file_size` bytes: every field in range, in agreement with the others, with the file's size
// and with its kind's row. The header's stages: stage_count empty entries.
absl::StatusOr<FileHeader> ReadFixed(std::span<const uint8_t> head, uint64_t file_size) {
  const uint64_t head_bytes = head.size();
  const uint8_t* p = head.data();
  const bool magic = head_bytes >= sizeof(kMagic) && std::memcmp(p, kMagic, sizeof(kMagic)) == 0;
  // A file of another format is named where it can be (the Python package's files and
  // pybloom-live's), so the message says which call opens it.
  if (!magic) {
    if (std::optional<std::string> name = NameForeignFile({p, head_bytes}, file_size)) {
      return absl::InvalidArgumentError(absl::StrCat("not a bloomery filter file: ", *name));
    }
  }
  if (file_size < kFixedHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a bloomery filter file (%d bytes, shorter than the header)", file_size));
  }
  if (!magic) return absl::InvalidArgumentError("not a bloomery filter file (bad magic)");
  const uint32_t version = Get32(p + kVersion);
  if (version > kFormatVersion) {
    return absl::UnimplementedError(absl::StrFormat(
        "file format version %d is newer than this library reads (%d)", version, kFormatVersion));
  }
  if (version == 0) return Corrupt("format version 0");
  FileHeader h;
  h.kind = static_cast<FilterKind>(Get32(p + kKind));
  const KindRow* row = FindKindRow(h.kind);
  if (row == nullptr) {
    return Corrupt(absl::StrFormat("unknown filter kind %d", static_cast<uint32_t>(h.kind)));
  }
  ForEachStoredField(h,
                     [p](uint64_t at, auto& field) { std::memcpy(&field, p + at, sizeof(field)); });
  if (h.flags & ~kFlagDirty) return Corrupt(absl::StrFormat("unknown flags %#x", h.flags));
  if (!IsIntegerHash(h.hash_id)) {
    return Corrupt(absl::StrFormat("unknown hash function id %d", h.hash_id));
  }
  if (h.hashes < kMinHashes || h.hashes > kMaxHashes) {
    return Corrupt(absl::StrFormat("hashes %d outside [%d, %d]", h.hashes, kMinHashes, kMaxHashes));
  }
  if (std::find(row->counter_bits.begin(), row->counter_bits.end(), h.counter_bits) ==
      row->counter_bits.end()) {
    return Corrupt(
        absl::StrFormat("counter width %d invalid for a %s filter", h.counter_bits, row->name));
  }
  if (h.bits == 0 || h.bits > kMaxBits * 8) return Corrupt("bits out of range");
  if (!(h.fpr >= 0.0 && h.fpr < 1.0)) return Corrupt("planned fpr outside [0, 1)");
  if (!row->counts_inserts && h.insert_count != 0) {
    return Corrupt(absl::StrFormat("insert count set, but a %s filter keeps none", row->name));
  }
  const uint32_t stage_count = Get32(p + kStageCount);
  if (stage_count < 1 || stage_count > row->max_stages) {
    return Corrupt(
        absl::StrFormat("stage count %d invalid for a %s filter", stage_count, row->name));
  }
  h.stages.resize(stage_count);
  if (h.chunk_shift < kMinChunkShift || h.chunk_shift > kMaxChunkShift) {
    return Corrupt("checksum chunk size out of range");
  }
  const uint64_t params[] = {h.param0, h.param1, h.param2, h.param3};
  for (uint32_t i = row->params; i < std::size(params); ++i) {
    if (params[i] != 0) {
      return Corrupt(
          absl::StrFormat("param%d is set, but a %s filter does not use it", i, row->name));
    }
  }
  if (h.layout == kRetiredWord64FileCode) {
    return Corrupt(
        "layout 2: a word64 filter from before bloomery's word64 probe took its bits from hash "
        "fields (layout 3); this version does not read it: rebuild the filter from its keys");
  }
  if (h.layout == kPartitionedFileCode) {
    if (!row->partitioned_stages) {
      return Corrupt(absl::StrFormat(
          "layout %d (partitioned stages) set, but a %s filter's are not", h.layout, row->name));
    }
  } else if (FindBlockLayoutByFileCode(h.layout) == nullptr) {
    return Corrupt(absl::StrFormat("unknown layout %d", h.layout));
  }
  if (h.layout != 0 && !row->layouts) {
    return Corrupt(
        absl::StrFormat("layout %d set, but a %s filter has one layout", h.layout, row->name));
  }
  for (uint64_t i = kReservedBegin; i < kPayloadChecksumOffset; ++i) {
    if (p[i] != 0) return Corrupt("reserved header bytes are not zero");
  }
  // Sizes against each other and against the real file: after this every offset below is in range.
  if (h.payload_offset > file_size || h.payload_bytes != file_size - h.payload_offset) {
    return Corrupt(absl::StrFormat(
        "payload of %d bytes at offset %d does not end at the file's end (%d bytes): truncated "
        "or trailing data",
        h.payload_bytes, h.payload_offset, file_size));
  }
  if (h.payload_offset !=
      HeaderRegionBytes(stage_count, ChunkCount(h.payload_bytes, h.chunk_shift))) {
    return Corrupt("payload offset does not match the header's tables");
  }
  h.header_checksum = Get64(p + kHeaderChecksumOffset);
  return h;
}

// The stage table against the fixed header and the kind's row.
absl::Status CheckStages(std::span<const uint8_t> table, const KindRow& row, FileHeader& h) {
  uint64_t total_bits = 0;
  uint64_t total_bytes = 0;
  uint64_t total_inserts = 0;
  for (size_t i = 0; i < h.stages.size(); ++i) {
    const uint8_t* e = table.data() + kStageEntryBytes * i;
    StageInfo& s = h.stages[i];
    s = {Get64(e), Get32(e + 8), Get64(e + 16), Get64(e + 24), Get32(e + 12)};
    if (!row.stage_tags && s.tag != 0) return Corrupt("reserved stage bytes are not zero");
    if (s.bits == 0 || s.bits > kMaxBits * 8) return Corrupt("stage bits out of range");
    if (s.hashes < kMinHashes || s.hashes > kMaxHashes) return Corrupt("stage hashes out of range");
    const uint64_t unit =
        h.layout == kPartitionedFileCode ? s.hashes
        : row.layouts ? FindBlockShape(FindBlockLayoutByFileCode(h.layout)->layout)->block_bits
        : row.stage_bits_unit != 0 ? row.stage_bits_unit
                                   : s.hashes;
    if (s.bits % unit != 0) {
      return Corrupt("stage bits do not fit the filter's layout");
    }
    if (s.insert_count > s.capacity) {
      return Corrupt(absl::StrFormat("stage %d holds more keys (%d) than its capacity (%d)", i,
                                     s.insert_count, s.capacity));
    }
    total_bits += s.bits;  // at most 64 stages of 2^51: no overflow
    total_bytes += WholeLineBytes(s.bits);
    if (__builtin_add_overflow(total_inserts, s.insert_count, &total_inserts)) {
      return Corrupt("stage insert counts overflow");
    }
  }
  if (total_bits != h.bits || total_bytes != h.payload_bytes) {
    return Corrupt("stage sizes do not add up to the header's totals");
  }
  if (total_inserts != h.insert_count) {
    return Corrupt(absl::StrFormat("insert count %d is not the stages' sum %d", h.insert_count,
                                   total_inserts));
  }
  if (h.stages[0].hashes != h.hashes) return Corrupt("stage hashes differ from the header's");
  if (h.stages[0].capacity != h.capacity) {
    return Corrupt("stage capacity differs from the header's");
  }
  return row.check(h);
}

// The header region of the file whose fixed header `h` describes, of which `first` holds the
// first bytes as read (at least the fixed header; at most the region): the rest read a piece at a
// time, both checksums, then the stage table and the kind's rules.
absl::StatusOr<FileHeader> CheckRegion(const ByteSource& source, std::span<uint8_t> first,
                                       FileHeader h) {
  const uint64_t table_begin = kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  const uint64_t table_end = table_begin + 8 * ChunkCount(h.payload_bytes, h.chunk_shift);
  std::vector<uint8_t> stage_table(table_begin - kFixedHeaderBytes);
  std::vector<uint8_t> piece(std::min<uint64_t>(kPieceBytes, h.payload_offset - first.size()));
  const uint64_t table_sum_stored = Get64(first.data() + kPayloadChecksumOffset);
  std::memset(first.data() + kHeaderChecksumOffset, 0, 8);  // as the writer summed it
  XXH3_state_t header_sum;
  XXH3_state_t table_sum;
  XXH3_64bits_reset(&header_sum);
  XXH3_64bits_reset(&table_sum);
  for (uint64_t at = 0; at < h.payload_offset;) {
    std::span<const uint8_t> bytes = first;
    if (at != 0) {
      const uint64_t n = std::min<uint64_t>(piece.size(), h.payload_offset - at);
      if (absl::Status s = source.Read(piece.data(), n, at); !s.ok()) return s;
      bytes = std::span<const uint8_t>(piece.data(), n);
    }
    const uint64_t n = bytes.size();
    XXH3_64bits_update(&header_sum, bytes.data(), n);
    // [from, to): the part of [begin, end) in these bytes.
    const auto part = [&](uint64_t begin, uint64_t end) {
      return std::pair(std::clamp(begin, at, at + n), std::clamp(end, at, at + n));
    };
    if (const auto [from, to] = part(kFixedHeaderBytes, table_begin); to > from) {
      std::memcpy(stage_table.data() + (from - kFixedHeaderBytes), bytes.data() + (from - at),
                  to - from);
    }
    if (const auto [from, to] = part(table_begin, table_end); to > from) {
      XXH3_64bits_update(&table_sum, bytes.data() + (from - at), to - from);
    }
    at += n;
  }
  if (XXH3_64bits_digest(&header_sum) != h.header_checksum) {
    return Corrupt("header checksum mismatch");
  }
  if (XXH3_64bits_digest(&table_sum) != table_sum_stored) {
    return Corrupt("checksum table mismatch");
  }
  if (absl::Status s = CheckStages(stage_table, *FindKindRow(h.kind), h); !s.ok()) return s;
  return h;
}

}  // namespace

absl::StatusOr<FileHeader> Validate(const ByteSource& source, const Expect& expect) {
  // The first piece is the smallest header region (every region is a whole number of
  // kPayloadAlignment): read once, it is the fixed header and the start of the region.
  std::array<uint8_t, kPayloadAlignment> first;
  const uint64_t first_bytes = std::min(source.size(), kPayloadAlignment);
  if (first_bytes != 0) {
    if (absl::Status s = source.Read(first.data(), first_bytes, 0); !s.ok()) return s;
  }
  absl::StatusOr<FileHeader> h =
      ReadFixed(std::span<const uint8_t>(first.data(), std::min(first_bytes, kFixedHeaderBytes)),
                source.size());
  if (!h.ok()) return h.status();
  if (expect.kind.has_value() && h->kind != *expect.kind) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the file holds a %s filter, not a %s filter", FilterKindName(h->kind),
                        FilterKindName(*expect.kind)));
  }
  if (expect.max_payload_bytes.has_value()) {
    if (absl::Status s = CheckMemoryCap(h->payload_bytes, *expect.max_payload_bytes); !s.ok()) {
      return s;
    }
  }
  // ReadFixed has tied the region's size to the file's: payload_offset >= kPayloadAlignment.
  return CheckRegion(source, std::span<uint8_t>(first.data(), first_bytes), *std::move(h));
}

bool HoldsHeader(std::span<const uint8_t> file, const FileHeader& header) noexcept {
  return file.size() >= kFixedHeaderBytes &&
         Get64(file.data() + kHeaderChecksumOffset) == header.header_checksum;
}

absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes, uint64_t file_size) {
  return Validate(MemorySource(bytes, file_size));
}

bool RecomputeChecksums(std::span<uint8_t> file) {
  if (file.size() < kFixedHeaderBytes) return false;
  uint8_t* p = file.data();
  const uint64_t stages = Get32(p + kStageCount);
  const uint32_t chunk_shift = Get32(p + kChunkShift);
  const uint64_t offset = Get64(p + kPayloadOffset);
  if (stages > MaxStagesOfAnyKind() || chunk_shift < kMinChunkShift ||
      chunk_shift > kMaxChunkShift || offset > file.size()) {
    return false;
  }
  const uint64_t payload_bytes = file.size() - offset;
  const uint64_t chunks = ChunkCount(payload_bytes, chunk_shift);
  const uint64_t table_offset = kFixedHeaderBytes + kStageEntryBytes * stages;
  if (table_offset + 8 * chunks > offset) return false;
  const std::span<const uint8_t> payload[] = {file.subspan(offset)};
  const std::vector<uint64_t> sums = HashChunks(payload, chunk_shift);
  for (uint64_t i = 0; i < chunks; ++i) Put64(p + table_offset + 8 * i, sums[i]);
  Put64(p + kPayloadChecksumOffset, XXH3_64bits(p + table_offset, 8 * chunks));
  Put64(p + kHeaderChecksumOffset, HeaderChecksum(file.first(offset)));
  return true;
}

absl::StatusOr<std::vector<uint8_t>> EncodeHeader(FileHeader& h,
                                                  std::span<const uint64_t> chunk_checksums) {
  h.payload_bytes = 0;
  for (const StageInfo& s : h.stages) h.payload_bytes += WholeLineBytes(s.bits);
  const uint64_t chunks = ChunkCount(h.payload_bytes, h.chunk_shift);
  if (chunk_checksums.size() != chunks) return absl::InternalError("chunk checksum count");
  h.payload_offset = HeaderRegionBytes(h.stages.size(), chunks);
  std::vector<uint8_t> region(h.payload_offset, 0);
  uint8_t* p = region.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  Put32(p + kVersion, kFormatVersion);
  Put32(p + kKind, static_cast<uint32_t>(h.kind));
  ForEachStoredField(
      h, [p](uint64_t at, const auto& field) { std::memcpy(p + at, &field, sizeof(field)); });
  Put32(p + kStageCount, static_cast<uint32_t>(h.stages.size()));
  for (size_t i = 0; i < h.stages.size(); ++i) {
    uint8_t* e = p + kFixedHeaderBytes + kStageEntryBytes * i;
    Put64(e, h.stages[i].bits);
    Put32(e + 8, h.stages[i].hashes);
    Put32(e + 12, h.stages[i].tag);
    Put64(e + 16, h.stages[i].capacity);
    Put64(e + 24, h.stages[i].insert_count);
  }
  uint8_t* table = p + kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  for (uint64_t i = 0; i < chunks; ++i) Put64(table + 8 * i, chunk_checksums[i]);
  Put64(p + kPayloadChecksumOffset, XXH3_64bits(table, 8 * chunks));
  h.header_checksum = HeaderChecksum(region);
  Put64(p + kHeaderChecksumOffset, h.header_checksum);
  return region;
}

uint64_t RewriteFlags(std::span<uint8_t> region, uint32_t flags) {
  Put32(region.data() + kFlags, flags);
  const uint64_t checksum = HeaderChecksum(region);
  Put64(region.data() + kHeaderChecksumOffset, checksum);
  return checksum;
}

}  // namespace bloomery::detail
