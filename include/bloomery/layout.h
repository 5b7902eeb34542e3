// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// layout.h: the shapes a filter's bits can take (Layout), their names, and the facts about each
// blocked shape that the planner, the filter, the kernels and the file format share.
//
// A blocked filter keeps all k bits of a key in one block chosen by its hash, in k consecutive
// slices from a hash-chosen start (plan.h computes each shape's FPR exactly). How the bits come
// from the hash is the shape's probe (Probe). A shape and a probe are one stored layout
// (kBlockLayouts), named in the file by its code (docs/FORMAT.md, "Layout codes"). The blocked
// shapes:
//  - kLine512 (the default): a 64-byte cache line of 8 x 64-bit slices (k <= 8) or 16 x 32-bit
//    slices (k <= 16): the lowest FPR per bit of the three.
//  - kBlock256: a 32-byte block of 8 x 32-bit slices, k <= 8 (the split-block shape of Parquet
//    and Boost.Bloom's fast_multiblock32).
//  - kWord64: one 64-bit word of 8 x 8-bit slices, k <= 8 (Boost.Bloom's block<uint64_t, K>): the
//    fewest instructions, and a concurrent Insert is one atomic fetch_or, so exactly one of several
//    threads inserting one new key is told "new" (8 x 8 against 4 x 16 and 16 x 4: docs/DESIGN.md).
// A new word64 or block256 filter hashes integer keys by SeededMixKey unless told otherwise
// (ResolveIntegerHash, options.h). Every filter allocates whole 64-byte lines (WholeLineBytes,
// plan.h); the block count (bits / block bits) is what chooses a key's block.
//
// Example:
//   bloomery::BlockedFilter::Create({.capacity = 1'000'000, .fpr = 0.02,
//                                    .layout = bloomery::Layout::kWord64});
#ifndef BLOOMERY_LAYOUT_H_
#define BLOOMERY_LAYOUT_H_

#include <bit>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace bloomery {

enum class Layout : uint8_t {
  kLine512 = 1,      // BlockedFilter: a 64-byte cache line, the default.
  kPartitioned = 2,  // ClassicFilter: k slices over the whole array, k cache lines per key.
  kBlock256 = 3,     // BlockedFilter: a 256-bit block of 8 x 32-bit slices, k <= 8.
  kWord64 = 4,       // BlockedFilter: a 64-bit word of 8 x 8-bit slices, k <= 8.
  kAuto = 5,         // BlockedFilter: the planner chooses, by FilterOptions::layout_choice.
};

// What Layout::kAuto optimises for.
enum class LayoutChoice : uint8_t {
  // The blocked layout that meets the FPR with the fewest bits (ties: the faster one).
  kSmallest = 0,
  // The fastest blocked layout (kWord64, then kBlock256, then the line) whose plan fits
  // MemoryOptions::max_memory_bytes (0: this machine's memory).
  kFastest = 1,
};

// How a blocked filter turns a key's hash into its k bits inside its block: fixed at creation,
// kept in the file's layout field with the shape, and part of the filter's identity.
enum class Probe : uint8_t {
  // An option only: kFields, what every new filter takes.
  kLatest = 0,
  // Salted double hashing, probe i at the top bits of ((h1 + i*h2) * salt_i) mod 2^32: layout
  // codes 0 (the line) and 1 (block256), kept for files that hold them; never word64's.
  kSalted = 1,
  // Disjoint bit fields of the hash's low word, one per slice, and a start slice from its lowest
  // bits (detail/probe_common.h): codes 5 (the line; with k > 8 it probes as kSalted), 6
  // (block256) and 3 (word64, its only probe).
  kFields = 2,
};

// "salted", "fields", or "latest" (the option).
[[nodiscard]] constexpr std::string_view ProbeName(Probe probe) noexcept {
  if (probe == Probe::kSalted) return "salted";
  if (probe == Probe::kFields) return "fields";
  return "latest";
}

