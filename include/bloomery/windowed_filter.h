// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// windowed_filter.h: WindowedFilter, "was this key inserted within the last window?", for keys
// that must expire (a crawler revisiting pages after N days, a cache guard that forgets rows).
// G generations of a blocked filter (any blocked layout) rotate round-robin: inserts go to the
// newest; when it has covered its share of the window the oldest is cleared and becomes the
// newest. A key's G blocks are adjacent, so a lookup is one memory access plus G - 1 adjacent
// blocks. Why generations and not Age-Partitioned filters: docs/DESIGN.md.
//
// The guarantee: a key inserted at time t (or as counted insert i) is present through at least
// t + W*(G-1)/G (insert i + floor(W*(G-1)/G)) and gone, but for false positives, from t + W
// (insert i + W) on, for every W and G. Key-count mode counts the inserts that added a key to the
// newest generation. Duration mode: an insert that must rotate does so once; a span W/G shorter
// than a rotation shortens the life of keys inserted meanwhile by at most that rotation's time.
// Sizing: each generation is planned for ceil(capacity/G) keys at f with 1 - (1 - f)^G = fpr, so
// the whole window's FPR is at most `fpr` while no W/G holds more than capacity/G keys.
//
//   auto seen = bloomery::WindowedFilter::Create({.capacity = 10'000'000, .fpr = 0.01,
//       .window = std::chrono::hours(24 * 7), .refresh = bloomery::Refresh::kKeepFirstSeen});
//   if (!seen.ok()) return seen.status();
//   if (seen->Insert(url)) Crawl(url);  // true: not seen within the last 7 days
//
// Thread safety: concurrent = false: const calls at once, writes (Insert*, Advance, Clear,
// UnionWith) alone. concurrent = true: Insert*, MayContain* and Advance from any number of
// threads; lookups never block or write. An insert completed before a rotation began is never
// lost by it (only by expiry); in key-count mode a generation may take one extra insert per thread
// racing its rotation. Keys: as BlockedFilter's; hot-path calls are noexcept and allocate nothing.
// Files (docs/FORMAT.md) carry the clock state: expiry goes on across a restart as if the process
// never stopped (a duration-mode file loaded after W holds nothing).
#ifndef BLOOMERY_WINDOWED_FILTER_H_
#define BLOOMERY_WINDOWED_FILTER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/key.h"
#include "bloomery/layout.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {

enum class Refresh : uint8_t {
  kOnInsert = 0,       // a repeated insert restarts the key's age (cache guards)
  kKeepFirstSeen = 1,  // a key expires W after its first insert in the window (revisit crawls)
};

// Nanoseconds since an arbitrary fixed origin; the default is the system (wall) clock.
using WindowClock = std::function<int64_t()>;

struct WindowedOptions {
  uint64_t capacity = 0;  // keys in one window (key-count mode: the window, W)
  double fpr = 0.01;      // over the whole window once it holds `capacity` keys, in (0, 1)
  std::chrono::nanoseconds window{0};  // zero: key-count mode
  uint32_t generations = 4;            // G, 2..64: each costs a block per lookup
  Refresh refresh = Refresh::kOnInsert;
  uint32_t hashes = 0;  // 1..16 (1..8 for block256 and word64); 0: the planner's
  // As FilterOptions'; kFastest's memory cap is max_memory_bytes over all G generations.
  Layout layout = Layout::kLine512;
  LayoutChoice layout_choice = LayoutChoice::kSmallest;
  Probe probe = Probe::kLatest;
  HashOptions hashing;
  MemoryOptions memory;
  WindowClock clock;  // duration mode; empty: the system clock

  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};

class BLOOMERY_EXPORT WindowedFilter : public BatchForms<WindowedFilter>, public WordArray {
 public:
  using Options = WindowedOptions;

  // InvalidArgument for bad sizing (CheckSizing), kPartitioned, generations outside 2..64, a
  // negative window or one under `generations` ns; ResourceExhausted past max_memory_bytes.
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Create(const WindowedOptions& options);

