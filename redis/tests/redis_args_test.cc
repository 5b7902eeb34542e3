// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// The Redis module's server-free parts: BF.RESERVE / BF.INSERT argument parsing (RedisBloom's
// syntax and replies), BFW.RESERVE / BFW.INSERT's, and SCANDUMP / LOADCHUNK chunking and
// reassembly.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bf_args.h"
#include "bloomery/scalable_filter.h"
#include "chunks.h"
#include "windowed_args.h"

namespace bloomery::redis {
namespace {

using Args = std::vector<std::string_view>;

std::string ReplyOf(const absl::Status& status) { return std::string(status.message()); }

TEST_CASE("BF.RESERVE takes error rate, capacity, EXPANSION 0..32768 and NONSCALING") {
  absl::StatusOr<FilterParams> plain = ParseReserve(Args{"0.001", "5000"});
  REQUIRE(plain.ok());
  CHECK(plain->error_rate == 0.001);
  CHECK(plain->capacity == 5000);
  CHECK(plain->expansion == 2);
  CHECK(plain->scaling);

  absl::StatusOr<FilterParams> grown = ParseReserve(Args{"0.01", "10", "expansion", "4"});
  REQUIRE(grown.ok());
  CHECK(grown->expansion == 4);
  absl::StatusOr<FilterParams> fixed = ParseReserve(Args{"0.01", "10", "NONSCALING"});
  REQUIRE(fixed.ok());
  CHECK_FALSE(fixed->scaling);
  // RedisBloom's whole range (issue #28): any growth from 1, and 0 is NONSCALING.
  for (const std::string_view expansion : {"1", "3", "10", "30000", "32768"}) {
    CAPTURE(expansion);
    absl::StatusOr<FilterParams> p = ParseReserve(Args{"0.01", "10", "EXPANSION", expansion});
    REQUIRE(p.ok());
    CHECK(p->expansion == std::stoul(std::string(expansion)));
    CHECK(p->scaling);
    CHECK(ScalableFilter::Create(ToScalableOptions(*p, 0)).ok());
  }
  for (const Args& args :
       {Args{"0.01", "10", "EXPANSION", "0"}, Args{"0.01", "10", "NONSCALING", "EXPANSION", "0"}}) {
    absl::StatusOr<FilterParams> p = ParseReserve(args);
    REQUIRE(p.ok());
    CHECK_FALSE(p->scaling);
    CHECK(ScalableFilter::Create(ToScalableOptions(*p, 0)).ok());
  }
}

TEST_CASE("BF.RESERVE refuses what RedisBloom refuses, with its replies") {
  CHECK(ReplyOf(ParseReserve(Args{"abc", "10"}).status()) == "ERR bad error rate");
  CHECK(ReplyOf(ParseReserve(Args{"nan", "10"}).status()) == "ERR bad error rate");
  CHECK(ReplyOf(ParseReserve(Args{"1", "10"}).status()) == "ERR (0 < error rate range < 1) ");
  CHECK(ReplyOf(ParseReserve(Args{"0", "10"}).status()) == "ERR (0 < error rate range < 1) ");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "ten"}).status()) == "ERR bad capacity");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "0"}).status()) ==
        "ERR (capacity should be larger than 0)");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "EXPANSION"}).status()) == "ERR no expansion");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "EXPANSION", "x"}).status()) ==
        "ERR bad expansion");
  for (const std::string_view expansion : {"-1", "32769", "9223372036854775807"}) {
    CAPTURE(expansion);
    CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "EXPANSION", expansion}).status()) ==
          "ERR expansion must be in the range [0, 32768]");
  }
  // NONSCALING wherever it is, then any EXPANSION but 0 (RedisBloom checks this before the range).
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "NONSCALING", "EXPANSION", "1"}).status()) ==
        "Nonscaling filters cannot expand");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "EXPANSION", "-1", "NONSCALING"}).status()) ==
        "Nonscaling filters cannot expand");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "NONSCALING", "EXPANSION", "2"}).status()) ==
        "Nonscaling filters cannot expand");
  CHECK(absl::IsFailedPrecondition(ParseReserve(Args{"0.01"}).status()));  // arity
}

