// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery intersect`: the lines of B that are in A. A goes into a BlockedFilter (built here, by
// --threads threads into a concurrent filter, or loaded with --filter) and B is probed through it;
// the lines it passes are printed, or, with --exact, written to a temp file of candidates that a
// second pass over A confirms exactly, in bounded memory (docs/INTERSECT.md).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"

namespace bloomery::cli {
namespace {

constexpr uint64_t kDefaultMemory = uint64_t{1} << 30;
// More than this buys nothing: a blocked filter's FPR at 64 bits/key is ~1e-11 at best.
constexpr uint64_t kMaxBitsPerLine = 64;
constexpr uint32_t kMaxThreads = 1024;
// Lines a worker thread takes at a time: many batches, so handing one over costs little.
constexpr size_t kChunkLines = 4 * kBatchLines;
// What one candidate line costs the exact pass beyond its bytes: its view, its index and its
// node in the hash map (libstdc++: a node with the hash, a bucket pointer).
constexpr uint64_t kBytesPerCandidate = 96;
// The rate of the filter of a part's candidates that screens A's lines from the hash map.
constexpr double kPartFilterFpr = 0.01;

// ---------------------------------------------------------------------------------------------
// Lines in worker threads, answers in the input's order.

// A run of lines copied out of a LineReader for a worker thread.
struct Chunk {
  std::string bytes;
  std::vector<std::string_view> lines;  // into bytes
  std::unique_ptr<bool[]> results = std::make_unique<bool[]>(kChunkLines);
  size_t counted = 0;
  bool done = false;
};

// Fills `chunk` with up to kChunkLines lines of `reader`; empty at the end of the input.
absl::Status FillChunk(LineReader& reader, Chunk& chunk, std::vector<std::string_view>& batch) {
  chunk.bytes.clear();
  chunk.lines.clear();
  chunk.done = false;
  chunk.counted = 0;
  std::vector<size_t> ends;
  while (ends.size() < kChunkLines) {
    if (absl::Status s = reader.NextBatch(std::min(kBatchLines, kChunkLines - ends.size()), batch);
        !s.ok()) {
      return s;
    }
    if (batch.empty()) break;
    for (const std::string_view line : batch) {
      chunk.bytes.append(line);
      ends.push_back(chunk.bytes.size());
    }
  }
  size_t begin = 0;
  for (const size_t end : ends) {
    chunk.lines.emplace_back(chunk.bytes.data() + begin, end - begin);
    begin = end;
  }
  return absl::OkStatus();
}

// ForEachBatch on `threads` threads: `work(lines, results)` (thread-safe, returns the lines it
// counted) runs on worker threads, `sink(lines, results)` (returns a Status) on this one, in the
// input's order. With one thread both run here, batch by batch, with no copy of the lines.
template <typename Work, typename Sink>
absl::StatusOr<BatchTotals> ForEachBatchInThreads(LineReader& reader, std::string_view label,
                                                  uint32_t threads, Work work, Sink sink) {
  if (threads <= 1) {
    return ForEachBatch(reader, label,
                        [&](std::span<const std::string_view> lines,
                            std::span<bool> results) -> absl::StatusOr<size_t> {
                          const size_t counted = work(lines, results);
                          if (absl::Status s = sink(lines, results); !s.ok()) return s;
                          return counted;
                        });
  }
  Progress progress(std::string(label), reader.total_bytes());
  std::mutex mu;
  std::condition_variable cv;  // a chunk was queued or done, or the workers are to stop
  std::deque<std::unique_ptr<Chunk>> in_flight;  // read and not yet sunk, oldest first
  std::deque<Chunk*> queue;                      // in flight, waiting for a worker
  std::vector<std::unique_ptr<Chunk>> spare;     // sunk, for reuse
  bool stop = false;
  std::vector<std::thread> workers;
  // Declared after what the workers touch: on every return the workers stop and are joined
  // before in_flight goes.
  struct Joiner {
    std::mutex& mu;
    std::condition_variable& cv;
    bool& stop;
    std::vector<std::thread>& workers;
    ~Joiner() {
      {
        std::lock_guard lock(mu);
        stop = true;
      }
      cv.notify_all();
      for (std::thread& worker : workers) worker.join();
    }
  } joiner{mu, cv, stop, workers};
  for (uint32_t t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::unique_lock lock(mu);
      while (true) {
        cv.wait(lock, [&] { return stop || !queue.empty(); });
        if (queue.empty()) return;
        Chunk* chunk = queue.front();
        queue.pop_front();
        lock.unlock();
        const std::span<bool> results(chunk->results.get(), chunk->lines.size());
        const size_t counted = work(std::span<const std::string_view>(chunk->lines), results);
        lock.lock();
        chunk->counted = counted;
        chunk->done = true;
        cv.notify_all();
      }
    });
  }

