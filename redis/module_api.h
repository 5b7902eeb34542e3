// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// module_api.h: the part of the Redis module API that bloomery_redis.so uses, declared by us.
//
// Debian ships no redismodule.h, so this header declares what the module calls, from the public
// module API reference (https://redis.io/docs/reference/modules/modules-api-ref/). The ABI is
// small and stable: the server passes RedisModule_OnLoad a context whose first field is a
// function `int GetApi(const char* name, void* out)`; every other API function is looked up by
// its exported name ("RedisModule_OpenKey", ...) through it and stored in a pointer. Bind() does
// that once, and fails if the server lacks a function we need (a server older than 7.0); the
// optional functions of newer servers stay null where the server lacks them, so one .so loads on
// 7.0 and uses what 7.2 adds.
//
// Every function lives in namespace bloomery::redis::api under its name without the prefix
// (api::OpenKey). The opaque handles are incomplete types; the module never looks inside them.
#ifndef BLOOMERY_REDIS_MODULE_API_H_
#define BLOOMERY_REDIS_MODULE_API_H_

#include <cstddef>
#include <cstdint>

extern "C" {
struct RedisModuleCtx;
struct RedisModuleKey;
struct RedisModuleString;
struct RedisModuleIO;
struct RedisModuleType;
struct RedisModuleDigest;
struct RedisModuleDefragCtx;
struct RedisModuleCommand;
struct RedisModuleInfoCtx;
}

namespace bloomery::redis::api {

// Status codes every API function returns.
inline constexpr int kOk = 0;
inline constexpr int kErr = 1;
inline constexpr int kApiVersion1 = 1;
// OpenKey modes.
inline constexpr int kRead = 1 << 0;
inline constexpr int kWrite = 1 << 1;
// KeyType results.
inline constexpr int kKeyTypeEmpty = 0;
inline constexpr int kKeyTypeModule = 6;
// ReplyWithArray's length when the count is set later with ReplySetArrayLength.
inline constexpr long kPostponedLength = -1;
// SetModuleOptions: rdb_load may see a failed read (IsIOError) and must clean up, not abort.
inline constexpr int kOptionHandleIoErrors = 1 << 0;
// GetContextFlags.
inline constexpr int kContextFlagSlave = 1 << 3;          // the server is a replica
inline constexpr int kContextFlagReadOnly = 1 << 4;       // ... that refuses clients' writes
inline constexpr int kContextFlagReplicated = 1 << 12;    // the command came from the master
inline constexpr int kContextFlagLoading = 1 << 13;       // loading an RDB, a full sync or the AOF
inline constexpr int kContextFlagIsChild = 1 << 20;       // a forked child (BGSAVE, BGREWRITEAOF)
inline constexpr int kContextFlagResp3 = 1 << 22;         // the client speaks RESP3 (HELLO 3)
inline constexpr int kContextFlagAsyncLoading = 1 << 23;  // repl-diskless-load swapdb
// NotifyKeyspaceEvent's class for events that belong to no built-in type ('g').
inline constexpr int kNotifyGeneric = 1 << 2;
inline constexpr const char* kWrongTypeError =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

using CommandFunc = int (*)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);
// Fills the module's INFO section (RegisterInfoFunc).
using InfoFunc = void (*)(RedisModuleInfoCtx* ctx, int for_crash_report);
// A server event (SubscribeToServerEvent): its id and the version of the data passed with it.
struct ServerEvent {
  uint64_t id;
  uint64_t dataver;
};
// The server's cron (serverCron, `hz` times a second), on the main thread.
inline constexpr ServerEvent kCronLoopEvent = {8, 1};
using ServerEventCallback = void (*)(RedisModuleCtx* ctx, ServerEvent event, uint64_t subevent,
                                     void* data);

