// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery_redis.so: a Redis module speaking RedisBloom's BF.* commands over bloomery filters.
//
//   redis-server --loadmodule /path/bloomery_redis.so [MAX_BYTES n] [SCANDUMP_CHUNK_BYTES n]
//                [TESTING-CLOCK 1]
//
// The BFW.* commands, filters whose keys expire, are windowed.h's; TESTING-CLOCK is theirs.
//
// Every key holds a ScalableFilter (bf_args.h says how a reserve is parsed). Without LAYOUT its
// stages are RedisBloom's partitioned filters (ClassicFilter) at RedisBloom's tightening 0.5;
// LAYOUT line512|block256|word64 makes them BlockedFilters of that shape at bloomery's 0.9.
// Scaling filters grow by EXPANSION (RedisBloom's range, 1 to 32768; 0 means NONSCALING) at a
// total FPR bounded by the error rate given (a promise: every stage is planned by its layout's
// formula); NONSCALING filters are one stage of that layout planned at that rate, refusing keys
// past their capacity ("ERR non scaling filter is full"). A key may also be half-way through
// BF.LOADCHUNK; it then answers only further LOADCHUNKs.
//
// Persistence carries bloomery's own file image (ScalableFilter::SaveToBytes, docs/FORMAT.md):
// the RDB, DUMP/RESTORE, SCANDUMP/LOADCHUNK and the AOF rewrite (as LOADCHUNK commands) all go
// through the one validator in LoadFromBytes, so no payload can crash the server. A client's
// payload or write never gives a key a filter over the MAX_BYTES cap (default 4 GiB per key); the
// server's own data (RDB, full sync, AOF, its master's commands) loads over it with a warning
// (Source, below), so that no restart or replica loses a key. Loading holds the image and
// the filter at once, and saving copies the filter into one image: about twice the filter's bytes
// for a moment (SaveFailed, commands.h, says what an allocation failure there does).
//
// Redis runs module commands on its main thread, so filters are single-writer; the forked RDB and
// AOF children read their own copy. Filter memory comes from the server's allocator
// (server_memory.h; huge pages asked for where a block is large), so it counts in used_memory,
// maxmemory, eviction and deny-oom like any other key's, and MEMORY USAGE (mem_usage) answers
// what the allocator holds for it.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bf_args.h"
#include "bloomery/plan.h"
#include "bloomery/scalable_filter.h"
#include "bloomery/version.h"
#include "chunks.h"
#include "commands.h"
#include "health.h"
#include "module_api.h"
#include "server_memory.h"
#include "windowed.h"

namespace bloomery::redis {
namespace {

// A type name of our own, exactly 9 characters as Redis requires; with the encoding version it
// identifies our values in RDB files.
constexpr const char* kTypeName = "bloomeryf";
constexpr int kEncodingVersion = 1;
// The module registers under RedisBloom's name and a RedisBloom version (major * 10000 + minor *
// 100 + patch), so that clients and test kits that gate on MODULE LIST (redis-py's
// skip_ifmodversion_lt("2.4.0", "bf")) find it: 2.4.4, the first RedisBloom whose Bloom commands
// are all ours (BF.CARD came in 2.4.4). Nothing looks the module up by name; the type name above
// is what RDB files hold, so renaming the module changes nothing for them.
constexpr const char* kModuleName = "bf";
constexpr int kModuleVersion = 20404;
// bloomery's own version (VERSION) is in the module's INFO section instead: `INFO bf` answers
// bf_bloomery_version (fields take the module's name as prefix).
//
// INFO bf also answers the health of every filter of both types, kept as writes happen (health.h):
// bf_filters, bf_bytes, bf_filters_near_limit, bf_filters_over_limit and bf_worst_fpr_ratio (the
// largest estimated / planned FPR), what to alert on. Redis 7.0 leaves a module's section out of
// INFO and INFO all, and redis_exporter exports only the fields it knows, so they reach
// Prometheus through redis/bloomery_metrics.lua, which the exporter runs (docs/OPERATING.md,
// "Alerts").
void AddInfo(RedisModuleInfoCtx* ctx, int /*for_crash_report*/) {
  api::InfoAddSection(ctx, "");
  api::InfoAddFieldCString(ctx, "bloomery_version", BLOOMERY_VERSION_STRING);
  const HealthTotals totals = CurrentHealthTotals();
  api::InfoAddFieldULongLong(ctx, "filters", totals.filters);
  api::InfoAddFieldULongLong(ctx, "bytes", totals.bytes);
  api::InfoAddFieldULongLong(ctx, "filters_near_limit", totals.near_limit);
  api::InfoAddFieldULongLong(ctx, "filters_over_limit", totals.over_limit);
  api::InfoAddFieldDouble(ctx, "worst_fpr_ratio", totals.worst_fpr_ratio);
}
// INFO bf's totals follow what writes left behind, and windowed filters' generations as they
// expire, once a second (TrackedHealth::RefreshFollowed, health.h), from the server's cron.
void FollowHealthOnCron(RedisModuleCtx* ctx, api::ServerEvent /*event*/, uint64_t /*subevent*/,
                        void* /*data*/) {
  static std::chrono::steady_clock::time_point last;
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::seconds(1)) return;
  last = now;
  TrackedHealth::RefreshFollowed(ctx);
}

// rdb_save's first word: what follows.
constexpr uint64_t kSavedFilter = 0;
constexpr uint64_t kSavedPendingLoad = 1;
// A dump's image is the filter's memory plus its header and stage table (docs/FORMAT.md).
constexpr uint64_t kImageOverheadBytes = uint64_t{1} << 20;

RedisModuleType* g_type = nullptr;
uint64_t g_max_bytes = uint64_t{4} << 30;
uint64_t g_chunk_bytes = kDumpChunkBytes;
bool g_testing_clock = false;

// What a key of our type holds (in the server's allocator, as everything the filter keeps).
struct BloomValue : InServerMemory {
  explicit BloomValue(ScalableFilter filter) : state(std::move(filter)) {
    health.Refresh(*this->filter());
  }
  explicit BloomValue(ChunkAssembler pending) : state(std::move(pending)) {}