  BatchTotals totals;
  uint64_t bytes_read = 0;
  // Sinks the oldest chunk once a worker is done with it.
  const auto sink_oldest = [&]() -> absl::Status {
    std::unique_ptr<Chunk> chunk;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return in_flight.front()->done; });
      chunk = std::move(in_flight.front());
      in_flight.pop_front();
    }
    const std::span<bool> results(chunk->results.get(), chunk->lines.size());
    if (absl::Status s = sink(std::span<const std::string_view>(chunk->lines), results); !s.ok()) {
      return s;
    }
    totals.lines += chunk->lines.size();
    totals.counted += chunk->counted;
    progress.Update(bytes_read, totals.lines);
    spare.push_back(std::move(chunk));
    return absl::OkStatus();
  };
  std::vector<std::string_view> batch;
  while (true) {
    std::unique_ptr<Chunk> chunk;
    if (spare.empty()) {
      chunk = std::make_unique<Chunk>();
    } else {
      chunk = std::move(spare.back());
      spare.pop_back();
    }
    if (absl::Status s = FillChunk(reader, *chunk, batch); !s.ok()) return s;
    bytes_read = reader.bytes_read();
    if (chunk->lines.empty()) break;
    {
      std::lock_guard lock(mu);
      queue.push_back(chunk.get());
      in_flight.push_back(std::move(chunk));
    }
    cv.notify_all();
    // Two chunks a thread are enough to keep every worker busy; more would only hold memory.
    while (in_flight.size() >= 2 * size_t{threads}) {
      if (absl::Status s = sink_oldest(); !s.ok()) return s;
    }
  }
  while (!in_flight.empty()) {
    if (absl::Status s = sink_oldest(); !s.ok()) return s;
  }
  return totals;
}

// ---------------------------------------------------------------------------------------------
// Temp files of the exact pass.

// A file in --temp-dir, removed when this goes.
class TempFile {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<TempFile>> Create(const std::string& dir) {
    std::string name = (std::filesystem::path(dir) / "bloomery-intersect.XXXXXX").string();
    const int fd = mkstemp(name.data());
    if (fd < 0) {
      return InputError(absl::StrCat("--temp-dir ", dir, ": cannot create a temp file in it (",
                                     std::strerror(errno), ")"));
    }
    std::FILE* file = fdopen(fd, "w");
    if (file == nullptr) {
      close(fd);
      unlink(name.c_str());
      return InputError(absl::StrCat(name, ": ", std::strerror(errno)));
    }
    return std::unique_ptr<TempFile>(new TempFile(std::move(name), file));
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (file_ != nullptr) std::fclose(file_);
    unlink(path_.c_str());
  }

  void Write(std::string_view bytes) {
    std::fwrite(bytes.data(), 1, bytes.size(), file_);
    bytes_ += bytes.size();
  }
  // Ends writing: every byte written, or DataLoss naming the file (a full disk).
  [[nodiscard]] absl::Status Close() {
    const bool failed = std::ferror(file_) != 0;
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (failed || closed != 0) {
      return absl::DataLossError(absl::StrCat("writing ", path_, ": ", std::strerror(errno)));
    }
    return absl::OkStatus();
  }
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] uint64_t bytes() const { return bytes_; }

 private:
  TempFile(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {
    static constexpr size_t kBuffer = size_t{1} << 20;
    std::setvbuf(file_, nullptr, _IOFBF, kBuffer);
  }
  std::string path_;
  std::FILE* file_;
  uint64_t bytes_ = 0;
};

// Reads all of `path` (a temp file this process wrote).
absl::StatusOr<std::string> ReadWhole(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return InputError(absl::StrCat(path, ": ", std::strerror(errno)));
  std::string bytes;
  std::vector<char> block(size_t{1} << 20);
  size_t got = 0;
  while ((got = std::fread(block.data(), 1, block.size(), file)) > 0)
    bytes.append(block.data(), got);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return absl::DataLossError(absl::StrCat("reading ", path));
  return bytes;
}

