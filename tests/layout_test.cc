// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The blocked shapes (layout.h): names, the planner's promise and choice, each shape's measured FPR
// against its exact prediction, the exact "new" of a concurrent word64 insert, merges across
// shapes, and the file's layout field.
#include "bloomery/layout.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <iomanip>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bloomery/any_filter.h"
#include "bloomery/blocked_filter.h"
#include "bloomery/classic_filter.h"
#include "bloomery/counting_filter.h"
#include "bloomery/detail/absl_compat.h"
#include "bloomery/file.h"
#include "bloomery/plan.h"
#include "bloomery/scalable_filter.h"
#include "bloomery/windowed_filter.h"
#include "format/internal/format_codec.h"
#include "test_util.h"
#include "xxhash.h"

namespace bloomery {
namespace {

using testing::DistinctInts;
using testing::RacedInserts;
using testing::RaceSameKeys;
using testing::WithinBinomialBound;

constexpr Layout kShapes[] = {Layout::kLine512, Layout::kBlock256, Layout::kWord64};

BlockedFilter Make(const FilterOptions& options) {
  absl::StatusOr<BlockedFilter> f = BlockedFilter::Create(options);
  REQUIRE(f.ok());
  return *std::move(f);
}

TEST_CASE("layout names: one spelling each, and the line's old name") {
  CHECK(Layout::kLine512 == Layout::kLine512);
  for (Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64, Layout::kPartitioned,
                        Layout::kAuto}) {
    CAPTURE(LayoutName(layout));
    CHECK(ParseLayout(LayoutName(layout)) == layout);
  }
  CHECK(LayoutName(Layout::kLine512) == "line512");
  CHECK(LayoutName(Layout::kBlock256) == "block256");
  CHECK(LayoutName(Layout::kWord64) == "word64");
  CHECK(LayoutName(Layout::kPartitioned) == "partitioned");
  CHECK(ParseLayout("blocked") == Layout::kLine512);
  CHECK_FALSE(ParseLayout("word32").has_value());
  CHECK_FALSE(ParseLayout("").has_value());
  for (const BlockLayout& stored : kBlockLayouts) {
    CHECK(FindBlockLayoutByFileCode(stored.file_code) == &stored);
    CHECK(FindBlockLayout(stored.layout, stored.probe) == &stored);
    CHECK(FileCodeOf(stored.layout, stored.probe) == stored.file_code);
    Probe probe = Probe::kLatest;
    CHECK(LayoutOfFileCode(stored.file_code, &probe) == stored.layout);
    CHECK(probe == stored.probe);
  }
  // Every file written before kFields keeps its code and probe: 0 the line, 1 block256, 3 word64.
  CHECK(FindBlockLayoutByFileCode(0) == FindBlockLayout(Layout::kLine512, Probe::kSalted));
  CHECK(FindBlockLayoutByFileCode(1) == FindBlockLayout(Layout::kBlock256, Probe::kSalted));
  CHECK(FindBlockLayoutByFileCode(3) == FindBlockLayout(Layout::kWord64, Probe::kFields));
  CHECK(FindBlockLayout(Layout::kWord64, Probe::kSalted) == nullptr);
  // A new filter of every shape takes the newest probe.
  for (const BlockShape& shape : kBlockShapes) {
    CHECK(FindBlockLayout(shape.layout, Probe::kLatest)->probe == Probe::kFields);
  }
}

TEST_CASE("the planner's promise holds for every layout down to 1e-12, with the fewest blocks") {
  const uint64_t n = 1'000'000;
  for (Layout layout : kShapes) {
    const BlockShape& shape = *FindBlockShape(layout);
    for (double p : {0.1, 0.01, 1e-3, 1e-4, 1e-6, 1e-9, 1e-12}) {
      CAPTURE(shape.name);
      CAPTURE(p);
      absl::StatusOr<Plan> plan = PlanFor(n, p, layout);
      REQUIRE(plan.ok());
      CHECK(plan->layout == layout);
      CHECK(plan->bits % shape.block_bits == 0);
      CHECK(plan->blocks() == plan->bits / shape.block_bits);
      CHECK(plan->hashes <= shape.max_hashes);
      CHECK(plan->expected_fpr <= p);
      CHECK(plan->expected_fpr == PredictedFpr(layout, n, plan->bits, plan->hashes));
      // One block fewer breaks the promise at every k the layout allows.
      for (uint32_t k = 1; k <= shape.max_hashes; ++k) {
        CHECK(PredictedFpr(layout, n, plan->bits - shape.block_bits, k) > p);
      }
    }
  }
}

TEST_CASE("at 10 bits/key: each layout's k and exact FPR") {
  const uint64_t n = 1'000'000;
  struct Expected {
    Layout layout;
    uint32_t hashes;
    double fpr;
  };
  for (const Expected& e :
       {Expected{Layout::kLine512, 6, 0.009727}, Expected{Layout::kBlock256, 6, 0.01106},
        Expected{Layout::kWord64, 5, 0.01903}}) {
    absl::StatusOr<Plan> plan = PlanForSize(10 * n, 0, n, e.layout);
    REQUIRE(plan.ok());
    MESSAGE(LayoutName(e.layout) << ": k=" << plan->hashes << " fpr=" << plan->expected_fpr);
    CHECK(plan->hashes == e.hashes);
    CHECK(plan->expected_fpr == doctest::Approx(e.fpr).epsilon(1e-3));
  }
}

TEST_CASE("the planner chooses: smallest, or fastest within the memory cap") {
  const uint64_t n = 1'000'000;
  std::vector<absl::StatusOr<Plan>> plans = PlanEachLayout({.capacity = n, .fpr = 0.01});
  REQUIRE(plans.size() == std::size(kBlockShapes));
  for (size_t i = 0; i < plans.size(); ++i) {
    REQUIRE(plans[i].ok());
    CHECK(plans[i]->layout == kBlockShapes[i].layout);
  }
  // Fewer bits for the same promise the bigger the block.
  CHECK(plans[0]->bits < plans[1]->bits);
  CHECK(plans[1]->bits < plans[2]->bits);

  absl::StatusOr<Plan> smallest = PlanFilter({.capacity = n, .fpr = 0.01}, Layout::kAuto);
  REQUIRE(smallest.ok());
  CHECK(smallest->layout == Layout::kLine512);
  CHECK(smallest->bits == plans[0]->bits);

  FilterOptions fastest{.capacity = n, .fpr = 0.01, .layout_choice = LayoutChoice::kFastest};
  absl::StatusOr<Plan> plan = PlanFilter(fastest, Layout::kAuto);
  REQUIRE(plan.ok());
  CHECK(plan->layout == Layout::kWord64);
  // A cap that holds block256's plan but not word64's.
  fastest.memory.max_memory_bytes = WholeLineBytes(plans[1]->bits);
  plan = PlanFilter(fastest, Layout::kAuto);
  REQUIRE(plan.ok());
  CHECK(plan->layout == Layout::kBlock256);
  // Below every plan: the smallest, which Create then refuses with the usual memory message.
  fastest.memory.max_memory_bytes = 4096;
  plan = PlanFilter(fastest, Layout::kAuto);
  REQUIRE(plan.ok());
  CHECK(plan->layout == Layout::kLine512);
  CHECK(BlockedFilter::Create({.capacity = n,
                               .fpr = 0.01,
                               .layout = Layout::kAuto,
                               .layout_choice = LayoutChoice::kFastest,
                               .memory = {.max_memory_bytes = 4096}})
            .status()
            .code() == absl::StatusCode::kResourceExhausted);

  // k above 8 only the line takes: the others say so, and kAuto takes the line.
  plans = PlanEachLayout({.capacity = n, .fpr = 0.01, .hashes = 12});
  CHECK(plans[0].ok());
  CHECK(plans[1].status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(plans[2].status().code() == absl::StatusCode::kInvalidArgument);
  plan = PlanFilter(
      {.capacity = n, .fpr = 0.01, .hashes = 12, .layout_choice = LayoutChoice::kFastest},
      Layout::kAuto);
  REQUIRE(plan.ok());
  CHECK(plan->layout == Layout::kLine512);

  // A filter created with kAuto tells the layout chosen.
  BlockedFilter f = Make({.capacity = 1000,
                          .fpr = 0.01,
                          .layout = Layout::kAuto,
                          .layout_choice = LayoutChoice::kFastest});
  CHECK(f.layout() == Layout::kWord64);
}

// The measured FPR over absent keys against the exact FPR of the filter's bits (EstimatedFpr)
// and the planner's prediction, within 4 sigma.
void CheckFpr(Layout layout, uint64_t n, double fpr, bool concurrent) {
  BlockedFilter f =
      Make({.capacity = n, .fpr = fpr, .layout = layout, .memory = {.concurrent = concurrent}});
  REQUIRE(f.layout() == layout);
  const uint64_t queries = std::max<uint64_t>(2'000'000, static_cast<uint64_t>(400 / fpr));
  const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
  const double measured = static_cast<double>(hits) / static_cast<double>(queries);
  const double actual = f.EstimatedFpr();
  MESSAGE(LayoutName(layout) << " n=" << n << " p=" << fpr << " bits/key=" << f.plan().bits_per_key
                             << " k=" << f.hashes() << " planned=" << f.plan().expected_fpr
                             << " exact-now=" << actual << " measured=" << measured);
  CHECK(WithinBinomialBound(hits, queries, actual, 4.0));
  CHECK(actual == doctest::Approx(f.plan().expected_fpr).epsilon(0.05));
  CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr, 4.0));
  CHECK(f.plan().expected_fpr <= fpr);
}

