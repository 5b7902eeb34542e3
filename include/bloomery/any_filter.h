// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// any_filter.h: one handle over a filter of any kind, for code that learns the kind at run time:
// from a file or bytes whose header names it (Load, LoadFromBytes), or from its caller (wrap a
// filter of a known kind). What Python's bloomery.load gives, for C++: a service that loads what
// its operators built with `bloomery build --kind ...`, or a tool over filter files.
//
// Every call dispatches once on the kind, then runs that kind's own code; a batch call pays the
// dispatch once per batch. Code that knows its kind at compile time should use the kind itself
// (or a template over the Filter concept, filter.h).
//
//   absl::StatusOr<bloomery::AnyFilter> f = bloomery::AnyFilter::Load("urls.bloom");
//   if (!f.ok()) return f.status();
//   size_t maybe = f->MayContainMany(keys, answers);       // any kind
//   if (auto* counting = f->get_if<bloomery::CountingFilter>()) counting->Erase("a");
#ifndef BLOOMERY_ANY_FILTER_H_
#define BLOOMERY_ANY_FILTER_H_

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/filter_kind.h"  // the kinds, and their headers
#include "bloomery/options.h"

namespace bloomery {

// What AnyFilter::Create takes: every kind's options in one struct, for a caller that learns the
// kind at run time (the CLI's flags, Python's keywords). A kind takes the fields its own Options
// has, by name, and leaves the rest: a field that the kind's Options does not have, set (nonzero,
// engaged, non-empty), is InvalidArgument ("a scalable filter takes no bits"), so nothing asked
// for is silently dropped. The kind's Create then checks the values as it always does (the
// messages of CheckSizing, plan.h, for the sizing fields).
//
//   absl::StatusOr<bloomery::AnyFilter> f = bloomery::AnyFilter::Create(
//       bloomery::FilterKind::kScalable, {.capacity = 1'000'000, .fpr = 0.001, .growth = 4});
struct AnyOptions {
  uint64_t capacity = 0;
  double fpr = 0.01;
  uint64_t bits = 0;    // 0: planned (kinds sized by geometry: blocked, classic, counting)
  uint32_t hashes = 0;  // 0: the planner's choice (kinds whose k may be given)
  HashOptions hashing;
  MemoryOptions memory;
  // The fields of some kinds only (see each kind's Options); unset: the kind's default.
  std::optional<uint32_t> counter_bits;       // CountingOptions
  std::optional<uint32_t> growth;             // ScalableOptions
  std::optional<double> tightening;           // ScalableOptions
  std::optional<uint32_t> max_stages;         // ScalableOptions
  std::optional<bool> scaling;                // ScalableOptions
  std::optional<Layout> layout;               // Blocked, Scalable and WindowedOptions' (layout.h)
  std::optional<LayoutChoice> layout_choice;  // BlockedFilter's and WindowedOptions' (kAuto's)
  std::optional<std::chrono::nanoseconds> window;  // WindowedOptions (zero: key-count mode)
  std::optional<uint32_t> generations;             // WindowedOptions
  std::optional<Refresh> refresh;                  // WindowedOptions
  WindowClock clock;                               // WindowedOptions (empty: the system clock)
};

namespace detail {
template <typename Tuple>
struct VariantOf;
template <typename... F>
struct VariantOf<std::tuple<F...>> {
  using type = std::variant<F...>;
};
}  // namespace detail

class BLOOMERY_EXPORT AnyFilter {
 public:
  // Every kind of the list (filter_kind.h), in FilterKind's order from 1.
  using Variant = typename detail::VariantOf<FilterKinds>::type;

  // Wraps a filter of a known kind (moved in). The first two constraints keep AnyFilter's own
  // copies and moves from asking whether AnyFilter is a Filter, a question that recurses.
  // clang-format off
  template <typename F>
    requires (!std::is_reference_v<F>) && (!std::same_as<F, AnyFilter>) && Filter<F> &&
             std::is_constructible_v<Variant, F&&>
  // F is never a reference (the first constraint), so F&& binds rvalues only: std::move is right,
  // and the constructor cannot hide the move constructor (the second).
  // NOLINTNEXTLINE(bugprone-forwarding-reference-overload,bugprone-move-forwarding-reference)
  explicit AnyFilter(F&& filter) noexcept : filter_(std::move(filter)) {}
  // clang-format on

  // Creates a filter of kind `kind` from `options` (see AnyOptions): the kind's Create, with its
  // errors, after InvalidArgument for a field the kind does not take or a kind outside the list.
  [[nodiscard]] static absl::StatusOr<AnyFilter> Create(FilterKind kind, const AnyOptions& options);

  // Loads a file of any kind (its header names it) with `options`, as that kind's Load would, and
  // as it does opens the file once and reads and validates its header once; `clock` is a windowed
  // filter's (default: the system clock). Errors: the kind's Load's (NotFound, InvalidArgument for
  // a file that is not a bloomery file, Unimplemented for a newer version, DataLoss for corruption
  // or an unknown kind, ResourceExhausted over options.max_bytes).
  [[nodiscard]] static absl::StatusOr<AnyFilter> Load(const std::string& path,
                                                      const LoadOptions& options = {},
                                                      WindowClock clock = {});
  // The same from a file's bytes (what SaveToBytes returns).
  [[nodiscard]] static absl::StatusOr<AnyFilter> LoadFromBytes(std::string_view bytes,
                                                               const LoadOptions& options = {},
                                                               WindowClock clock = {});

