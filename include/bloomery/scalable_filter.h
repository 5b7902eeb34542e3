// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// scalable_filter.h: ScalableFilter, a chain of filter stages that grows when full while keeping
// its total false-positive rate under a bound P, for key counts nobody knows in advance.
//
// Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom Filters" (IPL 101(6), 2007): stage i
// is planned (plan.h) for C s^i keys at FPR P (1 - r) r^i (C the initial capacity, s the growth,
// r the tightening), so the chain's FPR stays under sum_i P (1 - r) r^i < P. Keys go into the
// newest stage; a lookup asks every stage, one prefetched cache line each (k if partitioned).
// Not knowing n costs about 2x-3x the memory of one right-sized BlockedFilter (the tightening's
// bits, a newest stage half empty on average): give a good initial capacity.
//
// Growth stops at max_stages, at memory.max_memory_bytes, or where a stage cannot be planned or
// allocated (a non-scaling chain has one stage, planned at P). The chain is then full(): keys
// present answer as before, and new keys are refused (kRefused), never added past the bound.
//
//   absl::StatusOr<bloomery::ScalableFilter> f = bloomery::ScalableFilter::Create(
//       {.capacity = 100'000, .fpr = 0.01, .memory = {.max_memory_bytes = 1 << 30}});
//   if (!f.ok()) return f.status();
//   if (f->Insert("https://example.com/a") == bloomery::InsertResult::kRefused) {
//     return f->FullStatus();  // which limit
//   }
//
// Thread safety. Single-writer mode (memory.concurrent false): lookups run together, a write
// (Insert*, TryInsert, Clear, UnionWith) with no other call. Concurrent mode: inserts and lookups
// from any threads as the chain grows (lookups never lock, no stage overfills); of threads
// inserting one new key at once, one at least gets kAdded. UnionWith may overlap lookups, not
// inserts; Clear overlaps nothing.
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

inline constexpr uint32_t kMaxScalableStages = 64;  // most stages a chain holds
// Largest growth, RedisBloom's largest EXPANSION. Growth 1 makes every stage the first one's size.
inline constexpr uint32_t kMaxScalableGrowth = 32768;
// The least memory over a chain's growth (docs/DESIGN.md, "Tried and rejected").
inline constexpr double kDefaultTightening = 0.9;

// A chain's options: every stage is planned (no bits or hashes). `hashing` and `memory` (options.h)
// apply to every stage, but memory.max_memory_bytes caps all stages' total (0: none).
struct ScalableOptions {
  uint64_t capacity = 0;  // keys the first stage is planned for (required, >= 1)
  double fpr = 0.01;      // the bound P on the chain's total FPR, in (0, 1)
  // Stage i + 1's keys over stage i's, 1..kMaxScalableGrowth: 2 wastes least, 4 looks up fastest.
  uint32_t growth = 2;
  double tightening = kDefaultTightening;    // r in (0, 1): stage i's FPR is P (1 - r) r^i
  uint32_t max_stages = kMaxScalableStages;  // 1..kMaxScalableStages
  bool scaling = true;  // false: one stage for `capacity` keys at `fpr`, refusing keys past it
  // Every stage's layout (layout.h): a block shape, BlockedFilter stages (a cache line per key and
  // stage), or kPartitioned, ClassicFilter stages (fewest bits, k lines; RedisBloom's at r = 0.5).
  Layout layout = Layout::kLine512;
  Probe probe = Probe::kLatest;  // every blocked stage's probe (layout.h)
  HashOptions hashing;
  MemoryOptions memory;

  // Every stage's hasher (an unset integer hash resolved for `layout`, options.h).
  [[nodiscard]] KeyHasher hasher() const noexcept { return hashing.hasher(layout); }
};

namespace detail {
using StageFilter = std::variant<BlockedFilter, ClassicFilter>;  // one kind per chain
}  // namespace detail