TEST_CASE("BF.INSERT options in any order before ITEMS; defaults as RedisBloom's") {
  absl::StatusOr<InsertArgs> defaults = ParseInsert(Args{"ITEMS", "a", "b"});
  REQUIRE(defaults.ok());
  CHECK(defaults->params.capacity == 100);  // RedisBloom's documented defaults
  CHECK(defaults->params.error_rate == 0.01);
  CHECK(defaults->params.expansion == 2);
  CHECK(defaults->create);
  CHECK(defaults->first_item == 1);

  absl::StatusOr<InsertArgs> all = ParseInsert(
      Args{"NOCREATE", "CAPACITY", "1000", "ERROR", "0.05", "NONSCALING", "ITEMS", "x"});
  REQUIRE(all.ok());
  CHECK_FALSE(all->create);
  CHECK(all->params.capacity == 1000);
  CHECK(all->params.error_rate == 0.05);
  CHECK_FALSE(all->params.scaling);
  CHECK(all->first_item == 7);

  // "ITEMS" after ITEMS is an item, not an option.
  absl::StatusOr<InsertArgs> items = ParseInsert(Args{"ITEMS", "ITEMS", "NOCREATE"});
  REQUIRE(items.ok());
  CHECK(items->create);

  CHECK(absl::IsFailedPrecondition(ParseInsert(Args{"CAPACITY", "10"}).status()));
  CHECK(absl::IsFailedPrecondition(ParseInsert(Args{"ITEMS"}).status()));
  // RedisBloom's BF.INSERT texts have no "ERR ".
  for (const std::string_view rate : {"2", "0", "1", "-0.5", "x"}) {
    CAPTURE(rate);
    CHECK(ReplyOf(ParseInsert(Args{"ERROR", rate, "ITEMS", "a"}).status()) == "Bad error rate");
  }
  for (const std::string_view capacity : {"-1", "0", "x"}) {
    CAPTURE(capacity);
    CHECK(ReplyOf(ParseInsert(Args{"CAPACITY", capacity, "ITEMS", "a"}).status()) ==
          "Bad capacity");
  }
  for (const std::string_view expansion : {"-1", "32769", "x"}) {
    CAPTURE(expansion);
    CHECK(ReplyOf(ParseInsert(Args{"EXPANSION", expansion, "ITEMS", "a"}).status()) ==
          "Bad expansion");
  }
  absl::StatusOr<InsertArgs> three = ParseInsert(Args{"EXPANSION", "3", "ITEMS", "a"});
  REQUIRE(three.ok());
  CHECK(three->params.expansion == 3);
  absl::StatusOr<InsertArgs> zero = ParseInsert(Args{"EXPANSION", "0", "ITEMS", "a"});
  REQUIRE(zero.ok());
  CHECK_FALSE(zero->params.scaling);
  // BF.INSERT has no "cannot expand": NONSCALING wins.
  absl::StatusOr<InsertArgs> both = ParseInsert(Args{"NONSCALING", "EXPANSION", "4", "ITEMS", "a"});
  REQUIRE(both.ok());
  CHECK_FALSE(both->params.scaling);
  CHECK(ReplyOf(ParseInsert(Args{"WHAT", "ITEMS", "a"}).status()) ==
        "ERR unknown argument received");
}

