// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// block_kernels-inl.h (internal): the per-target code behind block_kernels.h. Included once per
// Highway target by block_kernels.cc (foreach_target.h); include nothing else from here.
//
// Layout (layouts/internal/block_layout.h): k <= 8 uses 8 slices of 64 bits, lane j of a u64 vector
// is slice j; k >= 9 uses 16 slices of 32 bits, lane j of a u32 vector is slice j (the line's
// little-endian u32 view). A lane computes the probe that lands in its slice, i = (j - start) mod
// slices, from per-start tables of i and of salt_i, so there is no shuffle and no branch on start
// or k: lanes with i >= k shift a 0 instead of a 1.

// Target-independent tables: a normal include guard.
#ifndef BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_TABLES_
#define BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_TABLES_

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "bloomery/key.h"
#include "layouts/internal/block_layout.h"
#include "layouts/internal/line_ops.h"

namespace bloomery::simd::impl {

// For each start slice s: probe[s][j] is the probe i that lands in slice j, salt[s][j] its salt,
// salt_times_probe[s][j] = i * salt_i mod 2^32 (ProbeBits: the salted probe
// (h1 + i*h2) * salt_i is h1 * salt_i + h2 * (i * salt_i), two independent multiplies rather than
// two in a chain). Rows are 32 (8 slices) or 64 (16 slices) bytes, so every vector load from
// them is aligned.
template <uint32_t kSlices>
struct SliceTables {
  alignas(64) uint32_t probe[kSlices][kSlices];
  alignas(64) uint32_t salt[kSlices][kSlices];
  alignas(64) uint32_t salt_times_probe[kSlices][kSlices];
};

template <uint32_t kSlices>
constexpr SliceTables<kSlices> MakeSliceTables() {
  SliceTables<kSlices> tables{};
  for (uint32_t start = 0; start < kSlices; ++start) {
    for (uint32_t j = 0; j < kSlices; ++j) {
      const uint32_t i = (j - start) & (kSlices - 1);
      tables.probe[start][j] = i;
      tables.salt[start][j] = detail::kProbeSalt[i];
      tables.salt_times_probe[start][j] = i * detail::kProbeSalt[i];
    }
  }
  return tables;
}

// Internal linkage: addressed directly (RIP-relative) rather than through the GOT of a shared
// library.
static constexpr SliceTables<8> kSliceTables8 = MakeSliceTables<8>();
static constexpr SliceTables<16> kSliceTables16 = MakeSliceTables<16>();

}  // namespace bloomery::simd::impl

#endif  // BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_TABLES_

// Per-target code: the toggling include guard of Highway's skeleton.
#if defined(BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_INL_H_
#undef BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_INL_H_
#else
#define BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace bloomery::simd::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using detail::LineMask;

// Bits of probes probe[0 .. Lanes(d32)) (k <= 8: 6 bits; k >= 9: 5 bits), and a 1 in lanes whose
// probe is used (i < k) or a 0 in the others. h1, h2 and k are broadcast; `probe`, `salt` and
// `salt_times_probe` point into the key's start row.
template <int kBitsShift, class D32, class V32 = hn::Vec<D32>>
HWY_INLINE void ProbeBits(D32 d32, V32 h1, V32 h2, V32 k, const uint32_t* probe,
                          const uint32_t* salt, const uint32_t* salt_times_probe, V32& bit,
                          V32& one) {
  const V32 i = hn::Load(d32, probe);
  // Arithmetic mod 2^32, as in ProbeBit: the top bits of (h1 + i*h2) * salt_i, computed as
  // h1 * salt_i + h2 * (i * salt_i) (SliceTables).
  bit = hn::ShiftRight<kBitsShift>(h1 * hn::Load(d32, salt) + h2 * hn::Load(d32, salt_times_probe));
  // i < k exactly when i - k wraps around (i <= 15, k <= 16): its top bit is the probe's 1 or 0.
  one = hn::ShiftRight<31>(i - k);
}

