// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "windowed.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bf_args.h"
#include "bloomery/windowed_filter.h"
#include "commands.h"
#include "health.h"
#include "server_memory.h"
#include "windowed_args.h"

namespace bloomery::redis {
namespace {

// 9 characters, as Redis requires; with the encoding version it names our values in RDB files.
constexpr const char* kTypeName = "bloomeryw";
constexpr int kEncodingVersion = 1;
// Times are milliseconds since the Unix epoch; the filters' clock counts nanoseconds in int64.
constexpr int64_t kNsPerMs = 1'000'000;
constexpr long long kMaxTimeMs = std::numeric_limits<int64_t>::max() / kNsPerMs;

RedisModuleType* g_type = nullptr;
WindowedConfig g_config;
// BFW.TESTING-CLOCK-OFFSET's step of this server's wall clock (only with TESTING-CLOCK 1).
int64_t g_clock_offset_ms = 0;
// The logical time of the command running now, which every filter's WindowClock returns: Redis
// runs commands and the RDB/AOF callbacks on one thread (a forked child has its own copy).
int64_t g_now_ns = 0;

int64_t LogicalClock() { return g_now_ns; }
void RunAt(int64_t ms) { g_now_ns = ms * kNsPerMs; }

int64_t RealClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// This server's clock as the module reads it: within the times BFW.AT accepts, [0, kMaxTimeMs],
// whatever the offset (ClockOffsetCommand keeps it there; the clamp holds it as real time moves),
// so that every write replicates at a time its replicas and the AOF apply, and RunAt's
// nanoseconds never overflow.
int64_t WallClockMs() {
  return std::clamp<int64_t>(RealClockMs() + g_clock_offset_ms, 0, kMaxTimeMs);
}

// What a key of our type holds: the filter, and the time of its last write, at which it is saved
// and at which a replica answers.
struct WindowedValue : InServerMemory {
  // Its health enters INFO bf's totals as of `time` (health.h).
  WindowedValue(WindowedFilter f, int64_t time)
      : filter(std::move(f)), time_ms(time), health(&FollowHealth, this, filter.window_ns() != 0) {
    RunAt(time_ms);
    health.Refresh(filter);
    health_epoch = filter.current_epoch();
  }
  WindowedFilter filter;
  int64_t time_ms;
  // A window of time expires generations with no write: the timer checks the filter's epoch as a
  // read would now (O(1)) and computes the health again when a generation has rotated out since.
  TrackedHealth health;
  uint64_t health_epoch = 0;

  static void FollowHealth(void* value, RedisModuleCtx* ctx);
};

// An open key of the windowed type; closes it when it goes out of scope.
class WindowedKey {
 public:
  WindowedKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(ctx, name, mode, g_type) {}

  bool empty() const { return key_.empty(); }
  WindowedValue* value() const { return key_.value<WindowedValue>(); }
  void Set(std::unique_ptr<WindowedValue> value) { key_.Set(value.release()); }
  // The reply for a key that holds no windowed filter: RedisBloom's text for a missing key.
  int ReplyNotAFilter(RedisModuleCtx* ctx) const {
    return api::ReplyWithError(ctx, empty() ? "ERR not found" : api::kWrongTypeError);
  }

