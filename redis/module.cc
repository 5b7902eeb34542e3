// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bloomery_redis.so: a Redis module speaking RedisBloom's BF.* commands over bloomery filters.
//
//   redis-server --loadmodule /path/bloomery_redis.so [MAX_BYTES n] [SCANDUMP_CHUNK_BYTES n]
//
// Every key holds a ScalableFilter: scaling filters grow by EXPANSION (2 or 4) at a total FPR
// bounded by the error rate given (a promise: every stage is planned by the blocked formula);
// NONSCALING filters are one BlockedFilter stage planned at that rate, refusing keys past their
// capacity ("ERR non scaling filter is full"). A key may also be half-way through BF.LOADCHUNK;
// it then answers only further LOADCHUNKs.
//
// Persistence carries bloomery's own file image (ScalableFilter::SaveToBytes, docs/FORMAT.md):
// the RDB, DUMP/RESTORE, SCANDUMP/LOADCHUNK and the AOF rewrite (as LOADCHUNK commands) all go
// through the one validator in LoadFromBytes, under the MAX_BYTES cap (default 4 GiB per key), so
// no payload can crash the server or give a key a filter over the cap. Loading holds the image and
// the filter at once, and saving copies the filter into one image: about twice the filter's bytes
// for a moment (SaveFailed says what an allocation failure there does).
//
// Redis runs module commands on its main thread, so filters are single-writer; the forked RDB and
// AOF children read their own copy. Filter memory is mmap'ed by bloomery (huge pages when
// available), so it shows in MEMORY USAGE (mem_usage) but not in Redis's used_memory, which is
// what maxmemory and deny-oom look at.
#include <csignal>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bf_args.h"
#include "bloomery/plan.h"
#include "bloomery/scalable_filter.h"
#include "chunks.h"
#include "module_api.h"

namespace bloomery::redis {
namespace {

// A type name of our own, exactly 9 characters as Redis requires; with the encoding version it
// identifies our values in RDB files.
constexpr const char* kTypeName = "bloomeryf";
constexpr int kEncodingVersion = 1;
constexpr int kModuleVersion = 1;
// rdb_save's first word: what follows.
constexpr uint64_t kSavedFilter = 0;
constexpr uint64_t kSavedPendingLoad = 1;
// A dump's image is the filter's memory plus its header and stage table (docs/FORMAT.md).
constexpr uint64_t kImageOverheadBytes = uint64_t{1} << 20;

RedisModuleType* g_type = nullptr;
uint64_t g_max_bytes = uint64_t{4} << 30;
uint64_t g_chunk_bytes = kDumpChunkBytes;

// What a key of our type holds.
struct BloomValue {
  explicit BloomValue(ScalableFilter filter) : state(std::move(filter)) {}
  explicit BloomValue(ChunkAssembler pending) : state(std::move(pending)) {}

  std::variant<ScalableFilter, ChunkAssembler> state;
  // BF.SCANDUMP's image, kept between its calls so that each costs O(chunk) rather than a
  // serialization of the whole filter; dropped by the call that ends the dump and by every write
  // (a dump across writes mixes two states, which LOADCHUNK's validator then refuses).
  std::string dump;

  ScalableFilter* filter() { return std::get_if<ScalableFilter>(&state); }
  ChunkAssembler* pending() { return std::get_if<ChunkAssembler>(&state); }
};

LoadOptions FilterLoadOptions() {
  LoadOptions options;
  options.max_bytes = g_max_bytes;
  return options;
}

uint64_t MaxImageBytes() { return g_max_bytes == 0 ? 0 : g_max_bytes + kImageOverheadBytes; }

std::string ErrorReply(const absl::Status& status) {
  std::string message(status.message().data(), status.message().size());
  // Our own parsers already speak in replies; library statuses get Redis's generic error code.
  if (message.rfind("ERR ", 0) == 0) return message;
  return "ERR " + message;
}

int ReplyError(RedisModuleCtx* ctx, const absl::Status& status) {
  return api::ReplyWithError(ctx, ErrorReply(status).c_str());
}

std::string_view Arg(RedisModuleString* arg) {
  size_t length = 0;
  const char* data = api::StringPtrLen(arg, &length);
  return {data, length};
}

std::vector<std::string_view> Args(RedisModuleString** argv, int begin, int end) {
  std::vector<std::string_view> args;
  args.reserve(static_cast<size_t>(end - begin));
  for (int i = begin; i < end; ++i) args.push_back(Arg(argv[i]));
  return args;
}

// An open key and what it holds; closes the key when it goes out of scope.
class OpenKey {
 public:
  enum class Holds { kNothing, kFilter, kPendingLoad, kOtherType };

  OpenKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(api::OpenKey(ctx, name, mode)) {
    const int type = key_ == nullptr ? api::kKeyTypeEmpty : api::KeyType(key_);
    if (type == api::kKeyTypeEmpty) {
      holds_ = Holds::kNothing;
    } else if (type != api::kKeyTypeModule || api::ModuleTypeGetType(key_) != g_type) {
      holds_ = Holds::kOtherType;
    } else {
      value_ = static_cast<BloomValue*>(api::ModuleTypeGetValue(key_));
      holds_ = value_->filter() != nullptr ? Holds::kFilter : Holds::kPendingLoad;
    }
  }
  OpenKey(const OpenKey&) = delete;
  OpenKey& operator=(const OpenKey&) = delete;
  ~OpenKey() {
    if (key_ != nullptr) api::CloseKey(key_);
  }

  Holds holds() const { return holds_; }
  BloomValue* value() const { return value_; }
  ScalableFilter* filter() const { return value_ == nullptr ? nullptr : value_->filter(); }
  ChunkAssembler* pending() const { return value_ == nullptr ? nullptr : value_->pending(); }

  // Replaces the key's value (Redis frees the old one through our free callback).
  void Set(std::unique_ptr<BloomValue> value) {
    value_ = value.get();
    api::ModuleTypeSetValue(key_, g_type, value.release());
    holds_ = value_->filter() != nullptr ? Holds::kFilter : Holds::kPendingLoad;
  }
  // After a write to the filter: a cached SCANDUMP image is stale.
  void Modified() {
    if (value_ != nullptr && !value_->dump.empty()) std::string().swap(value_->dump);
  }
  void Delete() {
    api::DeleteKey(key_);
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
  RedisModuleKey* key_;
  BloomValue* value_ = nullptr;
  Holds holds_ = Holds::kNothing;
};

absl::StatusOr<std::unique_ptr<BloomValue>> NewFilter(const FilterParams& params) {
  const ScalableOptions options = ToScalableOptions(params, g_max_bytes);
  absl::StatusOr<ScalableFilter> filter = ScalableFilter::Create(options);
  if (absl::IsResourceExhausted(filter.status()) && g_max_bytes != 0) {
    // The library calls every refused stage "full"; for a filter being created the first stage is
    // the one refused, and the reason worth saying is the module's cap.
    absl::StatusOr<Plan> first =
        PlanFor(options.capacity, ScalableFilter::StageFpr(options, 0), Layout::kBlocked);
    if (first.ok() && first->bytes() > g_max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "ERR the filter needs ", first->bytes(), " bytes, over the module's MAX_BYTES of ",
          g_max_bytes, ": reserve a smaller capacity or a larger error rate"));
    }
  }
  if (!filter.ok()) return filter.status();
  return std::make_unique<BloomValue>(std::move(*filter));
}

// A copy of `filter` made by merging it into an empty filter with its options: the same stages,
// bits and key counts as a Save/Load round trip, without a second image of the filter in memory.
absl::StatusOr<ScalableFilter> CloneFilter(const ScalableFilter& filter) {
  absl::StatusOr<ScalableFilter> copy = ScalableFilter::Create(filter.options());
  if (!copy.ok()) return copy.status();
  if (absl::Status merged = copy->UnionWith(filter); !merged.ok()) return merged;
  return copy;
}

// ---------------------------------------------------------------------------------------------
// Commands.

int ReserveCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<FilterParams> params = ParseReserve(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(params.status())) return api::WrongArity(ctx);
  if (!params.ok()) return ReplyError(ctx, params.status());
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  if (key.holds() != OpenKey::Holds::kNothing) return key.ReplyNotAFilter(ctx);
  absl::StatusOr<std::unique_ptr<BloomValue>> value = NewFilter(*params);
  if (!value.ok()) return ReplyError(ctx, value.status());
  key.Set(std::move(*value));
  api::ReplicateVerbatim(ctx);
  return api::ReplyWithSimpleString(ctx, "OK");
}