class BLOOMERY_EXPORT ScalableFilter : public BatchForms<ScalableFilter, InsertResult>,
                                       public Persistent<ScalableFilter> {
 public:
  using Options = ScalableOptions;

  // A chain with its first stage allocated. Errors: InvalidArgument for an option out of range or
  // a first stage plan.h cannot make; ResourceExhausted if it exceeds the cap or cannot allocate.
  [[nodiscard]] static absl::StatusOr<ScalableFilter> Create(const ScalableOptions& options);

  // Stage `stage`'s FPR budget: P (1 - r) r^stage, or P for a non-scaling chain.
  [[nodiscard]] static double StageFpr(const ScalableOptions& options, uint32_t stage) noexcept;
  // The plan of a stage at `level` (C s^level keys within StageFpr, WholeLineBytes(plan.bits) of
  // memory), no chain limit applied. Errors: Create's at level 0, else ResourceExhausted.
  [[nodiscard]] static absl::StatusOr<Plan> PlanLevel(const ScalableOptions& options,
                                                      uint32_t level);

  ScalableFilter(ScalableFilter&&) noexcept;  // not thread-safe; the moved-from may be destroyed
  ScalableFilter& operator=(ScalableFilter&&) noexcept;
  ScalableFilter(const ScalableFilter&) = delete;
  ScalableFilter& operator=(const ScalableFilter&) = delete;
  ~ScalableFilter();

  // Test-and-set over the chain: kPresent if a stage answers for the key, else kAdded to the
  // newest stage (growing the chain when it is full), or kRefused when the chain cannot grow.
  using BatchForms::Insert;
  [[nodiscard]] InsertResult Insert(const KeyHash& hash) noexcept;

  // Insert as a status: true added, false present, FullStatus() where refused.
  [[nodiscard]] absl::StatusOr<bool> TryInsert(std::string_view key) {
    return TryInsert(hasher()(key));
  }
  [[nodiscard]] absl::StatusOr<bool> TryInsert(uint64_t key) { return TryInsert(hasher()(key)); }
  [[nodiscard]] absl::StatusOr<bool> TryInsert(const KeyHash& hash);

  // False: never added. True: added, or a false positive (probability below P).
  using BatchForms::MayContain;
  [[nodiscard]] bool MayContain(const KeyHash& hash) const noexcept;

  // InsertMany under a memory cap of the caller's too, `max_memory_bytes` (0: none): a key needing
  // a new stage is refused where that stage would take memory_bytes() over it, and the chain stays
  // open (not full()) for a later call under another cap. Keys present, and new keys the newest
  // stage has room for, are answered and added as by Insert, even over the cap.
  template <KeyRange Keys>
  InsertCounts InsertManyUnderCap(const Keys& keys, std::span<InsertResult> results,
                                  uint64_t max_memory_bytes) noexcept {
    return InsertKeys(KeySpan(keys), results, max_memory_bytes);
  }

  // this |= other (CheckCompatible options). Each of other's stages is ORed into this chain's stage
  // of its level where the union surely fits its capacity (by counts, bits, or fill read 4 standard
  // errors low), else kept beside, adding its share to planned_fpr(). All or nothing; O(bytes).
  // Errors: FailedPrecondition (other options, an overfilled non-scaling stage), ResourceExhausted.
  absl::Status UnionWith(const ScalableFilter& other);
  [[nodiscard]] absl::Status CheckCompatible(const ScalableFilter& other) const;

  // Persistence (filter.h, docs/FORMAT.md): Load checks every stage is what the options grow;
  // LoadOptions::max_bytes becomes max_memory_bytes; no Map. SaveHeaderToBytes: SaveToBytes() but
  // its payload (the stages' bytes() in order), for an image sent in pieces while no write runs.
  [[nodiscard]] absl::StatusOr<std::string> SaveHeaderToBytes() const;

  void Clear() noexcept;  // back to one empty stage; a full chain takes keys again

  [[nodiscard]] bool full() const noexcept;       // growth stopped: new keys are refused
  [[nodiscard]] absl::Status FullStatus() const;  // OK until full(), then which limit

  // Keys added: the stages' counts (a union's stages estimated from their fill). O(stages).
  [[nodiscard]] double EstimatedCount() const noexcept;
  // The chain's FPR now from its stages' bits, corrected for how they answer together: between the
  // largest stage's FPR and their sum. O(bytes), plus up to 2^19 lookups of fixed random hashes
  // where the chain grew (or its newest stage filled another quarter) since they were last read.
  [[nodiscard]] double EstimatedFpr() const noexcept;
  // Health (health.h) of the chain: kOk while it can grow (kOverLimit if its bits read above the
  // bound); once it cannot, health.h's rule, full being kNearLimit.
  [[nodiscard]] FilterHealth Health() const;

  [[nodiscard]] uint32_t stage_count() const noexcept;  // >= 1
  // Stage i < stage_count() as the BitArray both stage kinds are, and its key count and level.
  [[nodiscard]] const BitArray& stage(uint32_t i) const noexcept;
  [[nodiscard]] uint64_t stage_keys(uint32_t i) const noexcept;
  [[nodiscard]] uint32_t stage_level(uint32_t i) const noexcept;
  [[nodiscard]] uint64_t capacity() const noexcept;           // the stages' planned keys, in total
  [[nodiscard]] uint64_t memory_bytes() const noexcept;       // the stages' bytes, in total
  [[nodiscard]] uint64_t bookkeeping_bytes() const noexcept;  // stage table and objects' bytes
  // The stage growth adds next, or the ResourceExhausted status it stops with. Allocates nothing.
  [[nodiscard]] absl::StatusOr<Plan> NextStagePlan() const;
  [[nodiscard]] const ScalableOptions& options() const noexcept { return options_; }
  [[nodiscard]] Layout layout() const noexcept { return options_.layout; }
  // The blocked stages' probe, resolved (never kLatest).
  [[nodiscard]] Probe probe() const noexcept { return ResolveProbe(options_.probe); }
  // The bound on the chain's FPR: P, plus the share of each stage a union kept beside another.
  [[nodiscard]] double planned_fpr() const noexcept;
  [[nodiscard]] double fpr() const noexcept { return options_.fpr; }
  [[nodiscard]] uint64_t seed() const noexcept { return options_.hashing.seed; }
  [[nodiscard]] IntegerHash integer_hash() const noexcept { return options_.hashing.integer_hash; }
  [[nodiscard]] KeyHasher hasher() const noexcept { return options_.hasher(); }
  [[nodiscard]] bool concurrent() const noexcept { return options_.memory.concurrent; }

 private:
  struct Chain;
  friend class detail::FilterAccess;  // persistence's hooks: FileFormat, Write, Open
  friend class BatchForms<ScalableFilter, InsertResult>;
  friend struct ScalableChainCheck;  // the file format's check of a saved chain
  using StageFilter = detail::StageFilter;

  explicit ScalableFilter(const ScalableOptions& options);
  [[nodiscard]] static detail::KindFormat FileFormat() noexcept;
  [[nodiscard]] absl::StatusOr<std::string> Write(const std::string* path) const;
  [[nodiscard]] static absl::StatusOr<ScalableFilter> Open(detail::FilterFile& file,
                                                           const LoadOptions& options);
  static absl::Status CheckOptions(const ScalableOptions& options);
  static absl::StatusOr<Plan> PlanAt(const ScalableOptions& options, uint32_t index,
                                     uint32_t level);
  absl::StatusOr<Plan> PlanStage(uint32_t index, uint32_t level, uint64_t pending_bytes,
                                 uint64_t max_memory_bytes) const;
  [[nodiscard]] double DependenceCorrection() const noexcept;
  [[nodiscard]] double ChainFpr(double independent,
                                std::span<const double> stage_fprs) const noexcept;
  [[nodiscard]] uint32_t NextLevel(uint32_t count) const noexcept;
  absl::StatusOr<StageFilter> BuildStage(const Plan& plan) const;
  void PublishStage(uint32_t index, StageFilter filter, uint64_t capacity, uint64_t count,
                    uint32_t level);
  absl::Status AddStage(uint32_t index, uint32_t level);
  struct CallerCap {          // InsertManyUnderCap's cap, for one call
    uint64_t max_bytes = 0;   // 0: none
    uint32_t refused_at = 0;  // the stage count at which it refused growth (0: never)
  };
  [[nodiscard]] InsertResult InsertUnder(const KeyHash& hash, CallerCap& cap) noexcept;
  bool Grow(uint32_t seen_count, CallerCap& cap) noexcept;
  template <FilterKey Key>
  InsertCounts InsertKeys(std::span<const Key> keys, std::span<InsertResult> results,
                          uint64_t caller_max_bytes = 0) noexcept;
  template <FilterKey Key>
  size_t LookupKeys(std::span<const Key> keys, std::span<bool> results) const noexcept;

  ScalableOptions options_;
  struct ChainDelete {
    void operator()(Chain* chain) const noexcept;
  };
  std::unique_ptr<Chain, ChainDelete> chain_;
};

}  // namespace bloomery

#endif  // BLOOMERY_SCALABLE_FILTER_H_