// Calls per_vector(j, bit, one) (ProbeBits, its top 32 - kBitsShift bits) for each vector of
// d32's lanes over a key's kSlices (8 or 16) slices, lane j for the probe that lands in slice j.
template <uint32_t kSlices, int kBitsShift, class D32, class PerVector>
HWY_INLINE void ForEachProbeVector(D32 d32, const KeyHash& hash, uint32_t k,
                                   const PerVector& per_vector) {
  const auto start = static_cast<uint32_t>(hash.hi & (kSlices - 1));
  const uint32_t* probe =
      kSlices == 8 ? impl::kSliceTables8.probe[start] : impl::kSliceTables16.probe[start];
  const uint32_t* salt =
      kSlices == 8 ? impl::kSliceTables8.salt[start] : impl::kSliceTables16.salt[start];
  const uint32_t* salt_times_probe = kSlices == 8 ? impl::kSliceTables8.salt_times_probe[start]
                                                  : impl::kSliceTables16.salt_times_probe[start];
  const auto h1 = hn::Set(d32, static_cast<uint32_t>(hash.lo));
  const auto h2 = hn::Set(d32, static_cast<uint32_t>(hash.lo >> 32));
  const auto vk = hn::Set(d32, k);
  for (size_t j = 0; j < kSlices; j += hn::Lanes(d32)) {
    hn::Vec<D32> bit, one;
    ProbeBits<kBitsShift>(d32, h1, h2, vk, probe + j, salt + j, salt_times_probe + j, bit, one);
    per_vector(j, bit, one);
  }
}

// The vectors of 8 u32 lanes the 8-slice probes compute in (one on AVX2 and AVX-512).
using D8x32 = hn::CappedTag<uint32_t, 8>;

// Probe::kFields (bloomery/detail/probe_common.h): calls per_vector(j, bit, one) for each vector
// of D8x32's lanes over a key's 8 slices, lane j for slice j: `bit` its kFieldBits-bit field (lo
// broadcast, seen as u32 lanes a, b, a, b, ..., shifted left by kFieldShifts and right by
// 32 - kFieldBits), `one` 1 where the key's start puts a probe in slice j, else 0. The scalar
// target computes each lane's field as the reference does.
template <uint32_t kFieldBits, class PerVector>
HWY_INLINE void ForEachFieldVector(const KeyHash& hash, uint32_t k, const PerVector& per_vector) {
  const D8x32 d32;
  const uint32_t start = detail::FieldsStart(hash.lo);
  const uint32_t* probe = impl::kSliceTables8.probe[start];
  const auto vk = hn::Set(d32, k);
#if HWY_TARGET != HWY_SCALAR
  const hn::Repartition<uint64_t, D8x32> d64;
  const auto word = hn::BitCast(d32, hn::Set(d64, hash.lo));
#endif
  for (size_t j = 0; j < 8; j += hn::Lanes(d32)) {
#if HWY_TARGET == HWY_SCALAR
    const auto bit =
        hn::Set(d32, detail::SliceField(hash.lo, static_cast<uint32_t>(j), kFieldBits));
#else
    const auto bit = hn::ShiftRight<32 - kFieldBits>(
        hn::Shl(word, hn::Load(d32, detail::kFieldShifts<kFieldBits>.lane + j)));
#endif
    // i < k exactly when i - k wraps around (ProbeBits).
    per_vector(j, bit, hn::ShiftRight<31>(hn::Load(d32, probe + j) - vk));
  }
}

// The 8-slice probe vectors of kProbe: the salted probe's (ForEachProbeVector, kBitsShift its
// 32 - field bits) or kFields' (ForEachFieldVector).
template <Probe kProbe, uint32_t kFieldBits, class PerVector>
HWY_INLINE void ForEachProbeVector8(const KeyHash& hash, uint32_t k, const PerVector& per_vector) {
  if constexpr (kProbe == Probe::kSalted) {
    ForEachProbeVector<8, 32 - kFieldBits>(D8x32(), hash, k, per_vector);
  } else {
    ForEachFieldVector<kFieldBits>(hash, k, per_vector);
  }
}

