// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// WindowedFilter's persistence: a one-stage file of kind "windowed" (docs/FORMAT.md). The stage is
// the interleaved generations' lines; the window and its clock state are in the header's params.
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/windowed_filter.h"
#include "internal/block_layout.h"
#include "internal/format.h"
#include "internal/storage.h"

namespace bloomery {
namespace {

using internal::FileHeader;

constexpr uint32_t kMaxGenerations = 64;
constexpr uint64_t kRefreshShift = 8;
constexpr uint64_t kMaxEpoch = uint64_t{1} << 63;

absl::Status Corrupt(absl::string_view what) {
  return internal::Corrupt(absl::StrCat("windowed filter ", what));
}

uint32_t GenerationsOf(const FileHeader& header) {
  return static_cast<uint32_t>(header.param0 & 0xFF);
}

// The header's window and geometry checked against what Create makes: one generation's plan
// (DataLoss otherwise).
absl::StatusOr<Plan> GenerationPlanOf(const FileHeader& header) {
  const uint32_t g = GenerationsOf(header);
  if ((header.param0 >> (kRefreshShift + 1)) != 0) return Corrupt("has unknown option bits");
  if (g < 2 || g > kMaxGenerations) {
    return Corrupt(absl::StrFormat("generations %d outside 2..%d", g, kMaxGenerations));
  }
  const auto window_ns = static_cast<int64_t>(header.param1);
  if (window_ns < 0 || (window_ns > 0 && window_ns < g)) {
    return Corrupt(
        absl::StrFormat("window of %d ns is shorter than its %d generations", window_ns, g));
  }
  if (header.capacity == 0 || !(header.fpr > 0 && header.fpr < 1)) {
    return Corrupt("needs a capacity and an fpr in (0, 1)");
  }
  if (header.insert_count != 0 || header.stages[0].insert_count != 0 ||
      header.stages[0].capacity != header.capacity) {
    return Corrupt("counts contradict the header");
  }
  // A running filter's epoch stays below 2^63: the clock's elapsed int64 ns over a span of at
  // least 1 ns, or one rotation per insert. Refusing the rest keeps epoch + 1 from wrapping or
  // reaching the "no generation yet" mark (a wrapped epoch would rotate forever).
  if (header.param2 >= kMaxEpoch) return Corrupt("epoch out of range");
  const uint64_t per_generation = WindowedFilter::KeysPerGeneration(header.capacity, g);
  if (window_ns == 0 && header.param3 > per_generation) {
    return Corrupt(absl::StrFormat("newest generation counts %d inserts, more than its %d",
                                   header.param3, per_generation));
  }
  if (header.bits % (uint64_t{g} * kBlockBits) != 0) {
    return Corrupt("bits are not whole lines for every generation");
  }
  absl::StatusOr<Plan> plan =
      PlanForSize(header.bits / g, header.hashes, per_generation, Layout::kBlocked);
  if (!plan.ok() || plan->bits != header.bits / g) {
    return Corrupt(absl::StrFormat("bits %d with %d hashes is not a valid geometry", header.bits,
                                   header.hashes));
  }
  // The promise Create keeps: the predicted FPR over the window is at most the requested one.
  const double window_fpr = -std::expm1(g * std::log1p(-plan->expected_fpr));
  if (window_fpr > header.fpr * (1 + 1e-9)) {
    return Corrupt(absl::StrFormat("predicts FPR %g over the window, above its fpr %g", window_fpr,
                                   header.fpr));
  }
  return plan;
}

// The window's clock state (param2, param3): what Save writes and Flush brings up to date.
void PutClockState(FileHeader& header, uint64_t epoch, uint64_t clock_field) {
  header.param2 = epoch;
  header.param3 = clock_field;
}

}  // namespace

namespace internal {

// The row check of kind 5 (lib/filter_kind.cc): Inspect, Load and LoadFromBytes share its verdict.
absl::Status CheckWindowedHeader(const FileHeader& header) {
  return GenerationPlanOf(header).status();
}

}  // namespace internal

absl::StatusOr<std::string> WindowedFilter::Write(const std::string* path) const {
  // One stage holding every generation's lines; the window and its clock in the params.
  FileHeader header = internal::SingleStageHeader(FilterKind::kWindowed, plan_, hasher_);
  header.bits = plan_.bits * generations_;
  header.capacity = capacity_;
  header.fpr = fpr_;
  header.stages = {{header.bits, plan_.hashes, capacity_, 0}};
  header.param0 = generations_ | uint64_t{static_cast<uint8_t>(refresh_)} << kRefreshShift;
  header.param1 = static_cast<uint64_t>(window_ns_);
  // The file is the filter as its clock says now, not at its last rotation: a reader takes the
  // later of E and its own clock's epoch, so a stale E would revive the generations that expired
  // since, were its clock behind this one. Their lines go out cleared, as a rotation would leave
  // them, from a copy: Save is const and lookups may read the lines meanwhile.
  const uint64_t now = EpochNow();
  PutClockState(header, now, ClockField());
  if (now == epoch()) {
    const std::span<const uint8_t> payload[] = {bytes()};
    return internal::WriteFilter(path, std::move(header), payload);
  }
  absl::StatusOr<FilterMemory> copy =
      internal::AllocateFilterMemory(bytes().size(), internal::StorageOptions{});  // zeroed
  if (!copy.ok()) return copy.status();
  uint64_t* const words = copy->words();
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if (!SlotLive(slot, now)) continue;
    for (uint64_t b = 0; b < blocks_; ++b) {
      // The same place in the copy as in this filter's lines (line() is the layout).
      std::memcpy(words + (line(b, slot) - words_), line(b, slot),
                  internal::kWordsPerBlock * sizeof(uint64_t));
    }
  }
  const std::span<const uint8_t> payload[] = {{copy->data(), bytes().size()}};
  return internal::WriteFilter(path, std::move(header), payload);
}