// The data type's callbacks, in the server's order. Version 3 (Redis 6.2+) is the first with
// `copy`; later fields that a newer server knows about are absent, which `version` tells it.
struct TypeMethods {
  uint64_t version;
  void* (*rdb_load)(RedisModuleIO* rdb, int encoding_version);
  void (*rdb_save)(RedisModuleIO* rdb, void* value);
  void (*aof_rewrite)(RedisModuleIO* aof, RedisModuleString* key, void* value);
  size_t (*mem_usage)(const void* value);
  void (*digest)(RedisModuleDigest* digest, void* value);
  void (*free)(void* value);
  int (*aux_load)(RedisModuleIO* rdb, int encoding_version, int when);
  void (*aux_save)(RedisModuleIO* rdb, int when);
  int aux_save_triggers;
  size_t (*free_effort)(RedisModuleString* key, const void* value);
  void (*unlink)(RedisModuleString* key, const void* value);
  void* (*copy)(RedisModuleString* from_key, RedisModuleString* to_key, const void* value);
  int (*defrag)(RedisModuleDefragCtx* ctx, RedisModuleString* key, void** value);
};
inline constexpr uint64_t kTypeMethodsVersion = 3;
// The methods of one of the module's data types: the callbacks each of them has (load, save, AOF,
// MEMORY USAGE, DEBUG DIGEST, free, COPY), none of the optional ones.
[[nodiscard]] inline TypeMethods DataTypeMethods(decltype(TypeMethods::rdb_load) rdb_load,
                                                 decltype(TypeMethods::rdb_save) rdb_save,
                                                 decltype(TypeMethods::aof_rewrite) aof_rewrite,
                                                 decltype(TypeMethods::mem_usage) mem_usage,
                                                 decltype(TypeMethods::digest) digest,
                                                 decltype(TypeMethods::free) free,
                                                 decltype(TypeMethods::copy) copy) {
  TypeMethods methods = {};
  methods.version = kTypeMethodsVersion;
  methods.rdb_load = rdb_load;
  methods.rdb_save = rdb_save;
  methods.aof_rewrite = aof_rewrite;
  methods.mem_usage = mem_usage;
  methods.digest = digest;
  methods.free = free;
  methods.copy = copy;
  return methods;
}

// SetCommandInfo's key specs (Redis 7.0, RedisModuleCommandKeySpec): which arguments are keys and
// what the command does to each, which ACL key permissions (%R~, %W~) and COMMAND GETKEYSANDFLAGS
// read. Flags:
inline constexpr uint64_t kKeyRO = 1 << 0;      // read only
inline constexpr uint64_t kKeyRW = 1 << 1;      // read and written
inline constexpr uint64_t kKeyAccess = 1 << 4;  // the reply reveals the value's data
inline constexpr uint64_t kKeyUpdate = 1 << 5;  // the value is changed
inline constexpr uint64_t kKeyInsert = 1 << 6;  // data is only added to the value
inline constexpr int kBeginSearchIndex = 2;     // REDISMODULE_KSPEC_BS_INDEX
inline constexpr int kFindKeysRange = 2;        // REDISMODULE_KSPEC_FK_RANGE
struct CommandKeySpec {
  const char* notes;
  uint64_t flags;
  int begin_search_type;
  union {
    struct {
      int pos;
    } index;
    struct {
      const char* keyword;
      int startfrom;
    } keyword;
  } bs;
  int find_keys_type;
  union {
    struct {
      int lastkey;  // relative to the first key; -1: the last argument
      int keystep;
      int limit;
    } range;
    struct {
      int keynumidx;
      int firstkey;
      int keystep;
    } keynum;
  } fk;
};
struct CommandHistoryEntry {
  const char* since;
  const char* changes;
};
struct CommandArg;  // never filled in: the commands declare no argument docs
struct CommandInfoVersion {
  int version;
  size_t sizeof_historyentry;
  size_t sizeof_keyspec;
  size_t sizeof_arg;
};
struct CommandInfo {
  const CommandInfoVersion* version;
  const char* summary;
  const char* complexity;
  const char* since;
  CommandHistoryEntry* history;
  const char* tips;
  int arity;
  CommandKeySpec* key_specs;  // ends with an entry whose begin_search_type is 0
  CommandArg* args;
};
// The server reads the specs through these sizes; sizeof_arg is RedisModuleCommandArg's in 7.0
// (ten pointer-sized fields), unused since `args` stays null.
inline constexpr CommandInfoVersion kCommandInfoVersion = {1, sizeof(CommandHistoryEntry),
                                                           sizeof(CommandKeySpec), 80};