// k <= 8: calls visit(lane, words) for each u64 vector of the key's line mask under kProbe;
// `lane` is the vector's first word in the line. The eight 32-bit shifts are computed in as few
// vectors as the target allows (one on AVX2 and AVX-512) and widened to 64-bit lanes.
// (D64 and D32 are template parameters only so that `if constexpr` discards the branch that does
// not apply to this target.)
template <Probe kProbe, class Visit, class D64 = hn::ScalableTag<uint64_t>, class D32 = D8x32>
HWY_INLINE void ForEachMaskVector64(const KeyHash& hash, uint32_t k, const Visit& visit) {
  const D64 d64;
  ForEachProbeVector8<kProbe, 6>(hash, k, [&](size_t j, auto bit, auto one) {
    if constexpr (std::is_same_v<D32, hn::Rebind<uint32_t, D64>>) {
      // As many u32 as u64 lanes (AVX-512, scalar).
      visit(j, hn::PromoteTo(d64, one) << hn::PromoteTo(d64, bit));
    } else {
      // Twice as many (AVX2, SSE4): widen each half. (UpperHalf unqualified: the scalar target
      // has none, and this branch is discarded there.)
      const hn::Half<D32> dh;
      visit(j, hn::PromoteTo(d64, hn::LowerHalf(dh, one))
                   << hn::PromoteTo(d64, hn::LowerHalf(dh, bit)));
      visit(j + hn::Lanes(d64), hn::PromoteTo(d64, UpperHalf(dh, one))
                                    << hn::PromoteTo(d64, UpperHalf(dh, bit)));
    }
  });
}

// k >= 9: the same for u32 vectors over the line's 16 32-bit slices.
template <class Visit>
HWY_INLINE void ForEachMaskVector32(const KeyHash& hash, uint32_t k, const Visit& visit) {
  ForEachProbeVector<16, 27>(hn::ScalableTag<uint32_t>(), hash, k,
                             [&](size_t j, auto bit, auto one) { visit(j, one << bit); });
}

template <Probe kProbe>
HWY_INLINE void MakeMask(const KeyHash& hash, uint32_t k, LineMask& mask) {
  if (k <= 8) {
    const hn::ScalableTag<uint64_t> d;
    ForEachMaskVector64<kProbe>(
        hash, k, [&](size_t lane, auto words) { hn::Store(words, d, mask.word + lane); });
  } else {
    const hn::ScalableTag<uint32_t> d;
    ForEachMaskVector32(hash, k, [&](size_t lane, auto words) {
      hn::Store(words, d, reinterpret_cast<uint32_t*>(mask.word) + lane);
    });
  }
}

// A vector of a concurrent filter's line, which other threads may be setting bits of. On x86 it is
// one load instruction in inline assembly: an access outside the C++ memory model, as the Linux
// kernel's READ_ONCE is, so it is no data race there; ThreadSanitizer does not see it (nor does
// AddressSanitizer: the line is in bounds by BlockIndex, as for every other access here). Any
// tearing is harmless: while inserts run, bits only go from 0 to 1, so a bit read as set is set,
// and a bit read as missing is only sent to the fetch_or that finds out. Elsewhere (the scalar
// target) the words are read by relaxed atomic loads. Either way the answers and bytes are those of
// the scalar reference (layouts/internal/line_ops.h), which simd_test checks.
template <class D>
HWY_INLINE hn::Vec<D> LoadShared(D d, const hn::TFromD<D>* p) {
  using T = hn::TFromD<D>;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
  (void)d;
  using Raw = decltype(hn::Zero(d).raw);
  Raw raw;
  const Raw& from = *reinterpret_cast<const Raw*>(p);
  if constexpr (sizeof(Raw) == 64) {
    asm volatile("vmovdqu64 %1, %0" : "=v"(raw) : "m"(from));
  } else if constexpr (HWY_TARGET <= HWY_AVX2) {
    asm volatile("vmovdqu %1, %0" : "=x"(raw) : "m"(from));
  } else {
    asm volatile("movdqu %1, %0" : "=x"(raw) : "m"(from));
  }
  return hn::Vec<D>{raw};
#else
  // The 64-bit words that hold the vector, copied by relaxed loads.
  alignas(64) uint64_t words[detail::kWordsPerBlock + 1];
  const auto address = reinterpret_cast<uintptr_t>(p);
  const auto* first =
      reinterpret_cast<const uint64_t*>(reinterpret_cast<const char*>(p) - (address & 7));
  const size_t count = ((address & 7) + hn::Lanes(d) * sizeof(T) + 7) / 8;
  for (size_t i = 0; i < count; ++i) words[i] = detail::LoadRelaxed(first + i);
  return hn::LoadU(
      d, reinterpret_cast<const T*>(reinterpret_cast<const char*>(words) + (address & 7)));
#endif
}

