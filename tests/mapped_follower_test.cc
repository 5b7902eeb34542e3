// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// mapped_follower_test.cc: MappedFollower (bloomery/mapped_follower.h) follows a file that Save
// replaces: each new file is seen, a bad one is refused with the old mapping kept, a lookup
// holding the old mapping goes on answering from it; and across processes, readers that follow a
// writer's replacements never miss a key of the version they hold and see the last file at the
// first Refresh after its rename.
#include "bloomery/mapped_follower.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"
#include "temp_dir.h"
#include "test_util.h"

namespace bloomery {
namespace {

namespace fs = std::filesystem;
using testing::Bytes;
using testing::Sized;
using testing::TempDir;

// Version v of the writer's filter: the keys 0 .. KeysIn(v) - 1, saved with seed v + 1 so that a
// reader can tell from the filter it holds which version it is.
constexpr uint64_t kFirstKeys = 20'000;
constexpr uint64_t kKeysPerVersion = 20'000;
uint64_t KeysIn(uint64_t version) { return kFirstKeys + version * kKeysPerVersion; }

std::vector<uint64_t> KeysBelow(uint64_t count) {
  std::vector<uint64_t> keys(count);
  std::iota(keys.begin(), keys.end(), uint64_t{0});
  return keys;
}

template <typename F>
F Version(uint64_t version) {
  typename F::Options options = Sized<F>(KeysIn(16), 0.01);
  options.hashing.seed = version + 1;
  absl::StatusOr<F> f = F::Create(options);
  REQUIRE(f.ok());
  for (uint64_t key = 0; key < KeysIn(version); ++key) (void)f->Insert(key);
  return *std::move(f);
}

// Replaces `path` by a file holding `bytes`, as Save does: a complete file renamed over it.
void ReplaceWith(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".new";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    REQUIRE(out.good());
  }
  REQUIRE(std::rename(temp.c_str(), path.c_str()) == 0);
}

TEST_CASE_TEMPLATE("a follower sees each new file, and a held mapping outlives its file", F,
                   BlockedFilter, ClassicFilter, CountingFilter) {
  TempDir dir;
  const std::string path = dir.File("seen.bloom");
  REQUIRE(Version<F>(0).Save(path).ok());
  absl::StatusOr<MappedFollower<F>> follower = MappedFollower<F>::Open(path);
  REQUIRE(follower.ok());
  CHECK(follower->current()->mapped());
  CHECK(follower->generation() == 0);
  CHECK(follower->path() == path);

  // Nothing changed: no swap, the same mapping.
  const std::shared_ptr<const F> first = follower->current();
  absl::StatusOr<bool> swapped = follower->Refresh();
  REQUIRE(swapped.ok());
  CHECK_FALSE(*swapped);
  CHECK(follower->current().get() == first.get());

  for (uint64_t version = 1; version <= 4; ++version) {
    const std::shared_ptr<const F> held = follower->current();
    const F next = Version<F>(version);
    REQUIRE(next.Save(path).ok());
    swapped = follower->Refresh();
    REQUIRE(swapped.ok());
    CHECK(*swapped);
    CHECK(follower->generation() == version);
    const std::shared_ptr<const F> now = follower->current();
    CHECK(now->seed() == version + 1);
    CHECK(Bytes(*now) == Bytes(next));
    CHECK(now->MayContainMany(KeysBelow(KeysIn(version))) == KeysIn(version));
    // The mapping taken before the swap still answers from the replaced file.
    CHECK(held->seed() == version);
    CHECK(Bytes(*held) == Bytes(Version<F>(version - 1)));
    CHECK(held->MayContainMany(KeysBelow(KeysIn(version - 1))) == KeysIn(version - 1));
    // And the next call finds nothing new.
    swapped = follower->Refresh();
    REQUIRE(swapped.ok());
    CHECK_FALSE(*swapped);
  }
  CHECK(follower->stamp() == *StampFile(path));
}

TEST_CASE("a bad replacement is refused and the old mapping kept") {
  TempDir dir;
  const std::string path = dir.File("seen.bloom");
  const BlockedFilter v0 = Version<BlockedFilter>(0);
  REQUIRE(v0.Save(path).ok());
  absl::StatusOr<MappedFollower<BlockedFilter>> follower =
      MappedFollower<BlockedFilter>::Open(path);
  REQUIRE(follower.ok());

  const auto check_kept = [&] {
    CHECK(follower->generation() == 0);
    CHECK(Bytes(*follower->current()) == Bytes(v0));
  };
  const absl::StatusOr<std::string> good = Version<BlockedFilter>(1).SaveToBytes();
  REQUIRE(good.ok());

  SUBCASE("a payload byte flipped: DataLoss, every call, without mapping it again") {
    std::string corrupt = *good;
    corrupt[corrupt.size() - 100] ^= 0x10;
    ReplaceWith(path, corrupt);
    for (int call = 0; call < 3; ++call) {
      const absl::StatusOr<bool> swapped = follower->Refresh();
      CHECK(absl::IsDataLoss(swapped.status()));
      CHECK(swapped.status().message().find(path) != std::string::npos);
      check_kept();
    }
    // The refused file is not read again while its stamp stands: mended in place with its
    // modification time put back, it is still refused; once its time moves, it is taken.
    struct stat before;
    REQUIRE(stat(path.c_str(), &before) == 0);
    {
      std::fstream mend(path, std::ios::binary | std::ios::in | std::ios::out);
      mend.seekp(static_cast<std::streamoff>(good->size() - 100));
      mend.put((*good)[good->size() - 100]);
      REQUIRE(mend.good());
    }
    const timespec times[2] = {before.st_atim, before.st_mtim};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    CHECK(absl::IsDataLoss(follower->Refresh().status()));
    check_kept();
    const timespec later[2] = {before.st_atim, {before.st_mtim.tv_sec + 1, before.st_mtim.tv_nsec}};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), later, 0) == 0);
    const absl::StatusOr<bool> mended = follower->Refresh();
    REQUIRE(mended.ok());
    CHECK(*mended);
    CHECK(follower->generation() == 1);
    CHECK(Bytes(*follower->current()) == Bytes(Version<BlockedFilter>(1)));
    // (The good file saved below is generation 2.)
  }
  SUBCASE("truncated: DataLoss") {
    ReplaceWith(path, good->substr(0, good->size() / 2));
    CHECK(absl::IsDataLoss(follower->Refresh().status()));
    check_kept();
  }
  SUBCASE("not a bloomery file: InvalidArgument") {
    ReplaceWith(path, std::string(4096, 'x'));
    CHECK(absl::IsInvalidArgument(follower->Refresh().status()));
    check_kept();
  }
  SUBCASE("another kind: FailedPrecondition") {
    REQUIRE(Version<ClassicFilter>(1).Save(path).ok());
    CHECK(absl::IsFailedPrecondition(follower->Refresh().status()));
    check_kept();
  }
  SUBCASE("the path removed: NotFound; a directory: FailedPrecondition") {
    REQUIRE(std::remove(path.c_str()) == 0);
    CHECK(absl::IsNotFound(follower->Refresh().status()));
    check_kept();
    REQUIRE(fs::create_directory(path));
    CHECK(absl::IsFailedPrecondition(follower->Refresh().status()));
    check_kept();
    REQUIRE(fs::remove(path));
  }
  // Whatever was refused, a good file saved next is taken.
  REQUIRE(Version<BlockedFilter>(2).Save(path).ok());
  const absl::StatusOr<bool> swapped = follower->Refresh();
  REQUIRE(swapped.ok());
  CHECK(*swapped);
  CHECK(follower->generation() >= 1);
  CHECK(follower->current()->seed() == 3);
}

