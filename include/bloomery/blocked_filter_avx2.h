// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// blocked_filter_avx2.h: BlockedFilter's single-key Insert and MayContain with the line probe
// inlined into the caller, for source files compiled for AVX2 (-mavx2, -march=x86-64-v3, or
// -march=native on such a machine). An explicit opt-in: include it only in files built with
// those flags (it stops with #error elsewhere), and call `avx2::Insert(filter, key)` /
// `avx2::MayContain(filter, key)` where the file would call `filter.Insert(key)` /
// `filter.MayContain(key)`. Same answers and the same bits as those calls, which remain the
// portable ones: a program that runs on CPUs without AVX2 keeps this header out of every file
// that may run there.
//
// Why inline: out of cache a single lookup is one DRAM miss, and independent lookups in a
// caller's loop overlap only as far as the core's out-of-order window holds them, so the
// instructions per lookup set its speed. The filter's own calls reach the SIMD kernels chosen at
// run time (a call and an indirect call per key); this probe is ~30 instructions (line index,
// mask, test) with no call and no branch. A scalar inline probe (k multiply-shift-load-test
// rounds, ~80 instructions with the hash) measured slower than the dispatched kernel, so callers
// compiled without AVX2 keep the kernel. Figures: benchmarks/README.md.
//
// Why a header of its own: BlockedFilter's header used to switch these bodies on `__AVX2__`, so
// files built with different flags saw different definitions of one inline function. Here the
// names differ instead, every definition is the same in every file that may include it, and the
// functions are always_inline, so no out-of-line copy compiled for one file's ISA extensions is
// shared with another's.
//
// Example (a file compiled with -march=x86-64-v3):
//   #include "bloomery/blocked_filter_avx2.h"
//   size_t found = 0;
//   for (uint64_t key : keys) found += bloomery::avx2::MayContain(filter, key);
//
// Every layout (layout.h) has its inline probe: the line (k <= 8), block256 (one 256-bit load and
// mask) and word64 (its eight probe fields turned into bits by one byte-table lookup, one rotate
// to their slices, then one 64-bit test or or).
// Filters with k > 8, and inserts into a concurrent line or block256 filter, take the filter's
// own call (the kernel); a concurrent word64 insert is inline too (its one fetch_or, the
// reference's); lookups are inline in either concurrency mode (detail::LoadShared). Held
// bit-identical to each layout's scalar reference by tests/simd_test.cc, built a second time for
// x86-64-v3.
#ifndef BLOOMERY_BLOCKED_FILTER_AVX2_H_
#define BLOOMERY_BLOCKED_FILTER_AVX2_H_

#if !defined(__AVX2__)
#error \
    "bloomery/blocked_filter_avx2.h is for files compiled for AVX2 (-mavx2 or -march=x86-64-v3); elsewhere call BlockedFilter's own Insert and MayContain"
#endif

#include <immintrin.h>

#include <bit>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "bloomery/blocked_filter.h"
#include "bloomery/blocked_line.h"
#include "bloomery/key.h"

