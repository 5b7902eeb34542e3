// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/scalable_filter.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <concepts>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "bits/internal/bit_count.h"
#include "bits/internal/fill_estimate.h"
#include "bits/internal/filter_ops.h"
#include "bloomery/classic_filter.h"
#include "bloomery/plan.h"
#include "filters/internal/batch_pipeline.h"
#include "filters/internal/health_scan.h"
#include "format/internal/persistence.h"
#include "layouts/internal/block_layout.h"
#include "memory/internal/storage.h"

namespace bloomery {
namespace {

using detail::LoadRelaxed;
using detail::PipelineEach;

using detail::StageFilter;

// fn(the stage's filter as its own kind): one predictable branch, which the hot path can afford.
template <typename Filter, typename Fn>
requires std::same_as<std::remove_const_t<Filter>, StageFilter>
decltype(auto) VisitStage(Filter& filter, Fn&& fn) {
  if (auto* classic = std::get_if<ClassicFilter>(&filter)) return fn(*classic);
  auto* blocked = std::get_if<BlockedFilter>(&filter);
  if (blocked == nullptr) __builtin_unreachable();  // one of the two, never valueless
  return fn(*blocked);
}

// A stage of the chain's `layout`: the absl::StatusOr<Kind> that make(std::type_identity<Kind>{})
// returns, for Kind ClassicFilter (partitioned stages) or BlockedFilter (the blocked shapes).
template <typename Make>
absl::StatusOr<StageFilter> MakeStage(Layout layout, Make&& make) {
  const auto wrap = []<typename Kind>(absl::StatusOr<Kind> made) -> absl::StatusOr<StageFilter> {
    if (!made.ok()) return made.status();
    return StageFilter(std::in_place_type<Kind>, *std::move(made));
  };
  if (layout == Layout::kPartitioned) return wrap(make(std::type_identity<ClassicFilter>{}));
  return wrap(make(std::type_identity<BlockedFilter>{}));
}

// What both kinds share: geometry, memory, bytes.
const BitArray& ArrayOf(const StageFilter& filter) noexcept {
  return VisitStage(filter, [](const BitArray& array) -> const BitArray& { return array; });
}

// into |= from, two stages of one level (so of one kind and geometry).
absl::Status UniteFilters(StageFilter& into, const StageFilter& from) {
  return VisitStage(into, [&](auto& filter) {
    return filter.UnionWith(std::get<std::remove_cvref_t<decltype(filter)>>(from));
  });
}

struct Stage {
  Stage(StageFilter f, uint64_t cap, uint32_t lvl)
      : filter(std::move(f)), capacity(cap), level(lvl) {}
  [[nodiscard]] const BitArray& array() const noexcept { return ArrayOf(filter); }
  void Prefetch(const KeyHash& hash) const noexcept {
    VisitStage(filter, [&](const auto& f) { f.Prefetch(hash); });
  }
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept {
    return VisitStage(filter, [&](const auto& f) { return f.MayContain(hash); });
  }
  [[nodiscard]] bool Insert(const KeyHash& hash) noexcept {
    return VisitStage(filter, [&](auto& f) { return f.Insert(hash); });
  }

