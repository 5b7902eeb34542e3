// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "internal/format.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/file.h"
#include "bloomery/plan.h"
#include "internal/memory_limit.h"
#include "internal/save_cleanup.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bloomery::internal {

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupted bloomery file: ", what));
}

namespace {

constexpr char kMagic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};
constexpr uint64_t kHeaderChecksumOffset = 248;
constexpr uint64_t kPayloadChecksumOffset = 240;
constexpr uint64_t kReservedBegin = 128;
constexpr uint32_t kMinChunkShift = 12;
constexpr uint32_t kMaxChunkShift = 30;
// What the readers hold of a file at a time while they check what they do not keep (the header
// region, a chunk of payload), whatever sizes the file claims.
constexpr uint64_t kPieceBytes = uint64_t{1} << 16;

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
};

// The fixed header's fields stored as they are, one list for the reader and the writer.
constexpr std::pair<uint64_t, uint32_t FileHeader::*> kFields32[] = {
    {kFlags, &FileHeader::flags},
    {kHashId, &FileHeader::hash_id},
    {kHashes, &FileHeader::hashes},
    {kCounterBits, &FileHeader::counter_bits},
    {kChunkShift, &FileHeader::chunk_shift}};
constexpr std::pair<uint64_t, uint64_t FileHeader::*> kFields64[] = {
    {kSeed, &FileHeader::seed},
    {kBits, &FileHeader::bits},
    {kCapacity, &FileHeader::capacity},
    {kInsertCount, &FileHeader::insert_count},
    {kPayloadOffset, &FileHeader::payload_offset},
    {kPayloadBytes, &FileHeader::payload_bytes},
    {kParam0, &FileHeader::param0},
    {kParam1, &FileHeader::param1},
    {kParam2, &FileHeader::param2},
    {kParam3, &FileHeader::param3}};

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

uint64_t ChunkCount(uint64_t payload_bytes, uint32_t chunk_shift) {
  return (payload_bytes >> chunk_shift) +
         ((payload_bytes & ((uint64_t{1} << chunk_shift) - 1)) != 0);
}

// The header region's size for a layout; every term is bounded by the validated fields.
uint64_t HeaderRegionBytes(uint64_t stages, uint64_t chunks) {
  return RoundUp(kFixedHeaderBytes + kStageEntryBytes * stages + 8 * chunks, kPayloadAlignment);
}