// The facts of one blocked shape.
struct BlockShape {
  Layout layout;
  std::string_view name;
  uint32_t block_bits;  // bits of a block: what fastrange chooses among
  uint32_t max_hashes;  // k <= this
};

// The layout field's retired code (word64 with the line's salted probes): refused with a message
// of its own, never read as word64.
inline constexpr uint32_t kRetiredWord64FileCode = 2;

// Every blocked shape, fewest bits for an FPR first (so fastest last).
inline constexpr BlockShape kBlockShapes[] = {
    {Layout::kLine512, "line512", 512, 16},
    {Layout::kBlock256, "block256", 256, 8},
    {Layout::kWord64, "word64", 64, 8},
};

// One blocked layout as stored and probed: a shape, its probe and the file's code for the two.
// Every row has its kernels (in this order), its scalar reference and its inline probe.
struct BlockLayout {
  Layout layout;
  Probe probe;
  uint32_t file_code;
};

// Every stored blocked layout. A reader that does not know a code refuses it as an unknown layout.
inline constexpr BlockLayout kBlockLayouts[] = {
    {Layout::kLine512, Probe::kSalted, 0},  {Layout::kBlock256, Probe::kSalted, 1},
    {Layout::kWord64, Probe::kFields, 3},   {Layout::kLine512, Probe::kFields, 5},
    {Layout::kBlock256, Probe::kFields, 6},
};

// The shape of a blocked layout, or null (kPartitioned, kAuto, a value no layout has).
[[nodiscard]] constexpr const BlockShape* FindBlockShape(Layout layout) noexcept {
  for (const BlockShape& shape : kBlockShapes) {
    if (shape.layout == layout) return &shape;
  }
  return nullptr;
}

// The probe a new filter takes when asked for `requested`: kLatest is kFields; an explicit one is
// kept (the planner refuses word64 with kSalted, which no code names).
[[nodiscard]] constexpr Probe ResolveProbe(Probe requested) noexcept {
  return requested == Probe::kLatest ? Probe::kFields : requested;
}

// The stored layout of blocked `layout` with `probe` (resolved), or null where none is.
[[nodiscard]] constexpr const BlockLayout* FindBlockLayout(Layout layout, Probe probe) noexcept {
  for (const BlockLayout& row : kBlockLayouts) {
    if (row.layout == layout && row.probe == ResolveProbe(probe)) return &row;
  }
  return nullptr;
}

// The stored blocked layout whose file code (docs/FORMAT.md) is `code`, or null.
[[nodiscard]] constexpr const BlockLayout* FindBlockLayoutByFileCode(uint32_t code) noexcept {
  for (const BlockLayout& row : kBlockLayouts) {
    if (row.file_code == code) return &row;
  }
  return nullptr;
}

// The place of stored layout `layout` with `probe` in kBlockLayouts.
[[nodiscard]] constexpr uint32_t BlockLayoutIndex(Layout layout, Probe probe) noexcept {
  return static_cast<uint32_t>(FindBlockLayout(layout, probe) - kBlockLayouts);
}

// fn.template operator()<kIndex>() for the stored layout at `index` in kBlockLayouts, kIndex a
// compile-time constant.
template <class Fn>
[[gnu::always_inline]] inline decltype(auto) VisitBlockLayout(uint32_t index, Fn&& fn) {
  constexpr uint32_t kLineFields = BlockLayoutIndex(Layout::kLine512, Probe::kFields);
  constexpr uint32_t kBlock256Fields = BlockLayoutIndex(Layout::kBlock256, Probe::kFields);
  constexpr uint32_t kWord64 = BlockLayoutIndex(Layout::kWord64, Probe::kFields);
  constexpr uint32_t kLineSalted = BlockLayoutIndex(Layout::kLine512, Probe::kSalted);
  constexpr uint32_t kBlock256Salted = BlockLayoutIndex(Layout::kBlock256, Probe::kSalted);
  static_assert(std::size(kBlockLayouts) == 5, "a new stored layout needs its case here");
  if (index == kLineFields) return fn.template operator()<kLineFields>();
  if (index == kBlock256Fields) return fn.template operator()<kBlock256Fields>();
  if (index == kWord64) return fn.template operator()<kWord64>();
  if (index == kLineSalted) return fn.template operator()<kLineSalted>();
  return fn.template operator()<kBlock256Salted>();
}

