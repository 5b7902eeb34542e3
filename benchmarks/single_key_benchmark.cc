// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// single_key_benchmark.cc: BlockedFilter's single-key Insert and MayContain, one key at a time.
// Built twice (benchmarks/meson.build): for the project's target, registering BM_Insert and
// BM_MayContain, and for x86-64-v3 with BLOOMERY_BENCH_TARGET="<x86-64-v3>", registering
// BM_Insert<x86-64-v3> and BM_MayContain<x86-64-v3>: there the probe is inlined into the loop
// (bloomery/blocked_line.h), as in a user's program built with -march=x86-64-v3 or native, the
// flags the Boost.Bloom families are built with. Both copies register BM_ConcurrentMayContain:
// BM_MayContain on a concurrent filter. The x86-64-v3 copy also registers
// BM_InsertMix and BM_MayContainMix: the same calls on a filter created with
// integer_hash = IntegerHash::kMix (key.h), the cheaper hash for integer keys.
#include <cstdint>
#include <span>
#include <string>

#include "benchmark_util.h"
#include "bloomery/blocked_filter.h"

#ifndef BLOOMERY_BENCH_TARGET
#define BLOOMERY_BENCH_TARGET ""
#endif

namespace bloomery::bench {
namespace {

template <IntegerHash kIntegers>
void BM_Insert(benchmark::State& state) {
  BlockedFilter filter = ValueOrDie(
      BlockedFilter::Create(OptionsFor(static_cast<uint64_t>(state.range(0)), false, kIntegers)));
  FillOnce(state, filter, 0, [](BlockedFilter& f, std::span<const uint64_t> keys) {
    size_t added = 0;
    for (uint64_t key : keys) added += f.Insert(key);
    return added;
  });
}

// On a concurrent filter when kConcurrent.
template <IntegerHash kIntegers, bool kConcurrent = false>
void BM_MayContain(benchmark::State& state) {
  const BlockedFilter& filter =
      FilledFilter(static_cast<uint64_t>(state.range(0)), kIntegers, kConcurrent);
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&filter](std::span<const uint64_t> keys) {
    uint64_t found = 0;
    for (uint64_t key : keys) found += filter.MayContain(key);
    return found;
  });
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), filter.plan().capacity);
}

void Register() {
#ifdef __AVX2__
  // This copy runs AVX2 instructions: register it only where the CPU has them.
  if (!__builtin_cpu_supports("avx2")) return;
#endif
  const std::string target = BLOOMERY_BENCH_TARGET;
  for (int64_t n : kSizes) {
    benchmark::RegisterBenchmark(("BM_MayContain" + target).c_str(),
                                 BM_MayContain<IntegerHash::kXxh3>)
        ->Arg(n);
    RegisterFill(("BM_Insert" + target).c_str(), BM_Insert<IntegerHash::kXxh3>, n);
    benchmark::RegisterBenchmark(("BM_ConcurrentMayContain" + target).c_str(),
                                 BM_MayContain<IntegerHash::kXxh3, true>)
        ->Arg(n);
#ifdef __AVX2__
    benchmark::RegisterBenchmark(("BM_MayContainMix" + target).c_str(),
                                 BM_MayContain<IntegerHash::kMix>)
        ->Arg(n);
    RegisterFill(("BM_InsertMix" + target).c_str(), BM_Insert<IntegerHash::kMix>, n);
#endif
  }
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
