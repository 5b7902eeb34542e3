// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// windowed_filter.h: WindowedFilter, "was this key inserted within the last window?", for keys
// that must expire: a crawler that revisits a page after N days, a cache guard that must forget
// expired rows.
//
// Design. G generations of a blocked filter (blocked_filter.h) rotated round-robin: inserts go to
// the newest generation; when it has covered its share of the window (W/G of the time, or its
// share of the W keys, below) the oldest generation is cleared and becomes the newest. A lookup
// ORs the live generations. The generations are interleaved: a key's block in generation j sits
// right after its block in generation j - 1 (block b*G + j), so a lookup reads one contiguous run
// of G blocks, one random memory access plus G - 1 adjacent blocks, not G random ones.
//
// Layouts (WindowedOptions::layout, layout.h): every generation is a blocked filter of one shape,
// the 64-byte line by default (every windowed filter and file made before layouts), or
// Layout::kBlock256 (32-byte blocks) or Layout::kWord64 (64-bit words), each generation planned
// exactly for its shape; Layout::kAuto lets the planner choose by `layout_choice`. A lookup reads G
// adjacent blocks: G lines, G/2 lines of block256, and with word64 G adjacent words, so for
// G = 2, 4 or 8 one cache line (the run starts at a multiple of G words) and for other G <= 8 at
// most two adjacent lines. The guarantee and the sizing below hold for every layout.
//
// Why not Age-Partitioned Bloom Filters (Shtul, Baquero, Almeida, 2020: k + l slices, an insert
// sets the k newest, a key is present when k consecutive slices have it). examples/windowed_study
// computes both at equal FPR over the whole window and equal slack (APBF l = G - 1):
//
//   p = 1%      generations (bits/key, lines)   APBF flat (bits/key, slices probed)  APBF blocked
//   G = 2       11.6, 2 adjacent                21.5, 2.5 random                     24.7, 1 line
//   G = 4       13.3, 4 adjacent                21.3, 3.9 random                     22.2, 1 line
//   G = 8       15.1, 8 adjacent                20.6, 4.7 random                     23.4, 1 line
//   p = 0.1%, G = 4: 19.5 bits/key against APBF's 34.2.
//
// (bits per key of the largest window the filter holds.) Each APBF slice holds the keys of k
// generations, so reaching p needs about twice the bits of G independent generations planned for
// p; APBF only catches up near G = 32 (18.8 against 19.3 bits/key at 1%), where a fine-grained
// window would make generations cost 32 lines a lookup. For the windows users ask for (G = 2..8)
// generations win on memory and, interleaved, cost about one memory access.
//
// The guarantee (G = generations): a key inserted at time t (or as the i-th counted insert) is
// reported present until at least t + W*(G-1)/G (through insert i + floor(W*(G-1)/G)) and is gone
// (answered only as a false positive) from t + W (insert i + W) on. With G = 4 a key lives between
// 3/4 W and W. Key-count mode keeps both bounds for every W and G, with whole inserts: generation e
// holds floor((e+1)*W/G) - floor(e*W/G) counted inserts (W/G when G divides W; otherwise
// floor(W/G) or ceil(W/G), any G consecutive generations W in all), so a key is gone after W
// later inserts and kept through floor(W*(G-1)/G), the most that both bounds allow. A window of
// W < G keys leaves some generations a share of 0, which rotation passes over at once: G still
// sets the lines a lookup reads, and W = 1 forgets a key at the next insert.
// In duration mode t is when the insert read the clock: an insert that must rotate does so once
// and inserts at the epoch it reached, so a span W/G shorter than a rotation (which clears a
// generation) shortens the life of keys inserted meanwhile by at most that rotation's time; it
// never keeps the insert rotating.
// In key-count mode the window counts the inserts that added the key to the newest generation
// (keys already there, and repeats under Refresh::kKeepFirstSeen, do not count).
//
// Sizing. `capacity` is the number of keys in one window (key-count mode: the window itself, W).
// Each generation is planned (plan.h) for ceil(capacity/G) keys at the FPR f with
// 1 - (1 - f)^G = fpr, so once every generation is full the FPR over the whole window is at most
// `fpr`: the generations share the key's line position, which makes their false positives
// positively correlated, and for such events P(any) <= 1 - prod(1 - P(each)) (Harris). In
// duration mode the promise needs no more than capacity/G keys in any W/G of time; EstimatedFpr
// says the truth.
//
// Refresh. Refresh::kOnInsert (a cache guard): inserting a key again adds it to the newest
// generation, so its age restarts. Refresh::kKeepFirstSeen (a crawler revisiting after W): a key
// already present is not added again, so it expires W after it was first seen, however often it
// is seen meanwhile.
//
// Example:
//   auto seen = bloomery::WindowedFilter::Create({
//       .capacity = 10'000'000,  // URLs in 7 days
//       .fpr = 0.01,
//       .window = std::chrono::hours(24 * 7),
//       .refresh = bloomery::Refresh::kKeepFirstSeen,
//   });
//   if (!seen.ok()) return seen.status();
//   if (seen->Insert(url)) Crawl(url);              // true: not seen within the last 7 days
//
// Thread safety. concurrent = false: any number of const calls at once, writes (Insert*, Advance,
// Clear, UnionWith) alone. concurrent = true: Insert*, MayContain* and Advance from any number of
// threads. Lookups never block and never write (expired generations are skipped by their epoch,
// not cleared by readers). A rotation (one thread, under a mutex only writers take) clears the
// oldest generation with relaxed atomic stores, then publishes the new epoch with a release
// store; an insert acquires the epoch before writing, so it never writes into a generation being
// cleared unless it stalls for G - 1 whole rotations. An insert that completed before a rotation
// began is never lost by it (only by expiry). In key-count mode a few concurrent inserts may land
// in a generation after it reached its share (at most one per thread racing the rotation).
//
// Keys: std::string_view (bytes), uint64_t (its 8 little-endian bytes), or a KeyHash (key.h).
// Hot-path calls are noexcept and allocate nothing.
//
// Files (docs/FORMAT.md, kind "windowed"): Save/Load, and Map + Flush, carry the generations'
// lines and the window's clock state, so expiry goes on across a restart as if the process had
// never stopped: key-count mode resumes at the same insert, and duration mode keeps expiring by the
// clock while the file sits on disk (a filter loaded after W has passed holds nothing).
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
  // Keys in one window; in key-count mode (window == 0) the window itself, in keys.
  uint64_t capacity = 0;
  // FPR over the whole window once it holds `capacity` keys, in (0, 1).
  double fpr = 0.01;
  // The window as a duration; zero selects key-count mode (the window is `capacity` inserts).
  std::chrono::nanoseconds window{0};
  // G, 2..64: keys live between W*(G-1)/G and W; each generation costs a line per lookup.
  uint32_t generations = 4;
  Refresh refresh = Refresh::kOnInsert;
  // Probes per key, 1..16 (1..8 for block256 and word64; 0: chosen by the planner).
  uint32_t hashes = 0;
  // Every generation's block shape (layout.h): the 64-byte line by default, kBlock256, kWord64,
  // or kAuto for the planner's choice by `layout_choice` (FilterOptions' meaning; kFastest's
  // memory cap is max_memory_bytes over all G generations).
  Layout layout = Layout::kLine512;
  LayoutChoice layout_choice = LayoutChoice::kSmallest;
  // Every generation's probe (layout.h): the newest unless kSalted is asked for.
  Probe probe = Probe::kLatest;
  HashOptions hashing;
  MemoryOptions memory;
  // Duration mode only; tests inject a fake clock. Empty: the system clock.
  WindowClock clock;

  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};

