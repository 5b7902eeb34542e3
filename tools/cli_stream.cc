// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery dedupe` and `bloomery intersect`: stream lines through a filter (dedupe: any kind, via
// AnyFilter, optionally kept in a state file; intersect: a BlockedFilter), in batches so the
// filter hashes, locates and prefetches many keys at a time.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_commands.h"
#include "cli_common.h"
#include "cli_filter.h"
#include "cli_io.h"

namespace bloomery::cli {
namespace {

constexpr char kDedupeHelp[] =
    R"(usage: bloomery dedupe [--kind K] [--capacity N] [--fpr P] [--state FILE] [INPUT]
       bloomery dedupe [--kind K] --bits B [--hashes K] [--capacity N] [--state FILE] [INPUT]

Copies INPUT (or stdin, or "-") to stdout, keeping only the first occurrence of every line, in
order. A line is never printed twice; a line seen for the first time is dropped, wrongly, with
probability about the filter's false-positive rate (it looked like one already seen). Past the
planned capacity that rate climbs: size the filter for the number of distinct lines, or use
--kind scalable when that number is unknown.

options:
  --kind K          blocked (the default), classic, scalable (grows with the input: --capacity is
                    its first stage) or counting
  --capacity N      distinct lines expected (default 10M); k, M, G, T are powers of 1000
  --fpr P           false-positive rate at capacity (default 1e-6): the chance of a wrong drop
  --bits B          a given filter size in bits instead (2^30, 1G = 2^30)
  --hashes K        probes per key (default: the planner's choice)
  --counter-bits C  counting filters: 4 or 8
  --stats           print lines read, kept and dropped to stderr at the end
  --state FILE      remember the lines seen across runs: load the filter from FILE if it exists
                    (any kind, as written by dedupe --state or bloomery build), otherwise create it
                    from the flags above; save it to FILE at every checkpoint and at the end. With
                    an existing FILE the sizing flags above are ignored, with a warning: the file's
                    filter is used as it is.
  --checkpoint N    with --state: save every N lines read (default 10M)

Crashes and restarts: saving is atomic (temp file, fsync, rename), so FILE always holds a complete
filter from the last checkpoint, never a torn one. Output is flushed before each save, so every
line the state file remembers has been written out; lines read after the last checkpoint are not
remembered, and after a crash a restart on the same input may print them again: delivery is
at-least-once, never lost.
)";

constexpr char kIntersectHelp[] = R"(usage: bloomery intersect A B [--memory SIZE] [--capacity N]

Prints the lines of B that are probably lines of A, in B's order: every line of B that is in A
is printed; a line of B that is not in A is printed with probability about the expected FPR,
which goes to stderr before B is read. A is loaded into a Bloom filter that fits the memory
budget, so two files far larger than memory can be intersected in two passes over A and one
over B. B may be "-" (stdin). The expected rate counts every line of A as a key: when A repeats
lines, the real rate is lower.

options:
  --memory SIZE  memory for the filter (default 1G): 4G, 512M, 2^30 (K, M, G, T: powers of 1024);
                 no more than about 64 bits per line of A is used
  --capacity N   lines in A, if known: saves the pass that counts them (and allows A = "-")
)";

constexpr uint64_t kDefaultDedupeCapacity = 10'000'000;
constexpr double kDefaultDedupeFpr = 1e-6;
constexpr uint64_t kDefaultMemory = uint64_t{1} << 30;
constexpr size_t kBatchLines = 4096;
// More than this buys nothing: a blocked filter's FPR at 64 bits/key is ~1e-11 at best.
constexpr uint64_t kMaxBitsPerLine = 64;
constexpr uint64_t kDefaultCheckpointLines = 10'000'000;

// Counts `path`'s lines (one pass).
absl::StatusOr<uint64_t> CountLines(const std::string& path) {
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  Progress progress(absl::StrCat("counting ", path), reader->total_bytes());
  std::vector<std::string_view> lines;
  uint64_t count = 0;
  while (true) {
    if (absl::Status s = reader->NextBatch(kBatchLines, lines); !s.ok()) return s;
    if (lines.empty()) return count;
    count += lines.size();
    progress.Update(reader->bytes_read(), count);
  }
}

// Inserts every line of `path`; returns the number of lines.
absl::StatusOr<uint64_t> InsertLines(const std::string& path, BlockedFilter& filter) {
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  Progress progress(absl::StrCat("loading ", path), reader->total_bytes());
  std::vector<std::string_view> lines;
  uint64_t count = 0;
  while (true) {
    if (absl::Status s = reader->NextBatch(kBatchLines, lines); !s.ok()) return s;
    if (lines.empty()) return count;
    filter.InsertMany(lines);
    count += lines.size();
    progress.Update(reader->bytes_read(), count);
  }
}

// `Filter`: BlockedFilter or AnyFilter.
template <typename Filter>
void WarnIfOverCapacity(std::string_view command, uint64_t keys, uint64_t capacity,
                        const Filter& filter) {
  if (capacity == 0 || keys <= capacity) return;
  std::fprintf(stderr,
               "bloomery %.*s: warning: %s keys went in, over the planned capacity of %s; the "
               "false-positive rate rose to about %s (plan for more)\n",
               static_cast<int>(command.size()), command.data(), FormatCount(keys).c_str(),
               FormatCount(capacity).c_str(), FormatFpr(filter.EstimatedFpr()).c_str());
}

}  // namespace