  StageFilter filter;
  const uint64_t capacity;
  // Which stage of the options' series this is (capacity C s^level, FPR share P (1-r) r^level):
  // its index, except after a union that kept two stages of one level.
  const uint32_t level;
  // Keys counted into this stage. In concurrent mode a slot is reserved (incremented) before the
  // key's bits are set, so the count never exceeds `capacity`.
  std::atomic<uint64_t> count{0};
  // Where this object is kept: the chain's allocator (detail::MakeKept).
  MemoryAllocator kept_allocator;
};

// ", layout word64" in a message, where the layout is not the default line.
std::string LayoutSuffix(Layout layout) {
  return layout == Layout::kLine512 ? ""
                                    : absl::StrCat(", layout ", std::string(LayoutName(layout)));
}

// Takes one slot of `stage`'s capacity; false if it is full.
bool Reserve(Stage& stage, bool concurrent) noexcept {
  uint64_t count = stage.count.load(std::memory_order_relaxed);
  if (!concurrent) {
    if (count >= stage.capacity) return false;
    stage.count.store(count + 1, std::memory_order_relaxed);
    return true;
  }
  do {
    if (count >= stage.capacity) return false;
  } while (!stage.count.compare_exchange_weak(count, count + 1, std::memory_order_relaxed));
  return true;
}

// How far the count-from-fill estimate of a union may read low: a union of two stages is taken to
// hold its estimate plus this many standard errors of the estimator, so that a stage ORed from
// two and then filled up to its capacity stays within it but for a 4-sigma error. Over 200
// filters of 1,000 keys the estimate's spread matched CountStandardError (7.4 vs 7.6 keys;
// estimate_test); 4 errors are ~3% of a stage's capacity at 10 bits/key.
constexpr double kMergeStandardErrors = 4.0;

// What ORing stage `b` into stage `a` (of the same level, so the same geometry) would make.
struct StageUnion {
  bool fits;        // the union surely holds at most a's capacity of keys
  uint64_t count;   // the keys to count into the ORed stage, when it fits
  double estimate;  // the union's keys as the fill of the ORed bits says (+inf when saturated)
};

StageUnion UniteStages(const Stage& a, const Stage& b) noexcept {
  const auto* wa = reinterpret_cast<const uint64_t*>(a.array().bytes().data());
  const auto* wb = reinterpret_cast<const uint64_t*>(b.array().bytes().data());
  uint64_t set = 0;
  bool a_holds_b = true;
  bool b_holds_a = true;
  for (uint64_t w = 0; w < a.array().bytes().size() / 8; ++w) {
    const uint64_t x = LoadRelaxed(wa + w);
    const uint64_t y = LoadRelaxed(wb + w);
    set += detail::BitCount(x | y);
    a_holds_b &= (x | y) == x;
    b_holds_a &= (x | y) == y;
  }
  const uint64_t my_keys = a.count.load(std::memory_order_relaxed);
  const uint64_t their_keys = b.count.load(std::memory_order_relaxed);
  // The union holds at least the larger stage's keys and at most both stages' keys.
  const uint64_t lower = std::max(my_keys, their_keys);
  const uint64_t upper = my_keys + their_keys;  // each <= capacity <= 2^48
  const double estimate = detail::CountFromFill(set, a.array().bits(), a.array().hashes());
  // One stage's bits already hold the other's (a copy, a part of the same keys, an empty stage):
  // the union is that stage, with the bits its own count of keys set.
  if (a_holds_b || b_holds_a) return {true, lower, estimate};
  const double high = estimate + kMergeStandardErrors * detail::CountStandardError(
                                                            static_cast<double>(a.capacity),
                                                            a.array().bits(), a.array().hashes());
  const uint64_t most = std::min(upper, a.capacity);
  if (upper > a.capacity && !(high <= static_cast<double>(a.capacity))) {
    return {false, 0, estimate};
  }
  const uint64_t counted = high < static_cast<double>(most)
                               ? static_cast<uint64_t>(std::llround(std::max(high, 0.0)))
                               : most;
  return {true, std::clamp(counted, lower, most), estimate};
}

// A batch key's "where" (filters/internal/batch_pipeline.h) is the stage count its lines were
// prefetched for. Templates only because the Chain they read is private to ScalableFilter.
template <typename Chain>
struct StagesOf {
  using Where = uint32_t;
  const Chain* chain;
  void operator()(const KeyHash& /*hash*/, uint32_t& stages) const noexcept {
    stages = chain->stage_count.load(std::memory_order_acquire);
  }
};
template <typename Chain>
struct PrefetchStages {
  const Chain* chain;
  void operator()(const KeyHash& hash, uint32_t stages) const noexcept {
    for (uint32_t s = 0; s < stages; ++s) chain->stages[s]->Prefetch(hash);
  }
};

}  // namespace

struct ScalableFilter::Chain {
  // Slots below `stage_count` are written once, before the count that covers them is published
  // (release), and then only read; readers acquire the count. Slots are freed only by Clear and
  // the destructor, which overlap no other call.
  std::array<detail::KeptPtr<Stage>, kMaxScalableStages> stages;
  std::atomic<uint32_t> stage_count{0};
  std::atomic<bool> full{false};
  std::atomic<uint64_t> memory_bytes{0};
  std::atomic<uint64_t> capacity{0};
  absl::Mutex mutex;
  absl::Status full_status ABSL_GUARDED_BY(mutex);
  // Where this table and its stages are kept: the options' allocator (detail::MakeKept), so an
  // embedder counting its allocator counts them with the bits.
  MemoryAllocator kept_allocator;
  // DependenceCorrection's last reading, and the chain it was read on (CorrectionKey); racing
  // readers may both compute it, to the same value.
  mutable std::atomic<double> correction{0.0};
  mutable std::atomic<uint64_t> correction_key{0};
};

// The chain lives in the options' allocator when one is set (MemoryOptions::allocator).
void ScalableFilter::ChainDelete::operator()(Chain* chain) const noexcept {
  detail::KeptDelete<Chain>()(chain);
}

// InvalidArgument for options Create refuses.
absl::Status ScalableFilter::CheckOptions(const ScalableOptions& options) {
  if (absl::Status s = CheckSizing(Sizing{.capacity = options.capacity, .fpr = options.fpr});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = detail::CheckIntegerHash(options.hashing.integer_hash); !s.ok()) return s;
  if (options.growth < 1 || options.growth > kMaxScalableGrowth) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "growth must be in [1, %d] (each stage planned for growth times the keys of the one "
        "before), got %d",
        kMaxScalableGrowth, options.growth));
  }
  if (!(options.tightening > 0.0 && options.tightening < 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tightening ratio r must be in (0, 1) (stage i gets fpr P*(1-r)*r^i), got %g",
        options.tightening));
  }
  if (options.max_stages < 1 || options.max_stages > kMaxScalableStages) {
    return absl::InvalidArgumentError(absl::StrFormat("max_stages must be in [1, %d], got %d",
                                                      kMaxScalableStages, options.max_stages));
  }
  if (FindBlockShape(options.layout) == nullptr && options.layout != Layout::kPartitioned) {
    return absl::InvalidArgumentError(
        absl::StrFormat("a scalable filter's stages are planned: layout must be %s, got %s",
                        LayoutList({Layout::kPartitioned}), LayoutName(options.layout)));
  }
  return absl::OkStatus();
}

double ScalableFilter::StageFpr(const ScalableOptions& options, uint32_t stage) noexcept {
  if (!options.scaling) return options.fpr;
  return options.fpr * (1 - options.tightening) * std::pow(options.tightening, stage);
}

absl::StatusOr<ScalableFilter> ScalableFilter::Create(const ScalableOptions& options) {
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  ScalableFilter filter(options);
  absl::Status status;
  {
    absl::MutexLock lock(&filter.chain_->mutex);
    status = filter.AddStage(0, 0);
  }
  if (!status.ok()) return status;
  return filter;
}

ScalableFilter::ScalableFilter(const ScalableOptions& options)
    : options_(options), chain_(detail::MakeKept<Chain>(options.memory.allocator).release()) {
  // One integer hash for the whole chain, resolved for its layout (a loaded file's is explicit).
  options_.hashing.integer_hash = options_.hasher().integers();
}