 private:
  ModuleKey key_;
};

// The time a write runs at: `at` (BFW.AT, from the master or the AOF) or this server's clock, and
// never before the key's last write, so that a clock stepping back changes nothing.
int64_t WriteTime(const WindowedValue* value, std::optional<int64_t> at) {
  const int64_t now = at.value_or(WallClockMs());
  return value == nullptr ? now : std::max(now, value->time_ms);
}

// The time a read answers at (windowed.h): the master's clock on the master; on a replica, or
// while loading, the time of the key's last write.
int64_t ReadTime(RedisModuleCtx* ctx, const WindowedValue& value) {
  const int flags = api::GetContextFlags(ctx);
  const bool master = (flags & (api::kContextFlagSlave | api::kContextFlagLoading |
                                api::kContextFlagAsyncLoading)) == 0;
  return master ? std::max(WallClockMs(), value.time_ms) : value.time_ms;
}

void WindowedValue::FollowHealth(void* value, RedisModuleCtx* ctx) {
  auto& self = *static_cast<WindowedValue*>(value);
  RunAt(ReadTime(ctx, self));
  const uint64_t epoch = self.filter.current_epoch();
  if (epoch == self.health_epoch && !self.health.behind()) return;
  self.health.Refresh(self.filter);
  self.health_epoch = epoch;
}

// Replicates a write that ran at `time_ms` as BFW.AT time_ms <command> key args... (argv[0] is the
// command, argv[1] its key): replicas and the AOF apply it at the master's time.
void ReplicateAt(RedisModuleCtx* ctx, int64_t time_ms, const char* command,
                 RedisModuleString** argv, int argc) {
  api::Replicate(ctx, "BFW.AT", "lcv", static_cast<long long>(time_ms), command, argv + 1,
                 static_cast<size_t>(argc - 1));
}

// MAX_BYTES bounds a client's filter; the server's own data (its master's, the AOF's) loads as the
// master made it (the memory options themselves: ModuleMemory, bf_args.h).
uint64_t MaxBytesFor(Source source) { return source == Source::kClient ? g_config.max_bytes : 0; }

absl::StatusOr<std::unique_ptr<WindowedValue>> NewValue(const WindowedParams& params, Source source,
                                                        int64_t time_ms) {
  WindowedOptions options = ToWindowedOptions(params, MaxBytesFor(source));
  options.clock = LogicalClock;
  RunAt(time_ms);  // the window begins now: Create reads the clock
  absl::StatusOr<WindowedFilter> filter = WindowedFilter::Create(options);
  if (!filter.ok()) return filter.status();
  return std::make_unique<WindowedValue>(std::move(*filter), time_ms);
}

absl::StatusOr<WindowedFilter> LoadImage(std::string_view bytes, Source source, int64_t time_ms) {
  RunAt(time_ms);
  return WindowedFilter::LoadFromBytes(bytes, ModuleLoadOptions(MaxBytesFor(source)), LogicalClock);
}

// ---------------------------------------------------------------------------------------------
// Writes. Each takes argv as a client sends it (argv[0] the command, argv[1] the key) and `at`,
// the time BFW.AT gives (none: this server's clock), and replicates itself with its time.

using WriteFunc = int (*)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc,
                          std::optional<int64_t> at);

int Reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, std::optional<int64_t> at) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<WindowedParams> params = ParseWindowedReserve(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(params.status())) return api::WrongArity(ctx);
  if (!params.ok()) return ReplyParseError(ctx, params.status());
  WindowedKey key(ctx, argv[1], api::kRead | api::kWrite);
  if (!key.empty()) {
    return api::ReplyWithError(ctx,
                               key.value() != nullptr ? "ERR item exists" : api::kWrongTypeError);
  }
  const int64_t time_ms = WriteTime(nullptr, at);
  absl::StatusOr<std::unique_ptr<WindowedValue>> value = NewValue(*params, SourceOf(ctx), time_ms);
  if (!value.ok()) return ReplyError(ctx, value.status());
  key.Set(std::move(*value));
  ReplicateAt(ctx, time_ms, "BFW.RESERVE", argv, argc);
  Notify(ctx, "bfw.reserve", argv[1]);
  return api::ReplyWithSimpleString(ctx, "OK");
}