TEST_CASE("LAYOUT l on BF.RESERVE and BF.INSERT: any case, every stage's layout") {
  // Without it, RedisBloom's filter: partitioned stages at its tightening 0.5.
  CHECK(ParseReserve(Args{"0.01", "10"})->layout == Layout::kPartitioned);
  CHECK(ParseInsert(Args{"ITEMS", "a"})->params.layout == Layout::kPartitioned);
  const ScalableOptions redisbloom = ToScalableOptions(*ParseReserve(Args{"0.01", "10"}), 0);
  CHECK(redisbloom.layout == Layout::kPartitioned);
  CHECK(redisbloom.tightening == kRedisBloomTightening);
  CHECK(ScalableFilter::StageFpr(redisbloom, 0) == doctest::Approx(0.005));
  CHECK(ScalableFilter::StageFpr(redisbloom, 1) == doctest::Approx(0.0025));
  absl::StatusOr<FilterParams> partitioned =
      ParseReserve(Args{"0.01", "10", "LAYOUT", "Partitioned"});
  REQUIRE(partitioned.ok());
  CHECK(partitioned->layout == Layout::kPartitioned);
  for (const BlockShape& shape : kBlockShapes) {
    CAPTURE(shape.name);
    absl::StatusOr<FilterParams> reserve = ParseReserve(Args{"0.01", "10", "LAYOUT", shape.name});
    REQUIRE(reserve.ok());
    CHECK(reserve->layout == shape.layout);
    CHECK(ToScalableOptions(*reserve, 0).layout == shape.layout);
    CHECK(ToScalableOptions(*reserve, 0).tightening == kDefaultTightening);
    absl::StatusOr<InsertArgs> insert = ParseInsert(Args{"LAYOUT", shape.name, "ITEMS", "a"});
    REQUIRE(insert.ok());
    CHECK(insert->params.layout == shape.layout);
    CHECK(insert->first_item == 3);
  }
  // Beside every RedisBloom option: the arity grows by LAYOUT's two words only.
  absl::StatusOr<FilterParams> all =
      ParseReserve(Args{"0.01", "10", "EXPANSION", "4", "layout", "WORD64", "NONSCALING"});
  REQUIRE_FALSE(all.ok());  // NONSCALING with EXPANSION 4, as RedisBloom
  absl::StatusOr<FilterParams> word =
      ParseReserve(Args{"0.01", "10", "layout", "WORD64", "EXPANSION", "4"});
  REQUIRE(word.ok());
  CHECK(word->layout == Layout::kWord64);
  CHECK(word->expansion == 4);
  CHECK(absl::IsFailedPrecondition(
      ParseReserve(Args{"0.01", "10", "EXPANSION", "4", "NONSCALING", "x"}).status()));
  for (const std::string_view bad : {"classic", "auto", "blocked64", ""}) {
    CAPTURE(bad);
    CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "LAYOUT", bad}).status()) ==
          "ERR bad layout (line512, block256, word64 or partitioned)");
    CHECK(ReplyOf(ParseInsert(Args{"LAYOUT", bad, "ITEMS", "a"}).status()) ==
          "ERR bad layout (line512, block256, word64 or partitioned)");
  }
  // A window's generations are blocked: BFW.* keeps the blocked shapes' list.
  Layout layout = Layout::kLine512;
  CHECK(ReplyOf(ParseLayoutValue("partitioned", &layout)) ==
        "ERR bad layout (line512, block256 or word64)");
  CHECK(ReplyOf(ParseReserve(Args{"0.01", "10", "LAYOUT"}).status()) == "ERR no layout");
  CHECK(absl::IsFailedPrecondition(ParseInsert(Args{"LAYOUT"}).status()));
}

TEST_CASE("numbers follow Redis's syntax") {
  long long integer = 0;
  double real = 0;
  CHECK(ParseInteger("-12", &integer));
  CHECK(integer == -12);
  CHECK_FALSE(ParseInteger(" 12", &integer));
  CHECK_FALSE(ParseInteger("012", &integer));
  CHECK_FALSE(ParseInteger("99999999999999999999", &integer));
  CHECK(ParseDouble("1e-3", &real));
  CHECK(real == 0.001);
  CHECK_FALSE(ParseDouble("1e999", &real));
  CHECK_FALSE(ParseDouble("0.1x", &real));
}

