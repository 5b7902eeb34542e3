// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/any_filter.h"

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bloomery/detail/absl_compat.h"
#include "format/internal/persistence.h"

namespace bloomery {
namespace {

absl::string_view Name(FilterKind kind) { return detail::AbslView(FilterKindName(kind)); }

// make(std::type_identity<F>{}) for the class F of kind `kind` (KindClass), wrapped; `unknown`
// for a kind outside the list.
template <size_t I = 0, typename MakeKind>
absl::StatusOr<AnyFilter> MakeAs(FilterKind kind, MakeKind&& make, absl::Status unknown) {
  if constexpr (I == kFilterKindCount) {
    return unknown;
  } else {
    using F = std::tuple_element_t<I, FilterKinds>;
    if (kind != kKindOf<F>) return MakeAs<I + 1>(kind, make, std::move(unknown));
    absl::StatusOr<F> filter = make(std::type_identity<F>{});
    if (!filter.ok()) return filter.status();
    return AnyFilter(*std::move(filter));
  }
}

// Sets field `field` of a kind's options `o` to *value with set(o, *value) when the kind's options
// have it (`set` is callable); InvalidArgument when they have not and the value is set.
template <typename Options, typename Value, typename Set>
absl::Status Take(Options& o, FilterKind kind, std::string_view field,
                  const std::optional<Value>& value, Set set) {
  if (!value.has_value()) return absl::OkStatus();
  if constexpr (std::is_invocable_v<Set, Options&, const Value&>) {
    set(o, *value);
    return absl::OkStatus();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", Name(kind), " filter takes no ", detail::AbslView(field)));
  }
}

template <typename T>
std::optional<T> IfSet(T value) {
  return value != T{} ? std::optional<T>(value) : std::nullopt;
}

// The options of kind F from `any`: AnyOptions' fields by name (see AnyOptions).
template <typename F>
absl::StatusOr<typename F::Options> OptionsOf(const AnyOptions& any) {
  using Options = typename F::Options;
  const FilterKind kind = kKindOf<F>;
  Options o{.capacity = any.capacity, .fpr = any.fpr};
  o.hashing = any.hashing;
  o.memory = any.memory;
  // Field `name` of `o` from `value`: its setter is callable only where Options has the field
  // (the trailing return type says so), which is how Take tells a field the kind lacks.
#define BLOOMERY_TAKE(name, value) \
  Take(o, kind, #name, value,      \
       [](auto& x, const auto& v) -> decltype(void(x.name = v)) { x.name = v; })
  const absl::Status taken[] = {
      BLOOMERY_TAKE(bits, IfSet(any.bits)),
      BLOOMERY_TAKE(hashes, IfSet(any.hashes)),
      BLOOMERY_TAKE(counter_bits, any.counter_bits),
      BLOOMERY_TAKE(growth, any.growth),
      BLOOMERY_TAKE(tightening, any.tightening),
      BLOOMERY_TAKE(max_stages, any.max_stages),
      BLOOMERY_TAKE(scaling, any.scaling),
      // Only the kinds that tell a layout take one: ClassicFilter's options share BlockedFilter's
      // struct, but a classic filter is always partitioned.
      Take(
          o, kind, "layout", any.layout,
          [](auto& x, Layout v) -> decltype(void(x.layout = v)) requires requires(const F& f) {
            f.layout();
          } { x.layout = v; }),
      Take(
          o, kind, "layout_choice", any.layout_choice,
          [](auto& x, LayoutChoice v) -> decltype(void(x.layout_choice = v)) requires requires(
                                          const F& f) { f.layout(); } { x.layout_choice = v; }),
      BLOOMERY_TAKE(window, any.window),
      BLOOMERY_TAKE(generations, any.generations),
      BLOOMERY_TAKE(refresh, any.refresh),
      BLOOMERY_TAKE(clock, any.clock ? std::optional<WindowClock>(any.clock) : std::nullopt),
  };
#undef BLOOMERY_TAKE
  for (const absl::Status& status : taken) {
    if (!status.ok()) return status;
  }
  return o;
}

// The filter in `input`, read and validated once as any kind's load reads it; the header's kind
// then opens it.
absl::StatusOr<AnyFilter> LoadAny(const detail::Input& input, const LoadOptions& options,
                                  WindowClock clock) {
  absl::StatusOr<detail::FilterFile> file = detail::LoadFilter(input, std::nullopt, options);
  if (!file.ok()) return file.status();
  const auto open = [&]<typename F>(std::type_identity<F>) -> absl::StatusOr<F> {
    if constexpr (std::same_as<F, WindowedFilter>) {
      return detail::FilterAccess::Open<F>(*file, options, std::move(clock));
    } else {
      return detail::FilterAccess::Open<F>(*file, options);
    }
  };
  // The validator refuses a kind this build does not know (DataLoss), so every kind here is known.
  return MakeAs(file->header.kind, open,
                absl::InternalError("a validated file of an unknown kind"));
}

}  // namespace

absl::StatusOr<AnyFilter> AnyFilter::Create(FilterKind kind, const AnyOptions& options) {
  return MakeAs(
      kind,
      [&]<typename F>(std::type_identity<F>) -> absl::StatusOr<F> {
        absl::StatusOr<typename F::Options> kind_options = OptionsOf<F>(options);
        if (!kind_options.ok()) return kind_options.status();
        return F::Create(*kind_options);
      },
      absl::InvalidArgumentError(
          absl::StrCat("no filter kind ", static_cast<uint32_t>(kind), " in this build")));
}

absl::StatusOr<AnyFilter> AnyFilter::Load(const std::string& path, const LoadOptions& options,
                                          WindowClock clock) {
  return LoadAny(detail::Input{path, std::nullopt}, options, std::move(clock));
}

absl::StatusOr<AnyFilter> AnyFilter::LoadFromBytes(std::string_view bytes,
                                                   const LoadOptions& options, WindowClock clock) {
  return LoadAny(detail::Input{std::string(detail::kBytesName), bytes}, options, std::move(clock));
}

absl::Status AnyFilter::Unsupported(std::string_view what) const {
  return absl::FailedPreconditionError(
      absl::StrCat("a ", Name(kind()), " filter cannot ", detail::AbslView(what)));
}

absl::Status AnyFilter::UnionWith(const AnyFilter& other) {
  if (kind() != other.kind()) {
    return absl::FailedPreconditionError(absl::StrCat("cannot merge a ", Name(other.kind()),
                                                      " filter into a ", Name(kind()), " filter"));
  }
  return Visit(
      [&](auto& f) { return f.UnionWith(std::get<std::decay_t<decltype(f)>>(other.filter_)); });
}

Layout AnyFilter::layout() const noexcept {
  return Visit([](const auto& f) -> Layout {
    if constexpr (requires { f.layout(); }) {
      return f.layout();
    } else if constexpr (requires { f.plan().layout; }) {
      return f.plan().layout;
    } else {
      return Layout::kLine512;
    }
  });
}

Probe AnyFilter::probe() const noexcept {
  if (FindBlockShape(layout()) == nullptr) return Probe::kLatest;
  return Visit([](const auto& f) -> Probe {
    if constexpr (requires { f.probe(); }) {
      return f.probe();
    } else {
      return Probe::kLatest;
    }
  });
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
