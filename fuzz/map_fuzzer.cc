// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// map_fuzzer: arbitrary bytes mapped read-only and read-write by every mappable kind. A mapping
// that is accepted must work; after a read-write mapping is flushed, the file must load cleanly
// with every key inserted through the mapping.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "bloomery/bloomery.h"
#include "fuzz_util.h"
#include "internal/format.h"

namespace {

using bloomery::MapMode;
using bloomery::fuzzing::Fail;

template <typename Filter>
void MapBoth(const std::string& path, bool allow_dirty) {
  bloomery::LoadOptions options;
  options.allow_dirty = allow_dirty;
  absl::StatusOr<Filter> ro = Filter::Map(path, MapMode::kReadOnly, options);
  if (ro.ok()) {
    ro->Insert(uint64_t{7});  // copy-on-write: must not crash, must not reach the file
    if (!ro->MayContain(uint64_t{7})) Fail("false negative in a private mapping");
  }
  absl::StatusOr<Filter> rw = Filter::Map(path, MapMode::kReadWrite, options);
  if (!rw.ok()) return;
  for (uint64_t key = 0; key < 16; ++key) rw->Insert(key);
  if (!rw->Flush().ok()) Fail("Flush of an accepted read-write mapping failed");
  absl::StatusOr<Filter> reloaded = Filter::Load(path);
  if (!reloaded.ok()) Fail("a flushed file does not load");
  for (uint64_t key = 0; key < 16; ++key) {
    if (!reloaded->MayContain(key)) Fail("key inserted through the mapping lost");
  }
}

void MapAll(std::span<const uint8_t> data) {
  bloomery::fuzzing::MemoryFile file(data.data(), data.size());
  const bool allow_dirty = (data.size() % 2) == 1;  // exercise both answers to a DIRTY file
  MapBoth<bloomery::BlockedFilter>(file.path(), allow_dirty);
  MapBoth<bloomery::ClassicFilter>(file.path(), allow_dirty);
  MapBoth<bloomery::CountingFilter>(file.path(), allow_dirty);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bloomery::internal::CheckAsIsAndResealed({data, size}, MapAll);
  return 0;
}
