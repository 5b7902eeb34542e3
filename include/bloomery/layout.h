// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// layout.h: the shapes a filter's bits can take (bloomery::Layout), their names, and the facts
// about each blocked shape that the planner, the filter, the kernels and the file format share.
//
// A blocked filter keeps all k bits of a key in one block chosen by the key's hash, split into
// slices, the key's k probes in k consecutive slices from a hash-chosen start (plan.h computes the
// FPR of each shape exactly). Three block sizes are offered because users choose between them:
//  - kLine512 (= kBlocked, the default): a 64-byte cache line of 8 x 64-bit slices (k <= 8) or
//    16 x 32-bit slices (k <= 16). The lowest FPR per bit of the three; two 256-bit loads on AVX2.
//  - kBlock256: a 32-byte block of 8 x 32-bit slices, k <= 8 (the split-block shape of Impala,
//    Parquet, Arrow and Boost.Bloom's fast_multiblock32): one 256-bit load on AVX2.
//  - kWord64: one 64-bit word of 8 x 8-bit slices, k <= 8 (register blocking, Putze, Sanders,
//    Singler 2007; Boost.Bloom's block<uint64_t, K>): the fewest instructions, and a concurrent
//    Insert is one atomic fetch_or, so exactly one of several threads inserting the same new key
//    is told "new". The exact sliced model chose 8 x 8 over 4 x 16 and 16 x 4 (8 x 8 gives the
//    lowest FPR from 9 bits/key up; at 10: docs/DESIGN.md, "Tried and rejected"). A new word64
//    or block256 filter hashes integer keys by MixKey unless told otherwise (ResolveIntegerHash,
//    options.h).
// Every filter still allocates whole 64-byte lines (WholeLineBytes, plan.h), so memory and file
// agree byte for byte; the block count (bits / block bits) is what chooses a key's block.
//
// Example:
//   bloomery::BlockedFilter::Create({.capacity = 1'000'000, .fpr = 0.02,
//                                    .layout = bloomery::Layout::kWord64});
#ifndef BLOOMERY_LAYOUT_H_
#define BLOOMERY_LAYOUT_H_

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

namespace bloomery {

enum class Layout : uint8_t {
  kBlocked = 1,  // BlockedFilter's 512-bit line (what every filter was before kBlock256).
  kLine512 = kBlocked,
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

// The facts of one blocked shape: the one place that states them.
struct BlockShape {
  Layout layout;
  std::string_view name;
  uint32_t block_bits;  // bits of a block: what fastrange chooses among
  uint32_t max_hashes;  // k <= this
  uint32_t file_code;   // the file header's layout field (docs/FORMAT.md); 0 is the line
};

// The layout field's retired code: word64 with the line's salted probes, before its probes became
// hash fields (word64 is code 3 since). Refused with a message of its own, never read as word64.
inline constexpr uint32_t kRetiredWord64FileCode = 2;

// Every blocked shape, fewest bits for an FPR first (so fastest last).
inline constexpr BlockShape kBlockShapes[] = {
    {Layout::kLine512, "line512", 512, 16, 0},
    {Layout::kBlock256, "block256", 256, 8, 1},
    {Layout::kWord64, "word64", 64, 8, 3},
};

// The shape of a blocked layout, or null (kPartitioned, kAuto, a value no layout has).
[[nodiscard]] constexpr const BlockShape* FindBlockShape(Layout layout) noexcept {
  for (const BlockShape& shape : kBlockShapes) {
    if (shape.layout == layout) return &shape;
  }
  return nullptr;
}

// log2 of the 64-bit words of a block of blocked `layout`: 3 (the line), 2 (block256), 0 (word64).
[[nodiscard]] constexpr uint32_t BlockShift(Layout layout) noexcept {
  return static_cast<uint32_t>(std::countr_zero(FindBlockShape(layout)->block_bits / 64));
}

// Slices of a block of `layout` for a filter with `hashes` probes: the line has 8 (64-bit) for
// k <= 8 and 16 (32-bit) above; block256 and word64 always have 8.
[[nodiscard]] constexpr uint32_t SlicesOf(Layout layout, uint32_t hashes) noexcept {
  return layout == Layout::kLine512 && hashes > 8 ? 16 : 8;
}

// The blocked shape whose file code (docs/FORMAT.md) is `code`, or null.
[[nodiscard]] constexpr const BlockShape* FindBlockShapeByFileCode(uint32_t code) noexcept {
  for (const BlockShape& shape : kBlockShapes) {
    if (shape.file_code == code) return &shape;
  }
  return nullptr;
}

// The file header's layout field of a chain of partitioned (ClassicFilter) stages: a scalable
// filter's stages may be partitioned (ScalableOptions::layout), which no blocked shape's code
// names. Valid in no other kind's file; a reader from before it refuses it as an unknown layout.
inline constexpr uint32_t kPartitionedFileCode = 4;

// The file header's layout field of `layout`: a blocked shape's code, or kPartitionedFileCode.
// `layout` is one a filter has (never kAuto).
[[nodiscard]] constexpr uint32_t FileCodeOf(Layout layout) noexcept {
  if (layout == Layout::kPartitioned) return kPartitionedFileCode;
  return FindBlockShape(layout)->file_code;
}

// The layout a file header's layout field names (FileCodeOf's inverse); nullopt for a code no
// layout has (the retired word64 code among them).
[[nodiscard]] constexpr std::optional<Layout> LayoutOfFileCode(uint32_t code) noexcept {
  if (code == kPartitionedFileCode) return Layout::kPartitioned;
  if (const BlockShape* shape = FindBlockShapeByFileCode(code)) return shape->layout;
  return std::nullopt;
}

// "line512", "block256", "word64", "partitioned", "auto".
[[nodiscard]] constexpr std::string_view LayoutName(Layout layout) noexcept {
  if (const BlockShape* shape = FindBlockShape(layout)) return shape->name;
  if (layout == Layout::kPartitioned) return "partitioned";
  if (layout == Layout::kAuto) return "auto";
  return "unknown";
}

// The layout LayoutName spells; "blocked" is the line's old name. nullopt for anything else.
[[nodiscard]] constexpr std::optional<Layout> ParseLayout(std::string_view name) noexcept {
  if (name == "blocked") return Layout::kLine512;
  for (Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64, Layout::kPartitioned,
                        Layout::kAuto}) {
    if (LayoutName(layout) == name) return layout;
  }
  return std::nullopt;
}

}  // namespace bloomery

#endif  // BLOOMERY_LAYOUT_H_