ScalableFilter::ScalableFilter(ScalableFilter&&) noexcept = default;
ScalableFilter& ScalableFilter::operator=(ScalableFilter&&) noexcept = default;
ScalableFilter::~ScalableFilter() = default;

absl::StatusOr<Plan> ScalableFilter::PlanLevel(const ScalableOptions& options, uint32_t level) {
  return PlanAt(options, level, level);
}

// PlanLevel's plan for a stage at `level` placed at `index` (which its messages name).
absl::StatusOr<Plan> ScalableFilter::PlanAt(const ScalableOptions& options, uint32_t index,
                                            uint32_t level) {
  uint64_t capacity = options.capacity;
  for (uint32_t i = 0; i < level; ++i) {
    if (capacity > std::numeric_limits<uint64_t>::max() / options.growth) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("filter is full: stage %d's capacity would overflow 64 bits", index));
    }
    capacity *= options.growth;
  }
  const double fpr = StageFpr(options, level);
  absl::StatusOr<Plan> plan = PlanFor(capacity, fpr, options.layout, 0, options.probe);
  if (!plan.ok() && index == 0) {
    // At creation nothing is full: options whose first stage has no plan are bad options. The
    // planner names the keys and fpr when they need more than 2^48 bits; when it refuses the fpr
    // itself, that is the stage's share P(1-r), which underflowed to 0: say so.
    const bool names_them = absl::IsResourceExhausted(plan.status());
    return absl::InvalidArgumentError(absl::StrCat(
        "the filter's first stage cannot be planned",
        names_them
            ? ""
            : absl::StrFormat(" (%d keys at fpr %g, its share of %g)", capacity, fpr, options.fpr),
        ": ", plan.status().message()));
  }
  if (!plan.ok()) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("filter is full: stage %d (%d keys at fpr %g) cannot be planned: %s", index,
                        capacity, fpr, plan.status().message()));
  }
  return plan;
}

// The plan of a stage at `level` placed at `index`, or why it cannot be added: the chain's
// limits and `max_memory_bytes` (0: none) over memory_bytes() and `pending_bytes` (stages
// being built that the cap must also count).
absl::StatusOr<Plan> ScalableFilter::PlanStage(uint32_t index, uint32_t level,
                                               uint64_t pending_bytes,
                                               uint64_t max_memory_bytes) const {
  const Chain& chain = *chain_;
  if (!options_.scaling && index >= 1) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "non-scaling filter is full: it holds its capacity of %d keys", options_.capacity));
  }
  if (index >= options_.max_stages) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("filter is full: it reached max_stages (%d stages, %d keys)",
                        options_.max_stages, chain.capacity.load(std::memory_order_relaxed)));
  }
  absl::StatusOr<Plan> plan = PlanAt(options_, index, level);
  if (!plan.ok()) return plan;
  const uint64_t used = chain.memory_bytes.load(std::memory_order_relaxed) + pending_bytes;
  // What the stage will allocate: whole 64-byte lines, more than plan->bytes() where a block256
  // or word64 stage's bits end inside its last line.
  const uint64_t bytes = WholeLineBytes(plan->bits);
  if (max_memory_bytes != 0 && (used > max_memory_bytes || bytes > max_memory_bytes - used)) {
    if (index == 0) {  // at creation: nothing is full, the first stage does not fit the cap
      return absl::ResourceExhaustedError(absl::StrFormat(
          "the filter's first stage (%d keys at fpr %g) needs %d bytes, over the memory cap of %d "
          "bytes",
          plan->capacity, StageFpr(options_, level), bytes, max_memory_bytes));
    }
    return absl::ResourceExhaustedError(absl::StrFormat(
        "filter is full: stage %d needs %d bytes, and with the %d bytes of the stages before it "
        "that exceeds the memory cap of %d bytes",
        index, bytes, used, max_memory_bytes));
  }
  return plan;
}

// The level a new stage takes after the first `count` stages: one past the highest.
uint32_t ScalableFilter::NextLevel(uint32_t count) const noexcept {
  // Past the highest level held, so the stages' FPR shares keep shrinking (after a union the
  // newest stage need not be the highest level).
  uint32_t level = 0;
  for (uint32_t i = 0; i < count; ++i) level = std::max(level, chain_->stages[i]->level + 1);
  return level;
}

absl::StatusOr<Plan> ScalableFilter::NextStagePlan() const {
  if (full()) return FullStatus();
  const uint32_t count = chain_->stage_count.load(std::memory_order_acquire);
  return PlanStage(count, NextLevel(count), 0, options_.memory.max_memory_bytes);
}

// An empty stage of that plan (not published).
absl::StatusOr<StageFilter> ScalableFilter::BuildStage(const Plan& plan) const {
  // The chain's settings, with the geometry PlanStage chose (not planned again). PlanStage
  // checked the caller's cap on the total; passing it on keeps a cap above this machine's memory
  // the caller's choice, as for the other kinds.
  FilterOptions options{.capacity = plan.capacity,
                        .bits = plan.bits,
                        .hashes = plan.hashes,
                        .probe = options_.probe,
                        .hashing = options_.hashing,
                        .memory = options_.memory};
  // A classic filter is always partitioned: it takes no layout.
  if (options_.layout != Layout::kPartitioned) options.layout = options_.layout;
  return MakeStage(options_.layout, [&options]<typename Kind>(std::type_identity<Kind>) {
    return Kind::Create(options);
  });
}

