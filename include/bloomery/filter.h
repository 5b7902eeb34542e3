// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// filter.h: the vocabulary every filter kind speaks, named so the compiler checks it.
//
// `Filter<F>` is what generic code may rely on for any kind (BlockedFilter, ClassicFilter,
// CountingFilter, ScalableFilter, and whatever comes next): Create from its options, Insert and
// MayContain for the three key types, their batch forms, UnionWith with CheckCompatible,
// EstimatedCount, EstimatedFpr, Clear, Save and Load (to a file or to bytes), memory_bytes, seed
// and concurrent. `MappableFilter<F>` adds Map and Flush (the kinds stored as one fixed-size
// stage). tests/filter_test.cc asserts that every kind satisfies them.
//
// What differs between kinds is said honestly rather than papered over: Insert answers "was it
// new?" as a bool for kinds that never refuse a key, and as an InsertResult for kinds that can
// (ScalableFilter at a limit); `InsertAnswer<F>` names which.
//
//   template <bloomery::Filter F>
//   size_t AddAll(F& filter, std::span<const std::string_view> keys) {
//     return filter.MayContainMany(keys);  // ... or anything else the concept names
//   }
#ifndef BLOOMERY_FILTER_H_
#define BLOOMERY_FILTER_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/key.h"
#include "bloomery/options.h"

namespace bloomery {

// The memory a filter's bits live in: its own anonymous pages (transparent huge pages where the
// kernel grants them) or a mapped file (Map), released with the filter. Opaque and move-only: how
// the memory was obtained stays inside the library. The filter keeps the data pointer beside the
// owner, so the hot path never reaches through it.
class FilterMemory {
 public:
  struct Owner;  // defined by the library

  FilterMemory() noexcept;
  FilterMemory(std::unique_ptr<Owner> owner, uint8_t* data, uint64_t size) noexcept;
  FilterMemory(FilterMemory&& other) noexcept;
  FilterMemory& operator=(FilterMemory&& other) noexcept;
  ~FilterMemory();

  // The first byte, 64-byte aligned (2 MiB aligned for own memory of 2 MiB or more).
  [[nodiscard]] uint8_t* data() const noexcept { return data_; }
  [[nodiscard]] uint64_t* words() const noexcept { return reinterpret_cast<uint64_t*>(data_); }
  [[nodiscard]] uint64_t size() const noexcept { return size_; }
  // Bytes backed by transparent huge pages now, read from /proc/self/smaps (0 if unavailable).
  // Pages are backed on first touch, so ask after the filter has been filled. Cost: one read of
  // /proc/self/smaps, O(number of mappings in the process).
  [[nodiscard]] uint64_t HugePageBytes() const;
  // Whether the bits are a mapped file rather than the filter's own memory.
  [[nodiscard]] bool mapped() const noexcept;
  [[nodiscard]] const Owner* owner() const noexcept { return owner_.get(); }

