// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// scalable_filter.h: ScalableFilter, a chain of BlockedFilter stages (or ClassicFilter stages,
// ScalableOptions::layout) that grows when full while keeping the total false-positive rate under a
// bound, for key counts nobody knows in advance.
//
// The construction of Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom Filters" (IPL
// 101(6), 2007). Stage i is a filter planned for C * s^i keys (C the initial capacity, s
// the growth factor) at FPR P * (1 - r) * r^i (r the tightening ratio). A key is added to the
// newest stage only; when that stage has received its planned number of keys a new one is
// created. A lookup asks every stage, so the chain's FPR is at most the sum of the stages' FPRs:
//   sum_i P (1 - r) r^i = P (1 - r^N) < P      however many (N) stages it grows to.
// Every stage is planned by its layout's formula (plan.h), so each stage's share is a promise, not
// an approximation, and so is the total. (A union may keep two stages of one level, each with
// that level's share: planned_fpr() then says the larger total; see UnionWith.)
//
// Choosing r (default kDefaultTightening = 0.9). Stage i costs ~1.44 * (log2(1/P) + log2(1/(1-r))
// + i * log2(1/r)) bits per key: small r tightens later stages fast, large r makes every stage pay
// for a small first share. Over the chain's memory relative to one right-sized BlockedFilter, 0.9
// is the minimum or within 1% of it, at the top of the paper's suggested 0.8-0.9; with growth 4
// the minimum moves to ~0.85 (growth 2's sweep: docs/DESIGN.md, "Tried and rejected").
//
// The price of not knowing n: besides the tightening, the newest stage is on average half empty
// (growth 2), so between two growth points the chain uses about 2x-3x the memory of a right-sized
// BlockedFilter at the same P (tests/scalable_filter_test.cc prints the ratio). Each lookup of an
// absent key costs one cache line per stage (~log_s(n/C) stages; k lines for partitioned stages),
// all prefetched at once, and it is memory-bound, so lookups cost a few times those of one
// BlockedFilter of the same bytes. Give a good initial capacity.
//
// Limits. Growth stops at `max_stages`, at `max_memory_bytes` (the total over all stages), or
// when the next stage cannot be planned or allocated; a non-scaling filter (`scaling = false`)
// never grows past its one stage (planned at P itself). From then on the filter is full():
// lookups and inserts of keys already present work as before, and a new key is refused — not
// added, reported as InsertResult::kRefused (TryInsert: ResourceExhausted naming the limit) —
// so the FPR never exceeds its bound and nothing is lost silently: a refused key is one the
// caller knows is not in the filter. Only Clear() makes a full filter accept keys again.
//
// Example:
//   absl::StatusOr<bloomery::ScalableFilter> f = bloomery::ScalableFilter::Create({
//       .capacity = 100'000,  // the first stage's
//       .fpr = 0.01,          // total, however far it grows
//       .memory = {.max_memory_bytes = 1 << 30},
//   });
//   if (!f.ok()) return f.status();
//   switch (f->Insert("https://example.com/a")) {
//     case bloomery::InsertResult::kAdded: ...;    // new: crawl it
//     case bloomery::InsertResult::kPresent: ...;  // seen before (or a false positive, < 1%)
//     case bloomery::InsertResult::kRefused: ...;  // f->full(): f->FullStatus() says why
//   }
//
// Thread safety. Single-writer mode (`concurrent = false`): any number of concurrent lookups, but
// writes (Insert*, TryInsert, Clear, UnionWith) must not overlap any other call. Concurrent mode:
// Insert*, TryInsert and MayContain* may run at once from any number of threads, while the chain
// grows. Lookups take no lock and never block or write: they read the published stage count
// (acquire) and only stages below it; a new stage is fully built before its pointer is published
// (release), and no stage is freed before the filter is destroyed or cleared. Inserts take the
// growth mutex only when the newest stage is full. A stage's key count is reserved atomically
// before its bits are set, so no stage ever receives more keys than it was planned for. Insert
// is a test-and-set over the whole chain: a key found in any stage is not added again. When
// several threads insert the same new key at once, at least one of them gets kAdded (more than
// one may, and if growth happens in between the key may land in two stages, which costs a little
// memory and nothing else). UnionWith may overlap lookups but not inserts; Clear overlaps nothing.
//
// Keys: std::string_view, uint64_t, or a KeyHash (key.h); each key is hashed once and the same
// KeyHash probes every stage.
#ifndef BLOOMERY_SCALABLE_FILTER_H_
#define BLOOMERY_SCALABLE_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/export.h"
#include "bloomery/filter.h"
#include "bloomery/key.h"
#include "bloomery/options.h"
#include "bloomery/plan.h"

