// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The subcommands over filter files: build, add, remove, query, info and merge. Every kind of
// filter goes through AnyFilter (cli_filter.h); every Save is atomic (temp file, fsync, rename),
// so a file is always either its old or its new contents, never half of each.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

constexpr char kBuildHelp[] =
    R"(usage: bloomery build --capacity N [--fpr P] [--kind K] -o FILE [INPUT]
       bloomery build --bits B [--hashes K] [--kind K] -o FILE [INPUT]

Creates a filter, inserts every line of INPUT (or stdin, or "-"), and saves it to FILE
(atomically: FILE is never left half-written). A summary goes to stderr (or, with --json, to
stdout): the kind, lines inserted, new keys, memory, and the false-positive rate planned and now.

options:
  --kind K          blocked (the default: one cache line per key), classic (partitioned: the
                    fewest bits), scalable (grows: for unknown counts), counting (supports remove)
  --capacity N      keys expected (scalable: the first stage's); k, M, G, T are powers of 1000
  --fpr P           false-positive rate at capacity (default 0.01; scalable: the bound for the
                    whole chain)
  --bits B          a given size in bits instead (2^30, 1G = 2^30); not for scalable
  --hashes K        probes per key (default: the planner's choice)
  --counter-bits C  counting filters: 4 (the default, counts to 15) or 8 (counts to 255)
  -o FILE           the filter file to write
  --json            print the summary as JSON on stdout

A scalable filter that reaches a limit refuses new keys: build then exits 1 and writes nothing.
)";

constexpr char kAddHelp[] = R"(usage: bloomery add FILE [INPUT] [--json]

Loads the filter in FILE (any kind), inserts every line of INPUT (or stdin, or "-"), and saves it
over FILE atomically. A summary goes to stderr (or, with --json, to stdout). A scalable filter that
reaches a limit refuses new keys: add then exits 1 and FILE is left as it was.
)";

constexpr char kRemoveHelp[] = R"(usage: bloomery remove FILE [INPUT] [--json]

Counting filters only (bloomery build --kind counting). Loads FILE, erases every line of INPUT (or
stdin, or "-") and saves FILE atomically. A line that is certainly absent is not found and changes
nothing; the numbers of lines erased and not found go to stderr (or, with --json, to stdout).
Erasing a line that was never inserted but looks present (a false positive) erases counts of other
keys, which can then be reported absent: remove only lines you inserted.
)";

constexpr char kQueryHelp[] =
    R"(usage: bloomery query FILE [--present | --absent | --count [--json]] [INPUT]

Looks up every line of INPUT (or stdin, or "-") in the filter in FILE, and prints, in order:
  --present   the lines that may be in the filter (the default): every inserted line, and others
              with probability about the filter's false-positive rate
  --absent    the lines that are certainly not in the filter
  --count     only the number of lines that may be present (--json: lines, present and absent)
)";

constexpr char kInfoHelp[] = R"(usage: bloomery info FILE [--json]

Describes a filter file: what its header says (kind, format version, size, geometry, planned
capacity and FPR, seed, whether it was left dirty by a read-write mapping) after verifying every
checksum, then, from the loaded filter, the estimated number of keys, the false-positive rate now
and the memory it takes. A corrupted file is reported as such, with exit code 1.
)";

constexpr char kMergeHelp[] = R"(usage: bloomery merge -o OUT A B [C...] [--json]

Loads the filters A, B, C... and writes their union to OUT (atomically): a key inserted into any of
them may be present in OUT. They must be of one kind and built alike (same geometry and seed, e.g.
by the same build command); otherwise merge exits 1 and says why. Counting filters add their
counts. A summary goes to stderr (or, with --json, to stdout).
)";

constexpr size_t kBatchLines = 4096;

// What build, add, remove and merge did, for the one-line summary or its JSON.
struct Report {
  Report(std::string_view command, std::string path) : command(command), path(std::move(path)) {}
  std::string_view command;
  std::string path;
  uint64_t lines = 0;
  uint64_t new_keys = 0;
  std::optional<uint64_t> erased;     // remove only
  std::optional<uint64_t> not_found;  // remove only
  std::optional<uint64_t> inputs;     // merge only: files merged
};