TEST_CASE("Open's errors are Map's and StampFile's") {
  TempDir dir;
  CHECK(absl::IsNotFound(MappedFollower<BlockedFilter>::Open(dir.File("absent")).status()));
  const std::string sub = dir.File("sub");
  REQUIRE(fs::create_directory(sub));
  CHECK(absl::IsFailedPrecondition(MappedFollower<BlockedFilter>::Open(sub).status()));
  CHECK(absl::IsFailedPrecondition(StampFile(sub).status()));
  const std::string classic = dir.File("classic.bloom");
  REQUIRE(Version<ClassicFilter>(0).Save(classic).ok());
  CHECK(absl::IsFailedPrecondition(MappedFollower<BlockedFilter>::Open(classic).status()));
}

TEST_CASE("threads refreshing and looking up while the file is replaced" *
          doctest::test_suite("concurrency")) {
  TempDir dir;
  const std::string path = dir.File("seen.bloom");
  REQUIRE(Version<BlockedFilter>(0).Save(path).ok());
  absl::StatusOr<MappedFollower<BlockedFilter>> follower =
      MappedFollower<BlockedFilter>::Open(path);
  REQUIRE(follower.ok());
  constexpr uint64_t kThreadVersions = 6;
  std::atomic<bool> done{false};
  std::atomic<uint64_t> misses{0}, errors{0}, lookups{0}, stale{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      testing::SplitMix64 random(t);
      for (;;) {
        const bool last = done.load(std::memory_order_acquire);
        if (!follower->Refresh().ok()) errors.fetch_add(1);
        const std::shared_ptr<const BlockedFilter> held = follower->current();
        const uint64_t keys = KeysIn(held->seed() - 1);
        for (int i = 0; i < 1000; ++i) {
          if (!held->MayContain(random.Next() % keys)) misses.fetch_add(1);
        }
        lookups.fetch_add(1000);
        if (last) {
          // This Refresh started after the last rename.
          if (held->seed() != kThreadVersions + 1) stale.fetch_add(1);
          break;
        }
      }
    });
  }
  for (uint64_t version = 1; version <= kThreadVersions; ++version) {
    REQUIRE(Version<BlockedFilter>(version).Save(path).ok());
  }
  done.store(true, std::memory_order_release);
  for (std::thread& reader : readers) reader.join();
  CHECK(misses.load() == 0);
  CHECK(errors.load() == 0);
  CHECK(stale.load() == 0);
  CHECK(lookups.load() > 0);
}