TEST_CASE("SCANDUMP slices cover an image once, in order, then end") {
  for (uint64_t total : {uint64_t{1}, uint64_t{7}, uint64_t{64}, uint64_t{65}}) {
    CAPTURE(total);
    uint64_t covered = 0;
    long long iterator = 1;
    for (int calls = 0; calls < 100; ++calls) {
      const DumpSlice slice = SliceForIterator(total, iterator, 8);
      if (slice.length == 0) {
        CHECK(slice.next_iterator == 0);
        break;
      }
      CHECK(slice.begin == covered);
      covered += slice.length;
      iterator = slice.next_iterator;
    }
    CHECK(covered == total);
  }
}

std::string Reassemble(const std::string& image, uint64_t chunk_bytes, uint64_t cap) {
  absl::StatusOr<ChunkAssembler> assembler =
      ChunkAssembler::Start(EncodeDumpPrefix(image.size()), cap);
  REQUIRE(assembler.ok());
  for (long long iterator = 1;;) {
    const DumpSlice slice = SliceForIterator(image.size(), iterator, chunk_bytes);
    if (slice.length == 0) break;
    REQUIRE(
        assembler
            ->Append(slice.next_iterator, std::string_view(image).substr(slice.begin, slice.length))
            .ok());
    iterator = slice.next_iterator;
  }
  CHECK(assembler->complete());
  return std::string(assembler->received());
}

TEST_CASE("a filter dumped in chunks and reassembled answers as the original") {
  ScalableOptions options;
  options.capacity = 1000;
  absl::StatusOr<ScalableFilter> filter = ScalableFilter::Create(options);
  REQUIRE(filter.ok());
  for (uint64_t key = 0; key < 3000; ++key) REQUIRE(filter->Insert(key) != InsertResult::kRefused);
  absl::StatusOr<std::string> image = filter->SaveToBytes();
  REQUIRE(image.ok());

  const std::string copy = Reassemble(*image, 1000, 0);
  absl::StatusOr<ScalableFilter> loaded = ScalableFilter::LoadFromBytes(copy);
  REQUIRE(loaded.ok());
  CHECK(loaded->stage_count() == filter->stage_count());
  for (uint64_t key = 0; key < 3000; ++key) REQUIRE(loaded->MayContain(key));
}

TEST_CASE("LOADCHUNK refuses a bad prefix, an oversized total, gaps, overlaps and overruns") {
  CHECK(absl::IsInvalidArgument(ChunkAssembler::Start("BLMRDUMP", 0).status()));
  CHECK(absl::IsInvalidArgument(ChunkAssembler::Start(std::string(16, 'x'), 0).status()));
  CHECK(absl::IsInvalidArgument(ChunkAssembler::Start(EncodeDumpPrefix(0), 0).status()));
  // The cap is checked on the announced size, before anything is allocated.
  CHECK(absl::IsResourceExhausted(
      ChunkAssembler::Start(EncodeDumpPrefix(uint64_t{1} << 62), 1 << 20).status()));

  absl::StatusOr<ChunkAssembler> assembler = ChunkAssembler::Start(EncodeDumpPrefix(10), 0);
  REQUIRE(assembler.ok());
  CHECK_FALSE(assembler->Append(3, "abcd").ok());  // would start before byte 0
  CHECK_FALSE(assembler->Append(9, "abcd").ok());  // a gap: starts at byte 4
  CHECK(assembler->received().empty());
  CHECK_FALSE(assembler->Append(0, "abcd").ok());
  CHECK_FALSE(assembler->Append(-3, "abcd").ok());
  CHECK_FALSE(assembler->Append(6, "").ok());
  CHECK(assembler->Append(7, "abcdef").ok());         // bytes 0..6
  CHECK_FALSE(assembler->Append(7, "abcdef").ok());   // the same chunk again
  CHECK_FALSE(assembler->Append(13, "ghijkl").ok());  // 6 + 6 > 10
  CHECK(assembler->received() == "abcdef");
  CHECK(assembler->Append(11, "ghij").ok());
  CHECK(assembler->complete());
  CHECK_FALSE(assembler->Append(12, "k").ok());

  CHECK(absl::IsInvalidArgument(ChunkAssembler::Resume(4, "12345", 0).status()));
  // Complete yet pending: no LOADCHUNK could finish it.
  CHECK(absl::IsInvalidArgument(ChunkAssembler::Resume(4, "1234", 0).status()));
  CHECK(ChunkAssembler::Resume(4, "123", 0).ok());
}