  std::variant<ScalableFilter, ChunkAssembler> state;
  // Its filter's health in INFO bf's totals (health.h); none while a load is pending. A chain's
  // health changes only with writes: the timer computes it again after one that left it behind.
  TrackedHealth health{&FollowHealth, this, /*always=*/false};
  // BF.SCANDUMP's state between its calls. The dump's image is the filter's file image
  // (SaveToBytes), but no copy of it is kept: its header region (header, stage table and the
  // payload's checksums, about 8 bytes per MiB of filter) is taken when the dump begins, in the
  // server's allocator, and each chunk of the payload is read from the stages when it is asked
  // for. Freed by the call that ends the dump; a write frees it and marks the dump stale, since
  // the header's checksums no longer hold (ScanDumpCommand refuses the rest of that dump).
  HeldBytes dump_header;
  bool dump_stale = false;

  ScalableFilter* filter() { return std::get_if<ScalableFilter>(&state); }
  ChunkAssembler* pending() { return std::get_if<ChunkAssembler>(&state); }

  static void FollowHealth(void* value, RedisModuleCtx* /*ctx*/) {
    auto& self = *static_cast<BloomValue*>(value);
    if (const ScalableFilter* filter = self.filter()) self.health.Refresh(*filter);
  }
};

uint64_t MaxImageBytes(Source source) {
  return g_max_bytes == 0 || source == Source::kServer ? 0 : g_max_bytes + kImageOverheadBytes;
}

// The warning logged for a filter of the server's own data loaded over MAX_BYTES.
std::string OverCapWarning(std::string_view key, const ScalableFilter& filter) {
  return absl::StrCat("bloomery: key '", std::string(key), "' holds a filter of ",
                      filter.memory_bytes(), " bytes, over MAX_BYTES (", g_max_bytes,
                      "); loaded anyway, as it is the server's own data (RDB, AOF or its "
                      "master's); writes take no key that would grow it further");
}

// Loads a filter image: under MAX_BYTES for a client's payload; a server's own image over the cap
// loads (without a cap) and `over_cap` says so, for the caller to log.
absl::StatusOr<ScalableFilter> LoadImage(std::string_view bytes, Source source, bool* over_cap) {
  *over_cap = false;
  absl::StatusOr<ScalableFilter> filter =
      ScalableFilter::LoadFromBytes(bytes, ModuleLoadOptions(g_max_bytes));
  if (source == Source::kServer && g_max_bytes != 0 && absl::IsResourceExhausted(filter.status())) {
    // Refused by the header's size, before anything was allocated: load it without the cap.
    filter = ScalableFilter::LoadFromBytes(bytes, ModuleLoadOptions(0));
    *over_cap = filter.ok();
  }
  return filter;
}

// An open key and what it holds; closes the key when it goes out of scope.
class OpenKey {
 public:
  enum class Holds { kNothing, kFilter, kPendingLoad, kOtherType };

  OpenKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(ctx, name, mode, g_type), value_(key_.value<BloomValue>()) {
    if (value_ != nullptr) {
      holds_ = value_->filter() != nullptr ? Holds::kFilter : Holds::kPendingLoad;
    } else {
      holds_ = key_.empty() ? Holds::kNothing : Holds::kOtherType;
    }
  }

  Holds holds() const { return holds_; }
  BloomValue* value() const { return value_; }
  ScalableFilter* filter() const { return value_ == nullptr ? nullptr : value_->filter(); }
  ChunkAssembler* pending() const { return value_ == nullptr ? nullptr : value_->pending(); }

  // Replaces the key's value (Redis frees the old one through our free callback).
  void Set(std::unique_ptr<BloomValue> value) {
    value_ = value.get();
    key_.Set(value.release());
    holds_ = value_->filter() != nullptr ? Holds::kFilter : Holds::kPendingLoad;
  }
  // After a write to the filter: a SCANDUMP under way is stale.
  void Modified() {
    if (value_ != nullptr && !value_->dump_header.empty()) {
      HeldBytes().swap(value_->dump_header);
      value_->dump_stale = true;
    }
  }
  void Delete() {
    key_.Delete();
    value_ = nullptr;
    holds_ = Holds::kNothing;
  }

  // The error reply for a key that does not hold a loaded filter, RedisBloom's texts.
  int ReplyNotAFilter(RedisModuleCtx* ctx) const {
    switch (holds_) {
      case Holds::kNothing:
        return api::ReplyWithError(ctx, "ERR not found");
      case Holds::kOtherType:
        return api::ReplyWithError(ctx, api::kWrongTypeError);
      case Holds::kPendingLoad:
        return api::ReplyWithError(ctx, "ERR the filter is still being loaded by BF.LOADCHUNK");
      case Holds::kFilter:
        break;
    }
    return api::ReplyWithError(ctx, "ERR item exists");
  }

 private:
  ModuleKey key_;
  BloomValue* value_;
  Holds holds_;
};

absl::StatusOr<std::unique_ptr<BloomValue>> NewFilter(const FilterParams& params, Source source) {
  const ScalableOptions options = ToScalableOptions(params, g_max_bytes);
  absl::StatusOr<ScalableFilter> filter = ScalableFilter::Create(options);
  if (absl::IsResourceExhausted(filter.status()) && g_max_bytes != 0 && source == Source::kServer) {
    // The master (or the AOF's server) created it under a larger cap: so does this server.
    filter = ScalableFilter::Create(ToScalableOptions(params, 0));
  }
  if (absl::IsResourceExhausted(filter.status()) && g_max_bytes != 0) {
    // The library calls every refused stage "full"; for a filter being created the first stage is
    // the one refused, and the reason worth saying is the module's cap.
    absl::StatusOr<Plan> first = ScalableFilter::PlanLevel(options, 0);
    if (first.ok() && WholeLineBytes(first->bits) > g_max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("ERR the filter needs ", WholeLineBytes(first->bits),
                       " bytes, over the module's MAX_BYTES of ", g_max_bytes,
                       ": reserve a smaller capacity or a larger error rate"));
    }
  }
  if (!filter.ok()) return filter.status();
  return std::make_unique<BloomValue>(std::move(*filter));
}