// BFW.ADD, BFW.MADD and BFW.INSERT: test-and-set of argv[first_item...] at the write's time,
// creating the filter with `params` (when given) if the key is empty and `create` allows.
// Replies 1 for a key not present within the window (new, or expired), 0 for one present.
int InsertItems(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, int first_item,
                const char* command, const char* event, const WindowedInsertArgs* insert,
                bool multi, std::optional<int64_t> at) {
  WindowedKey key(ctx, argv[1], api::kRead | api::kWrite);
  const int64_t time_ms = WriteTime(key.value(), at);  // one clock read for the whole write
  if (key.empty() && insert != nullptr && insert->create) {
    if (!insert->sized) {
      return api::ReplyWithError(ctx, "ERR a new windowed filter needs WINDOW duration or KEYS n");
    }
    absl::StatusOr<std::unique_ptr<WindowedValue>> value =
        NewValue(insert->params, SourceOf(ctx), time_ms);
    if (!value.ok()) return ReplyError(ctx, value.status());
    key.Set(std::move(*value));
  }
  WindowedValue* value = key.value();
  if (value == nullptr) return key.ReplyNotAFilter(ctx);

  value->time_ms = time_ms;
  RunAt(value->time_ms);
  const std::vector<std::string_view> items = Args(argv, first_item, argc);
  const std::unique_ptr<bool[]> was_new = std::make_unique<bool[]>(items.size());
  const size_t added = value->filter.InsertMany(items, {was_new.get(), items.size()});
  value->health.AfterWrite(value->filter, added);

  if (multi) api::ReplyWithArray(ctx, static_cast<long>(items.size()));
  for (size_t i = 0; i < items.size(); ++i) api::ReplyWithLongLong(ctx, was_new[i] ? 1 : 0);
  ReplicateAt(ctx, value->time_ms, command, argv, argc);
  // Every insert writes (a rotation, a refreshed key), so every one is an event.
  Notify(ctx, event, argv[1]);
  return api::kOk;
}

int Add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, std::optional<int64_t> at) {
  if (argc != 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv, argc, 2, "BFW.ADD", "bfw.add", nullptr, /*multi=*/false, at);
}

int Madd(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, std::optional<int64_t> at) {
  if (argc < 3) return api::WrongArity(ctx);
  return InsertItems(ctx, argv, argc, 2, "BFW.MADD", "bfw.madd", nullptr, /*multi=*/true, at);
}

int Insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, std::optional<int64_t> at) {
  if (argc < 4) return api::WrongArity(ctx);
  absl::StatusOr<WindowedInsertArgs> args = ParseWindowedInsert(Args(argv, 2, argc));
  if (absl::IsFailedPrecondition(args.status())) return api::WrongArity(ctx);
  if (!args.ok()) return ReplyParseError(ctx, args.status());
  return InsertItems(ctx, argv, argc, 2 + static_cast<int>(args->first_item), "BFW.INSERT",
                     "bfw.insert", &*args,
                     /*multi=*/true, at);
}

// BFW.IMAGE key bytes, only through BFW.AT (the AOF rewrite's form of a key): the filter's file
// image, loaded at BFW.AT's time through the library's validator.
int Image(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, std::optional<int64_t> at) {
  if (argc != 3 || !at.has_value()) return api::WrongArity(ctx);
  absl::StatusOr<WindowedFilter> filter = LoadImage(Arg(argv[2]), SourceOf(ctx), *at);
  if (!filter.ok()) {
    return api::ReplyWithError(
        ctx,
        absl::StrCat("ERR invalid windowed filter image: ", filter.status().message()).c_str());
  }
  WindowedKey key(ctx, argv[1], api::kRead | api::kWrite);
  key.Set(std::make_unique<WindowedValue>(std::move(*filter), *at));
  ReplicateAt(ctx, *at, "BFW.IMAGE", argv, argc);
  return api::ReplyWithSimpleString(ctx, "OK");
}

template <WriteFunc kWrite>
int ClientWrite(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return kWrite(ctx, argv, argc, std::nullopt);
}

