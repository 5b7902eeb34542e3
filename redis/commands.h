// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// commands.h: what every command family of bloomery_redis.so shares (the BF.* commands, bf.h,
// and the BFW.* windowed ones, windowed.h): reading arguments, error replies, where a
// command comes from, keyspace notifications, and registering a command with its key specs and
// ACL categories.
#ifndef BLOOMERY_REDIS_COMMANDS_H_
#define BLOOMERY_REDIS_COMMANDS_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "module_api.h"

namespace bloomery::redis {

// Where a write or a load comes from, which decides whether MAX_BYTES applies. MAX_BYTES bounds
// what an untrusted payload (a client's BF.RESERVE, BF.LOADCHUNK, RESTORE, writes) makes the
// server allocate. Data the server itself wrote or its master sent (the RDB at startup, a full
// sync, AOF replay, DEBUG RELOAD, commands from the master, a RESTORE on a read-only replica,
// which only its master can send) is already bounded by the image or by what the master applied:
// refusing it would lose keys at a restart or make a replica diverge from its master (and a
// replica that fails its full sync exits), so it loads over the cap, with a warning.
enum class Source { kClient, kServer };
[[nodiscard]] Source SourceOf(RedisModuleCtx* ctx);

// A library status as a reply: our own parsers already speak in replies ("ERR ..."); other
// statuses get Redis's generic error code.
[[nodiscard]] std::string ErrorReply(const absl::Status& status);
int ReplyError(RedisModuleCtx* ctx, const absl::Status& status);
// A parser's error whose message is the reply as RedisBloom sends it, some texts without "ERR "
// ("Bad capacity", "Nonscaling filters cannot expand").
int ReplyParseError(RedisModuleCtx* ctx, const absl::Status& status);

[[nodiscard]] std::string_view Arg(RedisModuleString* arg);
[[nodiscard]] std::vector<std::string_view> Args(RedisModuleString** argv, int begin, int end);

// Keyspace notifications (notify-keyspace-events with 'g' or 'A'): each write publishes its
// command's name in lower case ("bf.reserve", "bf.add", ...) on the key it changed, as
// RedisBloom does, on the generic class.
void Notify(RedisModuleCtx* ctx, const char* event, RedisModuleString* key);

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

// EXISTS key item (kMulti false) or MEXISTS key item... (true) of a family whose
// `kLookup(ctx, argv, argc, multi)` answers them: the arity check both families share.
template <int (*kLookup)(RedisModuleCtx*, RedisModuleString**, int, bool), bool kMulti>
int LookupCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (kMulti ? argc < 3 : argc != 3) return api::WrongArity(ctx);
  return kLookup(ctx, argv, argc, kMulti);
}

// Replies to EXISTS / MEXISTS for the items argv[2..argc) of one key: `filter` answers them, or
// every answer is 0 where it is nullptr (a missing key holds nothing). The items go through the
// batch lookup in chunks held on the stack, so a lookup allocates nothing: 128 keys are four of
// the library's prefetched batches of 32 (lib/filters/internal/batch_pipeline.h), and 2 KiB of
// stack.
template <typename Filter>
int ReplyLookups(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool multi,
                 const Filter* filter) {
  constexpr int kChunk = 128;
  if (multi) api::ReplyWithArray(ctx, argc - 2);
  std::array<std::string_view, kChunk> items;
  std::array<bool, kChunk> found{};
  for (int begin = 2; begin < argc; begin += kChunk) {
    const auto count = static_cast<size_t>(std::min(kChunk, argc - begin));
    if (filter != nullptr) {
      for (size_t i = 0; i < count; ++i) items[i] = Arg(argv[begin + static_cast<int>(i)]);
      (void)filter->MayContainMany(std::span(items.data(), count), std::span(found.data(), count));
    }
    for (size_t i = 0; i < count; ++i) api::ReplyWithLongLong(ctx, found[i] ? 1 : 0);
  }
  return api::kOk;
}