// Loads a vector of `line`: LoadShared in concurrent mode, else a plain aligned load.
template <bool kConcurrent, class D>
HWY_INLINE hn::Vec<D> LoadLine(D d, const hn::TFromD<D>* p) {
  if constexpr (kConcurrent) {
    return LoadShared(d, p);
  } else {
    return hn::Load(d, p);
  }
}

// Vector loads of the line (LoadLine), and in SetLineVector (single-writer only) stores. `missing`
// collects the mask bits the line lacks; one horizontal test at the end.
template <bool kConcurrent, class D, class ForEach>
HWY_INLINE bool TestLineVector(D d, const uint64_t* line, const KeyHash& hash, uint32_t k,
                               const ForEach& for_each) {
  using T = hn::TFromD<D>;
  const T* bits = reinterpret_cast<const T*>(line);
  auto missing = hn::Zero(d);
  for_each(hash, k, [&](size_t lane, auto words) {
    missing = hn::Or(missing, hn::AndNot(LoadLine<kConcurrent>(d, bits + lane), words));
  });
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

template <class D, class ForEach>
HWY_INLINE bool SetLineVector(D d, uint64_t* line, const KeyHash& hash, uint32_t k,
                              const ForEach& for_each) {
  using T = hn::TFromD<D>;
  T* bits = reinterpret_cast<T*>(line);
  auto missing = hn::Zero(d);
  for_each(hash, k, [&](size_t lane, auto words) {
    const auto old = hn::Load(d, bits + lane);
    missing = hn::Or(missing, hn::AndNot(old, words));
    hn::Store(hn::Or(old, words), d, bits + lane);
  });
  return !hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

// kSlices64: k <= 8 (64-bit slices), known outside the batch loops so the choice is made once.
// Calls f(d, for_each) with the lane type and the mask visitor of those slices under kProbe (the
// line's 16 slices of k > 8 probe as kSalted under either probe).
template <Probe kProbe, bool kSlices64, class F>
HWY_INLINE auto WithSlices(const F& f) {
  if constexpr (kSlices64) {
    return f(hn::ScalableTag<uint64_t>(), [](const KeyHash& h, uint32_t k, const auto& visit) {
      ForEachMaskVector64<kProbe>(h, k, visit);
    });
  } else {
    return f(hn::ScalableTag<uint32_t>(), [](const KeyHash& h, uint32_t k, const auto& visit) {
      ForEachMaskVector32(h, k, visit);
    });
  }
}

template <Probe kProbe, bool kConcurrent, bool kSlices64>
HWY_INLINE bool TestOne(const uint64_t* line, const KeyHash& hash, uint32_t k) {
  return WithSlices<kProbe, kSlices64>([&](auto d, const auto& for_each) {
    return TestLineVector<kConcurrent>(d, line, hash, k, for_each);
  });
}

// Concurrent mode: SetBlockScalar's contract (fetch_or only on the words whose bits are missing,
// "new" if some fetch_or found a bit missing), done faster:
//  - the line is read by LoadShared and compared on vectors, as in single-writer mode, rather than
//    by eight relaxed scalar loads against a mask stored to memory;
//  - the words to update are collected as a bit set first, so the loop runs once per such word with
//    one hard-to-predict branch per key, not one per word (the words missing bits are random);
//  - with 64-bit slices (k <= 8) each word of the mask has one bit, and a fetch_or of one bit whose
//    old value is tested compiles to `lock bts`, where a general fetch_or whose result is used
//    needs a `lock cmpxchg` retry loop.
// What remains is the locked instructions themselves (~4.5 per key over a fill at k = 6), which do
// not overlap with other memory accesses; docs/PERFORMANCE.md ("Threads") has the measurements,
// and docs/DESIGN.md ("Tried and rejected") the variants tried and dropped (a batch in two phases;
// relaxed loads copied to a local line).
//
// The bits of the key's mask that `line` lacks (`missing`, word by word) and the words that lack
// some, as a bit set: vector and-nots and one movemask per vector, no branch on the line's
// contents.
template <class D, class ForEach>
HWY_INLINE uint32_t MissingWords(D d, const uint64_t* line, const KeyHash& hash, uint32_t k,
                                 const ForEach& for_each, LineMask& missing) {
  using T = hn::TFromD<D>;
  uint32_t lanes = 0;  // bit i: lane i (a word, or half of one) lacks some bit
  for_each(hash, k, [&](size_t lane, auto words) {
    const auto lacks = hn::AndNot(LoadShared(d, reinterpret_cast<const T*>(line) + lane), words);
    hn::Store(lacks, d, reinterpret_cast<T*>(missing.word) + lane);
    uint8_t bits[8] = {};
    hn::StoreMaskBits(d, hn::Ne(lacks, hn::Zero(d)), bits);
    lanes |= (static_cast<uint32_t>(bits[0]) | static_cast<uint32_t>(bits[1]) << 8) << lane;
  });
  if constexpr (sizeof(T) == sizeof(uint64_t)) {
    return lanes;
  } else {
    // 32-bit lanes: word j lacks a bit when lane 2j or 2j + 1 does; gather the pairs' bits.
    uint32_t words = (lanes | lanes >> 1) & 0x5555u;
    words = (words | words >> 1) & 0x3333u;
    words = (words | words >> 2) & 0x0F0Fu;
    return (words | words >> 4) & 0x00FFu;
  }
}

// fetch_or of missing.word[j] into line[j] for each j in `todo`; whether some bit was missing.
template <bool kSlices64>
HWY_INLINE bool OrMissingWords(uint64_t* line, const LineMask& missing, uint32_t todo) {
  bool fresh = false;
  for (; todo != 0; todo &= todo - 1) {
    const int j = std::countr_zero(todo);
    std::atomic_ref<uint64_t> word(line[j]);
    if constexpr (kSlices64) {
      const uint64_t bit = uint64_t{1} << std::countr_zero(missing.word[j]);
      fresh |= (word.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
    } else {
      const uint64_t bits = missing.word[j];
      fresh |= (bits & ~word.fetch_or(bits, std::memory_order_relaxed)) != 0;
    }
  }
  return fresh;
}

template <Probe kProbe, bool kSlices64>
HWY_INLINE bool SetLineConcurrent(uint64_t* line, const KeyHash& hash, uint32_t k) {
  LineMask missing;
  const uint32_t todo = WithSlices<kProbe, kSlices64>([&](auto d, const auto& for_each) {
    return MissingWords(d, line, hash, k, for_each, missing);
  });
  return OrMissingWords<kSlices64>(line, missing, todo);
}

template <Probe kProbe, bool kConcurrent, bool kSlices64>
HWY_INLINE bool SetOne(uint64_t* line, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    return SetLineConcurrent<kProbe, kSlices64>(line, hash, k);
  } else {
    return WithSlices<kProbe, kSlices64>(
        [&](auto d, const auto& for_each) { return SetLineVector(d, line, hash, k, for_each); });
  }
}

template <Probe kProbe>
void MakeMasks(const KeyHash* hashes, size_t n, uint32_t k, uint64_t* masks) noexcept {
  for (size_t i = 0; i < n; ++i) {
    MakeMask<kProbe>(hashes[i], k,
                     *reinterpret_cast<LineMask*>(masks + i * detail::kWordsPerBlock));
  }
}

// The entry points' one run-time choice: `fn` called with (kConcurrent, kSlices64) as
// std::bool_constant, so each of the four bodies is compiled without a branch on either.
template <class Fn>
HWY_INLINE auto WithVariant(bool concurrent, uint32_t k, const Fn& fn) {
  if (concurrent) {
    return k <= 8 ? fn(std::true_type{}, std::true_type{})
                  : fn(std::true_type{}, std::false_type{});
  }
  return k <= 8 ? fn(std::false_type{}, std::true_type{})
                : fn(std::false_type{}, std::false_type{});
}

template <Probe kProbe>
bool TestLine(const uint64_t* line, KeyHash hash, uint32_t k, bool concurrent) noexcept {
  return WithVariant(concurrent, k, [&](auto kConcurrent, auto kSlices64) {
    return TestOne<kProbe, kConcurrent, kSlices64>(line, hash, k);
  });
}

template <Probe kProbe>
bool SetLine(uint64_t* line, KeyHash hash, uint32_t k, bool concurrent) noexcept {
  return WithVariant(concurrent, k, [&](auto kConcurrent, auto kSlices64) {
    return SetOne<kProbe, kConcurrent, kSlices64>(line, hash, k);
  });
}

// The batch loop of every shape: `probe(block, hash)` on key i's block (kBlockWords words at
// words + blocks[i] * kBlockWords), in order, while block prefetch[i] (the next batch's) is on its
// way. kWrite: inserts ("was new"), whose prefetch has write intent, so the block arrives
// exclusive and the store needs no second transaction. Answers in answers[i] unless null;
// returns how many were true.
template <bool kWrite, uint32_t kBlockWords, class Word, class Probe>
HWY_INLINE size_t ProbeBlocks(Word* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                              bool* answers, const uint64_t* prefetch, size_t prefetch_count,
                              const Probe& probe) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i < prefetch_count) {
      __builtin_prefetch(words + prefetch[i] * kBlockWords, kWrite ? 1 : 0, 3);
    }
    const bool answer = probe(words + blocks[i] * kBlockWords, hashes[i]);
    count += answer;
    if (answers != nullptr) answers[i] = answer;
  }
  return count;
}