namespace bloomery {

// Most stages a chain can hold (the size of its stage table). With growth 2 stage 47 would need
// more than 2^48 bits for any capacity, so the planner's limit is reached first.
inline constexpr uint32_t kMaxScalableStages = 64;
// Largest growth (RedisBloom's largest EXPANSION). Any growth from 1 keeps the total-FPR bound,
// which depends on the tightening alone; with growth 1 every stage has the first one's capacity,
// so a chain holds at most kMaxScalableStages times it. A stage whose capacity would overflow 64
// bits or need more than 2^48 bits is a full() chain, as with any growth.
inline constexpr uint32_t kMaxScalableGrowth = 32768;
// The default tightening ratio r; see the file comment for the measurements behind it.
inline constexpr double kDefaultTightening = 0.9;

// A chain's options. `hashing` (options.h) applies to every stage; `memory`: `concurrent` (see
// "Thread safety" above), `huge_pages` and `populate` apply to every stage, and
// `max_memory_bytes` caps the total bytes of all stages: creation fails with ResourceExhausted if
// the first stage alone exceeds it, later the filter becomes full() instead of growing past it
// (0: no cap on the total, but each stage must fit in this machine's memory). There is no `bits`
// or `hashes`: each stage is planned, not sized by hand.
struct ScalableOptions {
  // Keys the first stage is planned for (required, >= 1).
  uint64_t capacity = 0;
  // The bound P on the total false-positive rate of the chain, in (0, 1).
  double fpr = 0.01;
  // Each stage is planned for `growth` times the keys of the one before, 1..kMaxScalableGrowth:
  // 2 (the least memory wasted in a half-empty newest stage) or 4 (fewer stages, so cheaper
  // lookups) are the usual choices; 1 makes every stage the first one's size. Anything else is
  // InvalidArgument.
  uint32_t growth = 2;
  // Tightening ratio r in (0, 1): stage i gets FPR P * (1 - r) * r^i.
  double tightening = kDefaultTightening;
  // Most stages, 1..kMaxScalableStages; reaching it makes the filter full().
  uint32_t max_stages = kMaxScalableStages;
  // false: one stage planned for `capacity` keys at `fpr`, never grown; keys past the
  // capacity are refused.
  bool scaling = true;
  // Every stage's layout (layout.h): a block shape, line512 (the default), block256 or word64,
  // whose stages are BlockedFilters (one cache line per key and stage); or kPartitioned, whose
  // stages are ClassicFilters: the fewest bits for the FPR (a chain at tightening 0.5 then costs
  // what RedisBloom's does: the Redis module's default), k cache lines per key and stage.
  Layout layout = Layout::kLine512;
  // Every blocked stage's probe (layout.h): the newest unless kSalted is asked for.
  Probe probe = Probe::kLatest;
  HashOptions hashing;
  MemoryOptions memory;