// The partition of the exact pass a line belongs to, of `parts`.
[[nodiscard]] uint64_t PartOf(std::string_view line, uint64_t parts) {
  // Not the hash map's own value modulo `parts`: its buckets would then all be used alike.
  const uint64_t hash = std::hash<std::string_view>{}(line)*0x9E3779B97F4A7C15ull;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(hash) * parts) >> 64);
}

// One partition's candidates, in memory: their lines and their places among all candidates.
struct Part {
  std::string bytes;
  std::vector<std::string_view> lines;
  std::vector<uint64_t> index;
};

// A partition file's records, "<index> <line>\n", or (parts == 1) the candidate file itself.
absl::StatusOr<Part> LoadPart(const std::string& path, bool indexed) {
  absl::StatusOr<std::string> bytes = ReadWhole(path);
  if (!bytes.ok()) return bytes.status();
  Part part;
  part.bytes = *std::move(bytes);
  std::string_view rest = part.bytes;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');  // every record ends in one: the writer puts it there
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    if (indexed) {
      const size_t space = line.find(' ');
      part.index.push_back(std::strtoull(std::string(line.substr(0, space)).c_str(), nullptr, 10));
      line.remove_prefix(space + 1);
    } else {
      part.index.push_back(part.lines.size());
    }
    part.lines.push_back(line);
  }
  return part;
}

struct ExactTotals {
  uint64_t confirmed = 0;
  uint64_t parts = 0;
};

