// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bloomery/windowed_filter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bits/internal/fill_estimate.h"
#include "bits/internal/filter_ops.h"
#include "filters/internal/batch_pipeline.h"
#include "filters/internal/health_scan.h"
#include "format/internal/persistence.h"
#include "layouts/block_kernels.h"
#include "layouts/internal/block_layout.h"
#include "layouts/internal/line_ops.h"
#include "memory/internal/storage.h"
#include "plan/internal/memory_limit.h"

namespace bloomery {

using detail::BlockIndex;
using detail::LoadRelaxed;

namespace {

constexpr uint32_t kMaxGenerations = 64;
// Marks a slot that has held no generation yet.
constexpr uint64_t kNoEpoch = std::numeric_limits<uint64_t>::max();

int64_t SystemClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct WindowedFilter::State {
  explicit State(uint32_t generations)
      : slot_epoch(new std::atomic<uint64_t>[generations]),
        slot_keys(std::make_unique<uint64_t[]>(generations)) {}
  std::mutex rotation;  // writers only: lookups never take it
  WindowClock clock;
  std::atomic<uint64_t> epoch{0};    // the newest generation's
  std::atomic<uint64_t> counted{0};  // key-count mode: counted inserts into the newest
  std::unique_ptr<std::atomic<uint64_t>[]> slot_epoch;
  // Key-count mode: the counted inserts a generation in slot j holds (KeysIn), fixed at creation.
  std::unique_ptr<uint64_t[]> slot_keys;
};

WindowedFilter::WindowedFilter(FilterMemory memory, const Plan& plan, const Shape& shape,
                               WindowClock clock)
    : WordArray(std::move(memory), shape.hasher, shape.concurrent),
      blocks_(plan.blocks()),
      generations_(shape.generations),
      block_shift_(BlockShift(plan.layout)),
      stored_(BlockLayoutIndex(plan.layout, plan.probe)),
      plan_(plan),
      capacity_(shape.capacity),
      fpr_(shape.fpr),
      per_generation_(KeysPerGeneration(shape.capacity, shape.generations)),
      window_ns_(shape.window_ns),
      span_ns_(shape.window_ns / shape.generations),
      refresh_(shape.refresh),
      state_(std::make_unique<State>(shape.generations)) {
  // Generation e takes floor((e+1)W/G) - floor(eW/G) inserts: any G in a row take W. With
  // W = qG + r, floor(jW/G) = jq + floor(jr/G), which cannot overflow (j <= G <= 64, r < G).
  const uint64_t q = capacity_ / generations_;
  const uint64_t r = capacity_ % generations_;
  for (uint32_t j = 0; j < generations_; ++j) {
    state_->slot_keys[j] = q + ((j + 1) * r / generations_ - j * r / generations_);
  }
  if (window_ns_ > 0) {
    state_->clock = clock ? std::move(clock) : WindowClock(SystemClockNs);
    origin_ns_ = state_->clock();
  }
  Restart(0);
}

void WindowedFilter::Restart(uint64_t epoch) noexcept {
  for (uint32_t j = 0; j < generations_; ++j) {
    const uint64_t back = (epoch % generations_ + generations_ - j) % generations_;
    state_->slot_epoch[j].store(back <= epoch ? epoch - back : kNoEpoch);
  }
  state_->epoch.store(epoch);
  state_->counted.store(0);
}

uint64_t WindowedFilter::KeysIn(uint32_t slot) const noexcept { return state_->slot_keys[slot]; }

uint64_t WindowedFilter::ClockField() const noexcept {
  if (window_ns_ == 0) {
    // Racing inserts may push the counter past a generation's share before the rotation.
    const uint64_t epoch = state_->epoch.load(std::memory_order_relaxed);
    return std::min(state_->counted.load(std::memory_order_relaxed),
                    KeysIn(static_cast<uint32_t>(epoch % generations_)));
  }
  return static_cast<uint64_t>(origin_ns_);
}

void WindowedFilter::RestoreClock(uint64_t epoch, uint64_t clock_field) noexcept {
  Restart(epoch);
  if (window_ns_ == 0) {
    state_->counted.store(clock_field);
  } else {
    origin_ns_ = static_cast<int64_t>(clock_field);
  }
}

WindowedFilter::WindowedFilter(WindowedFilter&&) noexcept = default;
WindowedFilter& WindowedFilter::operator=(WindowedFilter&&) noexcept = default;
WindowedFilter::~WindowedFilter() = default;

absl::StatusOr<WindowedFilter> WindowedFilter::Create(const WindowedOptions& options) {
  if (absl::Status s = CheckSizing(
          Sizing{.capacity = options.capacity, .fpr = options.fpr, .hashes = options.hashes});
      !s.ok()) {
    return s;
  }
  if (options.generations < 2 || options.generations > kMaxGenerations) {
    return absl::InvalidArgumentError(
        absl::StrFormat("WindowedFilter: generations must be in 2..%d, got %d", kMaxGenerations,
                        options.generations));
  }
  const int64_t window_ns = options.window.count();
  if (window_ns < 0 || (window_ns > 0 && window_ns < options.generations)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WindowedFilter: window must be 0 (key-count mode) or at least %d ns, got %d ns",
        options.generations, window_ns));
  }
  if (FindBlockShape(options.layout) == nullptr && options.layout != Layout::kAuto) {
    return absl::InvalidArgumentError(
        absl::StrFormat("WindowedFilter: generations are blocked: layout must be %s, got %s",
                        LayoutList({Layout::kAuto}), LayoutName(options.layout)));
  }
  if (absl::Status s = detail::CheckIntegerHash(options.hashing.integer_hash); !s.ok()) return s;
  const uint32_t g = options.generations;
  // One generation as a blocked filter's options: ceil(capacity/G) keys at the f with
  // 1 - (1 - f)^G = fpr (computed without cancellation for small fpr); kFastest's cap is a
  // generation's share of the whole filter's cap, the machine's where none is set (0 / G would
  // read as "no cap", and a shape whose one generation fits but whose G do not would be chosen),
  // at least one byte so a cap below G bytes stays a cap.
  FilterOptions generation{.capacity = KeysPerGeneration(options.capacity, g),
                           .fpr = -std::expm1(std::log1p(-options.fpr) / g),
                           .hashes = options.hashes,
                           .layout_choice = options.layout_choice,
                           .probe = options.probe};
  const uint64_t whole_cap = options.memory.max_memory_bytes != 0
                                 ? options.memory.max_memory_bytes
                                 : detail::MachineMemoryLimit().bytes;
  generation.memory.max_memory_bytes = whole_cap == 0 ? 0 : std::max<uint64_t>(1, whole_cap / g);
  absl::StatusOr<Plan> plan = PlanFilter(generation, options.layout);
  if (!plan.ok()) return plan.status();
  if (plan->bits > kMaxBits / g) {
    return absl::ResourceExhaustedError("WindowedFilter: the generations need more than 2^48 bits");
  }
  absl::StatusOr<FilterMemory> memory =
      detail::AllocateFilterMemory(WholeLineBytes(plan->bits * g), options.memory);
  if (!memory.ok()) return memory.status();
  return WindowedFilter(*std::move(memory), *plan,
                        Shape{g, options.capacity, options.fpr, window_ns, options.refresh,
                              options.hashing.hasher(plan->layout), options.memory.concurrent},
                        options.clock);
}

