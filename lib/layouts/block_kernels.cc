// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_kernels.cc: compiles block_kernels-inl.h once per Highway target and chooses one at run
// time. See block_kernels.h.

// SSSE3 would only duplicate SSE4 for the few CPUs that have one but not the other; leaving it
// out keeps the target list (avx3, avx2, sse4, scalar) and the build time short.
#ifndef HWY_DISABLED_TARGETS
#define HWY_DISABLED_TARGETS HWY_SSSE3
#endif
// Compile the scalar target even when the baseline (-m flags) already has SSE4 or better, so it
// can always be tested and forced.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif

#include "layouts/block_kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "layouts/block_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "layouts/block_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace bloomery::simd::HWY_NAMESPACE {

// This target's kernels; constant-initialised, so ActiveKernels needs no fence to read them.
// The kernels of the line under kProbe.
template <Probe kProbe>
constexpr ShapeKernels LineKernels() {
  return {&MakeMasks<kProbe>, &TestLine<kProbe>, &SetLine<kProbe>, &TestLines<kProbe>,
          &SetLines<kProbe>};
}

// The kernels of block256 (kBlockWords 4) or word64 (1) under kProbe.
template <uint32_t kBlockWords, Probe kProbe>
constexpr ShapeKernels BlockKernelsOf(decltype(ShapeKernels::make_masks) make_masks) {
  return {make_masks, &TestShapeBlock<kBlockWords, kProbe>, &SetShapeBlock<kBlockWords, kProbe>,
          &TestShapeBlocks<kBlockWords, kProbe>, &SetShapeBlocks<kBlockWords, kProbe>};
}

// kBlockLayouts' order (layout.h), which the table below follows.
static_assert(
    kBlockLayouts[0].layout == Layout::kLine512 && kBlockLayouts[0].probe == Probe::kSalted &&
    kBlockLayouts[1].layout == Layout::kBlock256 && kBlockLayouts[1].probe == Probe::kSalted &&
    kBlockLayouts[2].layout == Layout::kWord64 && kBlockLayouts[3].layout == Layout::kLine512 &&
    kBlockLayouts[3].probe == Probe::kFields && kBlockLayouts[4].layout == Layout::kBlock256 &&
    kBlockLayouts[4].probe == Probe::kFields && std::size(kBlockLayouts) == 5);

const BlockKernels* GetKernels() {
  static constexpr BlockKernels kKernels = {
      HWY_TARGET,
      HWY_TARGET == HWY_AVX3                                   ? "avx3"
      : HWY_TARGET == HWY_AVX2                                 ? "avx2"
      : HWY_TARGET == HWY_SSE4                                 ? "sse4"
      : (HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128) ? "scalar"
                                                               : "other",
      {
          LineKernels<Probe::kSalted>(),
          BlockKernelsOf<4, Probe::kSalted>(&MakeBlock256Masks<Probe::kSalted>),
          BlockKernelsOf<1, Probe::kFields>(&MakeWord64Masks),
          LineKernels<Probe::kFields>(),
          BlockKernelsOf<4, Probe::kFields>(&MakeBlock256Masks<Probe::kFields>),
      },
  };
  return &kKernels;
}

}  // namespace bloomery::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <algorithm>
#include <array>
#include <cstdlib>

#include "absl/strings/match.h"
#include "bloomery/detail/absl_compat.h"

namespace bloomery::simd {

HWY_EXPORT(GetKernels);

namespace impl {
std::atomic<const BlockKernels*> g_active_kernels{nullptr};
}  // namespace impl

namespace {

struct KernelList {
  std::array<const BlockKernels*, HWY_MAX_DYNAMIC_TARGETS + 2> kernels{};
  size_t size = 0;
};

// Every compiled target this CPU supports, best first: the entries of Highway's dispatch table
// (slot 0 is its initialising trampoline; unused slots are null), filtered by SupportedTargets.
const KernelList& Supported() {
  static const KernelList list = [] {
    KernelList out;
    const int64_t supported = hwy::SupportedTargets();
    const auto& table = HWY_DISPATCH_TABLE(GetKernels);
    for (size_t slot = 1; slot < std::size(table); ++slot) {
      if (table[slot] == nullptr) continue;
      const BlockKernels* kernels = table[slot]();
      if ((kernels->hwy_target & supported) == 0) continue;
      if (std::find(out.kernels.begin(), out.kernels.begin() + out.size, kernels) !=
          out.kernels.begin() + out.size) {
        continue;
      }
      out.kernels[out.size++] = kernels;
    }
    return out;
  }();
  return list;
}

}  // namespace

std::span<const BlockKernels* const> SupportedKernels() noexcept {
  const KernelList& list = Supported();
  return {list.kernels.data(), list.size};
}

const BlockKernels* FindKernels(std::string_view name) noexcept {
  for (const BlockKernels* kernels : SupportedKernels()) {
    if (absl::EqualsIgnoreCase(detail::AbslView(kernels->name), detail::AbslView(name))) {
      return kernels;
    }
  }
  return nullptr;
}

void SetActiveKernels(const BlockKernels* kernels) noexcept {
  impl::g_active_kernels.store(kernels, std::memory_order_relaxed);
}

namespace impl {

const BlockKernels* InitActiveKernels() noexcept {
  // A function-local static makes the first choice exactly once, even when many threads make
  // their first call at the same moment; a later SetActiveKernels overrides it.
  static const BlockKernels* const initial = [] {
    const BlockKernels* chosen = HWY_DYNAMIC_DISPATCH(GetKernels)();
    // An unknown or unsupported BLOOMERY_SIMD keeps the best target: a library cannot fail here,
    // and ActiveSimdTarget() tells what is in use.
    if (const char* env = std::getenv("BLOOMERY_SIMD"); env != nullptr) {
      if (const BlockKernels* forced = FindKernels(env); forced != nullptr) chosen = forced;
    }
    return chosen;
  }();
  const BlockKernels* expected = nullptr;
  // Keep a choice SetActiveKernels made meanwhile.
  g_active_kernels.compare_exchange_strong(expected, initial, std::memory_order_relaxed);
  return g_active_kernels.load(std::memory_order_relaxed);
}

}  // namespace impl
}  // namespace bloomery::simd

#endif  // HWY_ONCE