// The exact pass: which of the `candidates` lines of `candidate_file` (B's lines the filter
// passed, in B's order) are in A. They are split by hash into parts of about `memory` bytes
// each (one part when they fit, then A is read against them as it is); a hash map of a part's
// lines marks those A holds. A is read once whatever the parts. Then the confirmed candidates are
// printed, in B's order.
absl::StatusOr<ExactTotals> ConfirmCandidates(const TempFile& candidate_file, uint64_t candidates,
                                              LineReader& a_reader, const std::string& a_label,
                                              uint64_t memory, uint32_t threads,
                                              const std::string& temp_dir) {
  ExactTotals totals;
  const uint64_t need = candidate_file.bytes() + candidates * kBytesPerCandidate;
  const uint64_t parts = std::max<uint64_t>(1, (need + memory - 1) / memory);
  totals.parts = parts;
  // Over one part: the candidates split by hash into part files, and A read once, screened by a
  // filter of every candidate (about |A n B| lines and kPartFilterFpr of the rest pass), into
  // part files by the same hash. Each part then compares its two files.
  std::vector<std::unique_ptr<TempFile>> part_files;
  std::vector<std::unique_ptr<TempFile>> a_part_files;
  if (parts > 1) {
    for (uint64_t p = 0; p < 2 * parts; ++p) {
      absl::StatusOr<std::unique_ptr<TempFile>> file = TempFile::Create(temp_dir);
      if (!file.ok()) return file.status();
      (p < parts ? part_files : a_part_files).push_back(*std::move(file));
    }
    FilterOptions options;
    options.capacity = candidates;
    options.fpr = kPartFilterFpr;
    options.memory.max_memory_bytes = memory;
    options.memory.concurrent = false;
    absl::StatusOr<BlockedFilter> every = BlockedFilter::Create(options);
    if (!every.ok()) return every.status();
    absl::StatusOr<LineReader> reader = LineReader::Open(candidate_file.path());
    if (!reader.ok()) return reader.status();
    uint64_t index = 0;
    absl::StatusOr<BatchTotals> split =
        ForEachBatch(*reader, "splitting the candidates",
                     [&](std::span<const std::string_view> lines, std::span<bool>) {
                       every->InsertMany(lines);
                       for (const std::string_view line : lines) {
                         TempFile& file = *part_files[PartOf(line, parts)];
                         file.Write(absl::StrCat(index++, " "));
                         file.Write(line);
                         file.Write("\n");
                       }
                       return size_t{0};
                     });
    if (!split.ok()) return split.status();
    const BlockedFilter& may_be_candidate = *every;
    absl::StatusOr<BatchTotals> screened = ForEachBatchInThreads(
        a_reader, absl::StrCat("splitting ", a_label), threads,
        [&](std::span<const std::string_view> lines, std::span<bool> pass) {
          return may_be_candidate.MayContainMany(lines, pass);
        },
        [&](std::span<const std::string_view> lines, std::span<bool> pass) {
          for (size_t i = 0; i < lines.size(); ++i) {
            if (!pass[i]) continue;
            TempFile& file = *a_part_files[PartOf(lines[i], parts)];
            file.Write(lines[i]);
            file.Write("\n");
          }
          return absl::OkStatus();
        });
    if (!screened.ok()) return screened.status();
    for (const auto* files : {&part_files, &a_part_files}) {
      for (const auto& file : *files) {
        if (absl::Status s = file->Close(); !s.ok()) return s;
      }
    }
  }

  std::vector<bool> confirmed(candidates);
  for (uint64_t p = 0; p < parts; ++p) {
    absl::StatusOr<Part> part = LoadPart(parts > 1 ? part_files[p]->path() : candidate_file.path(),
                                         /*indexed=*/parts > 1);
    if (!part.ok()) return part.status();
    std::unordered_map<std::string_view, bool> in_a;
    in_a.reserve(part->lines.size());
    for (const std::string_view line : part->lines) in_a.emplace(line, false);
    // A small filter of the part's lines turns most of A away before the hash map, whose lookups
    // miss the cache: A's lines in batches, as the filters take them.
    FilterOptions options;
    options.capacity = std::max<size_t>(part->lines.size(), 1);
    options.fpr = kPartFilterFpr;
    absl::StatusOr<BlockedFilter> part_filter = BlockedFilter::Create(options);
    if (!part_filter.ok()) return part_filter.status();
    part_filter->InsertMany(part->lines);
    std::optional<LineReader> a_part;
    if (parts > 1) {
      absl::StatusOr<LineReader> opened = LineReader::Open(a_part_files[p]->path());
      if (!opened.ok()) return opened.status();
      a_part.emplace(*std::move(opened));
    }
    const BlockedFilter& may_be_in_part = *part_filter;
    absl::StatusOr<BatchTotals> read = ForEachBatchInThreads(
        parts > 1 ? *a_part : a_reader,
        parts > 1 ? absl::StrFormat("confirming in %s (part %d of %d)", a_label, p + 1, parts)
                  : absl::StrCat("confirming in ", a_label),
        threads,
        // The workers only find; the marks are set here, on this thread.
        [&](std::span<const std::string_view> lines, std::span<bool> found) {
          size_t count = may_be_in_part.MayContainMany(lines, found);
          for (size_t i = 0; i < lines.size(); ++i) {
            if (found[i] && !in_a.contains(lines[i])) {
              found[i] = false;
              --count;
            }
          }
          return count;
        },
        [&](std::span<const std::string_view> lines, std::span<bool> found) {
          for (size_t i = 0; i < lines.size(); ++i) {
            if (found[i]) in_a.find(lines[i])->second = true;
          }
          return absl::OkStatus();
        });
    if (!read.ok()) return read.status();
    for (size_t i = 0; i < part->lines.size(); ++i) {
      confirmed[part->index[i]] = in_a.find(part->lines[i])->second;
    }
  }

  absl::StatusOr<LineReader> reader = LineReader::Open(candidate_file.path());
  if (!reader.ok()) return reader.status();
  LineWriter out;
  uint64_t index = 0;
  absl::StatusOr<BatchTotals> printed = ForEachBatch(
      *reader, "printing", [&](std::span<const std::string_view> lines, std::span<bool>) {
        size_t count = 0;
        for (const std::string_view line : lines) {
          if (confirmed[index++]) {
            out.Write(line);
            ++count;
          }
        }
        return count;
      });
  if (!printed.ok()) return printed.status();
  if (absl::Status s = out.Flush(); !s.ok()) return s;
  totals.confirmed = printed->counted;
  return totals;
}

// ---------------------------------------------------------------------------------------------
// The command.

struct IntersectFlags {
  std::string a;
  std::string b;
  uint64_t memory = kDefaultMemory;
  uint64_t capacity = 0;
  double fpr = 0;
  std::string layout;
  std::string prefer = "smallest";
  std::string filter;
  std::string save_filter;
  uint32_t threads = 1;
  bool exact = false;
  std::string temp_dir;
  bool strip_cr = false;
  CLI::Option* capacity_flag = nullptr;
  CLI::Option* fpr_flag = nullptr;
  CLI::Option* layout_flag = nullptr;
  CLI::Option* prefer_flag = nullptr;
  CLI::Option* filter_flag = nullptr;
  CLI::Option* save_filter_flag = nullptr;
};

