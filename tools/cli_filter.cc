// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "cli_filter.h"

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli_common.h"

namespace bloomery::cli {

absl::StatusOr<CreateSpec> CreateSpecFromFlags(const Args& args, uint64_t default_capacity,
                                               double default_fpr) {
  CreateSpec spec;
  if (const std::optional<std::string_view> kind = args.Value("kind")) spec.kind = *kind;
  if (spec.kind != "blocked" && spec.kind != "classic" && spec.kind != "scalable" &&
      spec.kind != "counting") {
    return UsageError(
        absl::StrCat("unknown --kind \"", spec.kind, "\" (blocked, classic, scalable, counting)"));
  }
  absl::StatusOr<FilterOptions> sizing = SizingFromFlags(args, default_capacity, default_fpr);
  if (!sizing.ok()) return sizing.status();
  spec.sizing = *sizing;
  if (args.Has("counter-bits")) {
    if (spec.kind != "counting") return UsageError("--counter-bits needs --kind counting");
    absl::StatusOr<uint32_t> counter_bits = args.Integer("counter-bits", 4, 4, 8);
    if (!counter_bits.ok()) return counter_bits.status();
    if (*counter_bits != 4 && *counter_bits != 8)
      return UsageError("--counter-bits must be 4 or 8");
    spec.counter_bits = *counter_bits;
  }
  return spec;
}

absl::StatusOr<AnyFilter> AnyFilter::Create(const CreateSpec& spec) {
  auto wrap = [](auto filter) -> absl::StatusOr<AnyFilter> {
    if (!filter.ok()) return filter.status();
    return AnyFilter(Variant(*std::move(filter)));
  };
  if (spec.kind == "blocked") return wrap(BlockedFilter::Create(spec.sizing));
  if (spec.kind == "classic") return wrap(ClassicFilter::Create(spec.sizing));
  if (spec.kind == "counting") {
    CountingOptions options;
    static_cast<FilterOptions&>(options) = spec.sizing;
    options.counter_bits = spec.counter_bits;
    return wrap(CountingFilter::Create(options));
  }
  if (spec.kind == "scalable") {
    if (spec.sizing.bits != 0) {
      return UsageError("a scalable filter is sized by --capacity (its first stage) and --fpr");
    }
    ScalableOptions options;
    options.initial_capacity = spec.sizing.capacity;
    options.fpr = spec.sizing.fpr;
    options.seed = spec.sizing.seed;
    options.max_memory_bytes = spec.sizing.max_memory_bytes;
    return wrap(ScalableFilter::Create(options));
  }
  return UsageError(
      absl::StrCat("unknown --kind \"", spec.kind, "\" (blocked, classic, scalable, counting)"));
}

absl::Status FileStatus(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return status;
  return absl::FailedPreconditionError(status.message());
}

absl::StatusOr<AnyFilter> AnyFilter::Load(const std::string& path, const LoadOptions& options) {
  absl::StatusOr<FileInfo> info = InspectFile(path, /*verify_checksums=*/false);
  if (!info.ok()) return FileStatus(info.status());
  auto wrap = [](auto filter) -> absl::StatusOr<AnyFilter> {
    if (!filter.ok()) return FileStatus(filter.status());
    return AnyFilter(Variant(*std::move(filter)));
  };
  if (info->kind == FilterKind::kBlocked) return wrap(BlockedFilter::Load(path, options));
  if (info->kind == FilterKind::kClassic) return wrap(ClassicFilter::Load(path, options));
  if (info->kind == FilterKind::kScalable) return wrap(ScalableFilter::Load(path, options));
  return wrap(CountingFilter::Load(path, options));
}

std::string_view AnyFilter::kind() const {
  constexpr std::string_view kNames[] = {"blocked", "classic", "scalable", "counting"};
  return kNames[filter_.index()];
}

absl::StatusOr<size_t> AnyFilter::InsertMany(std::span<const std::string_view> keys,
                                             std::span<bool> was_new) {
  if (auto* scalable = std::get_if<ScalableFilter>(&filter_)) {
    auto results = std::make_unique<InsertResult[]>(keys.size());
    const InsertCounts counts =
        scalable->InsertMany(keys, std::span<InsertResult>(results.get(), keys.size()));
    for (size_t i = 0; i < keys.size() && i < was_new.size(); ++i) {
      was_new[i] = results[i] == InsertResult::kAdded;
    }
    if (counts.refused != 0) return scalable->FullStatus();
    return counts.added;
  }
  return std::visit(
      [&](auto& filter) -> absl::StatusOr<size_t> {
        if constexpr (std::is_same_v<std::decay_t<decltype(filter)>, ScalableFilter>) {
          return absl::InternalError("unreachable");
        } else {
          return filter.InsertMany(keys, was_new);
        }
      },
      filter_);
}

size_t AnyFilter::MayContainMany(std::span<const std::string_view> keys,
                                 std::span<bool> results) const {
  return std::visit([&](const auto& filter) { return filter.MayContainMany(keys, results); },
                    filter_);
}

absl::StatusOr<size_t> AnyFilter::EraseMany(std::span<const std::string_view> keys,
                                            std::span<bool> erased) {
  auto* counting = std::get_if<CountingFilter>(&filter_);
  if (counting == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("a ", AsAbsl(kind()),
                     " filter cannot remove keys; only counting filters can (build --kind "
                     "counting)"));
  }
  return counting->EraseMany(keys, erased);
}

absl::Status AnyFilter::UnionWith(const AnyFilter& other) {
  if (filter_.index() != other.filter_.index()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot merge a ", AsAbsl(other.kind()), " filter into a ", AsAbsl(kind()), " filter"));
  }
  return std::visit(
      [&](auto& filter) {
        using Filter = std::decay_t<decltype(filter)>;
        return filter.UnionWith(std::get<Filter>(other.filter_));
      },
      filter_);
}

absl::Status AnyFilter::Save(const std::string& path) const {
  return std::visit([&](const auto& filter) { return filter.Save(path); }, filter_);
}

uint64_t AnyFilter::capacity() const {
  return std::visit(
      [](const auto& filter) -> uint64_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(filter)>, ScalableFilter>) {
          return filter.capacity();
        } else {
          return filter.plan().capacity;
        }
      },
      filter_);
}

double AnyFilter::planned_fpr() const {
  return std::visit(
      [](const auto& filter) -> double {
        if constexpr (std::is_same_v<std::decay_t<decltype(filter)>, ScalableFilter>) {
          return filter.fpr();
        } else {
          return filter.plan().expected_fpr;
        }
      },
      filter_);
}

uint32_t AnyFilter::stage_count() const {
  const auto* scalable = std::get_if<ScalableFilter>(&filter_);
  return scalable == nullptr ? 1 : scalable->stage_count();
}

double AnyFilter::EstimatedCount() const {
  return std::visit([](const auto& filter) { return filter.EstimatedCount(); }, filter_);
}

double AnyFilter::EstimatedFpr() const {
  return std::visit([](const auto& filter) { return filter.EstimatedFpr(); }, filter_);
}

uint64_t AnyFilter::memory_bytes() const {
  return std::visit([](const auto& filter) { return filter.memory_bytes(); }, filter_);
}

}  // namespace bloomery::cli