double WindowedFilter::planned_fpr() const noexcept {
  return -std::expm1(generations_ * std::log1p(-plan_.expected_fpr));
}

uint64_t WindowedFilter::epoch() const noexcept {
  return state_->epoch.load(std::memory_order_acquire);
}

uint64_t WindowedFilter::EpochNow() const noexcept {
  const uint64_t stored = state_->epoch.load(std::memory_order_acquire);
  if (window_ns_ == 0) return stored;
  // Modular subtraction: a hostile file's origin must not make this overflow.
  const auto elapsed = static_cast<int64_t>(static_cast<uint64_t>(state_->clock()) -
                                            static_cast<uint64_t>(origin_ns_));
  // A clock that steps back never brings an expired generation back.
  const uint64_t by_clock = elapsed > 0 ? static_cast<uint64_t>(elapsed / span_ns_) : 0;
  return std::max(stored, by_clock);
}

bool WindowedFilter::SlotLive(uint32_t slot, uint64_t now) const noexcept {
  const uint64_t e = state_->slot_epoch[slot].load(std::memory_order_acquire);
  return e != kNoEpoch && e <= now && now - e < generations_;
}

void WindowedFilter::RotateTo(uint64_t target) noexcept {
  std::lock_guard<std::mutex> lock(state_->rotation);
  uint64_t e = state_->epoch.load(std::memory_order_relaxed);
  if (target <= e) return;
  // Past G rotations every slot is cleared anyway: skip the empty epochs in between.
  if (target - e > generations_) e = target - generations_;
  while (e < target) {
    ++e;
    const auto slot = static_cast<uint32_t>(e % generations_);
    // Relaxed stores (ClearWords): a lookup may still read this expiring generation.
    for (uint64_t b = 0; b < blocks_; ++b) detail::ClearWords(block_at(b, slot), block_words());
    state_->slot_epoch[slot].store(e, std::memory_order_release);
    state_->counted.store(0, std::memory_order_relaxed);
    // Release: an insert that acquires the new epoch sees the cleared slot, so its bits are
    // ordered after the zeros.
    state_->epoch.store(e, std::memory_order_release);
  }
}