absl::Status WindowedFilter::Save(const std::string& path) const { return Write(&path).status(); }

absl::StatusOr<std::string> WindowedFilter::SaveToBytes() const { return Write(nullptr); }

absl::Status WindowedFilter::Flush() {
  // The lines are the mapping's; the clock state lives in the header, so it is written here,
  // after the rotations the clock asks for: the header then records every expiry seen (a stale
  // epoch would revive them for a reader whose clock is behind), and the lines agree with it.
  Advance();
  return internal::FlushStorage(
      memory_, [this](FileHeader& header) { PutClockState(header, epoch(), ClockField()); });
}

absl::StatusOr<WindowedFilter> WindowedFilter::Read(const std::string& name,
                                                    const std::string_view* bytes,
                                                    const LoadOptions& options,
                                                    std::optional<MapMode> map, WindowClock clock) {
  // A loaded file and a mapped one differ only in whose memory holds the lines.
  const auto open = [&](auto file) -> absl::StatusOr<WindowedFilter> {
    if (!file.ok()) return file.status();
    const FileHeader& header = file->header;
    absl::StatusOr<Plan> plan = GenerationPlanOf(header);  // the row check passed: this holds
    if (!plan.ok()) return plan.status();
    const Shape shape{GenerationsOf(header),
                      header.capacity,
                      header.fpr,
                      static_cast<int64_t>(header.param1),
                      static_cast<Refresh>(header.param0 >> kRefreshShift),
                      internal::HasherOf(header),
                      options.concurrent};
    WindowedFilter filter(internal::Own(std::move(file->storage())), *plan, shape,
                          std::move(clock));
    filter.RestoreClock(header.param2, header.param3);
    return filter;
  };
  if (map) return open(internal::MapFilterFile(name, FilterKind::kWindowed, *map, options));
  return open(
      internal::LoadFilter(internal::Input{name, bytes ? std::optional(*bytes) : std::nullopt},
                           FilterKind::kWindowed, options));
}

absl::StatusOr<WindowedFilter> WindowedFilter::Load(const std::string& path,
                                                    const LoadOptions& options, WindowClock clock) {
  return Read(path, nullptr, options, std::nullopt, std::move(clock));
}

absl::StatusOr<WindowedFilter> WindowedFilter::LoadFromBytes(std::string_view bytes,
                                                             const LoadOptions& options,
                                                             WindowClock clock) {
  return Read(std::string(internal::kBytesName), &bytes, options, std::nullopt, std::move(clock));
}

absl::StatusOr<WindowedFilter> WindowedFilter::Map(const std::string& path, MapMode mode,
                                                   const LoadOptions& options, WindowClock clock) {
  return Read(path, nullptr, options, mode, std::move(clock));
}

}  // namespace bloomery
