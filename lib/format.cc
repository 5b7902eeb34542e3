// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "internal/format.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
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
namespace {

constexpr char kMagic[8] = {'B', 'L', 'O', 'O', 'M', 'E', 'R', 'Y'};
constexpr uint64_t kHeaderChecksumOffset = 248;
constexpr uint64_t kPayloadChecksumOffset = 240;
constexpr uint64_t kReservedBegin = 120;

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
};

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

uint64_t RoundUp(uint64_t x, uint64_t unit) { return (x + unit - 1) / unit * unit; }

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("corrupted bloomery file: ", what));
}

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

  // The first `size` bytes: a view of the caller's buffer, or read into `buffer`.
  absl::StatusOr<std::span<const uint8_t>> Prefix(uint64_t size,
                                                  std::vector<uint8_t>& buffer) const {
    if (!fd_) {
      if (size > bytes_.size()) return Corrupt("shorter than its header says (truncated)");
      return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes_.data()), size);
    }
    buffer.resize(size);
    if (absl::Status s = Read(buffer.data(), size, 0); !s.ok()) return s;
    return std::span<const uint8_t>(buffer);
  }

  // The validated fixed header (stage table not yet checked).
  absl::StatusOr<FileHeader> CheckFixed() const {
    if (size_ < kFixedHeaderBytes) {
      return absl::InvalidArgumentError(
          absl::StrFormat("not a bloomery filter file (%d bytes, shorter than the header)", size_));
    }
    uint8_t fixed[kFixedHeaderBytes];
    if (absl::Status s = Read(fixed, kFixedHeaderBytes, 0); !s.ok()) return s;
    return ValidateHeader(fixed, size_);
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

std::vector<uint64_t> ReadChunkTable(std::span<const uint8_t> region, const FileHeader& header) {
  const uint64_t chunks = ChunkCount(header.payload_bytes, header.chunk_shift);
  const uint8_t* table =
      region.data() + kFixedHeaderBytes + kStageEntryBytes * header.stages.size();
  std::vector<uint64_t> out(chunks);
  for (uint64_t i = 0; i < chunks; ++i) out[i] = Get64(table + 8 * i);
  return out;
}

absl::Status VerifyPayload(std::span<const std::span<const uint8_t>> parts,
                           std::span<const uint8_t> region, const FileHeader& header) {
  const std::vector<uint64_t> want = ReadChunkTable(region, header);
  const std::vector<uint64_t> got = HashChunks(parts, header.chunk_shift);
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      return Corrupt(absl::StrFormat("payload checksum mismatch in chunk %d (bytes %d..)", i,
                                     i << header.chunk_shift));
    }
  }
  return absl::OkStatus();
}

std::vector<std::span<const uint8_t>> StageSpans(const uint8_t* payload, const FileHeader& header) {
  std::vector<std::span<const uint8_t>> parts;
  for (const StageInfo& stage : header.stages) {
    const uint64_t bytes = StagePayloadBytes(stage.bits);
    parts.emplace_back(payload, bytes);
    payload += bytes;
  }
  return parts;
}

// Rewrites the header region of a mapped file with `flags`, recomputing the chunk checksums
// when `rehash` is set, and syncs the mapping.
absl::Status RewriteMappedHeader(const Storage& mapping, uint32_t flags, bool rehash) {
  const std::span<const uint8_t> whole(mapping.mapping_base(), mapping.mapping_size());
  absl::StatusOr<FileHeader> header = ValidateHeader(whole, whole.size());
  if (!header.ok()) return header.status();
  std::vector<uint64_t> chunks =
      rehash ? HashChunks(StageSpans(mapping.data(), *header), header->chunk_shift)
             : ReadChunkTable(whole, *header);
  header->flags = flags;
  absl::StatusOr<std::vector<uint8_t>> region = EncodeHeader(*header, chunks);
  if (!region.ok()) return region.status();
  std::memcpy(mapping.mapping_base(), region->data(), region->size());
  return mapping.Sync();
}

}  // namespace

uint64_t StagePayloadBytes(uint64_t bits) { return RoundUp((bits + 7) / 8, 64); }