class BLOOMERY_EXPORT WindowedFilter : public BatchForms<WindowedFilter>, public WordArray {
 public:
  using Options = WindowedOptions;

  // Errors: InvalidArgument for capacity 0, fpr outside (0, 1) or NaN, hashes above 16 (above 8
  // for block256 and word64; the messages of CheckSizing, plan.h), a layout that is not blocked
  // (kPartitioned), generations outside 2..64, a negative window or one shorter than
  // `generations` nanoseconds;
  // ResourceExhausted over max_memory_bytes (0: this machine's memory) or when the kernel refuses
  // the memory.
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Create(const WindowedOptions& options);

  WindowedFilter(WindowedFilter&&) noexcept;
  WindowedFilter& operator=(WindowedFilter&&) noexcept;
  WindowedFilter(const WindowedFilter&) = delete;
  WindowedFilter& operator=(const WindowedFilter&) = delete;
  ~WindowedFilter();

  // Adds the key to the newest generation (under kKeepFirstSeen, only if it is not present).
  // Returns true if it was not present within the window (new, or expired), false if it was (or
  // is a false positive). Rotates first when the newest generation is full or its time is over.
  // Concurrent mode: of several threads inserting the same key at once, at least one is told
  // "new"; with Layout::kWord64 exactly one (the key's bits in the newest generation are one word,
  // set by one fetch_or), unless a rotation falls inside the race (each thread may then set the
  // key in another generation).
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  using BatchForms::Insert;
  bool Insert(const KeyHash& hash) noexcept;

