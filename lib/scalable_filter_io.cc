// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// ScalableFilter's persistence: a file of kind "scalable" (docs/FORMAT.md) with one stage-table
// entry per stage.
#include <algorithm>
#include <bit>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/scalable_filter.h"
#include "internal/filter_factory.h"
#include "internal/format.h"

namespace bloomery {

// A saved chain is valid when its options are ones Create accepts and every stage is exactly the
// stage those options grow (capacity, bits, hashes). InspectFile, Load and LoadFromBytes all ask.
struct ScalableChainCheck {
  // The chain's options as saved (param0 growth, param1 tightening as f64 bits, param2 max_stages
  // | non-scaling << 32), with `load`'s settings for what a file does not hold.
  static ScalableOptions OptionsOf(const internal::FileHeader& header, const LoadOptions& load) {
    ScalableOptions options;
    options.capacity = header.capacity;
    options.fpr = header.fpr;
    options.growth = static_cast<uint32_t>(std::min<uint64_t>(header.param0, 1u << 31));
    options.tightening = std::bit_cast<double>(header.param1);
    options.max_stages = static_cast<uint32_t>(header.param2 & 0xFFFFFFFFu);
    options.scaling = (header.param2 >> 32) == 0;
    options.seed = header.seed;
    options.integer_hash = static_cast<IntegerHash>(header.hash_id);
    options.concurrent = load.concurrent;
    options.max_memory_bytes = load.max_bytes;
    options.huge_pages = load.huge_pages;
    return options;
  }

  static absl::Status Corrupt(absl::string_view what) {
    return internal::Corrupt(absl::StrCat("scalable filter ", what));
  }

  // Stage `i` as `filter`'s options grow it (under its memory cap, given the stages published
  // before it), which must be the saved one.
  static absl::StatusOr<ScalableFilter::StagePlan> PlanSaved(const ScalableFilter& filter,
                                                             const internal::FileHeader& header,
                                                             uint32_t i) {
    absl::StatusOr<ScalableFilter::StagePlan> plan = filter.PlanStage(i);
    const internal::StageInfo& saved = header.stages[i];
    if (!plan.ok() || plan->capacity != saved.capacity || plan->plan.bits != saved.bits ||
        plan->plan.hashes != saved.hashes) {
      return Corrupt(absl::StrFormat("stage %d does not match the chain's options", i));
    }
    return plan;
  }

  static absl::Status Check(const internal::FileHeader& header) {
    if ((header.param2 >> 33) != 0) return Corrupt("has unknown option bits");
    ScalableOptions options = OptionsOf(header, LoadOptions());
    options.max_memory_bytes = 0;  // a cap is the loader's to apply, not the file's
    if (absl::Status s = ScalableFilter::CheckOptions(options); !s.ok()) {
      return Corrupt(s.message());
    }
    const ScalableFilter chain(options);
    for (uint32_t i = 0; i < header.stages.size(); ++i) {
      if (absl::StatusOr<ScalableFilter::StagePlan> plan = PlanSaved(chain, header, i);
          !plan.ok()) {
        return plan.status();
      }
    }
    return absl::OkStatus();
  }
};

namespace internal {

absl::Status CheckScalableHeader(const FileHeader& header) {
  return ScalableChainCheck::Check(header);
}

}  // namespace internal

absl::StatusOr<std::string> ScalableFilter::Write(const std::string* path) const {
  internal::FileHeader header;
  header.kind = FilterKind::kScalable;
  internal::PutHasher(header, hasher());
  header.capacity = options_.capacity;
  header.fpr = options_.fpr;
  header.param0 = options_.growth;
  header.param1 = std::bit_cast<uint64_t>(options_.tightening);
  header.param2 = options_.max_stages | (options_.scaling ? 0 : uint64_t{1} << 32);
  std::vector<std::span<const uint8_t>> payloads;
  const uint32_t count = stage_count();
  for (uint32_t i = 0; i < count; ++i) {
    const BlockedFilter& filter = stage(i);
    const uint64_t keys = stage_keys(i);
    // A stage is planned for exactly its capacity (AddStage), so its plan carries it.
    header.stages.push_back({filter.bits(), filter.hashes(), filter.plan().capacity, keys});
    header.bits += filter.bits();
    header.insert_count += keys;
    payloads.push_back(filter.bytes());
  }
  header.hashes = header.stages[0].hashes;
  return internal::WriteFilter(path, std::move(header), payloads);
}

absl::StatusOr<ScalableFilter> ScalableFilter::Read(const std::string& name,
                                                    const std::string_view* bytes,
                                                    const LoadOptions& load_options) {
  absl::StatusOr<internal::LoadedFile> file =
      internal::LoadFilter(internal::Input{name, bytes ? std::optional(*bytes) : std::nullopt},
                           FilterKind::kScalable, load_options);
  if (!file.ok()) return file.status();
  const ScalableOptions options = ScalableChainCheck::OptionsOf(file->header, load_options);
  ScalableFilter filter(options);
  for (uint32_t i = 0; i < file->header.stages.size(); ++i) {
    // The validator checked the chain; planned again here under the caller's memory cap.
    absl::StatusOr<StagePlan> plan = ScalableChainCheck::PlanSaved(filter, file->header, i);
    if (!plan.ok()) return plan.status();
    const internal::StageInfo& saved = file->header.stages[i];
    filter.PublishStage(
        i,
        internal::MakeBlockedFilter(internal::Own(std::move(file->stages[i])), plan->plan,
                                    options.hasher(), options.concurrent),
        saved.capacity, saved.insert_count);
  }
  return filter;
}

template class Persistent<ScalableFilter>;

}  // namespace bloomery