namespace bloomery {
namespace blocked_line {
namespace detail {

// Lane i: kProbeSalt[i], and i * kProbeSalt[i] mod 2^32. Probe i's salted value
// (h1 + i*h2) * salt_i equals h1 * salt_i + h2 * (i * salt_i) mod 2^32, so its two vector
// multiplies are independent rather than chained: the probe's latency is one vpmulld's (~10
// cycles) shorter, which is most of what a single-key call waits on in cache.
struct alignas(32) SaltRows {
  uint32_t salt[8];
  uint32_t salt_times_probe[8];
};
inline constexpr SaltRows kSaltRows = [] {
  SaltRows rows{};
  for (uint32_t i = 0; i < 8; ++i) {
    rows.salt[i] = kProbeSalt[i];
    rows.salt_times_probe[i] = i * kProbeSalt[i];
  }
  return rows;
}();

// Lane i: probe i's salted value, ((h1 + i*h2) * salt_i) mod 2^32 (ProbeBit's before its shift).
[[nodiscard, gnu::always_inline]] inline __m256i SaltedProbes(const KeyHash& hash) noexcept {
  const __m256i from_h1 =
      _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(hash.lo)),
                         _mm256_load_si256(reinterpret_cast<const __m256i*>(kSaltRows.salt)));
  const __m256i from_h2 = _mm256_mullo_epi32(
      _mm256_set1_epi32(static_cast<int>(hash.lo >> 32)),
      _mm256_load_si256(reinterpret_cast<const __m256i*>(kSaltRows.salt_times_probe)));
  return _mm256_add_epi32(from_h1, from_h2);
}

// The shift of each probe's bit in its slice for k <= 8, lane i for probe i: its top
// 32 - kBitsShift bits, or 64 or more for probes i >= k, which vpsllvq and vpsllvd turn into 0.
// kBitsShift: 26 for the line's 64-bit slices, 27 for block256's 32-bit ones.
template <int kBitsShift>
[[nodiscard, gnu::always_inline]] inline __m256i ProbeShifts(const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  return _mm256_or_si256(_mm256_srli_epi32(SaltedProbes(hash), kBitsShift),
                         _mm256_load_si256(reinterpret_cast<const __m256i*>(unused.lane)));
}

// The shift of each slice's bit for k <= 8 slices, lane j for slice j: ProbeShifts in probe
// order, then one lane permute moves probe i to its slice, (start + i) mod 8 (vpermd reads only
// the low 3 bits of each index). No branch; the only tables are constant rows read as memory
// operands.
template <int kBitsShift>
[[nodiscard, gnu::always_inline]] inline __m256i SliceShifts(const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  const __m256i probe = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Slice j takes probe (j - start) mod 8, start = hash.hi mod 8.
  return _mm256_permutevar8x32_epi32(
      ProbeShifts<kBitsShift>(hash, unused),
      _mm256_sub_epi32(probe, _mm256_set1_epi32(static_cast<int>(hash.hi))));
}

// The key's line mask for k <= 8: words 0..3 in `lo`, 4..7 in `hi`.
[[gnu::always_inline]] inline void LineMask64(const KeyHash& hash, const UnusedProbes& unused,
                                              __m256i& lo, __m256i& hi) noexcept {
  const __m256i shift = SliceShifts<26>(hash, unused);
  const __m256i one = _mm256_set1_epi64x(1);
  lo = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shift)));
  hi = _mm256_sllv_epi64(one, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(shift, 1)));
}

// The 8 slices' `1 << bit` of a block256 key (kBitsShift 27) in u32 lanes, lane j for slice j.
template <int kBitsShift>
[[nodiscard, gnu::always_inline]] inline __m256i SliceMask8(const KeyHash& hash,
                                                            const UnusedProbes& unused) noexcept {
  return _mm256_sllv_epi32(_mm256_set1_epi32(1), SliceShifts<kBitsShift>(hash, unused));
}

// A word64 key's mask (word64_layout.h): byte i of the probe fields holds probe i's bit (0x80
// where probe i is unused), one byte-table lookup turns each into its `1 << bit` (0 for 0x80),
// then one rotate by 8 * start bits moves probe i to its slice, byte (start + i) mod 8.
[[nodiscard, gnu::always_inline]] inline uint64_t Word64Mask(const KeyHash& hash,
                                                             const UnusedProbes& unused) noexcept {
  const uint64_t fields = Word64ProbeFields(hash.lo) | unused.bytes;
  const __m128i bits =
      _mm_shuffle_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(kWord64BitTable)),
                       _mm_cvtsi64_si128(static_cast<long long>(fields)));
  return std::rotl(static_cast<uint64_t>(_mm_cvtsi128_si64(bits)),
                   static_cast<int>(8 * (hash.hi & 7)));
}

// 32 bytes of a line, by one load in inline assembly: a read outside the C++ memory model, so
// concurrent filters may use it while other threads set bits (docs/DESIGN.md, "Concurrency
// contract"; the kernels' LoadShared). The compiled probe issued its loads as separate
// instructions before as well: single-writer lookups measured no slower (benchmarks/README.md).
[[nodiscard, gnu::always_inline]] inline __m256i LoadShared(const uint64_t* words) noexcept {
  __m256i v;
  asm volatile("vmovdqu %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const __m256i*>(words)));
  return v;
}

}  // namespace detail

