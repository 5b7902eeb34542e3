// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The main of bloomery_benchmark: Google Benchmark's, plus the SIMD target in the run's context
// (it is part of what a number means), and every row's ratio to its memory floor.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "benchmark_util.h"
#include "bloomery/simd.h"
#include "memory_floor.h"

namespace bloomery::bench {
namespace {

// Rows whose operation writes are held to the write floor; every other row to the read floor.
bool Writes(std::string_view name) {
  for (std::string_view verb : {"Insert", "Add", "Remove", "Union"}) {
    if (name.find(verb) != std::string_view::npos) return true;
  }
  return false;
}

// The display reporter the flags chose, with a counter `x_floor` added to every one-thread row
// whose first argument is a filter's key count n (2^16 .. 2^28) and that counts keys
// (items_per_second): its ns per key over the floor's (memory_floor.h, the best of the sweep,
// median of three) over memory of a 10 bits/key line filter for n keys, the write floor for rows
// that insert. Below 1 means the floor is wrong: nothing may beat it. Rows of other kinds (a
// counting filter's 4-bit counters, a classic filter's k lines per key) carry it too; read it as
// "keys per floor line".
class FloorRatioReporter : public benchmark::BenchmarkReporter {
 public:
  explicit FloorRatioReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner)
      : inner_(std::move(inner)) {}
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> copy = runs;
    for (Run& run : copy) AddRatio(run);
    inner_->ReportRuns(copy);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  void AddRatio(Run& run) {
    // A row of several threads is held to nothing: the floors are one thread's.
    if (run.error_occurred || run.threads > 1) return;
    if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "mean" &&
        run.aggregate_name != "median") {
      return;
    }
    const auto rate = run.counters.find("items_per_second");
    if (rate == run.counters.end() || rate->second.value <= 0) return;
    const uint64_t n = std::strtoull(run.run_name.args.c_str(), nullptr, 10);
    if (n < (uint64_t{1} << 16) || n > (uint64_t{1} << 28)) return;
    const bool writes = Writes(run.run_name.function_name);
    const double floor_ns = FloorNs(n, writes);
    run.counters["x_floor"] = benchmark::Counter(1e9 / rate->second.value / floor_ns);
  }
  double FloorNs(uint64_t n, bool writes) {
    const std::pair<uint64_t, bool> key{n, writes};
    if (auto it = floors_.find(key); it != floors_.end()) return it->second;
    measure::FloorMemory& memory = FloorFor(n);
    const std::vector<uint64_t> lines = measure::RandomLines(size_t{1} << 20, memory.lines(), 7);
    std::vector<double> readings;
    for (int round = 0; round < 3; ++round) {
      readings.push_back(
          memory.Measure(lines, writes ? measure::FloorAccess::kWrite : measure::FloorAccess::kRead)
              .ns_per_line);
    }
    return floors_[key] = measure::Median(readings);
  }

  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::map<std::pair<uint64_t, bool>, double> floors_;
};

// The reporter --benchmark_format names (console when none); null for csv, which Google Benchmark
// deprecates: its own reporter then, without x_floor.
std::unique_ptr<benchmark::BenchmarkReporter> DisplayReporter(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--benchmark_format=json") return std::make_unique<benchmark::JSONReporter>();
    if (arg == "--benchmark_format=csv") return nullptr;
  }
  return std::make_unique<benchmark::ConsoleReporter>();
}

}  // namespace
}  // namespace bloomery::bench

int main(int argc, char** argv) {
  std::unique_ptr<benchmark::BenchmarkReporter> display =
      bloomery::bench::DisplayReporter(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("bloomery_simd_target", std::string(bloomery::ActiveSimdTarget()));
  if (display == nullptr) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    bloomery::bench::FloorRatioReporter reporter(std::move(display));
    benchmark::RunSpecifiedBenchmarks(&reporter);
  }
  benchmark::Shutdown();
  return 0;
}
