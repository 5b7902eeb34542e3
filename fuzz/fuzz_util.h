// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// fuzz_util.h: helpers shared by the fuzz harnesses.
#ifndef BLOOMERY_FUZZ_FUZZ_UTIL_H_
#define BLOOMERY_FUZZ_FUZZ_UTIL_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bloomery::fuzzing {

// The fuzz input as a file that lives in memory (memfd), reachable by path through /proc/self/fd:
// the loaders under test take paths, and the disk stays out of the loop.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(memfd_create("bloomery_fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  ~MemoryFile() { close(fd_); }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// Dies loudly: a fuzzer finding is an abort with a message, never a silent pass.
[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
  std::abort();
}

}  // namespace bloomery::fuzzing

#endif  // BLOOMERY_FUZZ_FUZZ_UTIL_H_