// An open key, closed when it goes out of scope, and its value where it holds one of the family's
// data type `type` (each family's key class wraps one).
class ModuleKey {
 public:
  ModuleKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode, RedisModuleType* type);
  ModuleKey(const ModuleKey&) = delete;
  ModuleKey& operator=(const ModuleKey&) = delete;
  ~ModuleKey();

  // The key holds nothing (it is missing).
  [[nodiscard]] bool empty() const { return empty_; }
  // Its value, or nullptr where it is empty or of another type.
  template <typename Value>
  [[nodiscard]] Value* value() const {
    return static_cast<Value*>(value_);
  }
  // Replaces the key's value (Redis frees the old one through the type's free callback).
  void Set(void* value);
  void Delete();

 private:
  RedisModuleKey* key_;
  RedisModuleType* type_;
  void* value_ = nullptr;
  bool empty_ = true;
};

// What a command does to its keys (SetCommandInfo's key specs), which ACL key permissions check:
// a reader's key is RO + ACCESS (needs %R~), a writer's RW + INSERT or UPDATE (needs %W~; a key is
// read too, to answer "was it new", as SADD's is). Without them Redis 7.0 takes every key of a
// module command as read-write, so a %R~ user could not run BF.EXISTS.
struct KeySpec {
  int first;  // argv index of the first key; 0: no spec
  int last;   // relative to `first`: 0 the same one, -1 every argument to the end
  uint64_t flags;
};

struct CommandSpec {
  const char* name;
  api::CommandFunc function;
  const char* flags;
  KeySpec keys[2];
  // ACL categories, where the server lets a module set them (Redis 7.2+); on 7.0 a module command
  // is in none, so `-@write` does not cover it: README.md's Redis section says what to write.
  const char* acl_categories;
};

inline constexpr uint64_t kReader = api::kKeyRO | api::kKeyAccess;
inline constexpr uint64_t kAdder = api::kKeyRW | api::kKeyInsert;

// The rows most commands are: a write that may add to its first key (it allocates, so deny-oom),
// or a read of its first key ("fast" unless it reads the whole filter).
constexpr CommandSpec AddingCommand(const char* name, api::CommandFunc function) {
  return {name, function, "write deny-oom", {{1, 0, kAdder}}, "write"};
}
constexpr CommandSpec ReadingCommand(const char* name, api::CommandFunc function, bool fast) {
  return fast ? CommandSpec{name, function, "readonly fast", {{1, 0, kReader}}, "read fast"}
              : CommandSpec{name, function, "readonly", {{1, 0, kReader}}, "read"};
}

// A filter's image for rdb_save and aof_rewrite: a full copy of the filter (SaveToBytes), whose
// allocation can fail. std::bad_alloc must not unwind into the server's C frames (it would end in
// std::terminate), so it becomes a status here.
template <typename Filter>
[[nodiscard]] absl::StatusOr<std::string> SaveImage(const Filter& filter) {
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
[[noreturn]] void SaveFailed(RedisModuleIO* io, const absl::Status& status);

// One field of an INFO reply (BF.INFO, BFW.INFO): its name, the option that asks for it alone
// (BF.INFO key CAPACITY; nullptr: none) and its value, an integer, a double, a simple string or
// null.
struct InfoField {
  const char* name;
  const char* option;
  // A std::function<double()> is a double computed only if the field is replied: BF.INFO key
  // CAPACITY must not pay for a field that reads every bit (the estimated FPR).
  using Value =
      std::variant<long long, double, const char*, std::monostate, std::function<double()>>;
  Value value;
};

// Replies `fields` as a map, as RedisBloom answers BF.INFO: RESP3 clients (redis-py's RESP3
// BF.INFO) read a dict, and in RESP2 a map is the flat array of its pairs. A non-empty `option`
// asks for one field: a one-pair map, or in RESP2 [value]; an option no field has is an error.
int ReplyInfo(RedisModuleCtx* ctx, std::span<const InfoField> fields,
              std::optional<std::string_view> option);

// Registers `command` with its key specs and ACL categories.
int RegisterCommand(RedisModuleCtx* ctx, const CommandSpec& command);

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_COMMANDS_H_