 private:
  std::unique_ptr<Owner> owner_;
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// What happened to a key given to an Insert that may refuse it (ScalableFilter).
enum class InsertResult : uint8_t {
  kPresent = 0,  // the filter already reported it present (a duplicate or a false positive)
  kAdded = 1,    // it was new and is now in the filter
  kRefused = 2,  // it was new and was NOT added: the filter is full (see its FullStatus())
};

// Totals of an InsertMany call on such a filter; the remaining keys were kPresent.
struct InsertCounts {
  size_t added = 0;
  size_t refused = 0;
};

// The key types every filter accepts: bytes, an integer (its 8 little-endian bytes), or a
// KeyHash computed by the caller.
template <typename T>
concept FilterKey =
    std::same_as<T, std::string_view> || std::same_as<T, uint64_t> || std::same_as<T, KeyHash>;

// A contiguous run of keys of one FilterKey type (a span, vector or array, const or not): what the
// batch forms take.
template <typename R>
concept KeyRange = std::ranges::contiguous_range<const R> && std::ranges::sized_range<const R> &&
    FilterKey<std::remove_cv_t<std::ranges::range_value_t<const R>>>;

// The keys of a KeyRange as the span the filters' batch loops are compiled for.
template <KeyRange R>
[[nodiscard]] std::span<const std::remove_cv_t<std::ranges::range_value_t<const R>>> KeySpan(
    const R& keys) noexcept {
  return {std::ranges::data(keys), std::ranges::size(keys)};
}

// The key forms, written once for every kind. A kind derives from BatchForms<Kind> (CRTP),
// befriends it, and brings its single-key forms in with `using BatchForms::Insert;` and `using
// BatchForms::MayContain;`. `InsertAnswer` is what one Insert returns (bool, or InsertResult).
//
// Single keys: Insert and MayContain of a std::string_view or a uint64_t hash the key with the
// filter's seed() (key.h) and call the kind's own Insert / MayContain of a `const KeyHash&`. They
// are always_inline because that call may be (BlockedFilter's inline AVX2 probe): its body depends
// on the caller's target, so no out-of-line copy of a form may be shared between callers.
//
// Batches: `InsertMany(keys, answers)` and `MayContainMany(keys, results)` for any KeyRange,
// forwarded to the kind's InsertKeys and LookupKeys templates, which its .cc instantiates for each
// FilterKey (so the loops stay out of the headers). Contract of every kind's batch forms: the same
// answers as the single-key calls in order (a key repeated within one batch is new only the first
// time), but hashed, located and prefetched many at a time, which hides memory latency: use them
// whenever keys come in groups. `answers` / `results`, if not empty, receive one answer per key
// (only the first min(keys, answers) are written). The return value counts the keys that were new
// (InsertMany; InsertCounts for kinds that may refuse keys) or may be present (MayContainMany).
template <typename Kind, typename InsertAnswer = bool>
class BatchForms {
 public:
  [[gnu::always_inline]] InsertAnswer Insert(std::string_view key) noexcept {
    return self().Insert(HashKey(key, self().seed()));
  }
  [[gnu::always_inline]] InsertAnswer Insert(uint64_t key) noexcept {
    return self().Insert(HashKey(key, self().seed()));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(std::string_view key) const noexcept {
    return self().MayContain(HashKey(key, self().seed()));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(uint64_t key) const noexcept {
    return self().MayContain(HashKey(key, self().seed()));
  }

  template <KeyRange Keys>
  auto InsertMany(const Keys& keys, std::span<InsertAnswer> answers = {}) noexcept {
    return self().InsertKeys(KeySpan(keys), answers);
  }
  template <KeyRange Keys>
  size_t MayContainMany(const Keys& keys, std::span<bool> results = {}) const noexcept {
    return self().LookupKeys(KeySpan(keys), results);
  }

 private:
  Kind& self() noexcept { return static_cast<Kind&>(*this); }
  const Kind& self() const noexcept { return static_cast<const Kind&>(*this); }
};

// What the kinds kept in one array of 64-bit words share: the memory (their own or a mapped
// file), a cached pointer to its words (the hot path reads it from the filter object, never
// through the owner), the seed and the concurrency mode, and their accessors. Move-only.
class WordArray {
 public:
  [[nodiscard]] uint64_t seed() const noexcept { return seed_; }
  [[nodiscard]] bool concurrent() const noexcept { return concurrent_; }
  [[nodiscard]] uint64_t memory_bytes() const noexcept { return memory_.size(); }
  // Bytes backed by transparent huge pages (FilterMemory::HugePageBytes; ask after filling).
  [[nodiscard]] uint64_t huge_page_bytes() const { return memory_.HugePageBytes(); }
  // Whether the words are a mapped file (Map) rather than the filter's own memory.
  [[nodiscard]] bool mapped() const noexcept { return memory_.mapped(); }
  // The words, little-endian, in whole 64-byte lines (the kind's header says what they hold;
  // padding past its bits is 0). Reading them while another thread writes is a data race; take
  // them when writers are quiet.
  [[nodiscard]] std::span<const uint8_t> bytes() const noexcept {
    return {memory_.data(), memory_.size()};
  }

 protected:
  WordArray(FilterMemory memory, uint64_t seed, bool concurrent) noexcept
      : memory_(std::move(memory)), words_(memory_.words()), seed_(seed), concurrent_(concurrent) {}

  FilterMemory memory_;
  uint64_t* words_ = nullptr;
  uint64_t seed_ = kDefaultSeed;
  bool concurrent_ = false;
};

// What F::Insert returns: bool ("was new") or InsertResult.
template <typename F>
using InsertAnswer = decltype(std::declval<F&>().Insert(KeyHash{}));

// The vocabulary of every filter kind. (clang-format 14 cannot lay out `{ e } noexcept -> C;`.)
// clang-format off
template <typename F>
concept Filter =
    std::movable<F> && !std::copy_constructible<F> &&
    (std::same_as<InsertAnswer<F>, bool> || std::same_as<InsertAnswer<F>, InsertResult>) &&
    requires(F& f, const F& cf, std::string_view s, uint64_t u, KeyHash h,
             std::span<const std::string_view> ss, std::span<const uint64_t> us,
             std::span<const KeyHash> hs, std::span<bool> out, std::span<InsertAnswer<F>> answers,
             const std::string& path, const LoadOptions& load) {
      // Sizing: every kind is created from one options struct and sized by the planner.
      typename F::Options;
      { F::Create(std::declval<const typename F::Options&>()) } -> std::same_as<absl::StatusOr<F>>;
      // Single keys.
      { f.Insert(s) } -> std::same_as<InsertAnswer<F>>;
      { f.Insert(u) } -> std::same_as<InsertAnswer<F>>;
      { cf.MayContain(s) } noexcept -> std::same_as<bool>;
      { cf.MayContain(u) } noexcept -> std::same_as<bool>;
      { cf.MayContain(h) } noexcept -> std::same_as<bool>;
      // Batches, for each key type.
      f.InsertMany(ss, answers);
      f.InsertMany(us, answers);
      f.InsertMany(hs, answers);
      { cf.MayContainMany(ss, out) } noexcept -> std::same_as<size_t>;
      { cf.MayContainMany(us, out) } noexcept -> std::same_as<size_t>;
      { cf.MayContainMany(hs, out) } noexcept -> std::same_as<size_t>;
      // Merging.
      { cf.CheckCompatible(cf) } -> std::same_as<absl::Status>;
      { f.UnionWith(cf) } -> std::same_as<absl::Status>;
      // What it holds.
      { cf.EstimatedCount() } noexcept -> std::same_as<double>;
      { cf.EstimatedFpr() } noexcept -> std::same_as<double>;
      { f.Clear() } noexcept;
      { cf.memory_bytes() } noexcept -> std::same_as<uint64_t>;
      { cf.seed() } noexcept -> std::same_as<uint64_t>;
      { cf.concurrent() } noexcept -> std::same_as<bool>;
      // Persistence (docs/FORMAT.md), to a file or to bytes.
      { cf.Save(path) } -> std::same_as<absl::Status>;
      { F::Load(path, load) } -> std::same_as<absl::StatusOr<F>>;
      { cf.SaveToBytes() } -> std::same_as<absl::StatusOr<std::string>>;
      { F::LoadFromBytes(s, load) } -> std::same_as<absl::StatusOr<F>>;
    };
// clang-format on

// A filter stored as one fixed-size array, which can be used in place from a file mapping.
template <typename F>
concept MappableFilter = Filter<F> && requires(F& f, const std::string& path, MapMode mode) {
  { F::Map(path, mode) } -> std::same_as<absl::StatusOr<F>>;
  { f.Flush() } -> std::same_as<absl::Status>;
};

}  // namespace bloomery

#endif  // BLOOMERY_FILTER_H_
