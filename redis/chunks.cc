// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "chunks.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"

namespace bloomery::redis {
namespace {

void PutU64(uint64_t value, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(value >> (8 * i));
}

uint64_t GetU64(const char* in) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= uint64_t{static_cast<unsigned char>(in[i])} << (8 * i);
  return value;
}

absl::Status CheckTotal(uint64_t total, uint64_t max_total) {
  if (total == 0) return absl::InvalidArgumentError("ERR invalid dump: empty image");
  if (max_total != 0 && total > max_total) {
    return absl::ResourceExhaustedError(
        absl::StrCat("ERR invalid dump: ", total, " bytes exceed the module's max-bytes"));
  }
  return absl::OkStatus();
}

HeldAllocator g_held;

}  // namespace

void SetHeldAllocator(HeldAllocator allocator) noexcept { g_held = allocator; }

void* AllocateHeld(size_t bytes) {
  void* block = g_held.allocate != nullptr ? g_held.allocate(bytes) : ::operator new(bytes);
  if (block == nullptr) throw std::bad_alloc();
  return block;
}

void ReleaseHeld(void* block) noexcept {
  if (block == nullptr) return;
  if (g_held.release != nullptr) {
    g_held.release(block);
  } else {
    ::operator delete(block);
  }
}

std::string EncodeDumpPrefix(uint64_t total) {
  std::string prefix(kDumpPrefixBytes, '\0');
  std::memcpy(prefix.data(), kDumpMagic.data(), kDumpMagic.size());
  PutU64(total, prefix.data() + kDumpMagic.size());
  return prefix;
}

DumpSlice SliceForIterator(uint64_t total, long long iterator, uint64_t chunk_bytes) {
  DumpSlice slice;
  if (iterator < 1 || static_cast<uint64_t>(iterator) - 1 >= total) return slice;
  slice.begin = static_cast<uint64_t>(iterator) - 1;
  slice.length = std::min(chunk_bytes, total - slice.begin);
  slice.next_iterator = static_cast<long long>(slice.begin + slice.length + 1);
  return slice;
}

absl::StatusOr<ChunkAssembler> ChunkAssembler::Start(std::string_view prefix, uint64_t max_total) {
  if (prefix.size() != kDumpPrefixBytes || prefix.substr(0, kDumpMagic.size()) != kDumpMagic) {
    return absl::InvalidArgumentError("ERR invalid dump: the first chunk is not a bloomery prefix");
  }
  const uint64_t total = GetU64(prefix.data() + kDumpMagic.size());
  if (absl::Status s = CheckTotal(total, max_total); !s.ok()) return s;
  return ChunkAssembler(total);
}

absl::StatusOr<ChunkAssembler> ChunkAssembler::Resume(uint64_t total, std::string_view received,
                                                      uint64_t max_total) {
  if (absl::Status s = CheckTotal(total, max_total); !s.ok()) return s;
  if (received.size() > total) {
    return absl::InvalidArgumentError("ERR invalid dump: more bytes received than announced");
  }
  // A complete image is loaded by the chunk that completes it, so a pending one never is: no
  // further chunk could finish it.
  if (received.size() == total) {
    return absl::InvalidArgumentError("ERR invalid dump: a pending load with every byte received");
  }
  ChunkAssembler assembler(total);
  assembler.bytes_.assign(received.data(), received.size());
  return assembler;
}

absl::Status ChunkAssembler::Append(long long iterator, std::string_view data) {
  if (data.empty()) return absl::InvalidArgumentError("ERR invalid dump: empty chunk");
  // The chunk ends at byte iterator - 1 (see the file comment).
  if (iterator < 2 || static_cast<uint64_t>(iterator) - 1 < data.size() ||
      static_cast<uint64_t>(iterator) - 1 - data.size() != bytes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ERR invalid dump: chunk out of order (expected one starting at byte ",
                     bytes_.size(), ")"));
  }
  if (data.size() > total_ - bytes_.size()) {
    return absl::InvalidArgumentError("ERR invalid dump: chunk runs past the announced size");
  }
  // Grow geometrically but never past the announced total, so the cap bounds the capacity too.
  const uint64_t needed = bytes_.size() + data.size();
  if (needed > bytes_.capacity()) {
    bytes_.reserve(std::min<uint64_t>(total_, std::max<uint64_t>(needed, 2 * bytes_.capacity())));
  }
  bytes_.append(data);
  return absl::OkStatus();
}

}  // namespace bloomery::redis