// Plans, allocates and publishes stage `index` at `level`; the caller holds the growth mutex or
// is Create.
absl::Status ScalableFilter::AddStage(uint32_t index, uint32_t level) {
  absl::StatusOr<Plan> plan = PlanStage(index, level, 0, options_.memory.max_memory_bytes);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<StageFilter> filter = BuildStage(*plan);
  if (!filter.ok() && index == 0) {  // at creation: the memory refused, nothing is full
    return absl::Status(
        filter.status().code(),
        absl::StrCat("the filter's first stage could not be created: ", filter.status().message()));
  }
  if (!filter.ok()) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "filter is full: stage %d could not be created: %s", index, filter.status().message()));
  }
  PublishStage(index, *std::move(filter), plan->capacity, 0, level);
  return absl::OkStatus();
}

// Installs stage `index` holding `count` keys and publishes it to readers.
void ScalableFilter::PublishStage(uint32_t index, StageFilter filter, uint64_t capacity,
                                  uint64_t count, uint32_t level) {
  Chain& chain = *chain_;
  chain.stages[index] =
      detail::MakeKept<Stage>(chain.kept_allocator, std::move(filter), capacity, level);
  chain.stages[index]->count.store(count, std::memory_order_relaxed);
  chain.memory_bytes.fetch_add(chain.stages[index]->array().memory_bytes(),
                               std::memory_order_relaxed);
  chain.capacity.fetch_add(capacity, std::memory_order_relaxed);
  // Publishes the stage: a reader that sees the new count also sees the stage's pointer and
  // its bits.
  chain.stage_count.store(index + 1, std::memory_order_release);
}

// Called when stage `seen_count - 1` is full: true if the caller should retry (a stage was added
// by it or another thread), false if the key is refused: the chain is full, or `cap` refuses the
// stage the chain's limits allow.
bool ScalableFilter::Grow(uint32_t seen_count, CallerCap& cap) noexcept {
  Chain& chain = *chain_;
  // Once full, or refused by the caller's cap at this stage count, stay refused without taking
  // the mutex: refusals must not serialise the inserters.
  if (chain.full.load(std::memory_order_acquire)) return false;
  if (cap.refused_at == seen_count &&
      chain.stage_count.load(std::memory_order_acquire) == seen_count) {
    return false;
  }
  absl::MutexLock lock(&chain.mutex);
  const uint32_t count = chain.stage_count.load(std::memory_order_relaxed);
  if (count != seen_count) return true;  // another thread grew the chain
  const Stage& newest = *chain.stages[count - 1];
  // A reservation may have been given back since the caller saw the stage full: retry there.
  if (newest.count.load(std::memory_order_relaxed) < newest.capacity) return true;
  if (chain.full.load(std::memory_order_relaxed)) return false;
  // The caller's cap refuses a stage the chain's own limits allow: this key is refused, and the
  // chain stays open, since the cap is the caller's (InsertManyUnderCap). Planned once per call.
  const uint32_t level = NextLevel(count);
  if (cap.max_bytes != 0 && !PlanStage(count, level, 0, cap.max_bytes).ok() &&
      PlanStage(count, level, 0, options_.memory.max_memory_bytes).ok()) {
    cap.refused_at = count;
    return false;
  }
  if (absl::Status s = AddStage(count, level); !s.ok()) {
    chain.full_status = std::move(s);
    chain.full.store(true, std::memory_order_release);
    return false;
  }
  return true;
}

InsertResult ScalableFilter::Insert(const KeyHash& hash) noexcept {
  CallerCap none;
  return InsertUnder(hash, none);
}

// Insert, growing only where `cap` lets it too (Grow).
InsertResult ScalableFilter::InsertUnder(const KeyHash& hash, CallerCap& cap) noexcept {
  Chain& chain = *chain_;
  for (;;) {
    const uint32_t count = chain.stage_count.load(std::memory_order_acquire);
    if (count > 1) {
      for (uint32_t i = 0; i < count; ++i) chain.stages[i]->Prefetch(hash);
    }
    // Newest first: with growth s it holds a fraction (s-1)/s of the keys.
    for (uint32_t i = count; i-- > 0;) {
      if (chain.stages[i]->MayContain(hash)) return InsertResult::kPresent;
    }
    Stage& newest = *chain.stages[count - 1];
    if (!Reserve(newest, options_.memory.concurrent)) {
      if (!Grow(count, cap)) return InsertResult::kRefused;
      continue;
    }
    if (newest.Insert(hash)) return InsertResult::kAdded;
    // Only a concurrent inserter of the same key can have set all its bits since the lookup
    // above; that thread was told kAdded and holds its own slot, so give this one back.
    newest.count.fetch_sub(1, std::memory_order_relaxed);
    return InsertResult::kPresent;
  }
}

absl::StatusOr<bool> ScalableFilter::TryInsert(const KeyHash& hash) {
  switch (Insert(hash)) {
    case InsertResult::kAdded:
      return true;
    case InsertResult::kPresent:
      return false;
    case InsertResult::kRefused:
      break;
  }
  return FullStatus();
}

bool ScalableFilter::MayContain(const KeyHash& hash) const noexcept {
  const Chain& chain = *chain_;
  const uint32_t count = chain.stage_count.load(std::memory_order_acquire);
  if (count > 1) {
    for (uint32_t i = 0; i < count; ++i) chain.stages[i]->Prefetch(hash);
  }
  for (uint32_t i = count; i-- > 0;) {
    if (chain.stages[i]->MayContain(hash)) return true;
  }
  return false;
}

template <FilterKey Key>
InsertCounts ScalableFilter::InsertKeys(std::span<const Key> keys, std::span<InsertResult> results,
                                        uint64_t caller_max_bytes) noexcept {
  InsertCounts counts;
  CallerCap cap{.max_bytes = caller_max_bytes};
  PipelineEach(keys, results, hasher(), StagesOf<Chain>{chain_.get()},
               PrefetchStages<Chain>{chain_.get()}, [&](const KeyHash& hash, uint32_t /*stages*/) {
                 const InsertResult result = InsertUnder(hash, cap);
                 counts.added += result == InsertResult::kAdded;
                 counts.refused += result == InsertResult::kRefused;
                 return result;
               });
  return counts;
}

