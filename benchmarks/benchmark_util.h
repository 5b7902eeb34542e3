// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// benchmark_util.h: what every benchmark family of bloomery_benchmark shares: the 10 bits/key
// sizing, key and line-index streams, filled filters built once per size, and the counters.
//
// Every family takes the number of keys a filter holds (its capacity) as its argument and
// processes keys in chunks of kChunk per benchmark iteration, so items_per_second counts keys.
// Lookup keys come from precomputed streams of kStreamKeys keys (32 MiB each, read sequentially,
// which the hardware prefetcher hides): 4 Mi random lines is far more than any cache holds, so a
// lookup out of cache really misses, and the key generation is not part of what is measured.
#ifndef BLOOMERY_BENCHMARKS_BENCHMARK_UTIL_H_
#define BLOOMERY_BENCHMARKS_BENCHMARK_UTIL_H_

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "bloomery/blocked_filter.h"
#include "bloomery/options.h"
#include "memory_floor.h"
#include "timing.h"

namespace bloomery::bench {

// Keys per benchmark iteration: long enough that the loop's own cost vanishes, short enough that
// the chunk stays in L1.
inline constexpr size_t kChunk = 4096;
inline constexpr size_t kStreamKeys = size_t{1} << 22;
// Filled filters hold keys 0 .. n-1; absent keys have the top bit set, so they never collide.
inline constexpr uint64_t kAbsentBit = uint64_t{1} << 63;

// The two sizes every family runs: in L2-ish (1 Mi keys, 1.3 MB) and far out of cache (128 Mi
// keys, ~170 MB).
inline void SizeArgs(benchmark::internal::Benchmark* b) { b->Arg(1 << 20)->Arg(1 << 27); }
inline constexpr int64_t kSizes[] = {int64_t{1} << 20, int64_t{1} << 27};

[[noreturn]] inline void Die(const char* what) {
  std::fprintf(stderr, "bloomery_benchmark: %s\n", what);
  std::abort();
}

// Aborts with the status: a benchmark cannot continue without its filter.
template <typename T>
T ValueOrDie(absl::StatusOr<T> value) {
  if (!value.ok()) Die(std::string(value.status().ToString()).c_str());
  return *std::move(value);
}

// The key and line streams' generator and the 10 bits/key sizing, shared with the floor and
// `bloomery bench` (timing.h).
using measure::FastRange;
using measure::kBitsPerKey;
using measure::Mix;
using measure::OptionsFor;
// OptionsFor with the filter's integer hash chosen.
inline FilterOptions OptionsFor(uint64_t n, bool concurrent, IntegerHash integers) {
  FilterOptions options = measure::OptionsFor(n, concurrent);
  options.hashing.integer_hash = integers;
  return options;
}

// Values built once per argument and kept for the whole run (the families share them, and Google
// Benchmark calls a family several times while it calibrates the iteration count).
template <typename T, typename Make>
T& Cached(uint64_t arg, const Make& make) {
  static std::mutex mutex;
  static std::map<uint64_t, std::unique_ptr<T>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<T>& slot = cache[arg];
  if (slot == nullptr) slot = std::make_unique<T>(make());
  return *slot;
}

// An allocator for what is measured beside our filters (a peer's array, BM_ProbeShape's lines): 2
// MiB-aligned, advised for transparent huge pages and faulted in (zeroed) when allocated, as a
// filter's memory is, so neither side pays TLB misses the other does not.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>& /*other*/) {}  // NOLINT: rebinding
  T* allocate(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t bytes = (n * sizeof(T) + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE);
    std::memset(p, 0, bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t /*n*/) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>& /*other*/) const {
    return true;
  }
};

// kStreamKeys keys never inserted anywhere.
inline const std::vector<uint64_t>& AbsentKeys() {
  return Cached<std::vector<uint64_t>>(0, [] {
    std::vector<uint64_t> keys(kStreamKeys);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = Mix(i) | kAbsentBit;
    return keys;
  });
}

// kStreamKeys random picks among the keys 0 .. n-1 of FilledFilter(n).
inline const std::vector<uint64_t>& PresentKeys(uint64_t n) {
  return Cached<std::vector<uint64_t>>(n, [n] {
    std::vector<uint64_t> keys(kStreamKeys);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = FastRange(Mix(i + (uint64_t{1} << 40)), n);
    return keys;
  });
}

// kStreamKeys random line indices below `lines`.
inline const std::vector<uint64_t>& RandomLines(uint64_t lines) {
  return Cached<std::vector<uint64_t>>(
      lines, [lines] { return measure::RandomLines(kStreamKeys, lines, uint64_t{2} << 40); });
}

// Keys 0 .. n-1 in chunks: what the insert benchmarks insert.
inline void FillSequential(uint64_t first, std::span<uint64_t> out) {
  for (size_t i = 0; i < out.size(); ++i) out[i] = first + i;
}