// BFW.AT ms command key args...: a write as its master (or the AOF's server) ran it, at its time.
// Clients may not send it: a time of their choosing would move a window for every replica.
int AtCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return api::WrongArity(ctx);
  const int flags = api::GetContextFlags(ctx);
  if ((flags & (api::kContextFlagReplicated | api::kContextFlagLoading |
                api::kContextFlagAsyncLoading)) == 0) {
    return api::ReplyWithError(ctx,
                               "ERR BFW.AT carries the master's time to its replicas and the AOF; "
                               "clients send BFW.RESERVE, BFW.ADD, BFW.MADD or BFW.INSERT");
  }
  long long time_ms = 0;
  if (api::StringToLongLong(argv[1], &time_ms) != api::kOk || time_ms < 0 || time_ms > kMaxTimeMs) {
    return api::ReplyWithError(ctx, "ERR bad time");
  }
  struct Write {
    const char* name;
    WriteFunc function;
  };
  static constexpr Write kWrites[] = {{"BFW.RESERVE", Reserve},
                                      {"BFW.ADD", Add},
                                      {"BFW.MADD", Madd},
                                      {"BFW.INSERT", Insert},
                                      {"BFW.IMAGE", Image}};
  for (const Write& write : kWrites) {
    if (EqualsIgnoreCase(Arg(argv[2]), write.name)) {
      return write.function(ctx, argv + 2, argc - 2, time_ms);
    }
  }
  return api::ReplyWithError(ctx, "ERR BFW.AT: unknown write");
}

// ---------------------------------------------------------------------------------------------
// Reads: they never write, and answer at ReadTime.

// BFW.EXISTS / BFW.MEXISTS: a missing key holds nothing, so every answer is 0.
int Lookup(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi) {
  WindowedKey key(ctx, argv[1], api::kRead);
  if (!key.empty() && key.value() == nullptr) return key.ReplyNotAFilter(ctx);
  const WindowedValue* value = key.value();
  if (value != nullptr) RunAt(ReadTime(ctx, *value));
  return ReplyLookups(ctx, argv, argc, multi, value != nullptr ? &value->filter : nullptr);
}

size_t ValueMemory(const WindowedValue& value) {
  return sizeof(WindowedValue) + value.filter.memory_bytes();
}

// BFW.INFO key: the window (milliseconds, or keys in KEYS mode), generations, refresh policy,
// layout, capacity, error rate, size in bytes, keys inserted within the window (estimated from the
// bits), the FPR now, the newest generation's epoch as of the read, and the time of the last write.
int InfoCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  WindowedKey key(ctx, argv[1], api::kRead);
  WindowedValue* value = key.value();
  if (value == nullptr) return key.ReplyNotAFilter(ctx);
  RunAt(ReadTime(ctx, *value));
  const WindowedFilter& filter = value->filter;
  const bool keys_mode = filter.window_ns() == 0;
  // The live window's health, read now; INFO bf's totals take it on the way.
  value->health.Refresh(filter);
  const FilterHealth& health = value->health.last();
  const InfoField fields[] = {
      {"Mode", nullptr, keys_mode ? "KEYS" : "WINDOW"},
      {keys_mode ? "Window keys" : "Window ms", nullptr,
       keys_mode ? static_cast<long long>(filter.capacity())
                 : static_cast<long long>(filter.window_ns() / kNsPerMs)},
      {"Generations", nullptr, static_cast<long long>(filter.generations())},
      {"Refresh", nullptr,
       filter.refresh() == Refresh::kOnInsert ? "ON_INSERT" : "KEEP_FIRST_SEEN"},
      // LayoutName's views are of string literals: NUL-terminated.
      {"Layout", nullptr, LayoutName(filter.layout()).data()},
      // ProbeName's views are of string literals too (BF.INFO's Probe).
      {"Probe", nullptr, ProbeName(filter.probe()).data()},
      {"Capacity", nullptr, static_cast<long long>(filter.capacity())},
      {"Error rate", nullptr, filter.fpr()},
      {"Size", nullptr, static_cast<long long>(ValueMemory(*value))},
      {"Number of items inserted", nullptr, static_cast<long long>(filter.EstimatedCount() + 0.5)},
      {"Estimated FPR", nullptr, filter.EstimatedFpr()},
      {"Epoch", nullptr, static_cast<long long>(filter.generation(0).epoch)},
      {"Time ms", nullptr, static_cast<long long>(value->time_ms)},
      // The health (health.h), as BF.INFO's.
      {"Health", nullptr, HealthStateName(health.state).data()},
      {"Planned FPR", nullptr, health.planned_fpr},
      {"FPR over planned", nullptr,
       health.planned_fpr > 0 ? health.estimated_fpr / health.planned_fpr : 0.0},
      {"Fill ratio", nullptr, health.fill_ratio},
      {"Estimated items error", nullptr, health.estimated_count_error},
  };
  return ReplyInfo(ctx, fields, std::nullopt);
}