// log2 of the 64-bit words of a block: 3 (the line), 2 (block256), 0 (word64).
[[nodiscard]] constexpr uint32_t BlockShift(Layout layout) noexcept {
  return static_cast<uint32_t>(std::countr_zero(FindBlockShape(layout)->block_bits / 64));
}

// Slices of a block for `hashes` probes: the line's 8 (k <= 8) or 16; block256's and word64's 8.
[[nodiscard]] constexpr uint32_t SlicesOf(Layout layout, uint32_t hashes) noexcept {
  return layout == Layout::kLine512 && hashes > 8 ? 16 : 8;
}

// The layout field of a scalable filter whose stages are partitioned (ScalableOptions::layout):
// valid in no other kind's file.
inline constexpr uint32_t kPartitionedFileCode = 4;

// The layout field of `layout` (never kAuto) with `probe`: a stored layout's code, or
// kPartitionedFileCode.
[[nodiscard]] constexpr uint32_t FileCodeOf(Layout layout, Probe probe) noexcept {
  if (layout == Layout::kPartitioned) return kPartitionedFileCode;
  return FindBlockLayout(layout, probe)->file_code;
}

// The layout a layout field names (FileCodeOf's inverse; its probe in *probe when given), or
// nullopt for a code no layout has.
[[nodiscard]] constexpr std::optional<Layout> LayoutOfFileCode(uint32_t code,
                                                               Probe* probe = nullptr) noexcept {
  if (code == kPartitionedFileCode) {
    if (probe != nullptr) *probe = Probe::kLatest;
    return Layout::kPartitioned;
  }
  const BlockLayout* row = FindBlockLayoutByFileCode(code);
  if (row == nullptr) return std::nullopt;
  if (probe != nullptr) *probe = row->probe;
  return row->layout;
}

// "line512", "block256", "word64", "partitioned", "auto".
[[nodiscard]] constexpr std::string_view LayoutName(Layout layout) noexcept {
  if (const BlockShape* shape = FindBlockShape(layout)) return shape->name;
  if (layout == Layout::kPartitioned) return "partitioned";
  if (layout == Layout::kAuto) return "auto";
  return "unknown";
}

// The layout LayoutName spells, or "blocked" (the line's other name); nullopt for anything else.
[[nodiscard]] constexpr std::optional<Layout> ParseLayout(std::string_view name) noexcept {
  if (name == "blocked") return Layout::kLine512;
  for (Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64, Layout::kPartitioned,
                        Layout::kAuto}) {
    if (LayoutName(layout) == name) return layout;
  }
  return std::nullopt;
}

// The block shapes' names, then `extra`'s, as a message lists them: "line512, block256 or word64"
// (`last` joins the last two).
[[nodiscard]] inline std::string LayoutList(std::initializer_list<Layout> extra = {},
                                            std::string_view last = " or ") {
  std::string list;
  const size_t count = std::size(kBlockShapes) + extra.size();
  size_t i = 0;
  const auto add = [&](std::string_view name) {
    if (i != 0) list += i + 1 == count ? last : std::string_view(", ");
    list += name;
    ++i;
  };
  for (const BlockShape& shape : kBlockShapes) add(shape.name);
  for (Layout layout : extra) add(LayoutName(layout));
  return list;
}

}  // namespace bloomery

#endif  // BLOOMERY_LAYOUT_H_