// k <= 8 (`unused` = kUnusedProbes[k]): whether every bit of the key is set in `line` (64-byte
// aligned). Either concurrency mode (detail::LoadShared).
[[nodiscard, gnu::always_inline]] inline bool Test64(const uint64_t* line, const KeyHash& hash,
                                                     const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  detail::LineMask64(hash, unused, lo, hi);
  const __m256i missing = _mm256_or_si256(_mm256_andnot_si256(detail::LoadShared(line), lo),
                                          _mm256_andnot_si256(detail::LoadShared(line + 4), hi));
  return _mm256_testz_si256(missing, missing) != 0;
}

// k <= 8 (`unused` = kUnusedProbes[k]), single-writer: sets the key's bits in `line`; whether
// any was 0 before.
[[gnu::always_inline]] inline bool Set64(uint64_t* line, const KeyHash& hash,
                                         const UnusedProbes& unused) noexcept {
  __m256i lo, hi;
  detail::LineMask64(hash, unused, lo, hi);
  auto* words = reinterpret_cast<__m256i*>(line);
  const __m256i old_lo = _mm256_load_si256(words);
  const __m256i old_hi = _mm256_load_si256(words + 1);
  _mm256_store_si256(words, _mm256_or_si256(old_lo, lo));
  _mm256_store_si256(words + 1, _mm256_or_si256(old_hi, hi));
  const __m256i missing =
      _mm256_or_si256(_mm256_andnot_si256(old_lo, lo), _mm256_andnot_si256(old_hi, hi));
  return _mm256_testz_si256(missing, missing) == 0;
}

// block256, k <= 8 (`unused` = kUnusedProbes[k]): whether every bit of the key is set in `block`
// (32-byte aligned). Either concurrency mode.
[[nodiscard, gnu::always_inline]] inline bool TestBlock256(const uint64_t* block,
                                                           const KeyHash& hash,
                                                           const UnusedProbes& unused) noexcept {
  const __m256i mask = detail::SliceMask8<27>(hash, unused);
  const __m256i missing = _mm256_andnot_si256(detail::LoadShared(block), mask);
  return _mm256_testz_si256(missing, missing) != 0;
}

// block256, single writer: sets the key's bits in `block`; whether any was 0 before.
[[gnu::always_inline]] inline bool SetBlock256(uint64_t* block, const KeyHash& hash,
                                               const UnusedProbes& unused) noexcept {
  const __m256i mask = detail::SliceMask8<27>(hash, unused);
  auto* words = reinterpret_cast<__m256i*>(block);
  const __m256i old = _mm256_load_si256(words);
  _mm256_store_si256(words, _mm256_or_si256(old, mask));
  const __m256i missing = _mm256_andnot_si256(old, mask);
  return _mm256_testz_si256(missing, missing) == 0;
}

// word64, k <= 8: whether every bit of the key is set in `*word`. Either concurrency mode (one
// relaxed 64-bit load).
[[nodiscard, gnu::always_inline]] inline bool TestWord64(const uint64_t* word, const KeyHash& hash,
                                                         const UnusedProbes& unused) noexcept {
  return (detail::Word64Mask(hash, unused) & ~__atomic_load_n(word, __ATOMIC_RELAXED)) == 0;
}

// word64: sets the key's bits in `*word`; whether one was 0 before. Concurrent: a relaxed load,
// then one fetch_or only if a bit is missing (the reference's SetBits), so exactly one of several
// racing inserters of a new key is told "new".
[[gnu::always_inline]] inline bool SetWord64(uint64_t* word, const KeyHash& hash,
                                             const UnusedProbes& unused, bool concurrent) noexcept {
  const uint64_t mask = detail::Word64Mask(hash, unused);
  if (!concurrent) [[likely]] {
    const uint64_t old = *word;
    *word = old | mask;
    return (mask & ~old) != 0;
  }
  if ((mask & ~__atomic_load_n(word, __ATOMIC_RELAXED)) == 0) return false;
  return (mask & ~__atomic_fetch_or(word, mask, __ATOMIC_RELAXED)) != 0;
}

}  // namespace blocked_line

