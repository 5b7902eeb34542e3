// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "memory/internal/storage.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/counting_filter.h"
#include "bloomery/scalable_filter.h"
#include "bloomery/windowed_filter.h"

namespace bloomery {
namespace {

using detail::Storage;
using detail::StorageOptions;

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

// An embedder's allocator that counts what it hands out and gets back, and refuses past a budget.
struct CountingAllocator {
  static inline uint64_t allocated = 0;  // bytes handed out, ever
  static inline uint64_t released = 0;   // bytes given back, ever
  static inline uint64_t blocks = 0;     // blocks outstanding
  static inline uint64_t budget = 0;     // refuse a block that would take outstanding bytes past it
  static inline bool misaligned = false;

  static void Reset(uint64_t new_budget = ~uint64_t{0}) {
    allocated = released = blocks = 0;
    budget = new_budget;
    misaligned = false;
  }
  static uint64_t outstanding() { return allocated - released; }

  static void* Allocate(uint64_t bytes, uint64_t alignment) noexcept {
    misaligned |= alignment < 64 || (alignment & (alignment - 1)) != 0;
    if (bytes > budget - outstanding()) return nullptr;
    void* block = std::aligned_alloc(alignment, detail::RoundUp(bytes, alignment));
    if (block == nullptr) return nullptr;
    // An allocator's block holds anything: its first and last bytes dirty, so that a Storage that
    // does not zero it fails, and the pages between untouched, so that huge pages can back them.
    static_cast<uint8_t*>(block)[0] = 0xA5;
    static_cast<uint8_t*>(block)[bytes - 1] = 0xA5;
    allocated += bytes;
    ++blocks;
    return block;
  }
  static void Release(void* block, uint64_t bytes) noexcept {
    released += bytes;
    --blocks;
    std::free(block);
  }
  static constexpr MemoryAllocator kAllocator{.allocate = &Allocate, .release = &Release};
};

TEST_CASE("an embedder's allocator supplies the memory, 64-byte aligned, and gets all of it back") {
  CountingAllocator::Reset();
  {
    StorageOptions options;
    options.allocator = CountingAllocator::kAllocator;
    for (uint64_t bytes : {uint64_t{64}, uint64_t{4096 * 3 + 64}, uint64_t{9} << 20}) {
      absl::StatusOr<Storage> s = Storage::Allocate(bytes, options);
      REQUIRE(s.ok());
      CHECK(s->size() == bytes);
      CHECK(reinterpret_cast<uintptr_t>(s->data()) % 64 == 0);
      CHECK(CountingAllocator::outstanding() == bytes);
      uint64_t nonzero = 0;
      for (uint64_t i = 0; i < bytes; ++i) nonzero += s->data()[i] != 0;
      CHECK(nonzero == 0);
      CHECK(s->HugePageBytes() <= bytes);
      if (bytes >= Storage::kHugePageBytes) {
        MESSAGE("allocator's block: huge pages requested " << s->huge_pages_requested()
                                                           << ", obtained " << s->HugePageBytes());
      }
      Storage moved = *std::move(s);  // the block moves with its owner, released once
      CHECK(CountingAllocator::blocks == 1);
    }
    CHECK(CountingAllocator::blocks == 0);
    CHECK(CountingAllocator::released == CountingAllocator::allocated);
  }
  CHECK_FALSE(CountingAllocator::misaligned);
}

TEST_CASE("a block the allocator says comes zero-filled is left untouched until used") {
  CountingAllocator::Reset();
  MemoryAllocator zeroed = CountingAllocator::kAllocator;
  zeroed.zero_filled = true;  // a lie here (the block is dirty), to see that nothing writes it
  absl::StatusOr<Storage> s = Storage::Allocate(uint64_t{3} << 20, {.allocator = zeroed});
  REQUIRE(s.ok());
  CHECK(s->data()[0] == 0xA5);
  CHECK(s->data()[s->size() - 1] == 0xA5);
}

// An allocator whose blocks are fresh anonymous memory (zero, no page touched yet) that starts 64
// bytes into a page, as a general-purpose allocator's block does: its first and last pages are
// partial. The block's first byte is marked (its claim to come zeroed is a lie there), to see that
// populating writes nothing; its last page is left untouched, to see that populating reaches it.
struct FreshPagesAllocator {
  static constexpr uint64_t kOffset = 64;
  static inline uint8_t* mapping = nullptr;
  static inline uint64_t mapping_bytes = 0;