void WindowedFilter::Advance() noexcept {
  const uint64_t now = EpochNow();
  if (now > state_->epoch.load(std::memory_order_acquire)) RotateTo(now);
}

bool WindowedFilter::TestLive(const KeyHash& hash, uint64_t block, uint64_t now) const noexcept {
  const simd::ShapeKernels& kernels = simd::ActiveKernels().shapes[stored_];
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if (SlotLive(slot, now) &&
        kernels.test_block(block_at(block, slot), hash, plan_.hashes, concurrent_)) {
      return true;
    }
  }
  return false;
}

bool WindowedFilter::MayContain(const KeyHash& hash) const noexcept {
  return TestLive(hash, BlockIndex(hash, blocks_), EpochNow());
}

bool WindowedFilter::Insert(const KeyHash& hash) noexcept {
  const uint64_t block = BlockIndex(hash, blocks_);
  const simd::ShapeKernels& kernels = simd::ActiveKernels().shapes[stored_];
  for (;;) {
    uint64_t e = state_->epoch.load(std::memory_order_acquire);
    if (const uint64_t now = EpochNow(); now > e) {  // the newest generation's time is over
      // One rotation, then insert at the epoch it reached, without reading the clock again: a
      // generation span shorter than a rotation (a few ns over a large filter) must not keep an
      // insert rotating forever. A key inserted at an epoch the clock has already passed only
      // expires sooner, never later.
      RotateTo(now);
      e = state_->epoch.load(std::memory_order_acquire);
    }
    const bool seen = TestLive(hash, block, e);
    if (seen && refresh_ == Refresh::kKeepFirstSeen) return false;
    const auto slot = static_cast<uint32_t>(e % generations_);
    uint64_t* newest = block_at(block, slot);
    if (window_ns_ == 0) {
      // Key-count mode counts the inserts that add a key to the newest generation; a generation
      // whose share is 0 (W < G) is passed over without counting. The key already there: alone,
      // TestLive saw it too; racing, another thread set it and was told "new".
      if (kernels.test_block(newest, hash, plan_.hashes, concurrent_)) return false;
      const uint64_t share = KeysIn(slot);
      if (share == 0 || state_->counted.fetch_add(1, std::memory_order_relaxed) >= share) {
        RotateTo(e + 1);
        continue;
      }
    }
    // New only if this call set a bit: alone, !seen implies it; racing on one word64 word, one
    // fetch_or finds the bits missing (the header's promise).
    return kernels.set_block(newest, hash, plan_.hashes, concurrent_) && !seen;
  }
}