// A copy of `filter` made by merging it into an empty filter with its options and a memory cap of
// `max_bytes` (0: none): the same stages, bits and key counts as a Save/Load round trip, without
// a second image of the filter in memory.
absl::StatusOr<ScalableFilter> CloneFilter(const ScalableFilter& filter, uint64_t max_bytes) {
  ScalableOptions options = filter.options();
  options.memory.max_memory_bytes = max_bytes;
  absl::StatusOr<ScalableFilter> copy = ScalableFilter::Create(options);
  if (!copy.ok()) return copy.status();
  if (absl::Status merged = copy->UnionWith(filter); !merged.ok()) return merged;
  return copy;
}

// Whether a new stage of `filter` would take its bytes over MAX_BYTES where the filter's own
// limits let it grow: the library's rule (NextStagePlan) under the module's cap, for a filter that
// does not carry it (loaded or grown over it from the server's own data). Where its own limits
// stop it, the library refuses the key and FullStatus says why.
bool NextStageOverCap(const ScalableFilter& filter) {
  return g_max_bytes != 0 && !filter.NextStagePlan(g_max_bytes).ok() && filter.NextStagePlan().ok();
}

// ---------------------------------------------------------------------------------------------
// Commands.

int ReserveCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<FilterParams> params = ParseReserve(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(params.status())) return api::WrongArity(ctx);
  if (!params.ok()) return ReplyParseError(ctx, params.status());
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  if (key.holds() != OpenKey::Holds::kNothing) return key.ReplyNotAFilter(ctx);
  absl::StatusOr<std::unique_ptr<BloomValue>> value = NewFilter(*params, SourceOf(ctx));
  if (!value.ok()) return ReplyError(ctx, value.status());
  key.Set(std::move(*value));
  api::ReplicateVerbatim(ctx);
  Notify(ctx, "bf.reserve", argv[1]);
  return api::ReplyWithSimpleString(ctx, "OK");
}

size_t FirstRefused(std::span<const InsertResult> results) {
  size_t i = 0;
  while (i < results.size() && results[i] != InsertResult::kRefused) ++i;
  return i;
}

// A client's keys into a filter that does not carry the module's cap (loaded or grown over it
// from the server's own data): as InsertMany, except that a key needing a new stage is refused
// when that stage would take the filter over MAX_BYTES, as the library refuses it for a filter
// with the cap. Stops at the first refused key.
void InsertUnderCap(ScalableFilter& filter, std::span<const std::string_view> keys,
                    std::span<InsertResult> results) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (filter.MayContain(keys[i])) {
      results[i] = InsertResult::kPresent;
      continue;
    }
    const uint32_t newest = filter.stage_count() - 1;
    const bool grows = filter.stage_keys(newest) >= filter.stage(newest).plan().capacity;
    results[i] =
        grows && NextStageOverCap(filter) ? InsertResult::kRefused : filter.Insert(keys[i]);
    if (results[i] == InsertResult::kRefused) return;
  }
}

// Inserts `keys` into the key's filter, filling `results` up to the first refused key; returns
// how many keys were applied (the index of that key, or all of them). A client's keys never take
// the filter over MAX_BYTES; the server's own (AOF replay, the master's commands) are applied as
// the server that first ran them did: a key refused here for the cap, which a larger cap there
// let in, is inserted into an uncapped copy of the filter.
size_t ApplyInserts(OpenKey& key, Source source, std::span<const std::string_view> keys,
                    std::span<InsertResult> results) {
  ScalableFilter& filter = *key.filter();
  if (source == Source::kClient && filter.options().memory.max_memory_bytes != g_max_bytes) {
    InsertUnderCap(filter, keys, results);
  } else {
    (void)filter.InsertMany(keys, results);
  }
  size_t applied = FirstRefused(results);
  const auto added_of = [&](size_t end) {
    return static_cast<uint64_t>(std::count(
        results.begin(), results.begin() + static_cast<ptrdiff_t>(end), InsertResult::kAdded));
  };
  if (applied < keys.size() && source == Source::kServer &&
      filter.options().memory.max_memory_bytes != 0 && filter.options().scaling) {
    if (absl::StatusOr<ScalableFilter> uncapped = CloneFilter(filter, 0); uncapped.ok()) {
      filter = std::move(*uncapped);
      const std::span<InsertResult> rest = results.subspan(applied);
      (void)filter.InsertMany(keys.subspan(applied), rest);
      applied += FirstRefused(rest);
    }
  }
  key.Modified();
  key.value()->health.AfterWrite(filter, added_of(applied));
  return applied;
}

// BF.ADD, BF.MADD and BF.INSERT: test-and-set of the items argv[first_item...], creating the
// filter with `params` when the key (argv[1]) is empty and `create` allows. Replies one integer
// (or an array of them when `multi`), RedisBloom's "non scaling filter is full" error in place of
// the first refused key. Replicates what it applied: the command cut after the last key applied,
// so that a replica or the AOF, whose MAX_BYTES may differ, applies exactly those keys.
int InsertItems(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, int first_item,
                const char* event, const FilterParams& params, bool create, bool multi) {
  const Source source = SourceOf(ctx);
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  bool created = false;
  if (key.holds() == OpenKey::Holds::kNothing && create) {
    absl::StatusOr<std::unique_ptr<BloomValue>> value = NewFilter(params, source);
    if (!value.ok()) return ReplyError(ctx, value.status());
    key.Set(std::move(*value));
    created = true;
  }
  if (key.filter() == nullptr) return key.ReplyNotAFilter(ctx);

  const std::vector<std::string_view> keys = Args(argv, first_item, argc);
  std::vector<InsertResult> results(keys.size(), InsertResult::kPresent);
  const size_t applied = ApplyInserts(key, source, keys, results);
  const ScalableFilter& filter = *key.filter();

  if (multi) api::ReplyWithArray(ctx, api::kPostponedLength);
  long replied = 0;
  bool added = false;
  for (const InsertResult result : results) {
    ++replied;
    if (result == InsertResult::kRefused) {
      if (!filter.options().scaling) {
        api::ReplyWithError(ctx, "ERR non scaling filter is full");
      } else if (filter.full()) {
        ReplyError(ctx, filter.FullStatus());
      } else {
        api::ReplyWithError(
            ctx, absl::StrCat("ERR the filter holds ", filter.memory_bytes(),
                              " bytes and its next stage would take it over the module's "
                              "MAX_BYTES of ",
                              g_max_bytes, " (it was loaded over it from the server's own data)")
                     .c_str());
      }
      break;
    }
    added |= result == InsertResult::kAdded;
    api::ReplyWithLongLong(ctx, result == InsertResult::kAdded ? 1 : 0);
  }
  if (multi) api::ReplySetArrayLength(ctx, replied);
  if (applied == keys.size()) {
    api::ReplicateVerbatim(ctx);
  } else if (applied > 0) {
    const std::string command(Arg(argv[0]));
    api::Replicate(ctx, command.c_str(), "v", argv + 1,
                   static_cast<size_t>(first_item - 1) + applied);
  }
  // applied == 0 changed nothing: the first key into a new filter always fits its first stage, so
  // a command that created its key applied at least one.
  if (created || added) Notify(ctx, event, argv[1]);
  return api::kOk;
}

int AddCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv, argc, 2, "bf.add", FilterParams{}, /*create=*/true,
                     /*multi=*/false);
}

int MaddCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv, argc, 2, "bf.madd", FilterParams{}, /*create=*/true,
                     /*multi=*/true);
}

int InsertCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<InsertArgs> args = ParseInsert(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(args.status())) return api::WrongArity(ctx);
  if (!args.ok()) return ReplyParseError(ctx, args.status());
  return InsertItems(ctx, argv, argc, 2 + static_cast<int>(args->first_item), "bf.insert",
                     args->params, args->create, /*multi=*/true);
}

// BF.EXISTS / BF.MEXISTS: a missing key holds nothing, so every answer is 0.
int Lookup(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  OpenKey key(ctx, argv[1], api::kRead);
  if (key.holds() != OpenKey::Holds::kNothing && key.filter() == nullptr) {
    return key.ReplyNotAFilter(ctx);
  }
  return ReplyLookups(ctx, argv, argc, multi, key.filter());
}

// BF.INFO's Size: the filter's own bytes, as RedisBloom counts them.
size_t FilterMemory(const ScalableFilter& filter) {
  return sizeof(BloomValue) + filter.memory_bytes();
}

// MEMORY USAGE: what the server's allocator holds for the key, its stages' blocks as allocated.
// Above FilterMemory by the allocator's size classes (jemalloc rounds a large block up to one of
// four sizes per power of two: up to 25% more, untouched pages that used_memory counts and RSS
// does not).
size_t ServerMemory(const ScalableFilter& filter) {
  size_t bytes = sizeof(BloomValue) + filter.bookkeeping_bytes();
  for (uint32_t i = 0; i < filter.stage_count(); ++i) {
    bytes += ServerBytes(filter.stage(i));
  }
  return bytes;
}

uint64_t TotalBits(const ScalableFilter& filter) {
  uint64_t bits = 0;
  for (uint32_t i = 0; i < filter.stage_count(); ++i) bits += filter.stage(i).bits();
  return bits;
}

int CardCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  OpenKey key(ctx, argv[1], api::kRead);
  if (key.holds() == OpenKey::Holds::kNothing) return api::ReplyWithLongLong(ctx, 0);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);
  return api::ReplyWithLongLong(ctx, static_cast<long long>(filter->EstimatedCount() + 0.5));
}

// BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|FPR|BITSPERITEM|LAYOUT]: RedisBloom's five
// fields (what redis-py's BFInfo reads; it skips the others), then the FPR the filter has now
// (exact, from its bits: O(bytes)), its bits per key of capacity and its stages' block (LAYOUT).
int InfoCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2 && argc != 3) return api::WrongArity(ctx);
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);

  const bool scaling = filter->options().scaling;
  // The health is read now (Health(): a sample of ~1 MiB above 4 MiB) and refreshes INFO bf's
  // totals on the way.
  key.value()->health.Refresh(*filter);
  const FilterHealth& health = key.value()->health.last();
  const InfoField fields[] = {
      {"Capacity", "CAPACITY", static_cast<long long>(filter->capacity())},
      {"Size", "SIZE", static_cast<long long>(FilterMemory(*filter))},
      {"Number of filters", "FILTERS", static_cast<long long>(filter->stage_count())},
      {"Number of items inserted", "ITEMS", static_cast<long long>(filter->EstimatedCount() + 0.5)},
      {"Expansion rate", "EXPANSION",
       scaling ? InfoField::Value(static_cast<long long>(filter->options().growth))
               : InfoField::Value(std::monostate())},
      {"Estimated FPR", "FPR", [filter] { return filter->EstimatedFpr(); }},
      {"Bits per item", "BITSPERITEM",
       static_cast<double>(TotalBits(*filter)) / static_cast<double>(filter->capacity())},
      // LayoutName's views are of string literals: NUL-terminated.
      {"Layout", "LAYOUT", LayoutName(filter->layout()).data()},
      // The blocked stages' probe (layout.h): "fields" for a key made now, "salted" for a line or
      // block256 key saved before the fields probe existed; "none" for partitioned stages.
      {"Probe", "PROBE",
       filter->layout() == Layout::kPartitioned ? "none" : ProbeName(filter->probe()).data()},
      // The health (health.h; docs/OPERATING.md says what to alert on). HealthStateName's views
      // are of string literals too.
      {"Health", "HEALTH", HealthStateName(health.state).data()},
      {"Planned FPR", "PLANNEDFPR", health.planned_fpr},
      // Health's reading of the FPR (a sample above 4 MiB) over the planned one: over 1 is over.
      {"FPR over planned", "FPRRATIO",
       health.planned_fpr > 0 ? health.estimated_fpr / health.planned_fpr : 0.0},
      {"Fill ratio", "FILL", health.fill_ratio},
      {"Estimated items error", "ITEMSERROR", health.estimated_count_error},
  };
  return ReplyInfo(ctx, fields, argc == 3 ? std::optional(Arg(argv[2])) : std::nullopt);
}