  WindowedFilter(WindowedFilter&&) noexcept;
  WindowedFilter& operator=(WindowedFilter&&) noexcept;
  WindowedFilter(const WindowedFilter&) = delete;
  WindowedFilter& operator=(const WindowedFilter&) = delete;
  ~WindowedFilter();

  // Adds the key to the newest generation (kKeepFirstSeen: only if absent), rotating first when
  // due. True if it was not present within the window. Of racing inserters of a key at least one
  // is told "new" (with kWord64 exactly one, unless a rotation falls inside the race).
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // True if the key was inserted within the window (the guarantee above) or a false positive.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // Duration mode: rotates as the clock says (as inserts do), e.g. from a timer. Key-count mode:
  // nothing. Concurrent mode: may run beside inserts and lookups.
  void Advance() noexcept;

  // this |= other, generation by generation; each key kept as the guarantee promises. `other`
  // not written meanwhile. FailedPrecondition unless layout, geometry, seed, generations, window,
  // refresh and epoch (by each clock) match, and in duration mode the origin too (copies of one
  // filter's file: filters created apart would expire each other's keys early).
  absl::Status UnionWith(const WindowedFilter& other);
  [[nodiscard]] absl::Status CheckCompatible(const WindowedFilter& other) const;

  // Persistent's contracts (filter.h) with a clock to load at (duration mode: counting from the
  // saving clock's origin, the Unix epoch by default; a clock behind never revives keys). Not
  // concurrent with writers. Save writes the epoch the clock says (from a copy, bytes() more
  // memory, when a generation expired since the last write: Advance() first to avoid it).
  [[nodiscard]] absl::Status Save(const std::string& path) const;
  [[nodiscard]] absl::StatusOr<std::string> SaveToBytes() const;
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Load(const std::string& path,
                                                           const LoadOptions& options = {},
                                                           WindowClock clock = {});
  [[nodiscard]] static absl::StatusOr<WindowedFilter> LoadFromBytes(std::string_view bytes,
                                                                    const LoadOptions& options = {},
                                                                    WindowClock clock = {});
  // Mappable's contract (filter.h). The clock state is written only by Flush: after a crash,
  // keys in generations begun since may be forgotten early (flush after rotations).
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Map(const std::string& path, MapMode mode,
                                                          const LoadOptions& options = {},
                                                          WindowClock clock = {});
  // Advances, then writes the clock state, checksums and msync (Mappable's Flush). Not
  // concurrent with inserts or Advance.
  [[nodiscard]] absl::Status Flush();

  // Forgets every key and restarts the window at the current time. Not concurrent-safe.
  void Clear() noexcept;

  // Keys in the live generations, from their fill (a refreshed key counts in each). O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The window's FPR now: 1 - prod over live generations of (1 - its FPR). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // The live window's (health.h). Key-count mode, where a full window is normal: kOk, or
  // kOverLimit above 1.25x planned_fpr. Duration mode: ClassifyHealth's rule.
  [[nodiscard]] FilterHealth Health() const;

  [[nodiscard]] const Plan& generation_plan() const noexcept { return plan_; }  // one generation's
  [[nodiscard]] double fpr() const noexcept { return fpr_; }                    // options.fpr
  // The FPR promised over the whole window once it holds `capacity` keys (<= options.fpr).
  [[nodiscard]] double planned_fpr() const noexcept;
  [[nodiscard]] uint32_t generations() const noexcept { return generations_; }
  [[nodiscard]] uint64_t blocks() const noexcept { return blocks_; }     // per generation
  [[nodiscard]] Layout layout() const noexcept { return plan_.layout; }  // never kAuto
  [[nodiscard]] Probe probe() const noexcept { return plan_.probe; }
  [[nodiscard]] uint32_t hashes() const noexcept { return plan_.hashes; }
  [[nodiscard]] Refresh refresh() const noexcept { return refresh_; }
  [[nodiscard]] int64_t window_ns() const noexcept { return window_ns_; }  // 0: key-count mode
  [[nodiscard]] uint64_t capacity() const noexcept { return capacity_; }
  // ceil(capacity / generations) without overflow: the keys each generation is planned for.
  [[nodiscard]] static constexpr uint64_t KeysPerGeneration(uint64_t capacity,
                                                            uint32_t generations) noexcept {
    return capacity / generations + (capacity % generations != 0 ? 1 : 0);
  }
  // In bytes() (filter.h) block b*G + j is block b of slot j. epoch(): rotations reached by the
  // last write or Advance; current_epoch(): by the clock now, what lookups and Save go by.
  [[nodiscard]] uint64_t epoch() const noexcept;
  [[nodiscard]] uint64_t current_epoch() const noexcept { return EpochNow(); }
  // Generation `age` (0 = newest): its estimated keys and whether it is live. O(bytes / G).
  struct GenerationInfo {
    uint64_t epoch = 0;
    bool live = false;
    double estimated_keys = 0;
  };
  [[nodiscard]] GenerationInfo generation(uint32_t age) const noexcept;

