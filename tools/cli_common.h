// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_common.h: what every `bloomery` subcommand shares: the subcommand registry, strict numbers
// as CLI11 flags (each flag and its help declared in one call, so --help cannot drift from the
// flags), exit codes, JSON output and human-readable formatting.
//
// Errors travel as absl::Status and become exit codes in one place (ExitCodeFor): InvalidArgument
// means the command line was wrong (exit 2), anything else means the input or a file was bad
// (exit 1). CLI11's parse errors are usage errors too. Messages go to stderr prefixed with
// "bloomery <subcommand>: ".
#ifndef BLOOMERY_TOOLS_CLI_COMMON_H_
#define BLOOMERY_TOOLS_CLI_COMMON_H_

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bloomery/bloomery.h"
#include "bloomery/detail/absl_compat.h"

namespace bloomery::cli {

using detail::AbslView;  // std::string_view as StrCat, SimpleAtoi and Status take it

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// A usage error: exit code 2.
[[nodiscard]] absl::Status UsageError(std::string_view message);
// A bad input or file: exit code 1.
[[nodiscard]] absl::Status InputError(std::string_view message);
// InputError unless a file can be created beside `path` (a Save writes a temporary file there and
// renames it): checked before a long run that ends in a Save. `flag` names the option in the error.
[[nodiscard]] absl::Status CheckWritableBeside(const char* flag, const std::string& path);
// 0 for OK, 2 for InvalidArgument (usage), 1 for everything else.
[[nodiscard]] int ExitCodeFor(const absl::Status& status);

// A subcommand: its flags are bound to state that `run` owns; `run` writes results to stdout and
// returns a Status that main() turns into the exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<absl::Status()> run;
};

// The subcommands, in help's order.
class Commands {
 public:
  explicit Commands(CLI::App& root) : root_(root) {}
  // Declares subcommand `name`: `summary` is its line in `bloomery --help`, `details` what its own
  // --help prints below the flags. The caller declares the flags (each with its help) on the app
  // returned, bound to the Flags returned, which `run` gets once the command line is parsed.
  template <typename Flags>
  std::pair<CLI::App*, Flags*> Add(const std::string& name, const std::string& summary,
                                   const std::string& details, absl::Status (*run)(const Flags&)) {
    CLI::App* app = root_.add_subcommand(name, summary);
    app->footer(details);
    auto flags = std::make_shared<Flags>();
    list_.push_back({app, [flags, run] { return run(*flags); }});
    return {app, flags.get()};
  }
  [[nodiscard]] const std::vector<Command>& list() const { return list_; }

 private:
  CLI::App& root_;
  std::vector<Command> list_;
};

// Each declares its file's subcommands, in help's order.
void AddPlanCommands(Commands& commands);      // plan (cli_plan.cc), then table:
void AddTableCommand(Commands& commands);      // table (cli_table.cc)
void AddBenchCommands(Commands& commands);     // bench (cli_bench.cc)
void AddStreamCommands(Commands& commands);    // dedupe (cli_stream.cc), then intersect:
void AddIntersectCommand(Commands& commands);  // intersect (cli_intersect.cc)
// build, add, remove, query, info, merge, repair: the filter-file subcommands (cli_file.cc)
void AddFileCommands(Commands& commands);

// What a number flag accepts. Every form is strict: nothing but the number (no spaces, sign, hex
// or trailing text); "1e6", "1.5e6" and "2^20" are fine; the value must be a whole number < 2^62.
// One convention for every unit (kNumberConvention, said once in --help): K (or k), M, G, T are
// powers of 1000, Ki, Mi, Gi, Ti powers of 1024: "10M" == 10^7, "1Gi" == 2^30.
enum class Unit {
  kCount,  // keys, lines
  kBits,   // bits: byte units ("1GB") are refused
  kBytes,  // bytes: the suffix may be followed by B ("4GB" == "4G" == 4 * 10^9, "4GiB" == 2^32)
};
inline constexpr std::string_view kNumberConvention =
    "Numbers: K (or k), M, G, T are powers of 1000 and Ki, Mi, Gi, Ti powers of 1024, for counts, "
    "bits and bytes alike (a size may end in B: 4GB, 2.5GiB); 2^20 and 1e6 work too.";
[[nodiscard]] absl::StatusOr<uint64_t> ParseNumber(std::string_view text, Unit unit);
// A probability in (0, 1): "0.01", "1e-3", or a percentage "1%".
[[nodiscard]] absl::StatusOr<double> ParseFraction(std::string_view text);