  // True if the key was inserted within the window (see the guarantee above) or is a false
  // positive; false if it certainly was not.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // Batch forms (filter.h): InsertMany(keys, was_new) and MayContainMany(keys, results) for a
  // contiguous run of any key type, from BatchForms. A lookup batch reads the clock once.

  // Duration mode: rotates as the clock says (inserts do this themselves; call it from a timer to
  // release expired generations' bits without inserting). Key-count mode: nothing. noexcept; in
  // concurrent mode it may run beside inserts and lookups.
  void Advance() noexcept;

  // this |= other, generation by generation: afterwards this filter holds every key either held,
  // each kept as long as the guarantee above promises from its insert. So the generations must be
  // the same stretches of keys or of time. Key-count mode: both at the same epoch (the same number
  // of rotations). Duration mode: both windows began at the same clock time (copies of one
  // filter's file, not filters created apart: their generations begin and end at other times, and
  // the other's keys would expire up to W/G early), and both at the same epoch by their clocks:
  // this filter Advances first and `other` is read as its clock says, so the caller need not
  // Advance either. `other` must not be written meanwhile.
  // Errors: FailedPrecondition unless both have the same layout (BlockedFilter's message),
  // geometry, seed, generations, window and refresh policy, (duration mode) the same origin, and
  // the same epoch as above (in duration mode the epochs differ only where one filter is ahead of
  // its clock: a clock behind its saved state).
  absl::Status UnionWith(const WindowedFilter& other);
  // What UnionWith would refuse, without writing (the epochs as the clocks say now).
  [[nodiscard]] absl::Status CheckCompatible(const WindowedFilter& other) const;

  // Persistence (docs/FORMAT.md, kind "windowed"): the contracts of Persistent's (filter.h), with a
  // clock to load at, so the kind declares its own. Not concurrent with writers. Duration mode
  // stores when the window's epoch 0 began on the clock's scale, so `clock` given to Load (empty:
  // the system clock) must count from the saving clock's origin: the default counts from the Unix
  // epoch, so a file moves between processes and machines whose clocks agree. A clock behind the
  // saved state never brings expired keys back. In key-count mode `clock` is unused.
  // Save writes the filter as its clock says at the call (the epoch it would Advance to), so the
  // file records every expiry already seen; when a generation's time ended after the last insert
  // or Advance, the lines go out from a copy with the expired generations cleared (the size of
  // bytes() more memory during the call; Advance() first to avoid it).
  [[nodiscard]] absl::Status Save(const std::string& path) const;
  [[nodiscard]] absl::StatusOr<std::string> SaveToBytes() const;
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Load(const std::string& path,
                                                           const LoadOptions& options = {},
                                                           WindowClock clock = {});
  [[nodiscard]] static absl::StatusOr<WindowedFilter> LoadFromBytes(std::string_view bytes,
                                                                    const LoadOptions& options = {},
                                                                    WindowClock clock = {});
  // Maps a saved filter without copying its lines (MapMode in options.h), at the file's clock
  // state as Load is (`clock` as for Load). The file must stay the same size while mapped.
  // kReadOnly: copy-on-write; inserts and rotations stay private. kReadWrite: inserts and the
  // clearing of expired generations reach the file, DIRTY while mapped (Mappable, filter.h). The
  // header's clock state is written only by Flush: after a crash the file (loaded with
  // allow_dirty) has every line the kernel wrote back but the clock state of the last Flush (or
  // Map), so keys in generations begun after it may be forgotten before their time; flush after
  // rotations to bound that. Same errors as Load.
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Map(const std::string& path, MapMode mode,
                                                          const LoadOptions& options = {},
                                                          WindowClock clock = {});
  // For a kReadWrite mapping: Advances (rotating the generations the clock has expired, in the
  // file), then writes the clock state (epoch, and the counted inserts or when epoch 0 began) into
  // the header with the checksums and msyncs, so the file loads (as is while mapped, its checksums
  // matching; byte for byte what Save writes once unmapped unchanged) or maps where this filter is.
  // FailedPrecondition for a filter that is not a read-write mapping. Not concurrent with inserts
  // or Advance (as every kind's Flush): a rotation racing it could write lines and an epoch that
  // disagree.
  [[nodiscard]] absl::Status Flush();

