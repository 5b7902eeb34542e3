// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
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
#include "bf.h"
#include "bf_args.h"
#include "bloomery/plan.h"
#include "bloomery/scalable_filter.h"

namespace bloomery::redis {
namespace {

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

// Inserts `keys` into the key's filter, filling `results` up to the first refused key; returns
// how many keys were applied (the index of that key, or all of them). A client's keys never take
// the filter over MAX_BYTES, even one that does not carry that cap (loaded or grown over it from
// the server's own data): the library refuses the key whose stage would, and leaves the filter
// open. The server's own keys (AOF replay, the master's commands) are applied as the server that
// first ran them did: a key refused here for the cap, which a larger cap there let in, is
// inserted into an uncapped copy of the filter.
size_t ApplyInserts(OpenKey& key, Source source, std::span<const std::string_view> keys,
                    std::span<InsertResult> results) {
  ScalableFilter& filter = *key.filter();
  (void)filter.InsertManyUnderCap(keys, results, source == Source::kClient ? g_max_bytes : 0);
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

std::span<const CommandSpec> BloomCommands() { return kCommands; }

}  // namespace bloomery::redis