// BF.DEBUG key: RedisBloom's reply, an array of "size:N" (the keys the filter holds) and one line
// per stage, oldest first: "bytes:B bits:b hashes:k hashwidth:64 capacity:C size:S ratio:R", with
// the stage's real memory, bits, hash count, planned keys, keys held and FPR budget (64: each key
// is one 64-bit hash).
int DebugCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);
  const auto reply_line = [ctx](const std::string& line) {
    return api::ReplyWithStringBuffer(ctx, line.data(), line.size());
  };
  uint64_t size = 0;
  for (uint32_t i = 0; i < filter->stage_count(); ++i) size += filter->stage_keys(i);
  api::ReplyWithArray(ctx, 1 + static_cast<long>(filter->stage_count()));
  reply_line(absl::StrCat("size:", size));
  for (uint32_t i = 0; i < filter->stage_count(); ++i) {
    const BitArray& stage = filter->stage(i);
    reply_line(
        absl::StrFormat("bytes:%d bits:%d hashes:%d hashwidth:64 capacity:%d size:%d ratio:%g",
                        stage.memory_bytes(), stage.bits(), stage.hashes(), stage.plan().capacity,
                        filter->stage_keys(i),
                        ScalableFilter::StageFpr(filter->options(), filter->stage_level(i))));
  }
  return api::kOk;
}

// The bytes of a dump's image: its header region, then every stage's bytes.
uint64_t DumpImageBytes(const BloomValue& value) {
  uint64_t bytes = value.dump_header.size();
  const ScalableFilter& filter = *std::get_if<ScalableFilter>(&value.state);
  for (uint32_t i = 0; i < filter.stage_count(); ++i) bytes += filter.stage(i).bytes().size();
  return bytes;
}

// Replies the image's bytes [begin, begin + length) (inside DumpImageBytes): straight from the
// header or a stage where they lie in one, else assembled for this reply alone.
int ReplyDumpBytes(RedisModuleCtx* ctx, const BloomValue& value, uint64_t begin, uint64_t length) {
  const ScalableFilter& filter = *std::get_if<ScalableFilter>(&value.state);
  std::vector<std::string_view> parts = {{value.dump_header.data(), value.dump_header.size()}};
  for (uint32_t i = 0; i < filter.stage_count(); ++i) {
    const std::span<const uint8_t> bytes = filter.stage(i).bytes();
    parts.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  std::string assembled;
  for (std::string_view part : parts) {
    if (begin >= part.size()) {
      begin -= part.size();
      continue;
    }
    const std::string_view piece = part.substr(begin, length);
    if (assembled.empty() && piece.size() == length) {
      return api::ReplyWithStringBuffer(ctx, piece.data(), piece.size());
    }
    assembled.append(piece);
    length -= piece.size();
    begin = 0;
    if (length == 0) break;
  }
  return api::ReplyWithStringBuffer(ctx, assembled.data(), assembled.size());
}

// BF.SCANDUMP key iterator (chunks.h). A read that keeps no copy of the filter: iterator 0 takes
// the image's header region (BloomValue::dump_header: a pass over the bits for their checksums,
// and about 8 bytes per MiB of filter held, in the server's allocator, so in used_memory); every
// later call copies its chunk from the header or the stages' memory into the reply. A write
// between two calls would mix two states in one image: the rest of that dump is refused with an
// error saying to start again. A call past iterator 0 with no header held (the dump began before
// a restart or a failover, or another client ended it) takes the header again from the filter as
// it is now.
int ScanDumpCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk || iterator < 0) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);
  BloomValue& value = *key.value();
  if (iterator == 0) value.dump_stale = false;
  if (value.dump_stale) {
    return api::ReplyWithError(ctx,
                               "ERR the filter was written to since this dump began (iterator 0), "
                               "so its chunks would not make one image: start again from 0");
  }
  if (iterator == 0 || value.dump_header.empty()) {
    absl::StatusOr<std::string> header = filter->SaveHeaderToBytes();
    if (!header.ok()) return ReplyError(ctx, header.status());
    value.dump_header.assign(header->data(), header->size());
  }
  const uint64_t total = DumpImageBytes(value);
  api::ReplyWithArray(ctx, 2);
  if (iterator == 0) {
    const std::string prefix = EncodeDumpPrefix(total);
    api::ReplyWithLongLong(ctx, 1);
    return api::ReplyWithStringBuffer(ctx, prefix.data(), prefix.size());
  }
  const DumpSlice slice = SliceForIterator(total, iterator, g_chunk_bytes);
  api::ReplyWithLongLong(ctx, slice.next_iterator);
  if (slice.length == 0) {
    HeldBytes().swap(value.dump_header);  // the dump is over
    return api::ReplyWithStringBuffer(ctx, "", 0);
  }
  return ReplyDumpBytes(ctx, value, slice.begin, slice.length);
}

// The image `image` as the BF.LOADCHUNK commands that load it: the prefix, then chunks of the
// module's SCANDUMP size, each passed to `emit(iterator, data)`. The AOF rewrite and a completed
// chunked load replicate a filter this way.
template <typename Emit>
void ForEachLoadChunk(std::string_view image, uint64_t total, Emit emit) {
  const std::string prefix = EncodeDumpPrefix(total);
  emit(1LL, std::string_view(prefix));
  for (long long iterator = 1;;) {
    const DumpSlice slice = SliceForIterator(image.size(), iterator, g_chunk_bytes);
    if (slice.length == 0) break;
    emit(slice.next_iterator, image.substr(slice.begin, slice.length));
    iterator = slice.next_iterator;
  }
}

