// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// temp_dir.h: a fresh directory under the system's temp directory, removed with what it holds when
// the object ends. The tests' one scratch directory.
#ifndef BLOOMERY_TESTS_TEMP_DIR_H_
#define BLOOMERY_TESTS_TEMP_DIR_H_

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace bloomery::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "bloomery_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] std::string File(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace bloomery::testing

#endif  // BLOOMERY_TESTS_TEMP_DIR_H_
