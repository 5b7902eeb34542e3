// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bf.h"

namespace bloomery::redis {
namespace {

// The bytes of a dump's image: its header region, then every stage's bytes.
uint64_t DumpImageBytes(const BloomValue& value) {
  uint64_t bytes = value.dump_header.size();
  const ScalableFilter& filter = *std::get_if<ScalableFilter>(&value.state);
  for (uint32_t i = 0; i < filter.stage_count(); ++i) bytes += filter.stage(i).bytes().size();
  return bytes;
}

// Replies the image's bytes [begin, begin + length) (inside DumpImageBytes): straight from the
// header or a stage where they lie in one, else assembled for this reply alone.
int ReplyDumpBytes(RedisModuleCtx* ctx, const BloomValue& value, uint64_t begin, uint64_t length) {
  const ScalableFilter& filter = *std::get_if<ScalableFilter>(&value.state);
  std::vector<std::string_view> parts = {{value.dump_header.data(), value.dump_header.size()}};
  for (uint32_t i = 0; i < filter.stage_count(); ++i) {
    const std::span<const uint8_t> bytes = filter.stage(i).bytes();
    parts.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  std::string assembled;
  for (std::string_view part : parts) {
    if (begin >= part.size()) {
      begin -= part.size();
      continue;
    }
    const std::string_view piece = part.substr(begin, length);
    if (assembled.empty() && piece.size() == length) {
      return api::ReplyWithStringBuffer(ctx, piece.data(), piece.size());
    }
    assembled.append(piece);
    length -= piece.size();
    begin = 0;
    if (length == 0) break;
  }
  return api::ReplyWithStringBuffer(ctx, assembled.data(), assembled.size());
}

}  // namespace

// BF.SCANDUMP key iterator (chunks.h). A read that keeps no copy of the filter: iterator 0 takes
// the image's header region (BloomValue::dump_header: a pass over the bits for their checksums,
// and about 8 bytes per MiB of filter held, in the server's allocator, so in used_memory); every
// later call copies its chunk from the header or the stages' memory into the reply. A write
// between two calls would mix two states in one image: the rest of that dump is refused with an
// error saying to start again. A call past iterator 0 with no header held (the dump began before
// a restart or a failover, or another client ended it) takes the header again from the filter as
// it is now.
int ScanDumpCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk || iterator < 0) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  OpenKey key(ctx, argv[1], api::kRead);
  const ScalableFilter* filter = key.filter();
  if (filter == nullptr) return key.ReplyNotAFilter(ctx);
  BloomValue& value = *key.value();
  if (iterator == 0) value.dump_stale = false;
  if (value.dump_stale) {
    return api::ReplyWithError(ctx,
                               "ERR the filter was written to since this dump began (iterator 0), "
                               "so its chunks would not make one image: start again from 0");
  }
  if (iterator == 0 || value.dump_header.empty()) {
    absl::StatusOr<std::string> header = filter->SaveHeaderToBytes();
    if (!header.ok()) return ReplyError(ctx, header.status());
    value.dump_header.assign(header->data(), header->size());
  }
  const uint64_t total = DumpImageBytes(value);
  api::ReplyWithArray(ctx, 2);
  if (iterator == 0) {
    const std::string prefix = EncodeDumpPrefix(total);
    api::ReplyWithLongLong(ctx, 1);
    return api::ReplyWithStringBuffer(ctx, prefix.data(), prefix.size());
  }
  const DumpSlice slice = SliceForIterator(total, iterator, g_chunk_bytes);
  api::ReplyWithLongLong(ctx, slice.next_iterator);
  if (slice.length == 0) {
    HeldBytes().swap(value.dump_header);  // the dump is over
    return api::ReplyWithStringBuffer(ctx, "", 0);
  }
  return ReplyDumpBytes(ctx, value, slice.begin, slice.length);
}

// BF.LOADCHUNK key iterator data. The chunks are held on this server alone until the image is
// complete and has loaded through the validator under this server's caps: only then is the key
// replicated (and written to the AOF), as DEL and the whole image in BF.LOADCHUNK commands, in one
// MULTI. A replica and an AOF replay therefore hold exactly the filters the master accepted and
// never an image it refused. A failed chunk or a refused image deletes the half-loaded key (and
// replicates that DEL, for a replica that received the pending key in a full sync), so a client
// can start again from the prefix; the key never holds an unvalidated filter. A pending load is
// in the RDB (and so survives a restart from it) but not in the AOF until it completes.
int LoadChunkCommand(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return api::WrongArity(ctx);
  long long iterator = 0;
  if (api::StringToLongLong(argv[2], &iterator) != api::kOk) {
    return api::ReplyWithError(ctx, "ERR Second argument must be numeric");
  }
  const std::string_view data = Arg(argv[3]);
  const Source source = SourceOf(ctx);
  OpenKey key(ctx, argv[1], api::kRead | api::kWrite);
  const auto drop = [&](const absl::Status& status) {
    key.Delete();
    api::Replicate(ctx, "DEL", "s", argv[1]);
    return ReplyError(ctx, status);
  };
  if (iterator == 1) {
    if (key.holds() != OpenKey::Holds::kNothing) return key.ReplyNotAFilter(ctx);
    absl::StatusOr<ChunkAssembler> assembler = ChunkAssembler::Start(data, MaxImageBytes(source));
    if (!assembler.ok()) return ReplyError(ctx, assembler.status());
    key.Set(std::make_unique<BloomValue>(std::move(*assembler)));
    Notify(ctx, "bf.loadchunk", argv[1]);
    return api::ReplyWithSimpleString(ctx, "OK");
  }
  ChunkAssembler* pending = key.pending();
  if (pending == nullptr) {
    if (key.holds() == OpenKey::Holds::kFilter) {
      return api::ReplyWithError(ctx, "ERR the filter is already loaded");
    }
    return key.ReplyNotAFilter(ctx);
  }
  absl::Status appended;
  try {
    appended = pending->Append(iterator, data);
  } catch (const std::bad_alloc&) {
    // The server's allocator refused the pending image's growth (HeldBytes).
    appended = absl::ResourceExhaustedError(
        "ERR no memory for the pending image: the load is dropped, start it again");
  }
  if (!appended.ok()) return drop(appended);
  Notify(ctx, "bf.loadchunk", argv[1]);
  if (!pending->complete()) return api::ReplyWithSimpleString(ctx, "OK");
  bool over_cap = false;
  absl::StatusOr<ScalableFilter> filter = LoadImage(pending->received(), source, &over_cap);
  if (!filter.ok()) {
    return drop(absl::Status(filter.status().code(),
                             absl::StrCat("ERR invalid dump: ", filter.status().message())));
  }
  if (over_cap) api::Log(ctx, "warning", "%s", OverCapWarning(Arg(argv[1]), *filter).c_str());
  // Replicated from the image as received (the bytes just validated), before it is released.
  api::Replicate(ctx, "DEL", "s", argv[1]);
  ForEachLoadChunk(pending->received(), pending->total(),
                   [&](long long chunk_iterator, std::string_view chunk) {
                     api::Replicate(ctx, "BF.LOADCHUNK", "slb", argv[1], chunk_iterator,
                                    chunk.data(), chunk.size());
                   });
  key.Set(std::make_unique<BloomValue>(std::move(*filter)));
  return api::ReplyWithSimpleString(ctx, "OK");
}

}  // namespace bloomery::redis
