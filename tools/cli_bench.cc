// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery bench`: how fast a BlockedFilter (or, with --kind classic, a ClassicFilter) is on this
// machine, measured against the physical limit in the same run: one random cache-line read per key
// for lookups, one line prefetched for writing and written per key for inserts, each the best of a
// sweep of ways to keep misses in flight (lib/measure/memory_floor.h, the floors bloomery_benchmark
// reports against too).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"
#include "cli_svg.h"
#include "memory_floor.h"
#include "timing.h"

namespace bloomery::cli {
namespace {

constexpr uint64_t kInCacheKeys = 1'000'000;
constexpr uint64_t kOutOfCacheKeys = uint64_t{1} << 25;
constexpr uint64_t kMaxDefaultKeys = uint64_t{1} << 27;
// Each operation is timed over at most this many keys per run (the rest of the N keys are inserted
// untimed): plenty for a stable median and an FPR measured to ~1%, and it keeps the default run
// well under a minute on two cores.
constexpr uint64_t kMaxTimedKeys = uint64_t{1} << 22;

using measure::kBitsPerKey;
using measure::Median;
using measure::NsPerItem;
using measure::OptionsFor;

struct Operation {
  std::string name;       // for people
  std::string json_name;  // for JSON
  double ns_per_key = 0;  // median
  bool writes = false;    // measured against the write floor, else the read floor
  bool threaded = false;  // several threads: their wall time against one thread's floor
};

struct SizeReport {
  uint64_t keys = 0;
  Plan plan;
  uint64_t lookups = 0;
  uint64_t false_positives = 0;
  uint64_t huge_page_bytes = 0;
  uint64_t floor_huge_page_bytes = 0;
  double floor_ns_per_key = 0;        // reads: the median of the repetitions' best
  double write_floor_ns_per_key = 0;  // prefetch-for-write and a store
  std::string floor_strategy;         // the read floor's fastest way, in its median repetition
  std::string write_floor_strategy;
  bool in_cache = false;
  bool in_cache_by_size = false;  // it fits L2; otherwise the floor against the L2 floor decided
  std::vector<Operation> operations;
  std::vector<Operation> threaded;  // empty without --threads