// ---- Across processes: one writer (this process), kReaders forked readers.

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

constexpr int kReaders = 3;
constexpr uint64_t kVersions = 8;

// Shared by the writer and its readers (an anonymous MAP_SHARED page made before fork).
struct Shared {
  std::atomic<int> ready{0};             // readers that opened their follower
  std::atomic<bool> writer_done{false};  // set after the last Save returned
  struct Reader {
    std::atomic<uint64_t> lookups{0};
    std::atomic<uint64_t> false_negatives{0};
    std::atomic<uint64_t> failed_refreshes{0};
    std::atomic<uint64_t> went_back{0};     // a version older than one held before
    std::atomic<uint64_t> stale_at_end{0};  // a Refresh after writer_done did not give the last
    std::atomic<int64_t> first_seen_ns[kVersions + 1] = {};
    std::atomic<int> exit_code{-1};
  } readers[kReaders];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free &&
              std::atomic<int64_t>::is_always_lock_free);

// A reader: Refresh, then a batch of lookups of keys of the version held (and of the mapping held
// over from the previous batch, which may be a replaced file), until it has seen the writer done.
int ReadUntilDone(const std::string& path, Shared& shared, int index) {
  Shared::Reader& me = shared.readers[index];
  absl::StatusOr<MappedFollower<BlockedFilter>> follower =
      MappedFollower<BlockedFilter>::Open(path);
  if (!follower.ok()) return 2;
  shared.ready.fetch_add(1);
  testing::SplitMix64 random(index + 100);
  std::shared_ptr<const BlockedFilter> previous;
  uint64_t newest = 0;
  const int64_t deadline = MonotonicNs() + int64_t{60} * 1'000'000'000;
  while (MonotonicNs() < deadline) {
    const bool writer_done = shared.writer_done.load(std::memory_order_acquire);
    if (!follower->Refresh().ok()) me.failed_refreshes.fetch_add(1);
    std::shared_ptr<const BlockedFilter> held = follower->current();
    const uint64_t version = held->seed() - 1;
    if (version < newest) me.went_back.fetch_add(1);
    if (me.first_seen_ns[version].load() == 0) me.first_seen_ns[version].store(MonotonicNs());
    newest = std::max(newest, version);
    for (const BlockedFilter* filter : {held.get(), previous.get()}) {
      if (filter == nullptr) continue;
      const uint64_t keys = KeysIn(filter->seed() - 1);
      uint64_t missed = 0;
      for (int i = 0; i < 2000; ++i) missed += !filter->MayContain(random.Next() % keys);
      me.false_negatives.fetch_add(missed);
      me.lookups.fetch_add(2000);
    }
    previous = std::move(held);
    if (writer_done) {
      if (version != kVersions) me.stale_at_end.fetch_add(1);
      return 0;
    }
  }
  return 3;  // the writer never finished
}