  // Forgets every key and restarts the window at the current time. Not concurrent-safe.
  void Clear() noexcept;

  // Keys inserted within the window, summed over the live generations from their fill (a key
  // refreshed into a newer generation counts in each it is in). O(bytes).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The FPR now over the whole window: 1 - prod over live generations of (1 - that generation's
  // exact FPR from its bits). O(bytes).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h), the live window's: EstimatedFpr and EstimatedCount's readings of the live
  // generations (read whole up to kHealthExactBytes of the whole array, above from a stratified
  // sample of ~1 MiB of interleaved blocks), fill_ratio over the live generations' bits,
  // capacity the window's keys. Unset `inserted`. Key-count mode: rotation keeps the window at
  // its capacity, so a full window is its normal state, not a limit, and its FPR there is the
  // planned one give or take a few percent: kOk, or kOverLimit above 1.25x planned_fpr (more
  // keys than a window in its generations: a union of two windows). Duration mode:
  // ClassifyHealth's rule (more than capacity keys within one window overfill it).
  [[nodiscard]] FilterHealth Health() const;

  // One generation's plan: ceil(capacity/G) keys at the per-generation FPR.
  [[nodiscard]] const Plan& generation_plan() const noexcept { return plan_; }
  // The FPR requested over the whole window (options.fpr).
  [[nodiscard]] double fpr() const noexcept { return fpr_; }
  // The FPR promised over the whole window once it holds `capacity` keys (<= options.fpr).
  [[nodiscard]] double planned_fpr() const noexcept;
  [[nodiscard]] uint32_t generations() const noexcept { return generations_; }
  // Blocks of the layout's shape per generation (lines, 256-bit blocks or 64-bit words).
  [[nodiscard]] uint64_t blocks() const noexcept { return blocks_; }
  // Every generation's block shape (never kAuto: the planner's choice once created).
  [[nodiscard]] Layout layout() const noexcept { return plan_.layout; }
  // Every generation's probe (layout.h).
  [[nodiscard]] Probe probe() const noexcept { return plan_.probe; }
  [[nodiscard]] uint32_t hashes() const noexcept { return plan_.hashes; }
  [[nodiscard]] Refresh refresh() const noexcept { return refresh_; }
  // Duration mode: W in nanoseconds; key-count mode: 0 (the window is capacity() inserts).
  [[nodiscard]] int64_t window_ns() const noexcept { return window_ns_; }
  [[nodiscard]] uint64_t capacity() const noexcept { return capacity_; }
  // The most keys one generation's share of `capacity` holds, ceil(capacity / generations),
  // without overflow (capacity + generations - 1 wraps near 2^64): every generation is planned for
  // it; key-count mode rotates after floor(capacity / generations) or this many inserts.
  [[nodiscard]] static constexpr uint64_t KeysPerGeneration(uint64_t capacity,
                                                            uint32_t generations) noexcept {
    return capacity / generations + (capacity % generations != 0 ? 1 : 0);
  }
  // seed(), integer_hash(), hasher(), concurrent(), memory_bytes(), huge_page_bytes(), mapped() and
  // bytes() come from WordArray (filter.h). bytes() holds every generation's blocks, interleaved
  // (block b*G + j is block b of slot j), in whole 64-byte lines. The newest generation's number
  // (rotations since creation); ages come from it.
  [[nodiscard]] uint64_t epoch() const noexcept;
  // The epoch the window is at by its clock now (epoch() is the one reached by the last write or
  // Advance): what lookups, Health and Save go by. O(1).
  [[nodiscard]] uint64_t current_epoch() const noexcept { return EpochNow(); }
  // Generation `age` (0 = newest, up to generations() - 1): how many keys it holds, estimated
  // from its bits, and whether it is still live. O(bytes / G).
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

