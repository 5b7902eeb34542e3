// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// single_key_benchmark.cc: BlockedFilter's single-key Insert and MayContain, one key at a time.
// Built twice (benchmarks/meson.build): for the project's target, registering BM_Insert and
// BM_MayContain, and for x86-64-v3 with BLOOMERY_BENCH_TARGET="<x86-64-v3>", registering
// BM_Insert<x86-64-v3> and BM_MayContain<x86-64-v3>: there the probe is inlined into the loop
// (bloomery/blocked_line.h), as in a user's program built with -march=x86-64-v3 or native, the
// flags the Boost.Bloom families are built with. The x86-64-v3 copy also registers
// BM_InsertMix and BM_MayContainMix: the same probe fed by a cheaper integer hash.
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

void BM_Insert(benchmark::State& state) {
  BlockedFilter filter =
      ValueOrDie(BlockedFilter::Create(OptionsFor(static_cast<uint64_t>(state.range(0)), false)));
  FillOnce(state, filter, 0, [](BlockedFilter& f, std::span<const uint64_t> keys) {
    size_t added = 0;
    for (uint64_t key : keys) added += f.Insert(key);
    return added;
  });
}

void BM_MayContain(benchmark::State& state) {
  const BlockedFilter& filter = FilledFilter(static_cast<uint64_t>(state.range(0)));
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&filter](std::span<const uint64_t> keys) {
    uint64_t found = 0;
    for (uint64_t key : keys) found += filter.MayContain(key);
    return found;
  });
  ReportBitsPerKey(state, static_cast<double>(filter.bits()), filter.plan().capacity);
}

#ifdef __AVX2__
// What a cheaper hash for integer keys would buy the inline single-key calls: the same probe fed
// by a 4-instruction mix (one 64x64->128 multiply, a fold, one more multiply) in place of
// XXH3-128's 8-byte path. Measured only: no filter uses this mix, since using it means a new
// hash_id in the file format (benchmarks/README.md: the numbers and the decision).
KeyHash MixHash(uint64_t key, uint64_t seed) {
  const unsigned __int128 m = static_cast<unsigned __int128>(key ^ seed) * 0x9E3779B97F4A7C15ull;
  const uint64_t folded = static_cast<uint64_t>(m >> 64) ^ static_cast<uint64_t>(m);
  return KeyHash{folded * 0xD6E8FEB86659FD93ull, folded};
}

void BM_InsertMix(benchmark::State& state) {
  BlockedFilter filter =
      ValueOrDie(BlockedFilter::Create(OptionsFor(static_cast<uint64_t>(state.range(0)), false)));
  FillOnce(state, filter, 0, [](BlockedFilter& f, std::span<const uint64_t> keys) {
    size_t added = 0;
    for (uint64_t key : keys) added += f.Insert(MixHash(key, f.seed()));
    return added;
  });
}

void BM_MayContainMix(benchmark::State& state) {
  const BlockedFilter& filter = FilledFilter(static_cast<uint64_t>(state.range(0)));
  TimeLookups(state, StreamCursor(AbsentKeys(), state), [&filter](std::span<const uint64_t> keys) {
    uint64_t found = 0;
    for (uint64_t key : keys) found += filter.MayContain(MixHash(key, filter.seed()));
    return found;
  });
}
#endif

void Register() {
#ifdef __AVX2__
  // This copy runs AVX2 instructions: register it only where the CPU has them.
  if (!__builtin_cpu_supports("avx2")) return;
#endif
  const std::string target = BLOOMERY_BENCH_TARGET;
  for (int64_t n : kSizes) {
    benchmark::RegisterBenchmark(("BM_MayContain" + target).c_str(), BM_MayContain)->Arg(n);
    RegisterFill(("BM_Insert" + target).c_str(), BM_Insert, n);
#ifdef __AVX2__
    benchmark::RegisterBenchmark(("BM_MayContainMix" + target).c_str(), BM_MayContainMix)->Arg(n);
    RegisterFill(("BM_InsertMix" + target).c_str(), BM_InsertMix, n);
#endif
  }
}

const bool registered = (Register(), true);

}  // namespace
}  // namespace bloomery::bench
