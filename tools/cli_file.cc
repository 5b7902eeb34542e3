// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The subcommands over filter files: build, add, remove, query, info, merge, fold and repair. Every
// kind of filter goes through AnyFilter (cli_common.h); every Save is atomic (temp file, fsync,
// rename), so a file is always either its old or its new contents, never half of each.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
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
#include "cli_common.h"

namespace bloomery::cli {
namespace {

// What build, add, remove, merge and fold did, for the one-line summary or its JSON.
struct Report {
  Report(std::string_view command, std::string path) : command(command), path(std::move(path)) {}
  std::string_view command;
  std::string path;
  uint64_t lines = 0;
  uint64_t new_keys = 0;
  std::optional<uint64_t> erased;  // remove only
  std::optional<uint64_t> inputs;  // merge only: files merged
  struct Fold {
    uint64_t bytes = 0;  // the input's memory
    double fpr = 0;      // the input's FPR now
  };
  std::optional<Fold> folded_from;  // fold only
};

void PrintReport(const Report& report, const AnyFilter& filter, bool json) {
  const double fpr_now = filter.EstimatedFpr();
  if (json) {
    // The layout: what --layout auto chose, among the rest.
    Json out = {{"file", report.path},
                {"kind", KindName(filter)},
                {"layout", std::string(LayoutName(filter.layout()))}};
    if (!report.inputs && !report.folded_from) out["lines"] = report.lines;
    if (report.folded_from) {
      out["folded_from_memory_bytes"] = report.folded_from->bytes;
      out["folded_from_estimated_fpr"] = report.folded_from->fpr;
    } else if (report.erased) {
      out["erased"] = *report.erased;
      out["not_found"] = report.lines - *report.erased;
    } else if (report.inputs) {
      out["inputs"] = *report.inputs;
    } else {
      out["new_keys"] = report.new_keys;
    }
    out["memory_bytes"] = filter.memory_bytes();
    out["stages"] = filter.stage_count();
    out["capacity"] = filter.capacity();
    out["planned_fpr"] = filter.planned_fpr();
    out["estimated_count"] = EstimateJson(filter.EstimatedCount());
    out["estimated_fpr"] = fpr_now;
    PrintJson(out);
    return;
  }
  const std::string what =
      report.erased
          ? absl::StrFormat("%s lines: %s erased, %s not found", FormatCount(report.lines),
                            FormatCount(*report.erased), FormatCount(report.lines - *report.erased))
      : report.inputs ? absl::StrFormat("the union of %d files", *report.inputs)
      : report.folded_from
          ? absl::StrFormat("folded %gx from %s (FPR then about %s)",
                            static_cast<double>(report.folded_from->bytes) /
                                static_cast<double>(filter.memory_bytes()),
                            FormatBytes(static_cast<double>(report.folded_from->bytes)),
                            FormatFpr(report.folded_from->fpr))
          : absl::StrFormat("%s lines inserted, %s new keys", FormatCount(report.lines),
                            FormatCount(report.new_keys));
  const std::string_view layout = LayoutName(filter.layout());
  std::fprintf(stderr,
               "bloomery %.*s: %s: %.*s filter (%.*s), %s, %s; planned FPR %s at %s keys, now "
               "about %s\n",
               static_cast<int>(report.command.size()), report.command.data(), report.path.c_str(),
               static_cast<int>(KindName(filter).size()), KindName(filter).data(),
               static_cast<int>(layout.size()), layout.data(), what.c_str(),
               FormatBytes(static_cast<double>(filter.memory_bytes())).c_str(),
               FormatFpr(filter.planned_fpr()).c_str(), FormatCount(filter.capacity()).c_str(),
               FormatFpr(fpr_now).c_str());
}

// The flags of every subcommand that reads a filter file and, most of them, lines.
struct FileFlags {
  std::string file;
  std::string input = "-";
  bool json = false;
  bool strip_cr = false;
  bool allow_dirty = false;
  bool no_wait = false;
  uint64_t max_memory = 0;