template <FilterKey Key>
size_t ScalableFilter::LookupKeys(std::span<const Key> keys,
                                  std::span<bool> results) const noexcept {
  const Chain& chain = *chain_;
  size_t found = 0;
  PipelineEach(keys, results, hasher(), StagesOf<Chain>{&chain}, PrefetchStages<Chain>{&chain},
               [&](const KeyHash& hash, uint32_t stages) {
                 bool hit = false;
                 for (uint32_t s = stages; s-- > 0 && !hit;) {
                   hit = chain.stages[s]->MayContain(hash);
                 }
                 found += hit;
                 return hit;
               });
  return found;
}

#define BLOOMERY_INSTANTIATE(Key)                                                                 \
  template InsertCounts ScalableFilter::InsertKeys(std::span<const Key>, std::span<InsertResult>, \
                                                   uint64_t) noexcept;                            \
  template size_t ScalableFilter::LookupKeys(std::span<const Key>, std::span<bool>) const noexcept;
BLOOMERY_FOR_EACH_FILTER_KEY(BLOOMERY_INSTANTIATE)
#undef BLOOMERY_INSTANTIATE

absl::Status ScalableFilter::CheckCompatible(const ScalableFilter& other) const {
  const ScalableOptions& a = options_;
  const ScalableOptions& b = other.options_;
  if (a.capacity != b.capacity || a.fpr != b.fpr || a.growth != b.growth ||
      a.tightening != b.tightening || a.hasher() != b.hasher() || a.scaling != b.scaling ||
      a.layout != b.layout || ResolveProbe(a.probe) != ResolveProbe(b.probe)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "incompatible scalable filters: (initial capacity %d, fpr %g, growth %d, tightening %g, "
        "%s, scaling %s%s) vs (initial capacity %d, fpr %g, growth %d, tightening %g, %s, "
        "scaling %s%s)",
        a.capacity, a.fpr, a.growth, a.tightening, detail::HasherName(a.hasher()),
        a.scaling ? "on" : "off", LayoutSuffix(a.layout), b.capacity, b.fpr, b.growth, b.tightening,
        detail::HasherName(b.hasher()), b.scaling ? "on" : "off", LayoutSuffix(b.layout)));
  }
  return absl::OkStatus();
}

absl::Status ScalableFilter::UnionWith(const ScalableFilter& other) {
  if (absl::Status s = CheckCompatible(other); !s.ok()) return s;
  if (&other == this) return absl::OkStatus();
  Chain& chain = *chain_;
  const Chain& theirs = *other.chain_;
  absl::MutexLock lock(&chain.mutex);
  const uint32_t mine = chain.stage_count.load(std::memory_order_relaxed);
  const uint32_t their_count = theirs.stage_count.load(std::memory_order_acquire);
  // First decide, writing nothing: each of their stages is ORed into a stage of ours of its level
  // (one of theirs at most into each of ours) where the union surely fits that stage's capacity,
  // and is otherwise copied as a stage of its own, after ours, in their order.
  constexpr uint32_t kCopied = kMaxScalableStages;
  std::array<uint32_t, kMaxScalableStages> into{};  // our stage, or kCopied
  std::array<uint64_t, kMaxScalableStages> counts{};
  std::array<bool, kMaxScalableStages> taken{};
  uint32_t copies = 0;
  for (uint32_t j = 0; j < their_count; ++j) {
    const Stage& stage = *theirs.stages[j];
    into[j] = kCopied;
    double estimate = 0;
    for (uint32_t i = 0; i < mine && into[j] == kCopied; ++i) {
      if (taken[i] || chain.stages[i]->level != stage.level) continue;
      const StageUnion merged = UniteStages(*chain.stages[i], stage);
      estimate = merged.estimate;
      if (merged.fits) {
        into[j] = i;
        counts[j] = merged.count;
        taken[i] = true;
      }
    }
    if (into[j] != kCopied) continue;
    if (!options_.scaling) {  // its one stage is all a non-scaling filter may have
      return absl::FailedPreconditionError(absl::StrFormat(
          "union refused: the non-scaling filter's stage would hold ~%.0f keys, over its capacity "
          "of %d, and it cannot add a stage for the rest",
          estimate, stage.capacity));
    }
    ++copies;
  }
  // The copies, built aside: an allocation or a limit that fails leaves this filter as it was.
  struct Copy {
    StageFilter filter;
    uint64_t capacity;
    uint64_t count;
    uint32_t level;
  };
  std::vector<Copy> built;
  built.reserve(copies);
  uint64_t pending_bytes = 0;
  for (uint32_t j = 0; j < their_count; ++j) {
    if (into[j] != kCopied) continue;
    const Stage& stage = *theirs.stages[j];
    const uint32_t index = mine + static_cast<uint32_t>(built.size());
    absl::StatusOr<Plan> plan =
        PlanStage(index, stage.level, pending_bytes, options_.memory.max_memory_bytes);
    absl::StatusOr<StageFilter> copy =
        plan.ok() ? BuildStage(*plan) : absl::StatusOr<StageFilter>(plan.status());
    if (copy.ok()) {
      if (absl::Status s = UniteFilters(*copy, stage.filter); !s.ok()) copy = s;
    }
    if (!copy.ok()) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "union refused: it needs %d stages (%d of this filter's and %d of the other's that do "
          "not fit into one of them): %s",
          mine + copies, mine, copies, copy.status().message()));
    }
    pending_bytes += ArrayOf(*copy).memory_bytes();
    built.push_back({*std::move(copy), stage.capacity, stage.count.load(std::memory_order_relaxed),
                     stage.level});
  }
  // Then write: bits are only ever set in place (lookups may run meanwhile) and each copy is
  // published whole.
  for (uint32_t j = 0; j < their_count; ++j) {
    if (into[j] == kCopied) continue;
    Stage& stage = *chain.stages[into[j]];
    if (absl::Status s = UniteFilters(stage.filter, theirs.stages[j]->filter); !s.ok()) return s;
    stage.count.store(counts[j], std::memory_order_relaxed);
  }
  for (Copy& copy : built) {
    PublishStage(chain.stage_count.load(std::memory_order_relaxed), std::move(copy.filter),
                 copy.capacity, copy.count, copy.level);
  }
  chain.correction_key.store(0, std::memory_order_relaxed);  // the stages' bits changed
  return absl::OkStatus();
}