// BF.ADD, BF.MADD and BF.INSERT: test-and-set of `items`, creating the filter with `params`
// when the key is empty and `create` allows. Replies one integer (or an array of them when
// `multi`), RedisBloom's "non scaling filter is full" error in place of the first refused key.
int InsertItems(RedisModuleCtx* ctx, RedisModuleString* key_name,
                std::span<RedisModuleString*> items, const FilterParams& params, bool create,
                bool multi) {
  OpenKey key(ctx, key_name, api::kRead | api::kWrite);
  if (key.holds() == OpenKey::Holds::kNothing && create) {
    absl::StatusOr<std::unique_ptr<BloomValue>> value = NewFilter(params);
    if (!value.ok()) return ReplyError(ctx, value.status());
    key.Set(std::move(*value));
  }
  ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);

  std::vector<std::string_view> keys;
  keys.reserve(items.size());
  for (RedisModuleString* item : items) keys.push_back(Arg(item));
  std::vector<InsertResult> results(keys.size());
  (void)filter->InsertMany(keys, results);
  key.Modified();

  if (multi) api::ReplyWithArray(ctx, api::kPostponedLength);
  long replied = 0;
  for (const InsertResult result : results) {
    ++replied;
    if (result == InsertResult::kRefused) {
      if (filter->options().scaling) {
        ReplyError(ctx, filter->FullStatus());
      } else {
        api::ReplyWithError(ctx, "ERR non scaling filter is full");
      }
      break;
    }
    api::ReplyWithLongLong(ctx, result == InsertResult::kAdded ? 1 : 0);
  }
  if (multi) api::ReplySetArrayLength(ctx, replied);
  api::ReplicateVerbatim(ctx);
  return api::kOk;
}

int AddCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv[1], {argv + 2, 1}, FilterParams{}, /*create=*/true,
                     /*multi=*/false);
}

int MaddCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv[1], {argv + 2, static_cast<size_t>(argc - 2)}, FilterParams{},
                     /*create=*/true, /*multi=*/true);
}

int InsertCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<InsertArgs> args = ParseInsert(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(args.status())) return api::WrongArity(ctx);
  if (!args.ok()) return ReplyError(ctx, args.status());
  const size_t first = 2 + args->first_item;
  return InsertItems(ctx, argv[1], {argv + first, static_cast<size_t>(argc) - first}, args->params,
                     args->create, /*multi=*/true);
}

// BF.EXISTS / BF.MEXISTS: a missing key holds nothing, so every answer is 0.
int Lookup(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  OpenKey key(ctx, argv[1], api::kRead);
  if (key.holds() != OpenKey::Holds::kNothing && key.filter() == nullptr) {
    return key.ReplyNotAFilter(ctx);
  }
  const std::vector<std::string_view> items = Args(argv, 2, argc);
  std::vector<uint8_t> found(items.size(), 0);
  if (const ScalableFilter* filter = key.filter()) {
    // std::vector<bool> is not a span of bool: answer into a plain array.
    const std::unique_ptr<bool[]> answers = std::make_unique<bool[]>(items.size());
    (void)filter->MayContainMany(items, {answers.get(), items.size()});
    for (size_t i = 0; i < items.size(); ++i) found[i] = answers[i];
  }
  if (multi) api::ReplyWithArray(ctx, static_cast<long>(items.size()));
  for (const uint8_t answer : found) api::ReplyWithLongLong(ctx, answer);
  return api::kOk;
}

int ExistsCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  return Lookup(ctx, argv, argc, /*multi=*/false);
}

int MexistsCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
  return Lookup(ctx, argv, argc, /*multi=*/true);
}

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

// BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION|FPR|BITSPERITEM]: RedisBloom's five fields
// (what redis-py's BFInfo reads), then the FPR the filter has now (exact, from its bits: O(bytes))
// and its bits per key of capacity.
int InfoCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2 && argc != 3) return api::WrongArity(ctx);
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);

  struct Field {
    const char* name;    // in the full reply
    const char* option;  // BF.INFO key <option>
  };
  static constexpr Field kFields[] = {
      {"Capacity", "CAPACITY"},         {"Size", "SIZE"},
      {"Number of filters", "FILTERS"}, {"Number of items inserted", "ITEMS"},
      {"Expansion rate", "EXPANSION"},  {"Estimated FPR", "FPR"},
      {"Bits per item", "BITSPERITEM"},
  };
  const auto reply_field = [&](size_t index) {
    switch (index) {
      case 0:
        return api::ReplyWithLongLong(ctx, static_cast<long long>(filter->capacity()));
      case 1:
        return api::ReplyWithLongLong(ctx, static_cast<long long>(FilterMemory(*filter)));
      case 2:
        return api::ReplyWithLongLong(ctx, filter->stage_count());
      case 3:
        return api::ReplyWithLongLong(ctx, static_cast<long long>(filter->EstimatedCount() + 0.5));
      case 4:
        return filter->options().scaling ? api::ReplyWithLongLong(ctx, filter->options().growth)
                                         : api::ReplyWithNull(ctx);
      case 5:
        return api::ReplyWithDouble(ctx, filter->EstimatedFpr());
      default:
        return api::ReplyWithDouble(
            ctx, static_cast<double>(TotalBits(*filter)) / static_cast<double>(filter->capacity()));
    }
  };
  constexpr size_t kCount = sizeof(kFields) / sizeof(kFields[0]);
  if (argc == 3) {
    for (size_t i = 0; i < kCount; ++i) {
      if (EqualsIgnoreCase(Arg(argv[2]), kFields[i].option)) {
        api::ReplyWithArray(ctx, 1);
        return reply_field(i);
      }
    }
    return api::ReplyWithError(ctx, "ERR Invalid information value");
  }
  api::ReplyWithArray(ctx, 2 * kCount);
  for (size_t i = 0; i < kCount; ++i) {
    api::ReplyWithSimpleString(ctx, kFields[i].name);
    reply_field(i);
  }
  return api::kOk;
}

// BF.SCANDUMP key iterator (chunks.h). Iterator 0 serializes the filter (O(bytes)) into the
// value's cached image; later calls copy one chunk of it, and the call that ends the dump frees
// it (a client that stops early leaves it until the next write or the key's deletion; it counts
// in MEMORY USAGE but not in used_memory, so the command is deny-oom).
int ScanDumpCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk || iterator < 0) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);
  std::string& image = key.value()->dump;
  if (iterator == 0 || image.empty()) {
    absl::StatusOr<std::string> saved = filter->SaveToBytes();
    if (!saved.ok()) return ReplyError(ctx, saved.status());
    image = std::move(*saved);
  }
  api::ReplyWithArray(ctx, 2);
  if (iterator == 0) {
    const std::string prefix = EncodeDumpPrefix(image.size());
    api::ReplyWithLongLong(ctx, 1);
    return api::ReplyWithStringBuffer(ctx, prefix.data(), prefix.size());
  }
  const DumpSlice slice = SliceForIterator(image.size(), iterator, g_chunk_bytes);
  api::ReplyWithLongLong(ctx, slice.next_iterator);
  api::ReplyWithStringBuffer(ctx, image.data() + slice.begin, slice.length);
  if (slice.length == 0) std::string().swap(image);  // the dump is over
  return api::kOk;
}