absl::Status DedupeCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv,
                                          {{"kind", true},
                                           {"capacity", true},
                                           {"fpr", true},
                                           {"bits", true},
                                           {"hashes", true},
                                           {"counter-bits", true},
                                           {"stats", false},
                                           {"state", true},
                                           {"checkpoint", true}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kDedupeHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(0, 1); !s.ok()) return s;
  // The flags are checked even when a state file will make them moot: a typo is always an error.
  absl::StatusOr<CreateSpec> spec =
      CreateSpecFromFlags(*args, kDefaultDedupeCapacity, kDefaultDedupeFpr);
  if (!spec.ok()) return spec.status();
  const std::optional<std::string_view> state_flag = args->Value("state");
  if (state_flag && state_flag->empty()) return UsageError("--state needs a file name");
  if (args->Has("checkpoint") && !state_flag) return UsageError("--checkpoint needs --state");
  absl::StatusOr<uint64_t> checkpoint = args->Count("checkpoint", kDefaultCheckpointLines);
  if (!checkpoint.ok()) return checkpoint.status();
  if (*checkpoint == 0) return UsageError("--checkpoint must be at least 1");
  const std::string state_path = state_flag ? std::string(*state_flag) : "";
  const std::string path = args->positional().empty() ? "-" : args->positional()[0];
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();

  std::error_code error;
  const bool resume = state_flag && std::filesystem::exists(state_path, error);
  absl::StatusOr<AnyFilter> filter =
      resume ? AnyFilter::Load(state_path) : AnyFilter::Create(*spec);
  if (!filter.ok()) return filter.status();
  uint64_t known = 0;  // distinct lines the filter held before this run
  if (resume) {
    for (const std::string_view flag :
         {"kind", "capacity", "fpr", "bits", "hashes", "counter-bits"}) {
      if (args->Has(flag)) {
        std::fprintf(stderr,
                     "bloomery dedupe: warning: --%.*s ignored: %s exists and its %.*s filter is "
                     "used as it is\n",
                     static_cast<int>(flag.size()), flag.data(), state_path.c_str(),
                     static_cast<int>(filter->kind().size()), filter->kind().data());
      }
    }
    known = static_cast<uint64_t>(filter->EstimatedCount() + 0.5);
  }

  Progress progress("dedupe", reader->total_bytes());
  LineWriter out;
  std::vector<std::string_view> lines;
  // std::vector<bool> is packed bits; the filter writes a span of real bools.
  const auto was_new = std::make_unique<bool[]>(kBatchLines);
  uint64_t read = 0;
  uint64_t kept = 0;
  uint64_t since_checkpoint = 0;
  while (true) {
    // Batches end at checkpoints, so a checkpoint lands exactly every --checkpoint lines.
    const size_t batch =
        state_flag ? std::min<uint64_t>(kBatchLines, *checkpoint - since_checkpoint) : kBatchLines;
    if (absl::Status s = reader->NextBatch(batch, lines); !s.ok()) return s;
    if (lines.empty()) break;
    // InsertMany answers as if the keys were inserted one by one, so a line repeated within the
    // batch is new only at its first occurrence. A full scalable filter stops the run here, with
    // the state file at its last checkpoint, after the lines it did add are written out.
    absl::StatusOr<size_t> added =
        filter->InsertMany(lines, std::span<bool>(was_new.get(), lines.size()));
    for (size_t i = 0; i < lines.size(); ++i) {
      if (was_new[i]) out.Write(lines[i]);
    }
    if (!added.ok()) {
      if (absl::Status s = out.Flush(); !s.ok()) return s;
      return added.status();
    }
    kept += *added;
    read += lines.size();
    since_checkpoint += lines.size();
    progress.Update(reader->bytes_read(), read);
    if (state_flag && since_checkpoint == *checkpoint) {
      // Output first: the state must never remember a line that was not written out.
      if (absl::Status s = out.Flush(); !s.ok()) return s;
      if (absl::Status s = filter->Save(state_path); !s.ok()) return s;
      since_checkpoint = 0;
    }
  }
  if (absl::Status s = out.Flush(); !s.ok()) return s;
  if (state_flag) {
    if (absl::Status s = filter->Save(state_path); !s.ok()) return s;
  }
  WarnIfOverCapacity("dedupe", known + kept, filter->capacity(), *filter);
  if (args->Has("stats")) {
    std::fprintf(stderr,
                 "bloomery dedupe: read %s lines, kept %s, dropped %s; %.*s filter %s, "
                 "false-positive rate now about %s\n",
                 FormatCount(read).c_str(), FormatCount(kept).c_str(),
                 FormatCount(read - kept).c_str(), static_cast<int>(filter->kind().size()),
                 filter->kind().data(),
                 FormatBytes(static_cast<double>(filter->memory_bytes())).c_str(),
                 FormatFpr(filter->EstimatedFpr()).c_str());
  }
  return absl::OkStatus();
}