  // Declares FILE [INPUT] and the flags every such subcommand takes.
  void Add(CLI::App& app, bool with_input) {
    app.add_option("file", file, "the filter file")->type_name("FILE")->required();
    if (!with_input) return;
    app.add_option("input", input, "lines to read (default: stdin, or \"-\")")->type_name("INPUT");
    AddStripCr(app, strip_cr);
    AddLoadFlags(app);
  }
  void AddLoadFlags(CLI::App& app) {
    AddAllowDirty(app, allow_dirty);
    AddMaxMemory(app, max_memory);
  }
  [[nodiscard]] LoadOptions Load() const {
    LoadOptions options;
    options.max_bytes = max_memory;
    options.allow_dirty = allow_dirty;
    return options;
  }
};

// Inserts every line of `flags.input` (remove: erases it); warns when inserts took the filter over
// its capacity.
absl::Status ApplyAll(const FileFlags& flags, AnyFilter& filter, Report& report,
                      double known_keys) {
  const bool erase = report.command == "remove";
  absl::StatusOr<LineReader> reader = LineReader::Open(flags.input, flags.strip_cr);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<BatchTotals> totals = ForEachBatch(
      *reader, report.command,
      [&](std::span<const std::string_view> lines, std::span<bool> answers) {
        return erase ? filter.EraseMany(lines, answers) : filter.InsertMany(lines, answers);
      });
  if (!totals.ok()) return totals.status();
  report.lines = totals->lines;
  if (erase) {
    report.erased = totals->counted;
    return absl::OkStatus();
  }
  report.new_keys = totals->counted;
  WarnIfOverCapacity(report.command, known_keys + static_cast<double>(report.new_keys),
                     filter.capacity(), filter);
  return absl::OkStatus();
}

absl::Status SaveAndReport(const AnyFilter& filter, const Report& report, bool json) {
  if (absl::Status s = filter.Save(report.path); !s.ok()) return FileStatus(s, report.path);
  PrintReport(report, filter, json);
  return absl::OkStatus();
}

struct BuildFlags {
  FileFlags file;
  CreateFlags create;
  std::string output;
};

absl::Status RunBuild(const BuildFlags& flags) {
  // No default capacity: --capacity, --bits or --window-keys (a window's capacity) must be given.
  absl::StatusOr<CreateSpec> spec = flags.create.Spec(0, 0.01);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<AnyFilter> filter = CreateFilter(*spec);
  if (!filter.ok()) return filter.status();
  Report report{"build", flags.output};
  if (absl::Status s = ApplyAll(flags.file, *filter, report, 0); !s.ok()) return s;
  return SaveAndReport(*filter, report, flags.file.json);
}

// add and remove: one load-modify-save of FILE, under its lock.
absl::Status RunUpdate(const FileFlags& flags, std::string_view command) {
  absl::StatusOr<FileLock> lock = LockFile(flags.file, flags.no_wait);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<AnyFilter> filter = LoadFilter(flags.file, flags.Load());
  if (!filter.ok()) return filter.status();
  // Refuse before reading any input: erasing no keys says whether the kind can erase.
  if (command == "remove") {
    if (absl::StatusOr<size_t> none = filter->EraseMany(std::span<const std::string_view>());
        !none.ok()) {
      return absl::Status(none.status().code(),
                          absl::StrCat(none.status().message(), " (build --kind counting)"));
    }
  }
  Report report{command, flags.file};
  if (absl::Status s = ApplyAll(flags, *filter, report, filter->EstimatedCount()); !s.ok()) {
    return s;
  }
  return SaveAndReport(*filter, report, flags.json);
}

absl::Status RunAdd(const FileFlags& flags) { return RunUpdate(flags, "add"); }
absl::Status RunRemove(const FileFlags& flags) { return RunUpdate(flags, "remove"); }

struct QueryFlags {
  FileFlags file;
  bool present = false;
  bool absent = false;
  bool count = false;
};

absl::Status RunQuery(const QueryFlags& flags) {
  absl::StatusOr<AnyFilter> filter = LoadFilter(flags.file.file, flags.file.Load());
  if (!filter.ok()) return filter.status();
  absl::StatusOr<LineReader> reader = LineReader::Open(flags.file.input, flags.file.strip_cr);
  if (!reader.ok()) return reader.status();
  LineWriter out;
  absl::StatusOr<BatchTotals> totals = ForEachBatch(
      *reader, "query", [&](std::span<const std::string_view> lines, std::span<bool> maybe) {
        const size_t present = filter->MayContainMany(lines, maybe);
        if (!flags.count) {
          for (size_t i = 0; i < lines.size(); ++i) {
            if (maybe[i] != flags.absent) out.Write(lines[i]);
          }
        }
        return present;
      });
  if (!totals.ok()) return totals.status();
  if (!flags.count) return out.Flush();
  if (flags.file.json) {
    PrintJson({{"lines", totals->lines},
               {"present", totals->counted},
               {"absent", totals->lines - totals->counted}});
  } else {
    std::printf("%llu\n", static_cast<unsigned long long>(totals->counted));
  }
  return absl::OkStatus();
}

// A windowed filter's generations, newest (age 0) first; empty for the other kinds. Generation
// `age` began between age and age + 1 times W/G ago (W: the window, in seconds; in lines, whose
// generations take floor(W/G) or ceil(W/G) each: between age floor and (age + 1) ceil lines ago).
Json GenerationsJson(AnyFilter& filter) {
  Json generations = Json::array();
  WindowedFilter* windowed = filter.get_if<WindowedFilter>();
  if (windowed == nullptr) return generations;
  windowed->Advance();  // a duration window ages while its file sits on disk
  const uint32_t count = windowed->generations();
  const bool by_keys = windowed->window_ns() == 0;
  const double span = static_cast<double>(windowed->window_ns() / count) / 1e9;
  const double fewest = by_keys ? static_cast<double>(windowed->capacity() / count) : span;
  const double most =
      by_keys ? static_cast<double>(WindowedFilter::KeysPerGeneration(windowed->capacity(), count))
              : span;
  for (uint32_t age = 0; age < count; ++age) {
    const WindowedFilter::GenerationInfo g = windowed->generation(age);
    generations.push_back({{"age", age},
                           {"epoch", g.epoch},
                           {"live", g.live},
                           {"estimated_keys", g.estimated_keys},
                           {"unit", by_keys ? "lines" : "s"},
                           {"began_ago_min", age * fewest},
                           {"began_ago_max", (age + 1) * most}});
  }
  return generations;
}

// The filter's health (health.h) as `info --json` gives it; a saturated filter's count and its
// error are the string "saturated", as estimated_count is.
Json HealthJson(const FilterHealth& health) {
  Json out = {{"state", std::string(HealthStateName(health.state))},
              {"capacity", health.capacity},
              {"estimated_count", EstimateJson(health.estimated_count)},
              {"estimated_count_error", EstimateJson(health.estimated_count_error)},
              {"fill_ratio", health.fill_ratio},
              {"planned_fpr", health.planned_fpr},
              {"estimated_fpr", health.estimated_fpr},
              {"estimated_fpr_error", health.estimated_fpr_error},
              {"health_ratio", health.estimated_fpr / health.planned_fpr},
              {"sampled", health.sampled}};
  if (health.inserted) out["inserted"] = *health.inserted;
  return out;
}

// The health rows of `info`'s table.
template <typename Row>
void AddHealthRows(const FilterHealth& health, Row& row) {
  row("health", absl::StrCat(std::string(HealthStateName(health.state)), " (FPR now ",
                             absl::StrFormat("%.2f", health.estimated_fpr / health.planned_fpr),
                             "x planned; near above 0.8x or 90% of capacity, over above 1x)"));
  // Over kHealthExactBytes the health reads a sample of the blocks: its labels say so, beside the
  // rows above that read every bit.
  const char* how = health.sampled ? " (sampled)" : " (all bits)";
  row(absl::StrCat("health: estimated keys", how),
      std::isfinite(health.estimated_count)
          ? absl::StrCat(FormatEstimate(health.estimated_count), " +- ",
                         FormatEstimate(health.estimated_count_error), " of ",
                         FormatCount(health.capacity))
          : "saturated");
  if (health.inserted) row("health: keys added", FormatCount(*health.inserted));
  row("health: fill", absl::StrFormat("%.4f", health.fill_ratio));
  row(absl::StrCat("health: FPR now", how, " / planned"),
      absl::StrCat(FormatFpr(health.estimated_fpr),
                   health.estimated_fpr_error > 0
                       ? absl::StrCat(" +- ", FormatFpr(health.estimated_fpr_error))
                       : "",
                   " / ", FormatFpr(health.planned_fpr)));
}

// The UTF-8 sequence at the start of `bytes` (not empty): its length if it is valid (no overlong
// form, no surrogate, nothing above U+10FFFF: RFC 3629), else that of the bytes one U+FFFD
// replaces, the longest start of a valid sequence there, at least one byte (Unicode's "maximal
// subpart", as Python's decoder and the JSON output replace them).
struct Utf8Sequence {
  size_t length;
  bool valid;
};
Utf8Sequence NextUtf8Sequence(std::string_view bytes) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {1, true};
  size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the byte after the lead
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong below
    if (lead == 0xED) high = 0x9F;  // surrogates above
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong below
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF above
  } else {
    return {1, false};  // a continuation byte, an overlong lead (C0, C1) or F5..FF
  }
  for (size_t i = 1; i < length; ++i) {
    if (i >= bytes.size() || byte(i) < (i == 1 ? low : 0x80) || byte(i) > (i == 1 ? high : 0xBF)) {
      return {i, false};
    }
  }
  return {length, true};
}