  // What Create and a loaded file both fix: the lines, the plan of one generation, the window.
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
  // Puts the window at `epoch` (slot j then holds the epoch e <= epoch with e = j mod G,
  // e > epoch - G, or none): Create, Clear and Load share it.
  void Restart(uint64_t epoch) noexcept;
  // The file's clock field: key-count mode, inserts counted into the newest generation; duration
  // mode, the clock time at which epoch 0 began.
  [[nodiscard]] uint64_t ClockField() const noexcept;
  // A loaded file's state: the window at `epoch`, and its clock field.
  void RestoreClock(uint64_t epoch, uint64_t clock_field) noexcept;
  // Persistence's hooks (lib/format/internal/persistence.h); Open also takes the clock to load at.
  friend class detail::FilterAccess;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<WindowedFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options,
                                                           WindowClock clock);
  // The epoch the filter should be at now: the stored one, or the clock's in duration mode.
  [[nodiscard]] uint64_t EpochNow() const noexcept;
  // Key-count mode: the counted inserts a generation in slot `slot` (epoch e, slot = e mod G)
  // holds before the next rotation, floor((e + 1) * W / G) - floor(e * W / G) with W = capacity,
  // which depends on e mod G only (0 is possible when W < G).
  [[nodiscard]] uint64_t KeysIn(uint32_t slot) const noexcept;
  // Whether slot `slot` holds a live generation at epoch `now`.
  [[nodiscard]] bool SlotLive(uint32_t slot, uint64_t now) const noexcept;
  // UnionWith's checks: everything but the epochs, then the epochs (`now` this filter's).
  [[nodiscard]] absl::Status CheckSameWindow(const WindowedFilter& other) const;
  [[nodiscard]] absl::Status CheckSameEpoch(uint64_t now, uint64_t other_now) const;
  // Rotates until the newest generation's epoch is `target` (no-op if it already is).
  void RotateTo(uint64_t target) noexcept;
  [[nodiscard]] bool TestLive(const KeyHash& hash, uint64_t block, uint64_t now) const noexcept;
  // Block `block` of slot `slot`'s generation.
  [[nodiscard]] uint64_t* block_at(uint64_t block, uint32_t slot) const noexcept {
    return words_ + ((block * generations_ + slot) << block_shift_);
  }
  // Words of a block: 8 (line), 4 (block256), 1 (word64).
  [[nodiscard]] uint32_t block_words() const noexcept { return uint32_t{1} << block_shift_; }
  // Per interleaved run of G blocks, for each slot in `slots` (a bit per slot): its block's FPR
  // term (values 2 * slot; 0 without `fpr`) and set bits (2 * slot + 1) (ScanUnits,
  // health_scan.h).
  [[nodiscard]] detail::ScanTotals Scan(uint64_t slots, bool sample, bool fpr = true) const;
  // The live slots at epoch `now`, a bit per slot.
  [[nodiscard]] uint64_t LiveSlots(uint64_t now) const noexcept;
  friend class BatchForms<WindowedFilter>;
  // The batch loops, instantiated in windowed_filter.cc for every FilterKey.
  template <FilterKey Key>
  size_t InsertKeys(std::span<const Key> keys, std::span<bool> was_new) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;

  uint64_t blocks_ = 0;
  uint32_t generations_ = 0;
  // log2 of the words of a block: 3 (line), 2 (block256), 0 (word64).
  uint32_t block_shift_ = 3;
  // The place of the layout and probe in kBlockLayouts (layout.h): which kernels serve it.
  uint32_t stored_ = 0;
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