namespace {

// A key's block, the cache lines of its G blocks prefetched as soon as it is known: they are
// contiguous, one short prefetch stream per key (detail::BurstEach).
template <bool kWrite>
struct LocateGenerations {
  using Where = uint64_t;
  const uint64_t* words;
  uint64_t blocks;
  uint32_t generations;
  uint32_t block_shift;
  void operator()(const KeyHash& hash, uint64_t& block) const noexcept {
    block = BlockIndex(hash, blocks);
    const uint64_t run = uint64_t{generations} << block_shift;  // words
    const uint64_t first = block * run;
    for (uint64_t w = first & ~uint64_t{detail::kWordsPerBlock - 1}; w < first + run;
         w += detail::kWordsPerBlock) {
      __builtin_prefetch(words + w, kWrite ? 1 : 0, 3);
    }
  }
};

}  // namespace

template <FilterKey Key>
size_t WindowedFilter::InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept {
  size_t added = 0;
  detail::BurstEach(keys, was_new, hasher_,
                    LocateGenerations<true>{words_, blocks_, generations_, block_shift_},
                    [&](const KeyHash& hash, uint64_t) {
                      const bool fresh = Insert(hash);
                      added += fresh;
                      return fresh;
                    });
  return added;
}

template <FilterKey Key>
size_t WindowedFilter::LookupKeys(std::span<const Key> keys,
                                  std::span<bool> results) const noexcept {
  const uint64_t now = EpochNow();
  size_t found = 0;
  detail::BurstEach(keys, results, hasher_,
                    LocateGenerations<false>{words_, blocks_, generations_, block_shift_},
                    [&](const KeyHash& hash, uint64_t block) {
                      const bool live = TestLive(hash, block, now);
                      found += live;
                      return live;
                    });
  return found;
}

BLOOMERY_INSTANTIATE_BATCH_FORMS(WindowedFilter)

absl::Status WindowedFilter::CheckSameWindow(const WindowedFilter& other) const {
  if (absl::Status s = detail::CheckSameLayout(plan_, other.plan_); !s.ok()) return s;
  if (blocks_ != other.blocks_ || plan_.hashes != other.plan_.hashes || hasher_ != other.hasher_ ||
      generations_ != other.generations_ || window_ns_ != other.window_ns_ ||
      per_generation_ != other.per_generation_ || refresh_ != other.refresh_ ||
      (window_ns_ == 0 && capacity_ != other.capacity_)) {
    return absl::FailedPreconditionError(
        "WindowedFilter: merging needs the same lines, hashes, seed, integer hash, generations, "
        "window and refresh policy");
  }
  // Generation e covers [origin + e*span, origin + (e+1)*span): with another origin the same
  // epoch is another stretch of time, and the other filter's keys would expire on this one's
  // schedule, up to a whole span before their time.
  if (window_ns_ > 0 && origin_ns_ != other.origin_ns_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "WindowedFilter: merging needs windows that began at the same time (epoch 0 began at %d "
        "ns in this one, at %d ns in the other): their generations would expire at different "
        "times",
        origin_ns_, other.origin_ns_));
  }
  return absl::OkStatus();
}