TEST_CASE("readers in other processes follow a writer's replacements") {
  TempDir dir;
  const std::string path = dir.File("seen.bloom");
  REQUIRE(Version<BlockedFilter>(0).Save(path).ok());
  void* page =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(page != MAP_FAILED);
  Shared& shared = *new (page) Shared();

  std::vector<pid_t> pids;
  for (int r = 0; r < kReaders; ++r) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) _exit(ReadUntilDone(path, shared, r));
    pids.push_back(pid);
  }
  const int64_t wait_until = MonotonicNs() + int64_t{30} * 1'000'000'000;
  while (shared.ready.load() < kReaders && MonotonicNs() < wait_until) usleep(1000);
  REQUIRE(shared.ready.load() == kReaders);

  // Each version built first, then saved: Save's return is after its rename.
  int64_t saved_ns[kVersions + 1] = {};
  for (uint64_t version = 1; version <= kVersions; ++version) {
    const BlockedFilter next = Version<BlockedFilter>(version);
    REQUIRE(next.Save(path).ok());
    saved_ns[version] = MonotonicNs();
    usleep(20'000);  // let the readers look up in this version a while
  }
  shared.writer_done.store(true, std::memory_order_release);

  for (int r = 0; r < kReaders; ++r) {
    int status = 0;
    REQUIRE(waitpid(pids[r], &status, 0) == pids[r]);
    INFO("reader " << r);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  int64_t worst_latency_ns = 0;
  uint64_t lookups = 0;
  for (int r = 0; r < kReaders; ++r) {
    const Shared::Reader& reader = shared.readers[r];
    INFO("reader " << r);
    CHECK(reader.false_negatives.load() == 0);
    CHECK(reader.failed_refreshes.load() == 0);
    CHECK(reader.went_back.load() == 0);
    CHECK(reader.stale_at_end.load() == 0);
    CHECK(reader.first_seen_ns[kVersions].load() != 0);
    lookups += reader.lookups.load();
    for (uint64_t version = 1; version <= kVersions; ++version) {
      const int64_t seen = reader.first_seen_ns[version].load();
      if (seen != 0) worst_latency_ns = std::max(worst_latency_ns, seen - saved_ns[version]);
    }
  }
  MESSAGE(kReaders << " readers, " << kVersions << " replacements, " << lookups
                   << " lookups; a reader first held a new file at most " << worst_latency_ns / 1000
                   << " us after its Save returned");
  shared.~Shared();
  munmap(page, sizeof(Shared));
}

}  // namespace
}  // namespace bloomery
