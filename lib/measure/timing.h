// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// timing.h: the clock, the statistics, the random line streams and the sizing that bloomery's
// measurements share: FloorMemory's prefetch sweep, bloomery_benchmark's families
// (benchmark_util.h) and `bloomery bench` (tools/cli_bench.cc). One definition of each, so a number
// in one cannot mean something else in another.
#ifndef BLOOMERY_LIB_MEASURE_TIMING_H_
#define BLOOMERY_LIB_MEASURE_TIMING_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bloomery/options.h"

namespace bloomery::measure {

// Wall-clock nanoseconds per item of one call of `body`, which processes `items` items.
template <typename Body>
double NsPerItem(uint64_t items, Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(stop - start).count() /
         static_cast<double>(items);
}

// The median of `values` (not empty): what a run of repetitions reports, robust to one slow one.
inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// SplitMix64 (Steele et al. 2014): a fixed-seed stream, the same on every run.
inline uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// x scaled into [0, n) (Lemire's fastrange): uniform for uniform x, no division.
inline uint64_t FastRange(uint64_t x, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(x) * n) >> 64);
}

// `count` random line indices below `lines`, the stream Mix(first), Mix(first + 1), ...: the
// lines a floor reads (FloorMemory::ReadLines), generated before timing so generating them is not
// part of the floor.
inline std::vector<uint64_t> RandomLines(size_t count, uint64_t lines, uint64_t first = 0) {
  std::vector<uint64_t> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = FastRange(Mix(first + i), lines);
  return out;
}

// The sizing every measurement uses unless told otherwise.
inline constexpr double kBitsPerKey = 10;

// Options for a filter of `keys` keys at kBitsPerKey (or planned for `fpr` when it is > 0), k
// chosen by the planner, memory faulted in up front so page faults are not measured.
inline FilterOptions OptionsFor(uint64_t keys, bool concurrent, double fpr = 0) {
  FilterOptions options;
  options.capacity = keys;
  if (fpr > 0) {
    options.fpr = fpr;
  } else {
    options.bits = static_cast<uint64_t>(kBitsPerKey * static_cast<double>(keys));
  }
  options.memory.concurrent = concurrent;
  options.memory.populate = true;
  return options;
}

}  // namespace bloomery::measure

#endif  // BLOOMERY_LIB_MEASURE_TIMING_H_