absl::Status WindowedFilter::CheckSameEpoch(uint64_t now, uint64_t other_now) const {
  if (now == other_now) return absl::OkStatus();
  if (window_ns_ == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "WindowedFilter: merging needs the same epoch (this %d, other %d): the same number of "
        "rotations",
        now, other_now));
  }
  // Same origin: a clock behind one filter's saved epoch, or two clocks that disagree.
  return absl::FailedPreconditionError(absl::StrFormat(
      "WindowedFilter: merging needs the same epoch by the clock (this %d, other %d): one "
      "filter is ahead of its clock (a clock behind its saved state), or their clocks disagree",
      now, other_now));
}

absl::Status WindowedFilter::CheckCompatible(const WindowedFilter& other) const {
  if (absl::Status s = CheckSameWindow(other); !s.ok()) return s;
  return CheckSameEpoch(EpochNow(), other.EpochNow());
}

absl::Status WindowedFilter::UnionWith(const WindowedFilter& other) {
  if (absl::Status s = CheckSameWindow(other); !s.ok()) return s;
  // Duration mode: this filter rotates to its clock's epoch (a slot it has yet to clear must not
  // receive keys), and `other` is read at its clock's epoch (its expired slots are skipped). The
  // two clock reads may straddle a generation boundary: one more round then agrees.
  uint64_t now = 0;
  uint64_t other_now = 0;
  for (int round = 0; round < 2 && (round == 0 || now != other_now); ++round) {
    other_now = other.EpochNow();
    Advance();
    now = epoch();
  }
  if (absl::Status s = CheckSameEpoch(now, other_now); !s.ok()) return s;
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if (!SlotLive(slot, now) || !other.SlotLive(slot, now)) continue;
    for (uint64_t b = 0; b < blocks_; ++b) {
      detail::UnionWords(block_at(b, slot), other.block_at(b, slot), block_words(), concurrent_);
    }
  }
  return absl::OkStatus();
}

void WindowedFilter::Clear() noexcept {
  std::fill(words_, words_ + (blocks_ * generations_ << block_shift_), uint64_t{0});
  Restart(0);
  if (window_ns_ > 0) origin_ns_ = state_->clock();
}

detail::ScanTotals WindowedFilter::Scan(uint64_t slots, bool sample, bool fpr) const {
  const detail::BlockSlices slices = detail::SlicesOfBlock(plan_.layout, plan_.hashes);
  return detail::ScanUnits(
      blocks_, 2 * size_t{generations_},
      [&](uint64_t b, double* out) {
        for (uint32_t slot = 0; slot < generations_; ++slot) {
          uint32_t set = 0;
          out[size_t{2} * slot] = 0.0;
          if ((slots >> slot & 1) != 0) {
            if (fpr) {
              out[size_t{2} * slot] =
                  detail::BlockFpr(block_at(b, slot), slices, plan_.hashes, &set);
            } else {
              set = static_cast<uint32_t>(detail::PopCountWords(block_at(b, slot), block_words()));
            }
          }
          out[size_t{2} * slot + 1] = set;
        }
      },
      sample, detail::RunUnits(uint64_t{8} * generations_ << block_shift_));
}

uint64_t WindowedFilter::LiveSlots(uint64_t now) const noexcept {
  uint64_t slots = 0;
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if (SlotLive(slot, now)) slots |= uint64_t{1} << slot;
  }
  return slots;
}

double WindowedFilter::EstimatedCount() const noexcept {
  const uint64_t slots = LiveSlots(EpochNow());
  const detail::ScanTotals scan = Scan(slots, /*sample=*/false, /*fpr=*/false);
  double count = 0;
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    // Swamidass & Baldi, as BlockedFilter::EstimatedCount.
    if ((slots >> slot & 1) != 0) {
      count += detail::CountFromFill(static_cast<uint64_t>(scan.total[size_t{2} * slot + 1]),
                                     plan_.bits, plan_.hashes);
    }
  }
  return count;
}

