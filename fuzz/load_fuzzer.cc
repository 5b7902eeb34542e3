// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// load_fuzzer: arbitrary bytes as a filter file. Load must answer a status or a working filter,
// never crash, never read out of bounds, never allocate past the cap; the validator must agree with
// Load about whether the header is acceptable.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "fuzz_util.h"
#include "internal/format.h"

namespace {

void LoadAll(const uint8_t* data, size_t size) {
  using bloomery::BlockedFilter;
  bloomery::fuzzing::MemoryFile file(data, size);
  bloomery::LoadOptions options;
  options.max_bytes = uint64_t{64} << 20;  // the cap: a hostile file cannot make us allocate more
  for (bool verify : {true, false}) {
    options.verify_checksums = verify;
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Load(file.path(), options);
    if (!f.ok()) continue;
    if (f->memory_bytes() > options.max_bytes) bloomery::fuzzing::Fail("loaded past the cap");
    if (!bloomery::internal::ValidateHeader(std::span<const uint8_t>(data, size), size).ok()) {
      bloomery::fuzzing::Fail("Load accepted a file the validator rejects");
    }
    // A loaded filter works: inserts are found, estimates are finite.
    f->Insert(uint64_t{42});
    if (!f->MayContain(uint64_t{42})) bloomery::fuzzing::Fail("false negative after load");
    (void)f->EstimatedFpr();
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