// BF.LOADCHUNK key iterator data. The chunks are held on this server alone until the image is
// complete and has loaded through the validator under this server's caps: only then is the key
// replicated (and written to the AOF), as DEL and the whole image in BF.LOADCHUNK commands, in one
// MULTI. A replica and an AOF replay therefore hold exactly the filters the master accepted and
// never an image it refused. A failed chunk or a refused image deletes the half-loaded key (and
// replicates that DEL, for a replica that received the pending key in a full sync), so a client
// can start again from the prefix; the key never holds an unvalidated filter. A pending load is
// in the RDB (and so survives a restart from it) but not in the AOF until it completes.
int LoadChunkCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  const std::string_view data = Arg(argv[3]);
  const Source source = SourceOf(ctx);
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  const auto drop = [&](const absl::Status& status) {
    key.Delete();
    api::Replicate(ctx, "DEL", "s", argv[1]);
    return ReplyError(ctx, status);
  };
  if (iterator == 1) {
    if (key.holds() != OpenKey::Holds::kNothing) return key.ReplyNotAFilter(ctx);
    absl::StatusOr<ChunkAssembler> assembler = ChunkAssembler::Start(data, MaxImageBytes(source));
    if (!assembler.ok()) return ReplyError(ctx, assembler.status());
    key.Set(std::make_unique<BloomValue>(std::move(*assembler)));
    Notify(ctx, "bf.loadchunk", argv[1]);
    return api::ReplyWithSimpleString(ctx, "OK");
  }
  ChunkAssembler* pending = key.pending();
  if (pending == nullptr) {
    if (key.holds() == OpenKey::Holds::kFilter) {
      return api::ReplyWithError(ctx, "ERR the filter is already loaded");
    }
    return key.ReplyNotAFilter(ctx);
  }
  absl::Status appended;
  try {
    appended = pending->Append(iterator, data);
  } catch (const std::bad_alloc&) {
    // The server's allocator refused the pending image's growth (HeldBytes).
    appended = absl::ResourceExhaustedError(
        "ERR no memory for the pending image: the load is dropped, start it again");
  }
  if (!appended.ok()) return drop(appended);
  Notify(ctx, "bf.loadchunk", argv[1]);
  if (!pending->complete()) return api::ReplyWithSimpleString(ctx, "OK");
  bool over_cap = false;
  absl::StatusOr<ScalableFilter> filter = LoadImage(pending->received(), source, &over_cap);
  if (!filter.ok()) {
    return drop(absl::Status(filter.status().code(),
                             absl::StrCat("ERR invalid dump: ", filter.status().message())));
  }
  if (over_cap) api::Log(ctx, "warning", "%s", OverCapWarning(Arg(argv[1]), *filter).c_str());
  // Replicated from the image as received (the bytes just validated), before it is released.
  api::Replicate(ctx, "DEL", "s", argv[1]);
  ForEachLoadChunk(pending->received(), pending->total(),
                   [&](long long chunk_iterator, std::string_view chunk) {
                     api::Replicate(ctx, "BF.LOADCHUNK", "slb", argv[1], chunk_iterator,
                                    chunk.data(), chunk.size());
                   });
  key.Set(std::make_unique<BloomValue>(std::move(*filter)));
  return api::ReplyWithSimpleString(ctx, "OK");
}

// A refused union's reply, with what to do about it: a NONSCALING filter cannot keep a source's
// stage beside its own (compatibility is checked before, so that is the only refusal left).
absl::Status MergeRefused(const absl::Status& status) {
  if (!absl::IsFailedPrecondition(status)) return status;
  return absl::FailedPreconditionError(
      absl::StrCat(status.message(),
                   ". A NONSCALING filter has one stage, so the sources' keys together must fit "
                   "it: reserve every source (BF.RESERVE) with the capacity of the union"));
}

// BF.MERGE dest src [src ...]: dest |= every src (compatible filters: same capacity, error
// rate, expansion, seed and integer hash). A missing dest starts as a copy of the first src. All
// keys must hash to one slot in a cluster (use a hash tag: {crawl}:worker1).
//
// Stages are ORed where the union fits them and kept side by side where it does not
// (ScalableFilter::UnionWith), so scaling workers that grew merge; BF.INFO's error rate stays the
// one reserved, BF.DEBUG's ratios show each stage's share.
//
// All or nothing: an error leaves dest as it was (not created, not partly merged) and is not
// replicated. Every source's options are checked before anything is written; the unions, which
// may be refused (a NONSCALING stage's capacity, MAX_BYTES) only once the bits are read, go into
// a scratch filter (a copy of dest, or of the first source) that replaces dest when all
// succeeded. So a merge briefly holds one more copy of dest, except for the common case of one
// source whose stages, all copied, keep dest under MAX_BYTES: UnionWith writes nothing when it
// fails, so it runs in place, and only a refusal for memory (dest's own cap) tries the copy.
int MergeCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  const Source source = SourceOf(ctx);
  std::vector<std::unique_ptr<OpenKey>> sources;
  for (int i = 2; i < argc; ++i) {
    sources.push_back(std::make_unique<OpenKey>(ctx, argv[i], api::kRead));
    if (sources.back()->filter() == nullptr) return sources.back()->ReplyNotAFilter(ctx);
  }
  OpenKey dest(ctx, argv[1], api::kRead | api::kWrite);
  if (dest.holds() != OpenKey::Holds::kNothing && dest.filter() == nullptr) {
    return dest.ReplyNotAFilter(ctx);
  }
  ScalableFilter* target = dest.filter();
  const ScalableFilter& base = target != nullptr ? *target : *sources.front()->filter();
  std::vector<const ScalableFilter*> merging;
  for (const std::unique_ptr<OpenKey>& source : sources) {
    const ScalableFilter& filter = *source->filter();
    if (absl::Status compatible = base.CheckCompatible(filter); !compatible.ok()) {
      return ReplyError(ctx, compatible);
    }
    // Merging dest into itself, or the first source into its copy, changes nothing.
    if (&filter != &base) merging.push_back(&filter);
  }
  bool merged_in_place = false;
  if (target != nullptr && merging.size() == 1 &&
      (g_max_bytes == 0 ||
       target->memory_bytes() + merging.front()->memory_bytes() <= g_max_bytes)) {
    const absl::Status merged = target->UnionWith(*merging.front());
    if (!merged.ok() && !absl::IsResourceExhausted(merged)) {
      return ReplyError(ctx, MergeRefused(merged));
    }
    merged_in_place = merged.ok();
    if (merged_in_place) {
      dest.Modified();
      dest.value()->health.Refresh(*target);
    }
  }
  if (!merged_in_place && (target == nullptr || !merging.empty())) {
    // A client's merge stays under MAX_BYTES; one from the master or the AOF did not exceed the
    // cap of the server that first ran it, which may be larger.
    absl::StatusOr<ScalableFilter> scratch;
    absl::Status merged;
    const auto merge_under = [&](uint64_t max_bytes) {
      scratch = CloneFilter(base, max_bytes);
      merged = scratch.status();
      for (size_t i = 0; merged.ok() && i < merging.size(); ++i) {
        merged = scratch->UnionWith(*merging[i]);
      }
    };
    merge_under(g_max_bytes);
    if (absl::IsResourceExhausted(merged) && source == Source::kServer && g_max_bytes != 0) {
      merge_under(0);
    }
    if (!merged.ok()) return ReplyError(ctx, MergeRefused(merged));
    if (target == nullptr) {
      dest.Set(std::make_unique<BloomValue>(std::move(*scratch)));
    } else {
      *target = std::move(*scratch);
      dest.Modified();
      dest.value()->health.Refresh(*target);
    }
  }
  api::ReplicateVerbatim(ctx);
  Notify(ctx, "bf.merge", argv[1]);
  return api::ReplyWithSimpleString(ctx, "OK");
}

