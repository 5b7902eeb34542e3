// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_io.h: streaming lines in and out, and the progress bar of long subcommands.
//
// Keys are lines: the bytes between newlines, without the '\n' (a '\r' is kept: keys are bytes).
// A last line without a newline is still a line. Input is read in large blocks and handed out in
// batches of string_views, so the filters' batch calls see many keys at once.
#ifndef BLOOMERY_TOOLS_CLI_IO_H_
#define BLOOMERY_TOOLS_CLI_IO_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace bloomery::cli {

class LineReader {
 public:
  // Opens `path` for reading; "-" is stdin. Errors: NotFound / PermissionDenied (exit code 1)
  // naming the file.
  [[nodiscard]] static absl::StatusOr<LineReader> Open(const std::string& path);

  LineReader(LineReader&& other) noexcept;
  LineReader& operator=(LineReader&&) = delete;
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;
  ~LineReader();

  // Replaces `lines` with the next lines, at most `max_lines` (>= 1); empty at the end of input.
  // The views stay valid until the next call. Errors: DataLoss on a read error.
  [[nodiscard]] absl::Status NextBatch(size_t max_lines, std::vector<std::string_view>& lines);

  // Bytes consumed so far, and the input's size (0 when unknown: a pipe or a terminal).
  [[nodiscard]] uint64_t bytes_read() const { return bytes_read_; }
  [[nodiscard]] uint64_t total_bytes() const { return total_bytes_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  LineReader(int fd, bool owned, std::string path, uint64_t total_bytes);
  absl::Status Fill();

  int fd_ = -1;
  bool owned_ = false;
  bool eof_ = false;
  std::string path_;
  uint64_t total_bytes_ = 0;
  uint64_t bytes_read_ = 0;
  std::string buffer_;
  size_t begin_ = 0;  // first unconsumed byte of buffer_
  size_t end_ = 0;    // one past the last valid byte of buffer_
};

// Buffered stdout for line output. Errors: DataLoss when a write fails (disk full, closed pipe).
class LineWriter {
 public:
  LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  void Write(std::string_view line);  // appends line and '\n'
  [[nodiscard]] absl::Status Flush();

 private:
  std::string buffer_;
  bool failed_ = false;
};

// A one-line progress bar with rate and ETA, redrawn on stderr at most 5 times a second, shown
// only when stderr is a terminal; otherwise every call is a no-op, so output stays clean in pipes
// and logs.
class Progress {
 public:
  // `label` prefixes the line; `total_bytes` 0 means unknown (no percentage or ETA).
  Progress(std::string label, uint64_t total_bytes);
  ~Progress();  // erases the bar
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Update(uint64_t bytes_done, uint64_t lines_done);

 private:
  bool enabled_;
  std::string label_;
  uint64_t total_bytes_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_ = false;
};

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_IO_H_
