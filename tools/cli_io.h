// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_io.h: streaming lines in and out, and the progress bar of long subcommands.
//
// Keys are lines: the bytes between newlines, without the '\n'. A '\r' is kept (keys are bytes, so
// "a\r" and "a" are different keys) unless the reader strips it (--strip-cr). A last line without a
// newline is still a line. Input is read in large blocks and handed out in batches of string_views,
// so the filters' batch calls see many keys at once; ForEachBatch is the one loop over them.
#ifndef BLOOMERY_TOOLS_CLI_IO_H_
#define BLOOMERY_TOOLS_CLI_IO_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
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
  [[nodiscard]] static absl::StatusOr<LineReader> Open(const std::string& path,
                                                       bool strip_cr = false);
  // Reads all of `path` now, for input that cannot be read twice (a pipe) but must be.
  [[nodiscard]] static absl::StatusOr<LineReader> OpenBuffered(const std::string& path,
                                                               bool strip_cr, uint64_t max_bytes);

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
  // Whether the input can be read again from the start (a regular file, not a pipe or stdin).
  [[nodiscard]] bool rereadable() const { return rereadable_; }
  // Starts over from the first line. FailedPrecondition unless rereadable().
  [[nodiscard]] absl::Status Rewind();
  // True once the last line was handed out and it had no '\n' after it.
  [[nodiscard]] bool unterminated() const { return unterminated_; }

 private:
  LineReader(int fd, bool owned, std::string path, uint64_t total_bytes, bool strip_cr);
  absl::Status Fill();

  int fd_ = -1;
  bool owned_ = false;
  bool eof_ = false;
  bool strip_cr_ = false;
  bool rereadable_ = false;
  bool unterminated_ = false;
  bool buffered_ = false;  // all of the input is in buffer_
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
  void Write(std::string_view line, bool newline = true);  // appends line and '\n'
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

struct BatchTotals {
  uint64_t lines = 0;
  uint64_t counted = 0;  // the sum of apply's answers
};

inline constexpr size_t kBatchLines = 4096;

// Runs `apply(lines, results)` over every line of `reader`, a batch at a time, with a progress bar
// labelled `label`; `apply` returns how many lines of the batch it counted (new, erased, present):
// a size_t or an absl::StatusOr<size_t>, whose error stops the loop. With `period` != 0, batches
// end at every multiple of `period` lines (dedupe's checkpoints land exactly there).
template <typename Apply>
absl::StatusOr<BatchTotals> ForEachBatch(LineReader& reader, std::string_view label, Apply apply,
                                         uint64_t period = 0) {
  Progress progress(std::string(label), reader.total_bytes());
  std::vector<std::string_view> lines;
  // std::vector<bool> is packed bits; the filters write a span of real bools.
  const auto results = std::make_unique<bool[]>(kBatchLines);
  BatchTotals totals;
  while (true) {
    const size_t batch =
        period == 0 ? kBatchLines : std::min<uint64_t>(kBatchLines, period - totals.lines % period);
    if (absl::Status s = reader.NextBatch(batch, lines); !s.ok()) return s;
    if (lines.empty()) return totals;
    absl::StatusOr<size_t> counted = apply(lines, std::span<bool>(results.get(), lines.size()));
    if (!counted.ok()) return counted.status();
    totals.lines += lines.size();
    totals.counted += *counted;
    progress.Update(reader.bytes_read(), totals.lines);
  }
}

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_IO_H_