// The batch loop of TestLines (kWrite false: `answers` are "present") and SetLines (kWrite:
// "was new").
template <bool kWrite, Probe kProbe, bool kConcurrent, bool kSlices64, class Word>
HWY_INLINE size_t ProbeLines(Word* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                             uint32_t k, bool* answers, const uint64_t* prefetch,
                             size_t prefetch_count) {
  return ProbeBlocks<kWrite, detail::kWordsPerBlock>(
      words, blocks, hashes, n, answers, prefetch, prefetch_count,
      [k](Word* line, const KeyHash& hash) {
        if constexpr (kWrite) {
          return SetOne<kProbe, kConcurrent, kSlices64>(line, hash, k);
        } else {
          return TestOne<kProbe, kConcurrent, kSlices64>(line, hash, k);
        }
      });
}

template <Probe kProbe>
size_t TestLines(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                 uint32_t k, bool concurrent, bool* results, const uint64_t* prefetch,
                 size_t prefetch_count) noexcept {
  return WithVariant(concurrent, k, [&](auto kConcurrent, auto kSlices64) {
    return ProbeLines<false, kProbe, kConcurrent, kSlices64>(words, blocks, hashes, n, k, results,
                                                             prefetch, prefetch_count);
  });
}

template <Probe kProbe>
size_t SetLines(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                uint32_t k, bool concurrent, bool* was_new, const uint64_t* prefetch,
                size_t prefetch_count) noexcept {
  return WithVariant(concurrent, k, [&](auto kConcurrent, auto kSlices64) {
    return ProbeLines<true, kProbe, kConcurrent, kSlices64>(words, blocks, hashes, n, k, was_new,
                                                            prefetch, prefetch_count);
  });
}

