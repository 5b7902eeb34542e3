// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli_common.h"

namespace bloomery::cli {
namespace {

constexpr size_t kReadBlock = size_t{1} << 20;
constexpr size_t kWriteBlock = size_t{1} << 20;

std::string FormatDuration(double seconds) {
  const auto s = static_cast<uint64_t>(std::max(0.0, seconds));
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

}  // namespace

absl::StatusOr<LineReader> LineReader::Open(const std::string& path, bool strip_cr) {
  if (path == "-") return LineReader(STDIN_FILENO, false, "<stdin>", 0, strip_cr);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const std::string message = absl::StrCat("cannot open ", path, ": ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(message) : InputError(message);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    close(fd);
    return InputError(absl::StrCat("cannot read ", path, ": is a directory"));
  }
  const uint64_t size = S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0;
  LineReader reader(fd, true, path, size, strip_cr);
  reader.rereadable_ = S_ISREG(st.st_mode);
  return reader;
}

absl::StatusOr<LineReader> LineReader::OpenBuffered(const std::string& path, bool strip_cr,
                                                    uint64_t max_bytes) {
  absl::StatusOr<LineReader> reader = Open(path, strip_cr);
  if (!reader.ok() || reader->rereadable()) return reader;
  while (!reader->eof_) {
    if (reader->end_ > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(reader->path_, " cannot be read twice (a pipe?) and is over ",
                       FormatBytes(max_bytes), " to hold in memory: give it as a file"));
    }
    if (absl::Status s = reader->Fill(); !s.ok()) return s;
  }
  reader->total_bytes_ = reader->end_;
  reader->rereadable_ = reader->buffered_ = true;
  return reader;
}

absl::Status LineReader::Rewind() {
  if (!rereadable_) return InputError(absl::StrCat(path_, " cannot be read twice"));
  unterminated_ = false;
  begin_ = 0;
  scanned_ = 0;
  if (buffered_) return absl::OkStatus();
  if (lseek(fd_.fd, 0, SEEK_SET) != 0) {
    return absl::DataLossError(absl::StrCat("rewinding ", path_, ": ", std::strerror(errno)));
  }
  end_ = 0;
  eof_ = false;
  bytes_read_ = 0;
  return absl::OkStatus();
}

LineReader::LineReader(int fd, bool owned, std::string path, uint64_t total_bytes, bool strip_cr)
    : fd_(fd, owned), strip_cr_(strip_cr), path_(std::move(path)), total_bytes_(total_bytes) {}

LineReader::Fd::~Fd() {
  if (owned) close(fd);
}

absl::Status LineReader::Fill() {
  // Keep the unfinished line, moved to the front once (it stays there until a '\n' ends it, so a
  // long line is not moved again for every read), and make room behind it.
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    scanned_ = scanned_ > begin_ ? scanned_ - begin_ : 0;
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) {  // a line longer than the buffer: double it (amortized linear)
    const size_t grown = capacity_ == 0 ? kReadBlock : capacity_ * 2;
    auto* bytes = static_cast<char*>(std::realloc(buffer_.get(), grown));
    if (bytes == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("reading ", path_, ": a line of over ",
                                                       FormatBytes(static_cast<double>(end_)),
                                                       " does not fit in memory"));
    }
    (void)buffer_.release();  // realloc freed or kept it: `bytes` is the buffer now
    buffer_.reset(bytes);
    capacity_ = grown;
  }
  while (true) {
    const ssize_t got = read(fd_.fd, buffer_.get() + end_, capacity_ - end_);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return absl::DataLossError(absl::StrCat("reading ", path_, ": ", std::strerror(errno)));
    }
    if (got == 0) eof_ = true;
    end_ += static_cast<size_t>(got);
    bytes_read_ += static_cast<uint64_t>(got);
    return absl::OkStatus();
  }
}