namespace avx2 {

// Prober's shape argument: the block's log2 words (BlockedFilter::block_shift_: 3 the line, 2
// block256, 0 word64), or kAnyShape, read from the filter at run time.
inline constexpr int kAnyShape = -1;

// A filter's fields, read once, for a loop of single-key calls probing inline. Insert and
// MayContain below build one per call, so each call reads the filter's fields again: the loop
// also holds the out-of-line fallback (k > 8, a concurrent line), which may change memory, and
// a store of the key's bits may alias the block count, so the compiler cannot keep them in
// registers. A Prober built before the loop is the caller's own local: its fields stay in
// registers across the loop. VisitProber (below) goes one step further: it hands the loop the
// Prober of the filter's shape and integer hash, so the loop tests neither (word64, answers
// summed: 14% fewer ns per Insert than avx2::Insert at 2^20 keys, 22% at 2^26;
// benchmarks/README.md). Same answers and bits as the filter's own calls.
//
//   bloomery::avx2::Prober probe(filter);          // Prober<BlockedFilter>: Insert and MayContain
//   for (uint64_t key : keys) added += probe.Insert(key);
//
// It holds the filter's address and fields, which never change while the filter lives: it is
// valid until the filter is destroyed, moved from or assigned to. Built from a const filter
// (Prober<const BlockedFilter>) it offers MayContain only. Single-writer filters: an Insert may
// not overlap any other call on the filter (BlockedFilter's thread-safety contract).
//
// kShape and kIntegers, when set (VisitProber sets them), are the filter's block shape and integer
// hash, fixed at compile time; kAnyShape and IntegerHash::kAuto read the filter's at run time.
template <class Filter, int kShape = kAnyShape, IntegerHash kIntegers = IntegerHash::kAuto>
class Prober {
  static_assert(std::is_same_v<std::remove_const_t<Filter>, BlockedFilter>);
  static_assert(kShape == kAnyShape || kShape == 0 || kShape == 2 || kShape == 3);

 public:
  explicit Prober(Filter& filter) noexcept
      : filter_(&filter),
        words_(filter.block_at(0)),
        blocks_(filter.blocks_),
        hasher_(filter.hasher()),
        block_shift_(filter.block_shift_),
        concurrent_(filter.concurrent()),
        test_(filter.inline_test_),
        set_(filter.inline_set_) {}

  // filter.Insert(key): whether the key was new.
  [[gnu::always_inline]] bool Insert(const KeyHash& hash) const noexcept {
    static_assert(!std::is_const_v<Filter>, "a Prober of a const filter only looks keys up");
    if (set_ != nullptr) [[likely]] {
      uint64_t* block = Block(hash);
      if (Shift() == 3) return blocked_line::Set64(block, hash, *set_);
      if (Shift() == 2) return blocked_line::SetBlock256(block, hash, *set_);
      return blocked_line::SetWord64(block, hash, *set_, concurrent_);
    }
    return filter_->Insert(hash);
  }
  [[gnu::always_inline]] bool Insert(std::string_view key) const noexcept {
    return Insert(hasher_(key));
  }
  [[gnu::always_inline]] bool Insert(uint64_t key) const noexcept { return Insert(Hash(key)); }

