// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// open_count.cc: open, openat and pread (each spelling glibc may bind a call to) defined in the
// test binary, ahead of libc's: each counts what open_count.h asks, then calls libc's own.
// The system headers must declare these functions under their plain names: no LFS renaming, no
// fortified inline wrappers.
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#include "open_count.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstring>

namespace bloomery::testing {
namespace {

// Plain storage (no constructor): an open may come before this file's statics are initialised.
char target[4096];
std::atomic<bool> counting{false};
std::atomic<int> opens{0};
std::atomic<int> header_reads{0};
std::atomic<int> target_fd{-1};

template <typename Fn>
Fn Real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

int Opened(const char* path, int fd) {
  if (fd >= 0 && path != nullptr && counting.load() && std::strcmp(path, target) == 0) {
    opens.fetch_add(1);
    target_fd.store(fd);
  }
  return fd;
}

ssize_t Read(int fd, off64_t offset, ssize_t got) {
  if (offset == 0 && counting.load() && fd == target_fd.load()) header_reads.fetch_add(1);
  return got;
}

mode_t ModeOf(int flags, va_list args) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, mode_t) : 0;
}

}  // namespace

void CountReadsOf(const std::string& path) {
  counting.store(false);
  std::strncpy(target, path.c_str(), sizeof(target) - 1);
  opens.store(0);
  header_reads.store(0);
  target_fd.store(-1);
  counting.store(true);
}

FileReads CountedReads() { return {opens.load(), header_reads.load()}; }

}  // namespace bloomery::testing

using bloomery::testing::Opened;
using bloomery::testing::Read;
using bloomery::testing::Real;

#define BLOOMERY_OPEN(name)                                                              \
  extern "C" int name(const char* path, int flags, ...) {                                \
    va_list args;                                                                        \
    va_start(args, flags);                                                               \
    const mode_t mode = bloomery::testing::ModeOf(flags, args);                          \
    va_end(args);                                                                        \
    return Opened(path, Real<int (*)(const char*, int, ...)>(#name)(path, flags, mode)); \
  }
#define BLOOMERY_OPENAT(name)                                                                      \
  extern "C" int name(int dir, const char* path, int flags, ...) {                                 \
    va_list args;                                                                                  \
    va_start(args, flags);                                                                         \
    const mode_t mode = bloomery::testing::ModeOf(flags, args);                                    \
    va_end(args);                                                                                  \
    return Opened(path, Real<int (*)(int, const char*, int, ...)>(#name)(dir, path, flags, mode)); \
  }
BLOOMERY_OPEN(open)
BLOOMERY_OPEN(open64)
BLOOMERY_OPENAT(openat)
BLOOMERY_OPENAT(openat64)
#undef BLOOMERY_OPEN
#undef BLOOMERY_OPENAT

// What a fortified build calls.
extern "C" int __open_2(const char* path, int flags) {
  return Opened(path, Real<int (*)(const char*, int)>("__open_2")(path, flags));
}
extern "C" int __open64_2(const char* path, int flags) {
  return Opened(path, Real<int (*)(const char*, int)>("__open64_2")(path, flags));
}

extern "C" ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  return Read(fd, offset,
              Real<ssize_t (*)(int, void*, size_t, off_t)>("pread")(fd, buf, n, offset));
}
extern "C" ssize_t pread64(int fd, void* buf, size_t n, off64_t offset) {
  return Read(fd, offset,
              Real<ssize_t (*)(int, void*, size_t, off64_t)>("pread64")(fd, buf, n, offset));
}
extern "C" ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t offset, size_t size) {
  return Read(fd, offset,
              Real<ssize_t (*)(int, void*, size_t, off64_t, size_t)>("__pread64_chk")(
                  fd, buf, n, offset, size));
}

extern "C" int close(int fd) {
  int expected = fd;
  bloomery::testing::target_fd.compare_exchange_strong(expected, -1);
  return Real<int (*)(int)>("close")(fd);
}
