// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// mapped_follower.cc: StampFile, the one stat(2) behind MappedFollower::Refresh
// (include/bloomery/mapped_follower.h).
#include "bloomery/mapped_follower.h"

#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace bloomery {

absl::StatusOr<FileStamp> StampFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return absl::ErrnoToStatus(err, absl::StrCat("stat ", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
  }
  return FileStamp{
      .device = static_cast<uint64_t>(st.st_dev),
      .inode = static_cast<uint64_t>(st.st_ino),
      .size = static_cast<uint64_t>(st.st_size),
      .modified_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
  };
}

}  // namespace bloomery
