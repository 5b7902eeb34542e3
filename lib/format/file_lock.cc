// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// LockForUpdate (file.h): an flock on what a filter's path names now, re-taken until it is; and
// LockMapped (format/internal/format_io.h), the shared flock a read-write mapping holds against it,
// and PathNamesFile, which both (and a mapping's Flush) ask of what a path names now.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/file.h"
#include "format/internal/format_io.h"

namespace bloomery {
namespace {

// The pid that holds an flock on the file `st` describes, from /proc/locks (Linux); 0 if unknown.
int LockHolder(const struct stat& st) {
  FILE* locks = std::fopen("/proc/locks", "re");
  if (locks == nullptr) return 0;
  const std::string id = absl::StrFormat(" %02x:%02x:%d ", major(st.st_dev), minor(st.st_dev),
                                         static_cast<uint64_t>(st.st_ino));
  int holder = 0;
  char line[256];
  while (holder == 0 && std::fgets(line, sizeof(line), locks) != nullptr) {
    // "N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE 0 EOF"; waiters' lines carry "->".
    if (std::strstr(line, "FLOCK") == nullptr || std::strstr(line, "->") != nullptr) continue;
    const char* at = std::strstr(line, id.c_str());
    if (at == nullptr) continue;
    const char* p = at;
    while (p > line && p[-1] != ' ') --p;  // the pid field ends where the id begins
    holder = std::atoi(p);
  }
  std::fclose(locks);
  return holder;
}

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// flock(fd, operation), retried when a signal interrupts it; 0, or -1 with errno set.
int Flock(int fd, int operation) {
  int rc;
  do {
    rc = flock(fd, operation);
  } while (rc != 0 && errno == EINTR);
  return rc;
}

}  // namespace

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

FileLock::~FileLock() { Release(); }

void FileLock::Release() noexcept {
  if (fd_ >= 0) close(std::exchange(fd_, -1));  // closing the last descriptor drops the flock
}

absl::StatusOr<FileLock> LockForUpdate(const std::string& path, LockWait wait) {
  for (;;) {
    absl::StatusOr<std::string> target = detail::ResolveSaveTarget(path);
    if (!target.ok()) return target.status();
    // A file that does not exist yet is created by the first saver: until then its directory
    // stands in for it.
    bool on_directory = false;
    int raw = open(target->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (raw < 0 && errno == ENOENT) {
      const size_t slash = target->rfind('/');
      const std::string dir =
          slash == std::string::npos ? "." : target->substr(0, slash == 0 ? 1 : slash);
      raw = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      on_directory = true;
    }
    if (raw < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", *target));
    FileLock lock;
    lock.fd_ = raw;
    lock.path_ = *target;
    struct stat held;
    if (fstat(raw, &held) != 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot stat ", *target));
    }
    if (!on_directory && !S_ISREG(held.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(*target, " is not a regular file"));
    }
    const int rc = Flock(raw, LOCK_EX | (wait == LockWait::kFailFast ? LOCK_NB : 0));
    if (rc != 0 && errno == EWOULDBLOCK) {
      const int holder = LockHolder(held);
      return absl::UnavailableError(
          holder > 0 ? absl::StrFormat("%s is locked by pid %d", *target, holder)
                     : absl::StrFormat("%s is locked by another process", *target));
    }
    if (rc != 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot lock ", *target));
    // The holder before us may have saved: its rename put a new file at the path, and our lock is
    // on the old one (or on the directory, and the file now exists). Then lock what is there now.
    struct stat now;
    const bool exists = stat(target->c_str(), &now) == 0;
    if (on_directory ? !exists : (exists && SameFile(held, now))) return lock;
    if (!on_directory && !exists && errno != ENOENT) {
      return absl::ErrnoToStatus(errno, absl::StrCat("cannot stat ", *target));
    }
  }
}

namespace detail {

absl::StatusOr<bool> PathNamesFile(const std::string& path, int fd) {
  struct stat open_file;
  if (fstat(fd, &open_file) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("cannot stat the open file of ", path));
  }
  struct stat now;
  return stat(path.c_str(), &now) == 0 && SameFile(open_file, now);
}

absl::StatusOr<int> LockMapped(int fd, const std::string& path) {
  const int held = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (held < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot lock ", path));
  if (Flock(held, LOCK_SH) != 0) {
    const int error = errno;
    close(held);
    return absl::ErrnoToStatus(error, absl::StrCat("cannot lock ", path));
  }
  const absl::StatusOr<bool> named = PathNamesFile(path, held);
  if (!named.ok() || !*named) {
    close(held);
    if (!named.ok()) return named.status();
    return -1;
  }
  return held;
}

}  // namespace detail
}  // namespace bloomery
