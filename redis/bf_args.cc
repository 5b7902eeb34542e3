// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "bf_args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace bloomery::redis {
namespace {

absl::Status Reply(const std::string& text) { return absl::InvalidArgumentError(text); }
absl::Status Arity() { return absl::FailedPreconditionError("wrong number of arguments"); }

bool Is(std::string_view arg, std::string_view word) { return EqualsIgnoreCase(arg, word); }

// RedisBloom's EXPANSION range (its bf-expansion-factor's): 0 makes the filter non-scaling, 1 and
// up are ScalableFilter's growth.
constexpr long long kMaxExpansion = kMaxScalableGrowth;
static_assert(kMaxExpansion == 32768, "RedisBloom's range, which its error text names");

bool ExpansionInRange(long long expansion) { return expansion >= 0 && expansion <= kMaxExpansion; }

// EXPANSION `expansion` into `params`: 0 is NONSCALING, as in RedisBloom.
void SetExpansion(long long expansion, FilterParams* params) {
  if (expansion == 0) {
    params->scaling = false;  // the growth stays valid, though a non-scaling filter never grows
  } else {
    params->expansion = static_cast<uint32_t>(expansion);
  }
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool ParseInteger(std::string_view text, long long* value) {
  // Redis accepts at most 20 characters of plain decimal: no spaces, no '+', no leading zeros.
  if (text.empty() || text.size() > 20) return false;
  const std::string copy(text);
  if (copy[0] == '0' && copy.size() > 1) return false;
  if (!(copy[0] == '-' || (copy[0] >= '0' && copy[0] <= '9'))) return false;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || end != copy.c_str() + copy.size()) return false;
  *value = parsed;
  return true;
}

bool ParseDouble(std::string_view text, double* value) {
  if (text.empty() || text.size() > 256) return false;
  const std::string copy(text);
  if (std::isspace(static_cast<unsigned char>(copy[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(copy.c_str(), &end);
  if (errno == ERANGE || end != copy.c_str() + copy.size() || std::isnan(parsed)) return false;
  *value = parsed;
  return true;
}

absl::Status ParseLayoutValue(std::string_view value, Layout* layout) {
  for (const BlockShape& shape : kBlockShapes) {
    if (EqualsIgnoreCase(value, shape.name)) {
      *layout = shape.layout;
      return absl::OkStatus();
    }
  }
  return Reply("ERR bad layout (" + LayoutList() + ")");
}

absl::Status ParseFilterLayout(std::string_view value, Layout* layout) {
  if (EqualsIgnoreCase(value, LayoutName(Layout::kPartitioned))) {
    *layout = Layout::kPartitioned;
    return absl::OkStatus();
  }
  if (ParseLayoutValue(value, layout).ok()) return absl::OkStatus();
  return Reply("ERR bad layout (" + LayoutList({Layout::kPartitioned}) + ")");
}

absl::StatusOr<FilterParams> ParseReserve(std::span<const std::string_view> args) {
  // RedisBloom's arity (at most EXPANSION n and NONSCALING), and LAYOUT l beside them.
  const bool layout_given =
      args.size() > 2 && std::any_of(args.begin() + 2, args.end(),
                                     [](std::string_view arg) { return Is(arg, "LAYOUT"); });
  if (args.size() < 2 || args.size() > (layout_given ? 7 : 5)) return Arity();
  FilterParams params;
  if (!ParseDouble(args[0], &params.error_rate)) return Reply("ERR bad error rate");
  if (!(params.error_rate > 0 && params.error_rate < 1)) {
    return Reply("ERR (0 < error rate range < 1) ");
  }
  long long capacity = 0;
  if (!ParseInteger(args[1], &capacity)) return Reply("ERR bad capacity");
  if (capacity <= 0) return Reply("ERR (capacity should be larger than 0)");
  params.capacity = static_cast<uint64_t>(capacity);

  // RedisBloom's order: NONSCALING wherever it is, then EXPANSION's value, 0 meaning NONSCALING.
  std::string_view expansion_text;
  bool expansion_given = false;
  for (size_t i = 2; i < args.size(); ++i) {
    if (Is(args[i], "NONSCALING")) {
      params.scaling = false;
    } else if (Is(args[i], "EXPANSION")) {
      if (++i == args.size()) return Reply("ERR no expansion");
      expansion_text = args[i];
      expansion_given = true;
    } else if (Is(args[i], "LAYOUT")) {
      if (++i == args.size()) return Reply("ERR no layout");
      if (absl::Status s = ParseFilterLayout(args[i], &params.layout); !s.ok()) return s;
    } else {
      return Reply("ERR unknown argument");
    }
  }
  if (expansion_given) {
    long long expansion = 0;
    if (!ParseInteger(expansion_text, &expansion)) return Reply("ERR bad expansion");
    if (expansion != 0 && !params.scaling) return Reply("Nonscaling filters cannot expand");
    if (!ExpansionInRange(expansion)) {
      return Reply("ERR expansion must be in the range [0, 32768]");
    }
    SetExpansion(expansion, &params);
  }
  return params;
}

absl::Status ParseInsertOptions(std::span<const std::string_view> args, InsertCommon& common,
                                absl::FunctionRef<absl::StatusOr<bool>(size_t* i)> own) {
  size_t i = 0;
  while (i < args.size()) {
    const std::string_view option = args[i];
    if (Is(option, "ITEMS")) {
      common.first_item = i + 1;
      if (common.first_item == args.size()) return Arity();
      return absl::OkStatus();
    }
    if (Is(option, "NOCREATE")) {
      common.create = false;
      ++i;
    } else if (Is(option, "CAPACITY") || Is(option, "ERROR")) {
      // RedisBloom checks each value here, whether or not the key exists (its texts have no
      // "ERR "); on a key that exists the values are then ignored.
      if (++i == args.size()) return Arity();
      const std::string_view value = args[i++];
      if (Is(option, "ERROR")) {
        double& rate = *common.error_rate;
        if (!ParseDouble(value, &rate) || !(rate > 0 && rate < 1)) return Reply("Bad error rate");
      } else {
        long long integer = 0;
        if (!ParseInteger(value, &integer) || integer < 1) return Reply("Bad capacity");
        *common.capacity = static_cast<uint64_t>(integer);
        common.capacity_given = true;
      }
    } else {
      absl::StatusOr<bool> taken = own(&i);
      if (!taken.ok()) return taken.status();
      if (!*taken) return Reply("ERR unknown argument received");
    }
  }
  return Arity();  // no ITEMS
}

absl::StatusOr<InsertArgs> ParseInsert(std::span<const std::string_view> args) {
  InsertArgs insert;
  FilterParams& params = insert.params;
  InsertCommon common{.capacity = &params.capacity, .error_rate = &params.error_rate};
  absl::Status parsed = ParseInsertOptions(args, common, [&](size_t* i) -> absl::StatusOr<bool> {
    const std::string_view option = args[(*i)++];
    if (Is(option, "NONSCALING")) {
      params.scaling = false;
      return true;
    }
    const bool layout = Is(option, "LAYOUT");
    if (!layout && !Is(option, "EXPANSION")) return false;
    // Checked like CAPACITY's value, whether or not the key exists.
    if (*i == args.size()) return Arity();
    const std::string_view value = args[(*i)++];
    if (layout) {
      if (absl::Status s = ParseFilterLayout(value, &params.layout); !s.ok()) return s;
    } else {
      long long integer = 0;
      if (!ParseInteger(value, &integer) || !ExpansionInRange(integer)) {
        return Reply("Bad expansion");
      }
      SetExpansion(integer, &params);
    }
    return true;
  });
  if (!parsed.ok()) return parsed;
  insert.create = common.create;
  insert.first_item = common.first_item;
  return insert;
}

namespace {
MemoryAllocator g_module_allocator;
}  // namespace

void SetModuleAllocator(const MemoryAllocator& allocator) { g_module_allocator = allocator; }

MemoryOptions ModuleMemory(uint64_t max_bytes) {
  MemoryOptions memory;
  memory.max_memory_bytes = max_bytes;
  // Redis runs commands on one thread; a forked child (SAVE, AOF rewrite) reads a frozen copy.
  memory.concurrent = false;
  memory.allocator = g_module_allocator;
  return memory;
}

LoadOptions ModuleLoadOptions(uint64_t max_bytes) {
  const MemoryOptions memory = ModuleMemory(max_bytes);
  LoadOptions options;
  options.max_bytes = memory.max_memory_bytes;
  options.concurrent = memory.concurrent;
  options.allocator = memory.allocator;
  return options;
}

ScalableOptions ToScalableOptions(const FilterParams& params, uint64_t max_bytes) {
  return {.capacity = params.capacity,
          .fpr = params.error_rate,
          .growth = params.expansion,
          // RedisBloom's series for its layout (the default), bloomery's for the blocked ones.
          .tightening =
              params.layout == Layout::kPartitioned ? kRedisBloomTightening : kDefaultTightening,
          .scaling = params.scaling,
          .layout = params.layout,
          .memory = ModuleMemory(max_bytes)};
}

}  // namespace bloomery::redis
