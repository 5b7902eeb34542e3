// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// bf.h: the BF.* commands of bloomery_redis.so, RedisBloom's Bloom filter commands over bloomery's
// ScalableFilter, and their data type "bloomeryf": what the family's files share.
//   bf_type.cc      a key's value, its filter's image under MAX_BYTES, and the data type's
//                   callbacks (RDB, AOF rewrite, DIGEST, COPY, MEMORY USAGE)
//   bf_commands.cc  BF.RESERVE, BF.ADD, BF.MADD, BF.INSERT, BF.EXISTS, BF.MEXISTS, BF.CARD,
//                   BF.INFO, BF.DEBUG, BF.MERGE and the family's command table
//   bf_dump.cc      BF.SCANDUMP and BF.LOADCHUNK: a filter's image in chunks (chunks.h)
//
// Every key holds a ScalableFilter (bf_args.h says how a reserve is parsed). LAYOUT chooses its
// stages: without it, or with LAYOUT partitioned, they are RedisBloom's partitioned filters
// (ClassicFilter) at RedisBloom's tightening 0.5; LAYOUT line512|block256|word64 makes them
// BlockedFilters of that shape at bloomery's tightening 0.9. A scaling filter grows by EXPANSION
// (default 2; RedisBloom's range, at most 32768) at a total FPR bounded by the error rate given (a
// promise: every stage is planned by its layout's formula; only a BF.MERGE that keeps two stages
// of one level side by side adds that level's share, ScalableFilter::planned_fpr). NONSCALING, or
// EXPANSION 0, makes one stage of that layout planned at the whole error rate, which refuses keys
// past its capacity ("ERR non scaling filter is full"). A key may also be half-way through
// BF.LOADCHUNK; it then answers only further LOADCHUNKs.
//
// Persistence carries bloomery's own file image (ScalableFilter::SaveToBytes, docs/FORMAT.md):
// the RDB, DUMP/RESTORE, SCANDUMP/LOADCHUNK and the AOF rewrite (as LOADCHUNK commands) all go
// through the one validator in LoadFromBytes, so no payload can crash the server. A client's
// payload or write never gives a key a filter over the MAX_BYTES cap (default 4 GiB per key); the
// server's own data (RDB, full sync, AOF, its master's commands) goes over it (Source,
// commands.h), so that no restart or replica loses a key, and an image loaded over it logs a
// warning. Loading holds the image and the filter at once, and saving (RDB, DUMP, the AOF rewrite,
// DEBUG DIGEST) copies the filter into one image: about twice the filter's bytes for a moment
// (SaveFailed, commands.h, says what an allocation failure there does). SCANDUMP keeps no copy: it
// sends the stages' bytes as they are.
#ifndef BLOOMERY_REDIS_BF_H_
#define BLOOMERY_REDIS_BF_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "absl/status/statusor.h"
#include "bloomery/scalable_filter.h"
#include "chunks.h"
#include "commands.h"
#include "health.h"
#include "module_api.h"
#include "server_memory.h"

namespace bloomery::redis {

// A type name of our own, exactly 9 characters as Redis requires; with the encoding version it
// identifies our values in RDB files.
inline constexpr const char* kTypeName = "bloomeryf";
inline constexpr int kEncodingVersion = 1;

// The module's arguments the family reads, set by RedisModule_OnLoad (module.cc) before any
// command runs: MAX_BYTES (0: no cap) and SCANDUMP_CHUNK_BYTES.
extern uint64_t g_max_bytes;
extern uint64_t g_chunk_bytes;
// The data type, registered by RedisModule_OnLoad.
extern RedisModuleType* g_type;

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

// The largest image a chunked load from `source` may announce (ChunkAssembler's cap): MAX_BYTES
// and room for the image's header and stage table; 0 (none) for the server's own data.
[[nodiscard]] uint64_t MaxImageBytes(Source source);

// The warning logged for a filter of the server's own data loaded over MAX_BYTES.
[[nodiscard]] std::string OverCapWarning(std::string_view key, const ScalableFilter& filter);

// Loads a filter image: under MAX_BYTES for a client's payload; a server's own image over the cap
// loads (without a cap) and `over_cap` says so, for the caller to log.
[[nodiscard]] absl::StatusOr<ScalableFilter> LoadImage(std::string_view bytes, Source source,
                                                       bool* over_cap);

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

// A copy of `filter` made by merging it into an empty filter with its options and a memory cap of
// `max_bytes` (0: none): the same stages, bits and key counts as a Save/Load round trip, without
// a second image of the filter in memory.
[[nodiscard]] absl::StatusOr<ScalableFilter> CloneFilter(const ScalableFilter& filter,
                                                         uint64_t max_bytes);

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

// The data type's callbacks (bf_type.cc), for RedisModule_CreateDataType.
[[nodiscard]] api::TypeMethods BloomTypeMethods();

// The family's commands (bf_commands.cc), which RedisModule_OnLoad registers.
[[nodiscard]] std::span<const CommandSpec> BloomCommands();
// BF.SCANDUMP and BF.LOADCHUNK (bf_dump.cc).
int ScanDumpCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);
int LoadChunkCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc);

}  // namespace bloomery::redis

#endif  // BLOOMERY_REDIS_BF_H_