// A Prometheus label value (the text exposition format, version 0.0.4): backslash, double quote
// and newline escaped, and always valid UTF-8, which the format requires (a scraper drops the
// whole exposition otherwise): what is not valid UTF-8 in a file name is replaced by U+FFFD
// (NextUtf8Sequence), as the JSON output replaces it (PrintJson).
std::string EscapeLabel(std::string_view value) {
  std::string out;
  while (!value.empty()) {
    const Utf8Sequence sequence = NextUtf8Sequence(value);
    const char c = value.front();
    if (!sequence.valid) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.append(value.substr(0, sequence.length));
    }
    value.remove_prefix(sequence.length);
  }
  return out;
}

// A sample's value: Go's float syntax as Prometheus reads it (+Inf, -Inf, NaN).
std::string MetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];  // the shortest text that reads back as the same double
  const std::to_chars_result end = std::to_chars(std::begin(buffer), std::end(buffer), value);
  return std::string(buffer, end.ptr);
}

struct FileHealth {
  std::string path;
  std::string kind;
  uint64_t memory_bytes = 0;
  FilterHealth health;
};

// `info --metrics`: every metric's HELP and TYPE once, then one sample per file (per state for
// bloomery_filter_state).
void PrintMetrics(const std::vector<FileHealth>& files) {
  struct Metric {
    const char* name;
    const char* help;
    double (*value)(const FileHealth&);
  };
  static constexpr Metric kMetrics[] = {
      {"bloomery_filter_fill_ratio", "Fraction of the filter's bits (counting: counters) set.",
       [](const FileHealth& f) { return f.health.fill_ratio; }},
      {"bloomery_filter_estimated_fpr",
       "False-positive rate a lookup sees now, from the filter's bits.",
       [](const FileHealth& f) { return f.health.estimated_fpr; }},
      {"bloomery_filter_planned_fpr", "False-positive rate planned at capacity.",
       [](const FileHealth& f) { return f.health.planned_fpr; }},
      {"bloomery_filter_health_ratio", "Estimated over planned false-positive rate.",
       [](const FileHealth& f) { return f.health.estimated_fpr / f.health.planned_fpr; }},
      {"bloomery_filter_estimated_count", "Distinct keys held, estimated from the bits.",
       [](const FileHealth& f) { return f.health.estimated_count; }},
      {"bloomery_filter_estimated_count_error",
       "Half-width of the estimated count's 3-sigma interval.",
       [](const FileHealth& f) { return f.health.estimated_count_error; }},
      {"bloomery_filter_capacity",
       "Keys planned for (scalable: by the stages allocated; windowed: one window's).",
       [](const FileHealth& f) { return static_cast<double>(f.health.capacity); }},
      {"bloomery_filter_memory_bytes", "Bytes of the filter's bits.",
       [](const FileHealth& f) { return static_cast<double>(f.memory_bytes); }},
  };
  auto labels = [](const FileHealth& f) {
    return absl::StrCat("file=\"", EscapeLabel(f.path), "\",kind=\"", EscapeLabel(f.kind), "\"");
  };
  std::string out;
  for (const Metric& metric : kMetrics) {
    absl::StrAppend(&out, "# HELP ", metric.name, " ", metric.help, "\n# TYPE ", metric.name,
                    " gauge\n");
    for (const FileHealth& f : files) {
      absl::StrAppend(&out, metric.name, "{", labels(f), "} ", MetricValue(metric.value(f)), "\n");
    }
  }
  absl::StrAppend(&out,
                  "# HELP bloomery_filter_state Health state: 1 for the filter's, 0 for the "
                  "others (ok, near_limit, over_limit).\n# TYPE bloomery_filter_state gauge\n");
  for (const FileHealth& f : files) {
    for (const HealthState state : kHealthStates) {
      absl::StrAppend(&out, "bloomery_filter_state{", labels(f), ",state=\"",
                      std::string(HealthStateName(state)), "\"} ", f.health.state == state ? 1 : 0,
                      "\n");
    }
  }
  std::fputs(out.c_str(), stdout);
}

