// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The container as files (format/internal/format_io.h): the crash-safe save, loads from a file or
// bytes, mappings and their Flush, InspectFile. Each opens its file once and hands it to the
// codec's validator (format_codec.cc) once.
#include "format/internal/format_io.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/file.h"
#include "memory/internal/save_cleanup.h"

namespace bloomery::detail {

namespace {

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

// An open regular file as a ByteSource: reads are bounded by its size when it was opened.
class FileSource final : public ByteSource {
 public:
  // Opens the file without blocking (a FIFO must not hang us) and refuses anything but a regular
  // file before reading a byte.
  static absl::StatusOr<std::unique_ptr<FileSource>> Open(const std::string& path, bool writable) {
    const int raw = open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK);
    if (raw < 0) return ErrnoStatus("cannot open", path, errno);
    auto fd = std::make_unique<Fd>(raw);
    struct stat st;
    if (fstat(raw, &st) != 0) return ErrnoStatus("cannot stat", path, errno);
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
    }
    return std::unique_ptr<FileSource>(
        new FileSource(std::move(fd), static_cast<uint64_t>(st.st_size), path));
  }

  int fd() const { return fd_->get(); }

  absl::Status Read(uint8_t* out, uint64_t size, uint64_t offset) const override {
    return ReadAt(fd_->get(), out, size, offset, path_);
  }

 private:
  FileSource(std::unique_ptr<Fd> fd, uint64_t size, std::string path)
      : ByteSource(size), fd_(std::move(fd)), path_(std::move(path)) {}

  std::unique_ptr<Fd> fd_;
  std::string path_;
};

// The bytes of an Input: the open regular file it names, or the caller's buffer.
absl::StatusOr<std::unique_ptr<ByteSource>> OpenSource(const Input& input) {
  if (input.bytes) return std::make_unique<MemorySource>(*input.bytes);
  absl::StatusOr<std::unique_ptr<FileSource>> file =
      FileSource::Open(input.name, /*writable=*/false);
  if (!file.ok()) return file.status();
  return std::unique_ptr<ByteSource>(*std::move(file));
}

// Every error about a file names it (a tool merging ten files must say which one is bad).
absl::Status Named(const absl::Status& status, const std::string& name) {
  if (status.ok() || absl::StrContains(status.message(), name)) return status;
  return absl::Status(status.code(), absl::StrCat(name, ": ", status.message()));
}

// Rewrites the header region of a mapped file, which holds the valid `header`, with `flags` (and,
// when `rehash` is set, the chunk checksums of its payload as it is now and the kind's fields
// `amend` brings up to date); `header` becomes what the file then holds. The mapping is synced
// before the header changes and after: a header that reaches the disk never describes payload
// pages that have not.
absl::Status RewriteMappedHeader(const Storage& mapping, FileHeader& header, uint32_t flags,
                                 bool rehash, const HeaderAmend& amend = nullptr) {
  const std::span<uint8_t> whole(mapping.mapping_base(), mapping.mapping_size());
  if (absl::Status s = mapping.Sync(); !s.ok()) return s;
  if (rehash) {
    header.flags = flags;
    if (amend) amend(header);
    absl::StatusOr<std::vector<uint8_t>> region =
        EncodeHeader(header, HashChunks(StageSpans(mapping.data(), header), header.chunk_shift));
    if (!region.ok()) return region.status();
    // As the writer: a header the readers would refuse never reaches the file.
    absl::StatusOr<FileHeader> check = ValidateHeader(*region, whole.size());
    if (!check.ok()) {
      return absl::InternalError(
          absl::StrCat("refusing to flush an invalid header: ", check.status().message()));
    }
    std::memcpy(whole.data(), region->data(), region->size());
    header = *std::move(check);
  } else {
    header.flags = flags;
    header.header_checksum = RewriteFlags(whole.first(header.payload_offset), flags);
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
    const MemorySource mapped(whole, whole.size());
    if (!VerifyPayload(StageSpans(mapping.data(), *header), mapped, *header).ok()) return;
    (void)RewriteMappedHeader(mapping, *header, header->flags & ~kFlagDirty, /*rehash=*/false);
  } catch (...) {  // std::bad_alloc: the file stays DIRTY
  }
}

}  // namespace

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
  const detail::SaveTempSlot cleanup_on_signal(temp);
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