// The largest value any number flag takes (ParseNumber's "too large" beyond it): keeps every
// later product (bits = bytes * 8, keys * bits per key) away from overflow's edge.
inline constexpr uint64_t kMaxNumber = uint64_t{1} << 62;

// The values a number flag takes, both ends included. Every number flag is declared with its
// range (AddNumber), so no value reaches a subcommand that it cannot work with.
struct NumberRange {
  uint64_t min = 1;
  uint64_t max = kMaxNumber;
};
// "[1, 2^32]": a bound that is a power of two from 2^16 on is written as one.
[[nodiscard]] std::string FormatRange(uint64_t min, uint64_t max);

// Flags whose value is parsed (strictly, as above) while the command line is: a bad value, or one
// outside `range` (AddNumber, AddInteger; AddFraction's is (0, 1)), is a usage error naming the
// flag and the range. `name` is CLI11's ("--capacity", "-o,--output").
CLI::Option* AddNumber(CLI::App& app, const std::string& name, uint64_t& out, Unit unit,
                       NumberRange range, const std::string& help);
CLI::Option* AddFraction(CLI::App& app, const std::string& name, double& out,
                         const std::string& help);
CLI::Option* AddInteger(CLI::App& app, const std::string& name, uint32_t& out, uint32_t min,
                        uint32_t max, const std::string& help);
// A boolean flag; "--json=yes" is a usage error.
CLI::Option* AddFlag(CLI::App& app, const std::string& name, bool& out, const std::string& help);
// "--json": print JSON instead of text.
inline CLI::Option* AddJson(CLI::App& app, bool& out,
                            const std::string& help = "print JSON instead of a table") {
  return AddFlag(app, "--json", out, help);
}
[[nodiscard]] inline bool Given(const CLI::Option* option) { return option->count() > 0; }
// A check for a flag naming a file: an empty name ("-o ''") is a usage error, "-o: needs a file
// name". Its description is empty, so help shows the flag's placeholder alone.
[[nodiscard]] CLI::Validator FileName();

// The sizing flags of every subcommand that creates a filter: "--capacity N [--fpr P] [--hashes
// K]" (planned) or "--bits B [--hashes K] [--capacity N]" (a given geometry).
struct SizingFlags {
  // Declares the flags; `capacity_help` and `fpr_help` say what they mean to this subcommand.
  void Add(CLI::App& app, const std::string& capacity_help, const std::string& fpr_help);
  // FilterOptions from the flags, absent ones taking the defaults. Errors (InvalidArgument): --fpr
  // with --bits, --bits without --hashes or --capacity, a zero capacity.
  [[nodiscard]] absl::StatusOr<FilterOptions> Options(uint64_t default_capacity,
                                                      double default_fpr) const;
  // Whether `flag` ("--capacity") was given; the flags are looked up by name on the app.
  [[nodiscard]] bool Given(const std::string& flag) const { return app->count(flag) > 0; }
  uint64_t capacity = 0;
  double fpr = 0;
  uint64_t bits = 0;
  uint32_t hashes = 0;
  const CLI::App* app = nullptr;
};

// "--max-memory SIZE": the cap on the memory of a filter created or loaded (0: none, the default:
// the machine's memory). `help` replaces the default help where the cap means something else.
CLI::Option* AddMaxMemory(CLI::App& app, uint64_t& out, const std::string& help = "");
// The range of a memory cap: 0 (none: the machine's memory) up to kMaxNumber.
inline constexpr NumberRange kMemoryCapRange = {0, kMaxNumber};
// "--strip-cr": drop one '\r' at the end of each input line (LineReader).
CLI::Option* AddStripCr(CLI::App& app, bool& out);
// "--allow-dirty": load a file left DIRTY by a crashed read-write mapping (LoadOptions).
CLI::Option* AddAllowDirty(CLI::App& app, bool& out);
// "--no-wait": a read-modify-write command fails at once when another process holds the file's
// lock, instead of waiting for it (LockForUpdate, file.h).
CLI::Option* AddNoWait(CLI::App& app, bool& out);

// JSON in the order the fields are written. Printed with invalid UTF-8 (a file name's bytes)
// replaced by U+FFFD, so the output is always valid JSON; non-finite numbers print as null.
using Json = nlohmann::ordered_json;
void PrintJson(const Json& json);

