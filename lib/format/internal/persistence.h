// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// persistence.h (internal): every kind's Save, SaveToBytes, Load, LoadFromBytes, Map and Flush,
// written once (Persistent and Mappable, filter.h) over three private hooks the kind defines beside
// the rest of it, in lib/<kind>_filter.cc:
//
//   // Its row of the file format (format_codec.h): stage limit, counter widths, stage unit,
//   // parameters used, whether it counts inserts, and the header check that holds a header to the
//   // kind's planner. lib/format/kind_table.cc puts it in the table of rows.
//   static detail::KindFormat FileFormat() noexcept;
//   // To the file at *path (returning "") or to the returned bytes when path is null, through
//   // detail::WriteFilter.
//   absl::StatusOr<std::string> Write(const std::string* path) const;
//   // The filter over a validated file's memory, loaded or (a Mappable kind) mapped.
//   static absl::StatusOr<Kind> Open(detail::FilterFile& file, const LoadOptions& options);
//
// A kind that is a BitArray (filter.h: BlockedFilter, ClassicFilter) is one stage of bits that a
// plan.h Plan of one layout describes whole, so it defines FileFormat only and names that layout,
// `static constexpr Layout kLayout`; its Write and Open are the ones here (FilterAccess).
// The kind befriends detail::FilterAccess, the one way in, and instantiates the template in its
// .cc, a line per class: `template class Persistent<Kind>;` (and `template class Mappable<Kind>;`).
// A kind whose loaders take more (WindowedFilter's clock) declares its own Load and Map and
// forwards the extra arguments to Open through LoadAs and MapAs.
#ifndef BLOOMERY_LIB_FORMAT_INTERNAL_PERSISTENCE_H_
#define BLOOMERY_LIB_FORMAT_INTERNAL_PERSISTENCE_H_

#include <concepts>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/filter.h"
#include "bloomery/filter_kind.h"
#include "bloomery/options.h"
#include "format/internal/format_io.h"
#include "memory/internal/storage.h"

namespace bloomery::detail {

template <typename Kind, typename PlanOf>  // below
absl::StatusOr<Kind> OpenSingleStage(FilterFile& file, const LoadOptions& options, PlanOf plan_of);

// What the library may do with a kind that no caller may: reach its persistence hooks, and build
// it around memory that already holds its bits (a file's, or a ScalableFilter stage's) with its
// private constructor.
class FilterAccess {
 public:
  template <typename Kind, typename... Args>
  [[nodiscard]] static Kind Construct(Args&&... args) {
    return Kind(std::forward<Args>(args)...);
  }
  template <typename Kind>
  [[nodiscard]] static KindFormat FileFormat() noexcept {
    return Kind::FileFormat();
  }
  // The kind's Write; a BitArray kind's (above) is its Plan's single-stage header, then its bits.
  template <typename Kind>
  [[nodiscard]] static absl::StatusOr<std::string> Write(const Kind& filter,
                                                         const std::string* path) {
    if constexpr (std::derived_from<Kind, BitArray>) {
      const std::span<const uint8_t> payload[] = {filter.bytes()};
      return WriteFilter(path, SingleStageHeader(kKindOf<Kind>, filter.plan(), filter.hasher()),
                         payload);
    } else {
      return filter.Write(path);
    }
  }
  // The kind's Open; a BitArray kind's is the Plan of its layout that the header states, over the
  // stage's memory.
  template <typename Kind, typename... Extra>
  [[nodiscard]] static absl::StatusOr<Kind> Open(FilterFile& file, const LoadOptions& options,
                                                 Extra&&... extra) {
    if constexpr (std::derived_from<Kind, BitArray>) {
      static_assert(sizeof...(Extra) == 0);
      return OpenSingleStage<Kind>(file, options, [](const FileHeader& header) {
        return PlanFromHeader(header, Kind::kLayout);
      });
    } else {
      return Kind::Open(file, options, std::forward<Extra>(extra)...);
    }
  }
  template <typename Kind>
  [[nodiscard]] static const FilterMemory& Memory(const Kind& filter) noexcept {
    return filter.memory_;
  }
};

// Loads a file (or bytes) of Kind's and opens it with Kind's Open (`extra` passed on).
template <typename Kind, typename... Extra>
absl::StatusOr<Kind> LoadAs(const Input& input, const LoadOptions& options, Extra&&... extra) {
  absl::StatusOr<FilterFile> file = LoadFilter(input, kKindOf<Kind>, options);
  if (!file.ok()) return file.status();
  return FilterAccess::Open<Kind>(*file, options, std::forward<Extra>(extra)...);
}

// Maps a file of Kind's and opens it with Kind's Open (`extra` passed on).
template <typename Kind, typename... Extra>
absl::StatusOr<Kind> MapAs(const std::string& path, MapMode mode, const LoadOptions& options,
                           Extra&&... extra) {
  absl::StatusOr<FilterFile> file = MapFilterFile(path, kKindOf<Kind>, mode, options);
  if (!file.ok()) return file.status();
  return FilterAccess::Open<Kind>(*file, options, std::forward<Extra>(extra)...);
}

// The Open of a one-stage kind constructed from (memory, plan, hasher, concurrent), whose plan of
// a validated header is `plan_of(header)` (a StatusOr).
template <typename Kind, typename PlanOf>
absl::StatusOr<Kind> OpenSingleStage(FilterFile& file, const LoadOptions& options, PlanOf plan_of) {
  auto plan = plan_of(file.header);
  if (!plan.ok()) return plan.status();
  return FilterAccess::Construct<Kind>(Own(std::move(file.stages[0])), *plan, HasherOf(file.header),
                                       options.concurrent);
}

}  // namespace bloomery::detail

namespace bloomery {

template <typename Kind>
absl::Status Persistent<Kind>::Save(const std::string& path) const {
  return detail::FilterAccess::Write(static_cast<const Kind&>(*this), &path).status();
}
template <typename Kind>
absl::StatusOr<std::string> Persistent<Kind>::SaveToBytes() const {
  return detail::FilterAccess::Write(static_cast<const Kind&>(*this), nullptr);
}
template <typename Kind>
absl::StatusOr<Kind> Persistent<Kind>::Load(const std::string& path, const LoadOptions& options) {
  return detail::LoadAs<Kind>(detail::Input{path, std::nullopt}, options);
}
template <typename Kind>
absl::StatusOr<Kind> Persistent<Kind>::LoadFromBytes(std::string_view bytes,
                                                     const LoadOptions& options) {
  return detail::LoadAs<Kind>(detail::Input{std::string(detail::kBytesName), bytes}, options);
}
template <typename Kind>
absl::StatusOr<Kind> Mappable<Kind>::Map(const std::string& path, MapMode mode,
                                         const LoadOptions& options) {
  return detail::MapAs<Kind>(path, mode, options);
}
template <typename Kind>
absl::Status Mappable<Kind>::Flush() {
  return detail::FlushStorage(detail::FilterAccess::Memory(static_cast<const Kind&>(*this)));
}

}  // namespace bloomery

#endif  // BLOOMERY_LIB_FORMAT_INTERNAL_PERSISTENCE_H_
