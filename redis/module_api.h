// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// module_api.h: the part of the Redis module API that bloomery_redis.so uses, declared by us.
//
// Debian ships no redismodule.h, so this header declares what the module calls, from the public
// module API reference (https://redis.io/docs/reference/modules/modules-api-ref/). The ABI is
// small and stable: the server passes RedisModule_OnLoad a context whose first field is a
// function `int GetApi(const char* name, void* out)`; every other API function is looked up by
// its exported name ("RedisModule_OpenKey", ...) through it and stored in a pointer. Bind() does
// that once, and fails if the server lacks a function we need (a server older than 7.0).
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
// GetContextFlags: the code runs in a forked child (BGSAVE, BGREWRITEAOF, replication).
inline constexpr int kContextFlagIsChild = 1 << 20;
inline constexpr const char* kWrongTypeError =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

using CommandFunc = int (*)(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

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
  X(Free, void, (void* pointer))

#define BLOOMERY_REDIS_DECLARE(name, result, params) inline result(*name) params = nullptr;
BLOOMERY_REDIS_API_FUNCTIONS(BLOOMERY_REDIS_DECLARE)
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
  if (missing || IsModuleNameBusy(name)) return kErr;
  SetModuleAttribs(ctx, name, version, kApiVersion1);
  return kOk;
}

}  // namespace bloomery::redis::api

#endif  // BLOOMERY_REDIS_MODULE_API_H_