// Block256 and word64 (layout.h; bloomery/detail/block256.h, bloomery/detail/word64.h), 8 slices
// each:
//  - block256: lane j computes the probe i = (j - start) mod 8 that lands in slice j from the
//    per-start tables (kSliceTables8), as the line's k <= 8 mask does: 8 x 32-bit slices, lane j
//    of a u32 vector is slice j, `one << bit` with bit the top 5 bits of the salted probe. One
//    256-bit vector on AVX2 and AVX-512, two on SSE4. Test and set as the line's 32-bit slices
//    (and-not, load/or/store; concurrent: fetch_or on the words missing bits,
//    MissingWords/OrMissingWords).
//  - word64: 8 x 8-bit slices, its own mask (Word64Mask: one byte-table lookup and a rotate).
//    Test is one and-not, set one or (concurrent: SetBits, one fetch_or).

// block256 --------------------------------------------------------------------------------------

// Calls visit(lane, slices) for each u32 vector of the key's 8 slices under kProbe, lane j holding
// `one << bit` for the probe that lands in slice j (0 where none does): 5-bit fields of 32-bit
// slices.
template <Probe kProbe>
struct Block256Slices {
  void operator()(const KeyHash& hash, uint32_t k, const auto& visit) const {
    ForEachProbeVector8<kProbe, 5>(hash, k,
                                   [&](size_t j, auto bit, auto one) { visit(j, one << bit); });
  }
};