absl::Status IntersectCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {{"memory", true}, {"capacity", true}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kIntersectHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(2, 2); !s.ok()) return s;
  const std::string& a_path = args->positional()[0];
  const std::string& b_path = args->positional()[1];
  absl::StatusOr<uint64_t> memory = args->Size("memory", kDefaultMemory);
  if (!memory.ok()) return memory.status();
  if (*memory < kBlockBytes) {
    return UsageError(absl::StrCat("--memory must be at least ", kBlockBytes, " bytes"));
  }
  absl::StatusOr<uint64_t> capacity = args->Count("capacity", 0);
  if (!capacity.ok()) return capacity.status();
  if (args->Has("capacity") && *capacity == 0) return UsageError("--capacity must be at least 1");
  if (a_path == "-" && b_path == "-") return UsageError("A and B cannot both be stdin");
  if (a_path == "-" && *capacity == 0) {
    return UsageError(
        "A is read twice (to count its lines, then to load them): give A as a "
        "file, or --capacity");
  }
  // Open B first: a missing B should fail before the long pass over A.
  absl::StatusOr<LineReader> b_reader = LineReader::Open(b_path);
  if (!b_reader.ok()) return b_reader.status();
  if (*capacity == 0) {
    absl::StatusOr<uint64_t> count = CountLines(a_path);
    if (!count.ok()) return count.status();
    if (*count == 0) return absl::OkStatus();  // nothing is in an empty A
    *capacity = *count;
  }

  // The budget in whole blocks, but never more than kMaxBitsPerLine per line of A.
  uint64_t bits = std::min(*memory / kBlockBytes * kBlockBits, kMaxBits);
  if (*capacity <= kMaxBits / kMaxBitsPerLine) bits = std::min(bits, *capacity * kMaxBitsPerLine);
  bits = std::max<uint64_t>(bits / kBlockBits * kBlockBits, kBlockBits);
  FilterOptions options;
  options.bits = bits;
  options.capacity = *capacity;
  options.max_memory_bytes = *memory;
  absl::StatusOr<BlockedFilter> filter = BlockedFilter::Create(options);
  if (!filter.ok()) return filter.status();
  std::fprintf(stderr,
               "bloomery intersect: A has %s lines; filter %s (%.1f bits/line, %d hashes); "
               "expected false-positive rate %s\n",
               FormatCount(*capacity).c_str(),
               FormatBytes(static_cast<double>(filter->memory_bytes())).c_str(),
               filter->plan().bits_per_key, filter->hashes(),
               FormatFpr(filter->plan().expected_fpr).c_str());

  absl::StatusOr<uint64_t> inserted = InsertLines(a_path, *filter);
  if (!inserted.ok()) return inserted.status();
  WarnIfOverCapacity("intersect", *inserted, filter->plan().capacity, *filter);

  Progress progress(absl::StrCat("intersect ", b_path), b_reader->total_bytes());
  LineWriter out;
  std::vector<std::string_view> lines;
  const auto maybe = std::make_unique<bool[]>(kBatchLines);
  uint64_t read = 0;
  while (true) {
    if (absl::Status s = b_reader->NextBatch(kBatchLines, lines); !s.ok()) return s;
    if (lines.empty()) break;
    filter->MayContainMany(lines, std::span<bool>(maybe.get(), lines.size()));
    for (size_t i = 0; i < lines.size(); ++i) {
      if (maybe[i]) out.Write(lines[i]);
    }
    read += lines.size();
    progress.Update(b_reader->bytes_read(), read);
  }
  return out.Flush();
}

}  // namespace bloomery::cli