double WindowedFilter::EstimatedFpr() const noexcept {
  const uint64_t slots = LiveSlots(EpochNow());
  const detail::ScanTotals scan = Scan(slots, false);
  double none = 1;
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if ((slots >> slot & 1) != 0) {
      none *= 1 - (blocks_ ? scan.total[size_t{2} * slot] / static_cast<double>(blocks_) : 0.0);
    }
  }
  return 1 - none;
}

FilterHealth WindowedFilter::Health() const {
  const uint64_t slots = LiveSlots(EpochNow());
  const detail::ScanTotals scan = Scan(slots, memory_bytes() > kHealthExactBytes);
  const double blocks = static_cast<double>(std::max<uint64_t>(blocks_, 1));
  FilterHealth health;
  detail::HealthOfParts parts;
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if ((slots >> slot & 1) == 0) continue;
    const detail::CountReading count =
        detail::CountFromSample(scan.total[size_t{2} * slot + 1], scan.error[size_t{2} * slot + 1],
                                plan_.bits, plan_.hashes);
    parts.Add(scan.total[size_t{2} * slot] / blocks, 3 * scan.error[size_t{2} * slot] / blocks,
              count.count, count.error, scan.total[size_t{2} * slot + 1],
              static_cast<double>(plan_.bits));
  }
  parts.Into(health);
  health.capacity = capacity_;
  health.planned_fpr = planned_fpr();
  health.sampled = scan.sampled;
  if (window_ns_ == 0) {
    // Rotation holds the window at its capacity, where the FPR its bits give is the planned one
    // give or take their fluctuation (a few percent): only more than a window's keys in its
    // generations (a union of two) takes it past kOverFullWindow times.
    constexpr double kOverFullWindow = 1.25;
    health.state = health.estimated_fpr > kOverFullWindow * health.planned_fpr
                       ? HealthState::kOverLimit
                       : HealthState::kOk;
  } else {
    health.state = ClassifyHealth(
        health.estimated_fpr, health.planned_fpr,
        health.estimated_count / static_cast<double>(std::max<uint64_t>(capacity_, 1)));
  }
  return health;
}

WindowedFilter::GenerationInfo WindowedFilter::generation(uint32_t age) const noexcept {
  GenerationInfo info;
  const uint64_t now = EpochNow();
  if (age >= generations_ || age > now) return info;
  info.epoch = now - age;
  const auto slot = static_cast<uint32_t>(info.epoch % generations_);
  info.live =
      SlotLive(slot, now) && state_->slot_epoch[slot].load(std::memory_order_acquire) == info.epoch;
  if (info.live) {
    info.estimated_keys = detail::CountFromFill(
        static_cast<uint64_t>(
            Scan(uint64_t{1} << slot, /*sample=*/false, /*fpr=*/false).total[size_t{2} * slot + 1]),
        plan_.bits, plan_.hashes);
  }
  return info;
}

// Persistence (lib/format/internal/persistence.h): a one-stage file of kind "windowed"
// (docs/FORMAT.md). The stage is the interleaved generations' lines; the window and its clock state
// are in the header's params. The kind declares its own Save, Load and Map (they take a clock) on
// the shared LoadAs and MapAs.

