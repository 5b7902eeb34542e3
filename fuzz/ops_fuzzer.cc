// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// ops_fuzzer: the differential fuzzer for the SIMD kernels. The input chooses a filter (layout, k,
// size, concurrency mode, integer hash) and a sequence of operations (single and batch inserts and
// lookups of string, integer and pre-hashed keys, of any batch length); the same sequence runs once
// per SIMD target this CPU supports, and every answer and the final filter bytes must equal those
// of the scalar reference. Any difference aborts.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "bloomery/simd.h"
#include "fuzz_util.h"

namespace {

using bloomery::BlockedFilter;
using bloomery::KeyHash;

// Reads the input as a stream of small integers; past its end every read is 0.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint64_t U64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return v;
  }
  bool done() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Everything one run observed: answers in order, then the filter's bytes.
std::vector<uint8_t> Run(const uint8_t* data, size_t size) {
  Reader in(data, size);
  bloomery::FilterOptions options;
  const uint8_t probes = in.Byte();
  const uint8_t blocks = in.Byte();
  const uint8_t big = in.Byte();
  const uint8_t mode = in.Byte();
  // Mode bits 2-4: the stored layout (kBlockLayouts: each shape under each of its probes).
  const bloomery::BlockLayout& stored =
      bloomery::kBlockLayouts[(mode >> 2 & 7) % std::size(bloomery::kBlockLayouts)];
  const bloomery::BlockShape& shape = *bloomery::FindBlockShape(stored.layout);
  options.layout = shape.layout;
  options.probe = stored.probe;
  options.hashes = 1 + probes % shape.max_hashes;
  options.bits = (1 + blocks % 64 + (big % 4 == 0 ? 997 : 0)) * shape.block_bits;
  options.memory.concurrent = mode % 2 == 1;
  options.hashing.integer_hash =
      mode & 2 ? bloomery::IntegerHash::kMix : bloomery::IntegerHash::kXxh3;
  options.hashing.seed = in.U64();
  absl::StatusOr<BlockedFilter> filter = BlockedFilter::Create(options);
  if (!filter.ok()) bloomery::fuzzing::Fail("Create failed for a valid geometry");
  std::vector<uint8_t> observed;
  std::vector<std::string> strings;
  std::vector<std::string_view> views;
  std::vector<uint64_t> ints;
  std::vector<KeyHash> hashes;
  for (int op = 0; op < 64 && !in.done(); ++op) {
    const uint8_t code = in.Byte();
    const size_t count = code & 0x40 ? 1 + in.Byte() % 100 : 1;
    strings.clear();
    ints.clear();
    hashes.clear();
    for (size_t i = 0; i < count; ++i) {
      const uint64_t v = in.U64();
      strings.push_back(std::string(reinterpret_cast<const char*>(&v), v % 9));
      ints.push_back(v);
      hashes.push_back(KeyHash{v * 0x9E3779B97F4A7C15ull, v ^ 0xD1B54A32D192ED03ull});
    }
    views.assign(strings.begin(), strings.end());
    auto answers = std::make_unique<bool[]>(count);
    const std::span<bool> out(answers.get(), count);
    const bool batch = code & 0x40;
    const uint8_t kind = (code & 0x3F) % 6;  // 0-2 insert, 3-5 look up; strings, ints, hashes
    // The operation on one key type: the batch call, or the single-key call on the first key.
    auto apply = [&](const auto& keys) -> size_t {
      if (kind < 3) {
        return batch ? filter->InsertMany(keys, out) : (answers[0] = filter->Insert(keys[0]));
      }
      return batch ? filter->MayContainMany(keys, out) : (answers[0] = filter->MayContain(keys[0]));
    };
    const size_t total = kind % 3 == 0 ? apply(views) : kind % 3 == 1 ? apply(ints) : apply(hashes);
    observed.push_back(static_cast<uint8_t>(total));
    for (size_t i = 0; i < count; ++i) observed.push_back(answers[i]);
  }
  observed.insert(observed.end(), filter->bytes().begin(), filter->bytes().end());
  return observed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!bloomery::ForceSimdTarget("scalar").ok()) bloomery::fuzzing::Fail("no scalar target");
  const std::vector<uint8_t> reference = Run(data, size);
  for (std::string_view target : bloomery::SupportedSimdTargets()) {
    if (target == "scalar") continue;
    if (!bloomery::ForceSimdTarget(target).ok()) bloomery::fuzzing::Fail("cannot force target");
    if (Run(data, size) != reference) {
      std::fprintf(stderr, "target %.*s differs from scalar\n", static_cast<int>(target.size()),
                   target.data());
      bloomery::fuzzing::Fail("SIMD target differs from the scalar reference");
    }
  }
  return 0;
}