// BF.LOADCHUNK key iterator data. A failed chunk deletes the half-loaded key, so a client can
// start again from the prefix; the key never holds an unvalidated filter.
int LoadChunkCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  const std::string_view data = Arg(argv[3]);
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  if (iterator == 1) {
    if (key.holds() != OpenKey::Holds::kNothing) return key.ReplyNotAFilter(ctx);
    absl::StatusOr<ChunkAssembler> assembler = ChunkAssembler::Start(data, MaxImageBytes());
    if (!assembler.ok()) return ReplyError(ctx, assembler.status());
    key.Set(std::make_unique<BloomValue>(std::move(*assembler)));
    api::ReplicateVerbatim(ctx);
    return api::ReplyWithSimpleString(ctx, "OK");
  }
  ChunkAssembler* pending = key.pending();
  if (pending == nullptr) {
    if (key.holds() == OpenKey::Holds::kFilter) {
      return api::ReplyWithError(ctx, "ERR the filter is already loaded");
    }
    return key.ReplyNotAFilter(ctx);
  }
  api::ReplicateVerbatim(ctx);
  if (absl::Status appended = pending->Append(iterator, data); !appended.ok()) {
    key.Delete();
    return ReplyError(ctx, appended);
  }
  if (!pending->complete()) return api::ReplyWithSimpleString(ctx, "OK");
  absl::StatusOr<ScalableFilter> filter =
      ScalableFilter::LoadFromBytes(pending->received(), FilterLoadOptions());
  if (!filter.ok()) {
    key.Delete();
    return api::ReplyWithError(
        ctx, absl::StrCat("ERR invalid dump: ", filter.status().message()).c_str());
  }
  key.Set(std::make_unique<BloomValue>(std::move(*filter)));
  return api::ReplyWithSimpleString(ctx, "OK");
}

// A refused union's reply, with what to do about it: BF.MERGE ORs stage i into stage i, so it
// cannot spread the sources' keys over new stages.
absl::Status MergeRefused(const absl::Status& status) {
  if (!absl::IsFailedPrecondition(status)) return status;
  return absl::FailedPreconditionError(
      absl::StrCat(status.message(),
                   ". BF.MERGE ORs stage i into stage i, so the sources' keys together must fit "
                   "each stage: reserve every source (BF.RESERVE) with the capacity of the union"));
}

// BF.MERGE dest src [src ...]: dest |= every src (compatible filters: same capacity, error
// rate, expansion, seed and integer hash). A missing dest starts as a copy of the first src. All
// keys must hash to one slot in a cluster (use a hash tag: {crawl}:worker1).
//
// All or nothing: an error leaves dest as it was (not created, not partly merged) and is not
// replicated. Every source's options are checked before anything is written; the unions, which
// may be refused for a stage's capacity only once the bits are ORed, go into a scratch filter
// (a copy of dest, or of the first source) that replaces dest when all succeeded. So a merge
// briefly holds one more copy of dest, except for the common case of one source that has no
// more stages than dest: UnionWith decides before it writes and adds no stage, so it runs in place.
int MergeCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return api::WrongArity(ctx);
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
  if (target != nullptr && merging.size() == 1 &&
      merging.front()->stage_count() <= target->stage_count()) {
    if (absl::Status merged = target->UnionWith(*merging.front()); !merged.ok()) {
      return ReplyError(ctx, MergeRefused(merged));
    }
    dest.Modified();
  } else if (target == nullptr || !merging.empty()) {
    absl::StatusOr<ScalableFilter> scratch = CloneFilter(base);
    if (!scratch.ok()) return ReplyError(ctx, scratch.status());
    for (const ScalableFilter* filter : merging) {
      if (absl::Status merged = scratch->UnionWith(*filter); !merged.ok()) {
        return ReplyError(ctx, MergeRefused(merged));
      }
    }
    if (target == nullptr) {
      dest.Set(std::make_unique<BloomValue>(std::move(*scratch)));
    } else {
      *target = std::move(*scratch);
      dest.Modified();
    }
  }
  api::ReplicateVerbatim(ctx);
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

  std::unique_ptr<BloomValue> value;
  absl::Status status;
  if (tag == kSavedFilter) {
    absl::StatusOr<ScalableFilter> filter =
        ScalableFilter::LoadFromBytes(bytes, FilterLoadOptions());
    if (filter.ok()) value = std::make_unique<BloomValue>(std::move(*filter));
    status = filter.status();
  } else if (tag == kSavedPendingLoad) {
    absl::StatusOr<ChunkAssembler> pending =
        ChunkAssembler::Resume(total, std::string(bytes), MaxImageBytes());
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

// A filter's image for rdb_save and aof_rewrite: a full copy of the filter (SaveToBytes), whose
// allocation can fail. std::bad_alloc must not unwind into the server's C frames (it would end in
// std::terminate), so it becomes a status here.
absl::StatusOr<std::string> SaveImage(const ScalableFilter& filter) {
  try {
    return filter.SaveToBytes();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat("no memory for a copy of its ", filter.memory_bytes(), " bytes"));
  }
}

