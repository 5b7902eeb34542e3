// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// Concurrent inserts and lookups; run under ThreadSanitizer in CI ("concurrency" suite).
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "test_util.h"

namespace bloomery {
namespace {

constexpr int kThreads = 4;

TEST_CASE("concurrent inserts of overlapping key sets lose nothing" *
          doctest::test_suite("concurrency")) {
  FilterOptions o;
  o.capacity = 200'000;
  o.fpr = 1e-6;  // so that a key nobody was told is new would be a real lost insert, not an FP
  o.concurrent = true;
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(o);
  REQUIRE(f.ok());
  // Thread t inserts keys [t * 20000, t * 20000 + 80000): every key is inserted by 1..4 threads,
  // many at the same moment.
  constexpr uint64_t kPerThread = 80'000;
  constexpr uint64_t kStride = 20'000;
  constexpr uint64_t kDistinct = kStride * (kThreads - 1) + kPerThread;
  std::unique_ptr<std::atomic<int>[]> new_reports(new std::atomic<int>[kDistinct]);
  for (uint64_t i = 0; i < kDistinct; ++i) new_reports[i] = 0;
  // Lookups of a thread's own keys once their insert returned must all succeed; lookups of other
  // threads' keys race with their inserts and are only there to exercise that race (TSan).
  std::atomic<uint64_t> own_missing{0};
  std::atomic<uint64_t> racing_found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t first = t * kStride;
      std::vector<uint64_t> batch;
      for (uint64_t key = first; key < first + kPerThread; ++key) {
        if (key % 3 == 0) {
          batch.push_back(key);
          if (batch.size() == 64) {
            std::unique_ptr<bool[]> was_new(new bool[batch.size()]);
            f->InsertMany(std::span<const uint64_t>(batch), std::span<bool>(was_new.get(), 64));
            for (size_t i = 0; i < batch.size(); ++i) {
              new_reports[batch[i]] += was_new[i];
              own_missing += !f->MayContain(batch[i]);
            }
            batch.clear();
          }
        } else {
          new_reports[key] += f->Insert(key);
          own_missing += !f->MayContain(key);
        }
        racing_found += f->MayContain(key + kStride);
      }
      for (uint64_t key : batch) {
        new_reports[key] += f->Insert(key);
        own_missing += !f->MayContain(key);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(own_missing.load() == 0);  // a key is found once its own insert returned
  MESSAGE("racing lookups that found another thread's key: " << racing_found.load());
  uint64_t missing = 0;
  uint64_t nobody_told_new = 0;
  for (uint64_t key = 0; key < kDistinct; ++key) {
    missing += !f->MayContain(key);
    nobody_told_new += new_reports[key].load() == 0;
  }
  CHECK(missing == 0);
  // At least one of the racing inserters of a new key is told "new" (fpr 1e-6: no false positives
  // expected among 140,000 keys).
  CHECK(nobody_told_new == 0);
  CHECK(f->EstimatedCount() == doctest::Approx(static_cast<double>(kDistinct)).epsilon(0.02));
}

TEST_CASE("concurrent UnionWith while inserting loses nothing" *
          doctest::test_suite("concurrency")) {
  FilterOptions o;
  o.capacity = 100'000;
  o.fpr = 0.001;
  o.concurrent = true;
  absl::StatusOr<BlockedFilter> target = BlockedFilter::Create(o);
  absl::StatusOr<BlockedFilter> source = BlockedFilter::Create(o);
  REQUIRE(target.ok());
  REQUIRE(source.ok());
  source->InsertMany(std::span<const uint64_t>(testing::DistinctInts(40'000, 1)));
  std::thread inserter([&] {
    for (uint64_t key = 0; key < 80'000; key += 2) target->Insert(key);
  });
  REQUIRE(target->UnionWith(*source).ok());
  inserter.join();
  for (uint64_t key = 0; key < 80'000; ++key) REQUIRE(target->MayContain(key));
}

}  // namespace
}  // namespace bloomery