namespace {

using detail::FileHeader;

constexpr uint64_t kRefreshShift = 8;
constexpr uint64_t kMaxEpoch = uint64_t{1} << 63;

absl::Status Corrupt(absl::string_view what) {
  return detail::Corrupt(absl::StrCat("windowed filter ", what));
}

uint32_t GenerationsOf(const FileHeader& header) {
  return static_cast<uint32_t>(header.param0 & 0xFF);
}

// The header's window and geometry checked against what Create makes: one generation's plan
// (DataLoss otherwise).
absl::StatusOr<Plan> GenerationPlanOf(const FileHeader& header) {
  const uint32_t g = GenerationsOf(header);
  if ((header.param0 >> (kRefreshShift + 1)) != 0) return Corrupt("has unknown option bits");
  if (g < 2 || g > kMaxGenerations) {
    return Corrupt(absl::StrFormat("generations %d outside 2..%d", g, kMaxGenerations));
  }
  const auto window_ns = static_cast<int64_t>(header.param1);
  if (window_ns < 0 || (window_ns > 0 && window_ns < g)) {
    return Corrupt(
        absl::StrFormat("window of %d ns is shorter than its %d generations", window_ns, g));
  }
  if (header.capacity == 0 || !(header.fpr > 0 && header.fpr < 1)) {
    return Corrupt("needs a capacity and an fpr in (0, 1)");
  }
  if (header.insert_count != 0 || header.stages[0].insert_count != 0 ||
      header.stages[0].capacity != header.capacity) {
    return Corrupt("counts contradict the header");
  }
  // A running filter's epoch stays below 2^63: the clock's elapsed int64 ns over a span of at
  // least 1 ns, or one rotation per insert. Refusing the rest keeps epoch + 1 from wrapping or
  // reaching the "no generation yet" mark (a wrapped epoch would rotate forever).
  if (header.param2 >= kMaxEpoch) return Corrupt("epoch out of range");
  const uint64_t per_generation = WindowedFilter::KeysPerGeneration(header.capacity, g);
  if (window_ns == 0 && header.param3 > per_generation) {
    return Corrupt(absl::StrFormat("newest generation counts %d inserts, more than its %d",
                                   header.param3, per_generation));
  }
  // The layout field (0, the line, in every file written before layouts) names the shape of
  // every generation's blocks; the validator has refused unknown codes.
  const BlockLayout& stored = *FindBlockLayoutByFileCode(header.layout);
  const BlockShape& shape = *FindBlockShape(stored.layout);
  if (header.bits % (uint64_t{g} * shape.block_bits) != 0) {
    return Corrupt(absl::StrCat("bits are not whole ",
                                shape.layout == Layout::kLine512
                                    ? "lines"
                                    : absl::StrCat(std::string(shape.name), " blocks"),
                                " for every generation"));
  }
  absl::StatusOr<Plan> plan =
      PlanForSize(header.bits / g, header.hashes, per_generation, shape.layout, stored.probe);
  if (!plan.ok() || plan->bits != header.bits / g) {
    return Corrupt(absl::StrFormat(
        "bits %d with %d hashes is not a valid geometry%s", header.bits, header.hashes,
        plan.ok() ? "" : absl::StrCat(" (", plan.status().message(), ")")));
  }
  // The promise Create keeps: the predicted FPR over the window is at most the requested one.
  const double window_fpr = -std::expm1(g * std::log1p(-plan->expected_fpr));
  if (window_fpr > header.fpr * (1 + 1e-9)) {
    return Corrupt(absl::StrFormat("predicts FPR %g over the window, above its fpr %g", window_fpr,
                                   header.fpr));
  }
  return plan;
}

// The window's clock state (param2, param3): what Save writes and Flush brings up to date.
void PutClockState(FileHeader& header, uint64_t epoch, uint64_t clock_field) {
  header.param2 = epoch;
  header.param3 = clock_field;
}

}  // namespace

detail::KindFormat WindowedFilter::FileFormat() noexcept {
  return {.params = 4,
          .layouts = true,
          // Inspect, Load and LoadFromBytes share its verdict.
          .check = [](const FileHeader& header) { return GenerationPlanOf(header).status(); }};
}

