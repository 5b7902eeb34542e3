// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// load_fuzzer: arbitrary bytes as a filter file, given to every kind's Load and LoadFromBytes and
// to InspectFile and InspectBytes. Each must answer a status or a working filter: never crash,
// never read out of bounds, never allocate past the cap; the validator must agree with Load about
// the header, and only the kind InspectFile names may load.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloomery/bloomery.h"
#include "fuzz_util.h"
#include "internal/format.h"

namespace {

using bloomery::fuzzing::Fail;

constexpr uint64_t kCap = uint64_t{64} << 20;  // a hostile file cannot make us allocate more

// A loaded filter works: an inserted key is found, the estimates can be computed.
template <typename Filter>
void Exercise(Filter& f) {
  if constexpr (std::is_same_v<Filter, bloomery::ScalableFilter>) {
    if (f.Insert(uint64_t{42}) == bloomery::InsertResult::kRefused) return;  // full: fine
  } else {
    f.Insert(uint64_t{42});
  }
  if (!f.MayContain(uint64_t{42})) Fail("false negative after load");
  (void)f.EstimatedFpr();
  (void)f.EstimatedCount();
}

template <typename Filter>
bool TryLoad(const std::string& path, const uint8_t* data, size_t size, bool verify) {
  bloomery::LoadOptions options;
  options.max_bytes = kCap;
  options.verify_checksums = verify;
  absl::StatusOr<Filter> f = Filter::Load(path, options);
  absl::StatusOr<Filter> from_bytes =
      Filter::LoadFromBytes(std::string_view(reinterpret_cast<const char*>(data), size), options);
  if (f.ok() != from_bytes.ok()) Fail("Load and LoadFromBytes disagree");
  if (!f.ok()) return false;
  if (f->memory_bytes() > kCap) Fail("loaded past the cap");
  if (!bloomery::internal::ValidateHeader(std::span<const uint8_t>(data, size), size).ok()) {
    Fail("Load accepted a file the validator rejects");
  }
  Exercise(*f);
  return true;
}

void LoadAll(const uint8_t* data, size_t size) {
  bloomery::fuzzing::MemoryFile file(data, size);
  absl::StatusOr<bloomery::FileInfo> info = bloomery::InspectFile(file.path());
  if (info.ok() !=
      bloomery::InspectBytes(std::string_view(reinterpret_cast<const char*>(data), size)).ok()) {
    Fail("InspectFile and InspectBytes disagree");
  }
  for (bool verify : {true, false}) {
    const int loaded = TryLoad<bloomery::BlockedFilter>(file.path(), data, size, verify) +
                       TryLoad<bloomery::ClassicFilter>(file.path(), data, size, verify) +
                       TryLoad<bloomery::ScalableFilter>(file.path(), data, size, verify) +
                       TryLoad<bloomery::CountingFilter>(file.path(), data, size, verify);
    if (loaded > 1) Fail("one file loaded as two kinds");
    if (verify && loaded == 1 && !info.ok()) Fail("a file that loads does not inspect");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  LoadAll(data, size);
  // Again with valid checksums, so mutations reach the checks that sit behind them.
  std::vector<uint8_t> sealed(data, data + size);
  if (bloomery::internal::RecomputeChecksums(sealed)) LoadAll(sealed.data(), sealed.size());
  return 0;
}
