// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "internal/storage.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "bloomery/blocked_filter.h"

namespace bloomery {
namespace {

using internal::Storage;
using internal::StorageOptions;

TEST_CASE("allocation is zero-filled and 2 MiB aligned when large") {
  for (uint64_t bytes : {uint64_t{64}, uint64_t{4096 * 3 + 64}, uint64_t{5} << 20}) {
    absl::StatusOr<Storage> s = Storage::Allocate(bytes);
    REQUIRE(s.ok());
    CHECK(s->size() == bytes);
    CHECK(reinterpret_cast<uintptr_t>(s->data()) % 64 == 0);
    if (bytes >= Storage::kHugePageBytes) {
      CHECK(reinterpret_cast<uintptr_t>(s->data()) % Storage::kHugePageBytes == 0);
    }
    uint64_t nonzero = 0;
    for (uint64_t i = 0; i < bytes; ++i) nonzero += s->data()[i] != 0;
    CHECK(nonzero == 0);
    std::memset(s->data(), 0xAB, bytes);  // the whole range is writable
  }
  absl::StatusOr<Storage> empty = Storage::Allocate(0);
  REQUIRE(empty.ok());
  CHECK(empty->data() == nullptr);
  CHECK(empty->HugePageBytes() == 0);
}

TEST_CASE("the memory cap is enforced before anything is mapped") {
  StorageOptions options;
  options.max_bytes = 1 << 20;
  absl::StatusOr<Storage> s = Storage::Allocate((1 << 20) + 1, options);
  CHECK(s.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(s.status().message().find("memory cap") != std::string_view::npos);
  CHECK(Storage::Allocate(1 << 20, options).ok());
}

TEST_CASE("huge pages: what was obtained is reported, and kNever gets none") {
  StorageOptions options;
  options.populate = true;
  absl::StatusOr<Storage> huge = Storage::Allocate(uint64_t{16} << 20, options);
  REQUIRE(huge.ok());
  const uint64_t obtained = huge->HugePageBytes();
  CHECK(obtained <= huge->size());
  CHECK(obtained % Storage::kHugePageBytes == 0);
  MESSAGE("huge pages requested: " << huge->huge_pages_requested() << ", obtained " << obtained
                                   << " of " << huge->size() << " bytes");
  options.huge_pages = HugePages::kNever;
  absl::StatusOr<Storage> small = Storage::Allocate(uint64_t{16} << 20, options);
  REQUIRE(small.ok());
  CHECK_FALSE(small->huge_pages_requested());
  CHECK(small->HugePageBytes() == 0);
}

TEST_CASE("storage is move-only and moves ownership") {
  absl::StatusOr<Storage> s = Storage::Allocate(4096);
  REQUIRE(s.ok());
  uint8_t* data = s->data();
  Storage moved = *std::move(s);
  CHECK(moved.data() == data);
  Storage assigned;
  assigned = std::move(moved);
  CHECK(assigned.data() == data);
  CHECK(moved.data() == nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
  static_assert(!std::is_copy_constructible_v<Storage>);
}

TEST_CASE("a filter says whether its bits are its own memory or a mapped file") {
  FilterOptions options;
  options.capacity = 100'000;
  absl::StatusOr<BlockedFilter> own = BlockedFilter::Create(options);
  REQUIRE(own.ok());
  for (uint64_t key = 0; key < 1000; ++key) own->Insert(key);
  CHECK_FALSE(own->mapped());
  CHECK(own->huge_page_bytes() <= own->memory_bytes());
  const std::string path =
      (std::filesystem::temp_directory_path() / absl::StrCat("bloomery_storage_test_", getpid()))
          .string();
  REQUIRE(own->Save(path).ok());
  absl::StatusOr<BlockedFilter> mapped = BlockedFilter::Map(path, MapMode::kReadOnly);
  std::filesystem::remove(path);
  REQUIRE(mapped.ok());
  CHECK(mapped->mapped());
  CHECK(mapped->memory_bytes() == own->memory_bytes());
  CHECK(std::memcmp(mapped->bytes().data(), own->bytes().data(), own->memory_bytes()) == 0);
  BlockedFilter moved = *std::move(mapped);
  CHECK(moved.mapped());
  CHECK(moved.MayContain(uint64_t{999}));
}

}  // namespace
}  // namespace bloomery