void PrintReport(const Report& report, const AnyFilter& filter, bool json) {
  const double fpr_now = filter.EstimatedFpr();
  if (json) {
    JsonWriter out;
    out.BeginObject().Key("file").String(report.path).Key("kind").String(filter.kind());
    if (!report.inputs) out.Key("lines").Integer(report.lines);
    if (report.erased) {
      out.Key("erased").Integer(*report.erased).Key("not_found").Integer(*report.not_found);
    } else if (report.inputs) {
      out.Key("inputs").Integer(*report.inputs);
    } else {
      out.Key("new_keys").Integer(report.new_keys);
    }
    out.Key("memory_bytes")
        .Integer(filter.memory_bytes())
        .Key("stages")
        .Integer(filter.stage_count())
        .Key("capacity")
        .Integer(filter.capacity())
        .Key("planned_fpr")
        .Number(filter.planned_fpr())
        .Key("estimated_count")
        .Number(filter.EstimatedCount())
        .Key("estimated_fpr")
        .Number(fpr_now)
        .EndObject();
    std::fputs(out.Finish().c_str(), stdout);
    return;
  }
  const std::string what =
      report.erased
          ? absl::StrFormat("%s lines: %s erased, %s not found", FormatCount(report.lines),
                            FormatCount(*report.erased), FormatCount(*report.not_found))
      : report.inputs ? absl::StrFormat("the union of %d files", *report.inputs)
                      : absl::StrFormat("%s lines inserted, %s new keys", FormatCount(report.lines),
                                        FormatCount(report.new_keys));
  std::fprintf(stderr,
               "bloomery %.*s: %s: %.*s filter, %s, %s; planned FPR %s at %s keys, now about %s\n",
               static_cast<int>(report.command.size()), report.command.data(), report.path.c_str(),
               static_cast<int>(filter.kind().size()), filter.kind().data(), what.c_str(),
               FormatBytes(static_cast<double>(filter.memory_bytes())).c_str(),
               FormatFpr(filter.planned_fpr()).c_str(), FormatCount(filter.capacity()).c_str(),
               FormatFpr(fpr_now).c_str());
}

struct BatchTotals {
  uint64_t lines = 0;
  uint64_t counted = 0;  // the sum of apply's answers
};

// Runs `apply(lines, results)` over every line of `path`, a batch at a time, with a progress bar;
// `apply` returns how many lines of the batch it counted (new, erased or present).
template <typename Apply>
absl::StatusOr<BatchTotals> ForEachBatch(const std::string& path, std::string_view label,
                                         Apply apply) {
  absl::StatusOr<LineReader> reader = LineReader::Open(path);
  if (!reader.ok()) return reader.status();
  Progress progress(std::string(label), reader->total_bytes());
  std::vector<std::string_view> lines;
  // std::vector<bool> is packed bits; the filters write a span of real bools.
  const auto results = std::make_unique<bool[]>(kBatchLines);
  BatchTotals totals;
  while (true) {
    if (absl::Status s = reader->NextBatch(kBatchLines, lines); !s.ok()) return s;
    if (lines.empty()) return totals;
    absl::StatusOr<size_t> counted = apply(lines, std::span<bool>(results.get(), lines.size()));
    if (!counted.ok()) return counted.status();
    totals.lines += lines.size();
    totals.counted += *counted;
    progress.Update(reader->bytes_read(), totals.lines);
  }
}

absl::Status InsertAll(const std::string& input, AnyFilter& filter, Report& report) {
  absl::StatusOr<BatchTotals> totals = ForEachBatch(
      input, report.command, [&](std::span<const std::string_view> lines, std::span<bool> was_new) {
        return filter.InsertMany(lines, was_new);
      });
  if (!totals.ok()) return totals.status();
  report.lines = totals->lines;
  report.new_keys = totals->counted;
  return absl::OkStatus();
}

std::string InputPath(const Args& args, size_t index) {
  return args.positional().size() > index ? args.positional()[index] : "-";
}

}  // namespace