// One file's description (`bloomery info FILE`).
absl::Status DescribeFile(const FileFlags& flags) {
  const std::string& path = flags.file;
  absl::StatusOr<FileInfo> info = InspectFile(path, /*verify_checksums=*/true);
  if (!info.ok()) return FileStatus(info.status(), path);
  // InspectFile has just verified the checksums; a dirty file is described, not refused.
  LoadOptions load = flags.Load();
  load.verify_checksums = false;
  load.allow_dirty = true;
  absl::StatusOr<AnyFilter> filter = LoadFilter(path, load);
  if (!filter.ok()) return filter.status();
  const std::string checksums = info->checksums_verified ? "verified"
                                : info->dirty ? "not verified (dirty: checksums are stale)"
                                              : "not verified";
  const double estimated_count = filter->EstimatedCount();
  const FilterHealth health = filter->Health();
  const std::string seed = absl::StrFormat("0x%016x", info->seed);
  // A chain's first stage's, as its header says; otherwise the filter's (for one sized by bits
  // and hashes, the keys its planned FPR is stated at, where the header holds 0).
  const uint64_t capacity =
      info->kind == FilterKind::kScalable ? info->capacity : filter->capacity();
  if (flags.json) {
    PrintJson(
        {{"file", path},
         {"kind", std::string(FilterKindName(info->kind))},
         {"version", info->version},
         {"file_bytes", info->file_bytes},
         {"payload_bytes", info->payload_bytes},
         {"bits", info->bits},
         {"hashes", info->hashes},
         {"layout", std::string(LayoutName(filter->layout()))},
         {"probe", filter->probe() == Probe::kLatest ? std::string("none")
                                                     : std::string(ProbeName(filter->probe()))},
         {"counter_bits", info->counter_bits},
         {"stages", info->stages},
         {"capacity", capacity},
         // The filter's bound (a merged chain's is above its header's P; a filter sized by
         // bits and hashes has one at its capacity though its header holds 0).
         {"planned_fpr", filter->planned_fpr()},
         {"insert_count", info->insert_count},
         {"seed", seed},  // a string: JSON numbers lose 64-bit integers' low bits
         {"integer_hash", std::string(IntegerHashName(info->integer_hash))},
         {"dirty", info->dirty},
         {"checksums_verified", info->checksums_verified},
         {"saturated", !std::isfinite(estimated_count)},
         {"estimated_count", EstimateJson(estimated_count)},
         {"estimated_fpr", filter->EstimatedFpr()},
         {"memory_bytes", filter->memory_bytes()},
         {"health", HealthJson(health)},
         {"loaded_stages", filter->stage_count()},
         {"generations", GenerationsJson(*filter)}});
    return absl::OkStatus();
  }
  TextTable table;
  auto row = [&](std::string name, std::string value) {
    table.AddRow({std::move(name), std::move(value)});
  };
  const bool scalable = info->kind == FilterKind::kScalable;
  row("file", path);
  row("kind", std::string(FilterKindName(info->kind)));
  row("format version", absl::StrCat(info->version));
  row("file size", absl::StrCat(FormatCount(info->file_bytes), " bytes (",
                                FormatBytes(static_cast<double>(info->file_bytes)), ")"));
  row("bits", FormatCount(info->bits));
  row("hashes", absl::StrCat(info->hashes));
  row("layout", std::string(LayoutName(filter->layout())));
  if (filter->probe() != Probe::kLatest) row("probe", std::string(ProbeName(filter->probe())));
  if (info->counter_bits != 0) row("counter bits", absl::StrCat(info->counter_bits));
  if (scalable) row("stages", absl::StrCat(info->stages));
  row(scalable ? "capacity (first stage)" : "capacity", FormatCount(capacity));
  row("planned FPR", FormatFpr(filter->planned_fpr()));
  row("seed", seed);
  row("integer keys hashed by",
      info->integer_hash == IntegerHash::kXxh3
          ? "XXH3-128 of their 8 bytes (hash_id 1)"
          : absl::StrCat(std::string(IntegerHashName(info->integer_hash)), " (hash_id ",
                         static_cast<uint32_t>(info->integer_hash), ")"));
  row("dirty",
      info->dirty ? "yes (mapped read-write now, or left so by a crash: bloomery repair)" : "no");
  row("checksums", checksums);
  row("estimated keys (all bits)", std::isfinite(estimated_count)
                                       ? FormatEstimate(estimated_count)
                                       : "saturated (every bit set: no count can be inferred)");
  row("FPR now (all bits)", FormatFpr(filter->EstimatedFpr()));
  AddHealthRows(health, row);
  row("memory", FormatBytes(static_cast<double>(filter->memory_bytes())));
  for (const Json& g : GenerationsJson(*filter)) {
    row(absl::StrCat("generation ", g["age"].get<uint32_t>()),
        absl::StrFormat("epoch %d, %s, about %s keys, began %g to %g %s ago",
                        g["epoch"].get<uint64_t>(), g["live"].get<bool>() ? "live" : "expired",
                        FormatEstimate(g["estimated_keys"].get<double>()),
                        g["began_ago_min"].get<double>(), g["began_ago_max"].get<double>(),
                        g["unit"].get<std::string>()));
  }
  std::fputs(table.Render().c_str(), stdout);
  return absl::OkStatus();
}

