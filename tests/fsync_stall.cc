// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// fsync_stall: an LD_PRELOAD shim for cli_build_test. When $BLOOMERY_STALL_FIFO names a FIFO, the
// fsync of a save's temp file (`.NAME.tmp.*`) writes one byte to that FIFO and then never returns:
// the test learns, without sleeping or guessing, that the process is in the middle of a save, with
// the temp file complete beside its target, and signals it there.
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int fsync(int fd) {
  const char* fifo = std::getenv("BLOOMERY_STALL_FIFO");
  if (fifo != nullptr) {
    char link[64];
    char target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n > 0) {
      target[n] = '\0';
      if (std::strstr(target, ".tmp.") != nullptr) {
        const int out = open(fifo, O_WRONLY | O_CLOEXEC);
        if (out >= 0) {
          [[maybe_unused]] const ssize_t put = write(out, "s", 1);
          close(out);
        }
        while (true) pause();
      }
    }
  }
  using Fsync = int (*)(int);
  static const auto real = reinterpret_cast<Fsync>(dlsym(RTLD_NEXT, "fsync"));
  return real(fd);
}
