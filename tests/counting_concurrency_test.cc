// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// CountingFilter under concurrent inserts, erases and lookups (the races every kind shares, merges
// included: concurrency_test.cc); run under ThreadSanitizer in CI ("concurrency" suite).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "bloomery/counting_filter.h"
#include "test_util.h"

namespace bloomery {
namespace {

constexpr int kThreads = 4;
constexpr uint64_t kKeysPerThread = 20'000;

// Thread t owns keys t, t + kThreads, ...: it inserts each of them 3 times (two of them in a batch,
// racing with its own erases of earlier keys and with the other threads, whose keys share lines and
// words with its own), then erases every key whose index is odd twice and every multiple of 3
// three times. Survivors: keys with multiplicity > 0 at the end.
int FinalMultiplicity(uint64_t index) {
  int m = 3;
  if (index % 2 == 1) m -= 2;
  if (index % 3 == 0) m = 0;
  return m;
}

void Work(CountingFilter& f, int t, std::atomic<uint64_t>& wrong_answers) {
  std::vector<uint64_t> batch;
  for (uint64_t index = 0; index < kKeysPerThread; ++index) {
    const uint64_t key = index * kThreads + t;
    f.Insert(key);
    batch.push_back(key);
    batch.push_back(key);
    if (batch.size() == 64) {
      f.InsertMany(std::span<const uint64_t>(batch));
      batch.clear();
    }
    if (!f.MayContain(key)) ++wrong_answers;
    // Erase an earlier key of this thread (its inserts have all returned by now).
    if (index >= 64) {
      const uint64_t old_index = index - 64;
      const uint64_t old = old_index * kThreads + t;
      const int erases = 3 - FinalMultiplicity(old_index);
      for (int e = 0; e < erases; ++e) {
        if (f.Erase(old) != EraseResult::kErased) ++wrong_answers;
      }
    }
  }
  f.InsertMany(std::span<const uint64_t>(batch));
  for (uint64_t index = kKeysPerThread - 64; index < kKeysPerThread; ++index) {
    const uint64_t key = index * kThreads + t;
    for (int e = 0; e < 3 - FinalMultiplicity(index); ++e) {
      if (f.Erase(key) != EraseResult::kErased) ++wrong_answers;
    }
  }
}

TEST_CASE("concurrent inserts and erases of disjoint key sets: every survivor is present" *
          doctest::test_suite("concurrency")) {
  // The replay below needs no counter to saturate, while every key is held 3 times. 4-bit: 256
  // counters per key, so the 5 keys needed on one counter to reach 15 essentially never meet
  // (expected ~1e-4 such counters). 8-bit: one counter per key, so every counter is shared by
  // ~4 keys of different threads (the CAS loops really contend) and stays far below 255.
  for (uint32_t counter_bits : {4u, 8u}) {
    CAPTURE(counter_bits);
    CountingOptions o;
    o.capacity = kThreads * kKeysPerThread;
    o.bits = o.capacity * (counter_bits == 4 ? 1024 : 8);
    o.hashes = 4;
    o.counter_bits = counter_bits;
    o.memory.concurrent = true;
    absl::StatusOr<CountingFilter> f = CountingFilter::Create(o);
    REQUIRE(f.ok());
    std::atomic<uint64_t> wrong_answers{0};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { Work(*f, t, wrong_answers); });
    }
    for (std::thread& th : threads) th.join();
    CHECK(wrong_answers.load() == 0);

    // The same operations replayed by one thread in single-writer mode: without saturation every
    // counter is a sum of +1s and -1s, so a lost or torn update would show as a different byte.
    o.memory.concurrent = false;
    absl::StatusOr<CountingFilter> replay = CountingFilter::Create(o);
    REQUIRE(replay.ok());
    uint64_t survivors = 0;
    for (int t = 0; t < kThreads; ++t) {
      for (uint64_t index = 0; index < kKeysPerThread; ++index) {
        const uint64_t key = index * kThreads + t;
        const int m = FinalMultiplicity(index);
        for (int i = 0; i < m; ++i) replay->Insert(key);
        if (m > 0) {
          ++survivors;
          REQUIRE(f->MayContain(key));
          REQUIRE(f->Count(key) >= static_cast<uint32_t>(m));
        }
      }
    }
    REQUIRE(f->saturated_counters() == 0);
    CHECK(std::ranges::equal(f->bytes(), replay->bytes()));
    CHECK(f->EstimatedCount() == replay->EstimatedCount());
    MESSAGE("survivors " << survivors << ", estimated count " << f->EstimatedCount());
  }
}

}  // namespace
}  // namespace bloomery