void ScalableFilter::Clear() noexcept {
  Chain& chain = *chain_;
  absl::MutexLock lock(&chain.mutex);
  const uint32_t count = chain.stage_count.load(std::memory_order_relaxed);
  for (uint32_t i = 1; i < count; ++i) chain.stages[i].reset();
  Stage& first = *chain.stages[0];
  VisitStage(first.filter, [](BitArray& array) { array.Clear(); });
  first.count.store(0, std::memory_order_relaxed);
  chain.memory_bytes.store(first.array().memory_bytes(), std::memory_order_relaxed);
  chain.capacity.store(first.capacity, std::memory_order_relaxed);
  chain.full_status = absl::OkStatus();
  chain.full.store(false, std::memory_order_relaxed);
  chain.correction_key.store(0, std::memory_order_relaxed);
  chain.stage_count.store(1, std::memory_order_release);
}

bool ScalableFilter::full() const noexcept { return chain_->full.load(std::memory_order_acquire); }

absl::Status ScalableFilter::FullStatus() const {
  absl::MutexLock lock(&chain_->mutex);
  return chain_->full_status;
}

double ScalableFilter::EstimatedCount() const noexcept {
  const uint32_t count = stage_count();
  double total = 0;
  for (uint32_t i = 0; i < count; ++i) total += static_cast<double>(stage_keys(i));
  return total;
}

double ScalableFilter::planned_fpr() const noexcept {
  // A chain whose levels each have one stage keeps P: the stages' shares and those of the stages
  // it may still grow sum to it. Each further stage of a level (a union's copy) adds its share.
  const uint32_t count = stage_count();
  // The levels seen: each is below kMaxScalableStages, as every level up to the highest has a
  // stage.
  uint64_t levels = 0;
  double extra = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t bit = uint64_t{1} << chain_->stages[i]->level;
    if ((levels & bit) != 0) extra += StageFpr(options_, chain_->stages[i]->level);
    levels |= bit;
  }
  return options_.fpr + extra;
}

namespace {

// The random hashes a chain's dependence correction is read on: fixed (SplitMix64 from 0), so a
// chain's estimate is a function of its bits. Each is looked up in every stage: a chain of up to
// 16 stages reads all of them (sd of the correction ~0.0015 at error rate 0.9), a longer one 2^19
// lookups in all.
constexpr uint32_t kDependenceSamples = 32768;
constexpr uint64_t kDependenceLookups = uint64_t{1} << 19;

// What the correction was read on: the stage count and the newest stage's fill in quarters of its
// capacity, so that a chain's correction is read four times per stage as it fills, not on every
// Health. Never 0.
uint64_t CorrectionKey(uint32_t stages, uint64_t newest_keys, uint64_t newest_capacity) {
  const uint64_t quarter =
      std::min<uint64_t>(4, 4 * newest_keys / std::max<uint64_t>(1, newest_capacity));
  return (uint64_t{1} << 63) | (uint64_t{stages} << 8) | quarter;
}

}  // namespace

// How much the chain's FPR differs from 1 - prod (1 - f_i) (EstimatedFpr), read on fixed
// random hashes; 0 for one stage.
double ScalableFilter::DependenceCorrection() const noexcept {
  const Chain& chain = *chain_;
  const uint32_t count = stage_count();
  if (count < 2) return 0.0;  // one stage: its exact FPR is the chain's
  const Stage& newest = *chain.stages[count - 1];
  const uint64_t key =
      CorrectionKey(count, newest.count.load(std::memory_order_relaxed), newest.capacity);
  if (chain.correction_key.load(std::memory_order_acquire) == key) {
    return chain.correction.load(std::memory_order_relaxed);
  }
  const uint32_t samples = static_cast<uint32_t>(
      std::min<uint64_t>(kDependenceSamples, std::max<uint64_t>(4096, kDependenceLookups / count)));
  std::array<uint32_t, kMaxScalableStages> stage_hits{};
  uint32_t chain_hits = 0;
  uint64_t state = 0;  // the sample hashes, made as they are read (health_scan.h's SplitMix64)
  for (uint32_t j = 0; j < samples; ++j) {
    const uint64_t lo = detail::NextSampleOffset(state);
    const KeyHash hash{lo, detail::NextSampleOffset(state)};
    bool any = false;
    for (uint32_t i = 0; i < count; ++i) {
      const bool hit = chain.stages[i]->MayContain(hash);
      stage_hits[i] += hit ? 1 : 0;
      any = any || hit;
    }
    chain_hits += any ? 1 : 0;
  }
  double none = 1.0;  // the independent model on the same samples' stage rates
  for (uint32_t i = 0; i < count; ++i) none *= 1.0 - stage_hits[i] / double(samples);
  const double correction = chain_hits / double(samples) - (1.0 - none);
  chain.correction.store(correction, std::memory_order_relaxed);
  chain.correction_key.store(key, std::memory_order_release);
  return correction;
}