// A filter for n keys holding keys 0 .. n-1, built once (per integer hash, concurrency mode and
// layout); single-writer unless `concurrent`.
inline const BlockedFilter& FilledFilter(uint64_t n, IntegerHash integers = IntegerHash::kXxh3,
                                         bool concurrent = false, Layout layout = Layout::kLine512,
                                         Probe probe = Probe::kLatest) {
  const uint64_t id =
      n | uint64_t{static_cast<uint32_t>(integers)} << 60 | (concurrent ? uint64_t{1} << 62 : 0) |
      uint64_t{static_cast<uint8_t>(layout)} << 56 | uint64_t{static_cast<uint8_t>(probe)} << 52;
  return Cached<BlockedFilter>(id, [n, integers, concurrent, layout, probe] {
    FilterOptions options = OptionsFor(n, concurrent, integers);
    options.layout = layout;
    options.probe = probe;
    BlockedFilter filter = ValueOrDie(BlockedFilter::Create(options));
    std::vector<uint64_t> keys(kChunk);
    for (uint64_t first = 0; first < n; first += kChunk) {
      FillSequential(first, keys);
      filter.InsertMany(
          std::span<const uint64_t>(keys.data(), std::min<uint64_t>(kChunk, n - first)));
    }
    return filter;
  });
}

// Memory of FilledFilter(n)'s size for its floors (memory_floor.h), allocated once.
inline measure::FloorMemory& FloorFor(uint64_t n) {
  const uint64_t bytes = FilledFilter(n).memory_bytes();
  return Cached<measure::FloorMemory>(
      n, [bytes] { return ValueOrDie(measure::FloorMemory::Allocate(bytes)); });
}

// One lookup at a time: key i offset by the answer of key i - 1 (`lookup(key) -> bool`), so each
// waits for the last: the memory's latency. Returns the answers summed.
template <typename Lookup>
uint64_t ChainedLookups(std::span<const uint64_t> keys, const Lookup& lookup) {
  uint64_t count = 0;
  uint64_t last = 0;
  for (uint64_t key : keys) {
    last = lookup(key + last) ? 1 : 0;
    count += last;
  }
  return count;
}

// Walks a stream kChunk keys at a time, wrapping around; each thread starts at its own place.
class StreamCursor {
 public:
  StreamCursor(const std::vector<uint64_t>& stream, const benchmark::State& state)
      : stream_(stream),
        next_(static_cast<size_t>(state.thread_index()) * (kStreamKeys / 2) % kStreamKeys) {}
  std::span<const uint64_t> Next() {
    if (next_ + kChunk > stream_.size()) next_ = 0;
    const std::span<const uint64_t> chunk(stream_.data() + next_, kChunk);
    next_ += kChunk;
    return chunk;
  }

 private:
  const std::vector<uint64_t>& stream_;
  size_t next_;
};

// items = keys; bits_per_key of the structure measured; fpr where the keys were absent.
inline void ReportKeys(benchmark::State& state, uint64_t keys) {
  state.SetItemsProcessed(static_cast<int64_t>(keys));
}
inline void ReportBitsPerKey(benchmark::State& state, double bits, uint64_t capacity) {
  state.counters["bits_per_key"] =
      benchmark::Counter(bits / static_cast<double>(capacity), benchmark::Counter::kAvgThreads);
}
// Fraction of memory backed by transparent huge pages: with 4 KiB pages a random line out of
// cache costs a TLB miss too, and the floor and the filter must be compared on the same footing.
inline void ReportHugePages(benchmark::State& state, uint64_t huge_page_bytes, uint64_t bytes) {
  state.counters["huge_pages"] =
      benchmark::Counter(static_cast<double>(huge_page_bytes) / static_cast<double>(bytes),
                         benchmark::Counter::kAvgThreads);
}
inline void ReportFpr(benchmark::State& state, uint64_t positives, uint64_t lookups) {
  state.counters["fpr"] =
      benchmark::Counter(static_cast<double>(positives) / static_cast<double>(lookups),
                         benchmark::Counter::kAvgThreads);
}

// Fills a fresh filter with keys 0 .. n-1, kChunk keys per iteration, through `insert`.
template <typename Insert>
void FillOnce(benchmark::State& state, BlockedFilter& filter, uint64_t first,
              const Insert& insert) {
  std::vector<uint64_t> keys(kChunk);
  uint64_t added = 0;
  for (auto _ : state) {
    FillSequential(first, keys);
    first += kChunk;
    added += insert(filter, std::span<const uint64_t>(keys));
  }
  benchmark::DoNotOptimize(added);
  ReportKeys(state, state.iterations() * kChunk);
  ReportBitsPerKey(state, static_cast<double>(filter.bits()),
                   static_cast<uint64_t>(state.range(0)));
}