absl::Status BuildCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv,
                                          {{"kind", true},
                                           {"capacity", true},
                                           {"fpr", true},
                                           {"bits", true},
                                           {"hashes", true},
                                           {"counter-bits", true},
                                           {"o", true},
                                           {"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kBuildHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(0, 1); !s.ok()) return s;
  const std::optional<std::string_view> output = args->Value("o");
  if (!output || output->empty()) return UsageError("give the filter file to write: -o FILE");
  if (!args->Has("capacity") && !args->Has("bits")) {
    return UsageError("give --capacity N (and --fpr P), or --bits B");
  }
  absl::StatusOr<CreateSpec> spec = CreateSpecFromFlags(*args, 0, 0.01);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<AnyFilter> filter = AnyFilter::Create(*spec);
  if (!filter.ok()) return filter.status();
  Report report("build", std::string(*output));
  if (absl::Status s = InsertAll(InputPath(*args, 0), *filter, report); !s.ok()) return s;
  if (absl::Status s = filter->Save(report.path); !s.ok()) return s;
  PrintReport(report, *filter, args->Has("json"));
  return absl::OkStatus();
}

absl::Status AddCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {{"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kAddHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(1, 2); !s.ok()) return s;
  Report report("add", args->positional()[0]);
  absl::StatusOr<AnyFilter> filter = AnyFilter::Load(report.path);
  if (!filter.ok()) return filter.status();
  if (absl::Status s = InsertAll(InputPath(*args, 1), *filter, report); !s.ok()) return s;
  if (absl::Status s = filter->Save(report.path); !s.ok()) return s;
  PrintReport(report, *filter, args->Has("json"));
  return absl::OkStatus();
}

absl::Status RemoveCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {{"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kRemoveHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(1, 2); !s.ok()) return s;
  Report report("remove", args->positional()[0]);
  absl::StatusOr<AnyFilter> filter = AnyFilter::Load(report.path);
  if (!filter.ok()) return filter.status();
  // Refuse before reading any input: EraseMany of an empty batch would not say no.
  if (absl::StatusOr<size_t> none = filter->EraseMany({}, {}); !none.ok()) return none.status();
  absl::StatusOr<BatchTotals> totals =
      ForEachBatch(InputPath(*args, 1), "remove",
                   [&](std::span<const std::string_view> lines, std::span<bool> erased) {
                     return filter->EraseMany(lines, erased);
                   });
  if (!totals.ok()) return totals.status();
  report.lines = totals->lines;
  report.erased = totals->counted;
  report.not_found = totals->lines - totals->counted;
  if (absl::Status s = filter->Save(report.path); !s.ok()) return s;
  PrintReport(report, *filter, args->Has("json"));
  return absl::OkStatus();
}

absl::Status QueryCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(
      argc, argv, {{"present", false}, {"absent", false}, {"count", false}, {"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kQueryHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(1, 2); !s.ok()) return s;
  const bool absent = args->Has("absent");
  const bool count_only = args->Has("count");
  if (args->Has("present") + absent + count_only > 1) {
    return UsageError("--present, --absent and --count exclude each other");
  }
  if (args->Has("json") && !count_only) return UsageError("--json goes with --count");
  absl::StatusOr<AnyFilter> filter = AnyFilter::Load(args->positional()[0]);
  if (!filter.ok()) return filter.status();
  LineWriter out;
  absl::StatusOr<BatchTotals> totals =
      ForEachBatch(InputPath(*args, 1), "query",
                   [&](std::span<const std::string_view> lines,
                       std::span<bool> maybe) -> absl::StatusOr<size_t> {
                     const size_t present = filter->MayContainMany(lines, maybe);
                     if (!count_only) {
                       for (size_t i = 0; i < lines.size(); ++i) {
                         if (maybe[i] != absent) out.Write(lines[i]);
                       }
                     }
                     return present;
                   });
  if (!totals.ok()) return totals.status();
  if (!count_only) return out.Flush();
  if (args->Has("json")) {
    JsonWriter json;
    json.BeginObject()
        .Key("lines")
        .Integer(totals->lines)
        .Key("present")
        .Integer(totals->counted)
        .Key("absent")
        .Integer(totals->lines - totals->counted)
        .EndObject();
    std::fputs(json.Finish().c_str(), stdout);
  } else {
    std::printf("%llu\n", static_cast<unsigned long long>(totals->counted));
  }
  return absl::OkStatus();
}

absl::Status InfoCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {{"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kInfoHelp, stdout);
    return absl::OkStatus();
  }
  if (absl::Status s = args->ExpectPositional(1, 1); !s.ok()) return s;
  const std::string& path = args->positional()[0];
  absl::StatusOr<FileInfo> info = InspectFile(path, /*verify_checksums=*/true);
  if (!info.ok()) return FileStatus(info.status());
  // InspectFile has just verified the checksums; a dirty file is described, not refused.
  LoadOptions load;
  load.verify_checksums = false;
  load.allow_dirty = true;
  absl::StatusOr<AnyFilter> filter = AnyFilter::Load(path, load);
  if (!filter.ok()) return filter.status();
  const std::string checksums = info->checksums_verified ? "verified"
                                : info->dirty ? "not verified (dirty: checksums are stale)"
                                              : "not verified";
  const double estimated_count = filter->EstimatedCount();
  const double estimated_fpr = filter->EstimatedFpr();

  if (args->Has("json")) {
    JsonWriter json;
    json.BeginObject()
        .Key("file")
        .String(path)
        .Key("kind")
        .String(FilterKindName(info->kind))
        .Key("version")
        .Integer(info->version)
        .Key("file_bytes")
        .Integer(info->file_bytes)
        .Key("payload_bytes")
        .Integer(info->payload_bytes)
        .Key("bits")
        .Integer(info->bits)
        .Key("hashes")
        .Integer(info->hashes)
        .Key("counter_bits")
        .Integer(info->counter_bits)
        .Key("stages")
        .Integer(info->stages)
        .Key("capacity")
        .Integer(info->capacity)
        .Key("planned_fpr")
        .Number(info->fpr)
        .Key("insert_count")
        .Integer(info->insert_count)
        .Key("seed")  // a string: JSON numbers lose 64-bit integers' low bits
        .String(absl::StrFormat("0x%016x", info->seed))
        .Key("dirty")
        .Bool(info->dirty)
        .Key("checksums_verified")
        .Bool(info->checksums_verified)
        .Key("estimated_count")
        .Number(estimated_count)
        .Key("estimated_fpr")
        .Number(estimated_fpr)
        .Key("memory_bytes")
        .Integer(filter->memory_bytes())
        .Key("loaded_stages")
        .Integer(filter->stage_count())
        .EndObject();
    std::fputs(json.Finish().c_str(), stdout);
    return absl::OkStatus();
  }
  TextTable table;
  auto row = [&](std::string name, std::string value) {
    table.AddRow({std::move(name), std::move(value)});
  };
  row("file", path);
  row("kind", std::string(FilterKindName(info->kind)));
  row("format version", absl::StrCat(info->version));
  row("file size", absl::StrCat(FormatCount(info->file_bytes), " bytes (",
                                FormatBytes(static_cast<double>(info->file_bytes)), ")"));
  row("bits", FormatCount(info->bits));
  row("hashes", absl::StrCat(info->hashes));
  if (info->counter_bits != 0) row("counter bits", absl::StrCat(info->counter_bits));
  if (info->kind == FilterKind::kScalable) row("stages", absl::StrCat(info->stages));
  row(info->kind == FilterKind::kScalable ? "capacity (first stage)" : "capacity",
      FormatCount(info->capacity));
  row("planned FPR", FormatFpr(info->fpr));
  row("seed", absl::StrFormat("0x%016x", info->seed));
  row("dirty", info->dirty ? "yes (mapped read-write and not flushed)" : "no");
  row("checksums", checksums);
  row("estimated keys", FormatCount(static_cast<uint64_t>(estimated_count + 0.5)));
  row("FPR now", FormatFpr(estimated_fpr));
  row("memory", FormatBytes(static_cast<double>(filter->memory_bytes())));
  std::fputs(table.Render().c_str(), stdout);
  return absl::OkStatus();
}

absl::Status MergeCommand(int argc, char* const* argv) {
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {{"o", true}, {"json", false}});
  if (!args.ok()) return args.status();
  if (args->help()) {
    std::fputs(kMergeHelp, stdout);
    return absl::OkStatus();
  }
  const std::optional<std::string_view> output = args->Value("o");
  if (!output || output->empty()) return UsageError("give the file to write: -o OUT");
  if (absl::Status s = args->ExpectPositional(2, args->positional().size()); !s.ok()) return s;
  const std::vector<std::string>& inputs = args->positional();
  absl::StatusOr<AnyFilter> merged = AnyFilter::Load(inputs[0]);
  if (!merged.ok()) return merged.status();
  for (size_t i = 1; i < inputs.size(); ++i) {
    absl::StatusOr<AnyFilter> next = AnyFilter::Load(inputs[i]);
    if (!next.ok()) return next.status();
    if (absl::Status s = merged->UnionWith(*next); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot merge ", inputs[i], " into ", inputs[0],
                                                 ": ", s.message()));
    }
  }
  Report report("merge", std::string(*output));
  report.inputs = inputs.size();
  if (absl::Status s = merged->Save(report.path); !s.ok()) return s;
  PrintReport(report, *merged, args->Has("json"));
  return absl::OkStatus();
}

}  // namespace bloomery::cli