// The filter A's lines go into: the planner's for --fpr, else the budget's.
absl::StatusOr<BlockedFilter> CreateIntersectFilter(const IntersectFlags& flags,
                                                    uint64_t capacity) {
  FilterOptions options;
  options.capacity = capacity;
  if (Given(flags.fpr_flag)) {
    options.fpr = flags.fpr;
  } else {
    // The budget in whole blocks, but never more than kMaxBitsPerLine per line of A.
    uint64_t bits = std::min(flags.memory / kBlockBytes * kBlockBits, kMaxBits);
    if (capacity <= kMaxBits / kMaxBitsPerLine) bits = std::min(bits, capacity * kMaxBitsPerLine);
    options.bits = std::max<uint64_t>(bits / kBlockBits * kBlockBits, kBlockBits);
  }
  if (Given(flags.layout_flag)) {
    absl::StatusOr<Layout> layout =
        ParseLayoutFlag(flags.layout, /*allow_auto=*/Given(flags.fpr_flag));
    if (!layout.ok()) {
      return flags.layout == "auto" ? UsageError("--layout auto needs --fpr") : layout.status();
    }
    options.layout = *layout;
  }
  if (Given(flags.prefer_flag)) {
    if (options.layout != Layout::kAuto) return UsageError("--prefer needs --layout auto");
    options.layout_choice =
        flags.prefer == "fastest" ? LayoutChoice::kFastest : LayoutChoice::kSmallest;
  }
  options.memory.max_memory_bytes = flags.memory;
  options.memory.concurrent = flags.threads > 1;
  absl::StatusOr<BlockedFilter> filter = BlockedFilter::Create(options);
  if (!filter.ok() && filter.status().code() == absl::StatusCode::kResourceExhausted) {
    return absl::Status(filter.status().code(),
                        absl::StrCat(filter.status().message(), " (raise --memory, or --fpr)"));
  }
  return filter;
}

// Says the filter's size and rate on stderr, before B is read.
void DescribeFilter(const BlockedFilter& filter, const std::string& from, uint64_t lines) {
  if (from.empty()) {
    std::fprintf(
        stderr,
        "bloomery intersect: A has %s lines; filter %s (%.1f bits/line, %d hashes); "
        "expected false-positive rate %s\n",
        FormatCount(lines).c_str(), FormatBytes(static_cast<double>(filter.memory_bytes())).c_str(),
        filter.plan().bits_per_key, filter.hashes(), FormatFpr(filter.plan().expected_fpr).c_str());
    return;
  }
  std::fprintf(stderr,
               "bloomery intersect: filter %s from %s (planned for %s lines, %d hashes); "
               "expected false-positive rate %s\n",
               FormatBytes(static_cast<double>(filter.memory_bytes())).c_str(), from.c_str(),
               FormatCount(filter.plan().capacity).c_str(), filter.hashes(),
               FormatFpr(filter.EstimatedFpr()).c_str());
}