// X(name, return type, parameters): one line per function, used for the pointer and for Bind.
#define BLOOMERY_REDIS_API_FUNCTIONS(X)                                                        \
  X(SetModuleAttribs, void, (RedisModuleCtx*, const char* name, int version, int api_version)) \
  X(IsModuleNameBusy, int, (const char* name))                                                 \
  X(SetModuleOptions, void, (RedisModuleCtx*, int options))                                    \
  X(CreateCommand, int,                                                                        \
    (RedisModuleCtx*, const char* name, CommandFunc, const char* flags, int first_key,         \
     int last_key, int key_step))                                                              \
  X(CreateDataType, RedisModuleType*,                                                          \
    (RedisModuleCtx*, const char* name, int encoding_version, TypeMethods*))                   \
  X(Log, void, (RedisModuleCtx*, const char* level, const char* format, ...))                  \
  X(LogIOError, void, (RedisModuleIO*, const char* level, const char* format, ...))            \
  X(WrongArity, int, (RedisModuleCtx*))                                                        \
  X(ReplyWithError, int, (RedisModuleCtx*, const char* error))                                 \
  X(ReplyWithSimpleString, int, (RedisModuleCtx*, const char* message))                        \
  X(ReplyWithLongLong, int, (RedisModuleCtx*, long long value))                                \
  X(ReplyWithDouble, int, (RedisModuleCtx*, double value))                                     \
  X(ReplyWithNull, int, (RedisModuleCtx*))                                                     \
  X(ReplyWithArray, int, (RedisModuleCtx*, long length))                                       \
  X(ReplyWithMap, int, (RedisModuleCtx*, long pairs))                                          \
  X(ReplySetArrayLength, void, (RedisModuleCtx*, long length))                                 \
  X(ReplyWithStringBuffer, int, (RedisModuleCtx*, const char* buffer, size_t length))          \
  X(StringPtrLen, const char*, (const RedisModuleString*, size_t* length))                     \
  X(StringToLongLong, int, (const RedisModuleString*, long long* value))                       \
  X(StringToDouble, int, (const RedisModuleString*, double* value))                            \
  X(OpenKey, RedisModuleKey*, (RedisModuleCtx*, RedisModuleString * name, int mode))           \
  X(CloseKey, void, (RedisModuleKey*))                                                         \
  X(DeleteKey, int, (RedisModuleKey*))                                                         \
  X(KeyType, int, (RedisModuleKey*))                                                           \
  X(ModuleTypeGetType, RedisModuleType*, (RedisModuleKey*))                                    \
  X(ModuleTypeGetValue, void*, (RedisModuleKey*))                                              \
  X(ModuleTypeSetValue, int, (RedisModuleKey*, RedisModuleType*, void* value))                 \
  X(ReplicateVerbatim, int, (RedisModuleCtx*))                                                 \
  X(SaveUnsigned, void, (RedisModuleIO*, uint64_t value))                                      \
  X(LoadUnsigned, uint64_t, (RedisModuleIO*))                                                  \
  X(SaveStringBuffer, void, (RedisModuleIO*, const char* buffer, size_t length))               \
  X(LoadStringBuffer, char*, (RedisModuleIO*, size_t * length))                                \
  X(IsIOError, int, (RedisModuleIO*))                                                          \
  X(GetContextFromIO, RedisModuleCtx*, (RedisModuleIO*))                                       \
  X(GetContextFlags, int, (RedisModuleCtx*))                                                   \
  X(EmitAOF, void, (RedisModuleIO*, const char* command, const char* format, ...))             \
  X(Free, void, (void* pointer))                                                               \
  X(TryAlloc, void*, (size_t bytes))                                                           \
  X(MallocSize, size_t, (void* pointer))                                                       \
  X(Replicate, int, (RedisModuleCtx*, const char* command, const char* format, ...))           \
  X(NotifyKeyspaceEvent, int,                                                                  \
    (RedisModuleCtx*, int type, const char* event, RedisModuleString* key))                    \
  X(GetKeyNameFromIO, const RedisModuleString*, (RedisModuleIO*))                              \
  X(DigestAddStringBuffer, void, (RedisModuleDigest*, const char* buffer, size_t length))      \
  X(DigestEndSequence, void, (RedisModuleDigest*))                                             \
  X(GetCommand, RedisModuleCommand*, (RedisModuleCtx*, const char* name))                      \
  X(SetCommandInfo, int, (RedisModuleCommand*, const CommandInfo* info))                       \
  X(RegisterInfoFunc, int, (RedisModuleCtx*, InfoFunc))                                        \
  X(SubscribeToServerEvent, int, (RedisModuleCtx*, ServerEvent, ServerEventCallback))          \
  X(InfoAddSection, int, (RedisModuleInfoCtx*, const char* name))                              \
  X(InfoAddFieldCString, int, (RedisModuleInfoCtx*, const char* field, const char* value))     \
  X(InfoAddFieldULongLong, int, (RedisModuleInfoCtx*, const char* field, unsigned long long))  \
  X(InfoAddFieldDouble, int, (RedisModuleInfoCtx*, const char* field, double value))