// BFW.TESTING-CLOCK-OFFSET ms (TESTING-CLOCK 1 only): this server's wall clock, as the module
// reads it, moves by ms from the real one. Not replicated: a replica never reads its own clock
// for a window, which is what the tests show by stepping only the master's.
int ClockOffsetCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return api::WrongArity(ctx);
  long long offset = 0;
  if (api::StringToLongLong(argv[1], &offset) != api::kOk) {
    return api::ReplyWithError(ctx, "ERR bad offset");
  }
  // The clock it gives must stay a time BFW.AT accepts (WallClockMs): checked without overflow.
  const int64_t now = RealClockMs();
  if (offset < -now || offset > kMaxTimeMs - now) {
    return api::ReplyWithError(
        ctx, absl::StrCat("ERR the offset must keep the clock within the times BFW.AT accepts: ",
                          -now, " to ", kMaxTimeMs - now, " ms now")
                 .c_str());
  }
  g_clock_offset_ms = offset;
  return api::ReplyWithSimpleString(ctx, "OK");
}

// ---------------------------------------------------------------------------------------------
// The data type: the value is its time and the filter's file image (WindowedFilter::SaveToBytes at
// that time), loaded back at that time through the library's validator.

void* RdbLoad(RedisModuleIO* io, int encoding_version) {
  if (encoding_version != kEncodingVersion) {
    api::LogIOError(io, "warning", "bloomery: unknown windowed encoding version %d",
                    encoding_version);
    return nullptr;
  }
  const uint64_t time_ms = api::LoadUnsigned(io);
  if (api::IsIOError(io)) return nullptr;
  size_t length = 0;
  char* buffer = api::LoadStringBuffer(io, &length);
  if (api::IsIOError(io) || buffer == nullptr) return nullptr;
  absl::StatusOr<WindowedFilter> filter = absl::DataLossError("a time past the clock's range");
  if (time_ms <= static_cast<uint64_t>(kMaxTimeMs)) {
    filter = LoadImage({buffer, length}, SourceOf(api::GetContextFromIO(io)),
                       static_cast<int64_t>(time_ms));
  }
  api::Free(buffer);
  if (!filter.ok()) {
    api::LogIOError(io, "warning", "bloomery: refusing a saved windowed filter: %s",
                    std::string(filter.status().message()).c_str());
    return nullptr;
  }
  return std::make_unique<WindowedValue>(std::move(*filter), static_cast<int64_t>(time_ms))
      .release();
}

absl::StatusOr<std::string> ImageAtItsTime(const WindowedValue& value) {
  RunAt(value.time_ms);
  return SaveImage(value.filter);
}

void RdbSave(RedisModuleIO* io, void* opaque) {
  const WindowedValue& value = *static_cast<WindowedValue*>(opaque);
  absl::StatusOr<std::string> image = ImageAtItsTime(value);
  if (!image.ok()) SaveFailed(io, image.status());
  api::SaveUnsigned(io, static_cast<uint64_t>(value.time_ms));
  api::SaveStringBuffer(io, image->data(), image->size());
}