// A filter that rdb_save or aof_rewrite cannot serialize. Redis 7.0 gives a module no way to fail
// a save from these callbacks (IsIOError only reads the flag a failed write sets), so the most
// honest outcome depends on the process. In a forked child (BGSAVE, BGREWRITEAOF, a replica's full
// sync) the child ends itself, so that save fails: the previous RDB or AOF stays, the server logs
// it, and with stop-writes-on-bgsave-error refuses writes until a save succeeds. It ends by
// SIGKILL rather than ExitFromChild(1) because Redis 7.0 deletes a failed BGSAVE's temp file only
// for a child ended by a signal, and retries the save every few seconds. In the server's own
// process (DUMP, MIGRATE, SAVE, SHUTDOWN's save, DEBUG RELOAD) nothing can fail the save alone, and
// an image the loader refuses would be worse than a crash: SAVE or SHUTDOWN would rename an RDB
// that no restart loads over the last good one, losing every key. So the server aborts, as Redis
// does when its own allocations fail (zmalloc's out-of-memory handler), and the last good RDB
// stays. Only an image streamed stage by stage (a library API the module does not have) avoids the
// copy.
[[noreturn]] void SaveFailed(RedisModuleIO* io, const absl::Status& status) {
  const bool child =
      (api::GetContextFlags(api::GetContextFromIO(io)) & api::kContextFlagIsChild) != 0;
  api::LogIOError(io, "warning", "bloomery: cannot serialize a filter: %s; %s",
                  std::string(status.message()).c_str(),
                  child ? "failing this background save (the child ends by SIGKILL)"
                        : "aborting, as for the server's own out-of-memory, so that no RDB that "
                          "cannot be loaded replaces the last good one");
  if (child) std::raise(SIGKILL);
  std::abort();
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
  const std::string prefix = EncodeDumpPrefix(total);
  api::EmitAOF(aof, "BF.LOADCHUNK", "slb", key, 1LL, prefix.data(), prefix.size());
  for (long long iterator = 1;;) {
    const DumpSlice slice = SliceForIterator(image.size(), iterator, g_chunk_bytes);
    if (slice.length == 0) break;
    api::EmitAOF(aof, "BF.LOADCHUNK", "slb", key, slice.next_iterator, image.data() + slice.begin,
                 slice.length);
    iterator = slice.next_iterator;
  }
}

size_t MemUsage(const void* opaque) {
  auto& value = *const_cast<BloomValue*>(static_cast<const BloomValue*>(opaque));
  if (const ScalableFilter* filter = value.filter()) {
    return FilterMemory(*filter) + value.dump.capacity();
  }
  return sizeof(BloomValue) + value.pending()->received().size();
}

void Free(void* opaque) { std::unique_ptr<BloomValue> owned(static_cast<BloomValue*>(opaque)); }