absl::Status LineReader::NextBatch(size_t max_lines, std::vector<std::string_view>& lines) {
  lines.clear();
  // Hands out the next `length` bytes as a line (less a '\r' with --strip-cr), consuming `used`.
  auto take = [&](size_t length, size_t used) {
    const char* start = buffer_.get() + begin_;
    lines.emplace_back(start, length - (strip_cr_ && length != 0 && start[length - 1] == '\r'));
    begin_ += used;
  };
  while (true) {
    while (lines.size() < max_lines && begin_ < end_) {
      const char* start = buffer_.get() + begin_;
      // Where the last search stopped, not the line's start: a line that arrives in many reads
      // (a pipe gives 64 KiB at a time) is searched once, not once per read.
      const size_t from = std::max(begin_, scanned_);
      const auto* newline =
          static_cast<const char*>(std::memchr(buffer_.get() + from, '\n', end_ - from));
      if (newline == nullptr) {
        scanned_ = end_;
        break;
      }
      take(static_cast<size_t>(newline - start), static_cast<size_t>(newline - start) + 1);
    }
    // Returning before Fill() keeps the views valid: Fill moves the buffer's contents.
    if (!lines.empty()) return absl::OkStatus();
    if (eof_) {
      if (begin_ < end_) {  // a last line without '\n'
        unterminated_ = true;
        take(end_ - begin_, end_ - begin_);
      }
      return absl::OkStatus();
    }
    if (absl::Status s = Fill(); !s.ok()) return s;
  }
}

LineWriter::LineWriter() { buffer_.reserve(kWriteBlock + 4096); }

void LineWriter::Write(std::string_view line, bool newline) {
  if (line.size() >= kWriteBlock) {
    // A long line goes out from where it is: appending it would copy it, and the buffer would
    // grow to twice its size.
    failed_ |= !Flush().ok();
    WriteOut(line);
  } else {
    buffer_.append(line);
  }
  if (newline) buffer_.push_back('\n');
  if (buffer_.size() >= kWriteBlock) failed_ |= !Flush().ok();
}

void LineWriter::WriteOut(std::string_view bytes) {
  size_t done = 0;
  while (!failed_ && done < bytes.size()) {
    const ssize_t put = write(STDOUT_FILENO, bytes.data() + done, bytes.size() - done);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      failed_ = true;
      error_ = put < 0 ? errno : EIO;
      return;
    }
    done += static_cast<size_t>(put);
  }
}

absl::Status LineWriter::Flush() {
  WriteOut(buffer_);
  buffer_.clear();
  if (!failed_) return absl::OkStatus();
  if (error_ == 0) return absl::DataLossError("writing to stdout failed");
  // The reason is said once; later calls say that writing failed.
  return absl::DataLossError(
      absl::StrCat("writing to stdout: ", std::strerror(std::exchange(error_, 0))));
}

Progress::Progress(std::string label, uint64_t total_bytes)
    : enabled_(isatty(STDERR_FILENO) == 1),
      label_(std::move(label)),
      total_bytes_(total_bytes),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\x1b[K", stderr);
}

void Progress::Update(uint64_t bytes_done, uint64_t lines_done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double lines_per_s = seconds > 0 ? static_cast<double>(lines_done) / seconds : 0;
  std::string line = absl::StrCat("\r\x1b[K", label_, "  ");
  if (total_bytes_ > 0) {
    const double fraction =
        std::min(1.0, static_cast<double>(bytes_done) / static_cast<double>(total_bytes_));
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    const double bytes_per_s = seconds > 0 ? static_cast<double>(bytes_done) / seconds : 0;
    const double eta =
        bytes_per_s > 0
            ? static_cast<double>(total_bytes_ - std::min(total_bytes_, bytes_done)) / bytes_per_s
            : 0;
    absl::StrAppend(
        &line, "[", std::string(filled, '#'), std::string(kWidth - filled, '-'), "] ",
        absl::StrFormat("%5.1f%%  ", fraction * 100), FormatBytes(bytes_done), " / ",
        FormatBytes(total_bytes_),
        absl::StrFormat("  %.2f M lines/s  ETA %s", lines_per_s / 1e6, FormatDuration(eta)));
  } else {
    absl::StrAppend(
        &line, FormatBytes(bytes_done), "  ", FormatCount(lines_done), " lines",
        absl::StrFormat("  %.2f M lines/s  %s", lines_per_s / 1e6, FormatDuration(seconds)));
  }
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

}  // namespace bloomery::cli