struct InfoFlags {
  FileFlags file;  // its `file` is files[0]
  std::vector<std::string> files;
  bool metrics = false;
};

absl::Status RunInfo(const InfoFlags& flags) {
  if (!flags.metrics) {
    if (flags.files.size() != 1) {
      return absl::InvalidArgumentError("info takes one FILE (several only with --metrics)");
    }
    FileFlags one = flags.file;
    one.file = flags.files[0];
    return DescribeFile(one);
  }
  // Every file that loads is reported; the first error is returned after (exit 1), so one bad
  // file does not hide the others from a scraper.
  std::vector<FileHealth> healths;
  absl::Status first_error;
  LoadOptions load = flags.file.Load();
  load.allow_dirty = true;  // as info: a dirty file is described, not refused
  for (const std::string& path : flags.files) {
    absl::StatusOr<AnyFilter> filter = LoadFilter(path, load);
    if (!filter.ok()) {
      if (first_error.ok()) {
        first_error = filter.status();  // printed by main
      } else {
        std::fprintf(stderr, "bloomery info: %s\n", std::string(filter.status().message()).c_str());
      }
      continue;
    }
    healths.push_back(
        {path, std::string(KindName(*filter)), filter->memory_bytes(), filter->Health()});
  }
  PrintMetrics(healths);
  return first_error;
}