void AofRewrite(RedisModuleIO* aof, RedisModuleString* key, void* opaque) {
  const WindowedValue& value = *static_cast<WindowedValue*>(opaque);
  absl::StatusOr<std::string> image = ImageAtItsTime(value);
  if (!image.ok()) SaveFailed(aof, image.status());
  api::EmitAOF(aof, "BFW.AT", "lcsb", static_cast<long long>(value.time_ms), "BFW.IMAGE", key,
               image->data(), image->size());
}

// What the server's allocator holds for the key (BFW.INFO's Size is the filter's own bytes).
size_t MemUsage(const void* opaque) {
  const auto& value = *static_cast<const WindowedValue*>(opaque);
  return sizeof(WindowedValue) + ServerBytes(value.filter);
}

// DEBUG DIGEST(-VALUE): the time and the image, so two servers agree exactly when their filters
// and times do.
void Digest(RedisModuleDigest* digest, void* opaque) {
  const WindowedValue& value = *static_cast<WindowedValue*>(opaque);
  const std::string time = absl::StrCat("time ", value.time_ms);
  api::DigestAddStringBuffer(digest, time.data(), time.size());
  absl::StatusOr<std::string> image = ImageAtItsTime(value);
  const std::string_view bytes =
      image.ok() ? std::string_view(*image) : std::string_view("no memory for the digest");
  api::DigestAddStringBuffer(digest, bytes.data(), bytes.size());
  api::DigestEndSequence(digest);
}

void Free(void* opaque) {
  std::unique_ptr<WindowedValue> owned(static_cast<WindowedValue*>(opaque));
}

// COPY: through the image (a NULL result fails the command).
void* Copy(RedisModuleString*, RedisModuleString*, const void* opaque) {
  const WindowedValue& value = *static_cast<const WindowedValue*>(opaque);
  try {
    absl::StatusOr<std::string> image = ImageAtItsTime(value);
    if (!image.ok()) return nullptr;
    absl::StatusOr<WindowedFilter> copy = LoadImage(*image, Source::kServer, value.time_ms);
    if (!copy.ok()) return nullptr;
    return std::make_unique<WindowedValue>(std::move(*copy), value.time_ms).release();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

constexpr CommandSpec kCommands[] = {
    AddingCommand("bfw.reserve", Guarded<ClientWrite<Reserve>>),
    AddingCommand("bfw.add", Guarded<ClientWrite<Add>>),
    AddingCommand("bfw.madd", Guarded<ClientWrite<Madd>>),
    AddingCommand("bfw.insert", Guarded<ClientWrite<Insert>>),
    ReadingCommand("bfw.exists", Guarded<LookupCommand<Lookup, false>>, /*fast=*/true),
    ReadingCommand("bfw.mexists", Guarded<LookupCommand<Lookup, true>>, /*fast=*/true),
    // Not "fast": the estimated count and FPR read every bit.
    ReadingCommand("bfw.info", Guarded<InfoCommand>, /*fast=*/false),
    // BFW.AT ms command key ...: the key is argv[3]. BFW.IMAGE replaces the key.
    {"bfw.at",
     Guarded<AtCommand>,
     "write deny-oom",
     {{3, 0, api::kKeyRW | api::kKeyUpdate}},
     "write"},
};

}  // namespace

int RegisterWindowed(RedisModuleCtx* ctx, const WindowedConfig& config) {
  g_config = config;
  api::TypeMethods methods =
      api::DataTypeMethods(RdbLoad, RdbSave, AofRewrite, MemUsage, Digest, Free, Copy);
  g_type = api::CreateDataType(ctx, kTypeName, kEncodingVersion, &methods);
  if (g_type == nullptr) return api::kErr;
  for (const CommandSpec& command : kCommands) {
    if (RegisterCommand(ctx, command) != api::kOk) return api::kErr;
  }
  if (config.testing_clock &&
      api::CreateCommand(ctx, "bfw.testing-clock-offset", Guarded<ClockOffsetCommand>, "", 0, 0,
                         0) != api::kOk) {
    return api::kErr;
  }
  return api::kOk;
}

}  // namespace bloomery::redis
