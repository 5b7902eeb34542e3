// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The file format: round trips, pinned bytes, hostile and corrupted files, crash-safe saves.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/any_filter.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/counting_filter.h"
#include "bloomery/detail/absl_compat.h"
#include "bloomery/file.h"
#include "bloomery/filter_kind.h"
#include "bloomery/scalable_filter.h"
#include "bloomery/windowed_filter.h"
#include "format/internal/format_codec.h"
#include "plan/internal/memory_limit.h"
#include "temp_dir.h"
#include "test_util.h"

namespace bloomery {
namespace {

namespace fs = std::filesystem;
using detail::FileHeader;
using testing::TempDir;

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Makes `bytes` the file's contents, overwriting in place and cutting only what is left over. Not
// std::ofstream's trunc: freeing a file's blocks on every rewrite costs a synchronous discard on a
// disk mounted with `discard` (as CI's VM disk is), and the corruption loops below rewrite a file
// thousands of times; that was most of this binary's run time.
void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  REQUIRE(fd >= 0);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  REQUIRE(pwrite(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
  if (static_cast<size_t>(st.st_size) > bytes.size()) {
    REQUIRE(ftruncate(fd, static_cast<off_t>(bytes.size())) == 0);
  }
  close(fd);
}

// A line filter of `keys` keys 0..keys-1. Its probe is kSalted unless told: the probe every file
// pinned here before kFields was written with (so their digests stay what they were).
BlockedFilter SmallFilter(uint64_t keys, uint64_t bits = 1024, uint32_t hashes = 4,
                          IntegerHash integers = IntegerHash::kXxh3, Probe probe = Probe::kSalted) {
  FilterOptions o;
  o.bits = bits;
  o.hashes = hashes;
  o.capacity = keys;
  o.probe = probe;
  o.hashing.seed = 0x5EED;
  o.hashing.integer_hash = integers;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  for (uint64_t i = 0; i < keys; ++i) f->Insert(i);
  return *std::move(f);
}

// Saves `f` at `path` and returns the file's bytes.
template <typename Filter>
std::vector<uint8_t> SaveAndRead(const Filter& f, const std::string& path) {
  REQUIRE(f.Save(path).ok());
  return ReadBytes(path);
}

bool SameBits(const WordArray& a, const WordArray& b) {
  return a.bytes().size() == b.bytes().size() &&
         std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin());
}

TEST_CASE("save and load round-trip: same bits, same answers, same identity") {
  TempDir dir;
  FilterOptions o;
  o.capacity = 100'000;
  o.fpr = 0.01;
  o.hashing.seed = 99;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  f->InsertMany(std::span<const uint64_t>(testing::DistinctInts(100'000, 0)));
  const std::string path = dir.File("f.bloom");
  REQUIRE(f->Save(path).ok());
  absl::StatusOr<BlockedFilter> loaded = BlockedFilter::Load(path);
  REQUIRE(loaded.ok());
  CHECK(SameBits(*f, *loaded));
  CHECK(loaded->seed() == 99);
  CHECK(loaded->hashes() == f->hashes());
  CHECK(loaded->plan().capacity == 100'000);
  CHECK(loaded->CheckCompatible(*f).ok());
  for (uint64_t i = 0; i < 100'000; ++i) REQUIRE(loaded->MayContain(i * 2));
  CHECK(fs::file_size(path) == 4096 + f->bytes().size());  // one 4096-byte header region + payload
  // Nothing but the file is left behind in the directory (the temp file was renamed).
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

// `Filter`'s loader refuses the saved file `good` with one byte XORed by `flip`, written to `bad`:
// an error, never a crash. Every byte of the 4096-byte header region is tried, and every
// `stride`-th payload byte (a chunk checksum covers each one alike).
template <typename Filter>
void CheckFlipsRefused(const std::vector<uint8_t>& good, const std::string& bad, uint8_t flip,
                       size_t stride) {
  for (size_t i = 0; i < good.size(); i += (i < 4096 ? 1 : stride)) {
    std::vector<uint8_t> changed = good;
    changed[i] ^= flip;
    WriteBytes(bad, changed);
    CAPTURE(i);
    REQUIRE_FALSE(Filter::Load(bad).ok());
  }
}

// What every kind must do with its files, whatever its layout.
template <typename Filter>
Filter MakeKind(uint64_t keys) {
  absl::StatusOr<Filter> f = Filter::Create(
      {.capacity = std::max<uint64_t>(keys, 1), .fpr = 0.01, .hashing = {.seed = 0xC0FFEE}});
  REQUIRE(f.ok());
  for (uint64_t i = 0; i < keys; ++i) f->Insert(i);
  return *std::move(f);
}

template <typename Filter>
bool SameKind(const Filter& a, const Filter& b) {
  return a.bytes().size() == b.bytes().size() &&
         std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin());
}

TEST_CASE_TEMPLATE("every kind: round trip, map, corruption and truncation", Filter, BlockedFilter,
                   ClassicFilter, CountingFilter) {
  TempDir dir;
  const std::string path = dir.File("kind");
  Filter f = MakeKind<Filter>(300);
  REQUIRE(f.Save(path).ok());
  absl::StatusOr<Filter> loaded = Filter::Load(path);
  REQUIRE(loaded.ok());
  CHECK(SameKind(f, *loaded));
  CHECK(loaded->seed() == f.seed());
  CHECK(loaded->hashes() == f.hashes());
  CHECK(loaded->CheckCompatible(f).ok());
  for (uint64_t i = 0; i < 300; ++i) REQUIRE(loaded->MayContain(i));
  {
    absl::StatusOr<Filter> rw = Filter::Map(path, MapMode::kReadWrite);
    REQUIRE(rw.ok());
    CHECK(SameKind(f, *rw));
    for (uint64_t i = 1000; i < 1100; ++i) rw->Insert(i);
    REQUIRE(rw->Flush().ok());
  }
  absl::StatusOr<Filter> after = Filter::Load(path);
  REQUIRE(after.ok());
  for (uint64_t i = 1000; i < 1100; ++i) REQUIRE(after->MayContain(i));
  // A file of one kind is refused by another with FailedPrecondition.
  if constexpr (!std::is_same_v<Filter, BlockedFilter>) {
    CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kFailedPrecondition);
  } else {
    CHECK(ClassicFilter::Load(path).status().code() == absl::StatusCode::kFailedPrecondition);
  }
  // Every byte flipped, every truncation: an error, never a crash.
  const std::vector<uint8_t> good = ReadBytes(path);
  const std::string bad = dir.File("bad");
  CheckFlipsRefused<Filter>(good, bad, 0x10, 7);
  for (size_t size = 0; size < good.size(); size += (size < 4096 ? 1 : 61)) {
    WriteBytes(bad, std::vector<uint8_t>(good.begin(), good.begin() + size));
    CAPTURE(size);
    REQUIRE_FALSE(Filter::Load(bad).ok());
  }
}

// Every kind filled with `keys` keys; the scalable one grown past its first stage.
template <typename Filter>
Filter MakeAnyKind(uint64_t keys) {
  if constexpr (std::is_same_v<Filter, ScalableFilter>) {
    ScalableOptions o;
    o.capacity = std::max<uint64_t>(keys / 4, 1);
    o.hashing.seed = 0xC0FFEE;
    absl::StatusOr<ScalableFilter> f = ScalableFilter::Create(o);
    REQUIRE(f.ok());
    for (uint64_t i = 0; i < keys; ++i) REQUIRE(f->Insert(i) != InsertResult::kRefused);
    return *std::move(f);
  } else {
    return MakeKind<Filter>(keys);
  }
}

TEST_CASE_TEMPLATE("every kind: SaveToBytes is the saved file, LoadFromBytes its validating reader",
                   Filter, BlockedFilter, ClassicFilter, ScalableFilter, CountingFilter) {
  TempDir dir;
  const std::string path = dir.File("f");
  const Filter f = MakeAnyKind<Filter>(2000);
  REQUIRE(f.Save(path).ok());
  absl::StatusOr<std::string> bytes = f.SaveToBytes();
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> file = ReadBytes(path);
  CHECK(std::string(file.begin(), file.end()) == *bytes);

  absl::StatusOr<Filter> loaded = Filter::LoadFromBytes(*bytes);
  REQUIRE(loaded.ok());
  for (uint64_t i = 0; i < 2000; ++i) REQUIRE(loaded->MayContain(i));
  absl::StatusOr<std::string> again = loaded->SaveToBytes();
  REQUIRE(again.ok());
  CHECK(*again == *bytes);  // the round trip keeps every bit, count and parameter

  absl::StatusOr<FileInfo> from_bytes = InspectBytes(*bytes);
  absl::StatusOr<FileInfo> from_file = InspectFile(path);
  REQUIRE(from_bytes.ok());
  REQUIRE(from_file.ok());
  CHECK(from_bytes->kind == from_file->kind);
  CHECK(from_bytes->bits == from_file->bits);
  CHECK(from_bytes->stages == from_file->stages);
  CHECK(from_bytes->insert_count == from_file->insert_count);
  CHECK(from_bytes->file_bytes == bytes->size());
  CHECK(from_bytes->checksums_verified);

  // The caller's cap is on the memory the filter needs, not on the file's size (which adds the
  // header): a filter loads back under the cap it fits, from bytes as from a file, and one byte
  // less refuses it.
  LoadOptions capped;
  capped.max_bytes = f.memory_bytes();
  CHECK(from_bytes->payload_bytes == f.memory_bytes());
  CHECK(Filter::LoadFromBytes(*bytes, capped).ok());
  CHECK(Filter::Load(path, capped).ok());
  capped.max_bytes = f.memory_bytes() - 1;
  CHECK(Filter::LoadFromBytes(*bytes, capped).status().code() ==
        absl::StatusCode::kResourceExhausted);
  CHECK(Filter::Load(path, capped).status().code() == absl::StatusCode::kResourceExhausted);
  // Every flipped header byte, a sample of payload bytes, every truncation: an error that says
  // what was read, never a crash; InspectBytes agrees with LoadFromBytes.
  for (size_t i = 0; i < bytes->size(); i += (i < 4096 ? 1 : 101)) {
    std::string changed = *bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x20);
    CAPTURE(i);
    const absl::Status status = Filter::LoadFromBytes(changed).status();
    REQUIRE_FALSE(status.ok());
    CHECK(std::string(status.message()).find(detail::kBytesName) != std::string::npos);
    CHECK_FALSE(InspectBytes(changed).ok());
  }
  for (size_t size = 0; size < bytes->size(); size += (size < 4096 ? 1 : 509)) {
    CAPTURE(size);
    REQUIRE_FALSE(Filter::LoadFromBytes(std::string_view(*bytes).substr(0, size)).ok());
  }
}

TEST_CASE("scalable filter: stages and counts survive a round trip; growth goes on after it") {
  TempDir dir;
  const std::string path = dir.File("chain");
  ScalableOptions o;
  // Small stages: every payload-byte load below re-plans each stage (the loader checks the chain
  // against its options), so the payload's size sets this test's run time.
  o.capacity = 100;
  o.fpr = 0.01;
  o.hashing.seed = 3;
  absl::StatusOr<ScalableFilter> chain = ScalableFilter::Create(o);
  REQUIRE(chain.ok());
  for (uint64_t i = 0; i < 1'000; ++i) REQUIRE(chain->Insert(i) != InsertResult::kRefused);
  REQUIRE(chain->stage_count() >= 3);
  REQUIRE(chain->Save(path).ok());
  absl::StatusOr<ScalableFilter> loaded = ScalableFilter::Load(path);
  REQUIRE(loaded.ok());
  REQUIRE(loaded->stage_count() == chain->stage_count());
  for (uint32_t i = 0; i < chain->stage_count(); ++i) {
    CHECK(loaded->stage_keys(i) == chain->stage_keys(i));
    CHECK(SameBits(loaded->stage(i), chain->stage(i)));
  }
  CHECK(loaded->options().growth == o.growth);
  CHECK(loaded->options().tightening == o.tightening);
  CHECK(loaded->seed() == 3);
  for (uint64_t i = 0; i < 1'000; ++i) REQUIRE(loaded->MayContain(i));
  for (uint64_t i = 1'000; i < 4'000; ++i) REQUIRE(loaded->Insert(i) != InsertResult::kRefused);
  CHECK(loaded->stage_count() > chain->stage_count());
  for (uint64_t i = 0; i < 4'000; ++i) REQUIRE(loaded->MayContain(i));
  // Another kind's loader refuses it; any flipped byte is rejected.
  CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kFailedPrecondition);
  const std::vector<uint8_t> good = ReadBytes(path);
  const std::string bad = dir.File("bad");
  CheckFlipsRefused<ScalableFilter>(good, bad, 0x04, 13);
  // A stage that is not what the saved options grow (geometry edited, checksums re-sealed).
  std::vector<uint8_t> edited = good;
  edited[256 + 32 + 8] ^= 1;  // stage 1's hashes
  REQUIRE(detail::RecomputeChecksums(edited));
  WriteBytes(bad, edited);
  CHECK(ScalableFilter::Load(bad).status().code() == absl::StatusCode::kDataLoss);
}

TEST_CASE("counting filter: counts and saturation survive a round trip") {
  TempDir dir;
  CountingOptions o;
  o.capacity = 1000;
  o.fpr = 0.01;
  absl::StatusOr<CountingFilter> f = CountingFilter::Create(o);
  REQUIRE(f.ok());
  for (int i = 0; i < 20; ++i) f->Insert("hot");  // saturates its 4-bit counters
  for (uint64_t i = 0; i < 500; ++i) f->Insert(i);
  REQUIRE(f->saturated_counters() > 0);
  REQUIRE(f->Save(dir.File("c")).ok());
  absl::StatusOr<CountingFilter> loaded = CountingFilter::Load(dir.File("c"));
  REQUIRE(loaded.ok());
  CHECK(loaded->saturated_counters() == f->saturated_counters());
  CHECK(loaded->Count("hot") == f->Count("hot"));
  for (uint64_t i = 0; i < 500; ++i) REQUIRE(loaded->Count(i) == f->Count(i));
  CHECK(loaded->Erase(uint64_t{7}) == EraseResult::kErased);
  CHECK(loaded->counter_bits() == 4);
}

TEST_CASE("FilterKind: each kind's name parses back to it; the numbers are the file's") {
  // Every kind with a row (lib/format/kind_table.cc), numbered from 1 without a gap.
  uint32_t kinds = 0;
  while (FilterKindName(static_cast<FilterKind>(kinds + 1)) != "unknown") {
    const auto kind = static_cast<FilterKind>(++kinds);
    CAPTURE(FilterKindName(kind));
    CHECK(ParseFilterKind(FilterKindName(kind)) == kind);
  }
  // AnyFilter holds every kind (its variant's order is checked in filter_test.cc).
  CHECK(kinds == std::variant_size_v<AnyFilter::Variant>);
  CHECK(FilterKindName(FilterKind::kCounting) == "counting");
  CHECK(static_cast<uint32_t>(FilterKind::kScalable) == 3);  // docs/FORMAT.md: never renumbered
  CHECK_FALSE(ParseFilterKind("Blocked").has_value());
  CHECK_FALSE(ParseFilterKind("").has_value());
  CHECK(FilterKindName(static_cast<FilterKind>(0)) == "unknown");
}

TEST_CASE("InspectFile describes a file without loading it and streams its checksums") {
  TempDir dir;
  const std::string path = dir.File("i");
  BlockedFilter f = SmallFilter(100, 1 << 14, 5);
  REQUIRE(f.Save(path).ok());
  absl::StatusOr<FileInfo> info = InspectFile(path);
  REQUIRE(info.ok());
  CHECK(info->kind == FilterKind::kBlocked);
  CHECK(info->version == 1);
  CHECK(info->bits == 1 << 14);
  CHECK(info->hashes == 5);
  CHECK(info->stages == 1);
  CHECK(info->seed == 0x5EED);
  CHECK(info->capacity == 100);
  CHECK(info->file_bytes == fs::file_size(path));
  CHECK(info->checksums_verified);
  CHECK_FALSE(info->dirty);
  std::vector<uint8_t> bytes = ReadBytes(path);
  bytes.back() ^= 1;  // payload damage: only the checksum pass sees it
  WriteBytes(path, bytes);
  CHECK(InspectFile(path).status().code() == absl::StatusCode::kDataLoss);
  absl::StatusOr<FileInfo> header_only = InspectFile(path, /*verify_checksums=*/false);
  REQUIRE(header_only.ok());
  CHECK_FALSE(header_only->checksums_verified);
  CHECK(InspectFile(dir.File("none")).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("golden: fixed keys and seed pin the filter bytes and the file bytes") {
  // A change to hashing, the layout or the format changes these digests: that must be a deliberate
  // format version bump, never an accident.
  TempDir dir;
  BlockedFilter f = SmallFilter(100, 4096, 6);
  const uint64_t filter_digest = XXH3_64bits(f.bytes().data(), f.bytes().size());
  REQUIRE(f.Save(dir.File("g")).ok());
  const std::vector<uint8_t> file = ReadBytes(dir.File("g"));
  const uint64_t file_digest = XXH3_64bits(file.data(), file.size());
  MESSAGE("filter digest " << std::hex << filter_digest << ", file digest " << file_digest);
  CHECK(filter_digest == 0x24a48f2a4ee76bf2ull);
  CHECK(file_digest == 0x00da4dd9bbb44d85ull);
  CHECK(file.size() == 4096 + 512);
}

// Digest of the filter's bytes and of its saved file.
template <typename Filter>
std::pair<uint64_t, uint64_t> Digests(const Filter& f, const TempDir& dir) {
  const std::string path = dir.File("golden");
  const std::vector<uint8_t> file = SaveAndRead(f, path);
  uint64_t filter_digest = 0;
  if constexpr (std::is_same_v<Filter, ScalableFilter>) {
    for (uint32_t i = 0; i < f.stage_count(); ++i) {
      filter_digest ^= XXH3_64bits(f.stage(i).bytes().data(), f.stage(i).bytes().size()) + i;
    }
  } else {
    filter_digest = XXH3_64bits(f.bytes().data(), f.bytes().size());
  }
  return {filter_digest, XXH3_64bits(file.data(), file.size())};
}

TEST_CASE("golden: every other kind's bytes and file are pinned too") {
  TempDir dir;
  // Windowed generations took a layout (issue #26): a default windowed filter (the line) and its
  // file stay byte for byte what they were before layouts (these digests are the old code's).
  auto classic = testing::MakeOrFail<ClassicFilter>(
      ClassicOptions{.capacity = 200, .fpr = 0.01, .hashing = {.seed = 0x5EED}});
  auto counting = testing::MakeOrFail<CountingFilter>(
      CountingOptions{.capacity = 200, .fpr = 0.01, .hashing = {.seed = 0x5EED}});
  // The chain's and the window's blocked lines under the salted probe (every file before
  // kFields); their kFields files are pinned below.
  auto scalable = testing::MakeOrFail<ScalableFilter>(ScalableOptions{
      .capacity = 50, .fpr = 0.01, .probe = Probe::kSalted, .hashing = {.seed = 0x5EED}});
  auto windowed = testing::MakeOrFail<WindowedFilter>(WindowedOptions{
      .capacity = 200, .fpr = 0.01, .probe = Probe::kSalted, .hashing = {.seed = 0x5EED}});
  for (uint64_t i = 0; i < 200; ++i) {
    classic.Insert(i);
    counting.Insert(i);
    REQUIRE(scalable.Insert(i) != InsertResult::kRefused);
  }
  for (uint64_t i = 0; i < 300; ++i) (void)windowed.Insert(i);
  REQUIRE(windowed.epoch() >= 5);  // rotated past a whole window
  REQUIRE(scalable.stage_count() == 3);
  const auto [classic_bytes, classic_file] = Digests(classic, dir);
  const auto [counting_bytes, counting_file] = Digests(counting, dir);
  const auto [scalable_bytes, scalable_file] = Digests(scalable, dir);
  const auto [windowed_bytes, windowed_file] = Digests(windowed, dir);
  CHECK(classic_bytes == 0x1f79365531a8b1e9ull);
  CHECK(classic_file == 0x725141a027b74f05ull);
  CHECK(counting_bytes == 0x2cd429e8f6201ee0ull);
  CHECK(counting_file == 0x89884b6caab812caull);
  CHECK(scalable_bytes == 0xce2bb62803982a9aull);
  CHECK(scalable_file == 0xb127975ce64db71eull);
  CHECK(windowed_bytes == 0x5c981ea1710a6ce2ull);
  CHECK(windowed_file == 0x186fa1dc97a3930eull);
  // A new chain's and window's (kFields, layout code 5).
  auto scalable5 = testing::MakeOrFail<ScalableFilter>(
      ScalableOptions{.capacity = 50, .fpr = 0.01, .hashing = {.seed = 0x5EED}});
  auto windowed5 = testing::MakeOrFail<WindowedFilter>(
      WindowedOptions{.capacity = 200, .fpr = 0.01, .hashing = {.seed = 0x5EED}});
  for (uint64_t i = 0; i < 200; ++i) REQUIRE(scalable5.Insert(i) != InsertResult::kRefused);
  for (uint64_t i = 0; i < 300; ++i) (void)windowed5.Insert(i);
  const auto [scalable5_bytes, scalable5_file] = Digests(scalable5, dir);
  const auto [windowed5_bytes, windowed5_file] = Digests(windowed5, dir);
  MESSAGE("kFields: scalable " << std::hex << scalable5_bytes << " " << scalable5_file
                               << ", windowed " << windowed5_bytes << " " << windowed5_file);
  CHECK(scalable5_bytes == 0x61640b2f32409fbcull);
  CHECK(scalable5_file == 0x31c1f628c084eea3ull);
  CHECK(windowed5_bytes == 0x011ea65bdcfaffceull);
  CHECK(windowed5_file == 0x1c2830029b558c16ull);
}

TEST_CASE("golden: the line's kFields probe (layout code 5) pins its bytes and file") {
  // What a new line filter writes: a change to the fields probe (bloomery/detail/probe_common.h)
  // changes these.
  TempDir dir;
  const BlockedFilter f = SmallFilter(100, 4096, 6, IntegerHash::kXxh3, Probe::kFields);
  CHECK(f.probe() == Probe::kFields);
  const auto [bytes, file] = Digests(f, dir);
  MESSAGE("filter digest " << std::hex << bytes << ", file digest " << file);
  CHECK(bytes == 0x999ad46ed03fdac5ull);
  CHECK(file == 0x75d44989382d932eull);
  // And a new line filter is that filter.
  FilterOptions o{.capacity = 100, .bits = 4096, .hashes = 6, .hashing = {.seed = 0x5EED}};
  BlockedFilter fresh = BlockedFilter::Create(o).value();
  for (uint64_t i = 0; i < 100; ++i) fresh.Insert(i);
  CHECK(Digests(fresh, dir) == Digests(f, dir));
}

TEST_CASE("map read-only shares the file copy-on-write; read-write persists after Flush") {
  TempDir dir;
  const std::string path = dir.File("m");
  BlockedFilter original = SmallFilter(200, 1 << 16);
  const std::vector<uint8_t> before = SaveAndRead(original, path);
  {
    absl::StatusOr<BlockedFilter> ro = BlockedFilter::Map(path, MapMode::kReadOnly);
    REQUIRE(ro.ok());
    CHECK(SameBits(*ro, original));
    CHECK(
        ro->Insert(uint64_t{1'000'000}));  // private copy-on-write: allowed, never reaches the file
    CHECK(ro->Flush().code() == absl::StatusCode::kFailedPrecondition);
  }
  CHECK(ReadBytes(path) == before);
  {
    absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
    REQUIRE(rw.ok());
    for (uint64_t i = 5000; i < 5100; ++i) rw->Insert(i);
    // Not flushed yet: the file is marked DIRTY, so a verifying load refuses it...
    CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kDataLoss);
    LoadOptions dirty_ok;
    dirty_ok.allow_dirty = true;
    CHECK(BlockedFilter::Load(path, dirty_ok).ok());
    REQUIRE(rw->Flush().ok());
  }
  absl::StatusOr<BlockedFilter> loaded = BlockedFilter::Load(path);
  REQUIRE(loaded.ok());
  for (uint64_t i = 0; i < 200; ++i) REQUIRE(loaded->MayContain(i));
  for (uint64_t i = 5000; i < 5100; ++i) REQUIRE(loaded->MayContain(i));
}

// Reads the DIRTY flag of `path` (InspectFile without the payload pass).
bool IsDirty(const std::string& path) {
  absl::StatusOr<FileInfo> info = InspectFile(path, /*verify_checksums=*/false);
  REQUIRE(info.ok());
  return info->dirty;
}

// `path` is DIRTY: a verifying load refuses it (DataLoss), one with allow_dirty returns it.
BlockedFilter LoadDirty(const std::string& path) {
  CHECK(IsDirty(path));
  CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kDataLoss);
  LoadOptions dirty_ok;
  dirty_ok.allow_dirty = true;
  absl::StatusOr<BlockedFilter> loaded = BlockedFilter::Load(path, dirty_ok);
  REQUIRE(loaded.ok());
  return *std::move(loaded);
}

TEST_CASE("a read-write mapping: DIRTY until it ends unchanged since its last Flush") {
  TempDir dir;
  const std::string path = dir.File("rw");
  const std::vector<uint8_t> saved = SaveAndRead(SmallFilter(200, 1 << 16), path);
  // Mapped and unmapped with nothing written: clean, the same bytes.
  REQUIRE(BlockedFilter::Map(path, MapMode::kReadWrite).ok());
  CHECK(ReadBytes(path) == saved);
  {
    absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
    REQUIRE(rw.ok());
    for (uint64_t i = 5000; i < 5100; ++i) rw->Insert(i);
    REQUIRE(rw->Flush().ok());
    CHECK(IsDirty(path));  // still mapped: it can still be written
    // It holds the file's update lock shared: an updater (which would rename a new file over it
    // and leave this mapping writing to a file no path names) waits, or fails fast.
    const absl::Status locked = LockForUpdate(path, LockWait::kFailFast).status();
    CHECK(locked.code() == absl::StatusCode::kUnavailable);
    CHECK(locked.message().find(absl::StrCat("pid ", getpid())) != absl::string_view::npos);
    // A reader loads it: DIRTY, but its checksums match (nothing written since the Flush).
    CHECK(BlockedFilter::Load(path).ok());
    // A second writer must accept the DIRTY file, and its end does not mark the file clean
    // (the first writer may still write).
    CHECK(BlockedFilter::Map(path, MapMode::kReadWrite).status().code() ==
          absl::StatusCode::kDataLoss);
    LoadOptions dirty_ok;
    dirty_ok.allow_dirty = true;
    REQUIRE(BlockedFilter::Map(path, MapMode::kReadWrite, dirty_ok).ok());
    CHECK(IsDirty(path));
    rw->Insert(uint64_t{5100});  // not flushed: a reader now sees stale checksums
    const absl::Status stale = BlockedFilter::Load(path).status();
    CHECK(stale.code() == absl::StatusCode::kDataLoss);
    CHECK(stale.message().find("allow_dirty") != absl::string_view::npos);
    REQUIRE(rw->Flush().ok());
  }
  // Ended unchanged since the Flush: clean, and byte for byte what Save writes; unlocked.
  CHECK_FALSE(IsDirty(path));
  CHECK(LockForUpdate(path, LockWait::kFailFast).ok());
  absl::StatusOr<BlockedFilter> clean = BlockedFilter::Load(path);
  REQUIRE(clean.ok());
  absl::StatusOr<std::string> resaved = clean->SaveToBytes();
  REQUIRE(resaved.ok());
  const std::vector<uint8_t> flushed = ReadBytes(path);
  CHECK(std::string(flushed.begin(), flushed.end()) == *resaved);
  {
    absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
    REQUIRE(rw.ok());
    REQUIRE(rw->Flush().ok());
    for (uint64_t i = 6000; i < 6100; ++i) rw->Insert(i);  // written after the last Flush
  }
  // Ended changed since its last Flush: DIRTY, refused unless allow_dirty, which has every key.
  const BlockedFilter dirty = LoadDirty(path);
  for (uint64_t i = 6000; i < 6100; ++i) REQUIRE(dirty.MayContain(i));
}

TEST_CASE("a read-only map beside a writer that flushes: the header it maps is one it read") {
  // A Flush rewrites the header in place (counts, checksums); a map that read the header before
  // one and mapped the file after it reads it again instead of failing.
  TempDir dir;
  const std::string path = dir.File("flushed");
  REQUIRE(SmallFilter(200, 1 << 12).Save(path).ok());
  absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
  REQUIRE(rw.ok());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (uint64_t i = 10'000; !done.load(std::memory_order_relaxed); ++i) {
      rw->Insert(i);
      if (!rw->Flush().ok()) return;
    }
  });
  LoadOptions dirty_ok;  // the writer's file is DIRTY
  dirty_ok.allow_dirty = true;
  int failed = 0;
  std::string first_error;
  for (int i = 0; i < 3000; ++i) {
    const absl::Status s = BlockedFilter::Map(path, MapMode::kReadOnly, dirty_ok).status();
    if (!s.ok() && failed++ == 0) first_error = std::string(s.message());
  }
  done = true;
  writer.join();
  CHECK_MESSAGE(failed == 0, failed << " of 3000 maps failed: " << first_error);
  REQUIRE(rw->Flush().ok());
}

TEST_CASE("Flush of a read-write mapping fails once another file was saved over its path") {
  // Regression: a Save (a rename) that did not take the update lock replaced the mapped file; the
  // mapping went on writing to the unlinked old file and Flush said OK, so its inserts were lost.
  TempDir dir;
  const std::string path = dir.File("replaced");
  REQUIRE(SmallFilter(200, 1 << 16).Save(path).ok());
  absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
  REQUIRE(rw.ok());
  rw->Insert(uint64_t{5000});
  REQUIRE(rw->Flush().ok());
  REQUIRE(SmallFilter(10, 1 << 16).Save(path).ok());  // renamed over the mapped file
  rw->Insert(uint64_t{5001});
  const absl::Status flushed = rw->Flush();
  CHECK(flushed.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(flushed.message().find(path) != absl::string_view::npos);
  CHECK(flushed.message().find("no longer names the mapped file") != absl::string_view::npos);
  // The file at the path is the one saved over it, untouched by the mapping; the mapping's keys
  // are still in memory, where a Save keeps them.
  absl::StatusOr<BlockedFilter> there = BlockedFilter::Load(path);
  REQUIRE(there.ok());
  CHECK_FALSE(there->MayContain(uint64_t{5001}));
  REQUIRE(rw->Save(dir.File("kept")).ok());
  absl::StatusOr<BlockedFilter> kept = BlockedFilter::Load(dir.File("kept"));
  REQUIRE(kept.ok());
  CHECK(kept->MayContain(uint64_t{5000}));
  CHECK(kept->MayContain(uint64_t{5001}));
}

TEST_CASE("Flush of a read-write mapping mapped by a relative path survives a chdir") {
  TempDir dir;
  REQUIRE(SmallFilter(200, 1 << 16).Save(dir.File("relative")).ok());
  const fs::path before = fs::current_path();
  fs::current_path(dir.path());
  absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map("relative", MapMode::kReadWrite);
  fs::current_path(before);
  REQUIRE(rw.ok());
  rw->Insert(uint64_t{5000});
  CHECK(rw->Flush().ok());
}

TEST_CASE("a process killed after Flush and more inserts leaves a DIRTY file that loads whole") {
  TempDir dir;
  const std::string path = dir.File("crash");
  REQUIRE(SmallFilter(200, 1 << 16).Save(path).ok());
  // The child maps, inserts, flushes, inserts more and dies without unmapping (no destructor).
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    absl::StatusOr<BlockedFilter> rw = BlockedFilter::Map(path, MapMode::kReadWrite);
    if (!rw.ok()) _exit(1);
    for (uint64_t i = 5000; i < 5100; ++i) rw->Insert(i);
    if (!rw->Flush().ok()) _exit(1);
    for (uint64_t i = 6000; i < 6100; ++i) rw->Insert(i);
    kill(getpid(), SIGKILL);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  // Before, Flush cleared DIRTY for good: the file then had a clean header over stale checksums,
  // refused even with allow_dirty and left alone by repair.
  const BlockedFilter loaded = LoadDirty(path);
  for (uint64_t i = 0; i < 200; ++i) REQUIRE(loaded.MayContain(i));
  for (uint64_t i = 5000; i < 5100; ++i) REQUIRE(loaded.MayContain(i));
  for (uint64_t i = 6000; i < 6100; ++i) REQUIRE(loaded.MayContain(i));  // the page cache kept them
  // Saved again (what `bloomery repair` does), it is whole.
  REQUIRE(loaded.Save(path).ok());
  CHECK(BlockedFilter::Load(path).ok());
}

TEST_CASE("merging filters saved by several workers is the distributed de-dup") {
  TempDir dir;
  FilterOptions o;
  o.capacity = 30'000;
  o.fpr = 0.001;
  for (int worker = 0; worker < 3; ++worker) {
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
    REQUIRE(f.ok());
    for (uint64_t i = worker; i < 30'000; i += 3) f->Insert(i);
    REQUIRE(f->Save(dir.File(absl::StrCat("w", worker))).ok());
  }
  absl::StatusOr<BlockedFilter> merged = BlockedFilter::Load(dir.File("w0"));
  REQUIRE(merged.ok());
  for (int worker = 1; worker < 3; ++worker) {
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Load(dir.File(absl::StrCat("w", worker)));
    REQUIRE(f.ok());
    REQUIRE(merged->UnionWith(*f).ok());
  }
  for (uint64_t i = 0; i < 30'000; ++i) REQUIRE(merged->MayContain(i));
  absl::StatusOr<BlockedFilter> all = BlockedFilter::Create(o);
  for (uint64_t i = 0; i < 30'000; ++i) all->Insert(i);
  CHECK(SameBits(*merged, *all));
}

TEST_CASE("every single-byte change and every truncation of a saved file is rejected") {
  TempDir dir;
  const std::string path = dir.File("c");
  const std::vector<uint8_t> good = SaveAndRead(SmallFilter(50), path);
  REQUIRE(good.size() == 4096 + 128);
  const std::string bad = dir.File("bad");
  LoadOptions unchecked;
  unchecked.verify_checksums = false;
  size_t payload_loads_unchecked = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xFF}}) {
      std::vector<uint8_t> changed = good;
      changed[i] ^= flip;
      WriteBytes(bad, changed);
      absl::StatusOr<BlockedFilter> loaded = BlockedFilter::Load(bad);
      CAPTURE(i);
      REQUIRE_FALSE(loaded.ok());
      CHECK_FALSE(BlockedFilter::Map(bad, MapMode::kReadOnly).ok());
      // With checksums off a payload change loads (the header is still checked) without crashing.
      absl::StatusOr<BlockedFilter> lenient = BlockedFilter::Load(bad, unchecked);
      if (i >= 4096) {
        REQUIRE(lenient.ok());
        ++payload_loads_unchecked;
        (void)lenient->MayContain(uint64_t{1});
      } else {
        REQUIRE_FALSE(lenient.ok());
      }
    }
  }
  CHECK(payload_loads_unchecked == 128 * 3);
  for (size_t size = 0; size < good.size(); ++size) {
    WriteBytes(bad, std::vector<uint8_t>(good.begin(), good.begin() + size));
    CAPTURE(size);
    REQUIRE_FALSE(BlockedFilter::Load(bad).ok());
    REQUIRE_FALSE(BlockedFilter::Load(bad, unchecked).ok());
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  WriteBytes(bad, longer);
  CHECK(BlockedFilter::Load(bad).status().code() == absl::StatusCode::kDataLoss);
}

// Writes a file whose header is `header` (checksums valid) followed by `payload_bytes` zero bytes.
void WriteCrafted(const std::string& path, FileHeader header, uint64_t payload_bytes,
                  uint32_t version = detail::kFormatVersion) {
  header.hash_id = 1;
  uint64_t chunks = 0;
  for (const auto& s : header.stages) chunks += WholeLineBytes(s.bits);
  chunks = (chunks + (uint64_t{1} << header.chunk_shift) - 1) >> header.chunk_shift;
  std::vector<uint64_t> sums(chunks, 0);
  absl::StatusOr<std::vector<uint8_t>> region = detail::EncodeHeader(header, sums);
  REQUIRE(region.ok());
  if (version != detail::kFormatVersion) {
    std::memcpy(region->data() + 8, &version, 4);
  }
  region->resize(region->size() + payload_bytes, 0);
  WriteBytes(path, *region);
}

FileHeader BlockedHeader(uint64_t bits) {
  FileHeader h;
  h.kind = FilterKind::kBlocked;
  h.hashes = 6;
  h.bits = bits;
  h.stages.push_back({bits, 6, 0, 0});
  return h;
}

TEST_CASE("hostile headers get the right code and never an oversized allocation") {
  TempDir dir;
  const std::string path = dir.File("h");
  // A header that claims 2^47 bits (16 TiB) over a 4 KiB payload: rejected from the file size,
  // before any allocation.
  WriteCrafted(path, BlockedHeader(uint64_t{1} << 47), 4096);
  CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kDataLoss);
  // A consistent file over the caller's cap.
  WriteCrafted(path, BlockedHeader(uint64_t{1} << 23), uint64_t{1} << 20);
  LoadOptions capped;
  capped.max_bytes = 1 << 19;
  capped.verify_checksums = false;
  absl::Status s = BlockedFilter::Load(path, capped).status();
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  CHECK(s.message().find("cap") != absl::string_view::npos);
  // A newer version.
  WriteCrafted(path, BlockedHeader(1024), 128, 2);
  s = BlockedFilter::Load(path).status();
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(s.message().find("newer") != absl::string_view::npos);
  // Another kind.
  FileHeader counting = BlockedHeader(1024);
  counting.kind = FilterKind::kCounting;
  counting.counter_bits = 4;
  WriteCrafted(path, counting, 128);
  s = BlockedFilter::Load(path).status();
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message().find("counting") != absl::string_view::npos);
  // Parameters that contradict each other: stage bits not a whole number of blocks.
  FileHeader odd = BlockedHeader(1000);
  WriteCrafted(path, odd, 128);
  CHECK(BlockedFilter::Load(path, capped).status().code() == absl::StatusCode::kDataLoss);
  // Not a bloomery file at all; a missing file; a directory.
  WriteBytes(path, std::vector<uint8_t>(8192, 'x'));
  CHECK(BlockedFilter::Load(path).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(BlockedFilter::Load(dir.File("missing")).status().code() == absl::StatusCode::kNotFound);
  CHECK(BlockedFilter::Load(dir.path().string()).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

// `file` (a valid saved filter) with its header edited by `edit` and every checksum made valid
// again: whatever is wrong with the result is the edit, never a checksum.
template <typename Edit>
std::string Resealed(const std::string& file, Edit edit) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  absl::StatusOr<FileHeader> header = detail::ValidateHeader(bytes, bytes.size());
  REQUIRE(header.ok());
  const uint64_t payload_offset = header->payload_offset;
  edit(*header);
  const uint64_t chunk = uint64_t{1} << header->chunk_shift;
  std::vector<uint64_t> sums((header->payload_bytes + chunk - 1) / chunk, 0);
  absl::StatusOr<std::vector<uint8_t>> region = detail::EncodeHeader(*header, sums);
  REQUIRE(region.ok());
  std::vector<uint8_t> out = *region;
  out.insert(out.end(), bytes.begin() + static_cast<ptrdiff_t>(payload_offset), bytes.end());
  REQUIRE(detail::RecomputeChecksums(out));
  return std::string(out.begin(), out.end());
}

// InspectFile, InspectBytes and each loader of `Filter` give one verdict on `file`: DataLoss
// naming `why`.
template <typename Filter>
void CheckRefusedEverywhere(const std::string& file, const TempDir& dir, std::string_view why) {
  const std::string path = dir.File("contradictory");
  WriteBytes(path, std::vector<uint8_t>(file.begin(), file.end()));
  CAPTURE(why);
  std::vector<absl::Status> verdicts = {InspectFile(path).status(),
                                        InspectFile(path, /*verify_checksums=*/false).status(),
                                        InspectBytes(file).status(), Filter::Load(path).status(),
                                        Filter::LoadFromBytes(file).status()};
  if constexpr (requires { Filter::Map(path, MapMode::kReadOnly); }) {
    verdicts.push_back(Filter::Map(path, MapMode::kReadOnly).status());
  }
  for (const absl::Status& s : verdicts) {
    CAPTURE(s);
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK(s.message().find(detail::AbslView(why)) != absl::string_view::npos);
  }
}

// The file of a filter of 4096 bits and 4 hashes planned for 3000 keys: poor, but valid.
template <typename Filter>
std::string PoorFile() {
  typename Filter::Options o = testing::Geometry<Filter>(4096, 4);
  o.capacity = 3000;
  absl::StatusOr<std::string> bytes = testing::MakeOrFail<Filter>(o).SaveToBytes();
  REQUIRE(bytes.ok());
  return *bytes;
}

TEST_CASE(
    "one validator: a contradictory header is refused by InspectFile and every loader alike") {
  TempDir dir;
  const std::string blocked = *MakeKind<BlockedFilter>(100).SaveToBytes();
  const std::string classic = *MakeKind<ClassicFilter>(100).SaveToBytes();
  const std::string counting = *MakeKind<CountingFilter>(100).SaveToBytes();
  const std::string scalable = *MakeAnyKind<ScalableFilter>(400).SaveToBytes();
  // The edits below are all that is wrong: unedited, each file passes everywhere.
  for (const std::string* file : {&blocked, &classic, &counting, &scalable}) {
    const std::string same = Resealed(*file, [](FileHeader&) {});
    CHECK(same == *file);
    CHECK(InspectBytes(same).ok());
  }
  // The planned fpr is what the geometry predicts.
  for (double fpr : {0.0, 0.999}) {
    const auto set_fpr = [fpr](FileHeader& h) { h.fpr = fpr; };
    CheckRefusedEverywhere<BlockedFilter>(Resealed(blocked, set_fpr), dir, "planned fpr");
    CheckRefusedEverywhere<ClassicFilter>(Resealed(classic, set_fpr), dir, "planned fpr");
    CheckRefusedEverywhere<CountingFilter>(Resealed(counting, set_fpr), dir, "planned fpr");
  }
  CheckRefusedEverywhere<ScalableFilter>(Resealed(scalable, [](FileHeader& h) { h.fpr = 0; }), dir,
                                         "fpr");
  // A geometry whose FPR at its capacity rounds to 1 cannot be written back (the format holds a
  // planned fpr below 1): a header claiming 0.9999999 for it, within the tolerance of 1, is refused
  // as Create refuses the geometry, never loaded as a filter that no Save could write.
  const auto holds_nothing = [](FileHeader& h) {
    h.capacity = h.stages[0].capacity = 1'000'000;
    h.fpr = 0.9999999;
  };
  CheckRefusedEverywhere<BlockedFilter>(Resealed(PoorFile<BlockedFilter>(), holds_nothing), dir,
                                        "cannot hold 1000000 keys");
  CheckRefusedEverywhere<ClassicFilter>(Resealed(PoorFile<ClassicFilter>(), holds_nothing), dir,
                                        "cannot hold 1000000 keys");
  CheckRefusedEverywhere<CountingFilter>(Resealed(PoorFile<CountingFilter>(), holds_nothing), dir,
                                         "cannot hold 1000000 keys");
  // A one-stage filter's stage is the filter: the same capacity and hashes.
  CheckRefusedEverywhere<BlockedFilter>(
      Resealed(blocked, [](FileHeader& h) { h.stages[0].capacity += 1; }), dir,
      "stage capacity differs");
  CheckRefusedEverywhere<CountingFilter>(Resealed(counting, [](FileHeader& h) { h.capacity += 1; }),
                                         dir, "stage capacity differs");
  CheckRefusedEverywhere<ScalableFilter>(
      Resealed(scalable, [](FileHeader& h) { h.hashes = h.stages[0].hashes + 1; }), dir,
      "stage hashes differ");
  // A scalable filter's count is its stages' sum, each stage within its capacity.
  CheckRefusedEverywhere<ScalableFilter>(
      Resealed(scalable, [](FileHeader& h) { h.insert_count += 1; }), dir, "stages' sum");
  CheckRefusedEverywhere<ScalableFilter>(Resealed(scalable,
                                                  [](FileHeader& h) {
                                                    h.stages[0].insert_count =
                                                        h.stages[0].capacity + 1;
                                                    h.insert_count = 0;
                                                    for (const detail::StageInfo& s : h.stages)
                                                      h.insert_count += s.insert_count;
                                                  }),
                                         dir, "more keys");
  // Fields a kind does not use are 0.
  CheckRefusedEverywhere<BlockedFilter>(Resealed(blocked, [](FileHeader& h) { h.param0 = 1; }), dir,
                                        "param0");
  CheckRefusedEverywhere<ClassicFilter>(Resealed(classic, [](FileHeader& h) { h.param2 = 1; }), dir,
                                        "param2");
  CheckRefusedEverywhere<CountingFilter>(Resealed(counting,
                                                  [](FileHeader& h) {
                                                    h.insert_count = 1;
                                                    h.stages[0].insert_count = 1;
                                                  }),
                                         dir, "insert count");
  CheckRefusedEverywhere<ScalableFilter>(
      Resealed(scalable, [](FileHeader& h) { h.param2 |= uint64_t{1} << 40; }), dir,
      "unknown option bits");
  // Stage tags: only a scalable stage has one (its level, after a union), and only a level that
  // its place in the chain allows, written only where it is not the stage's index.
  const auto tag_stage_0 = [](uint32_t tag) {
    return [tag](FileHeader& h) { h.stages[0].tag = tag; };
  };
  CheckRefusedEverywhere<BlockedFilter>(Resealed(blocked, tag_stage_0(1)), dir, "reserved stage");
  CheckRefusedEverywhere<ClassicFilter>(Resealed(classic, tag_stage_0(1)), dir, "reserved stage");
  CheckRefusedEverywhere<CountingFilter>(Resealed(counting, tag_stage_0(1)), dir, "reserved stage");
  CheckRefusedEverywhere<ScalableFilter>(Resealed(scalable, tag_stage_0(1)), dir, "level");
  CheckRefusedEverywhere<ScalableFilter>(Resealed(scalable, tag_stage_0(2)), dir, "level");
}

TEST_CASE(
    "hash_id: 1, 2 and 3 are read with their integer hash; any other is DataLoss everywhere") {
  TempDir dir;
  const std::string xxh3 = *MakeKind<BlockedFilter>(100).SaveToBytes();
  // The same bits read as hash_id 2 or 3: a valid file of a filter that hashes integers by MixKey
  // or SeededMixKey.
  for (IntegerHash integers : {IntegerHash::kMix, IntegerHash::kSeededMix}) {
    CAPTURE(IntegerHashName(integers));
    const auto id = static_cast<uint32_t>(integers);
    const std::string mix = Resealed(xxh3, [id](FileHeader& h) { h.hash_id = id; });
    absl::StatusOr<FileInfo> info = InspectBytes(mix);
    REQUIRE(info.ok());
    CHECK(info->integer_hash == integers);
    absl::StatusOr<BlockedFilter> loaded = BlockedFilter::LoadFromBytes(mix);
    REQUIRE(loaded.ok());
    CHECK(loaded->integer_hash() == integers);
    CHECK(loaded->hasher() == KeyHasher{loaded->seed(), integers});
    CHECK(*loaded->SaveToBytes() == mix);  // and it saves back with its hash_id
  }
  CHECK(InspectBytes(xxh3)->integer_hash == IntegerHash::kXxh3);
  for (uint32_t id : {0u, 4u, 0xFFFFFFFFu}) {
    CAPTURE(id);
    CheckRefusedEverywhere<BlockedFilter>(Resealed(xxh3, [id](FileHeader& h) { h.hash_id = id; }),
                                          dir, "unknown hash function id");
  }
}

TEST_CASE("golden: filters hashing integers by MixKey and SeededMixKey pin their bytes and files") {
  // Keys 0..99 under kMix (hash_id 2) and kSeededMix (hash_id 3): a change to MixKey, SeededMixKey
  // or PremixSeed changes these, and files saved with those hash_ids would stop finding their keys.
  struct Golden {
    IntegerHash integers;
    uint64_t bytes;
    uint64_t file;
  };
  TempDir dir;
  for (const Golden& g :
       {Golden{IntegerHash::kMix, 0x4031fa3e950e55b1ull, 0x400cd6e6679791f5ull},
        Golden{IntegerHash::kSeededMix, 0x8548da80c5fb533aull, 0xff57864137bcbe37ull}}) {
    CAPTURE(IntegerHashName(g.integers));
    const auto [bytes, file] = Digests(SmallFilter(100, 4096, 6, g.integers), dir);
    MESSAGE("filter digest " << std::hex << bytes << ", file digest " << file);
    CHECK(bytes == g.bytes);
    CHECK(file == g.file);
  }
}

TEST_CASE("a header claiming a huge table is checked in bounded memory, before any allocation") {
  TempDir dir;
  const std::string path = dir.File("sparse");
  // 2^36 payload bytes in 4 KiB chunks: a 128 MiB chunk table in the header region, all of it
  // sparse zeros, so its checksums are wrong and the file is rejected. Reading the region whole
  // before checking it (as the loaders once did) would take 128 MiB.
  FileHeader header = BlockedHeader(uint64_t{1} << 39);
  header.hash_id = 1;
  header.chunk_shift = 12;
  std::vector<uint64_t> sums(uint64_t{1} << 24, 0);
  absl::StatusOr<std::vector<uint8_t>> region = detail::EncodeHeader(header, sums);
  REQUIRE(region.ok());
  const uint64_t file_size = region->size() + (uint64_t{1} << 36);
  region->resize(4096);  // the fixed header and the stage table; the rest is a hole
  WriteBytes(path, *region);
  std::error_code error;
  fs::resize_file(path, file_size, error);
  if (error) {
    MESSAGE("sparse file of " << file_size << " bytes not supported here: " << error.message());
    return;
  }
  // In a child, so that its peak resident memory is the checks' alone.
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    rusage before;
    getrusage(RUSAGE_SELF, &before);
    const absl::Status inspect = InspectFile(path).status();
    LoadOptions capped;
    capped.max_bytes = uint64_t{1} << 20;
    const absl::Status load = BlockedFilter::Load(path, capped).status();
    rusage after;
    getrusage(RUSAGE_SELF, &after);
    const bool bounded = after.ru_maxrss - before.ru_maxrss < 32 * 1024;  // KiB
    _exit(inspect.code() == absl::StatusCode::kDataLoss &&
                  inspect.message().find("checksum") != absl::string_view::npos &&
                  load.code() == absl::StatusCode::kResourceExhausted
              ? (bounded ? 0 : 2)
              : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK_MESSAGE(WEXITSTATUS(status) != 1, "wrong verdicts");
  CHECK_MESSAGE(WEXITSTATUS(status) != 2, "more than 32 MiB held to check a header");
}

// Storage maps with MAP_NORESERVE, so the kernel alone grants 2^45 bytes on any machine and the
// process dies later, filling it. With no cap set, this machine's memory is the cap.
void CheckRefusedForMachine(const absl::Status& s, std::optional<uint64_t> bytes) {
  const detail::MemoryLimit& machine = detail::MachineMemoryLimit();
  CAPTURE(s);
  CHECK(s.code() == absl::StatusCode::kResourceExhausted);
  if (bytes.has_value()) CHECK(s.message().find(absl::StrCat(*bytes)) != absl::string_view::npos);
  CHECK(s.message().find(absl::StrCat(machine.bytes)) != absl::string_view::npos);
  CHECK(s.message().find(machine.source) != absl::string_view::npos);
}

TEST_CASE("a filter larger than this machine's memory is refused at creation, naming both sizes") {
  REQUIRE(detail::MachineMemoryLimit().bytes > 0);
  REQUIRE(detail::MachineMemoryLimit().bytes < (uint64_t{1} << 44));
  FilterOptions o;
  o.bits = uint64_t{1} << 48;
  o.hashes = 6;
  CheckRefusedForMachine(BlockedFilter::Create(o).status(), uint64_t{1} << 45);
  // The classic layout rounds 2^48 bits up past its maximum (InvalidArgument); 2^47 is in range,
  // and its slices round its size up by a line or so.
  FilterOptions classic = o;
  classic.bits = uint64_t{1} << 47;
  CheckRefusedForMachine(ClassicFilter::Create(classic).status(), std::nullopt);
  CountingOptions c;
  c.bits = uint64_t{1} << 48;
  c.hashes = 4;
  CheckRefusedForMachine(CountingFilter::Create(c).status(), uint64_t{1} << 45);
  ScalableOptions sc;
  sc.capacity = uint64_t{1} << 42;  // a first stage of several TB
  CheckRefusedForMachine(ScalableFilter::Create(sc).status(), std::nullopt);
  // A cap the caller sets replaces the machine's: over-committing stays possible on purpose.
  o.memory.max_memory_bytes = uint64_t{1} << 46;
  CHECK(BlockedFilter::Create(o).ok());
}

TEST_CASE("a load claiming more than this machine's memory is refused before allocating") {
  const uint64_t limit = detail::MachineMemoryLimit().bytes;
  REQUIRE(limit > 0);
  REQUIRE(limit < (uint64_t{1} << 44));
  TempDir dir;
  const std::string path = dir.File("big");
  // A consistent header over a sparse payload just past the limit: the file size agrees with the
  // header, so only the memory check stands between it and a payload-sized allocation.
  const uint64_t payload = std::bit_ceil(limit + 1);
  FileHeader header = BlockedHeader(payload * 8);
  header.hash_id = 1;
  std::vector<uint64_t> sums(payload >> header.chunk_shift, 0);
  absl::StatusOr<std::vector<uint8_t>> region = detail::EncodeHeader(header, sums);
  REQUIRE(region.ok());
  WriteBytes(path, *region);
  std::error_code error;
  fs::resize_file(path, region->size() + payload, error);
  if (error) {
    MESSAGE("sparse file of " << payload << " bytes not supported here: " << error.message());
    return;
  }
  LoadOptions options;
  options.verify_checksums = false;
  CheckRefusedForMachine(BlockedFilter::Load(path, options).status(), payload);
}

TEST_CASE(
    "Save replaces only regular files: devices, FIFOs and directories are refused untouched") {
  TempDir dir;
  const BlockedFilter f = SmallFilter(10);
  const std::string fifo = dir.File("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  absl::Status s = f.Save(fifo);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(fs::is_fifo(fifo));
  const std::string sub = dir.File("sub");
  fs::create_directory(sub);
  CHECK(f.Save(sub).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(fs::is_directory(sub));
  if (fs::exists("/dev/null")) {
    CHECK(f.Save("/dev/null").code() == absl::StatusCode::kFailedPrecondition);
    CHECK(fs::is_character_file("/dev/null"));
  }
  // Nothing was left beside them.
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 2);
}

TEST_CASE("Save through a symlink updates its target; an existing file keeps its mode") {
  TempDir dir;
  const std::string target = dir.File("real.bloom");
  const std::string link = dir.File("link.bloom");
  REQUIRE(SmallFilter(10).Save(target).ok());
  REQUIRE(chmod(target.c_str(), 0640) == 0);
  fs::create_symlink("real.bloom", link);  // relative, as `ln -s` makes them
  const BlockedFilter bigger = SmallFilter(50);
  REQUIRE(bigger.Save(link).ok());
  CHECK(fs::is_symlink(link));
  absl::StatusOr<BlockedFilter> through_target = BlockedFilter::Load(target);
  REQUIRE(through_target.ok());
  CHECK(SameBits(*through_target, bigger));
  CHECK((fs::status(target).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  // A new file gets 0666 & ~umask, as any file a program creates.
  const mode_t old_mask = umask(077);
  const absl::Status saved = SmallFilter(10).Save(dir.File("new.bloom"));
  umask(old_mask);
  REQUIRE(saved.ok());
  CHECK((fs::status(dir.File("new.bloom")).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("a successful save removes temp files that dead processes' interrupted saves left") {
  TempDir dir;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(0);
  REQUIRE(waitpid(child, nullptr, 0) == child);  // `child` is now a pid nobody holds
  const std::string dead = dir.File(absl::StrCat(".f.bloom.tmp.", child, ".0.0"));
  const std::string live = dir.File(absl::StrCat(".f.bloom.tmp.", getpid(), ".99.0"));
  const std::string other = dir.File(absl::StrCat(".g.bloom.tmp.", child, ".0.0"));
  for (const std::string& leftover : {dead, live, other}) WriteBytes(leftover, {1, 2, 3});
  REQUIRE(SmallFilter(10).Save(dir.File("f.bloom")).ok());
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));   // a save in progress in a live process is never touched
  CHECK(fs::exists(other));  // another file's temp is that file's save's business
}

TEST_CASE("loaders refuse a FIFO at once and every error names the file") {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // Before the fix each of these blocked in open() for ever.
  CHECK(BlockedFilter::Load(fifo).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(BlockedFilter::Map(fifo, MapMode::kReadOnly).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(InspectFile(fifo).status().code() == absl::StatusCode::kInvalidArgument);
  const std::string bad = dir.File("g3.bloom");
  REQUIRE(SmallFilter(10).Save(bad).ok());
  std::vector<uint8_t> bytes = ReadBytes(bad);
  bytes[100] ^= 1;
  WriteBytes(bad, bytes);
  for (const absl::Status& status :
       {BlockedFilter::Load(bad).status(), BlockedFilter::Map(bad, MapMode::kReadOnly).status(),
        InspectFile(bad).status(), ClassicFilter::Load(bad).status()}) {
    CHECK_FALSE(status.ok());
    CHECK(std::string(status.message()).find(bad) != std::string::npos);
  }
}

TEST_CASE("LockForUpdate: the second locker fails fast naming the holder, or waits for it") {
  TempDir dir;
  const std::string path = dir.File("shared.bloom");
  // Before the file exists, and after.
  for (int round = 0; round < 2; ++round) {
    CAPTURE(round);
    absl::StatusOr<FileLock> first = LockForUpdate(path);
    REQUIRE(first.ok());
    absl::StatusOr<FileLock> second = LockForUpdate(path, LockWait::kFailFast);
    CHECK(second.status().code() == absl::StatusCode::kUnavailable);
    CHECK(std::string(second.status().message()).find(absl::StrCat("pid ", getpid())) !=
          std::string::npos);
    if (round == 0) REQUIRE(SmallFilter(10).Save(path).ok());
  }
  CHECK(LockForUpdate(path, LockWait::kFailFast).ok());  // released with the FileLock
  const std::string fifo = dir.File("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(LockForUpdate(fifo).status().code() == absl::StatusCode::kFailedPrecondition);
}

TEST_CASE("LockForUpdate: a waiter ends up locking the file the holder's Save put at the path") {
  TempDir dir;
  const std::string path = dir.File("shared.bloom");
  REQUIRE(SmallFilter(10).Save(path).ok());
  absl::StatusOr<FileLock> holder = LockForUpdate(path);
  REQUIRE(holder.ok());
  std::atomic<bool> acquired{false};
  std::optional<FileLock> waiter_lock;
  std::thread waiter([&] {
    absl::StatusOr<FileLock> lock = LockForUpdate(path);  // blocks on the old file
    if (!lock.ok()) return;
    waiter_lock = *std::move(lock);
    acquired = true;
  });
  // Until the kernel lists the waiter as blocked, it might not have reached the old file yet.
  const struct stat old = [&] {
    struct stat st;
    REQUIRE(stat(path.c_str(), &st) == 0);
    return st;
  }();
  const std::string blocked_on = absl::StrCat(":", old.st_ino, " ");
  for (int i = 0; i < 10'000; ++i) {
    std::ifstream locks("/proc/locks");
    std::string line;
    bool waiting = false;
    while (std::getline(locks, line)) {
      waiting |= line.find("->") != std::string::npos && line.find(blocked_on) != std::string::npos;
    }
    if (waiting) break;
    usleep(1000);
  }
  REQUIRE(SmallFilter(20).Save(path).ok());  // a new file (inode) at the path
  *holder = FileLock();                      // release the old one: the waiter wakes
  waiter.join();
  REQUIRE(acquired);
  // Had the waiter kept its lock on the replaced file, the path's file would be free now.
  CHECK(LockForUpdate(path, LockWait::kFailFast).status().code() == absl::StatusCode::kUnavailable);
}

TEST_CASE("a failed save (file size limit: like a full disk) leaves the old file intact") {
  TempDir dir;
  const std::string path = dir.File("keep");
  const std::vector<uint8_t> before = SaveAndRead(SmallFilter(10), path);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG instead of killing the process
    struct rlimit limit = {16384, 16384};
    setrlimit(RLIMIT_FSIZE, &limit);
    BlockedFilter big = SmallFilter(10, 1 << 20);  // 128 KiB payload: cannot fit
    const absl::Status s = big.Save(path);
    _exit(s.ok() ? 1 : 0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);  // the save reported its failure
  CHECK(ReadBytes(path) == before);
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("kill test: SIGKILL during repeated saves never leaves a broken or mixed file") {
  TempDir dir;
  const std::string path = dir.File("crawl");
  constexpr uint64_t kKeysPerState = 40;
  constexpr uint64_t kMaxStates = 4000;
  // Digest of state j: keys [0, j * kKeysPerState) inserted into SmallFilter's geometry.
  std::vector<uint64_t> state_digest;
  {
    BlockedFilter f = SmallFilter(0, 1 << 15);
    for (uint64_t j = 0; j <= kMaxStates; ++j) {
      if (j > 0) {
        for (uint64_t i = (j - 1) * kKeysPerState; i < j * kKeysPerState; ++i) f.Insert(i);
      }
      state_digest.push_back(XXH3_64bits(f.bytes().data(), f.bytes().size()));
    }
  }
  auto state_of = [&](const BlockedFilter& f) -> int64_t {
    const uint64_t d = XXH3_64bits(f.bytes().data(), f.bytes().size());
    for (size_t j = 0; j < state_digest.size(); ++j) {
      if (state_digest[j] == d) return static_cast<int64_t>(j);
    }
    return -1;
  };
  REQUIRE(SmallFilter(0, 1 << 15).Save(path).ok());
  testing::SplitMix64 rng(7);
  int64_t last = 0;
  int kills = 0;
  while (kills < 100 && last < static_cast<int64_t>(kMaxStates) - 50) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The "crawler": resume from the file, then save state after state until killed.
      absl::StatusOr<BlockedFilter> f = BlockedFilter::Load(path);
      if (!f.ok()) _exit(3);
      int64_t j = state_of(*f);
      if (j < 0) _exit(4);
      for (++j; j <= static_cast<int64_t>(kMaxStates); ++j) {
        for (uint64_t i = (j - 1) * kKeysPerState; i < j * kKeysPerState; ++i) f->Insert(i);
        if (!f->Save(path).ok()) _exit(5);
      }
      _exit(0);
    }
    usleep(static_cast<useconds_t>(1000 + rng.Below(15000)));
    kill(child, SIGKILL);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    if (WIFEXITED(status)) REQUIRE(WEXITSTATUS(status) == 0);
    ++kills;
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Load(path);
    REQUIRE(f.ok());
    const int64_t state = state_of(*f);
    CAPTURE(kills);
    REQUIRE(state >= last);  // the previous state or a newer one, never older, never a mixture
    last = state;
  }
  MESSAGE(kills << " kills, reached state " << last);
  CHECK(kills >= 100);
  // No temp files survive in the long run beyond those of killed writers (at most one per kill).
  size_t entries = static_cast<size_t>(
      std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()));
  CHECK(entries <= 1 + static_cast<size_t>(kills));
}

}  // namespace
}  // namespace bloomery