absl::StatusOr<std::string> EncodeFileRegion(FileHeader header,
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
  return std::string(reinterpret_cast<const char*>(region->data()), region->size());
}

absl::StatusOr<std::string> WriteFilter(const std::string* path, FileHeader header,
                                        std::span<const std::span<const uint8_t>> payloads) {
  absl::StatusOr<std::string> region = EncodeFileRegion(std::move(header), payloads);
  if (!region.ok()) return region.status();
  if (path == nullptr) {
    uint64_t total = region->size();
    for (std::span<const uint8_t> payload : payloads) total += payload.size();
    std::string out = *std::move(region);
    out.reserve(total);
    for (std::span<const uint8_t> payload : payloads) {
      out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
    }
    return out;
  }
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(region->data()),
                                       region->size());
  if (absl::Status s = SaveFile(*path, bytes, payloads); !s.ok()) return s;
  return std::string();
}

namespace {

// Whether to verify the payload's checksums: as the caller asks, except for a DIRTY file the
// caller accepts as it is (allow_dirty), whose checksums may be stale.
bool ShouldVerify(const FileHeader& header, const LoadOptions& options) {
  return options.verify_checksums && !((header.flags & kFlagDirty) != 0 && options.allow_dirty);
}

// The payload (`parts`) against its checksums, as ShouldVerify says. A DIRTY file is accepted when
// they match (a read-write mapping flushed and not written since, e.g. by a live writer); when they
// do not, it is stale rather than corrupt, and the message says how to accept it.
absl::Status VerifyLoaded(std::span<const std::span<const uint8_t>> parts, const ByteSource& source,
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

// The cap is on the payload, the memory the filter will hold (the validator has tied it to the
// file's size), as FilterOptions::max_memory_bytes is at creation: a filter created under a cap
// loads back under it. It is checked before anything the size of the file is read.
absl::StatusOr<FilterFile> LoadFrom(const ByteSource& source, std::optional<FilterKind> expected,
                                    const LoadOptions& options) {
  absl::StatusOr<FileHeader> header =
      Validate(source, {.kind = expected, .max_payload_bytes = options.max_bytes});
  if (!header.ok()) return header.status();
  FilterFile loaded;
  StorageOptions storage_options;
  storage_options.huge_pages = options.huge_pages;
  storage_options.max_bytes = options.max_bytes;  // a caller's cap above the machine's is honoured
  storage_options.allocator = options.allocator;
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

absl::StatusOr<FilterFile> MapFrom(const FileSource& source, FilterKind expected, MapMode mode,
                                   const LoadOptions& options) {
  const bool writable = mode == MapMode::kReadWrite;
  absl::StatusOr<FileHeader> header = Validate(source, {.kind = expected});
  if (!header.ok()) {
    // A writer's Flush may have rewritten the header while it was read: a second read that
    // passes says so (MapFilterFile retries), one that fails too says the file is bad.
    if (header.status().code() == absl::StatusCode::kDataLoss &&
        Validate(source, {.kind = expected}).ok()) {
      return absl::AbortedError("the header changed while it was read");
    }
    return header.status();
  }
  absl::StatusOr<Storage> mapping = Storage::MapFile(
      source.fd(), source.size(), header->payload_offset, header->payload_bytes, writable);
  if (!mapping.ok()) return mapping.status();
  // What is mapped is what is used: the header validated must be the one mapped.
  const MemorySource mapped({mapping->mapping_base(), mapping->mapping_size()}, source.size());
  if (!HoldsHeader({mapping->mapping_base(), mapping->mapping_size()}, *header)) {
    return absl::AbortedError("the header changed while it was read");  // as above
  }
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
    if (absl::Status s =
            RewriteMappedHeader(*mapping, *header, header->flags | kFlagDirty, /*rehash=*/false);
        !s.ok()) {
      return s;
    }
    if (!was_dirty) mapping->set_close_hook(&CloseMappedFile);
  }
  FilterFile mapped_file{*std::move(header), {}};
  mapped_file.stages.push_back(*std::move(mapping));
  return mapped_file;
}

}  // namespace

absl::StatusOr<FilterFile> LoadFilter(const Input& input, std::optional<FilterKind> expected,
                                      const LoadOptions& options) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenSource(input);
  if (!source.ok()) return Named(source.status(), input.name);
  absl::StatusOr<FilterFile> loaded = LoadFrom(**source, expected, options);
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

absl::StatusOr<FilterFile> MapFilterFile(const std::string& path, FilterKind expected, MapMode mode,
                                         const LoadOptions& options) {
  const bool writable = mode == MapMode::kReadWrite;
  // A writer's Flush (or a read-write Map marking the file DIRTY) rewrites the header in place: a
  // map that read the header during that write, or before it and mapped the file after it, reads
  // again, a few times, before it calls the file's header unstable (MapFrom's Aborted).
  constexpr int kHeaderReads = 8;
  int header_reads = 0;
  for (;;) {
    absl::StatusOr<std::unique_ptr<FileSource>> source = FileSource::Open(path, writable);
    if (!source.ok()) return Named(source.status(), path);
    int lock_fd = -1;
    if (writable) {
      absl::StatusOr<int> locked = LockMapped((*source)->fd(), path);
      if (!locked.ok()) return Named(locked.status(), path);
      if (*locked < 0) continue;
      lock_fd = *locked;
    }
    absl::StatusOr<FilterFile> mapped = MapFrom(**source, expected, mode, options);
    if (!mapped.ok()) {
      if (lock_fd >= 0) close(lock_fd);
      if (mapped.status().code() != absl::StatusCode::kAborted) return Named(mapped.status(), path);
      if (++header_reads < kHeaderReads) continue;
      return Named(
          Corrupt(absl::StrCat("the header changed while it was read, ", kHeaderReads,
                               " times (a writer rewrites it faster than it can be mapped)")),
          path);
    }
    if (writable) mapped->stages[0].set_file_lock(lock_fd, AbsolutePath(path));
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
  const std::span<const uint8_t> whole(mapping.mapping_base(), mapping.mapping_size());
  absl::StatusOr<FileHeader> header = ValidateHeader(whole, whole.size());
  if (!header.ok()) return header.status();
  return RewriteMappedHeader(mapping, *header, kFlagDirty, /*rehash=*/true, amend);
}

}  // namespace bloomery::detail

namespace bloomery {

namespace {

absl::StatusOr<FileInfo> InspectFrom(const detail::ByteSource& source, bool verify_checksums) {
  using namespace detail;  // NOLINT(google-build-using-namespace): this file's own namespace
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
    if (absl::Status s = VerifyStoredPayload(source, *header); !s.ok()) return s;
    info.checksums_verified = true;
  }
  return info;
}

absl::StatusOr<FileInfo> Inspect(const detail::Input& input, bool verify_checksums) {
  absl::StatusOr<std::unique_ptr<detail::ByteSource>> source = detail::OpenSource(input);
  if (!source.ok()) return detail::Named(source.status(), input.name);
  absl::StatusOr<FileInfo> info = InspectFrom(**source, verify_checksums);
  if (!info.ok()) return detail::Named(info.status(), input.name);
  return info;
}

}  // namespace

absl::StatusOr<FileInfo> InspectFile(const std::string& path, bool verify_checksums) {
  return Inspect(detail::Input{path, std::nullopt}, verify_checksums);
}

absl::StatusOr<FileInfo> InspectBytes(std::string_view bytes, bool verify_checksums) {
  return Inspect(detail::Input{std::string(detail::kBytesName), bytes}, verify_checksums);
}

}  // namespace bloomery