  static uint64_t Page() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }
  static void* Allocate(uint64_t bytes, uint64_t /*alignment*/) noexcept {
    mapping_bytes = detail::RoundUp(kOffset + bytes, Page());
    void* raw = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    mapping = static_cast<uint8_t*>(raw);
    // No huge pages, so that one touch faults in one small page and residency shows each.
    madvise(mapping, mapping_bytes, MADV_NOHUGEPAGE);
    mapping[kOffset] = 0xA5;
    return mapping + kOffset;
  }
  static void Release(void* /*block*/, uint64_t /*bytes*/) noexcept {
    munmap(mapping, mapping_bytes);
  }
  // Pages of the mapping resident now.
  static uint64_t ResidentPages() {
    std::vector<unsigned char> resident(mapping_bytes / Page());
    REQUIRE(mincore(mapping, mapping_bytes, resident.data()) == 0);
    uint64_t pages = 0;
    for (unsigned char r : resident) pages += r & 1;
    return pages;
  }
  static constexpr MemoryAllocator kAllocator{
      .allocate = &Allocate, .release = &Release, .zero_filled = true};
};

TEST_CASE("populate faults in every page of an allocator's block, the partial ones too") {
  const uint64_t page = FreshPagesAllocator::Page();
  // Three pages from 64 bytes into one: four pages, the last holding the block's last 64 bytes.
  for (uint64_t bytes : {3 * page, 5 * page + 128, uint64_t{3} << 20}) {
    CAPTURE(bytes);
    for (bool populate : {false, true}) {
      absl::StatusOr<Storage> s = Storage::Allocate(
          bytes, {.populate = populate, .allocator = FreshPagesAllocator::kAllocator});
      REQUIRE(s.ok());
      const uint64_t pages = FreshPagesAllocator::mapping_bytes / page;
      const uint64_t resident = FreshPagesAllocator::ResidentPages();
      CAPTURE(populate);
      CHECK(resident == (populate ? pages : 1));  // unpopulated: the marked page only
      CHECK(s->data()[0] == 0xA5);  // nothing written: the pages' contents are as they were
    }
  }
}

// What a filter keeps beside its bits comes from the allocator too: each array's owner, and a
// chain's table and stage objects (bookkeeping_bytes).
constexpr uint64_t kOwnerBytes = sizeof(FilterMemory::Owner);
uint64_t Held(const ScalableFilter& filter) {
  return filter.memory_bytes() + filter.bookkeeping_bytes();
}
// A chain's blocks: the table, and each stage's bits, object and owner.
uint64_t Blocks(const ScalableFilter& filter) { return 1 + 3 * uint64_t{filter.stage_count()}; }

TEST_CASE("every kind creates, grows and loads through the allocator; the default never calls it") {
  CountingAllocator::Reset();
  const MemoryOptions memory{.allocator = CountingAllocator::kAllocator};
  {
    absl::StatusOr<BlockedFilter> blocked =
        BlockedFilter::Create({.capacity = 10'000, .memory = memory});
    REQUIRE(blocked.ok());
    CHECK(CountingAllocator::outstanding() == blocked->memory_bytes() + kOwnerBytes);
  }
  CHECK(CountingAllocator::outstanding() == 0);
  {
    absl::StatusOr<CountingFilter> counting =
        CountingFilter::Create({.capacity = 10'000, .memory = memory});
    REQUIRE(counting.ok());
    CHECK(CountingAllocator::outstanding() == counting->memory_bytes() + kOwnerBytes);
    absl::StatusOr<WindowedFilter> windowed =
        WindowedFilter::Create({.capacity = 10'000, .memory = memory});
    REQUIRE(windowed.ok());
    CHECK(CountingAllocator::outstanding() ==
          counting->memory_bytes() + windowed->memory_bytes() + 2 * kOwnerBytes);
  }
  CHECK(CountingAllocator::outstanding() == 0);
  {
    absl::StatusOr<ScalableFilter> scalable =
        ScalableFilter::Create({.capacity = 1000, .memory = memory});
    REQUIRE(scalable.ok());
    for (uint64_t key = 0; key < 10'000; ++key) (void)scalable->Insert(key);
    REQUIRE(scalable->stage_count() >= 3);
    CHECK(CountingAllocator::outstanding() == Held(*scalable));
    CHECK(CountingAllocator::blocks == Blocks(*scalable));
    absl::StatusOr<std::string> image = scalable->SaveToBytes();
    REQUIRE(image.ok());
    // A load (Redis's RDB load) and the stages it grows later use the loader's allocator.
    LoadOptions load;
    load.allocator = CountingAllocator::kAllocator;
    absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(*image, load);
    REQUIRE(loaded.ok());
    CHECK(CountingAllocator::outstanding() == 2 * Held(*scalable));
    for (uint64_t key = 10'000; key < 100'000; ++key) (void)loaded->Insert(key);
    CHECK(loaded->stage_count() > scalable->stage_count());
    CHECK(CountingAllocator::outstanding() == Held(*scalable) + Held(*loaded));
    CHECK(CountingAllocator::blocks == Blocks(*scalable) + Blocks(*loaded));
  }
  CHECK(CountingAllocator::outstanding() == 0);
  CHECK(CountingAllocator::blocks == 0);
  const uint64_t before = CountingAllocator::allocated;
  absl::StatusOr<ScalableFilter> mapped = ScalableFilter::Create({.capacity = 1000});
  REQUIRE(mapped.ok());
  for (uint64_t key = 0; key < 10'000; ++key) (void)mapped->Insert(key);
  CHECK(CountingAllocator::allocated == before);
}

TEST_CASE("an allocator's refusal is ResourceExhausted and leaks nothing") {
  const MemoryOptions memory{.allocator = CountingAllocator::kAllocator};
  CountingAllocator::Reset(/*budget=*/4096);
  absl::StatusOr<BlockedFilter> blocked =
      BlockedFilter::Create({.capacity = 100'000, .memory = memory});
  CHECK(blocked.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(blocked.status().message().find("allocator refused") != std::string_view::npos);
  CHECK(CountingAllocator::blocks == 0);

  // A scalable filter that grows until the allocator refuses: the insert is refused, what was
  // allocated stays counted, and the filter's end gives back every block.
  CountingAllocator::Reset();
  absl::StatusOr<ScalableFilter> scalable =
      ScalableFilter::Create({.capacity = 1000, .memory = memory});
  REQUIRE(scalable.ok());
  for (uint64_t key = 0; key < 10'000; ++key) (void)scalable->Insert(key);
  const uint32_t stages = scalable->stage_count();
  REQUIRE(stages >= 3);
  absl::StatusOr<std::string> image = scalable->SaveToBytes();
  REQUIRE(image.ok());
  CountingAllocator::budget = CountingAllocator::outstanding();
  uint64_t refused = 0;
  for (uint64_t key = 10'000; key < 100'000; ++key) {
    refused += scalable->Insert(key) == InsertResult::kRefused;
  }
  CHECK(refused > 0);
  CHECK(scalable->stage_count() == stages);
  CHECK(scalable->FullStatus().code() == absl::StatusCode::kResourceExhausted);
  CHECK(scalable->FullStatus().message().find("allocator refused") != std::string_view::npos);
  CHECK(CountingAllocator::outstanding() == Held(*scalable));

  // A load refused part way (its stages' bits do not all fit) gives back the stages it had. (Its
  // small objects, refused, come from operator new instead: only bits are refused.)
  CountingAllocator::budget = CountingAllocator::outstanding() + scalable->memory_bytes() - 64;
  LoadOptions load;
  load.allocator = CountingAllocator::kAllocator;
  absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(*image, load);
  CHECK(loaded.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(CountingAllocator::outstanding() == Held(*scalable));
  CHECK(CountingAllocator::blocks == Blocks(*scalable));
  *scalable = ScalableFilter::Create({.capacity = 1}).value();
  CHECK(CountingAllocator::outstanding() == 0);
  CHECK(CountingAllocator::blocks == 0);
}

}  // namespace
}  // namespace bloomery