TEST_CASE("each layout's measured FPR is within 4 sigma of its exact prediction") {
  for (Layout layout : {Layout::kBlock256, Layout::kWord64}) {
    CheckFpr(layout, 200'000, 0.1, false);
    CheckFpr(layout, 200'000, 0.02, true);
    CheckFpr(layout, 100'000, 0.001, false);
  }
}

TEST_CASE("at 10 bits/key, one line per layout of the table: exact against measured") {
  const uint64_t n = 1'000'000;
  const uint64_t queries = 10'000'000;
  for (Layout layout : kShapes) {
    BlockedFilter f = Make({.capacity = n, .bits = 10 * n, .layout = layout});
    const uint64_t hits = testing::FillAndCountFalsePositives(f, n, queries);
    MESSAGE(LayoutName(layout) << " k=" << f.hashes() << ": exact " << f.plan().expected_fpr * 100
                               << "%, measured " << static_cast<double>(hits) / queries * 100
                               << "%");
    CHECK(WithinBinomialBound(hits, queries, f.plan().expected_fpr, 4.0));
  }
}

TEST_CASE("no false negatives at every k, both modes; batches set the bits single keys set") {
  const std::vector<uint64_t> ints = DistinctInts(5000, 0);
  for (Layout layout : {Layout::kBlock256, Layout::kWord64}) {
    for (bool concurrent : {false, true}) {
      for (uint32_t k = 1; k <= 8; ++k) {
        CAPTURE(LayoutName(layout));
        CAPTURE(concurrent);
        CAPTURE(k);
        const FilterOptions o{
            .bits = 1 << 16, .hashes = k, .layout = layout, .memory = {.concurrent = concurrent}};
        BlockedFilter one = Make(o);
        BlockedFilter many = Make(o);
        size_t fresh = 0;
        for (uint64_t key : ints) fresh += one.Insert(key);
        auto was_new = std::make_unique<bool[]>(ints.size());
        CHECK(many.InsertMany(ints, std::span<bool>(was_new.get(), ints.size())) == fresh);
        CHECK(testing::Bytes(one) == testing::Bytes(many));
        for (uint64_t key : ints) REQUIRE(one.MayContain(key));
        CHECK(one.MayContainMany(ints) == ints.size());
        const std::vector<uint64_t> absent = DistinctInts(5000, 1);
        size_t single = 0;
        for (uint64_t key : absent) single += one.MayContain(key);
        CHECK(one.MayContainMany(absent) == single);
      }
    }
  }
  CHECK(BlockedFilter::Create({.capacity = 100, .hashes = 9, .layout = Layout::kWord64})
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("word64, concurrent: of two threads inserting the same new keys, one is told new" *
          doctest::test_suite("concurrency")) {
  const uint64_t n = uint64_t{1} << 20;
  BlockedFilter f =
      Make({.capacity = n, .fpr = 0.01, .layout = Layout::kWord64, .memory = {.concurrent = true}});
  const std::vector<uint64_t> keys = DistinctInts(n, 0);
  const RacedInserts raced = RaceSameKeys(keys, [&f](uint64_t key) { return f.Insert(key); });
  MESSAGE("keys told new twice: " << raced.twice
                                  << "; by neither (false positives): " << raced.never);
  CHECK(raced.twice == 0);
  // Never told new only where the key was already a false positive when first inserted.
  CHECK(static_cast<double>(raced.never) <= 0.01 * static_cast<double>(n));
  CHECK(f.MayContainMany(keys) == n);
}

TEST_CASE("filters of different layouts do not merge: a clear message") {
  BlockedFilter line = Make({.capacity = 1000, .bits = 1 << 14, .hashes = 4});
  BlockedFilter word =
      Make({.capacity = 1000, .bits = 1 << 14, .hashes = 4, .layout = Layout::kWord64});
  BlockedFilter block =
      Make({.capacity = 1000, .bits = 1 << 14, .hashes = 4, .layout = Layout::kBlock256});
  for (const absl::Status& s : {line.CheckCompatible(word), word.UnionWith(block),
                                block.IntersectWith(line), line.UnionWith(block)}) {
    CAPTURE(s);
    CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(s.message().find("different layouts") != absl::string_view::npos);
  }
  BlockedFilter other =
      Make({.capacity = 1000, .bits = 1 << 14, .hashes = 4, .layout = Layout::kWord64});
  (void)other.Insert(uint64_t{7});
  CHECK(word.UnionWith(other).ok());
  CHECK(word.MayContain(uint64_t{7}));
}

TEST_CASE("a classic filter refuses a layout") {
  absl::StatusOr<ClassicFilter> f =
      ClassicFilter::Create({.capacity = 1000, .fpr = 0.01, .layout = Layout::kWord64});
  CHECK(f.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(f.status().message().find("partitioned") != absl::string_view::npos);
}

uint32_t LayoutField(const std::string& file) {
  uint32_t code;
  std::memcpy(&code, file.data() + 128, 4);
  return code;
}

TEST_CASE("the file records the layout; a v1 line file is unchanged and loads as the line") {
  for (Layout layout : kShapes) {
    CAPTURE(LayoutName(layout));
    BlockedFilter f = Make({.capacity = 3000, .fpr = 0.01, .layout = layout});
    f.InsertMany(DistinctInts(3000, 0));
    absl::StatusOr<std::string> file = f.SaveToBytes();
    REQUIRE(file.ok());
    CHECK(LayoutField(*file) == FileCodeOf(layout, Probe::kFields));
    absl::StatusOr<BlockedFilter> loaded = BlockedFilter::LoadFromBytes(*file);
    REQUIRE(loaded.ok());
    CHECK(loaded->layout() == layout);
    CHECK(loaded->plan().bits == f.plan().bits);
    CHECK(testing::Bytes(*loaded) == testing::Bytes(f));
    CHECK(loaded->MayContainMany(DistinctInts(3000, 0)) == 3000);
    absl::StatusOr<AnyFilter> any = AnyFilter::LoadFromBytes(*file);
    REQUIRE(any.ok());
    CHECK(any->get_if<BlockedFilter>()->layout() == layout);
    absl::StatusOr<FileInfo> info = InspectBytes(*file);
    REQUIRE(info.ok());
  }
}

// The file with the layout field set to `code` and its checksums made valid again.
std::string WithLayoutField(std::string file, uint32_t code) {
  std::memcpy(file.data() + 128, &code, 4);
  std::vector<uint8_t> bytes(file.begin(), file.end());
  REQUIRE(detail::RecomputeChecksums(bytes));
  return std::string(bytes.begin(), bytes.end());
}

TEST_CASE("the validator holds the layout field to the kind and the geometry") {
  const std::string line = *Make({.capacity = 1000, .fpr = 0.01}).SaveToBytes();
  const std::string word =
      *Make({.capacity = 1000, .fpr = 0.01, .layout = Layout::kWord64}).SaveToBytes();
  const std::string classic = *ClassicFilter::Create({.capacity = 1000}).value().SaveToBytes();
  auto refused = [](const std::string& file, std::string_view why) {
    absl::Status s = BlockedFilter::LoadFromBytes(file).status();
    if (s.ok()) s = InspectBytes(file).status();
    CAPTURE(s);
    CHECK(s.code() == absl::StatusCode::kDataLoss);
    CHECK(s.message().find(detail::AbslView(why)) != absl::string_view::npos);
  };
  refused(WithLayoutField(line, 7), "unknown layout 7");
  // Partitioned stages are a scalable chain's alone: a blocked or classic file naming them is
  // refused, as is a chain of blocked stages read as partitioned (bits not whole slices, or
  // stages the partitioned planner would not make).
  refused(WithLayoutField(line, kPartitionedFileCode), "partitioned stages");
  refused(WithLayoutField(classic, kPartitionedFileCode), "partitioned stages");
  const std::string chain = *ScalableFilter::Create({.capacity = 1000}).value().SaveToBytes();
  const absl::Status as_partitioned =
      InspectBytes(WithLayoutField(chain, kPartitionedFileCode)).status();
  CHECK(as_partitioned.code() == absl::StatusCode::kDataLoss);
  // A word64 file of the retired code 2 (the line's salted probes): refused by name, never read
  // with code 3's probe (its keys would be lost).
  static_assert(FileCodeOf(Layout::kWord64, Probe::kFields) != kRetiredWord64FileCode);
  refused(WithLayoutField(word, kRetiredWord64FileCode), "rebuild the filter from its keys");
  // A word64 geometry read as block256: bits not a whole number of 256-bit blocks, or (when they
  // are) a planned fpr the block256 geometry does not predict.
  refused(WithLayoutField(word, FileCodeOf(Layout::kBlock256, Probe::kFields)), "");
  refused(WithLayoutField(word, FileCodeOf(Layout::kBlock256, Probe::kSalted)), "");
  // The line's geometry read as word64: k = 7 is more than word64 takes, or the fpr disagrees.
  refused(WithLayoutField(line, FileCodeOf(Layout::kWord64, Probe::kFields)), "");
  absl::Status s = InspectBytes(WithLayoutField(classic, 1)).status();
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(s.message().find("has one layout") != absl::string_view::npos);
}

TEST_CASE(
    "a scalable filter's stages take its layout; the file keeps it; mixed chains do not merge") {
  for (Layout layout :
       {Layout::kLine512, Layout::kBlock256, Layout::kWord64, Layout::kPartitioned}) {
    CAPTURE(LayoutName(layout));
    absl::StatusOr<ScalableFilter> made =
        ScalableFilter::Create({.capacity = 2000, .fpr = 0.01, .layout = layout});
    REQUIRE(made.ok());
    ScalableFilter& f = *made;
    const std::vector<uint64_t> keys = DistinctInts(20'000, 0);
    REQUIRE(f.InsertMany(keys).refused == 0);
    REQUIRE(f.stage_count() > 1);
    for (uint32_t i = 0; i < f.stage_count(); ++i) CHECK(f.stage(i).plan().layout == layout);
    CHECK(f.MayContainMany(keys) == keys.size());
    const uint64_t queries = 1'000'000;
    const size_t hits = f.MayContainMany(DistinctInts(queries, 1));
    CHECK(static_cast<double>(hits) / queries <= 0.01);
    absl::StatusOr<std::string> file = f.SaveToBytes();
    REQUIRE(file.ok());
    CHECK(LayoutField(*file) == (layout == Layout::kPartitioned
                                     ? kPartitionedFileCode
                                     : FileCodeOf(layout, Probe::kFields)));
    absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(*file);
    REQUIRE(loaded.ok());
    CHECK(loaded->options().layout == layout);
    CHECK(testing::Bytes(*loaded) == testing::Bytes(f));
  }
  ScalableFilter line = ScalableFilter::Create({.capacity = 2000, .fpr = 0.01}).value();
  ScalableFilter word =
      ScalableFilter::Create({.capacity = 2000, .fpr = 0.01, .layout = Layout::kWord64}).value();
  const absl::Status s = line.UnionWith(word);
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message().find("layout word64") != absl::string_view::npos);
  ScalableFilter partitioned =
      ScalableFilter::Create({.capacity = 2000, .fpr = 0.01, .layout = Layout::kPartitioned})
          .value();
  CHECK(line.UnionWith(partitioned).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(partitioned.UnionWith(line).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(ScalableFilter::Create({.capacity = 2000, .fpr = 0.01, .layout = Layout::kAuto})
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("AnyFilter: blocked and scalable filters take a layout; classic and counting refuse it") {
  for (FilterKind kind : {FilterKind::kBlocked, FilterKind::kScalable}) {
    absl::StatusOr<AnyFilter> f =
        AnyFilter::Create(kind, {.capacity = 1000, .fpr = 0.01, .layout = Layout::kWord64});
    REQUIRE(f.ok());
    CHECK(f->layout() == Layout::kWord64);
    absl::StatusOr<AnyFilter> loaded = AnyFilter::LoadFromBytes(*f->SaveToBytes());
    REQUIRE(loaded.ok());
    CHECK(loaded->layout() == Layout::kWord64);
  }
  for (FilterKind kind : {FilterKind::kClassic, FilterKind::kCounting}) {
    const absl::Status s =
        AnyFilter::Create(kind, {.capacity = 1000, .fpr = 0.01, .layout = Layout::kWord64})
            .status();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(s.message().find("takes no layout") != absl::string_view::npos);
  }
  CHECK(AnyFilter::Create(FilterKind::kClassic, {.capacity = 1000}).value().layout() ==
        Layout::kPartitioned);
  CHECK(AnyFilter::Create(FilterKind::kBlocked, {.capacity = 1000}).value().layout() ==
        Layout::kLine512);
}

TEST_CASE("golden: fixed keys and seed pin each new layout's bytes, under each integer hash") {
  // A change to a layout's probe changes these digests: that must be a deliberate format change.
  // kXxh3 named pins the probe alone; kMix (hash_id 2) and kSeededMix (hash_id 3), the default
  // (kAuto), the integer hashes on top of it. word64's
  // are its file code 3 probe's (hash fields, bloomery/detail/word64.h); code 2's are refused on
  // load. block256 under both probes: kSalted (layout code 1, every block256 file before kFields)
  // and kFields (code 6, a new filter's).
  struct Golden {
    Layout layout;
    Probe probe;
    IntegerHash integers;
    uint64_t digest;
  };
  constexpr Probe kSalted = Probe::kSalted;
  constexpr Probe kFields = Probe::kFields;
  for (const Golden& g :
       {Golden{Layout::kBlock256, kSalted, IntegerHash::kXxh3, 0xa89df2a1df76844full},
        Golden{Layout::kWord64, kFields, IntegerHash::kXxh3, 0x7b3aca8bc3f45770ull},
        Golden{Layout::kBlock256, kSalted, IntegerHash::kMix, 0xaa7d517d552f4319ull},
        Golden{Layout::kWord64, kFields, IntegerHash::kMix, 0xd82a2c0cbde6e3d7ull},
        Golden{Layout::kBlock256, kSalted, IntegerHash::kSeededMix, 0xe844b3699aa7ecd0ull},
        Golden{Layout::kWord64, kFields, IntegerHash::kSeededMix, 0xc5b00cc9b62d9088ull},
        Golden{Layout::kBlock256, kSalted, IntegerHash::kAuto, 0xe844b3699aa7ecd0ull},
        Golden{Layout::kWord64, kFields, IntegerHash::kAuto, 0xc5b00cc9b62d9088ull},
        Golden{Layout::kBlock256, kFields, IntegerHash::kXxh3, 0xabebc5a6cc797b7full},
        Golden{Layout::kBlock256, kFields, IntegerHash::kMix, 0xd88af0d3faee50b4ull},
        Golden{Layout::kBlock256, kFields, IntegerHash::kSeededMix, 0xad64568da0ec09ccull},
        Golden{Layout::kBlock256, kFields, IntegerHash::kAuto, 0xad64568da0ec09ccull}}) {
    BlockedFilter f = Make({.bits = 4096,
                            .hashes = 6,
                            .layout = g.layout,
                            .probe = g.probe,
                            .hashing = {.integer_hash = g.integers}});
    for (uint64_t i = 0; i < 100; ++i) (void)f.Insert(i);
    const uint64_t digest = XXH3_64bits(f.bytes().data(), f.bytes().size());
    MESSAGE(LayoutName(g.layout) << " " << ProbeName(g.probe) << " (" << IntegerHashName(g.integers)
                                 << ") digest " << std::hex << digest);
    CHECK(digest == g.digest);
  }
}

TEST_CASE("EstimatedFpr: a filled filter's exact FPR of its bits, pinned per layout and slicing") {
  // Values from the per-layout functions that BlockFpr replaced (to 1e-12): the slices each shape
  // reads (the line's 8 x 64 and 16 x 32 bits, block256's 8 x 32, word64's 8 x 8) must stay so.
  // word64's value is BlockFpr's over the bits of its file code 3 probe (the keys set other bits
  // than code 2's did; its slicing is the same).
  // String keys: their hash is XXH3's, whatever integer hash new filters default to.
  struct Pinned {
    Layout layout;
    uint32_t hashes;
    double fpr;
  };
  for (const Pinned& p : {Pinned{Layout::kLine512, 6, 0.0069365231651659087},
                          Pinned{Layout::kLine512, 12, 0.012187479653769038},
                          Pinned{Layout::kBlock256, 6, 0.0080014258210212574},
                          Pinned{Layout::kWord64, 5, 0.015176635235548019}}) {
    CAPTURE(LayoutName(p.layout));
    CAPTURE(p.hashes);
    // The salted probe's bits (the values were read from them); the slicing is every probe's.
    BlockedFilter f =
        Make({.bits = 1 << 16,
              .hashes = p.hashes,
              .layout = p.layout,
              .probe = p.layout == Layout::kWord64 ? Probe::kFields : Probe::kSalted});
    for (int i = 0; i < 6000; ++i) (void)f.Insert("key-" + std::to_string(i));
    MESSAGE(LayoutName(p.layout) << " k=" << p.hashes << " EstimatedFpr " << std::setprecision(17)
                                 << f.EstimatedFpr());
    CHECK(f.EstimatedFpr() == doctest::Approx(p.fpr).epsilon(1e-12));
  }
}

TEST_CASE(
    "an unset integer hash is the layout's: kSeededMix for word64 and block256, kXxh3 for the "
    "line") {
  static_assert(ResolveIntegerHash(IntegerHash::kAuto, Layout::kWord64) == IntegerHash::kSeededMix);
  static_assert(ResolveIntegerHash(IntegerHash::kAuto, Layout::kLine512) == IntegerHash::kXxh3);
  static_assert(ResolveIntegerHash(IntegerHash::kAuto, Layout::kBlock256) ==
                IntegerHash::kSeededMix);
  static_assert(ResolveIntegerHash(IntegerHash::kXxh3, Layout::kWord64) == IntegerHash::kXxh3);
  static_assert(ResolveIntegerHash(IntegerHash::kMix, Layout::kLine512) == IntegerHash::kMix);
  CHECK(HashOptions{}.integer_hash == IntegerHash::kAuto);
  // `expected`: the integer hash the filter, its file and its loaded copy report.
  auto check = [](const auto& filter, IntegerHash expected) {
    CHECK(filter.integer_hash() == expected);
    CHECK(filter.hasher().integers() == expected);
    absl::StatusOr<std::string> file = filter.SaveToBytes();
    REQUIRE(file.ok());
    absl::StatusOr<FileInfo> info = InspectBytes(*file);
    REQUIRE(info.ok());
    CHECK(info->integer_hash == expected);
    auto loaded = std::decay_t<decltype(filter)>::LoadFromBytes(*file);
    REQUIRE(loaded.ok());
    CHECK(loaded->integer_hash() == expected);
  };
  for (Layout layout : kShapes) {
    CAPTURE(LayoutName(layout));
    const IntegerHash unset =
        layout == Layout::kLine512 ? IntegerHash::kXxh3 : IntegerHash::kSeededMix;
    BlockedFilter f = Make({.capacity = 1000, .layout = layout});
    check(f, unset);
    // The keys are hashed as reported: a word64 or block256 filter's integers by SeededMixKey.
    (void)f.Insert(uint64_t{7});
    CHECK(f.MayContain(KeyHasher{kDefaultSeed, unset}(uint64_t{7})));
    check(ScalableFilter::Create({.capacity = 1000, .layout = layout}).value(), unset);
    check(WindowedFilter::Create({.capacity = 1000, .layout = layout}).value(), unset);
    const AnyFilter any =
        AnyFilter::Create(FilterKind::kBlocked, {.capacity = 1000, .layout = layout}).value();
    check(*any.get_if<BlockedFilter>(), unset);
    // An explicit choice is kept, whatever the layout.
    for (IntegerHash chosen : {IntegerHash::kXxh3, IntegerHash::kMix, IntegerHash::kSeededMix}) {
      check(Make({.capacity = 1000, .layout = layout, .hashing = {.integer_hash = chosen}}),
            chosen);
      check(ScalableFilter::Create(
                {.capacity = 1000, .layout = layout, .hashing = {.integer_hash = chosen}})
                .value(),
            chosen);
      check(WindowedFilter::Create(
                {.capacity = 1000, .layout = layout, .hashing = {.integer_hash = chosen}})
                .value(),
            chosen);
    }
  }
  // kAuto resolves by the layout the plan chose, not by the option.
  BlockedFilter fastest =
      Make({.capacity = 1000, .layout = Layout::kAuto, .layout_choice = LayoutChoice::kFastest});
  REQUIRE(fastest.layout() == Layout::kWord64);
  check(fastest, IntegerHash::kSeededMix);
  check(WindowedFilter::Create(
            {.capacity = 1000, .layout = Layout::kAuto, .layout_choice = LayoutChoice::kFastest})
            .value(),
        IntegerHash::kSeededMix);
  // The other kinds are neither word64 nor block256: their default is unchanged.
  check(ClassicFilter::Create({.capacity = 1000}).value(), IntegerHash::kXxh3);
  check(CountingFilter::Create({.capacity = 1000}).value(), IntegerHash::kXxh3);
}

TEST_CASE(
    "word64 and block256 under kMix and kSeededMix keep the planned FPR on consecutive and strided "
    "keys") {
  // As filter_test's case for the line: structured keys are where a multiplicative mix is
  // weakest; each set is inserted, then ten times as many keys of its shape that were not.
  // kSeededMix's multiplier comes from the seed: three seeds.
  constexpr uint64_t kKeys = 200'000, kQueries = 2'000'000;
  struct Hashing {
    IntegerHash integers;
    uint64_t seed;
  };
  for (Layout layout : {Layout::kWord64, Layout::kBlock256}) {
    for (const Hashing& h :
         {Hashing{IntegerHash::kMix, kDefaultSeed}, Hashing{IntegerHash::kSeededMix, kDefaultSeed},
          Hashing{IntegerHash::kSeededMix, 1}, Hashing{IntegerHash::kSeededMix, 2}}) {
      for (uint32_t shift : {0u, 1u, 20u, 32u, 42u}) {
        CAPTURE(LayoutName(layout));
        CAPTURE(IntegerHashName(h.integers));
        CAPTURE(h.seed);
        CAPTURE(shift);
        BlockedFilter f = Make({.capacity = kKeys,
                                .fpr = 0.01,
                                .layout = layout,
                                .hashing = {.seed = h.seed, .integer_hash = h.integers}});
        const uint64_t hits = testing::StructuredFalsePositives(f, kKeys, kQueries, shift);
        MESSAGE(LayoutName(layout)
                << " " << IntegerHashName(h.integers) << " seed " << h.seed << " shift " << shift
                << ": measured FPR " << static_cast<double>(hits) / kQueries << ", planned "
                << f.plan().expected_fpr);
        CHECK(WithinBinomialBound(hits, kQueries, f.plan().expected_fpr, 4.0));
      }
    }
  }
}

}  // namespace
}  // namespace bloomery
