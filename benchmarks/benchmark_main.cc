// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
// The main of bloomery_benchmark.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
