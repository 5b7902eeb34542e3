// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// BlockedFilter's persistence: the filter as a one-stage file of kind "blocked" (docs/FORMAT.md).
#include <utility>

#include "bloomery/blocked_filter.h"
#include "internal/format.h"

namespace bloomery {

using internal::FileHeader;

absl::StatusOr<std::string> BlockedFilter::Write(const std::string* path) const {
  const std::span<const uint8_t> payload[] = {bytes()};
  return internal::WriteFilter(
      path, internal::SingleStageHeader(FilterKind::kBlocked, plan_, seed_), payload);
}

absl::Status BlockedFilter::Save(const std::string& path) const { return Write(&path).status(); }

absl::StatusOr<std::string> BlockedFilter::SaveToBytes() const { return Write(nullptr); }

absl::StatusOr<BlockedFilter> BlockedFilter::Read(const std::string& name,
                                                  const std::string_view* bytes,
                                                  const LoadOptions& options) {
  return internal::LoadSingleStage(
      internal::Input{name, bytes ? std::optional(*bytes) : std::nullopt}, FilterKind::kBlocked,
      options, internal::PlanOfLayout(Layout::kBlocked),
      [&](FilterMemory memory, const Plan& plan, const FileHeader& header) {
        return BlockedFilter(std::move(memory), plan, header.seed, options.concurrent);
      });
}

absl::StatusOr<BlockedFilter> BlockedFilter::Load(const std::string& path,
                                                  const LoadOptions& options) {
  return Read(path, nullptr, options);
}

absl::StatusOr<BlockedFilter> BlockedFilter::LoadFromBytes(std::string_view bytes,
                                                           const LoadOptions& options) {
  return Read(std::string(internal::kBytesName), &bytes, options);
}

absl::StatusOr<BlockedFilter> BlockedFilter::Map(const std::string& path, MapMode mode,
                                                 const LoadOptions& options) {
  return internal::MapSingleStage(
      path, FilterKind::kBlocked, mode, options, internal::PlanOfLayout(Layout::kBlocked),
      [&](FilterMemory memory, const Plan& plan, const FileHeader& header) {
        return BlockedFilter(std::move(memory), plan, header.seed, options.concurrent);
      });
}

absl::Status BlockedFilter::Flush() { return internal::FlushStorage(memory_); }

}  // namespace bloomery