// The chain's FPR from the independent model's `independent` and the stages' FPRs.
double ScalableFilter::ChainFpr(double independent,
                                std::span<const double> stage_fprs) const noexcept {
  double highest = 0.0;
  double sum = 0.0;
  for (const double f : stage_fprs) {
    highest = std::max(highest, f);
    sum += f;
  }
  // The union of the stages' answers lies between its likeliest stage and their sum.
  return std::clamp(independent + DependenceCorrection(), highest, std::min(1.0, sum));
}

double ScalableFilter::EstimatedFpr() const noexcept {
  const uint32_t count = stage_count();
  std::array<double, kMaxScalableStages> stage_fprs{};
  double none = 1.0;  // probability that no stage answers "maybe", were they independent
  for (uint32_t i = 0; i < count; ++i) {
    stage_fprs[i] = VisitStage(chain_->stages[i]->filter,
                               [](const auto& filter) { return filter.EstimatedFpr(); });
    none *= 1.0 - stage_fprs[i];
  }
  return ChainFpr(1.0 - none, std::span<const double>(stage_fprs.data(), count));
}

FilterHealth ScalableFilter::Health() const {
  const uint32_t count = stage_count();
  FilterHealth health;
  detail::HealthOfParts parts;
  uint64_t inserted = 0;
  std::array<double, kMaxScalableStages> stage_fprs{};
  for (uint32_t i = 0; i < count; ++i) {
    const FilterHealth s =
        VisitStage(chain_->stages[i]->filter, [](const auto& filter) { return filter.Health(); });
    stage_fprs[i] = s.estimated_fpr;
    const double bits = static_cast<double>(stage(i).bits());
    parts.Add(s.estimated_fpr, s.estimated_fpr_error, s.estimated_count, s.estimated_count_error,
              s.fill_ratio * bits, bits);
    inserted += stage_keys(i);
    health.sampled = health.sampled || s.sampled;
  }
  parts.Into(health);
  health.estimated_fpr =
      ChainFpr(health.estimated_fpr, std::span<const double>(stage_fprs.data(), count));
  health.capacity = capacity();
  health.inserted = inserted;
  health.planned_fpr = planned_fpr();
  const bool can_grow = options_.scaling && !full();
  const double load = can_grow ? 0.0
                               : static_cast<double>(inserted) /
                                     static_cast<double>(std::max<uint64_t>(health.capacity, 1));
  health.state = ClassifyHealth(health.estimated_fpr, health.planned_fpr, load);
  // Near no limit while growth keeps the FPR under the bound (the header says why).
  if (can_grow && health.state == HealthState::kNearLimit) health.state = HealthState::kOk;
  // Full, not over: a chain that cannot grow refuses keys past its capacity, so its bits read the
  // bound give or take the spread of where its keys fell, and get no fuller (the header says why).
  if (!can_grow && health.state == HealthState::kOverLimit && inserted <= health.capacity &&
      std::isfinite(health.estimated_fpr)) {
    health.state = HealthState::kNearLimit;
  }
  return health;
}

uint32_t ScalableFilter::stage_count() const noexcept {
  return chain_->stage_count.load(std::memory_order_acquire);
}

const BitArray& ScalableFilter::stage(uint32_t i) const noexcept {
  return chain_->stages[i]->array();
}

uint32_t ScalableFilter::stage_level(uint32_t i) const noexcept { return chain_->stages[i]->level; }

uint64_t ScalableFilter::stage_keys(uint32_t i) const noexcept {
  return chain_->stages[i]->count.load(std::memory_order_relaxed);
}

uint64_t ScalableFilter::capacity() const noexcept {
  return chain_->capacity.load(std::memory_order_relaxed);
}

uint64_t ScalableFilter::memory_bytes() const noexcept {
  return chain_->memory_bytes.load(std::memory_order_relaxed);
}

uint64_t ScalableFilter::bookkeeping_bytes() const noexcept {
  return sizeof(Chain) + uint64_t{stage_count()} * (sizeof(Stage) + sizeof(FilterMemory::Owner));
}

// Persistence (lib/format/internal/persistence.h): a file of kind "scalable" (docs/FORMAT.md) with
// one stage-table entry per stage.

// A saved chain is valid when its options are ones Create accepts and every stage is exactly the
// stage those options grow (capacity, bits, hashes). InspectFile, Load and LoadFromBytes all ask.
struct ScalableChainCheck {
  // The chain's options as saved (param0 growth, param1 tightening as f64 bits, param2 max_stages
  // | non-scaling << 32), with `load`'s settings for what a file does not hold.
  static ScalableOptions OptionsOf(const detail::FileHeader& header, const LoadOptions& load) {
    ScalableOptions options;
    options.capacity = header.capacity;
    options.fpr = header.fpr;
    options.growth = static_cast<uint32_t>(std::min<uint64_t>(header.param0, 1u << 31));
    options.tightening = std::bit_cast<double>(header.param1);
    options.max_stages = static_cast<uint32_t>(header.param2 & 0xFFFFFFFFu);
    options.scaling = (header.param2 >> 32) == 0;
    options.hashing.seed = header.seed;
    options.hashing.integer_hash = static_cast<IntegerHash>(header.hash_id);
    // The validator (format_codec.cc) has refused a code no layout has.
    options.layout = *LayoutOfFileCode(header.layout, &options.probe);
    options.memory.concurrent = load.concurrent;
    options.memory.max_memory_bytes = load.max_bytes;
    options.memory.huge_pages = load.huge_pages;
    options.memory.allocator = load.allocator;  // later stages grow through it too
    return options;
  }

  static absl::Status Corrupt(absl::string_view what) {
    return detail::Corrupt(absl::StrCat("scalable filter ", what));
  }