template <Probe kProbe, bool kConcurrent>
HWY_INLINE bool TestBlock256One(const uint64_t* block, const KeyHash& hash, uint32_t k) {
  return TestLineVector<kConcurrent>(D8x32(), block, hash, k, Block256Slices<kProbe>());
}

template <Probe kProbe, bool kConcurrent>
HWY_INLINE bool SetBlock256One(uint64_t* block, const KeyHash& hash, uint32_t k) {
  if constexpr (kConcurrent) {
    LineMask missing;
    const uint32_t todo = MissingWords(D8x32(), block, hash, k, Block256Slices<kProbe>(), missing);
    return OrMissingWords<false>(block, missing, todo);
  } else {
    return SetLineVector(D8x32(), block, hash, k, Block256Slices<kProbe>());
  }
}

template <Probe kProbe>
void MakeBlock256Masks(const KeyHash* hashes, size_t n, uint32_t k, uint64_t* masks) noexcept {
  const D8x32 d;
  for (size_t i = 0; i < n; ++i) {
    auto* out = reinterpret_cast<uint32_t*>(masks + i * detail::kWordsPerBlock256);
    Block256Slices<kProbe>()(hashes[i], k,
                             [&](size_t lane, auto v) { hn::StoreU(v, d, out + lane); });
  }
}

// word64 ----------------------------------------------------------------------------------------

// The key's word mask (bloomery/detail/word64.h): byte i of the probe fields is probe i's bit (0x80
// where probe i is unused), one byte-table lookup turns each into its `1 << bit` (0 for 0x80), then
// one rotate by 8 * start bits moves probe i to its slice, byte (start + i) mod 8. The scalar
// target has no byte table: it computes the reference's loop.
HWY_INLINE uint64_t Word64Mask(const KeyHash& hash, uint32_t k) {
#if HWY_TARGET == HWY_SCALAR
  return detail::Word64MaskScalar(hash, k);
#else
  const hn::Full128<uint8_t> d8;
  const hn::Full128<uint64_t> d64;
  const uint64_t fields = detail::Word64ProbeFields(hash.lo) | detail::kUnusedProbes[k].bytes;
  const auto bits = hn::TableLookupBytesOr0(hn::Load(d8, detail::kWord64BitTable),
                                            hn::BitCast(d8, hn::Set(d64, fields)));
  return std::rotl(hn::GetLane(hn::BitCast(d64, bits)), static_cast<int>(8 * (hash.hi & 7)));
#endif
}

template <bool kConcurrent>
HWY_INLINE bool TestWord64One(const uint64_t* word, const KeyHash& hash, uint32_t k) {
  return (Word64Mask(hash, k) & ~detail::LoadWord(word, kConcurrent)) == 0;
}

template <bool kConcurrent>
HWY_INLINE bool SetWord64One(uint64_t* word, const KeyHash& hash, uint32_t k) {
  return detail::SetBits(word, Word64Mask(hash, k), kConcurrent) != 0;
}