struct MergeFlags {
  FileFlags file;
  std::string output;
  std::vector<std::string> inputs;
};

absl::Status RunMerge(const MergeFlags& flags) {
  const std::vector<std::string>& inputs = flags.inputs;
  // OUT may be one of the inputs (merge into it): its lock covers the load as well as the save.
  absl::StatusOr<FileLock> lock = LockFile(flags.output, flags.file.no_wait);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<AnyFilter> merged = LoadFilter(inputs[0], flags.file.Load());
  if (!merged.ok()) return merged.status();
  for (size_t i = 1; i < inputs.size(); ++i) {
    absl::StatusOr<AnyFilter> next = LoadFilter(inputs[i], flags.file.Load());
    if (!next.ok()) return next.status();
    if (absl::Status s = merged->UnionWith(*next); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("cannot merge ", inputs[i], " into ", inputs[0],
                                                 ": ", s.message()));
    }
  }
  Report report{"merge", flags.output};
  report.inputs = inputs.size();
  return SaveAndReport(*merged, report, flags.file.json);
}

struct FoldFlags {
  FileFlags file;  // its max_memory caps the load of FILE: --max-load-memory
  double fpr = 0;
  std::string output;
  uint64_t max_memory = 0;  // --max-memory: the cap on the folded filter
};

// Why a kind other than blocked and classic does not fold, for fold's refusal.
std::string_view WhyNoFold(FilterKind kind) {
  switch (kind) {
    case FilterKind::kScalable:
      return "a chain's stages are planned from its first capacity and growth, and a file is "
             "checked against that plan";
    case FilterKind::kWindowed:
      return "a window's generations are planned from its capacity and window";
    default:
      return "counters cannot be or-ed";
  }
}

// The fold of `filter` to `flags.fpr` into a new AnyFilter, for the kinds that fold.
template <typename F>
absl::StatusOr<AnyFilter> Folded(const F& filter, const FoldFlags& flags) {
  MemoryOptions memory;
  memory.max_memory_bytes = flags.max_memory;
  absl::StatusOr<F> folded = filter.FoldedTo(flags.fpr, memory);
  if (!folded.ok()) return folded.status();
  return AnyFilter(*std::move(folded));
}

absl::Status RunFold(const FoldFlags& flags) {
  const std::string& input = flags.file.file;
  // OUT may be FILE (fold in place): its lock covers the load as well as the save.
  absl::StatusOr<FileLock> lock = LockFile(flags.output, flags.file.no_wait);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<AnyFilter> filter = LoadFilter(input, flags.file.Load());
  if (!filter.ok()) return filter.status();
  const BlockedFilter* blocked = filter->get_if<BlockedFilter>();
  const ClassicFilter* classic = filter->get_if<ClassicFilter>();
  if (blocked == nullptr && classic == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is a %s filter, and only blocked and classic filters fold (%s)", input,
                        KindName(*filter), WhyNoFold(filter->kind())));
  }
  Report report{"fold", flags.output};
  report.folded_from = Report::Fold{filter->memory_bytes(), filter->EstimatedFpr()};
  absl::StatusOr<AnyFilter> folded =
      blocked != nullptr ? Folded(*blocked, flags) : Folded(*classic, flags);
  if (!folded.ok()) {
    return absl::Status(folded.status().code(),
                        absl::StrCat("cannot fold ", input, ": ", folded.status().message()));
  }
  return SaveAndReport(*folded, report, flags.file.json);
}

