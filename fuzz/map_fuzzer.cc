// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// map_fuzzer: arbitrary bytes mapped read-only and read-write by every mappable kind. A mapping
// that is accepted must work; after a read-write mapping is flushed, the file must load (with
// allow_dirty while it is mapped, cleanly once it is unmapped) and answer every key as the mapping
// does (WindowedFilter: with its clock state, on a clock that
// stands still, so expiry cannot differ between the two).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "bloomery/bloomery.h"
#include "format/internal/format_codec.h"
#include "fuzz_util.h"

namespace {

using bloomery::MapMode;
using bloomery::fuzzing::Fail;

// `open(clock...)`: Map or Load with no clock, or for a windowed filter one that stands still.
template <typename Filter, typename Open>
absl::StatusOr<Filter> WithClock(Open open) {
  if constexpr (std::is_same_v<Filter, bloomery::WindowedFilter>) {
    return open(bloomery::WindowClock([] { return int64_t{1} << 40; }));
  } else {
    return open();
  }
}

template <typename Filter>
void MapBoth(const std::string& path, bool allow_dirty) {
  bloomery::LoadOptions options;
  options.allow_dirty = allow_dirty;
  absl::StatusOr<Filter> ro = WithClock<Filter>(
      [&](auto... clock) { return Filter::Map(path, MapMode::kReadOnly, options, clock...); });
  if (ro.ok()) {
    ro->Insert(uint64_t{7});  // copy-on-write: must not crash, must not reach the file
    if (!ro->MayContain(uint64_t{7})) Fail("false negative in a private mapping");
  }
  absl::StatusOr<Filter> rw = WithClock<Filter>(
      [&](auto... clock) { return Filter::Map(path, MapMode::kReadWrite, options, clock...); });
  if (!rw.ok()) return;
  for (uint64_t key = 0; key < 16; ++key) {
    rw->Insert(key);
    if (!rw->MayContain(key)) Fail("false negative in a read-write mapping");
  }
  if (!rw->Flush().ok()) Fail("Flush of an accepted read-write mapping failed");
  bool answers[16];
  for (uint64_t key = 0; key < 16; ++key) answers[key] = rw->MayContain(key);
  // Still mapped read-write, the file stays DIRTY; a load that accepts that sees the flush.
  bloomery::LoadOptions dirty_ok;
  dirty_ok.allow_dirty = true;
  absl::StatusOr<Filter> flushed =
      WithClock<Filter>([&](auto... clock) { return Filter::Load(path, dirty_ok, clock...); });
  if (!flushed.ok()) Fail("a flushed file does not load with allow_dirty while mapped");
  // Unmapped with nothing written since the Flush: the file is clean and loads as it is.
  rw = absl::CancelledError("unmapped");
  absl::StatusOr<Filter> reloaded = WithClock<Filter>(
      [&](auto... clock) { return Filter::Load(path, bloomery::LoadOptions{}, clock...); });
  if (!reloaded.ok()) Fail("a file flushed and unmapped does not load");
  for (uint64_t key = 0; key < 16; ++key) {
    if (reloaded->MayContain(key) != answers[key] || flushed->MayContain(key) != answers[key]) {
      Fail("the flushed file answers a key unlike the mapping it was flushed from");
    }
  }
}

void MapAll(std::span<const uint8_t> data) {
  bloomery::fuzzing::MemoryFile file(data.data(), data.size());
  const bool allow_dirty = (data.size() % 2) == 1;  // exercise both answers to a DIRTY file
  MapBoth<bloomery::BlockedFilter>(file.path(), allow_dirty);
  MapBoth<bloomery::ClassicFilter>(file.path(), allow_dirty);
  MapBoth<bloomery::CountingFilter>(file.path(), allow_dirty);
  MapBoth<bloomery::WindowedFilter>(file.path(), allow_dirty);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bloomery::detail::CheckAsIsAndResealed({data, size}, MapAll);
  return 0;
}