// Functions of newer servers, bound when the server has them and left null otherwise (GetApi
// answers an error for a name it does not know): callers check for null.
#define BLOOMERY_REDIS_OPTIONAL_API_FUNCTIONS(X) \
  /* Redis 7.2 */                                \
  X(SetCommandACLCategories, int, (RedisModuleCommand*, const char* categories))

#define BLOOMERY_REDIS_DECLARE(name, result, params) inline result(*name) params = nullptr;
BLOOMERY_REDIS_API_FUNCTIONS(BLOOMERY_REDIS_DECLARE)
BLOOMERY_REDIS_OPTIONAL_API_FUNCTIONS(BLOOMERY_REDIS_DECLARE)
#undef BLOOMERY_REDIS_DECLARE

// Fills every pointer above from the server behind `ctx` (the context RedisModule_OnLoad got),
// then registers the module under `name`. Returns kErr if a function is missing or the name is
// taken. Must be the first thing OnLoad does.
inline int Bind(RedisModuleCtx* ctx, const char* name, int version) {
  using GetApiFunc = int (*)(const char*, void*);
  // The context's first field is the GetApi pointer: the one fact of the ABI not reached by name.
  const auto get_api = *reinterpret_cast<GetApiFunc*>(ctx);
  bool missing = false;
#define BLOOMERY_REDIS_BIND(name, result, params) \
  missing |= get_api("RedisModule_" #name, reinterpret_cast<void*>(&name)) != kOk;
  BLOOMERY_REDIS_API_FUNCTIONS(BLOOMERY_REDIS_BIND)
#undef BLOOMERY_REDIS_BIND
#define BLOOMERY_REDIS_BIND_OPTIONAL(name, result, params) \
  if (get_api("RedisModule_" #name, reinterpret_cast<void*>(&name)) != kOk) name = nullptr;
  BLOOMERY_REDIS_OPTIONAL_API_FUNCTIONS(BLOOMERY_REDIS_BIND_OPTIONAL)
#undef BLOOMERY_REDIS_BIND_OPTIONAL
  if (missing || IsModuleNameBusy(name)) return kErr;
  SetModuleAttribs(ctx, name, version, kApiVersion1);
  return kOk;
}

}  // namespace bloomery::redis::api

#endif  // BLOOMERY_REDIS_MODULE_API_H_