absl::Status RunRepair(const FileFlags& flags) {
  absl::StatusOr<FileLock> lock = LockFile(flags.file, flags.no_wait);
  if (!lock.ok()) return lock.status();
  absl::StatusOr<FileInfo> info = InspectFile(flags.file, /*verify_checksums=*/false);
  if (!info.ok()) return FileStatus(info.status(), flags.file);
  if (!info->dirty) {
    std::fprintf(stderr, "bloomery repair: %s is not dirty; left as it is\n", flags.file.c_str());
    return absl::OkStatus();
  }
  LoadOptions load = flags.Load();
  load.allow_dirty = true;
  load.verify_checksums = false;  // stale by definition: what the mapping wrote is the truth
  absl::StatusOr<AnyFilter> filter = LoadFilter(flags.file, load);
  if (!filter.ok()) return filter.status();
  // Save writes fresh checksums and a clean header to a temp file and renames it into place.
  if (absl::Status s = filter->Save(flags.file); !s.ok()) return FileStatus(s, flags.file);
  std::fprintf(stderr, "bloomery repair: %s: checksums recomputed, DIRTY cleared\n",
               flags.file.c_str());
  return absl::OkStatus();
}

FileFlags& FileOf(FileFlags& flags) { return flags; }
FileFlags& FileOf(QueryFlags& flags) { return flags.file; }

// What a subcommand over FILE takes besides it and the load flags.
enum FileCommandFlags : unsigned {
  kInput = 1,   // [INPUT] and --strip-cr
  kNoWait = 2,  // --no-wait: it updates FILE under its lock
};

// A subcommand over FILE whose flags are FileFlags (and `json_help`'s --json, if any).
template <typename Flags>
std::pair<CLI::App*, Flags*> AddFileCommand(Commands& commands, const std::string& name,
                                            const std::string& summary, const std::string& details,
                                            absl::Status (*run)(const Flags&), unsigned takes,
                                            const char* json_help) {
  auto [app, flags] = commands.Add<Flags>(name, summary, details, run);
  FileFlags& file = FileOf(*flags);
  file.Add(*app, (takes & kInput) != 0);
  if ((takes & kInput) == 0) AddMaxMemory(*app, file.max_memory);
  if (json_help != nullptr) AddJson(*app, file.json, json_help);
  if ((takes & kNoWait) != 0) AddNoWait(*app, file.no_wait);
  return {app, flags};
}

constexpr const char* kSummaryJson = "print the summary as JSON on stdout";

void AddBuildCommand(Commands& commands) {
  auto [app, flags] = commands.Add<BuildFlags>(
      "build", "create a filter file of any kind (--kind) from lines",
      R"(Inserts every line of INPUT into a new filter and saves it to FILE atomically; a summary
goes to stderr (with --json, to stdout). A scalable filter that reaches a limit refuses
new keys: build then exits 1 and writes nothing.)",
      RunBuild);
  app->add_option("input", flags->file.input, "lines to read (default: stdin, or \"-\")")
      ->type_name("INPUT");
  flags->create.Add(*app, "keys expected (scalable: the first stage's): 1e6, 10M, 2^20",
                    "false-positive rate at capacity (default 0.01; scalable: the whole chain's)");
  app->add_option("-o", flags->output, "the filter file to write")
      ->type_name("FILE")
      ->required()
      ->check(FileName());
  AddJson(*app, flags->file.json, kSummaryJson);
  AddStripCr(*app, flags->file.strip_cr);
}

void AddQueryCommand(Commands& commands) {
  auto [app, flags] = AddFileCommand<QueryFlags>(
      commands, "query", "print the lines that may be in a filter file (or those certainly not)",
      R"(Prints, in order, every inserted line and others with probability about the filter's
false-positive rate.)",
      RunQuery, kInput, "with --count: lines, present and absent as JSON");
  CLI::Option* present = AddFlag(*app, "--present", flags->present,
                                 "print the lines that may be present (the default)");
  CLI::Option* absent =
      AddFlag(*app, "--absent", flags->absent, "print the lines that are certainly not present");
  CLI::Option* count =
      AddFlag(*app, "--count", flags->count, "print only the number of lines that may be present");
  present->excludes(absent)->excludes(count);
  absent->excludes(count);
  app->get_option("--json")->needs(count);
}

