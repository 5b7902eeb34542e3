// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bf.h"
#include "bf_args.h"

namespace bloomery::redis {

uint64_t g_max_bytes = uint64_t{4} << 30;
uint64_t g_chunk_bytes = kDumpChunkBytes;
RedisModuleType* g_type = nullptr;

namespace {

// rdb_save's first word: what follows.
constexpr uint64_t kSavedFilter = 0;
constexpr uint64_t kSavedPendingLoad = 1;
// A dump's image is the filter's memory plus its header and stage table (docs/FORMAT.md).
constexpr uint64_t kImageOverheadBytes = uint64_t{1} << 20;

}  // namespace

uint64_t MaxImageBytes(Source source) {
  return g_max_bytes == 0 || source == Source::kServer ? 0 : g_max_bytes + kImageOverheadBytes;
}

std::string OverCapWarning(std::string_view key, const ScalableFilter& filter) {
  return absl::StrCat("bloomery: key '", std::string(key), "' holds a filter of ",
                      filter.memory_bytes(), " bytes, over MAX_BYTES (", g_max_bytes,
                      "); loaded anyway, as it is the server's own data (RDB, AOF or its "
                      "master's); writes take no key that would grow it further");
}

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

absl::StatusOr<ScalableFilter> CloneFilter(const ScalableFilter& filter, uint64_t max_bytes) {
  ScalableOptions options = filter.options();
  options.memory.max_memory_bytes = max_bytes;
  absl::StatusOr<ScalableFilter> copy = ScalableFilter::Create(options);
  if (!copy.ok()) return copy.status();
  if (absl::Status merged = copy->UnionWith(filter); !merged.ok()) return merged;
  return copy;
}

namespace {

// MEMORY USAGE: what the server's allocator holds for the key, its stages' blocks as allocated.
// Above BF.INFO's Size (FilterMemory, bf_commands.cc) by the allocator's size classes (jemalloc
// rounds a large block up to one of four sizes per power of two: up to 25% more, untouched pages
// that used_memory counts and RSS does not).
size_t ServerMemory(const ScalableFilter& filter) {
  size_t bytes = sizeof(BloomValue) + filter.bookkeeping_bytes();
  for (uint32_t i = 0; i < filter.stage_count(); ++i) {
    bytes += ServerBytes(filter.stage(i));
  }
  return bytes;
}

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

}  // namespace

api::TypeMethods BloomTypeMethods() {
  return api::DataTypeMethods(RdbLoad, RdbSave, AofRewrite, MemUsage, Digest, Free, Copy);
}

}  // namespace bloomery::redis