  // Every stage's hasher (an unset integer hash resolved for `layout`, options.h).
  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};

namespace detail {
// A chain's stage: a BlockedFilter of the chain's block shape, or a ClassicFilter when its layout
// is Layout::kPartitioned. Every stage of a chain is of one kind.
using StageFilter = std::variant<BlockedFilter, ClassicFilter>;
}  // namespace detail

// Insert answers an InsertResult, not a bool: InsertAnswer (filter.h) says why.

class BLOOMERY_EXPORT ScalableFilter : public BatchForms<ScalableFilter, InsertResult>,
                                       public Persistent<ScalableFilter> {
 public:
  using Options = ScalableOptions;

  // Creates a chain with its first stage allocated.
  // Errors: InvalidArgument for capacity 0 or fpr outside (0, 1) or NaN (the messages of
  // CheckSizing, plan.h), growth outside [1, kMaxScalableGrowth], tightening outside
  // (0, 1) or NaN, max_stages outside [1, kMaxScalableStages], a first stage the planner cannot
  // make (more than 2^48 bits, or its fpr share P(1-r) out of (0, 1)); ResourceExhausted if the
  // first stage exceeds max_memory_bytes (0: this machine's memory) or cannot be allocated. Only a
  // chain that cannot grow is "full" (FullStatus); a filter being created never is.
  [[nodiscard]] static absl::StatusOr<ScalableFilter> Create(const ScalableOptions& options);

  // The FPR budget of stage `stage` under `options`: P (1 - r) r^stage, or P for a non-scaling
  // filter.
  [[nodiscard]] static double StageFpr(const ScalableOptions& options, uint32_t stage) noexcept;

  // The plan growth makes for a stage at `level` of a chain with `options` (valid ones, as Create
  // takes): C s^level keys in options.layout, its expected_fpr within StageFpr(options, level),
  // its memory WholeLineBytes(plan.bits) (plan.h). No limit of a chain (max_stages, the memory cap)
  // applies: level 0 is what a filter being created needs. Errors: InvalidArgument for a first
  // stage that cannot be planned (Create's message); ResourceExhausted for a later one (its
  // capacity overflows 64 bits, or it needs more than 2^48 bits).
  [[nodiscard]] static absl::StatusOr<Plan> PlanLevel(const ScalableOptions& options,
                                                      uint32_t level);

  // Moving is not thread-safe; a moved-from filter may only be destroyed or assigned to.
  ScalableFilter(ScalableFilter&&) noexcept;
  ScalableFilter& operator=(ScalableFilter&&) noexcept;
  ScalableFilter(const ScalableFilter&) = delete;
  ScalableFilter& operator=(const ScalableFilter&) = delete;
  ~ScalableFilter();

  // Adds a key unless some stage already reports it present. Grows the chain (allocating a stage,
  // under the growth mutex) when the newest stage has received its planned number of keys.
  // Cost: one prefetched cache line per stage; growth costs the new stage's allocation.
  // The std::string_view and uint64_t forms hash the key (BatchForms, filter.h).
  using BatchForms::Insert;
  [[nodiscard]] InsertResult Insert(const KeyHash& hash) noexcept;

  // Insert for code that handles errors as absl::Status: true if the key was added, false if it
  // was present; a refused key gives FullStatus() (ResourceExhausted) and is not added.
  [[nodiscard]] absl::StatusOr<bool> TryInsert(std::string_view key) {
    return TryInsert(hasher()(key));
  }
  [[nodiscard]] absl::StatusOr<bool> TryInsert(uint64_t key) { return TryInsert(hasher()(key)); }
  [[nodiscard]] absl::StatusOr<bool> TryInsert(const KeyHash& hash);

  // False: the key was certainly never added. True: it was, or it is a false positive (with
  // probability below the chain's bound P). Cost: one prefetched cache line per stage.
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // Batch forms (filter.h): InsertMany(keys, results) -> InsertCounts and MayContainMany(keys,
  // results) for a contiguous run of any key type, from BatchForms; each key's line in every
  // stage is prefetched before it is tested.

  // this |= other: afterwards every key of either answers present. Each of other's stages is ORed
  // into a stage of this chain of the same level (each stage of the options' series, C s^i keys at
  // P (1 - r) r^i, is a level; stage i is level i until a union) where the union surely fits that
  // stage's capacity: the key counts together fit it, or one stage's bits hold the other's (a
  // copy, an empty stage, a part of the same keys), or the fill of the ORed bits estimates at
  // most the capacity even when read four standard errors low (~3% at 10 bits/key); the stage
  // then counts that high reading, so later inserts cannot overfill it. A stage that does not
  // fit is copied as a stage of its own after this chain's, in other's order, with its level and
  // count. So two per-worker chains that both grew merge, and nothing holds more keys than it
  // was planned for; each copied stage adds its level's share to the bound, which planned_fpr()
  // reports (e.g. two full first stages kept: P + P (1 - r)). Inserts go on into the newest
  // stage, and growth continues past the highest level. O(bytes of both).
  // All or nothing: the stages to copy are built aside before this filter is written, so an
  // error leaves it unchanged. Lookups may overlap (bits are only set, copies published whole);
  // inserts may not.
  // Errors: FailedPrecondition if the options differ (initial capacity, fpr, growth, tightening,
  // seed, scaling) or a non-scaling filter's one stage would overfill; ResourceExhausted if the
  // copies would exceed max_stages or max_memory_bytes or cannot be allocated.
  absl::Status UnionWith(const ScalableFilter& other);
  // Whether UnionWith's option check would accept `other`.
  [[nodiscard]] absl::Status CheckCompatible(const ScalableFilter& other) const;

  // Persistence (filter.h, docs/FORMAT.md): Save, SaveToBytes, Load and LoadFromBytes, from
  // Persistent. Save writes every stage and its key count; not concurrent with inserts. Load also
  // checks that every stage is what the saved options would grow, and options.max_bytes becomes
  // the loaded chain's max_memory_bytes. There is no Map: a chain grows, and a mapping cannot.
  //
  // SaveHeaderToBytes: the start of SaveToBytes() without its payload, that is the header, the
  // stage table and the payload's checksums as the bits are now ([0, payload_offset),
  // docs/FORMAT.md): SaveToBytes() equals it followed by stage(0).bytes(), ..., stage(stage_count()
  // - 1).bytes(). For an embedder that sends the image in pieces straight from the stages' memory
  // (the Redis module's BF.SCANDUMP) instead of holding a copy: the pieces make one valid image as
  // long as no insert, Clear or union runs between this call and the last piece. O(bytes) to
  // checksum; the result is 4 KiB plus 8 bytes per MiB of filter, rounded up to 4 KiB.
  [[nodiscard]] absl::StatusOr<std::string> SaveHeaderToBytes() const;

  // Back to one empty stage; a full filter accepts keys again. Frees the other stages.
  void Clear() noexcept;

  // Whether growth has stopped for good (a limit is reached): new keys are refused.
  [[nodiscard]] bool full() const noexcept;
  // OkStatus() while not full; afterwards the ResourceExhausted status that says which limit.
  [[nodiscard]] absl::Status FullStatus() const;

  // Keys added (the sum of the stages' counts: exact, except after UnionWith, which estimates
  // the merged stages from their fill). O(stages).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The chain's FPR now, as its lookups behave: 1 - prod_i (1 - f_i), with f_i each stage's
  // exact FPR from its bits (BlockedFilter::EstimatedFpr, ClassicFilter::EstimatedFpr), corrected
  // for how the stages answer together. They are not independent: a key goes into the newest
  // stage only when no older stage answers for it, and every stage places a key's probes at the
  // same relative positions, so the newer stages' bits lie where the older ones' do not and the
  // product under-reads (RedisBloom's default chain at error rate 0.9: 0.725 for 0.862
  // measured). The correction is read on up to 32,768 fixed random hashes (the chain's rate of
  // "maybe" minus the product's on the same hashes: sd ~0.0015 at error rate 0.9), looked up in
  // every stage, at most 2^19 lookups; it is kept, and read again only when the chain grows a
  // stage or its newest stage fills another quarter. The result lies between the largest f_i and
  // their sum. O(bytes), plus those lookups when the correction is read again (1 to 10 ms for 8
  // stages, by layout).
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h), the whole chain's: each stage's Health (BlockedFilter's or ClassicFilter's,
  // so a stage above kHealthExactBytes is sampled: ~1 MiB read per such stage), combined:
  // `inserted` the stages' counts (EstimatedCount), estimated_count the sum of the stages' readings
  // from their fill, estimated_fpr as EstimatedFpr, planned_fpr the chain's bound, capacity the
  // allocated stages'. A chain that can still grow is near no limit: growth keeps its FPR under the
  // bound however many keys come, and the FPR approaching the bound is the series working (at r =
  // 0.5, RedisBloom's, three full stages give 7/8 of it; at 0.9, fifteen give 0.8). So while it can
  // grow the state is kOk, or kOverLimit if its bits read above the bound (a union's stage fuller
  // than its count). Once it cannot grow (non-scaling, or full()) the rule of health.h applies:
  // kNearLimit past 90% of capacity by the stage counts or above 0.8x the bound, and never
  // kOverLimit while the stage counts are within the capacity: it refuses the keys past it (and
  // the unions that would overfill a stage), so it keeps its bound, and a full chain, whose bits
  // read the bound give or take a few percent (where its keys fell), gets no fuller. Full is
  // kNearLimit.
  [[nodiscard]] FilterHealth Health() const;

  // Stages allocated so far (>= 1).
  [[nodiscard]] uint32_t stage_count() const noexcept;
  // Stage i < stage_count(), for inspection (its plan, bits, memory, bytes): a BlockedFilter, or
  // a ClassicFilter when layout() is Layout::kPartitioned, seen as the BitArray both are.
  [[nodiscard]] const BitArray& stage(uint32_t i) const noexcept;
  // Keys counted into stage i < stage_count().
  [[nodiscard]] uint64_t stage_keys(uint32_t i) const noexcept;
  // Stage i's level (UnionWith): its capacity is C s^level and its FPR share StageFpr(level).
  [[nodiscard]] uint32_t stage_level(uint32_t i) const noexcept;
  // Keys the allocated stages are planned for in total.
  [[nodiscard]] uint64_t capacity() const noexcept;
  // Total bytes of all stages.
  [[nodiscard]] uint64_t memory_bytes() const noexcept;
  // Bytes the chain keeps beside its stages' bits: its stage table (one slot per possible stage),
  // each stage's object and its memory's owner, about 0.6 KB plus 0.2 KB a stage. Taken from
  // MemoryOptions::allocator when one is set, as the bits are.
  [[nodiscard]] uint64_t bookkeeping_bytes() const noexcept;
  // The stage growth would add next, one level past the highest held (UnionWith), planned as
  // growth plans it: PlanLevel's plan, in the chain's layout. Or the ResourceExhausted status
  // growth would stop with (FullStatus's text): the chain is full() already, non-scaling, at
  // max_stages, the stage cannot be planned, or its memory (WholeLineBytes(plan.bits)) with
  // memory_bytes() exceeds the memory cap, options().memory.max_memory_bytes (0: none). An embedder
  // that holds a chain to a cap of its own which the chain does not carry (the Redis module's
  // MAX_BYTES, for a chain loaded over it) passes it as `max_memory_bytes`, so that its rule is the
  // library's. Allocates nothing; may overlap lookups, not inserts that grow the chain (the answer
  // would be stale). Cost: one plan (plan.h).
  [[nodiscard]] absl::StatusOr<Plan> NextStagePlan() const;
  [[nodiscard]] absl::StatusOr<Plan> NextStagePlan(uint64_t max_memory_bytes) const;
  [[nodiscard]] const ScalableOptions& options() const noexcept { return options_; }
  // Every stage's block shape (options().layout).
  [[nodiscard]] Layout layout() const noexcept { return options_.layout; }
  // Every blocked stage's probe (layout.h; resolved: never kLatest).
  [[nodiscard]] Probe probe() const noexcept { return ResolveProbe(options_.probe); }
  // The bound on the whole chain's FPR, however far it grows: P (options().fpr), plus the share
  // of each stage a union kept beside another of its level (UnionWith). O(stages).
  [[nodiscard]] double planned_fpr() const noexcept;
  // The bound asked for, P (options().fpr).
  [[nodiscard]] double fpr() const noexcept { return options_.fpr; }
  [[nodiscard]] uint64_t seed() const noexcept { return options_.hashing.seed; }
  [[nodiscard]] IntegerHash integer_hash() const noexcept { return options_.hashing.integer_hash; }
  [[nodiscard]] KeyHasher hasher() const noexcept { return options_.hasher(); }
  [[nodiscard]] bool concurrent() const noexcept { return options_.memory.concurrent; }

 private:
  struct Chain;

  explicit ScalableFilter(const ScalableOptions& options);
  // Persistence's hooks (lib/format/internal/persistence.h).
  friend class detail::FilterAccess;
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<ScalableFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options);
  // InvalidArgument for options Create refuses.
  static absl::Status CheckOptions(const ScalableOptions& options);
  // PlanLevel's plan for a stage at `level` placed at `index` (which its messages name).
  static absl::StatusOr<Plan> PlanAt(const ScalableOptions& options, uint32_t index,
                                     uint32_t level);
  // The plan of a stage at `level` placed at `index`, or why it cannot be added: the chain's
  // limits and `max_memory_bytes` (0: none) over memory_bytes() and `pending_bytes` (stages
  // being built that the cap must also count).
  absl::StatusOr<Plan> PlanStage(uint32_t index, uint32_t level, uint64_t pending_bytes,
                                 uint64_t max_memory_bytes) const;
  // How much the chain's FPR differs from 1 - prod (1 - f_i) (EstimatedFpr), read on fixed
  // random hashes; 0 for one stage.
  [[nodiscard]] double DependenceCorrection() const noexcept;
  // The chain's FPR from the independent model's `independent` and the stages' FPRs.
  [[nodiscard]] double ChainFpr(double independent,
                                std::span<const double> stage_fprs) const noexcept;
  // The level a new stage takes after the first `count` stages: one past the highest.
  [[nodiscard]] uint32_t NextLevel(uint32_t count) const noexcept;
  using StageFilter = detail::StageFilter;
  // An empty stage of that plan (not published).
  absl::StatusOr<StageFilter> BuildStage(const Plan& plan) const;
  // Installs stage `index` holding `count` keys and publishes it to readers.
  void PublishStage(uint32_t index, StageFilter filter, uint64_t capacity, uint64_t count,
                    uint32_t level);
  // Plans, allocates and publishes stage `index` at `level`; the caller holds the growth mutex or
  // is Create.
  absl::Status AddStage(uint32_t index, uint32_t level);
  // Called when stage `seen_count - 1` is full: true if the caller should retry (a stage was added
  // by it or another thread), false if the filter is full.
  bool Grow(uint32_t seen_count) noexcept;
  friend class BatchForms<ScalableFilter, InsertResult>;
  // The file format's check of a saved chain (scalable_filter.cc): it plans the stages as growth
  // would.
  friend struct ScalableChainCheck;
  // The batch loops, instantiated in scalable_filter.cc for every FilterKey.
  template <FilterKey Key>
  InsertCounts InsertKeys(std::span<const Key> keys, std::span<InsertResult> results) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;

  ScalableOptions options_;
  // The chain lives in the options' allocator when one is set (MemoryOptions::allocator).
  struct ChainDelete {
    void operator()(Chain* chain) const noexcept;
  };
  std::unique_ptr<Chain, ChainDelete> chain_;
};

}  // namespace bloomery

#endif  // BLOOMERY_SCALABLE_FILTER_H_