// ---------------------------------------------------------------------------------------------
// The data type.

void* RdbLoad(RedisModuleIO* io, int encoding_version) {
  if (encoding_version != kEncodingVersion) {
    api::LogIOError(io, "warning", "bloomery: unknown encoding version %d", encoding_version);
    return nullptr;
  }
  const uint64_t tag = api::LoadUnsigned(io);
  uint64_t total = 0;
  if (tag == kSavedPendingLoad) total = api::LoadUnsigned(io);
  if (api::IsIOError(io)) return nullptr;
  size_t length = 0;
  char* buffer = api::LoadStringBuffer(io, &length);
  if (api::IsIOError(io) || buffer == nullptr) return nullptr;
  std::string_view bytes(buffer, length);
  // RESTORE from a client is capped; the RDB at startup, a full sync and DEBUG RELOAD are the
  // server's own data (SourceOf).
  const Source source = SourceOf(api::GetContextFromIO(io));

  std::unique_ptr<BloomValue> value;
  absl::Status status;
  if (tag == kSavedFilter) {
    bool over_cap = false;
    absl::StatusOr<ScalableFilter> filter = LoadImage(bytes, source, &over_cap);
    if (over_cap) {
      const RedisModuleString* name = api::GetKeyNameFromIO(io);
      size_t name_length = 0;
      const char* name_data = name == nullptr ? "" : api::StringPtrLen(name, &name_length);
      api::LogIOError(io, "warning", "%s",
                      OverCapWarning({name_data, name_length}, *filter).c_str());
    }
    if (filter.ok()) value = std::make_unique<BloomValue>(std::move(*filter));
    status = filter.status();
  } else if (tag == kSavedPendingLoad) {
    absl::StatusOr<ChunkAssembler> pending =
        ChunkAssembler::Resume(total, bytes, MaxImageBytes(source));
    if (pending.ok()) value = std::make_unique<BloomValue>(std::move(*pending));
    status = pending.status();
  } else {
    status = absl::DataLossError("unknown value tag");
  }
  api::Free(buffer);
  if (!status.ok()) {
    api::LogIOError(io, "warning", "bloomery: refusing a saved filter: %s",
                    std::string(status.message()).c_str());
    return nullptr;
  }
  return value.release();
}

void RdbSave(RedisModuleIO* io, void* opaque) {
  BloomValue& value = *static_cast<BloomValue*>(opaque);
  if (ChunkAssembler* pending = value.pending()) {
    api::SaveUnsigned(io, kSavedPendingLoad);
    api::SaveUnsigned(io, pending->total());
    api::SaveStringBuffer(io, pending->received().data(), pending->received().size());
    return;
  }
  api::SaveUnsigned(io, kSavedFilter);
  absl::StatusOr<std::string> image = SaveImage(*value.filter());
  if (!image.ok()) SaveFailed(io, image.status());
  api::SaveStringBuffer(io, image->data(), image->size());
}

// The AOF gets the same chunks a SCANDUMP client would, as BF.LOADCHUNK commands.
void AofRewrite(RedisModuleIO* aof, RedisModuleString* key, void* opaque) {
  BloomValue& value = *static_cast<BloomValue*>(opaque);
  absl::StatusOr<std::string> saved;
  std::string_view image;
  uint64_t total = 0;
  if (ChunkAssembler* pending = value.pending()) {
    image = pending->received();
    total = pending->total();
  } else {
    saved = SaveImage(*value.filter());
    if (!saved.ok()) {
      // Fails the rewrite (aof_rewrite runs only in its child): a key left out of the new AOF
      // would be lost without a word.
      SaveFailed(aof, saved.status());
    }
    image = *saved;
    total = image.size();
  }
  ForEachLoadChunk(image, total, [&](long long iterator, std::string_view chunk) {
    api::EmitAOF(aof, "BF.LOADCHUNK", "slb", key, iterator, chunk.data(), chunk.size());
  });
}

size_t MemUsage(const void* opaque) {
  auto& value = *const_cast<BloomValue*>(static_cast<const BloomValue*>(opaque));
  if (const ScalableFilter* filter = value.filter()) {
    return ServerMemory(*filter) + value.dump_header.capacity();
  }
  return sizeof(BloomValue) + value.pending()->received().size();
}

// DEBUG DIGEST and DEBUG DIGEST-VALUE: the value's exact content, the filter's file image (its
// options and every stage's bits and key count; a pending load's bytes), so that two servers
// agree on a key exactly when their filters do. Costs a copy of the filter, as DUMP does.
void Digest(RedisModuleDigest* digest, void* opaque) {
  BloomValue& value = *static_cast<BloomValue*>(opaque);
  if (ChunkAssembler* pending = value.pending()) {
    const std::string total = absl::StrCat("pending load of ", pending->total(), " bytes");
    api::DigestAddStringBuffer(digest, total.data(), total.size());
    api::DigestAddStringBuffer(digest, pending->received().data(), pending->received().size());
  } else {
    absl::StatusOr<std::string> image = SaveImage(*value.filter());
    // No memory for the copy: DEBUG DIGEST cannot fail either, so it names the failure.
    const std::string_view bytes =
        image.ok() ? std::string_view(*image) : std::string_view("no memory for the digest");
    api::DigestAddStringBuffer(digest, bytes.data(), bytes.size());
  }
  api::DigestEndSequence(digest);
}

