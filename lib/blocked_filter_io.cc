// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// BlockedFilter's persistence: the filter as a one-stage file of kind "blocked".
#include <utility>

#include "bloomery/blocked_filter.h"
#include "internal/format.h"

namespace bloomery {
namespace {

using internal::FileHeader;
using internal::FilterKind;

// A validated header's geometry as a Plan (DataLoss if it is not a valid blocked geometry).
absl::StatusOr<Plan> PlanFromHeader(const FileHeader& header) {
  absl::StatusOr<Plan> plan = PlanForSize(header.bits, header.hashes, header.capacity);
  if (!plan.ok() || plan->bits != header.bits) {
    return absl::DataLossError("corrupted bloomery file: not a valid blocked filter geometry");
  }
  return plan;
}

}  // namespace

absl::Status BlockedFilter::Save(const std::string& path) const {
  FileHeader header;
  header.kind = FilterKind::kBlocked;
  header.seed = seed_;
  header.hashes = hashes_;
  header.bits = bits();
  header.capacity = plan_.capacity;
  header.fpr = plan_.expected_fpr;
  header.stages.push_back({bits(), hashes_, plan_.capacity, 0});
  const std::span<const uint8_t> payload[] = {bytes()};
  return internal::SaveFilterFile(path, std::move(header), payload);
}

absl::StatusOr<BlockedFilter> BlockedFilter::Load(const std::string& path,
                                                  const LoadOptions& options) {
  absl::StatusOr<internal::LoadedFile> file =
      internal::LoadFilterFile(path, FilterKind::kBlocked, options);
  if (!file.ok()) return file.status();
  absl::StatusOr<Plan> plan = PlanFromHeader(file->header);
  if (!plan.ok()) return plan.status();
  return BlockedFilter(std::move(file->stages[0]), *plan, file->header.seed, options.concurrent);
}

absl::StatusOr<BlockedFilter> BlockedFilter::Map(const std::string& path, MapMode mode,
                                                 const LoadOptions& options) {
  absl::StatusOr<internal::MappedFile> file =
      internal::MapFilterFile(path, FilterKind::kBlocked, mode, options);
  if (!file.ok()) return file.status();
  absl::StatusOr<Plan> plan = PlanFromHeader(file->header);
  if (!plan.ok()) return plan.status();
  return BlockedFilter(std::move(file->mapping), *plan, file->header.seed, options.concurrent);
}

absl::Status BlockedFilter::Flush() {
  if (!storage_.file_shared()) {
    return absl::FailedPreconditionError("Flush needs a filter mapped with MapMode::kReadWrite");
  }
  return internal::FlushMappedFile(storage_);
}

}  // namespace bloomery
