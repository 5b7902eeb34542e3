// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "commands.h"

#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <variant>

#include "bf_args.h"

namespace bloomery::redis {

Source SourceOf(RedisModuleCtx* ctx) {
  const int flags = api::GetContextFlags(ctx);
  const bool read_only_replica =
      (flags & api::kContextFlagSlave) != 0 && (flags & api::kContextFlagReadOnly) != 0;
  const bool server = (flags & (api::kContextFlagReplicated | api::kContextFlagLoading |
                                api::kContextFlagAsyncLoading)) != 0;
  return server || read_only_replica ? Source::kServer : Source::kClient;
}

std::string ErrorReply(const absl::Status& status) {
  std::string message(status.message().data(), status.message().size());
  if (message.rfind("ERR ", 0) == 0) return message;
  return "ERR " + message;
}

int ReplyError(RedisModuleCtx* ctx, const absl::Status& status) {
  return api::ReplyWithError(ctx, ErrorReply(status).c_str());
}

int ReplyParseError(RedisModuleCtx* ctx, const absl::Status& status) {
  return api::ReplyWithError(ctx, std::string(status.message()).c_str());
}

ModuleKey::ModuleKey(RedisModuleCtx* ctx, RedisModuleString* name, int mode, RedisModuleType* type)
    : key_(api::OpenKey(ctx, name, mode)), type_(type) {
  const int key_type = key_ == nullptr ? api::kKeyTypeEmpty : api::KeyType(key_);
  empty_ = key_type == api::kKeyTypeEmpty;
  if (key_type == api::kKeyTypeModule && api::ModuleTypeGetType(key_) == type_) {
    value_ = api::ModuleTypeGetValue(key_);
  }
}

ModuleKey::~ModuleKey() {
  if (key_ != nullptr) api::CloseKey(key_);
}

void ModuleKey::Set(void* value) {
  api::ModuleTypeSetValue(key_, type_, value);
  value_ = value;
  empty_ = false;
}

void ModuleKey::Delete() {
  api::DeleteKey(key_);
  value_ = nullptr;
  empty_ = true;
}

namespace {

int ReplyInfoValue(RedisModuleCtx* ctx, const InfoField& field) {
  if (const long long* number = std::get_if<long long>(&field.value)) {
    return api::ReplyWithLongLong(ctx, *number);
  }
  if (const double* real = std::get_if<double>(&field.value)) {
    return api::ReplyWithDouble(ctx, *real);
  }
  if (const auto* compute = std::get_if<std::function<double()>>(&field.value)) {
    return api::ReplyWithDouble(ctx, (*compute)());
  }
  if (const char* const* text = std::get_if<const char*>(&field.value)) {
    return api::ReplyWithSimpleString(ctx, *text);
  }
  return api::ReplyWithNull(ctx);
}

}  // namespace

int ReplyInfo(RedisModuleCtx* ctx, std::span<const InfoField> fields,
              std::optional<std::string_view> option) {
  if (!option.has_value()) {
    api::ReplyWithMap(ctx, static_cast<long>(fields.size()));
    for (const InfoField& field : fields) {
      api::ReplyWithSimpleString(ctx, field.name);
      ReplyInfoValue(ctx, field);
    }
    return api::kOk;
  }
  for (const InfoField& field : fields) {
    if (field.option != nullptr && EqualsIgnoreCase(*option, field.option)) {
      if ((api::GetContextFlags(ctx) & api::kContextFlagResp3) != 0) {
        api::ReplyWithMap(ctx, 1);
        api::ReplyWithSimpleString(ctx, field.name);
      } else {
        api::ReplyWithArray(ctx, 1);
      }
      return ReplyInfoValue(ctx, field);
    }
  }
  return api::ReplyWithError(ctx, "ERR Invalid information value");
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

void Notify(RedisModuleCtx* ctx, const char* event, RedisModuleString* key) {
  api::NotifyKeyspaceEvent(ctx, api::kNotifyGeneric, event, key);
}

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

int RegisterCommand(RedisModuleCtx* ctx, const CommandSpec& command) {
  const int last_key = command.keys[1].first != 0 ? -1 : command.keys[0].first;
  if (api::CreateCommand(ctx, command.name, command.function, command.flags, command.keys[0].first,
                         last_key, 1) != api::kOk) {
    return api::kErr;
  }
  RedisModuleCommand* registered = api::GetCommand(ctx, command.name);
  if (registered == nullptr) return api::kErr;
  api::CommandKeySpec specs[3] = {};  // ends with a zero spec
  for (int i = 0; i < 2 && command.keys[i].first != 0; ++i) {
    specs[i].flags = command.keys[i].flags;
    specs[i].begin_search_type = api::kBeginSearchIndex;
    specs[i].bs.index.pos = command.keys[i].first;
    specs[i].find_keys_type = api::kFindKeysRange;
    specs[i].fk.range.lastkey = command.keys[i].last;
    specs[i].fk.range.keystep = 1;
  }
  api::CommandInfo info = {};
  info.version = &api::kCommandInfoVersion;
  info.key_specs = specs;
  if (api::SetCommandInfo(registered, &info) != api::kOk) {
    api::Log(ctx, "warning", "bloomery: the server refused the key specs of %s", command.name);
    return api::kErr;
  }
  if (api::SetCommandACLCategories != nullptr &&
      api::SetCommandACLCategories(registered, command.acl_categories) != api::kOk) {
    api::Log(ctx, "warning", "bloomery: the server refused the ACL categories of %s", command.name);
    return api::kErr;
  }
  return api::kOk;
}

}  // namespace bloomery::redis