absl::Status RunIntersect(const IntersectFlags& flags) {
  const bool prebuilt = Given(flags.filter_flag);
  std::string a_path = flags.a;
  std::string b_path = flags.b;
  if (b_path.empty()) {  // one file named: B, with --filter
    if (!prebuilt) return UsageError("give A and B (or --filter FILE and B)");
    b_path = std::exchange(a_path, "");
  } else if (prebuilt && !flags.exact) {
    return UsageError("with --filter, A is read only by --exact: give B alone");
  }
  if (flags.exact && a_path.empty()) return UsageError("--exact reads A: give A and B");
  if (a_path == "-" && b_path == "-") return UsageError("A and B cannot both be stdin");
  std::string temp_dir = flags.temp_dir;
  if (temp_dir.empty()) {
    const char* tmpdir = std::getenv("TMPDIR");
    temp_dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  }
  if (Given(flags.save_filter_flag)) {
    if (absl::Status s = CheckWritableBeside("--save-filter", flags.save_filter); !s.ok()) return s;
  }

  // Open B first: a missing B should fail before the long pass over A.
  absl::StatusOr<LineReader> b_reader = LineReader::Open(b_path, flags.strip_cr);
  if (!b_reader.ok()) return b_reader.status();
  // A is read to count its lines (without --capacity), to build the filter (without --filter)
  // and to confirm the candidates (--exact): more than once, a pipe is held in memory.
  const int a_passes =
      a_path.empty() ? 0 : (prebuilt ? 0 : (Given(flags.capacity_flag) ? 1 : 2)) + flags.exact;
  std::optional<LineReader> a_reader;
  if (a_passes > 0) {
    absl::StatusOr<LineReader> opened =
        a_passes == 1 ? LineReader::Open(a_path, flags.strip_cr)
                      : LineReader::OpenBuffered(a_path, flags.strip_cr, flags.memory);
    if (!opened.ok()) {
      if (opened.status().code() == absl::StatusCode::kResourceExhausted && a_passes == 2 &&
          !flags.exact) {
        return absl::Status(opened.status().code(),
                            absl::StrCat(opened.status().message(),
                                         ", or give --capacity N (A's lines) to read it once"));
      }
      return opened.status();
    }
    a_reader.emplace(*std::move(opened));
  }

  std::optional<BlockedFilter> filter;
  if (prebuilt) {
    LoadOptions load;
    load.max_bytes = flags.memory;
    absl::StatusOr<BlockedFilter> loaded = BlockedFilter::Load(flags.filter, load);
    if (!loaded.ok()) return FileStatus(loaded.status(), flags.filter);
    filter.emplace(*std::move(loaded));
    DescribeFilter(*filter, flags.filter, 0);
  } else {
    uint64_t capacity = flags.capacity;
    if (!Given(flags.capacity_flag)) {
      absl::StatusOr<BatchTotals> count = ForEachBatch(
          *a_reader, absl::StrCat("counting ", a_path),
          [](std::span<const std::string_view>, std::span<bool>) { return size_t{0}; });
      if (!count.ok()) return count.status();
      if (count->lines == 0) return absl::OkStatus();  // nothing is in an empty A
      capacity = count->lines;
      if (absl::Status s = a_reader->Rewind(); !s.ok()) return s;
    }
    absl::StatusOr<BlockedFilter> created = CreateIntersectFilter(flags, capacity);
    if (!created.ok()) return created.status();
    filter.emplace(*std::move(created));
    DescribeFilter(*filter, "", capacity);
    BlockedFilter& f = *filter;
    absl::StatusOr<BatchTotals> inserted = ForEachBatchInThreads(
        *a_reader, absl::StrCat("loading ", a_path), flags.threads,
        [&f](std::span<const std::string_view> lines, std::span<bool>) {
          return f.InsertMany(lines);
        },
        [](std::span<const std::string_view>, std::span<bool>) { return absl::OkStatus(); });
    if (!inserted.ok()) return inserted.status();
    WarnIfOverCapacity("intersect", static_cast<double>(inserted->lines), f.plan().capacity, f,
                       Counted::kLines);
    if (Given(flags.save_filter_flag)) {
      if (absl::Status s = f.Save(flags.save_filter); !s.ok()) {
        return absl::Status(s.code(),
                            absl::StrCat("--save-filter ", flags.save_filter, ": ", s.message()));
      }
    }
    if (flags.exact) {
      if (absl::Status s = a_reader->Rewind(); !s.ok()) return s;
    }
  }

  // B through the filter: the lines it passes are printed, or with --exact are candidates.
  std::unique_ptr<TempFile> candidates;
  if (flags.exact) {
    absl::StatusOr<std::unique_ptr<TempFile>> created = TempFile::Create(temp_dir);
    if (!created.ok()) return created.status();
    candidates = *std::move(created);
  }
  LineWriter out;
  const BlockedFilter& f = *filter;
  absl::StatusOr<BatchTotals> looked_up = ForEachBatchInThreads(
      *b_reader, absl::StrCat("intersect ", b_path), flags.threads,
      [&f](std::span<const std::string_view> lines, std::span<bool> maybe) {
        return f.MayContainMany(lines, maybe);
      },
      [&](std::span<const std::string_view> lines, std::span<bool> maybe) {
        for (size_t i = 0; i < lines.size(); ++i) {
          if (!maybe[i]) continue;
          if (candidates == nullptr) {
            out.Write(lines[i]);
          } else {
            candidates->Write(lines[i]);
            candidates->Write("\n");
          }
        }
        return absl::OkStatus();
      });
  if (!looked_up.ok()) return looked_up.status();
  if (!flags.exact) return out.Flush();

  // The filter is done with: its memory goes back before the exact pass takes its own.
  filter.reset();
  if (absl::Status s = candidates->Close(); !s.ok()) return s;
  absl::StatusOr<ExactTotals> exact = ConfirmCandidates(
      *candidates, looked_up->counted, *a_reader, a_path, flags.memory, flags.threads, temp_dir);
  if (!exact.ok()) return exact.status();
  std::fprintf(
      stderr,
      "bloomery intersect: %s of B's %s lines passed the filter; %s are in A, %s were "
      "false positives (%s)\n",
      FormatCount(looked_up->counted).c_str(), FormatCount(looked_up->lines).c_str(),
      FormatCount(exact->confirmed).c_str(),
      FormatCount(looked_up->counted - exact->confirmed).c_str(),
      exact->parts == 1 ? "one part" : absl::StrCat(exact->parts, " parts, by hash").c_str());
  return absl::OkStatus();
}

}  // namespace

