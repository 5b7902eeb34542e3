// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The main of bloomery_benchmark: Google Benchmark's, plus the SIMD target in the run's context
// (it is part of what a number means).
#include <benchmark/benchmark.h>

#include <string>

#include "bloomery/simd.h"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("bloomery_simd_target", std::string(bloomery::ActiveSimdTarget()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
