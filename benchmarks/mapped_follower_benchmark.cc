// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// mapped_follower_benchmark.cc: what following a replaced file costs a mapped reader
// (bloomery/mapped_follower.h). BM_MappedFollowerRefresh: Refresh() when the file did not change,
// the call a reader makes per request batch (one stat(2) and one atomic load); BM_StatFile: the
// stat(2) alone, for comparison. BM_MappedFollowerCurrent: taking the mapping for a batch.
// BM_MappedFollowerSwap/<keys>: Refresh() when the path names a new file of a filter planned for
// <keys> keys at 1%: mapping it and verifying its checksums, the wait between a writer's rename and
// the first lookup answered from the new file.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "bloomery/blocked_filter.h"
#include "bloomery/mapped_follower.h"

namespace bloomery {
namespace {

// A directory holding a saved filter of `keys` keys (planned for them at 1%), removed at the end.
class SavedFilter {
 public:
  explicit SavedFilter(uint64_t keys) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "bloomery_bench_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir_ = pattern;
    absl::StatusOr<BlockedFilter> f = BlockedFilter::Create({.capacity = keys, .fpr = 0.01});
    if (!f.ok()) std::abort();
    for (uint64_t key = 0; key < keys; ++key) (void)f->Insert(key);
    if (!f->Save(path()).ok() || !f->Save(copy()).ok()) std::abort();
  }
  ~SavedFilter() { std::filesystem::remove_all(dir_); }
  SavedFilter(const SavedFilter&) = delete;
  SavedFilter& operator=(const SavedFilter&) = delete;

  std::string path() const { return dir_ + "/seen.bloom"; }
  // A second file with the same contents, copied to replace path().
  std::string copy() const { return dir_ + "/copy.bloom"; }

  // Replaces path() by a new file (a new inode) holding the same filter, as Save does: a complete
  // file renamed over it.
  void Replace() const {
    const std::string temp = dir_ + "/temp.bloom";
    std::filesystem::copy_file(copy(), temp, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::rename(temp, path());
  }

 private:
  std::string dir_;
};

MappedFollower<BlockedFilter> Follow(const SavedFilter& saved) {
  absl::StatusOr<MappedFollower<BlockedFilter>> follower =
      MappedFollower<BlockedFilter>::Open(saved.path());
  if (!follower.ok()) std::abort();
  return *std::move(follower);
}

void BM_MappedFollowerRefresh(benchmark::State& state) {
  const SavedFilter saved(1'000'000);
  MappedFollower<BlockedFilter> follower = Follow(saved);
  for (auto _ : state) {
    absl::StatusOr<bool> swapped = follower.Refresh();
    benchmark::DoNotOptimize(swapped);
  }
}
BENCHMARK(BM_MappedFollowerRefresh);

void BM_StatFile(benchmark::State& state) {
  const SavedFilter saved(1'000'000);
  for (auto _ : state) {
    absl::StatusOr<FileStamp> stamp = StampFile(saved.path());
    benchmark::DoNotOptimize(stamp);
  }
}
BENCHMARK(BM_StatFile);

void BM_MappedFollowerCurrent(benchmark::State& state) {
  const SavedFilter saved(1'000'000);
  MappedFollower<BlockedFilter> follower = Follow(saved);
  for (auto _ : state) {
    std::shared_ptr<const BlockedFilter> filter = follower.current();
    benchmark::DoNotOptimize(filter);
  }
}
BENCHMARK(BM_MappedFollowerCurrent);

void BM_MappedFollowerSwap(benchmark::State& state) {
  const SavedFilter saved(static_cast<uint64_t>(state.range(0)));
  MappedFollower<BlockedFilter> follower = Follow(saved);
  for (auto _ : state) {
    state.PauseTiming();
    saved.Replace();
    state.ResumeTiming();
    absl::StatusOr<bool> swapped = follower.Refresh();
    if (!swapped.ok() || !*swapped) state.SkipWithError("Refresh did not swap");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(follower.current()->memory_bytes()));
}
BENCHMARK(BM_MappedFollowerSwap)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace bloomery