void MakeWord64Masks(const KeyHash* hashes, size_t n, uint32_t k, uint64_t* masks) noexcept {
  for (size_t i = 0; i < n; ++i) masks[i] = Word64Mask(hashes[i], k);
}

// Both shapes' entry points, by the words per block and the probe of one key ---------------------

template <uint32_t kBlockWords, Probe kProbe, bool kConcurrent>
HWY_INLINE bool TestShapeOne(const uint64_t* block, const KeyHash& hash, uint32_t k) {
  if constexpr (kBlockWords == 1) {
    return TestWord64One<kConcurrent>(block, hash, k);
  } else {
    return TestBlock256One<kProbe, kConcurrent>(block, hash, k);
  }
}

template <uint32_t kBlockWords, Probe kProbe, bool kConcurrent>
HWY_INLINE bool SetShapeOne(uint64_t* block, const KeyHash& hash, uint32_t k) {
  if constexpr (kBlockWords == 1) {
    return SetWord64One<kConcurrent>(block, hash, k);
  } else {
    return SetBlock256One<kProbe, kConcurrent>(block, hash, k);
  }
}

template <uint32_t kBlockWords, Probe kProbe>
bool TestShapeBlock(const uint64_t* block, KeyHash hash, uint32_t k, bool concurrent) noexcept {
  return concurrent ? TestShapeOne<kBlockWords, kProbe, true>(block, hash, k)
                    : TestShapeOne<kBlockWords, kProbe, false>(block, hash, k);
}

template <uint32_t kBlockWords, Probe kProbe>
bool SetShapeBlock(uint64_t* block, KeyHash hash, uint32_t k, bool concurrent) noexcept {
  return concurrent ? SetShapeOne<kBlockWords, kProbe, true>(block, hash, k)
                    : SetShapeOne<kBlockWords, kProbe, false>(block, hash, k);
}

// The batch calls of block256 (kBlockWords 4) and word64 (1), in either concurrency mode.
template <bool kWrite, uint32_t kBlockWords, Probe kProbe, class Word>
HWY_INLINE size_t ProbeShapeBlocks(Word* words, const uint64_t* blocks, const KeyHash* hashes,
                                   size_t n, uint32_t k, bool concurrent, bool* answers,
                                   const uint64_t* prefetch, size_t prefetch_count) {
  const auto run = [&](auto mode) {
    return ProbeBlocks<kWrite, kBlockWords>(
        words, blocks, hashes, n, answers, prefetch, prefetch_count,
        [k](Word* block, const KeyHash& hash) {
          if constexpr (kWrite) {
            return SetShapeOne<kBlockWords, kProbe, decltype(mode)::value>(block, hash, k);
          } else {
            return TestShapeOne<kBlockWords, kProbe, decltype(mode)::value>(block, hash, k);
          }
        });
  };
  return concurrent ? run(std::true_type()) : run(std::false_type());
}

template <uint32_t kBlockWords, Probe kProbe>
size_t TestShapeBlocks(const uint64_t* words, const uint64_t* blocks, const KeyHash* hashes,
                       size_t n, uint32_t k, bool concurrent, bool* results,
                       const uint64_t* prefetch, size_t prefetch_count) noexcept {
  return ProbeShapeBlocks<false, kBlockWords, kProbe>(words, blocks, hashes, n, k, concurrent,
                                                      results, prefetch, prefetch_count);
}

template <uint32_t kBlockWords, Probe kProbe>
size_t SetShapeBlocks(uint64_t* words, const uint64_t* blocks, const KeyHash* hashes, size_t n,
                      uint32_t k, bool concurrent, bool* was_new, const uint64_t* prefetch,
                      size_t prefetch_count) noexcept {
  return ProbeShapeBlocks<true, kBlockWords, kProbe>(words, blocks, hashes, n, k, concurrent,
                                                     was_new, prefetch, prefetch_count);
}

}  // namespace bloomery::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // BLOOMERY_LIB_LAYOUTS_BLOCK_KERNELS_INL_H_