 private:
  // Epochs, counters, the writers' mutex and the clock: atomics and a mutex cannot move, so they
  // live behind one pointer and the filter moves.
  struct State;

  struct Shape {
    uint32_t generations = 0;
    uint64_t capacity = 0;
    double fpr = 0;
    int64_t window_ns = 0;
    Refresh refresh = Refresh::kOnInsert;
    KeyHasher hasher;
    bool concurrent = false;
  };
  WindowedFilter(FilterMemory memory, const Plan& plan, const Shape& shape, WindowClock clock);
  // Puts the window at `epoch` (slot j holds the live epoch e = j mod G, or none).
  void Restart(uint64_t epoch) noexcept;
  [[nodiscard]] uint64_t ClockField() const noexcept;
  void RestoreClock(uint64_t epoch, uint64_t clock_field) noexcept;
  friend class detail::FilterAccess;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options,
                                                           WindowClock clock);
  [[nodiscard]] uint64_t EpochNow() const noexcept;
  // Key-count mode: slot's share, floor((e + 1) * W / G) - floor(e * W / G) (0 when W < G).
  [[nodiscard]] uint64_t KeysIn(uint32_t slot) const noexcept;
  [[nodiscard]] bool SlotLive(uint32_t slot, uint64_t now) const noexcept;
  [[nodiscard]] absl::Status CheckSameWindow(const WindowedFilter& other) const;
  [[nodiscard]] absl::Status CheckSameEpoch(uint64_t now, uint64_t other_now) const;
  void RotateTo(uint64_t target) noexcept;
  [[nodiscard]] bool TestLive(const KeyHash& hash, uint64_t block, uint64_t now) const noexcept;
  [[nodiscard]] uint64_t* block_at(uint64_t block, uint32_t slot) const noexcept {
    return words_ + ((block * generations_ + slot) << block_shift_);
  }
  [[nodiscard]] uint32_t block_words() const noexcept { return uint32_t{1} << block_shift_; }
  [[nodiscard]] detail::ScanTotals Scan(uint64_t slots, bool sample, bool fpr = true) const;
  [[nodiscard]] uint64_t LiveSlots(uint64_t now) const noexcept;
  friend class BatchForms<WindowedFilter>;
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;

  uint64_t blocks_ = 0;
  uint32_t generations_ = 0;
  uint32_t block_shift_ = 3;  // log2 of a block's words
  uint32_t stored_ = 0;       // the place of the layout and probe in kBlockLayouts
  Plan plan_;
  uint64_t capacity_ = 0;
  double fpr_ = 0;               // requested over the whole window
  uint64_t per_generation_ = 0;  // KeysPerGeneration: the keys one generation is planned for
  int64_t window_ns_ = 0;
  int64_t span_ns_ = 0;    // window_ns_ / generations_
  int64_t origin_ns_ = 0;  // clock time at which epoch 0 began
  Refresh refresh_ = Refresh::kOnInsert;
  std::unique_ptr<State> state_;
};

}  // namespace bloomery

#endif  // BLOOMERY_WINDOWED_FILTER_H_
