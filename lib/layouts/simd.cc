// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/simd.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "bloomery/detail/absl_compat.h"
#include "layouts/block_kernels.h"

namespace bloomery {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(detail::AbslView(a), detail::AbslView(b));
}

}  // namespace

absl::Status ForceSimdTarget(std::string_view target) {
  if (EqualsIgnoreCase(target, "best")) {
    simd::SetActiveKernels(simd::SupportedKernels().front());
    return absl::OkStatus();
  }
  constexpr std::string_view kKnown[] = {"avx3", "avx2", "sse4", "scalar"};
  bool known = false;
  for (std::string_view name : kKnown) known |= EqualsIgnoreCase(target, name);
  if (!known) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown SIMD target \"%s\" (expected avx3, avx2, sse4, scalar or best)",
                        detail::AbslView(target)));
  }
  const simd::BlockKernels* kernels = simd::FindKernels(target);
  if (kernels == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "SIMD target \"%s\" is not supported by this CPU or build", detail::AbslView(target)));
  }
  simd::SetActiveKernels(kernels);
  return absl::OkStatus();
}

std::string_view ActiveSimdTarget() noexcept { return simd::ActiveKernels().name; }

std::vector<std::string_view> SupportedSimdTargets() {
  std::vector<std::string_view> names;
  for (const simd::BlockKernels* kernels : simd::SupportedKernels()) names.push_back(kernels->name);
  return names;
}

}  // namespace bloomery