// XXH3-64 of each 2^chunk_shift-byte chunk of the concatenation of `parts`.
std::vector<uint64_t> HashChunks(std::span<const std::span<const uint8_t>> parts,
                                 uint32_t chunk_shift) {
  const uint64_t chunk = uint64_t{1} << chunk_shift;
  std::vector<uint64_t> out;
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  uint64_t in_chunk = 0;
  for (std::span<const uint8_t> part : parts) {
    while (!part.empty()) {
      const uint64_t take = std::min<uint64_t>(chunk - in_chunk, part.size());
      XXH3_64bits_update(&state, part.data(), take);
      in_chunk += take;
      part = part.subspan(take);
      if (in_chunk == chunk) {
        out.push_back(XXH3_64bits_digest(&state));
        XXH3_64bits_reset(&state);
        in_chunk = 0;
      }
    }
  }
  if (in_chunk != 0) out.push_back(XXH3_64bits_digest(&state));
  return out;
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

absl::Status ErrnoStatus(absl::string_view what, const std::string& path, int err) {
  const std::string message = absl::StrFormat("%s %s: %s", what, path, std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::DataLossError(message);
  }
}

// Reads exactly `size` bytes at `offset`; a short read is truncation.
absl::Status ReadAt(int fd, uint8_t* out, uint64_t size, uint64_t offset, const std::string& path) {
  while (size > 0) {
    const ssize_t got =
        pread(fd, out, std::min<uint64_t>(size, uint64_t{1} << 30), static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return ErrnoStatus("cannot read", path, errno);
    if (got == 0) return Corrupt("file is shorter than its header says (truncated)");
    out += got;
    size -= static_cast<uint64_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, const uint8_t* data, uint64_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t put = write(fd, data, std::min<uint64_t>(size, uint64_t{1} << 30));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) return ErrnoStatus("cannot write", path, errno);
    data += put;
    size -= static_cast<uint64_t>(put);
  }
  return absl::OkStatus();
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports close's own error (for the writer: NFS reports write errors here).
  int Close() { return close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

// The bytes of an Input: an open regular file, or the caller's buffer. Either way reads are
// bounded by the size fixed when it was opened.
class Source {
 public:
  // Opens the file without blocking (a FIFO must not hang us) and refuses anything but a regular
  // file before reading a byte.
  static absl::StatusOr<Source> Open(const Input& input, bool writable) {
    Source source;
    source.name_ = input.name;
    if (input.bytes) {
      source.bytes_ = *input.bytes;
      source.size_ = input.bytes->size();
      return source;
    }
    const int raw =
        open(input.name.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
    if (raw < 0) return ErrnoStatus("cannot open", input.name, errno);
    source.fd_ = std::make_unique<Fd>(raw);
    struct stat st;
    if (fstat(raw, &st) != 0) return ErrnoStatus("cannot stat", input.name, errno);
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(input.name, " is not a regular file"));
    }
    source.size_ = static_cast<uint64_t>(st.st_size);
    return source;
  }

  // `bytes` as the first bytes of a file of `size` bytes (the writer checks its header region
  // before the payload exists; reads past `bytes` are truncation).
  static Source Memory(std::span<const uint8_t> bytes, uint64_t size) {
    Source source;
    source.name_ = std::string(kBytesName);
    source.bytes_ = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    source.size_ = size;
    return source;
  }

  const std::string& name() const { return name_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_ ? fd_->get() : -1; }

  absl::Status Read(uint8_t* out, uint64_t size, uint64_t offset) const {
    if (fd_) return ReadAt(fd_->get(), out, size, offset, name_);
    if (offset > bytes_.size() || size > bytes_.size() - offset) {
      return Corrupt("shorter than its header says (truncated)");
    }
    std::memcpy(out, bytes_.data() + offset, size);
    return absl::OkStatus();
  }

 private:
  std::string name_;
  std::unique_ptr<Fd> fd_;
  std::string_view bytes_;
  uint64_t size_ = 0;
};

// Every error about a file names it (a tool merging ten files must say which one is bad).
absl::Status Named(const absl::Status& status, const std::string& name) {
  if (status.ok() || absl::StrContains(status.message(), name)) return status;
  return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
}

absl::Status CheckKind(const FileHeader& header, FilterKind expected) {
  if (header.kind != expected) {
    return absl::FailedPreconditionError(
        absl::StrFormat("the file holds a %s filter, not a %s filter", FilterKindName(header.kind),
                        FilterKindName(expected)));
  }
  return absl::OkStatus();
}

// Compares each payload chunk's checksum, `sum_of(i)` (a StatusOr), with the file's chunk table,
// read a piece at a time (memory: one piece, whatever the table's claimed size).
template <typename SumOf>
absl::Status CompareChunkTable(const Source& source, const FileHeader& h, SumOf sum_of) {
  const uint64_t chunks = ChunkCount(h.payload_bytes, h.chunk_shift);
  const uint64_t table = kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  std::vector<uint8_t> want(std::min<uint64_t>(8 * chunks, kPieceBytes));
  for (uint64_t first = 0; first < chunks; first += want.size() / 8) {
    const uint64_t n = std::min<uint64_t>(want.size() / 8, chunks - first);
    if (absl::Status s = source.Read(want.data(), 8 * n, table + 8 * first); !s.ok()) return s;
    for (uint64_t i = 0; i < n; ++i) {
      const absl::StatusOr<uint64_t> got = sum_of(first + i);
      if (!got.ok()) return got.status();
      if (*got != Get64(want.data() + 8 * i)) {
        return Corrupt(absl::StrFormat("payload checksum mismatch in chunk %d (bytes %d..)",
                                       first + i, (first + i) << h.chunk_shift));
      }
    }
  }
  return absl::OkStatus();
}

// The payload in memory (`parts`, the stages in order) against the file's chunk table.
absl::Status VerifyPayload(std::span<const std::span<const uint8_t>> parts, const Source& source,
                           const FileHeader& h) {
  const std::vector<uint64_t> got = HashChunks(parts, h.chunk_shift);
  return CompareChunkTable(source, h,
                           [&](uint64_t i) -> absl::StatusOr<uint64_t> { return got[i]; });
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

// Rewrites the header region of a mapped file with `flags` (and, when `rehash` is set, the chunk
// checksums of its payload as it is now and the kind's fields `amend` brings up to date). The
// mapping is synced before the header changes and after: a header that reaches the disk never
// describes payload pages that have not.
absl::Status RewriteMappedHeader(const Storage& mapping, uint32_t flags, bool rehash,
                                 const HeaderAmend& amend = nullptr) {
  const std::span<uint8_t> whole(mapping.mapping_base(), mapping.mapping_size());
  absl::StatusOr<FileHeader> header = ValidateHeader(whole, whole.size());
  if (!header.ok()) return header.status();
  if (absl::Status s = mapping.Sync(); !s.ok()) return s;
  if (rehash) {
    header->flags = flags;
    if (amend) amend(*header);
    absl::StatusOr<std::vector<uint8_t>> region =
        EncodeHeader(*header, HashChunks(StageSpans(mapping.data(), *header), header->chunk_shift));
    if (!region.ok()) return region.status();
    // As the writer: a header the readers would refuse never reaches the file.
    if (absl::StatusOr<FileHeader> check = ValidateHeader(*region, whole.size()); !check.ok()) {
      return absl::InternalError(
          absl::StrCat("refusing to flush an invalid header: ", check.status().message()));
    }
    std::memcpy(whole.data(), region->data(), region->size());
  } else {
    Put32(whole.data() + kFlags, flags);
    Put64(whole.data() + kHeaderChecksumOffset,
          HeaderChecksum(whole.first(header->payload_offset)));
  }
  return mapping.Sync();
}

// A read-write mapping ends (Storage's close hook): when its payload still matches the header's
// checksums (nothing was written since the last Flush, or since it was mapped), the file is whole
// and DIRTY is cleared; otherwise it stays DIRTY, as after a crash. O(payload), like Flush.
void CloseMappedFile(const Storage& mapping) noexcept {
  try {
    const std::span<uint8_t> whole(mapping.mapping_base(), mapping.mapping_size());
    absl::StatusOr<FileHeader> header = ValidateHeader(whole, whole.size());
    if (!header.ok() || (header->flags & kFlagDirty) == 0) return;
    const Source mapped = Source::Memory(whole, whole.size());
    if (!VerifyPayload(StageSpans(mapping.data(), *header), mapped, *header).ok()) return;
    (void)RewriteMappedHeader(mapping, header->flags & ~kFlagDirty, /*rehash=*/false);
  } catch (...) {  // std::bad_alloc from the checksum list: the file stays DIRTY
  }
}

}  // namespace

FileHeader SingleStageHeader(FilterKind kind, const Plan& plan, const KeyHasher& hasher) {
  FileHeader header;
  header.kind = kind;
  PutHasher(header, hasher);
  header.hashes = plan.hashes;
  header.bits = plan.bits;
  header.capacity = plan.capacity;
  header.fpr = plan.expected_fpr;
  header.stages.push_back({plan.bits, plan.hashes, plan.capacity, 0});
  return header;
}

absl::StatusOr<Plan> PlanFromHeader(const FileHeader& header, Layout layout) {
  absl::StatusOr<Plan> plan = PlanForSize(header.bits, header.hashes, header.capacity, layout);
  if (!plan.ok() || plan->bits != header.bits) {
    return Corrupt(absl::StrFormat("bits %d with %d hashes is not a valid %s geometry", header.bits,
                                   header.hashes, FilterKindName(header.kind)));
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

// The fixed header as read, and what it says.
struct FixedHeader {
  std::array<uint8_t, kFixedHeaderBytes> bytes;
  FileHeader header;  // stages: stage_count empty entries until the region is checked
};

// The fixed header alone: every field in range, in agreement with the others, with the file's size
// and with its kind's row. Nothing larger than the fixed header is read or allocated.
absl::StatusOr<FixedHeader> ReadFixed(const Source& source) {
  const uint64_t file_size = source.size();
  if (file_size < kFixedHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a bloomery filter file (%d bytes, shorter than the header)", file_size));
  }
  FixedHeader fixed;
  if (absl::Status s = source.Read(fixed.bytes.data(), kFixedHeaderBytes, 0); !s.ok()) return s;
  const uint8_t* p = fixed.bytes.data();
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError("not a bloomery filter file (bad magic)");
  }
  const uint32_t version = Get32(p + kVersion);
  if (version > kFormatVersion) {
    return absl::UnimplementedError(absl::StrFormat(
        "file format version %d is newer than this library reads (%d)", version, kFormatVersion));
  }
  if (version == 0) return Corrupt("format version 0");
  FileHeader& h = fixed.header;
  h.kind = static_cast<FilterKind>(Get32(p + kKind));
  const KindRow* row = FindKindRow(h.kind);
  if (row == nullptr) {
    return Corrupt(absl::StrFormat("unknown filter kind %d", static_cast<uint32_t>(h.kind)));
  }
  for (const auto& [at, field] : kFields32) h.*field = Get32(p + at);
  for (const auto& [at, field] : kFields64) h.*field = Get64(p + at);
  h.fpr = std::bit_cast<double>(Get64(p + kFpr));
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
  return fixed;
}

// The stage table against the fixed header and the kind's row.
absl::Status CheckStages(std::span<const uint8_t> table, const KindRow& row, FileHeader& h) {
  uint64_t total_bits = 0;
  uint64_t total_bytes = 0;
  uint64_t total_inserts = 0;
  for (size_t i = 0; i < h.stages.size(); ++i) {
    const uint8_t* e = table.data() + kStageEntryBytes * i;
    StageInfo& s = h.stages[i];
    s = {Get64(e), Get32(e + 8), Get64(e + 16), Get64(e + 24)};
    if (Get32(e + 12) != 0) return Corrupt("reserved stage bytes are not zero");
    if (s.bits == 0 || s.bits > kMaxBits * 8) return Corrupt("stage bits out of range");
    if (s.hashes < kMinHashes || s.hashes > kMaxHashes) return Corrupt("stage hashes out of range");
    if (s.bits % (row.stage_bits_unit != 0 ? row.stage_bits_unit : s.hashes) != 0) {
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

// Reads [0, payload_offset) a piece at a time through both checksums, so a header claiming a huge
// chunk table costs time, never memory; only then are the stage table and the kind's rules read.
absl::StatusOr<FileHeader> CheckRegion(const Source& source, FixedHeader fixed) {
  FileHeader& h = fixed.header;
  const uint64_t table_begin = kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  const uint64_t table_end = table_begin + 8 * ChunkCount(h.payload_bytes, h.chunk_shift);
  std::vector<uint8_t> stage_table(table_begin - kFixedHeaderBytes);
  std::vector<uint8_t> piece(std::min<uint64_t>(kPieceBytes, h.payload_offset));
  XXH3_state_t header_sum;
  XXH3_state_t table_sum;
  XXH3_64bits_reset(&header_sum);
  XXH3_64bits_reset(&table_sum);
  // The region starts with the fixed header: payload_offset >= 4096 >= a piece's end.
  for (uint64_t at = 0; at < h.payload_offset; at += piece.size()) {
    const uint64_t n = std::min<uint64_t>(piece.size(), h.payload_offset - at);
    if (absl::Status s = source.Read(piece.data(), n, at); !s.ok()) return s;
    if (at == 0) {
      if (std::memcmp(piece.data(), fixed.bytes.data(), kFixedHeaderBytes) != 0) {
        return Corrupt("the header changed while it was read");
      }
      std::memset(piece.data() + kHeaderChecksumOffset, 0, 8);
    }
    XXH3_64bits_update(&header_sum, piece.data(), n);
    // [from, to): the part of [begin, end) in this piece.
    const auto part = [&](uint64_t begin, uint64_t end) {
      return std::pair(std::clamp(begin, at, at + n), std::clamp(end, at, at + n));
    };
    if (const auto [from, to] = part(kFixedHeaderBytes, table_begin); to > from) {
      std::memcpy(stage_table.data() + (from - kFixedHeaderBytes), piece.data() + (from - at),
                  to - from);
    }
    if (const auto [from, to] = part(table_begin, table_end); to > from) {
      XXH3_64bits_update(&table_sum, piece.data() + (from - at), to - from);
    }
  }
  const uint8_t* p = fixed.bytes.data();
  if (XXH3_64bits_digest(&header_sum) != Get64(p + kHeaderChecksumOffset)) {
    return Corrupt("header checksum mismatch");
  }
  if (XXH3_64bits_digest(&table_sum) != Get64(p + kPayloadChecksumOffset)) {
    return Corrupt("checksum table mismatch");
  }
  if (absl::Status s = CheckStages(stage_table, *FindKindRow(h.kind), h); !s.ok()) return s;
  return std::move(h);
}

// The one validator: fixed header, then the whole header region.
absl::StatusOr<FileHeader> Validate(const Source& source) {
  absl::StatusOr<FixedHeader> fixed = ReadFixed(source);
  if (!fixed.ok()) return fixed.status();
  return CheckRegion(source, *std::move(fixed));
}

}  // namespace

absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes, uint64_t file_size) {
  return Validate(Source::Memory(bytes, file_size));
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
  for (const auto& [at, field] : kFields32) Put32(p + at, h.*field);
  for (const auto& [at, field] : kFields64) Put64(p + at, h.*field);
  Put64(p + kFpr, std::bit_cast<uint64_t>(h.fpr));
  Put32(p + kStageCount, static_cast<uint32_t>(h.stages.size()));
  for (size_t i = 0; i < h.stages.size(); ++i) {
    uint8_t* e = p + kFixedHeaderBytes + kStageEntryBytes * i;
    Put64(e, h.stages[i].bits);
    Put32(e + 8, h.stages[i].hashes);
    Put64(e + 16, h.stages[i].capacity);
    Put64(e + 24, h.stages[i].insert_count);
  }
  uint8_t* table = p + kFixedHeaderBytes + kStageEntryBytes * h.stages.size();
  for (uint64_t i = 0; i < chunks; ++i) Put64(table + 8 * i, chunk_checksums[i]);
  Put64(p + kPayloadChecksumOffset, XXH3_64bits(table, 8 * chunks));
  Put64(p + kHeaderChecksumOffset, HeaderChecksum(region));
  return region;
}

namespace {

// Removes `.BASE.tmp.PID.*` files in `dir` left by saves whose process is gone (killed mid-save).
// A temp file of a live process (a save in progress, here or in another process) is kept; a pid
// from another pid namespace or host (NFS) may look dead or alive, so this only ever removes files
// named exactly as our saves name them.
void RemoveStaleTemps(const std::string& dir, const std::string& base) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = absl::StrCat(".", base, ".tmp.");
  while (const dirent* entry = readdir(d)) {
    const absl::string_view name = entry->d_name;
    if (!absl::StartsWith(name, prefix)) continue;
    const absl::string_view rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    int pid = 0;
    if (dot == absl::string_view::npos || !absl::SimpleAtoi(rest.substr(0, dot), &pid) ||
        pid <= 0) {
      continue;
    }
    if (pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH) continue;
    unlinkat(dirfd(d), entry->d_name, 0);
  }
  closedir(d);
}

}  // namespace

absl::StatusOr<std::string> ResolveSaveTarget(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT) return current;  // a new file (or a dangling link's target)
      return ErrnoStatus("cannot stat", current, errno);
    }
    if (!S_ISLNK(st.st_mode)) {
      if (!S_ISREG(st.st_mode)) {
        return absl::FailedPreconditionError(absl::StrCat(
            current, " is not a regular file; refusing to replace it with a filter file"));
      }
      return current;
    }
    std::string link(PATH_MAX, '\0');
    const ssize_t n = readlink(current.c_str(), link.data(), link.size());
    if (n < 0) return ErrnoStatus("cannot read link", current, errno);
    link.resize(static_cast<size_t>(n));
    const size_t slash = current.rfind('/');
    current = link.starts_with('/') || slash == std::string::npos
                  ? link
                  : absl::StrCat(current.substr(0, slash + 1), link);
  }
  return ErrnoStatus("cannot resolve", path, ELOOP);
}