void AddInfoCommand(Commands& commands) {
  auto [app, flags] = commands.Add<InfoFlags>(
      "info", "describe a filter file: kind, geometry, checksums, keys, FPR now, health",
      R"(The header after verifying every checksum, then from the loaded filter the estimated
keys ("saturated" when every bit is set), the FPR now, the memory and its health (state
ok, near_limit or over_limit; docs/OPERATING.md). A corrupted file is reported as such,
with exit code 1. With --metrics, for one or more files, the health in the Prometheus
text format: a file that cannot be loaded is left out, named on stderr, and exit is 1.)",
      RunInfo);
  app->add_option("files", flags->files, "the filter file (several with --metrics)")
      ->type_name("FILE...")
      ->required()
      ->expected(1, CLI::detail::expected_max_vector_size);
  AddMaxMemory(*app, flags->file.max_memory);
  AddJson(*app, flags->file.json, "print JSON instead of a table");
  AddFlag(*app, "--metrics", flags->metrics,
          "print the health of every FILE as Prometheus metrics (text exposition format)")
      ->excludes(app->get_option("--json"));
}

void AddMergeCommand(Commands& commands) {
  auto [app, flags] = commands.Add<MergeFlags>(
      "merge", "write the union of filter files built alike",
      R"(The filters must be of one kind and built alike (same geometry, seed and integer hash);
otherwise merge exits 1 and says why. OUT is written atomically. Counting filters add their
counts.)",
      RunMerge);
  app->add_option("-o", flags->output, "the file to write")
      ->type_name("OUT")
      ->required()
      ->check(FileName());
  app->add_option("inputs", flags->inputs, "the filter files to merge")
      ->type_name("A B [C...]")
      ->required()
      ->expected(2, CLI::detail::expected_max_vector_size);
  flags->file.AddLoadFlags(*app);
  AddJson(*app, flags->file.json, kSummaryJson);
  AddNoWait(*app, flags->file.no_wait);
}

void AddFoldCommand(Commands& commands) {
  auto [app, flags] = commands.Add<FoldFlags>(
      "fold", "shrink an over-sized blocked or classic filter to the smallest size within an FPR",
      R"(Halves FILE's blocks (block 2j or-ed with block 2j + 1; a classic filter: bits 2j and
2j + 1 of each slice) while the FPR with the keys in it now, computed exactly from the folded
bits, stays within --fpr, and writes the result to OUT atomically: every key of FILE still
answers present. The summary says the memory before and after, and the FPR planned for the
keys the folded geometry holds within --fpr. Filters sized by capacity and FPR fold; one sized
by explicit --bits, or made before folding, may have an odd count and is refused
(docs/OPERATING.md). --max-memory caps the folded filter only (a fold is refused only when its
result is over it); --max-load-memory caps the loading of FILE.)",
      RunFold);
  app->add_option("file", flags->file.file, "the filter file to fold")
      ->type_name("FILE")
      ->required();
  AddFraction(*app, "--fpr", flags->fpr, "the FPR the folded filter must stay within, now")
      ->required();
  app->add_option("-o", flags->output, "the file to write (FILE itself to fold in place)")
      ->type_name("OUT")
      ->required()
      ->check(FileName());
  AddAllowDirty(*app, flags->file.allow_dirty);
  AddMaxMemory(*app, flags->max_memory,
               "refuse a folded filter over SIZE of memory (4GiB, 512M; default, or 0: the RAM or "
               "cgroup limit); only the result counts, not FILE nor the halvings on the way");
  AddNumber(*app, "--max-load-memory", flags->file.max_memory, Unit::kBytes, kMemoryCapRange,
            "refuse to load a FILE over SIZE of memory (default, or 0: the RAM or cgroup limit)");
  AddJson(*app, flags->file.json, kSummaryJson);
  AddNoWait(*app, flags->file.no_wait);
}

}  // namespace

void AddFileCommands(Commands& commands) {
  AddBuildCommand(commands);
  AddFileCommand<FileFlags>(
      commands, "add", "insert lines into a filter file",
      R"(Saves FILE atomically. A scalable filter that reaches a limit refuses new keys: add then
exits 1 and FILE is left as it was.)",
      RunAdd, kInput | kNoWait, kSummaryJson);
  AddFileCommand<FileFlags>(
      commands, "remove", "erase lines from a counting filter file",
      R"(Counting filters only; saves FILE atomically. Erasing a line never inserted that looks
present (a false positive) erases counts of other keys, which can then read absent:
remove only lines you inserted.)",
      RunRemove, kInput | kNoWait, kSummaryJson);
  AddQueryCommand(commands);
  AddInfoCommand(commands);
  AddMergeCommand(commands);
  AddFoldCommand(commands);
  AddFileCommand<FileFlags>(
      commands, "repair", "make a file left DIRTY (a crashed read-write mapping) whole again",
      R"(Loads FILE with its stale checksums unverified and saves it atomically with fresh ones and
DIRTY cleared; a file that is not dirty is left untouched.)",
      RunRepair, kNoWait, nullptr);
}

}  // namespace bloomery::cli
