// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// simd.h: which SIMD instruction set the filters' kernels use, and how to force one.
//
// The kernels are compiled for AVX-512 ("avx3"), AVX2 ("avx2"), SSE4 ("sse4") and plain scalar
// code ("scalar") in the same binary, and the best one the CPU supports is chosen at the first
// filter operation (creating a filter is one; so is ActiveSimdTarget()). Every target gives
// bit-identical filters and answers (tests/simd_test.cc), so forcing one only changes speed: use it
// to compare targets, to reproduce a report, or to avoid AVX-512 frequency throttling on CPUs that
// suffer from it.
//
// The environment variable BLOOMERY_SIMD=avx3|avx2|sse4|scalar, read once at the first filter
// operation (at the latest when the first filter is created), does the same as ForceSimdTarget; an
// unknown or unsupported value there is ignored (the best target stays), since nothing can report
// an error at that point.
//
// BlockedFilter's single-key Insert and MayContain take an inline AVX2 probe instead of the
// kernels (bloomery/detail/stored_layouts.h) when the target active at the filter's creation runs
// AVX2 (avx3, avx2): a filter made after forcing sse4 or scalar takes that target's kernels; one
// made before keeps its inline probe (bit-identical, like every target).
//
//   if (absl::Status s = bloomery::ForceSimdTarget("sse4"); !s.ok()) return s;
//   std::cout << bloomery::ActiveSimdTarget();  // "sse4"
#ifndef BLOOMERY_SIMD_H_
#define BLOOMERY_SIMD_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bloomery/export.h"

namespace bloomery {

// Makes every filter in the process use `target` ("avx3", "avx2", "sse4" or "scalar",
// case-insensitive), or the best supported target for "best".
// Thread-safe: operations already running finish on the target they began with.
// Errors: InvalidArgument for an unknown name; FailedPrecondition for a target this CPU does not
// support (or that this build did not compile).
BLOOMERY_EXPORT absl::Status ForceSimdTarget(std::string_view target);

// The target in use: "avx3", "avx2", "sse4" or "scalar".
[[nodiscard]] BLOOMERY_EXPORT std::string_view ActiveSimdTarget() noexcept;

// The targets this build compiled and this CPU supports, best first; the first is the default.
[[nodiscard]] BLOOMERY_EXPORT std::vector<std::string_view> SupportedSimdTargets();

}  // namespace bloomery

#endif  // BLOOMERY_SIMD_H_