  // Stage `i`'s level: its index, unless its tag says otherwise (tag = level + 1, written only
  // where the level is not the index).
  static uint32_t LevelOf(const detail::FileHeader& header, uint32_t i) {
    const uint32_t tag = header.stages[i].tag;
    return tag == 0 ? i : tag - 1;
  }

  // Stage `i` as `filter`'s options grow it at its level (under its memory cap, given the stages
  // published before it), which must be the saved one.
  static absl::StatusOr<Plan> PlanSaved(const ScalableFilter& filter,
                                        const detail::FileHeader& header, uint32_t i) {
    absl::StatusOr<Plan> plan =
        filter.PlanStage(i, LevelOf(header, i), 0, filter.options_.memory.max_memory_bytes);
    const detail::StageInfo& saved = header.stages[i];
    if (!plan.ok() || plan->capacity != saved.capacity || plan->bits != saved.bits ||
        plan->hashes != saved.hashes) {
      return Corrupt(absl::StrFormat("stage %d does not match the chain's options", i));
    }
    return plan;
  }

  static absl::Status Check(const detail::FileHeader& header) {
    if ((header.param2 >> 33) != 0) return Corrupt("has unknown option bits");
    ScalableOptions options = OptionsOf(header, LoadOptions());
    options.memory.max_memory_bytes = 0;  // a cap is the loader's to apply, not the file's
    if (absl::Status s = ScalableFilter::CheckOptions(options); !s.ok()) {
      return Corrupt(s.message());
    }
    const ScalableFilter chain(options);
    uint32_t next_level = 0;  // one past the highest level so far
    for (uint32_t i = 0; i < header.stages.size(); ++i) {
      // Levels first appear in order (a chain and a union of chains hold every level up to their
      // highest), and a tag is written only where it differs from the index: one file per chain.
      const uint32_t level = LevelOf(header, i);
      if (header.stages[i].tag == i + 1 || level > next_level) {
        return Corrupt(
            absl::StrFormat("stage %d has a level (tag %d) no chain has", i, header.stages[i].tag));
      }
      next_level = std::max(next_level, level + 1);
      if (absl::StatusOr<Plan> plan = PlanSaved(chain, header, i); !plan.ok()) {
        return plan.status();
      }
    }
    return absl::OkStatus();
  }
};

detail::KindFormat ScalableFilter::FileFormat() noexcept {
  return {.max_stages = kMaxScalableStages,
          .params = 3,
          .counts_inserts = true,
          .stage_tags = true,
          .layouts = true,
          .partitioned_stages = true,
          .check = &ScalableChainCheck::Check};
}

namespace {

// The chain's file header, and its stages' payloads in `payloads`.
detail::FileHeader ChainHeader(const ScalableFilter& chain,
                               std::vector<std::span<const uint8_t>>& payloads) {
  const ScalableOptions& options = chain.options();
  detail::FileHeader header;
  header.kind = FilterKind::kScalable;
  detail::PutHasher(header, chain.hasher());
  header.capacity = options.capacity;
  header.fpr = options.fpr;
  header.param0 = options.growth;
  header.param1 = std::bit_cast<uint64_t>(options.tightening);
  header.param2 = options.max_stages | (options.scaling ? 0 : uint64_t{1} << 32);
  header.layout = FileCodeOf(options.layout, options.probe);
  const uint32_t count = chain.stage_count();
  for (uint32_t i = 0; i < count; ++i) {
    const BitArray& filter = chain.stage(i);
    const uint64_t keys = chain.stage_keys(i);
    // A stage is planned for exactly its capacity (AddStage), so its plan carries it.
    const uint32_t level = chain.stage_level(i);
    header.stages.push_back(
        {filter.bits(), filter.hashes(), filter.plan().capacity, keys, level == i ? 0 : level + 1});
    header.bits += filter.bits();
    header.insert_count += keys;
    payloads.push_back(filter.bytes());
  }
  header.hashes = header.stages[0].hashes;
  return header;
}

}  // namespace

absl::StatusOr<std::string> ScalableFilter::Write(const std::string* path) const {
  std::vector<std::span<const uint8_t>> payloads;
  detail::FileHeader header = ChainHeader(*this, payloads);
  return detail::WriteFilter(path, std::move(header), payloads);
}

absl::StatusOr<std::string> ScalableFilter::SaveHeaderToBytes() const {
  std::vector<std::span<const uint8_t>> payloads;
  detail::FileHeader header = ChainHeader(*this, payloads);
  return detail::EncodeFileRegion(std::move(header), payloads);
}

absl::StatusOr<ScalableFilter> ScalableFilter::Open(detail::FilterFile& file,
                                                    const LoadOptions& load_options) {
  const ScalableOptions options = ScalableChainCheck::OptionsOf(file.header, load_options);
  ScalableFilter filter(options);
  for (uint32_t i = 0; i < file.header.stages.size(); ++i) {
    // The validator checked the chain; planned again here under the caller's memory cap.
    absl::StatusOr<Plan> plan = ScalableChainCheck::PlanSaved(filter, file.header, i);
    if (!plan.ok()) return plan.status();
    const detail::StageInfo& saved = file.header.stages[i];
    FilterMemory memory = detail::Own(std::move(file.stages[i]));
    absl::StatusOr<StageFilter> stage =
        MakeStage(options.layout, [&]<typename Kind>(std::type_identity<Kind>) {
          return absl::StatusOr<Kind>(detail::FilterAccess::Construct<Kind>(
              std::move(memory), *plan, options.hasher(), options.memory.concurrent));
        });
    filter.PublishStage(i, *std::move(stage), saved.capacity, saved.insert_count,
                        ScalableChainCheck::LevelOf(file.header, i));
  }
  return filter;
}

template class Persistent<ScalableFilter>;

}  // namespace bloomery
