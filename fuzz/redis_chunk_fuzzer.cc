// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// redis_chunk_fuzzer: arbitrary bytes as a BF.LOADCHUNK session of the Redis module
// (redis/chunks.h), then the reassembled image through ScalableFilter::LoadFromBytes, the path a
// hostile client or RESTORE payload takes. Input: a 16-byte prefix chunk, then records of
// u32le iterator, u16le length, data. Nothing may crash, the assembler may never hold more than
// the announced total, and a filter that loads must find a key it was given.
//
// Also feeds the tail of the input, split at NUL bytes, to the BF.RESERVE / BF.INSERT parsers.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "bf_args.h"
#include "bloomery/scalable_filter.h"
#include "chunks.h"
#include "fuzz_util.h"

namespace {

using bloomery::fuzzing::Fail;

constexpr uint64_t kCap = uint64_t{64} << 20;

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool Take(size_t n, std::string_view* out) {
    if (size_ - pos_ < n) return false;
    *out = {reinterpret_cast<const char*>(data_ + pos_), n};
    pos_ += n;
    return true;
  }
  bool TakeU(size_t bytes, uint64_t* out) {
    std::string_view raw;
    if (!Take(bytes, &raw)) return false;
    *out = 0;
    for (size_t i = 0; i < bytes; ++i) *out |= uint64_t{static_cast<uint8_t>(raw[i])} << (8 * i);
    return true;
  }
  std::string_view Rest() const {
    return {reinterpret_cast<const char*>(data_ + pos_), size_ - pos_};
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void ParseArguments(std::string_view text) {
  std::vector<std::string_view> args;
  for (size_t start = 0; start <= text.size() && args.size() < 16;) {
    const size_t end = std::min(text.find('\0', start), text.size());
    args.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  (void)bloomery::redis::ParseReserve(args);
  absl::StatusOr<bloomery::redis::InsertArgs> insert = bloomery::redis::ParseInsert(args);
  if (insert.ok() && insert->first_item >= args.size()) Fail("BF.INSERT without items accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader reader(data, size);
  std::string_view prefix;
  if (!reader.Take(bloomery::redis::kDumpPrefixBytes, &prefix)) return 0;
  absl::StatusOr<bloomery::redis::ChunkAssembler> assembler =
      bloomery::redis::ChunkAssembler::Start(prefix, kCap);
  if (!assembler.ok()) {
    ParseArguments(reader.Rest());
    return 0;
  }
  uint64_t iterator = 0;
  uint64_t length = 0;
  std::string_view chunk;
  while (!assembler->complete() && reader.TakeU(4, &iterator) && reader.TakeU(2, &length) &&
         reader.Take(length, &chunk)) {
    const size_t before = assembler->received().size();
    if (!assembler->Append(static_cast<long long>(iterator), chunk).ok()) {
      if (assembler->received().size() != before) Fail("a refused chunk changed the image");
      break;
    }
    if (assembler->received().size() > assembler->total()) Fail("more bytes than announced");
  }
  if (assembler->complete()) {
    bloomery::LoadOptions options;
    options.max_bytes = kCap;
    absl::StatusOr<bloomery::ScalableFilter> filter =
        bloomery::ScalableFilter::LoadFromBytes(assembler->received(), options);
    if (filter.ok()) {
      if (filter->memory_bytes() > kCap) Fail("loaded past the cap");
      if (filter->Insert(uint64_t{42}) != bloomery::InsertResult::kRefused &&
          !filter->MayContain(uint64_t{42})) {
        Fail("false negative after load");
      }
    }
  }
  ParseArguments(reader.Rest());
  return 0;
}