// COPY: a NULL result makes the command fail, which is what an allocation failure should do.
void* Copy(RedisModuleString*, RedisModuleString*, const void* opaque) {
  auto& value = *const_cast<BloomValue*>(static_cast<const BloomValue*>(opaque));
  try {
    if (ChunkAssembler* pending = value.pending()) {
      absl::StatusOr<ChunkAssembler> copy =
          ChunkAssembler::Resume(pending->total(), std::string(pending->received()), 0);
      if (!copy.ok()) return nullptr;
      return std::make_unique<BloomValue>(std::move(*copy)).release();
    }
    absl::StatusOr<ScalableFilter> copy = CloneFilter(*value.filter());
    if (!copy.ok()) return nullptr;
    return std::make_unique<BloomValue>(std::move(*copy)).release();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

// Commands must not let an exception (std::bad_alloc from a vector or string) unwind into the
// server's C frames: it becomes an error reply.
template <api::CommandFunc kCommand>
int Guarded(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  try {
    return kCommand(ctx, argv, argc);
  } catch (const std::exception& e) {
    return api::ReplyWithError(ctx, absl::StrCat("ERR ", e.what()).c_str());
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
    } else {
      api::Log(ctx, "warning", "bloomery: unknown module argument %s", std::string(name).c_str());
      return api::kErr;
    }
  }
  return api::kOk;
}

struct CommandSpec {
  const char* name;
  api::CommandFunc function;
  const char* flags;
  int last_key;
};

constexpr CommandSpec kCommands[] = {
    {"bf.reserve", Guarded<ReserveCommand>, "write deny-oom", 1},
    {"bf.add", Guarded<AddCommand>, "write deny-oom", 1},
    {"bf.madd", Guarded<MaddCommand>, "write deny-oom", 1},
    {"bf.insert", Guarded<InsertCommand>, "write deny-oom", 1},
    {"bf.exists", Guarded<ExistsCommand>, "readonly fast", 1},
    {"bf.mexists", Guarded<MexistsCommand>, "readonly fast", 1},
    {"bf.card", Guarded<CardCommand>, "readonly fast", 1},
    // Not "fast": the estimated FPR reads every bit.
    {"bf.info", Guarded<InfoCommand>, "readonly", 1},
    // deny-oom: its first call copies the whole filter (BloomValue::dump).
    {"bf.scandump", Guarded<ScanDumpCommand>, "readonly deny-oom", 1},
    {"bf.loadchunk", Guarded<LoadChunkCommand>, "write deny-oom", 1},
    // Every argument from the first is a key (dest, then sources).
    {"bf.merge", Guarded<MergeCommand>, "write deny-oom", -1},
};

}  // namespace
}  // namespace bloomery::redis

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString** argv,
                                                                         int argc) {
  namespace br = bloomery::redis;
  namespace api = bloomery::redis::api;
  if (api::Bind(ctx, "bloomery", br::kModuleVersion) != api::kOk) return api::kErr;
  if (br::ParseModuleArgs(ctx, argv, argc) != api::kOk) return api::kErr;
  // rdb_load checks IsIOError after every read, so a truncated RDB or RESTORE payload is
  // reported instead of ending the server.
  api::SetModuleOptions(ctx, api::kOptionHandleIoErrors);

  api::TypeMethods methods = {};
  methods.version = api::kTypeMethodsVersion;
  methods.rdb_load = br::RdbLoad;
  methods.rdb_save = br::RdbSave;
  methods.aof_rewrite = br::AofRewrite;
  methods.mem_usage = br::MemUsage;
  methods.free = br::Free;
  methods.copy = br::Copy;
  br::g_type = api::CreateDataType(ctx, br::kTypeName, br::kEncodingVersion, &methods);
  if (br::g_type == nullptr) return api::kErr;

  for (const br::CommandSpec& command : br::kCommands) {
    if (api::CreateCommand(ctx, command.name, command.function, command.flags, 1, command.last_key,
                           1) != api::kOk) {
      return api::kErr;
    }
  }
  return api::kOk;
}