  // filter.MayContain(key).
  [[nodiscard, gnu::always_inline]] bool MayContain(const KeyHash& hash) const noexcept {
    if (test_ != nullptr) [[likely]] {
      const uint64_t* block = Block(hash);
      if (Shift() == 3) return blocked_line::Test64(block, hash, *test_);
      if (Shift() == 2) return blocked_line::TestBlock256(block, hash, *test_);
      return blocked_line::TestWord64(block, hash, *test_);
    }
    return filter_->MayContain(hash);
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(std::string_view key) const noexcept {
    return MayContain(hasher_(key));
  }
  [[nodiscard, gnu::always_inline]] bool MayContain(uint64_t key) const noexcept {
    return MayContain(Hash(key));
  }

 private:
  // The block's log2 words: the shape's, or the filter's at run time (one test per call,
  // predictable in any loop over one filter).
  [[nodiscard, gnu::always_inline]] uint32_t Shift() const noexcept {
    if constexpr (kShape == kAnyShape) {
      return block_shift_;
    } else {
      return kShape;
    }
  }
  // hasher_(key), by the integer hash set at compile time where there is one.
  [[nodiscard, gnu::always_inline]] KeyHash Hash(uint64_t key) const noexcept {
    if constexpr (kIntegers == IntegerHash::kAuto) {
      return hasher_(key);
    } else {
      return HashInteger<kIntegers>(key, hasher_.seed);
    }
  }
  // The key's block, of the layout's shape (BlockedFilter::block).
  [[nodiscard, gnu::always_inline]] uint64_t* Block(const KeyHash& hash) const noexcept {
    return words_ + (blocked_line::LineIndex(hash, blocks_) << Shift());
  }

  Filter* filter_;
  uint64_t* words_;
  uint64_t blocks_;
  KeyHasher hasher_;
  uint32_t block_shift_;
  bool concurrent_;
  // BlockedFilter's inline_test_ / inline_set_: where the inline probe may run, else null.
  const blocked_line::UnusedProbes* test_;
  const blocked_line::UnusedProbes* set_;
};
template <class Filter>
Prober(Filter&) -> Prober<Filter>;

// fn(probe), probe the Prober of the filter's shape and integer hash (Prober<Filter, 3, kXxh3>
// for a default line, <Filter, 0, kMix> for a default word64, ...): fn is instantiated once for
// each of the three shapes and two integer hashes, each loop free of the tests of both. Returns
// what fn returns (the same type for every instantiation). For the hottest loops:
//   size_t added = bloomery::avx2::VisitProber(filter, [&](const auto& probe) {
//     size_t n = 0;
//     for (uint64_t key : keys) n += probe.Insert(key);
//     return n;
//   });
template <class Filter, class Fn>
decltype(auto) VisitProber(Filter& filter, Fn&& fn) {
  const auto with_shape = [&]<IntegerHash kIntegers>() -> decltype(auto) {
    switch (filter.block_shift_) {
      case 3:
        return fn(Prober<Filter, 3, kIntegers>(filter));
      case 2:
        return fn(Prober<Filter, 2, kIntegers>(filter));
      default:
        return fn(Prober<Filter, 0, kIntegers>(filter));
    }
  };
  if (filter.integer_hash() == IntegerHash::kMix) {
    return with_shape.template operator()<IntegerHash::kMix>();
  }
  return with_shape.template operator()<IntegerHash::kXxh3>();
}

// filter.Insert(key), probing inline (a Prober for this one call). Single-writer filters: no other
// call may overlap it (BlockedFilter's thread-safety contract).
[[gnu::always_inline]] inline bool Insert(BlockedFilter& filter, const KeyHash& hash) noexcept {
  return Prober(filter).Insert(hash);
}
[[gnu::always_inline]] inline bool Insert(BlockedFilter& filter, std::string_view key) noexcept {
  return Prober(filter).Insert(key);
}
[[gnu::always_inline]] inline bool Insert(BlockedFilter& filter, uint64_t key) noexcept {
  return Prober(filter).Insert(key);
}

// filter.MayContain(key), probing inline.
[[nodiscard, gnu::always_inline]] inline bool MayContain(const BlockedFilter& filter,
                                                         const KeyHash& hash) noexcept {
  return Prober(filter).MayContain(hash);
}
[[nodiscard, gnu::always_inline]] inline bool MayContain(const BlockedFilter& filter,
                                                         std::string_view key) noexcept {
  return Prober(filter).MayContain(key);
}
[[nodiscard, gnu::always_inline]] inline bool MayContain(const BlockedFilter& filter,
                                                         uint64_t key) noexcept {
  return Prober(filter).MayContain(key);
}

}  // namespace avx2
}  // namespace bloomery

#endif  // BLOOMERY_BLOCKED_FILTER_AVX2_H_