namespace {

// The crash-safe write of a file image: temp file beside the target, fsync, rename, directory
// fsync. The target is what `path` names after following symlinks, so a link keeps pointing at
// the updated file. An existing file keeps its mode (and, where we may, its owner); a new one gets
// 0666 & ~umask, as any file a program creates.
absl::Status SaveFile(const std::string& path, std::span<const uint8_t> region,
                      std::span<const std::span<const uint8_t>> payloads) {
  absl::StatusOr<std::string> target = ResolveSaveTarget(path);
  if (!target.ok()) return target.status();
  struct stat old;
  const bool exists = stat(target->c_str(), &old) == 0;
  const size_t slash = target->rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : target->substr(0, slash == 0 ? 1 : slash);
  const std::string base = slash == std::string::npos ? *target : target->substr(slash + 1);
  // The pid in the name lets a later save tell a dead process's leftover from a live save.
  static std::atomic<uint64_t> counter{0};
  std::string temp;
  int raw = -1;
  for (int attempt = 0; raw < 0 && attempt < 100; ++attempt) {
    temp = absl::StrCat(dir, "/.", base, ".tmp.", getpid(), ".",
                        counter.fetch_add(1, std::memory_order_relaxed), ".", attempt);
    raw = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw < 0 && errno != EEXIST) break;
  }
  if (raw < 0) return ErrnoStatus("cannot create a temporary file next to", *target, errno);
  Fd fd(raw);
  const internal::SaveTempSlot cleanup_on_signal(temp);
  auto fail = [&](absl::Status s) {
    unlink(temp.c_str());
    return s;
  };
  if (exists) {
    if ((old.st_uid != geteuid() || old.st_gid != getegid()) &&
        fchown(raw, old.st_uid, old.st_gid) != 0) {
      // Not permitted (not root): the file becomes ours, as with any editor's atomic save.
    }
    if (fchmod(raw, old.st_mode & 07777) != 0)
      return fail(ErrnoStatus("cannot chmod", temp, errno));
  }
  if (absl::Status s = WriteAll(raw, region.data(), region.size(), temp); !s.ok()) return fail(s);
  for (std::span<const uint8_t> payload : payloads) {
    if (absl::Status s = WriteAll(raw, payload.data(), payload.size(), temp); !s.ok()) {
      return fail(s);
    }
  }
  if (fsync(raw) != 0) return fail(ErrnoStatus("fsync failed on", temp, errno));
  if (fd.Close() != 0) return fail(ErrnoStatus("close failed on", temp, errno));
  if (rename(temp.c_str(), target->c_str()) != 0) {
    return fail(ErrnoStatus("cannot rename to", *target, errno));
  }
  // The rename is durable only once the directory entry is.
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoStatus("cannot open directory of", *target, errno);
  Fd dir_guard(dir_fd);
  if (fsync(dir_fd) != 0) return ErrnoStatus("fsync of the directory failed for", *target, errno);
  RemoveStaleTemps(dir, base);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> WriteFilter(const std::string* path, FileHeader header,
                                        std::span<const std::span<const uint8_t>> payloads) {
  if (payloads.size() != header.stages.size()) return absl::InternalError("stage count");
  for (size_t i = 0; i < payloads.size(); ++i) {
    if (payloads[i].size() != WholeLineBytes(header.stages[i].bits)) {
      return absl::InternalError("stage payload size");
    }
  }
  absl::StatusOr<std::vector<uint8_t>> region =
      EncodeHeader(header, HashChunks(payloads, header.chunk_shift));
  if (!region.ok()) return region.status();
  // The writer holds itself to the reader's rules.
  if (absl::StatusOr<FileHeader> check =
          ValidateHeader(*region, header.payload_offset + header.payload_bytes);
      !check.ok()) {
    return absl::InternalError(
        absl::StrCat("refusing to write an invalid file: ", check.status().message()));
  }
  if (path == nullptr) {
    std::string out;
    out.reserve(header.payload_offset + header.payload_bytes);
    out.append(reinterpret_cast<const char*>(region->data()), region->size());
    for (std::span<const uint8_t> payload : payloads) {
      out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
    }
    return out;
  }
  if (absl::Status s = SaveFile(*path, *region, payloads); !s.ok()) return s;
  return std::string();
}

namespace {

// The validated header of a file of kind `expected`, checked against the caller's memory cap
// (`max_bytes`; nullopt: no cap, for a mapping) before anything the size of the file is read. The
// cap is on the payload, the memory the filter will hold (ReadFixed has tied it to the file's
// size), as FilterOptions::max_memory_bytes is at creation: a filter created under a cap loads back
// under it. The header region beside it is read in bounded pieces, never whole.
absl::StatusOr<FileHeader> ReadHeader(const Source& source, FilterKind expected,
                                      std::optional<uint64_t> max_bytes) {
  absl::StatusOr<FixedHeader> fixed = ReadFixed(source);
  if (!fixed.ok()) return fixed.status();
  if (absl::Status s = CheckKind(fixed->header, expected); !s.ok()) return s;
  if (max_bytes.has_value()) {
    if (absl::Status s = internal::CheckMemoryCap(fixed->header.payload_bytes, *max_bytes); !s.ok())
      return s;
  }
  return CheckRegion(source, *std::move(fixed));
}

// Whether to verify the payload's checksums: as the caller asks, except for a DIRTY file the
// caller accepts as it is (allow_dirty), whose checksums may be stale.
bool ShouldVerify(const FileHeader& header, const LoadOptions& options) {
  return options.verify_checksums && !((header.flags & kFlagDirty) != 0 && options.allow_dirty);
}

// The payload (`parts`) against its checksums, as ShouldVerify says. A DIRTY file is accepted when
// they match (a read-write mapping flushed and not written since, e.g. by a live writer); when they
// do not, it is stale rather than corrupt, and the message says how to accept it.
absl::Status VerifyLoaded(std::span<const std::span<const uint8_t>> parts, const Source& source,
                          const FileHeader& header, const LoadOptions& options,
                          absl::string_view verb) {
  if (!ShouldVerify(header, options)) return absl::OkStatus();
  absl::Status s = VerifyPayload(parts, source, header);
  if (s.ok() || (header.flags & kFlagDirty) == 0) return s;
  return Corrupt(absl::StrCat(
      "the file is DIRTY (mapped read-write, and written since its last Flush or left by a crash) "
      "and its checksums are stale (",
      s.message(), "); ", verb, " it with allow_dirty to accept it"));
}

absl::StatusOr<LoadedFile> LoadFrom(const Source& source, FilterKind expected,
                                    const LoadOptions& options) {
  absl::StatusOr<FileHeader> header = ReadHeader(source, expected, options.max_bytes);
  if (!header.ok()) return header.status();
  LoadedFile loaded;
  StorageOptions storage_options;
  storage_options.huge_pages = options.huge_pages;
  storage_options.max_bytes = options.max_bytes;  // a caller's cap above the machine's is honoured
  uint64_t offset = header->payload_offset;
  std::vector<std::span<const uint8_t>> parts;
  for (const StageInfo& stage : header->stages) {
    const uint64_t bytes = WholeLineBytes(stage.bits);
    absl::StatusOr<Storage> storage = Storage::Allocate(bytes, storage_options);
    if (!storage.ok()) return storage.status();
    if (absl::Status s = source.Read(storage->data(), bytes, offset); !s.ok()) return s;
    parts.emplace_back(storage->data(), bytes);
    loaded.stages.push_back(*std::move(storage));
    offset += bytes;
  }
  if (absl::Status s = VerifyLoaded(parts, source, *header, options, "load"); !s.ok()) return s;
  loaded.header = *std::move(header);
  return loaded;
}

absl::StatusOr<MappedFile> MapFrom(const Source& source, FilterKind expected, MapMode mode,
                                   const LoadOptions& options) {
  const bool writable = mode == MapMode::kReadWrite;
  absl::StatusOr<FileHeader> checked = ReadHeader(source, expected, std::nullopt);
  if (!checked.ok()) return checked.status();
  absl::StatusOr<Storage> mapping = Storage::MapFile(
      source.fd(), source.size(), checked->payload_offset, checked->payload_bytes, writable);
  if (!mapping.ok()) return mapping.status();
  // What is mapped is what is used: validated again, in case the file changed since it was read.
  const Source mapped =
      Source::Memory({mapping->mapping_base(), mapping->mapping_size()}, source.size());
  absl::StatusOr<FileHeader> header = Validate(mapped);
  if (!header.ok()) return header.status();
  // A DIRTY file may be mapped read-write by another process now: a second writer must say it
  // accepts that (and is then not the one that marks the file clean at its end).
  const bool was_dirty = (header->flags & kFlagDirty) != 0;
  if (writable && was_dirty && !options.allow_dirty) {
    return Corrupt(
        "the file is DIRTY (mapped read-write by another process, or left by a crash); map it "
        "with allow_dirty to accept it");
  }
  if (absl::Status s =
          VerifyLoaded(StageSpans(mapping->data(), *header), mapped, *header, options, "map");
      !s.ok()) {
    return s;
  }
  if (writable) {
    if (absl::Status s = RewriteMappedHeader(*mapping, header->flags | kFlagDirty, false);
        !s.ok()) {
      return s;
    }
    header->flags |= kFlagDirty;
    if (!was_dirty) mapping->set_close_hook(&CloseMappedFile);
  }
  return MappedFile{*std::move(header), *std::move(mapping)};
}

}  // namespace

absl::StatusOr<LoadedFile> LoadFilter(const Input& input, FilterKind expected,
                                      const LoadOptions& options) {
  absl::StatusOr<Source> source = Source::Open(input, /*writable=*/false);
  if (!source.ok()) return Named(source.status(), input.name);
  absl::StatusOr<LoadedFile> loaded = LoadFrom(*source, expected, options);
  if (!loaded.ok()) return Named(loaded.status(), input.name);
  return loaded;
}

namespace {

// `path` made absolute against the working directory now (as given if that cannot be read), so
// that a later chdir does not change what it names.
std::string AbsolutePath(const std::string& path) {
  if (path.starts_with('/')) return path;
  std::string cwd(PATH_MAX, '\0');
  if (getcwd(cwd.data(), cwd.size()) == nullptr) return path;
  cwd.resize(std::strlen(cwd.c_str()));
  return absl::StrCat(cwd, cwd.ends_with('/') ? "" : "/", path);
}

}  // namespace

absl::StatusOr<MappedFile> MapFilterFile(const std::string& path, FilterKind expected, MapMode mode,
                                         const LoadOptions& options) {
  const bool writable = mode == MapMode::kReadWrite;
  for (;;) {
    absl::StatusOr<Source> source = Source::Open(Input{path, std::nullopt}, writable);
    if (!source.ok()) return Named(source.status(), path);
    int lock_fd = -1;
    if (writable) {
      absl::StatusOr<int> locked = LockMapped(source->fd(), path);
      if (!locked.ok()) return Named(locked.status(), path);
      if (*locked < 0) continue;
      lock_fd = *locked;
    }
    absl::StatusOr<MappedFile> mapped = MapFrom(*source, expected, mode, options);
    if (!mapped.ok()) {
      if (lock_fd >= 0) close(lock_fd);
      return Named(mapped.status(), path);
    }
    if (writable) mapped->mapping.set_file_lock(lock_fd, AbsolutePath(path));
    return mapped;
  }
}

absl::Status FlushStorage(const FilterMemory& memory, const HeaderAmend& amend) {
  const Storage& storage = StorageOf(memory);
  if (!storage.file_shared()) {
    return absl::FailedPreconditionError("Flush needs a filter mapped with MapMode::kReadWrite");
  }
  return FlushMappedFile(storage, amend);
}

// The file stays DIRTY: the mapping can still be written, and a write after this Flush would
// otherwise leave a clean header over stale checksums, a file no loader accepts (not even with
// allow_dirty) and no repair touches. CloseMappedFile clears DIRTY when the mapping ends unchanged.
absl::Status FlushMappedFile(const Storage& mapping, const HeaderAmend& amend) {
  if (!mapping.file_shared()) return absl::OkStatus();
  if (mapping.lock_fd() >= 0) {
    // Checksums written into a file no path names would make nothing durable: say so instead.
    absl::StatusOr<bool> named = PathNamesFile(mapping.path(), mapping.lock_fd());
    if (!named.ok()) return named.status();
    if (!*named) {
      return absl::FailedPreconditionError(absl::StrCat(
          mapping.path(),
          " no longer names the mapped file (another file was saved or renamed over it): the "
          "inserts through this mapping are only in memory and in a file no path names, lost "
          "when the mapping ends; save the filter to keep them"));
    }
  }
  return RewriteMappedHeader(mapping, kFlagDirty, /*rehash=*/true, amend);
}

}  // namespace bloomery::internal