// Right-aligned text columns (the first column left-aligned), two spaces apart.
class TextTable {
 public:
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  [[nodiscard]] std::string Render() const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "line512, block256, word64": the blocked shapes (layout.h), for help and messages.
[[nodiscard]] std::string BlockLayoutList();
// The layout a --layout flag names (ParseLayout's names): `auto` only where `allow_auto`,
// `partitioned` only where `allow_partitioned` (a scalable filter's stages; a filter of its own
// that is partitioned is --kind classic). Errors (InvalidArgument) name the flag and the choices.
[[nodiscard]] absl::StatusOr<Layout> ParseLayoutFlag(std::string_view name, bool allow_auto,
                                                     bool allow_partitioned = false);

// 1234567 -> "1,234,567".
[[nodiscard]] std::string FormatCount(uint64_t value);
// 1288490188 -> "1.20 GiB".
[[nodiscard]] std::string FormatBytes(double bytes);
// An FPR for people: "0.00977" or "9.77e-06".
[[nodiscard]] std::string FormatFpr(double fpr);

// Writes `contents` to `path` (a chart, not a filter: not atomic). Errors: InputError when it
// cannot be opened, DataLoss when a write or the close fails.
[[nodiscard]] absl::Status WriteTextFile(const std::string& path, const std::string& contents);

// ---------------------------------------------------------------------------------------------
// Lines in and out (cli_io.cc), and the progress bar of long subcommands.
//
// Keys are lines: the bytes between newlines, without the '\n'. A '\r' is kept (keys are bytes, so
// "a\r" and "a" are different keys) unless the reader strips it (--strip-cr). A last line without a
// newline is still a line. Input is read in large blocks and handed out in batches of string_views,
// so the filters' batch calls see many keys at once; ForEachBatch is the one loop over them.

class LineReader {
 public:
  // Opens `path` for reading; "-" is stdin. Errors: NotFound / PermissionDenied (exit code 1)
  // naming the file.
  [[nodiscard]] static absl::StatusOr<LineReader> Open(const std::string& path,
                                                       bool strip_cr = false);
  // Reads all of `path` now, for input that cannot be read twice (a pipe) but must be.
  [[nodiscard]] static absl::StatusOr<LineReader> OpenBuffered(const std::string& path,
                                                               bool strip_cr, uint64_t max_bytes);

  LineReader(LineReader&&) noexcept = default;
  LineReader& operator=(LineReader&&) = delete;

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

  // The descriptor read from, closed with the reader if the reader opened it (not stdin's).
  struct Fd {
    Fd(int fd, bool owned) : fd(fd), owned(owned) {}
    Fd(Fd&& other) noexcept : fd(other.fd), owned(std::exchange(other.owned, false)) {}
    Fd& operator=(Fd&&) = delete;
    ~Fd();
    int fd;
    bool owned;
  };

  // The bytes read, in memory from malloc: growing it is a realloc, which for a large buffer
  // moves its pages (mremap) rather than copying them, and no byte is written before a read()
  // fills it, so a long line costs about its own length in memory, not a zeroed copy twice its
  // size.
  struct Free {
    void operator()(char* bytes) const { std::free(bytes); }
  };

  Fd fd_;
  bool eof_ = false;
  bool strip_cr_ = false;
  bool rereadable_ = false;
  bool unterminated_ = false;
  bool buffered_ = false;  // all of the input is in buffer_
  std::string path_;
  uint64_t total_bytes_ = 0;
  uint64_t bytes_read_ = 0;
  std::unique_ptr<char, Free> buffer_;
  size_t capacity_ = 0;  // bytes allocated at buffer_
  size_t begin_ = 0;     // first unconsumed byte of buffer_
  size_t scanned_ = 0;   // [begin_, scanned_) holds no '\n': a long line is searched once
  size_t end_ = 0;       // one past the last valid byte of buffer_
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
  // Writes `bytes` to stdout, all of them, unless a write failed (then or before).
  void WriteOut(std::string_view bytes);

