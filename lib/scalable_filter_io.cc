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

// Persistence (docs/FORMAT.md, kind "scalable"): one stage-table entry per stage, with its key
// count; the chain's options in the fixed header (param0 growth, param1 tightening as f64 bits,
// param2 max_stages | non-scaling << 32).
absl::StatusOr<std::string> ScalableFilter::Write(const std::string* path) const {
  internal::FileHeader header;
  header.kind = FilterKind::kScalable;
  header.seed = options_.seed;
  header.capacity = options_.initial_capacity;
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

absl::Status ScalableFilter::Save(const std::string& path) const { return Write(&path).status(); }

absl::StatusOr<std::string> ScalableFilter::SaveToBytes() const { return Write(nullptr); }

absl::StatusOr<ScalableFilter> ScalableFilter::Read(const std::string& name,
                                                    const std::string_view* bytes,
                                                    const LoadOptions& load_options) {
  absl::StatusOr<internal::LoadedFile> file =
      internal::LoadFilter(internal::Input{name, bytes ? std::optional(*bytes) : std::nullopt},
                           FilterKind::kScalable, load_options);
  if (!file.ok()) return file.status();
  const internal::FileHeader& header = file->header;
  ScalableOptions options;
  options.initial_capacity = header.capacity;
  options.fpr = header.fpr;
  options.growth = static_cast<uint32_t>(std::min<uint64_t>(header.param0, 1u << 31));
  options.tightening = std::bit_cast<double>(header.param1);
  options.max_stages = static_cast<uint32_t>(header.param2 & 0xFFFFFFFFu);
  options.scaling = (header.param2 >> 32) == 0;
  options.seed = header.seed;
  options.concurrent = load_options.concurrent;
  options.max_memory_bytes = load_options.max_bytes;
  options.huge_pages = load_options.huge_pages;
  auto corrupt = [](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("corrupted bloomery file: scalable filter ", what));
  };
  if ((header.param2 >> 33) != 0) return corrupt("has unknown option bits");
  if (absl::Status s = CheckOptions(options); !s.ok()) return corrupt(s.message());
  ScalableFilter filter(options);
  for (uint32_t i = 0; i < header.stages.size(); ++i) {
    // Each stage must be exactly what this chain would have grown: same capacity and geometry.
    absl::StatusOr<StagePlan> plan = filter.PlanStage(i);
    const internal::StageInfo& saved = header.stages[i];
    if (!plan.ok() || plan->capacity != saved.capacity || plan->plan.bits != saved.bits ||
        plan->plan.hashes != saved.hashes || saved.insert_count > saved.capacity) {
      return corrupt(absl::StrFormat("stage %d does not match the chain's options", i));
    }
    filter.PublishStage(i,
                        internal::MakeBlockedFilter(internal::Own(std::move(file->stages[i])), plan->plan,
                                                    options.seed, options.concurrent),
                        saved.capacity, saved.insert_count);
  }
  return filter;
}

absl::StatusOr<ScalableFilter> ScalableFilter::Load(const std::string& path,
                                                    const LoadOptions& options) {
  return Read(path, nullptr, options);
}

absl::StatusOr<ScalableFilter> ScalableFilter::LoadFromBytes(std::string_view bytes,
                                                             const LoadOptions& options) {
  return Read(std::string(internal::kBytesName), &bytes, options);
}

}  // namespace bloomery