namespace bloomery {

namespace {

absl::StatusOr<FileInfo> InspectFrom(const internal::Source& source, bool verify_checksums) {
  using namespace internal;  // NOLINT(google-build-using-namespace): this file's own namespace
  absl::StatusOr<FileHeader> header = Validate(source);
  if (!header.ok()) return header.status();
  FileInfo info;
  info.kind = header->kind;
  info.version = kFormatVersion;
  info.file_bytes = source.size();
  info.payload_bytes = header->payload_bytes;
  info.bits = header->bits;
  info.hashes = header->hashes;
  info.counter_bits = header->counter_bits;
  info.stages = static_cast<uint32_t>(header->stages.size());
  info.capacity = header->capacity;
  info.fpr = header->fpr;
  info.insert_count = header->insert_count;
  info.seed = header->seed;
  info.integer_hash = static_cast<IntegerHash>(header->hash_id);
  info.dirty = (header->flags & kFlagDirty) != 0;
  if (verify_checksums && !info.dirty) {
    // Each chunk streamed through its checksum a piece at a time: memory stays one piece.
    std::vector<uint8_t> piece(std::min<uint64_t>(kPieceBytes, header->payload_bytes));
    const auto chunk_sum = [&](uint64_t i) -> absl::StatusOr<uint64_t> {
      const uint64_t begin = i << header->chunk_shift;
      const uint64_t end =
          std::min<uint64_t>(begin + (uint64_t{1} << header->chunk_shift), header->payload_bytes);
      XXH3_state_t state;
      XXH3_64bits_reset(&state);
      for (uint64_t at = begin; at < end; at += piece.size()) {
        const uint64_t n = std::min<uint64_t>(piece.size(), end - at);
        if (absl::Status s = source.Read(piece.data(), n, header->payload_offset + at); !s.ok()) {
          return s;
        }
        XXH3_64bits_update(&state, piece.data(), n);
      }
      return XXH3_64bits_digest(&state);
    };
    if (absl::Status s = CompareChunkTable(source, *header, chunk_sum); !s.ok()) return s;
    info.checksums_verified = true;
  }
  return info;
}

absl::StatusOr<FileInfo> Inspect(const internal::Input& input, bool verify_checksums) {
  absl::StatusOr<internal::Source> source = internal::Source::Open(input, /*writable=*/false);
  if (!source.ok()) return internal::Named(source.status(), input.name);
  absl::StatusOr<FileInfo> info = InspectFrom(*source, verify_checksums);
  if (!info.ok()) return internal::Named(info.status(), input.name);
  return info;
}

}  // namespace

absl::StatusOr<FileInfo> InspectFile(const std::string& path, bool verify_checksums) {
  return Inspect(internal::Input{path, std::nullopt}, verify_checksums);
}

absl::StatusOr<FileInfo> InspectBytes(std::string_view bytes, bool verify_checksums) {
  return Inspect(internal::Input{std::string(internal::kBytesName), bytes}, verify_checksums);
}

}  // namespace bloomery