  std::string buffer_;
  bool failed_ = false;
  int error_ = 0;  // errno of the failed write, until a Flush reports it
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

// ---------------------------------------------------------------------------------------------
// Filters of any kind (bloomery::AnyFilter, cli_filter.cc) for the subcommands that work on filter
// files (build, add, remove, query, info, merge, repair) and for dedupe (--kind, --state).

// What `build` (and `dedupe --state` for a new state file) creates.
struct CreateSpec {
  FilterKind kind = FilterKind::kBlocked;
  // capacity/fpr or bits/hashes (capacity is a scalable filter's first stage's), max_memory_bytes
  // from --max-memory, --counter-bits, and a windowed filter's window (zero: a window of
  // `capacity` lines), refresh and clock.
  AnyOptions options;
};

// The flags that choose what to create: "--kind K", the sizing flags, "--counter-bits 4|8"
// (counting filters only), "--layout L" (blocked, scalable and windowed filters), "--prefer P"
// (with --layout auto) and "--max-memory SIZE".
struct CreateFlags {
  void Add(CLI::App& app, const std::string& capacity_help, const std::string& fpr_help);
  // Errors (InvalidArgument): an unknown kind or layout, --counter-bits or --layout for a kind that
  // does not take it, and those of SizingFlags::Options.
  [[nodiscard]] absl::StatusOr<CreateSpec> Spec(uint64_t default_capacity,
                                                double default_fpr) const;
  // The flags given that shape a new filter ("--kind", "--capacity", ...).
  [[nodiscard]] std::vector<std::string> Given() const;
  [[nodiscard]] bool Given(const std::string& flag) const { return sizing.Given(flag); }

  std::string kind = "blocked";
  SizingFlags sizing;
  uint32_t counter_bits = 4;
  std::string layout;
  std::string prefer = "smallest";
  uint64_t max_memory = 0;
  int64_t window_ns = 0;
  uint64_t window_keys = 0;
};

// A status from reading filter file `path`, for the exit code and the message: the library
// answers InvalidArgument for a file that is not a bloomery file, which is bad input (exit 1), not
// bad usage (exit 2); the message names the file.
[[nodiscard]] absl::Status FileStatus(const absl::Status& status, const std::string& path);

// The advisory lock that one load-modify-save of `path` holds (LockForUpdate, file.h): a second
// bloomery process updating the same file waits for the first (or, with no_wait, fails at once
// naming it), so no writer's keys are lost. Hold it from before the load until after the save.
[[nodiscard]] absl::StatusOr<FileLock> LockFile(const std::string& path, bool no_wait);

// A new filter as `spec` says. Errors: InvalidArgument for sizing the kind refuses.
[[nodiscard]] absl::StatusOr<AnyFilter> CreateFilter(const CreateSpec& spec);
// Loads a file of any kind (AnyFilter::Load, with ClockFromEnvironment) with `options` (by default:
// checksums verified, a DIRTY file refused); errors through FileStatus.
[[nodiscard]] absl::StatusOr<AnyFilter> LoadFilter(const std::string& path,
                                                   const LoadOptions& options = {});
// "blocked", "counting", ...
[[nodiscard]] inline std::string_view KindName(const AnyFilter& filter) {
  return FilterKindName(filter.kind());
}

// A windowed filter's clock: the system clock, or (tests only) the fixed time in ns since the Unix
// epoch that BLOOMERY_FAKE_CLOCK_NS holds, so a test can step a --state file's time across runs.
[[nodiscard]] WindowClock ClockFromEnvironment();

// "saturated" when `count` is infinite (every bit set), else the count rounded, for people.
[[nodiscard]] std::string FormatEstimate(double count);
// The same for JSON: the string "saturated" or a number, never null.
[[nodiscard]] Json EstimateJson(double count);

// What a capacity warning counts: the filter's distinct keys (what it held before the command,
// estimated from its bits, plus the lines the command found absent; a repeated line, or one the
// filter took for present, is not a new key), or the lines inserted.
enum class Counted { kDistinctKeys, kLines };

// Warns on stderr when `count` went over `capacity` (a Filter: AnyFilter or BlockedFilter),
// saying what it counted.
template <typename Filter>
void WarnIfOverCapacity(std::string_view command, double count, uint64_t capacity,
                        const Filter& filter, Counted counted = Counted::kDistinctKeys) {
  if (capacity == 0 || count <= static_cast<double>(capacity)) return;
  const char* what = counted == Counted::kLines
                         ? "lines went in"
                         : "distinct keys are in the filter now (those it held, plus the lines "
                           "found absent)";
  std::fprintf(stderr,
               "bloomery %.*s: warning: %s %s, over the planned capacity of %s; the "
               "false-positive rate rose to about %s (plan for more)\n",
               static_cast<int>(command.size()), command.data(), FormatEstimate(count).c_str(),
               what, FormatCount(capacity).c_str(), FormatFpr(filter.EstimatedFpr()).c_str());
}

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_COMMON_H_