  double FloorFor(const Operation& op) const {
    return op.writes ? write_floor_ns_per_key : floor_ns_per_key;
  }
  double Ratio(const Operation& op) const { return op.ns_per_key / FloorFor(op); }
};

struct BenchConfig {
  std::vector<uint64_t> sizes;
  double fpr = 0;                          // 0: 10 bits/key
  FilterKind kind = FilterKind::kBlocked;  // or kClassic
  Layout layout = Layout::kLine512;        // the blocked filter's
  uint32_t reps = 3;
  uint32_t threads = 0;
  uint64_t l2_bytes = 0;  // 0: unknown
  double l2_floor_ns_per_key = 0;
};

// Runs body(begin, end) on `threads` threads over [0, count) split evenly; ns per key of wall time.
template <typename Body>
double NsPerItemThreaded(uint32_t threads, uint64_t count, Body&& body) {
  return NsPerItem(count, [&] {
    std::vector<std::jthread> workers;
    for (uint32_t t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { body(count * t / threads, count * (t + 1) / threads); });
    }
  });
}

// The filter a size is measured on: `keys` at the config's FPR and layout.
FilterOptions BenchOptions(const BenchConfig& config, uint64_t keys, bool concurrent) {
  FilterOptions options = OptionsFor(keys, concurrent, config.fpr);
  options.layout = config.layout;
  return options;
}

uint64_t DefaultOutOfCacheKeys() {
  const uint64_t cache = measure::LastLevelCacheBytes();
  uint64_t keys = kOutOfCacheKeys;
  while (cache != 0 && keys * kBitsPerKey / 8 < 2 * cache && keys < kMaxDefaultKeys) {
    keys *= 2;
  }
  return keys;
}

// The kind --kind names, as the header of the report spells it.
std::string KindTitle(const BenchConfig& config) {
  return config.kind == FilterKind::kClassic
             ? std::string("ClassicFilter (partitioned: k cache lines per key)")
             : absl::StrCat("BlockedFilter (", std::string(LayoutName(config.layout)), ")");
}

template <typename Filter>
absl::StatusOr<SizeReport> BenchOneSize(const BenchConfig& config, uint64_t keys) {
  SizeReport report;
  report.keys = keys;
  report.lookups = std::min(keys, kMaxTimedKeys);
  // Inserted keys 0..n-1 and absent keys 2^63 + i: integers are hashed (XXH3 in the line, MixKey in
  // word64 and block256: the layout's default integer hash) like any key, so their order says
  // nothing about where they land.
  std::vector<uint64_t> inserted(keys);
  std::iota(inserted.begin(), inserted.end(), uint64_t{0});
  std::vector<uint64_t> absent(report.lookups);
  std::iota(absent.begin(), absent.end(), uint64_t{1} << 63);
  const std::span<const uint64_t> present(inserted.data(), report.lookups);

  absl::StatusOr<Filter> filter = Filter::Create(BenchOptions(config, keys, false));
  if (!filter.ok()) return filter.status();
  report.plan = filter->plan();

  // The floors: one random line read (or written) per key (hashed keys land on lines as randomly),
  // over memory of the same size, allocated the same way; lines drawn as BM_Floor draws them.
  absl::StatusOr<measure::FloorMemory> floor_memory =
      measure::FloorMemory::Allocate(filter->memory_bytes());
  if (!floor_memory.ok()) return floor_memory.status();
  const std::vector<uint64_t> floor_lines =
      measure::RandomLines(report.lookups, floor_memory->lines());

  // Each operation, timed in this order below, with the floor it is held to.
  struct Named {
    const char* name;
    const char* json_name;
    bool writes;
  };
  constexpr Named kNames[] = {
      {"Insert", "insert", true},
      {"InsertMany", "insert_many", true},
      {"MayContain, absent", "may_contain_absent", false},
      {"MayContain, present", "may_contain_present", false},
      {"MayContainMany, absent", "may_contain_many_absent", false},
      {"MayContainMany, present", "may_contain_many_present", false},
  };
  constexpr size_t kOps = std::size(kNames);
  std::vector<std::vector<double>> samples(kOps);
  std::vector<measure::FloorReading> floor_samples;
  std::vector<measure::FloorReading> write_floor_samples;
  uint64_t sink = 0;
  for (uint32_t rep = 0; rep < config.reps; ++rep) {
    // Inserts are timed over the first `lookups` keys of a cleared filter; the rest go in untimed
    // so the lookups below see a full filter.
    filter->Clear();
    samples[0].push_back(NsPerItem(report.lookups, [&] {
      for (const uint64_t key : present) sink += filter->Insert(key);
    }));
    filter->Clear();
    samples[1].push_back(NsPerItem(report.lookups, [&] { sink += filter->InsertMany(present); }));
    sink += filter->InsertMany(std::span(inserted).subspan(report.lookups));
    samples[2].push_back(NsPerItem(report.lookups, [&] {
      for (const uint64_t key : absent) sink += filter->MayContain(key);
    }));
    uint64_t found = 0;
    samples[3].push_back(NsPerItem(report.lookups, [&] {
      for (const uint64_t key : present) found += filter->MayContain(key);
    }));
    samples[4].push_back(NsPerItem(
        report.lookups, [&] { report.false_positives = filter->MayContainMany(absent); }));
    samples[5].push_back(
        NsPerItem(report.lookups, [&] { found += filter->MayContainMany(present); }));
    floor_samples.push_back(floor_memory->Measure(floor_lines, measure::FloorAccess::kRead));
    write_floor_samples.push_back(floor_memory->Measure(floor_lines, measure::FloorAccess::kWrite));
    if (found != 2 * report.lookups) {
      return absl::InternalError(absl::StrFormat("false negative: %d of %d inserted keys found",
                                                 found, 2 * report.lookups));
    }
  }
  for (size_t op = 0; op < kOps; ++op) {
    report.operations.push_back(
        {kNames[op].name, kNames[op].json_name, Median(samples[op]), kNames[op].writes});
  }
  const measure::FloorReading floor = MedianReading(floor_samples);
  const measure::FloorReading write_floor = MedianReading(write_floor_samples);
  report.floor_ns_per_key = floor.ns_per_line;
  report.floor_strategy = measure::StrategyName(floor.strategy);
  report.write_floor_ns_per_key = write_floor.ns_per_line;
  report.write_floor_strategy = measure::StrategyName(write_floor.strategy);
  report.in_cache_by_size = config.l2_bytes != 0 && report.plan.bytes() <= config.l2_bytes;
  report.in_cache =
      report.in_cache_by_size ||
      report.floor_ns_per_key <= measure::kInCacheFloorRatio * config.l2_floor_ns_per_key;
  report.huge_page_bytes = filter->huge_page_bytes();
  report.floor_huge_page_bytes = floor_memory->huge_page_bytes();

  if (config.threads > 0) {
    absl::StatusOr<Filter> shared = Filter::Create(BenchOptions(config, keys, true));
    if (!shared.ok()) return shared.status();
    const uint32_t t = config.threads;
    std::vector<double> insert_samples;
    std::vector<double> lookup_samples;
    std::atomic<uint64_t> shared_sink{0};
    for (uint32_t rep = 0; rep < config.reps; ++rep) {
      shared->Clear();
      insert_samples.push_back(NsPerItemThreaded(t, keys, [&](uint64_t begin, uint64_t end) {
        shared_sink += shared->InsertMany(std::span(inserted).subspan(begin, end - begin));
      }));
      lookup_samples.push_back(
          NsPerItemThreaded(t, report.lookups, [&](uint64_t begin, uint64_t end) {
            shared_sink += shared->MayContainMany(std::span(absent).subspan(begin, end - begin));
          }));
    }
    sink += shared_sink.load();
    report.threaded.push_back({absl::StrCat("InsertMany, ", t, " threads"),
                               "concurrent_insert_many", Median(insert_samples), true, true});
    report.threaded.push_back({absl::StrCat("MayContainMany, absent, ", t, " threads"),
                               "concurrent_may_contain_many_absent", Median(lookup_samples), false,
                               true});
  }
  // A volatile store makes every result above observable, so no timed loop is optimised away.
  [[maybe_unused]] volatile uint64_t observed = sink;
  return report;
}

double MeasuredFpr(const SizeReport& r) {
  return static_cast<double>(r.false_positives) / static_cast<double>(r.lookups);
}

std::string SizeLabel(const SizeReport& r) { return r.in_cache ? "in cache" : "out of cache"; }

double L2FloorRatio(const BenchConfig& config, const SizeReport& r) {
  return r.floor_ns_per_key / config.l2_floor_ns_per_key;
}

std::string RenderText(const BenchConfig& config, const std::vector<SizeReport>& reports) {
  const uint64_t cache = measure::LastLevelCacheBytes();
  std::string out = absl::StrFormat(
      "bloomery bench: %s at %s, SIMD target %s, median of %d run%s\n"
      "L2 cache: %s; last-level cache: %s; floor in L2: %.2f ns/key\n\n",
      KindTitle(config),
      config.fpr > 0 ? absl::StrCat("FPR ", FormatFpr(config.fpr))
                     : absl::StrFormat("%g bits/key", kBitsPerKey),
      std::string(ActiveSimdTarget()), config.reps, config.reps == 1 ? "" : "s",
      config.l2_bytes ? FormatBytes(static_cast<double>(config.l2_bytes)) : "unknown",
      cache ? FormatBytes(static_cast<double>(cache)) : "unknown", config.l2_floor_ns_per_key);
  TextTable facts;
  std::vector<std::string> row = {""};
  for (const SizeReport& r : reports) row.push_back(SizeLabel(r));
  facts.AddRow(row);
  auto add = [&](const std::string& name, auto&& cell) {
    std::vector<std::string> cells = {name};
    for (const SizeReport& r : reports) cells.push_back(cell(r));
    facts.AddRow(std::move(cells));
  };
  add("keys", [](const SizeReport& r) { return FormatCount(r.keys); });
  add("filter",
      [](const SizeReport& r) { return FormatBytes(static_cast<double>(r.plan.bytes())); });
  add("cache decided by", [&](const SizeReport& r) {
    return r.in_cache_by_size
               ? std::string("size (fits L2)")
               : absl::StrFormat("floor %.1fx L2's (in: <= %gx)", L2FloorRatio(config, r),
                                 measure::kInCacheFloorRatio);
  });
  add("hashes (k)", [](const SizeReport& r) { return absl::StrCat(r.plan.hashes); });
  add("bits/key", [](const SizeReport& r) { return absl::StrFormat("%.2f", r.plan.bits_per_key); });
  add("huge pages", [](const SizeReport& r) {
    if (r.huge_page_bytes) {
      return absl::StrCat("yes, ", FormatBytes(static_cast<double>(r.huge_page_bytes)));
    }
    return std::string(r.plan.bytes() < measure::kHugePageBytes ? "no (under 2 MiB)" : "no");
  });
  add("FPR planned", [](const SizeReport& r) { return FormatFpr(r.plan.expected_fpr); });
  add("FPR measured", [](const SizeReport& r) {
    return absl::StrCat(FormatFpr(MeasuredFpr(r)), " (", FormatCount(r.false_positives), " of ",
                        FormatCount(r.lookups), ")");
  });
  absl::StrAppend(&out, facts.Render(), "\n");

  TextTable times;
  row = {"ns/key"};
  for (const SizeReport& r : reports) {
    row.push_back(SizeLabel(r));
    row.push_back("x floor");
  }
  times.AddRow(row);
  auto add_op = [&](size_t index, bool threaded) {
    std::vector<std::string> cells = {
        (threaded ? reports[0].threaded : reports[0].operations)[index].name};
    for (const SizeReport& r : reports) {
      const Operation& op = (threaded ? r.threaded : r.operations)[index];
      cells.push_back(absl::StrFormat("%.2f", op.ns_per_key));
      cells.push_back(absl::StrFormat("%.2f", r.Ratio(op)));
    }
    times.AddRow(std::move(cells));
  };
  for (size_t i = 0; i < reports[0].operations.size(); ++i) add_op(i, false);
  for (size_t i = 0; i < reports[0].threaded.size(); ++i) add_op(i, true);
  row = {"read floor"};
  for (const SizeReport& r : reports) {
    row.push_back(absl::StrFormat("%.2f", r.floor_ns_per_key));
    row.push_back("1.00");
  }
  times.AddRow(row);
  row = {"write floor"};
  for (const SizeReport& r : reports) {
    row.push_back(absl::StrFormat("%.2f", r.write_floor_ns_per_key));
    row.push_back("1.00");
  }
  times.AddRow(row);
  absl::StrAppend(&out, times.Render());
  absl::StrAppend(&out,
                  "(inserts against the write floor, lookups against the read floor; each floor "
                  "is the best of its sweep, here\n");
  for (const SizeReport& r : reports) {
    absl::StrAppend(&out, " ", SizeLabel(r), ": reads ", r.floor_strategy, ", writes ",
                    r.write_floor_strategy, "\n");
  }
  out.back() = ')';
  out += "\n";
  for (const SizeReport& r : reports) {
    for (const auto* list : {&r.operations, &r.threaded}) {
      for (const Operation& op : *list) {
        if (!op.threaded && r.Ratio(op) < 1) {
          absl::StrAppend(&out, "warning: ", op.name, " ", SizeLabel(r),
                          " ran below its floor; the floor is wrong (please report it)\n");
        }
      }
    }
  }
  if (config.threads > 0) {
    absl::StrAppend(&out,
                    "(threaded rows: wall-clock time divided by all keys, on a concurrent "
                    "filter; their x floor is against one thread's floor)\n");
  }
  return out;
}

Json RenderJson(const BenchConfig& config, const std::vector<SizeReport>& reports) {
  Json sizes = Json::array();
  for (const SizeReport& r : reports) {
    Json operations = Json::object();
    for (const auto* list : {&r.operations, &r.threaded}) {
      for (const Operation& op : *list) {
        operations[op.json_name] = {{"ns_per_key", op.ns_per_key},
                                    {"floor", op.writes ? "write" : "read"},
                                    {"ratio_to_floor", r.Ratio(op)},
                                    {"million_keys_per_second", 1e3 / op.ns_per_key}};
      }
    }
    sizes.push_back({{"keys", r.keys},
                     {"bits", r.plan.bits},
                     {"bytes", r.plan.bytes()},
                     {"hashes", r.plan.hashes},
                     {"bits_per_key", r.plan.bits_per_key},
                     {"planned_fpr", r.plan.expected_fpr},
                     {"measured_fpr", MeasuredFpr(r)},
                     {"false_positives", r.false_positives},
                     {"lookups", r.lookups},
                     {"huge_pages", r.huge_page_bytes > 0},
                     {"huge_page_bytes", r.huge_page_bytes},
                     {"floor_huge_page_bytes", r.floor_huge_page_bytes},
                     {"floor_ns_per_key", r.floor_ns_per_key},
                     {"floor_strategy", r.floor_strategy},
                     {"write_floor_ns_per_key", r.write_floor_ns_per_key},
                     {"write_floor_strategy", r.write_floor_strategy},
                     {"in_cache", r.in_cache},
                     {"in_cache_decided_by", r.in_cache_by_size ? "size" : "measurement"},
                     {"floor_ratio_to_l2_floor", L2FloorRatio(config, r)},
                     {"operations", std::move(operations)}});
  }
  return {
      {"filter", config.kind == FilterKind::kClassic ? "ClassicFilter" : "BlockedFilter"},
      {"kind", std::string(FilterKindName(config.kind))},
      {"layout", std::string(LayoutName(config.kind == FilterKind::kClassic ? Layout::kPartitioned
                                                                            : config.layout))},
      {"simd_target", std::string(ActiveSimdTarget())},
      {"reps", config.reps},
      {"threads", config.threads},
      {"last_level_cache_bytes", measure::LastLevelCacheBytes()},
      {"l2_cache_bytes", config.l2_bytes},
      {"l2_floor_ns_per_key", config.l2_floor_ns_per_key},
      {"sizes", std::move(sizes)}};
}

// `bench --svg`: per size, a panel of horizontal bars, one per operation (ns/key, and its ratio to
// the floor), then the floor's own bar, each panel on its own scale from 0.
std::string RenderSvg(const BenchConfig& config, const std::vector<SizeReport>& reports) {
  std::string out = svg::Page();
  const double middle = (svg::kLeft + svg::kRight) / 2 + 45;
  out += svg::Text(middle, 32, R"(text-anchor="middle" font-size="20" font-weight="bold")",
                   absl::StrCat("bloomery bench: ", KindTitle(config)));
  out += svg::Text(
      middle, 56, R"(text-anchor="middle" font-size="14" fill="#444")",
      absl::StrFormat("ns per key, median of %d run%s, SIMD target %s; shorter is faster; grey: "
                      "the floors (inserts are held to the write floor)",
                      config.reps, config.reps == 1 ? "" : "s", std::string(ActiveSimdTarget())));
  constexpr double kLabels = 190;  // the operations' names, left of each panel
  constexpr double kGap = 40;
  const double panel_width =
      (1000 - 20 - kLabels - kGap * static_cast<double>(reports.size() - 1)) /
      static_cast<double>(reports.size());
  for (size_t p = 0; p < reports.size(); ++p) {
    const SizeReport& r = reports[p];
    std::vector<const Operation*> ops;
    for (const Operation& op : r.operations) ops.push_back(&op);
    for (const Operation& op : r.threaded) ops.push_back(&op);
    // The operations, then the two floors' bars.
    struct Bar {
      std::string name;
      double ns;
      double ratio;  // 0 for a floor's own bar
    };
    std::vector<Bar> bars;
    for (const Operation* op : ops) bars.push_back({op->name, op->ns_per_key, r.Ratio(*op)});
    bars.push_back({"read floor", r.floor_ns_per_key, 0});
    bars.push_back({"write floor", r.write_floor_ns_per_key, 0});
    double most = 0;
    for (const Bar& bar : bars) most = std::max(most, bar.ns);
    const double left = kLabels + static_cast<double>(p) * (panel_width + kGap);
    const double scale = (panel_width - 90) / most;  // room for the value's label
    out += svg::Text(left + panel_width / 2, svg::kTop, R"(text-anchor="middle" font-size="15")",
                     absl::StrCat(SizeLabel(r), ": ", FormatCount(r.keys), " keys, ",
                                  FormatBytes(static_cast<double>(r.plan.bytes()))));
    const double row = (svg::kBottom - svg::kTop - 20) / static_cast<double>(bars.size());
    for (size_t i = 0; i < bars.size(); ++i) {
      const Bar& bar = bars[i];
      const bool floor = bar.ratio == 0;
      const double y = svg::kTop + 20 + row * static_cast<double>(i);
      if (p == 0) out += svg::Text(left - 8, y + row * 0.45 + 4, R"(text-anchor="end")", bar.name);
      out += svg::Bar(left, y + row * 0.15, std::max(bar.ns * scale, 1.0), row * 0.6,
                      floor ? "#9e9e9e" : svg::kPalette[i % std::size(svg::kPalette)]);
      out += svg::Text(left + bar.ns * scale + 6, y + row * 0.45 + 4, "",
                       floor ? absl::StrFormat("%.2f", bar.ns)
                             : absl::StrFormat("%.2f (%.1fx)", bar.ns, bar.ratio));
    }
    out += svg::Line(left, svg::kTop + 20, left, svg::kBottom, R"(stroke="#555")");
  }
  return out + "</svg>\n";
}

// The flags fill in a BenchConfig; the sizes and the L2 floor come from them in RunBench.
struct BenchFlags {
  BenchConfig config;
  uint64_t keys = 0;
  std::string layout = "line512";
  std::string kind = "blocked";
  bool json = false;
  std::string svg;
  CLI::Option* svg_flag = nullptr;
  CLI::Option* layout_flag = nullptr;
  CLI::Option* l2_flag = nullptr;
};

absl::Status RunBench(const BenchFlags& flags) {
  BenchConfig config = flags.config;
  absl::StatusOr<Layout> layout = ParseLayoutFlag(flags.layout, /*allow_auto=*/false);
  if (!layout.ok()) return layout.status();
  config.layout = *layout;
  const std::optional<FilterKind> kind = ParseFilterKind(flags.kind);
  if (kind != FilterKind::kBlocked && kind != FilterKind::kClassic) {
    return UsageError(absl::StrCat("--kind must be blocked or classic, got \"", flags.kind,
                                   "\" (bench times the two fixed-size bit-array kinds)"));
  }
  config.kind = *kind;
  if (config.kind == FilterKind::kClassic && Given(flags.layout_flag)) {
    return UsageError("--layout is the blocked filter's block; a classic filter has none");
  }
  config.sizes = flags.keys ? std::vector<uint64_t>{flags.keys}
                            : std::vector<uint64_t>{kInCacheKeys, DefaultOutOfCacheKeys()};
  if (!Given(flags.l2_flag)) config.l2_bytes = measure::L2CacheBytes();
  absl::StatusOr<double> l2_floor = measure::L2FloorNsPerLine(
      config.l2_bytes, static_cast<int>(std::max<uint32_t>(config.reps, 3)));
  if (!l2_floor.ok()) return l2_floor.status();
  config.l2_floor_ns_per_key = *l2_floor;
  std::vector<SizeReport> reports;
  for (const uint64_t size : config.sizes) {
    absl::StatusOr<SizeReport> report = config.kind == FilterKind::kClassic
                                            ? BenchOneSize<ClassicFilter>(config, size)
                                            : BenchOneSize<BlockedFilter>(config, size);
    if (!report.ok()) return report.status();
    reports.push_back(*std::move(report));
  }
  if (Given(flags.svg_flag)) {
    if (absl::Status s = WriteTextFile(flags.svg, RenderSvg(config, reports)); !s.ok()) return s;
  }
  if (flags.json) {
    PrintJson(RenderJson(config, reports));
  } else {
    std::fputs(RenderText(config, reports).c_str(), stdout);
  }
  return absl::OkStatus();
}

}  // namespace

void AddBenchCommands(Commands& commands) {
  auto [app, flags] = commands.Add<BenchFlags>(
      "bench", "ns/key of inserts and lookups next to the memory floors, measured FPR",
      R"(ns per key (median of R runs) of a BlockedFilter's operations (a ClassicFilter's with --kind
classic) and of the memory floors: one random 64-byte line read per key (lookups), or
prefetched for writing and written (inserts), over memory of the filter's size, each the best
of a sweep of prefetch distances 0..128 and batches 8..64 (lib/measure); "x floor" is each
operation against its floor (a classic
filter reads k lines per key, so expect about k times it out of cache). Default sizes: 1M keys and 32M keys, doubled
until the filter is twice the last-level cache (at most 128M keys). A size is "in cache"
when the filter fits the core's L2, or else when its floor is at most 3x the floor over
memory that fits L2 (measured): a VM may report its host's whole L3 as its own.)",
      RunBench);
  AddNumber(*app, "--keys", flags->keys, Unit::kCount, {1, uint64_t{1} << 32},
            "one size of N keys instead of the two default sizes; each operation is timed over "
            "min(N, 4M) keys");
  AddFraction(*app, "--fpr", flags->config.fpr, "size the filter for FPR P instead of 10 bits/key");
  app->add_option("--kind", flags->kind, "blocked (default) or classic")->type_name("KIND");
  flags->layout_flag =
      app->add_option(
             "--layout", flags->layout,
             absl::StrCat("the blocked filter's block: ", BlockLayoutList(), " (default line512)"))
          ->type_name("L");
  AddInteger(*app, "--threads", flags->config.threads, 1, 1024,
             "also measure T threads inserting and looking up at once (a concurrent filter)");
  AddInteger(*app, "--reps", flags->config.reps, 1, 100,
             "runs per measurement, 1..100 (default 3)");
  flags->l2_flag = AddNumber(*app, "--l2", flags->config.l2_bytes, Unit::kBytes,
                             {measure::kMinL2Bytes, measure::kMaxL2Bytes},
                             "the core's L2 cache size (default: from sysfs, else CPUID)");
  AddJson(*app, flags->json);
  flags->svg_flag =
      app->add_option("--svg", flags->svg,
                      "also write a bar chart of the ns/key of every operation and of the floor")
          ->type_name("FILE");
}

}  // namespace bloomery::cli