void Free(void* opaque) { std::unique_ptr<BloomValue> owned(static_cast<BloomValue*>(opaque)); }

// COPY: a NULL result makes the command fail, which is what an allocation failure should do.
void* Copy(RedisModuleString*, RedisModuleString*, const void* opaque) {
  auto& value = *const_cast<BloomValue*>(static_cast<const BloomValue*>(opaque));
  try {
    if (ChunkAssembler* pending = value.pending()) {
      absl::StatusOr<ChunkAssembler> copy =
          ChunkAssembler::Resume(pending->total(), pending->received(), 0);
      if (!copy.ok()) return nullptr;
      return std::make_unique<BloomValue>(std::move(*copy)).release();
    }
    absl::StatusOr<ScalableFilter> copy =
        CloneFilter(*value.filter(), value.filter()->options().memory.max_memory_bytes);
    if (!copy.ok()) return nullptr;
    return std::make_unique<BloomValue>(std::move(*copy)).release();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// Module arguments: pairs of NAME value.
int ParseModuleArgs(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc % 2 != 0) {
    api::Log(ctx, "warning", "bloomery: module arguments come in pairs: NAME value");
    return api::kErr;
  }
  for (int i = 0; i < argc; i += 2) {
    const std::string_view name = Arg(argv[i]);
    long long value = 0;
    if (api::StringToLongLong(argv[i + 1], &value) != api::kOk || value < 0) {
      api::Log(ctx, "warning", "bloomery: %s needs a non-negative integer",
               std::string(name).c_str());
      return api::kErr;
    }
    if (EqualsIgnoreCase(name, "MAX_BYTES")) {
      g_max_bytes = static_cast<uint64_t>(value);
    } else if (EqualsIgnoreCase(name, "SCANDUMP_CHUNK_BYTES")) {
      if (value == 0) {
        api::Log(ctx, "warning", "bloomery: SCANDUMP_CHUNK_BYTES must be at least 1");
        return api::kErr;
      }
      g_chunk_bytes = static_cast<uint64_t>(value);
    } else if (EqualsIgnoreCase(name, "TESTING-CLOCK")) {
      g_testing_clock = value != 0;  // windowed.h
    } else {
      api::Log(ctx, "warning", "bloomery: unknown module argument %s", std::string(name).c_str());
      return api::kErr;
    }
  }
  return api::kOk;
}

constexpr CommandSpec kCommands[] = {
    AddingCommand("bf.reserve", Guarded<ReserveCommand>),
    AddingCommand("bf.add", Guarded<AddCommand>),
    AddingCommand("bf.madd", Guarded<MaddCommand>),
    AddingCommand("bf.insert", Guarded<InsertCommand>),
    ReadingCommand("bf.exists", Guarded<LookupCommand<Lookup, false>>, /*fast=*/true),
    ReadingCommand("bf.mexists", Guarded<LookupCommand<Lookup, true>>, /*fast=*/true),
    ReadingCommand("bf.card", Guarded<CardCommand>, /*fast=*/true),
    // Not "fast": the estimated FPR reads every bit.
    ReadingCommand("bf.info", Guarded<InfoCommand>, /*fast=*/false),
    ReadingCommand("bf.debug", Guarded<DebugCommand>, /*fast=*/false),
    // deny-oom: its first call holds the image's header (BloomValue::dump_header, in used_memory),
    // never seen by another command, replicated or saved: a read, not a write.
    {"bf.scandump", Guarded<ScanDumpCommand>, "readonly deny-oom", {{1, 0, kReader}}, "read"},
    // Replaces a pending load by the filter it completes.
    {"bf.loadchunk",
     Guarded<LoadChunkCommand>,
     "write deny-oom",
     {{1, 0, api::kKeyRW | api::kKeyUpdate}},
     "write"},
    // dest, then the sources, whose bits it copies.
    {"bf.merge",
     Guarded<MergeCommand>,
     "write deny-oom",
     {{1, 0, kAdder}, {2, -1, kReader}},
     "write"},
};

}  // namespace
}  // namespace bloomery::redis

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString** argv,
                                                                         int argc) {
  namespace br = bloomery::redis;
  namespace api = bloomery::redis::api;
  if (api::Bind(ctx, br::kModuleName, br::kModuleVersion) != api::kOk) return api::kErr;
  br::SetModuleAllocator(br::ServerAllocator());
  // What a client makes the module hold between commands counts where the filters do.
  br::SetHeldAllocator({.allocate = api::TryAlloc, .release = api::Free});
  if (br::ParseModuleArgs(ctx, argv, argc) != api::kOk) return api::kErr;
  if (api::RegisterInfoFunc(ctx, br::AddInfo) != api::kOk) return api::kErr;
  if (api::SubscribeToServerEvent(ctx, api::kCronLoopEvent, br::FollowHealthOnCron) != api::kOk) {
    return api::kErr;
  }
  // rdb_load checks IsIOError after every read, so a truncated RDB or RESTORE payload is
  // reported instead of ending the server.
  api::SetModuleOptions(ctx, api::kOptionHandleIoErrors);

  api::TypeMethods methods = {};
  methods.version = api::kTypeMethodsVersion;
  methods.rdb_load = br::RdbLoad;
  methods.rdb_save = br::RdbSave;
  methods.aof_rewrite = br::AofRewrite;
  methods.mem_usage = br::MemUsage;
  methods.digest = br::Digest;
  methods.free = br::Free;
  methods.copy = br::Copy;
  br::g_type = api::CreateDataType(ctx, br::kTypeName, br::kEncodingVersion, &methods);
  if (br::g_type == nullptr) return api::kErr;

  for (const br::CommandSpec& command : br::kCommands) {
    if (br::RegisterCommand(ctx, command) != api::kOk) return api::kErr;
  }
  // The BFW.* windowed family: its own data type and commands (windowed.h).
  return br::RegisterWindowed(ctx,
                              {.max_bytes = br::g_max_bytes, .testing_clock = br::g_testing_clock});
}
