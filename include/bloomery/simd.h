// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
// simd.h: the filters' SIMD target ("avx3", "avx2", "sse4", "scalar"): the best the CPU has, or
// one forced by BLOOMERY_SIMD=<target> at the first filter operation (a bad value is ignored) or
// by ForceSimdTarget (thread-safe; "best": the default; InvalidArgument for an unknown name,
// FailedPrecondition for one this CPU or build lacks). Every target gives bit-identical filters;
// a BlockedFilter made under avx2 or avx3 keeps its inline AVX2 single-key probe.
//   if (absl::Status s = bloomery::ForceSimdTarget("sse4"); !s.ok()) return s;
#ifndef BLOOMERY_SIMD_H_
#define BLOOMERY_SIMD_H_

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "bloomery/export.h"

namespace bloomery {

BLOOMERY_EXPORT absl::Status ForceSimdTarget(std::string_view target);
[[nodiscard]] BLOOMERY_EXPORT std::string_view ActiveSimdTarget() noexcept;
[[nodiscard]] BLOOMERY_EXPORT std::vector<std::string_view> SupportedSimdTargets();  // best first

}  // namespace bloomery

#endif  // BLOOMERY_SIMD_H_
