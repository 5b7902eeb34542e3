// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// ClassicFilter's persistence: the filter as a one-stage file of kind "classic" (docs/FORMAT.md).
#include <utility>

#include "bloomery/classic_filter.h"
#include "internal/format.h"

namespace bloomery {

using internal::FileHeader;

absl::StatusOr<std::string> ClassicFilter::Write(const std::string* path) const {
  const std::span<const uint8_t> payload[] = {bytes()};
  return internal::WriteFilter(
      path, internal::SingleStageHeader(FilterKind::kClassic, plan_, seed_), payload);
}

absl::Status ClassicFilter::Save(const std::string& path) const { return Write(&path).status(); }

absl::StatusOr<std::string> ClassicFilter::SaveToBytes() const { return Write(nullptr); }

absl::StatusOr<ClassicFilter> ClassicFilter::Read(const std::string& name,
                                                  const std::string_view* bytes,
                                                  const LoadOptions& options) {
  return internal::LoadSingleStage(
      internal::Input{name, bytes ? std::optional(*bytes) : std::nullopt}, FilterKind::kClassic,
      options, internal::PlanOfLayout(Layout::kPartitioned),
      [&](FilterMemory memory, const Plan& plan, const FileHeader& header) {
        return ClassicFilter(std::move(memory), plan, header.seed, options.concurrent);
      });
}

absl::StatusOr<ClassicFilter> ClassicFilter::Load(const std::string& path,
                                                  const LoadOptions& options) {
  return Read(path, nullptr, options);
}

absl::StatusOr<ClassicFilter> ClassicFilter::LoadFromBytes(std::string_view bytes,
                                                           const LoadOptions& options) {
  return Read(std::string(internal::kBytesName), &bytes, options);
}

absl::StatusOr<ClassicFilter> ClassicFilter::Map(const std::string& path, MapMode mode,
                                                 const LoadOptions& options) {
  return internal::MapSingleStage(
      path, FilterKind::kClassic, mode, options, internal::PlanOfLayout(Layout::kPartitioned),
      [&](FilterMemory memory, const Plan& plan, const FileHeader& header) {
        return ClassicFilter(std::move(memory), plan, header.seed, options.concurrent);
      });
}

absl::Status ClassicFilter::Flush() { return internal::FlushStorage(memory_); }

}  // namespace bloomery
