// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// A load, a mapping and InspectFile open their file once and read its header once (open_count.h
// counts the opens and the reads from byte 0), whichever kind the file holds and whichever loader
// reads it.
#include "open_count.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "bloomery/any_filter.h"
#include "bloomery/file.h"
#include "bloomery/filter_kind.h"
#include "temp_dir.h"
#include "test_util.h"

namespace bloomery {
namespace {

namespace fs = std::filesystem;

// A saved filter of kind F with some keys, in a fresh directory removed afterwards.
template <typename F>
class SavedFilter {
 public:
  SavedFilter() {
    F f = testing::MakeOrFail<F>(testing::Sized<F>(2'000, 0.01));
    for (uint64_t i = 0; i < 1'000; ++i) (void)f.Insert(i);
    REQUIRE(f.Save(path()).ok());
  }
  std::string path() const { return dir_.File("f.bloom"); }

 private:
  testing::TempDir dir_;
};

// What `read` did with `path`: it succeeds, opening the file once and reading its header once.
void CheckReadsOnce(const std::string& what, const std::string& path,
                    const std::function<absl::Status()>& read) {
  CAPTURE(what);
  testing::CountReadsOf(path);
  const absl::Status status = read();
  const testing::FileReads reads = testing::CountedReads();
  testing::CountReadsOf("");
  REQUIRE(status.ok());
  CHECK(reads.opens == 1);
  CHECK(reads.header_reads == 1);
}

TEST_CASE_TEMPLATE("a load of any kind opens its file once and reads its header once", F, KINDS) {
  const SavedFilter<F> saved;
  const std::string path = saved.path();
  CheckReadsOnce("AnyFilter::Load", path, [&] { return AnyFilter::Load(path).status(); });
  CheckReadsOnce("the kind's Load", path, [&] { return F::Load(path).status(); });
  LoadOptions unverified;
  unverified.verify_checksums = false;
  CheckReadsOnce("AnyFilter::Load, checksums unverified", path,
                 [&] { return AnyFilter::Load(path, unverified).status(); });
  CheckReadsOnce("the kind's Load, checksums unverified", path,
                 [&] { return F::Load(path, unverified).status(); });
}

TEST_CASE_TEMPLATE("a mapping and InspectFile open their file once and read its header once", F,
                   KINDS) {
  const SavedFilter<F> saved;
  const std::string path = saved.path();
  CheckReadsOnce("InspectFile", path, [&] { return InspectFile(path).status(); });
  CheckReadsOnce("InspectFile, checksums unverified", path,
                 [&] { return InspectFile(path, /*verify_checksums=*/false).status(); });
  if constexpr (requires { F::Map(path, MapMode::kReadOnly); }) {
    for (const MapMode mode : {MapMode::kReadOnly, MapMode::kReadWrite}) {
      CheckReadsOnce(mode == MapMode::kReadOnly ? "Map read-only" : "Map read-write", path,
                     [&] { return F::Map(path, mode).status(); });
    }
  }
}

// The counter itself: a second open of the file, or a second read of its header, is counted.
TEST_CASE("the counter sees every open of the file and every read of its first bytes") {
  const SavedFilter<BlockedFilter> saved;
  testing::CountReadsOf(saved.path());
  REQUIRE(InspectFile(saved.path()).ok());
  REQUIRE(BlockedFilter::Load(saved.path()).ok());
  const testing::FileReads reads = testing::CountedReads();
  testing::CountReadsOf("");
  CHECK(reads.opens == 2);
  CHECK(reads.header_reads == 2);
}

}  // namespace
}  // namespace bloomery