// A held allocator that counts what it holds (the module's is the server's, counted in
// used_memory), and refuses past a limit.
size_t g_held_bytes = 0;
size_t g_held_limit = 0;
std::unordered_map<void*, size_t> g_held_blocks;
void* CountingAllocate(size_t bytes) {
  if (g_held_bytes + bytes > g_held_limit) return nullptr;
  void* block = ::operator new(bytes);
  g_held_blocks[block] = bytes;
  g_held_bytes += bytes;
  return block;
}
void CountingRelease(void* block) {
  g_held_bytes -= g_held_blocks.at(block);
  g_held_blocks.erase(block);
  ::operator delete(block);
}

TEST_CASE("a pending image's bytes live in the held allocator, and its refusal is bad_alloc") {
  g_held_limit = 1 << 20;
  SetHeldAllocator({.allocate = CountingAllocate, .release = CountingRelease});
  {
    absl::StatusOr<ChunkAssembler> assembler =
        ChunkAssembler::Start(EncodeDumpPrefix(uint64_t{4} << 20), 0);
    REQUIRE(assembler.ok());
    const std::string chunk(100'000, 'x');
    REQUIRE(assembler->Append(100'001, chunk).ok());
    CHECK(g_held_bytes >= 100'000);
    absl::StatusOr<ChunkAssembler> resumed =
        ChunkAssembler::Resume(uint64_t{4} << 20, assembler->received(), 0);
    REQUIRE(resumed.ok());
    CHECK(g_held_bytes >= 200'000);
    // Past what the allocator grants: bad_alloc (the module drops the load), nothing appended.
    const std::string big(1 << 20, 'y');
    CHECK_THROWS_AS(static_cast<void>(assembler->Append(100'001 + (1 << 20), big)), std::bad_alloc);
    CHECK(assembler->received().size() == 100'000);
  }
  CHECK(g_held_bytes == 0);
  CHECK(g_held_blocks.empty());
  SetHeldAllocator({});
}

TEST_CASE("a window is an integer with ms, s, m, h or d, or bare milliseconds") {
  int64_t ms = 0;
  const std::pair<std::string_view, int64_t> kGood[] = {
      {"1500ms", 1500},    {"90s", 90'000}, {"30m", 1'800'000}, {"12h", 43'200'000},
      {"7d", 604'800'000}, {"250", 250},    {"2MS", 2}};
  for (const auto& good : kGood) {  // no structured binding: CAPTURE's lambda cannot name one
    CAPTURE(good.first);
    REQUIRE(ParseWindow(good.first, &ms));
    CHECK(ms == good.second);
  }
  for (std::string_view text : {"", "ms", "s", "0s", "-5m", "7x", "1.5h", " 7d", "7 d", "07d",
                                "36600000d", "9223372036854775807ms", "d7"}) {
    CAPTURE(text);
    CHECK_FALSE(ParseWindow(text, &ms));
  }
}

TEST_CASE("BFW.RESERVE and BFW.INSERT: a window, KEYS n as the capacity, generations, refresh") {
  absl::StatusOr<WindowedParams> params = ParseWindowedReserve(
      Args{"0.001", "5000", "window", "7d", "GENERATIONS", "8", "REFRESH", "KEEP_FIRST_SEEN"});
  REQUIRE(params.ok());
  CHECK(params->capacity == 5000);
  CHECK(params->error_rate == 0.001);
  CHECK(params->window_ms == 604'800'000);
  CHECK(params->generations == 8);
  CHECK(params->refresh == Refresh::kKeepFirstSeen);
  const WindowedOptions options = ToWindowedOptions(*params, 1 << 20);
  CHECK(options.window == std::chrono::hours(24 * 7));
  CHECK(options.memory.max_memory_bytes == 1 << 20);

  params = ParseWindowedReserve(Args{"0.01", "100", "KEYS", "100"});
  REQUIRE(params.ok());
  CHECK(params->window_ms == 0);
  CHECK(params->generations == 4);
  CHECK(params->refresh == Refresh::kOnInsert);
  CHECK(absl::IsFailedPrecondition(ParseWindowedReserve(Args{"0.01", "100", "KEYS"}).status()));
  CHECK(ParseWindowedReserve(Args{"0.01", "100", "KEYS", "99"}).status().message() ==
        "ERR a KEYS window holds its n keys: capacity must equal n");
  CHECK(ParseWindowedReserve(Args{"0.01", "100", "NONSCALING", "x"}).status().message() ==
        "ERR unknown argument");

  absl::StatusOr<WindowedInsertArgs> insert =
      ParseWindowedInsert(Args{"KEYS", "30", "NOCREATE", "ITEMS", "a", "KEYS"});
  REQUIRE(insert.ok());
  CHECK(insert->sized);
  CHECK_FALSE(insert->create);
  CHECK(insert->params.capacity == 30);
  CHECK(insert->first_item == 4);
  insert = ParseWindowedInsert(Args{"ITEMS", "a"});
  REQUIRE(insert.ok());
  CHECK_FALSE(insert->sized);
  CHECK(ParseWindowedInsert(Args{"CAPACITY", "0", "ITEMS", "a"}).status().message() ==
        "Bad capacity");
  CHECK(
      ParseWindowedInsert(Args{"CAPACITY", "10", "KEYS", "20", "ITEMS", "a"}).status().message() ==
      "ERR a KEYS window holds its n keys: capacity must equal n");
  CHECK(absl::IsFailedPrecondition(ParseWindowedInsert(Args{"WINDOW", "1h", "ITEMS"}).status()));
}

// Issue #26: LAYOUT l on BFW.RESERVE and BFW.INSERT, parsed as BF.RESERVE's (ParseLayoutValue).
TEST_CASE("LAYOUT l on BFW.RESERVE and BFW.INSERT: every generation's block") {
  CHECK(ParseWindowedReserve(Args{"0.01", "10", "KEYS", "10"})->layout == Layout::kLine512);
  CHECK(ToWindowedOptions(*ParseWindowedReserve(Args{"0.01", "10", "KEYS", "10"}), 0).layout ==
        Layout::kLine512);
  for (const BlockShape& shape : kBlockShapes) {
    CAPTURE(shape.name);
    absl::StatusOr<WindowedParams> reserve =
        ParseWindowedReserve(Args{"0.01", "10", "layout", shape.name, "WINDOW", "1h"});
    REQUIRE(reserve.ok());
    CHECK(reserve->layout == shape.layout);
    CHECK(ToWindowedOptions(*reserve, 0).layout == shape.layout);
    absl::StatusOr<WindowedInsertArgs> insert =
        ParseWindowedInsert(Args{"KEYS", "30", "LAYOUT", shape.name, "ITEMS", "a"});
    REQUIRE(insert.ok());
    CHECK(insert->params.layout == shape.layout);
    CHECK(insert->first_item == 5);
  }
  for (const std::string_view bad : {"partitioned", "auto", "fancy", ""}) {
    CAPTURE(bad);
    CHECK(ReplyOf(ParseWindowedReserve(Args{"0.01", "10", "KEYS", "10", "LAYOUT", bad}).status()) ==
          "ERR bad layout (line512, block256 or word64)");
    CHECK(ReplyOf(ParseWindowedInsert(Args{"LAYOUT", bad, "ITEMS", "a"}).status()) ==
          "ERR bad layout (line512, block256 or word64)");
  }
  CHECK(absl::IsFailedPrecondition(
      ParseWindowedReserve(Args{"0.01", "10", "KEYS", "10", "LAYOUT"}).status()));
}

}  // namespace
}  // namespace bloomery::redis