  [[nodiscard]] FilterKind kind() const noexcept {
    return static_cast<FilterKind>(filter_.index() + 1);
  }
  // The filter as kind F, or null when it is of another kind.
  template <Filter F>
  [[nodiscard]] F* get_if() noexcept {
    return std::get_if<F>(&filter_);
  }
  template <Filter F>
  [[nodiscard]] const F* get_if() const noexcept {
    return std::get_if<F>(&filter_);
  }
  // visitor(filter), with the filter as its own kind.
  template <typename Visitor>
  decltype(auto) Visit(Visitor&& visitor) {
    return std::visit(std::forward<Visitor>(visitor), filter_);
  }
  template <typename Visitor>
  decltype(auto) Visit(Visitor&& visitor) const {
    return std::visit(std::forward<Visitor>(visitor), filter_);
  }

  // Inserts `keys` with the kind's InsertMany; was_new[i] (if given) says whether key i is new.
  // Returns the number of new keys. A kind that can refuse keys (ScalableFilter at a limit)
  // refuses with its FullStatus (ResourceExhausted) after trying every key of the batch: the keys
  // it could add are in, and was_new is filled for all of them.
  template <KeyRange Keys>
  [[nodiscard]] absl::StatusOr<size_t> InsertMany(const Keys& keys, std::span<bool> was_new = {});
  template <KeyRange Keys>
  size_t MayContainMany(const Keys& keys, std::span<bool> results = {}) const noexcept {
    return Visit([&](const auto& f) { return f.MayContainMany(keys, results); });
  }
  // CountingFilter's EraseMany; FailedPrecondition for the kinds that cannot remove keys.
  template <KeyRange Keys>
  [[nodiscard]] absl::StatusOr<size_t> EraseMany(const Keys& keys, std::span<bool> erased = {});

  // Adds `other`'s keys. FailedPrecondition for another kind, or the kind's UnionWith errors.
  [[nodiscard]] absl::Status UnionWith(const AnyFilter& other);
  [[nodiscard]] absl::Status Save(const std::string& path) const {
    return Visit([&](const auto& f) { return f.Save(path); });
  }
  [[nodiscard]] absl::StatusOr<std::string> SaveToBytes() const {
    return Visit([](const auto& f) { return f.SaveToBytes(); });
  }

  // Keys planned for (scalable: by the stages allocated so far; windowed: by the window). For a
  // filter sized by bits and hashes alone, the count at which those hashes are the best choice
  // (cells * ln 2 / k), past which its FPR climbs fast.
  [[nodiscard]] uint64_t capacity() const noexcept {
    return Visit([](const auto& f) { return f.capacity(); });
  }
  // The FPR planned at capacity() keys (scalable: the whole chain's bound).
  [[nodiscard]] double planned_fpr() const noexcept {
    return Visit([](const auto& f) { return f.planned_fpr(); });
  }
  // A scalable filter's stages; 1 for the other kinds.
  [[nodiscard]] uint32_t stage_count() const noexcept;
  // The block shape (layout.h): a blocked, scalable or windowed filter's own, kPartitioned for a
  // classic filter, the line for the kind that has no other (counting).
  [[nodiscard]] Layout layout() const noexcept;
  // The blocked layout's probe (layout.h); kLatest for a kind without one (classic, counting, a
  // partitioned chain).
  [[nodiscard]] Probe probe() const noexcept;
  // As the kind's: infinite for a saturated filter.
  [[nodiscard]] double EstimatedCount() const noexcept {
    return Visit([](const auto& f) { return f.EstimatedCount(); });
  }
  [[nodiscard]] double EstimatedFpr() const noexcept {
    return Visit([](const auto& f) { return f.EstimatedFpr(); });
  }
  // The kind's Health (health.h).
  [[nodiscard]] FilterHealth Health() const {
    return Visit([](const auto& f) { return f.Health(); });
  }
  [[nodiscard]] uint64_t memory_bytes() const noexcept {
    return Visit([](const auto& f) { return f.memory_bytes(); });
  }

 private:
  // FailedPrecondition: "a <kind> filter cannot <what>".
  [[nodiscard]] absl::Status Unsupported(std::string_view what) const;

  Variant filter_;
};

template <KeyRange Keys>
absl::StatusOr<size_t> AnyFilter::InsertMany(const Keys& keys, std::span<bool> was_new) {
  return Visit([&](auto& f) -> absl::StatusOr<size_t> {
    using F = std::remove_cvref_t<decltype(f)>;
    if constexpr (std::same_as<InsertAnswer<F>, bool>) {
      return f.InsertMany(keys, was_new);
    } else {
      // The kind answers InsertResults: they come back through a buffer on the stack, a chunk of
      // keys at a time (the kind's own answers in order, so the same as one call), with no
      // allocation per batch; without was_new, in one call.
      InsertCounts counts;
      const auto all = KeySpan(keys);
      const size_t answered = std::min(all.size(), was_new.size());
      InsertAnswer<F> answers[512];
      for (size_t begin = 0; begin < answered; begin += std::size(answers)) {
        const size_t n = std::min(std::size(answers), answered - begin);
        const InsertCounts chunk = f.InsertMany(all.subspan(begin, n), std::span(answers, n));
        counts.added += chunk.added;
        counts.refused += chunk.refused;
        for (size_t i = 0; i < n; ++i) was_new[begin + i] = answers[i] == InsertResult::kAdded;
      }
      const InsertCounts rest = f.InsertMany(all.subspan(answered));
      counts.added += rest.added;
      counts.refused += rest.refused;
      if (counts.refused != 0) return f.FullStatus();
      return counts.added;
    }
  });
}

template <KeyRange Keys>
absl::StatusOr<size_t> AnyFilter::EraseMany(const Keys& keys, std::span<bool> erased) {
  if (auto* counting = get_if<CountingFilter>()) return counting->EraseMany(keys, erased);
  return Unsupported("remove keys; only counting filters can");
}

}  // namespace bloomery

#endif  // BLOOMERY_ANY_FILTER_H_