void AddIntersectCommand(Commands& commands) {
  auto [app, flags] = commands.Add<IntersectFlags>(
      "intersect", "print the lines of B that are probably in A (or, with --exact, are in A)",
      R"(Every line of B that is in A is printed, in B's order; a line of B that is not in A is
printed with probability about the expected FPR, which goes to stderr before B is read.
A is loaded into a Bloom filter that fits the memory budget (or is planned for --fpr): two
passes over A (one with --capacity; an A that cannot be read twice, such as a pipe, is held in
memory) and one over B. The expected rate counts every line of A as a key: repeated lines make
it lower. --save-filter keeps the filter; --filter F uses one saved before instead of reading A
(`intersect --filter F B`). --exact prints only the lines of B that are in A: the lines the
filter passes go to a temp file, and one more pass over A confirms them (split by hash into
parts on disk when they are more than --memory holds). --threads N builds and probes in N
threads; the output is in B's order whatever N. docs/INTERSECT.md: two files of 5*10^9 lines,
on one machine or many.)",
      RunIntersect);
  app->add_option("A", flags->a,
                  "the lines to look for (\"-\": stdin); with --filter, omitted unless --exact")
      ->required();
  app->add_option("B", flags->b, "the lines to print (\"-\": stdin)");
  AddNumber(*app, "--memory", flags->memory, Unit::kBytes, {kBlockBytes, kMaxNumber},
            "memory for the filter, and for the candidates of --exact (default 1GiB): 4GiB, 512M, "
            "2^30; no more than about 64 bits per line of A is used");
  flags->capacity_flag = AddNumber(*app, "--capacity", flags->capacity, Unit::kCount, {},
                                   "lines in A, if known: saves the pass that counts them");
  flags->fpr_flag = AddFraction(*app, "--fpr", flags->fpr,
                                "plan the filter for this false-positive rate (within --memory) "
                                "instead of filling --memory");
  flags->layout_flag =
      app->add_option("--layout", flags->layout,
                      absl::StrCat("the block a key's bits live in: ", BlockLayoutList(),
                                   " (the default: the 64-byte line), or auto (with --fpr: the "
                                   "planner's choice by --prefer)"))
          ->type_name("L");
  flags->prefer_flag =
      app->add_option("--prefer", flags->prefer,
                      "with --layout auto: smallest (the default: the fewest bits that meet "
                      "--fpr) or fastest")
          ->type_name("P")
          ->check(CLI::IsMember({"smallest", "fastest"}));
  flags->save_filter_flag = app->add_option("--save-filter", flags->save_filter,
                                            "save the filter of A to FILE (for --filter later)")
                                ->type_name("FILE")
                                ->check(FileName());
  flags->filter_flag =
      app->add_option("--filter", flags->filter,
                      "use the filter saved in FILE (by --save-filter, or `bloomery build "
                      "--kind blocked`) instead of building one from A")
          ->type_name("FILE")
          ->check(FileName())
          ->excludes(flags->capacity_flag)
          ->excludes(flags->fpr_flag)
          ->excludes(flags->layout_flag)
          ->excludes(flags->prefer_flag)
          ->excludes(flags->save_filter_flag);
  AddInteger(*app, "--threads", flags->threads, 1, kMaxThreads,
             "threads that insert A's lines and look up B's (default 1); output stays in B's "
             "order");
  AddFlag(*app, "--exact", flags->exact,
          "print only the lines of B that are in A: the filter's candidates are checked against "
          "A in one more pass");
  app->add_option("--temp-dir", flags->temp_dir,
                  "where --exact keeps its temp files (default: $TMPDIR, else /tmp)")
      ->type_name("DIR")
      ->check(FileName());
  AddStripCr(*app, flags->strip_cr);
}

}  // namespace bloomery::cli
