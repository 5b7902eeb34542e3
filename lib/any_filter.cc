// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/any_filter.h"

#include <cstddef>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bloomery/file.h"

namespace bloomery {
namespace {

// Debian's Abseil has its own absl::string_view, which StrCat takes.
absl::string_view Name(FilterKind kind) {
  const std::string_view name = FilterKindName(kind);
  return {name.data(), name.size()};
}

// load(std::type_identity<F>{}) for the alternative F of kind `kind` (Variant's alternative
// kind - 1: filter_test's AnyFilter case holds the order to the files' kinds), wrapped.
template <size_t I = 0, typename LoadKind>
absl::StatusOr<AnyFilter> LoadAs(FilterKind kind, LoadKind&& load) {
  if constexpr (I == std::variant_size_v<AnyFilter::Variant>) {
    return absl::UnimplementedError(
        absl::StrCat("filter kind ", static_cast<uint32_t>(kind), " is not known to this build"));
  } else {
    using F = std::variant_alternative_t<I, AnyFilter::Variant>;
    if (static_cast<size_t>(kind) != I + 1) return LoadAs<I + 1>(kind, load);
    absl::StatusOr<F> filter = load(std::type_identity<F>{});
    if (!filter.ok()) return filter.status();
    return AnyFilter(*std::move(filter));
  }
}

// The filter in the file at `path`, or in *bytes when non-null: the header alone picks the kind,
// whose loader then validates (and verifies) the whole of it.
absl::StatusOr<AnyFilter> LoadAny(const std::string& path, const std::string_view* bytes,
                                  const LoadOptions& options, WindowClock clock) {
  absl::StatusOr<FileInfo> info = bytes != nullptr
                                      ? InspectBytes(*bytes, /*verify_checksums=*/false)
                                      : InspectFile(path, /*verify_checksums=*/false);
  if (!info.ok()) return info.status();
  return LoadAs(info->kind, [&]<typename F>(std::type_identity<F>) {
    auto load = [&](auto... window_clock) {
      return bytes != nullptr ? F::LoadFromBytes(*bytes, options, std::move(window_clock)...)
                              : F::Load(path, options, std::move(window_clock)...);
    };
    if constexpr (std::same_as<F, WindowedFilter>) {
      return load(std::move(clock));
    } else {
      return load();
    }
  });
}

}  // namespace

absl::StatusOr<AnyFilter> AnyFilter::Load(const std::string& path, const LoadOptions& options,
                                          WindowClock clock) {
  return LoadAny(path, nullptr, options, std::move(clock));
}

absl::StatusOr<AnyFilter> AnyFilter::LoadFromBytes(std::string_view bytes,
                                                   const LoadOptions& options, WindowClock clock) {
  return LoadAny("<bytes>", &bytes, options, std::move(clock));
}

absl::Status AnyFilter::Unsupported(std::string_view what) const {
  return absl::FailedPreconditionError(absl::StrCat("a ", Name(kind()), " filter cannot ",
                                                    absl::string_view(what.data(), what.size())));
}

absl::Status AnyFilter::UnionWith(const AnyFilter& other) {
  if (kind() != other.kind()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot merge a ", Name(other.kind()),
                                                      " filter into a ", Name(kind()), " filter"));
  }
  return Visit(
      [&](auto& f) { return f.UnionWith(std::get<std::decay_t<decltype(f)>>(other.filter_)); });
}

uint32_t AnyFilter::stage_count() const noexcept {
  return Visit([](const auto& f) -> uint32_t {
    if constexpr (requires { f.stage_count(); }) {
      return f.stage_count();
    } else {
      return 1;
    }
  });
}

}  // namespace bloomery