// Registers a fill family: `keys` inserts (n unless given) into a filter sized for n, n / kChunk
// iterations shared by the threads, wall-clock time.
inline void RegisterFill(const char* name, void (*fn)(benchmark::State&), int64_t n,
                         int threads = 1, int64_t keys = 0) {
  benchmark::RegisterBenchmark(name, fn)
      ->Arg(n)
      ->Iterations((keys != 0 ? keys : n) / static_cast<int64_t>(kChunk) / threads)
      ->Threads(threads)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

// URL-like string keys of kUrlMinBytes to kUrlMaxBytes bytes, the kind of key a crawler
// de-duplicates ("https://www.example-shop.org/catalog/.../h3f2a.io/AAAAAAAAAAB"): key i is a
// function of i alone, so inserted and absent keys are told apart by the top bit of i as for
// integer keys. Its last 20 bytes hold all of i (a host from Mix(i), then i in 11 base-64
// digits), so keys of different i differ; its length, 20 + Mix(i) % 81, spreads evenly over 20..100
// bytes (the bytes before are a prefix of one path, as long as the length asks), so hashes meet
// the lengths a real stream has rather than one a branch predictor learns.
inline constexpr size_t kUrlMinBytes = 20;
inline constexpr size_t kUrlMaxBytes = 100;
// The length of key i.
inline size_t UrlLength(uint64_t i) {
  return kUrlMinBytes + Mix(i) % (kUrlMaxBytes - kUrlMinBytes + 1);
}
// Writes key i at `out` (UrlLength(i) bytes of room) and returns its length.
inline size_t FormatUrl(uint64_t i, char* out) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  static constexpr char kHex[] = "0123456789abcdef";
  static constexpr char kPath[] =
      "https://www.example-shop.org/catalog/category/subcategory/products/items/detail/";
  static_assert(sizeof(kPath) - 1 == kUrlMaxBytes - kUrlMinBytes);
  const uint64_t mix = Mix(i);
  const size_t length = UrlLength(i);
  const size_t path = length - kUrlMinBytes;
  std::copy(kPath, kPath + path, out);
  char* core = out + path;  // "h" + 4 hex digits + ".io/" + 11 base-64 digits: 20 bytes
  core[0] = 'h';
  for (int d = 0; d < 4; ++d) core[1 + d] = kHex[(mix >> (60 - 4 * d)) & 15];
  std::copy_n(".io/", 4, core + 5);
  for (int d = 0; d < 11; ++d) core[9 + d] = kDigits[(i >> (60 - 6 * d)) & 63];
  return length;
}

// kChunk URL keys formatted in place; the views point into this object.
class UrlChunk {
 public:
  UrlChunk() : bytes_(kChunk * kUrlMaxBytes), views_(kChunk) {}
  std::span<const std::string_view> Fill(uint64_t first, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      char* key = bytes_.data() + i * kUrlMaxBytes;
      views_[i] = std::string_view(key, FormatUrl(first + i, key));
    }
    return {views_.data(), count};
  }

 private:
  std::vector<char> bytes_;
  std::vector<std::string_view> views_;
};

// A stream of absent URL keys, a quarter the length of the integer streams (the bytes of 1 Mi
// keys, 60 MiB on average, are already far beyond any cache), packed one after the other.
struct UrlStream {
  std::vector<char> bytes;
  std::vector<std::string_view> views;
};
inline const UrlStream& AbsentUrls() {
  return Cached<UrlStream>(0, [] {
    UrlStream s;
    const size_t count = kStreamKeys / 4;
    const auto key = [](size_t i) { return Mix(i) | kAbsentBit; };
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) total += UrlLength(key(i));
    s.bytes.resize(total);
    s.views.resize(count);
    size_t used = 0;
    for (size_t i = 0; i < count; ++i) {
      const size_t length = FormatUrl(key(i), s.bytes.data() + used);
      s.views[i] = std::string_view(s.bytes.data() + used, length);
      used += length;
    }
    return s;
  });
}

class UrlCursor {
 public:
  UrlCursor(const UrlStream& stream, const benchmark::State& state)
      : views_(stream.views),
        next_(static_cast<size_t>(state.thread_index()) * (views_.size() / 2) % views_.size()) {}
  std::span<const std::string_view> Next() {
    if (next_ + kChunk > views_.size()) next_ = 0;
    const std::span<const std::string_view> chunk(views_.data() + next_, kChunk);
    next_ += kChunk;
    return chunk;
  }

 private:
  const std::vector<std::string_view>& views_;
  size_t next_;
};

// Times `lookup(chunk)` (returning how many keys it found) over the chunks of `keys` (a
// StreamCursor or UrlCursor of absent keys) and reports keys and the FPR.
template <typename Cursor, typename Lookup>
void TimeLookups(benchmark::State& state, Cursor keys, const Lookup& lookup) {
  uint64_t found = 0;
  for (auto _ : state) found += lookup(keys.Next());
  ReportKeys(state, state.iterations() * kChunk);
  ReportFpr(state, found, state.iterations() * kChunk);
}

// Fills a filter with URL keys 0 .. iterations * kChunk, kChunk per iteration through `insert`;
// formatting the keys is not timed.
template <typename Insert>
void FillUrlsOnce(benchmark::State& state, const Insert& insert) {
  UrlChunk chunk;
  uint64_t first = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::span<const std::string_view> keys = chunk.Fill(first, kChunk);
    first += kChunk;
    state.ResumeTiming();
    insert(keys);
  }
  ReportKeys(state, state.iterations() * kChunk);
}

}  // namespace bloomery::bench

#endif  // BLOOMERY_BENCHMARKS_BENCHMARK_UTIL_H_