absl::StatusOr<std::string> WindowedFilter::Write(const std::string* path) const {
  // One stage holding every generation's lines; the window and its clock in the params.
  FileHeader header = detail::SingleStageHeader(FilterKind::kWindowed, plan_, hasher_);
  header.bits = plan_.bits * generations_;
  header.capacity = capacity_;
  header.fpr = fpr_;
  header.stages = {{header.bits, plan_.hashes, capacity_, 0}};
  header.param0 = generations_ | uint64_t{static_cast<uint8_t>(refresh_)} << kRefreshShift;
  header.param1 = static_cast<uint64_t>(window_ns_);
  // The file is the filter as its clock says now, not at its last rotation: a reader takes the
  // later of E and its own clock's epoch, so a stale E would revive the generations that expired
  // since, were its clock behind this one. Their lines go out cleared, as a rotation would leave
  // them, from a copy: Save is const and lookups may read the lines meanwhile.
  const uint64_t now = EpochNow();
  PutClockState(header, now, ClockField());
  if (now == epoch()) {
    const std::span<const uint8_t> payload[] = {bytes()};
    return detail::WriteFilter(path, std::move(header), payload);
  }
  absl::StatusOr<FilterMemory> copy =
      detail::AllocateFilterMemory(bytes().size(), detail::StorageOptions{});  // zeroed
  if (!copy.ok()) return copy.status();
  uint64_t* const words = copy->words();
  for (uint32_t slot = 0; slot < generations_; ++slot) {
    if (!SlotLive(slot, now)) continue;
    for (uint64_t b = 0; b < blocks_; ++b) {
      // The same place in the copy as in this filter's blocks (block_at() is the layout).
      std::memcpy(words + (block_at(b, slot) - words_), block_at(b, slot),
                  block_words() * sizeof(uint64_t));
    }
  }
  const std::span<const uint8_t> payload[] = {{copy->data(), bytes().size()}};
  return detail::WriteFilter(path, std::move(header), payload);
}

absl::Status WindowedFilter::Save(const std::string& path) const { return Write(&path).status(); }

absl::StatusOr<std::string> WindowedFilter::SaveToBytes() const { return Write(nullptr); }

absl::Status WindowedFilter::Flush() {
  // The lines are the mapping's; the clock state lives in the header, so it is written here,
  // after the rotations the clock asks for: the header then records every expiry seen (a stale
  // epoch would revive them for a reader whose clock is behind), and the lines agree with it.
  Advance();
  return detail::FlushStorage(
      memory_, [this](FileHeader& header) { PutClockState(header, epoch(), ClockField()); });
}

absl::StatusOr<WindowedFilter> WindowedFilter::Open(detail::FilterFile& file,
                                                    const LoadOptions& options, WindowClock clock) {
  // A loaded file and a mapped one differ only in whose memory holds the lines.
  const FileHeader& header = file.header;
  absl::StatusOr<Plan> plan = GenerationPlanOf(header);  // the row check passed: this holds
  if (!plan.ok()) return plan.status();
  const Shape shape{GenerationsOf(header),
                    header.capacity,
                    header.fpr,
                    static_cast<int64_t>(header.param1),
                    static_cast<Refresh>(header.param0 >> kRefreshShift),
                    detail::HasherOf(header),
                    options.concurrent};
  WindowedFilter filter(detail::Own(std::move(file.stages[0])), *plan, shape, std::move(clock));
  filter.RestoreClock(header.param2, header.param3);
  return filter;
}

absl::StatusOr<WindowedFilter> WindowedFilter::Load(const std::string& path,
                                                    const LoadOptions& options, WindowClock clock) {
  return detail::LoadAs<WindowedFilter>(detail::Input{path, std::nullopt}, options,
                                        std::move(clock));
}

absl::StatusOr<WindowedFilter> WindowedFilter::LoadFromBytes(std::string_view bytes,
                                                             const LoadOptions& options,
                                                             WindowClock clock) {
  return detail::LoadAs<WindowedFilter>(detail::Input{std::string(detail::kBytesName), bytes},
                                        options, std::move(clock));
}

absl::StatusOr<WindowedFilter> WindowedFilter::Map(const std::string& path, MapMode mode,
                                                   const LoadOptions& options, WindowClock clock) {
  return detail::MapAs<WindowedFilter>(path, mode, options, std::move(clock));
}

}  // namespace bloomery