FileHeader SingleStageHeader(FilterKind kind, const Plan& plan, uint64_t seed) {
  FileHeader header;
  header.kind = kind;
  header.seed = seed;
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

absl::StatusOr<FileHeader> ValidateHeader(std::span<const uint8_t> bytes, uint64_t file_size) {
  if (bytes.size() < kFixedHeaderBytes || file_size < kFixedHeaderBytes ||
      std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError("not a bloomery filter file (bad magic or too short)");
  }
  const uint8_t* p = bytes.data();
  const uint32_t version = Get32(p + kVersion);
  if (version > kFormatVersion) {
    return absl::UnimplementedError(absl::StrFormat(
        "file format version %d is newer than this library reads (%d)", version, kFormatVersion));
  }
  if (version == 0) return Corrupt("format version 0");
  FileHeader h;
  const uint32_t kind = Get32(p + kKind);
  if (kind < 1 || kind > 4) return Corrupt(absl::StrFormat("unknown filter kind %d", kind));
  h.kind = static_cast<FilterKind>(kind);
  h.flags = Get32(p + kFlags);
  if (h.flags & ~kFlagDirty) return Corrupt(absl::StrFormat("unknown flags %#x", h.flags));
  h.hash_id = Get32(p + kHashId);
  if (h.hash_id != 1) return Corrupt(absl::StrFormat("unknown hash function id %d", h.hash_id));
  h.seed = Get64(p + kSeed);
  h.hashes = Get32(p + kHashes);
  if (h.hashes < kMinHashes || h.hashes > kMaxHashes) {
    return Corrupt(absl::StrFormat("hashes %d outside [1, 16]", h.hashes));
  }
  h.counter_bits = Get32(p + kCounterBits);
  const bool counting = h.kind == FilterKind::kCounting;
  if (counting ? (h.counter_bits != 4 && h.counter_bits != 8) : h.counter_bits != 0) {
    return Corrupt(absl::StrFormat("counter width %d invalid for this kind", h.counter_bits));
  }
  h.bits = Get64(p + kBits);
  if (h.bits == 0 || h.bits > kMaxBits * 8) return Corrupt("bits out of range");
  h.capacity = Get64(p + kCapacity);
  h.fpr = std::bit_cast<double>(Get64(p + kFpr));
  if (!(h.fpr >= 0.0 && h.fpr < 1.0)) return Corrupt("planned fpr outside [0, 1)");
  h.insert_count = Get64(p + kInsertCount);
  const uint32_t stage_count = Get32(p + kStageCount);
  const uint32_t max_stages = h.kind == FilterKind::kScalable ? kMaxStages : 1;
  if (stage_count < 1 || stage_count > max_stages) {
    return Corrupt(absl::StrFormat("stage count %d invalid for this kind", stage_count));
  }
  h.chunk_shift = Get32(p + kChunkShift);
  if (h.chunk_shift < 12 || h.chunk_shift > 30) return Corrupt("checksum chunk size out of range");
  h.payload_offset = Get64(p + kPayloadOffset);
  h.payload_bytes = Get64(p + kPayloadBytes);
  h.param0 = Get64(p + kParam0);
  h.param1 = Get64(p + kParam1);
  h.param2 = Get64(p + kParam2);
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
  if (bytes.size() < h.payload_offset) {
    h.stages.resize(stage_count);  // entries unknown until the whole region is read
    return h;
  }
  const std::span<const uint8_t> region = bytes.first(h.payload_offset);
  if (HeaderChecksum(region) != Get64(p + kHeaderChecksumOffset)) {
    return Corrupt("header checksum mismatch");
  }
  uint64_t total_bits = 0;
  uint64_t total_bytes = 0;
  for (uint32_t i = 0; i < stage_count; ++i) {
    const uint8_t* e = p + kFixedHeaderBytes + kStageEntryBytes * i;
    StageInfo s{Get64(e), Get32(e + 8), Get64(e + 16), Get64(e + 24)};
    if (Get32(e + 12) != 0) return Corrupt("reserved stage bytes are not zero");
    if (s.bits == 0 || s.bits > kMaxBits * 8) return Corrupt("stage bits out of range");
    if (s.hashes < kMinHashes || s.hashes > kMaxHashes) return Corrupt("stage hashes out of range");
    const bool block_aligned = h.kind != FilterKind::kClassic;
    if (block_aligned ? s.bits % kBlockBits != 0 : s.bits % s.hashes != 0) {
      return Corrupt("stage bits do not fit the filter's layout");
    }
    total_bits += s.bits;
    total_bytes += StagePayloadBytes(s.bits);
    h.stages.push_back(s);
  }
  if (total_bits != h.bits || total_bytes != h.payload_bytes) {
    return Corrupt("stage sizes do not add up to the header's totals");
  }
  if (stage_count == 1 && h.stages[0].hashes != h.hashes) {
    return Corrupt("stage hashes differ from the header's");
  }
  const uint64_t chunks = ChunkCount(h.payload_bytes, h.chunk_shift);
  const uint8_t* table = p + kFixedHeaderBytes + kStageEntryBytes * stage_count;
  if (XXH3_64bits(table, 8 * chunks) != Get64(p + kPayloadChecksumOffset)) {
    return Corrupt("checksum table mismatch");
  }
  return h;
}

bool RecomputeChecksums(std::span<uint8_t> file) {
  if (file.size() < kFixedHeaderBytes) return false;
  uint8_t* p = file.data();
  const uint64_t stages = Get32(p + kStageCount);
  const uint32_t chunk_shift = Get32(p + kChunkShift);
  const uint64_t offset = Get64(p + kPayloadOffset);
  if (stages > kMaxStages || chunk_shift < 12 || chunk_shift > 30 || offset > file.size()) {
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
  for (const StageInfo& s : h.stages) h.payload_bytes += StagePayloadBytes(s.bits);
  const uint64_t chunks = ChunkCount(h.payload_bytes, h.chunk_shift);
  if (chunk_checksums.size() != chunks) return absl::InternalError("chunk checksum count");
  h.payload_offset = HeaderRegionBytes(h.stages.size(), chunks);
  std::vector<uint8_t> region(h.payload_offset, 0);
  uint8_t* p = region.data();
  std::memcpy(p, kMagic, sizeof(kMagic));
  Put32(p + kVersion, kFormatVersion);
  Put32(p + kKind, static_cast<uint32_t>(h.kind));
  Put32(p + kFlags, h.flags);
  Put32(p + kHashId, h.hash_id);
  Put64(p + kSeed, h.seed);
  Put32(p + kHashes, h.hashes);
  Put32(p + kCounterBits, h.counter_bits);
  Put64(p + kBits, h.bits);
  Put64(p + kCapacity, h.capacity);
  Put64(p + kFpr, std::bit_cast<uint64_t>(h.fpr));
  Put64(p + kInsertCount, h.insert_count);
  Put32(p + kStageCount, static_cast<uint32_t>(h.stages.size()));
  Put32(p + kChunkShift, h.chunk_shift);
  Put64(p + kPayloadOffset, h.payload_offset);
  Put64(p + kPayloadBytes, h.payload_bytes);
  Put64(p + kParam0, h.param0);
  Put64(p + kParam1, h.param1);
  Put64(p + kParam2, h.param2);
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
    if (payloads[i].size() != StagePayloadBytes(header.stages[i].bits)) {
      return absl::InternalError("stage payload size");
    }
  }
  header.hash_id = kHashIdXxh3_128;
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

absl::StatusOr<LoadedFile> LoadFrom(const Source& source, FilterKind expected,
                                    const LoadOptions& options) {
  absl::StatusOr<FileHeader> fixed = source.CheckFixed();
  if (!fixed.ok()) return fixed.status();
  if (absl::Status s = CheckKind(*fixed, expected); !s.ok()) return s;
  if (absl::Status s =
          internal::CheckMemoryCap(fixed->payload_bytes + fixed->payload_offset, options.max_bytes);
      !s.ok()) {
    return s;
  }
  std::vector<uint8_t> buffer;
  absl::StatusOr<std::span<const uint8_t>> region = source.Prefix(fixed->payload_offset, buffer);
  if (!region.ok()) return region.status();
  absl::StatusOr<FileHeader> header = ValidateHeader(*region, source.size());
  if (!header.ok()) return header.status();
  const bool dirty = (header->flags & kFlagDirty) != 0;
  if (dirty && options.verify_checksums && !options.allow_dirty) {
    return Corrupt(
        "the file was mapped read-write and not flushed (checksums are stale); "
        "load it with allow_dirty to accept it");
  }
  LoadedFile loaded;
  StorageOptions storage_options;
  storage_options.huge_pages = options.huge_pages;
  storage_options.max_bytes = options.max_bytes;  // a caller's cap above the machine's is honoured
  uint64_t offset = header->payload_offset;
  std::vector<std::span<const uint8_t>> parts;
  for (const StageInfo& stage : header->stages) {
    const uint64_t bytes = StagePayloadBytes(stage.bits);
    absl::StatusOr<Storage> storage = Storage::Allocate(bytes, storage_options);
    if (!storage.ok()) return storage.status();
    if (absl::Status s = source.Read(storage->data(), bytes, offset); !s.ok()) return s;
    parts.emplace_back(storage->data(), bytes);
    loaded.stages.push_back(*std::move(storage));
    offset += bytes;
  }
  if (options.verify_checksums && !dirty) {
    if (absl::Status s = VerifyPayload(parts, *region, *header); !s.ok()) return s;
  }
  loaded.header = *std::move(header);
  return loaded;
}

absl::StatusOr<MappedFile> MapFrom(const Source& source, FilterKind expected, MapMode mode,
                                   const LoadOptions& options) {
  const bool writable = mode == MapMode::kReadWrite;
  absl::StatusOr<FileHeader> fixed = source.CheckFixed();
  if (!fixed.ok()) return fixed.status();
  if (absl::Status s = CheckKind(*fixed, expected); !s.ok()) return s;
  absl::StatusOr<Storage> mapping = Storage::MapFile(
      source.fd(), source.size(), fixed->payload_offset, fixed->payload_bytes, writable);
  if (!mapping.ok()) return mapping.status();
  absl::StatusOr<FileHeader> header = ValidateHeader(
      std::span<const uint8_t>(mapping->mapping_base(), mapping->mapping_size()), source.size());
  if (!header.ok()) return header.status();
  const bool dirty = (header->flags & kFlagDirty) != 0;
  if (options.verify_checksums) {
    if (dirty && !options.allow_dirty) {
      return Corrupt(
          "the file was mapped read-write and not flushed (checksums are stale); "
          "map it with allow_dirty to accept it");
    }
    if (!dirty) {
      const std::span<const uint8_t> region(mapping->mapping_base(), header->payload_offset);
      if (absl::Status s = VerifyPayload(StageSpans(mapping->data(), *header), region, *header);
          !s.ok()) {
        return s;
      }
    }
  }
  if (writable) {
    if (absl::Status s = RewriteMappedHeader(*mapping, header->flags | kFlagDirty, false);
        !s.ok()) {
      return s;
    }
    header->flags |= kFlagDirty;
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

absl::StatusOr<MappedFile> MapFilterFile(const std::string& path, FilterKind expected, MapMode mode,
                                         const LoadOptions& options) {
  absl::StatusOr<Source> source =
      Source::Open(Input{path, std::nullopt}, mode == MapMode::kReadWrite);
  if (!source.ok()) return Named(source.status(), path);
  absl::StatusOr<MappedFile> mapped = MapFrom(*source, expected, mode, options);
  if (!mapped.ok()) return Named(mapped.status(), path);
  return mapped;
}

absl::Status FlushStorage(const FilterMemory& memory) {
  const Storage& storage = StorageOf(memory);
  if (!storage.file_shared()) {
    return absl::FailedPreconditionError("Flush needs a filter mapped with MapMode::kReadWrite");
  }
  return FlushMappedFile(storage);
}

absl::Status FlushMappedFile(const Storage& mapping) {
  if (!mapping.file_shared()) return absl::OkStatus();
  return RewriteMappedHeader(mapping, /*flags=*/0, /*rehash=*/true);
}

}  // namespace bloomery::internal

namespace bloomery {

namespace {

absl::StatusOr<FileInfo> InspectFrom(const internal::Source& source, bool verify_checksums) {
  using namespace internal;  // NOLINT(google-build-using-namespace): this file's own namespace
  absl::StatusOr<FileHeader> fixed = source.CheckFixed();
  if (!fixed.ok()) return fixed.status();
  std::vector<uint8_t> buffer;
  absl::StatusOr<std::span<const uint8_t>> region = source.Prefix(fixed->payload_offset, buffer);
  if (!region.ok()) return region.status();
  absl::StatusOr<FileHeader> header = ValidateHeader(*region, source.size());
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
  info.dirty = (header->flags & kFlagDirty) != 0;
  if (verify_checksums && !info.dirty) {
    // One chunk at a time: the checksum table is per chunk, so no more than a chunk is held, and
    // no more than the payload holds.
    const std::vector<uint64_t> want = ReadChunkTable(*region, *header);
    std::vector<uint8_t> chunk(
        std::min<uint64_t>(uint64_t{1} << header->chunk_shift, header->payload_bytes));
    for (uint64_t i = 0; i < want.size(); ++i) {
      const uint64_t begin = i << header->chunk_shift;
      const uint64_t size = std::min<uint64_t>(chunk.size(), header->payload_bytes - begin);
      if (absl::Status s = source.Read(chunk.data(), size, header->payload_offset + begin);
          !s.ok()) {
        return s;
      }
      if (XXH3_64bits(chunk.data(), size) != want[i]) {
        return Corrupt(
            absl::StrFormat("payload checksum mismatch in chunk %d (bytes %d..)", i, begin));
      }
    }
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
