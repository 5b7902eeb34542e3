// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_build_test.cc: the commands that make and change filter files: build, query, add, remove,
// merge and fold, for every kind and layout, under the file's lock and signals.
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_test_util.h"
#include "test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// build and query

TEST_CASE("build then query, for every kind: no false negatives, few false positives") {
  const std::vector<std::string> inserted = NumberedLines("https://in.example/", 0, 3000);
  const std::vector<std::string> absent = NumberedLines("https://out.example/", 0, 5000);
  const std::string inserted_path = WriteLines("build_in.txt", inserted);
  const std::string absent_path = WriteLines("build_out.txt", absent);
  for (const std::string kind : {"blocked", "classic", "scalable", "counting"}) {
    CAPTURE(kind);
    const std::string file = Scratch().File("built_" + kind + ".bloom");
    const Json summary =
        Build({"--kind", kind, "--capacity", "3000", "--fpr", "1e-4"}, file, inserted_path);
    CHECK(summary["kind"].string == kind);
    CHECK(summary["lines"].U64() == 3000);
    // A new key is reported present (not new) only on a false positive: a handful at most.
    CHECK(summary["new_keys"].U64() <= 3000);
    CHECK(summary["new_keys"].U64() >= 2990);
    CHECK(std::filesystem::file_size(file) > summary["memory_bytes"].U64());

    RunResult present = Run({"query", file, inserted_path});
    REQUIRE(present.exit_code == 0);
    CHECK(present.out == JoinLines(inserted));  // every line, in order

    RunResult maybe = Run({"query", file}, JoinLines(absent));
    REQUIRE(maybe.exit_code == 0);
    const std::vector<std::string> false_positives = SplitLines(maybe.out);
    const double planned = summary["planned_fpr"].Num();
    CHECK(planned <= 1e-4);
    CHECK(WithinBinomialBound(false_positives.size(), absent.size(), planned));
    CHECK(false_positives.size() <= 5);

    // --absent prints exactly the other lines; --count counts the present ones.
    RunResult certainly_absent = Run({"query", file, "--absent", absent_path});
    REQUIRE(certainly_absent.exit_code == 0);
    CHECK(SplitLines(certainly_absent.out).size() + false_positives.size() == absent.size());
    RunResult count_json = Run({"query", file, "--count", "--json", absent_path});
    REQUIRE(count_json.exit_code == 0);
    const Json counted = ParseJson(count_json.out);
    CHECK(counted["lines"].U64() == absent.size());
    CHECK(counted["present"].U64() == false_positives.size());
    CHECK(counted["absent"].U64() == absent.size() - false_positives.size());
  }
}

TEST_CASE("build: the filter is the library's, and the summary goes to stderr") {
  const std::string input = WriteLines("summary_in.txt", NumberedLines("k", 0, 1000));
  const std::string file = Scratch().File("summary.bloom");
  RunResult r = Run({"build", "--capacity", "1000", "--fpr", "0.01", "-o", file, input});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(Contains(r.err, "blocked filter"));
  CHECK(Contains(r.err, "1,000 lines inserted"));
  FilterOptions options;
  options.capacity = 1000;
  options.fpr = 0.01;
  absl::StatusOr<BlockedFilter> expected = BlockedFilter::Create(options);
  REQUIRE(expected.ok());
  absl::StatusOr<BlockedFilter> built = BlockedFilter::Load(file);
  REQUIRE(built.ok());
  CHECK(built->bits() == expected->bits());
  CHECK(built->hashes() == expected->hashes());
  CHECK(Contains(
      r.err, "planned FPR " + std::string(absl::StrFormat("%.3g", expected->plan().expected_fpr))));

  // --bits and --hashes give the geometry; --counter-bits 8 the counter width.
  const Json geometry =
      Build({"--bits", "2^16", "--hashes", "5"}, Scratch().File("g.bloom"), input);
  CHECK(geometry["memory_bytes"].U64() == 8192);
  absl::StatusOr<FileInfo> info = InspectFile(Scratch().File("g.bloom"));
  REQUIRE(info.ok());
  CHECK(info->hashes == 5);
  Build({"--kind", "counting", "--capacity", "1000", "--counter-bits", "8"},
        Scratch().File("c8.bloom"), input);
  absl::StatusOr<FileInfo> counting = InspectFile(Scratch().File("c8.bloom"));
  REQUIRE(counting.ok());
  CHECK(counting->kind == FilterKind::kCounting);
  CHECK(counting->counter_bits == 8);
}

TEST_CASE("build refuses, before reading any input, a size that cannot hold its capacity") {
  // A typo (4K for 4G): 4096 bits for a million keys. Refused with the numbers, before INPUT is
  // opened (it does not exist here: reading it first would say so instead), and nothing written.
  const std::string file = Scratch().File("holds_nothing.bloom");
  for (const std::string kind : {"blocked", "classic", "counting"}) {
    CAPTURE(kind);
    const RunResult r = Run({"build", "--kind", kind, "--capacity", "1M", "--bits", "4096",
                             "--hashes", "4", "-o", file, Scratch().File("no_such_input.txt")});
    CHECK(r.exit_code != 0);
    CHECK(Contains(r.err, "cannot hold 1000000 keys"));
    CHECK_FALSE(Contains(r.err, "no_such_input"));
    CHECK_FALSE(std::filesystem::exists(file));
  }
}

TEST_CASE("a filter sized by bits and hashes plans its FPR at the capacity it reports") {
  // 4096 bits, 4 hashes: 709 keys (4096 ln 2 / 4), and the FPR this geometry has at 709 keys,
  // which a build of 709 keys measures; its header keeps capacity 0 and fpr 0, as before.
  const std::string file = Scratch().File("geometry.bloom");
  const Json summary = Build({"--bits", "4096", "--hashes", "4"}, file,
                             WriteLines("geometry_in.txt", NumberedLines("g", 0, 709)));
  CHECK(summary["capacity"].U64() == 709);
  const double planned = summary["planned_fpr"].Num();
  CHECK(planned > 0.03);
  CHECK(planned < 0.12);
  const Json info = ParseJson(Run({"info", file, "--json"}).out);
  CHECK(info["capacity"].U64() == 709);
  CHECK(info["planned_fpr"].Num() == planned);
  const std::vector<std::string> absent = NumberedLines("absent", 0, 40000);
  RunResult maybe = Run({"query", file}, JoinLines(absent));
  REQUIRE(maybe.exit_code == 0);
  // 8 lines of 512 bits: one filter's FPR varies with its keys more than a sample's binomial
  // spread, so the bound is the filter's, about a quarter of the planned rate.
  const double measured = static_cast<double>(SplitLines(maybe.out).size()) / absent.size();
  MESSAGE("planned " << planned << ", measured " << measured);
  CHECK(measured > planned * 0.5);
  CHECK(measured < planned * 1.5);
}

TEST_CASE("input conventions: --strip-cr, non-UTF-8 file names in JSON, --max-memory") {
  const std::string crlf = Scratch().File("crlf.txt");
  WriteFile(crlf, "a\r\nb\r\n");
  const std::string keys = WriteLines("crlf_keys.txt", {"a", "b"});
  const std::string kept = Scratch().File("crlf_kept.bloom");
  const std::string stripped = Scratch().File("crlf_stripped.bloom");
  Build({"--capacity", "100", "--fpr", "1e-9"}, kept, crlf);
  Build({"--capacity", "100", "--fpr", "1e-9", "--strip-cr"}, stripped, crlf);
  CHECK(Run({"query", kept, keys, "--count"}).out == "0\n");  // "a\r" is not "a"
  CHECK(Run({"query", stripped, keys, "--count"}).out == "2\n");
  CHECK(Run({"query", stripped, "--strip-cr", crlf}).out == "a\nb\n");
  RunResult help = Run({"query", "--help"});
  CHECK(Contains(help.out, "--strip-cr"));
  CHECK(Contains(help.out, "different keys"));

  const std::string odd = Scratch().File("odd_\xff\xfe.bloom");
  RunResult built = Run({"build", "--capacity", "100", "-o", odd, keys, "--json"});
  REQUIRE(built.exit_code == 0);
  // The name's invalid UTF-8 is replaced (U+FFFD), never copied raw into the JSON.
  CHECK(built.out.find('\xff') == std::string::npos);
  CHECK(Contains(ParseJson(built.out)["file"].string, "odd_"));
  RunResult info = Run({"info", odd, "--json"});
  REQUIRE(info.exit_code == 0);
  CHECK(ParseJson(info.out)["kind"].string == "blocked");

  RunResult too_big = Run({"build", "--capacity", "1e6", "--max-memory", "64K", "-o",
                           Scratch().File("too_big.bloom"), keys});
  CHECK(too_big.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(Scratch().File("too_big.bloom")));
  const std::string big = Scratch().File("big.bloom");
  Build({"--capacity", "1e5"}, big, keys);
  CHECK(Run({"query", big, keys, "--max-memory", "1K"}).exit_code == 1);
  CHECK(Run({"query", big, keys, "--max-memory", "1M"}).exit_code == 0);
}

// ---------------------------------------------------------------------------------------------
// add, remove, merge, fold: read-modify-write under the file's lock; a save a signal interrupts

TEST_CASE("add inserts more lines into a file; query then finds both sets") {
  const std::vector<std::string> first = NumberedLines("first-", 0, 2000);
  const std::vector<std::string> second = NumberedLines("second-", 0, 1500);
  const std::string file = Scratch().File("add.bloom");
  Build({"--capacity", "4000", "--fpr", "1e-5"}, file, WriteLines("add1.txt", first));
  RunResult before = Run({"query", file, "--count"}, JoinLines(second));
  REQUIRE(before.exit_code == 0);
  CHECK(std::stoul(before.out) <= 5);  // not in yet
  CHECK(before.out ==
        std::to_string(SplitLines(Run({"query", file}, JoinLines(second)).out).size()) + "\n");

  RunResult added = Run({"add", file, "-", "--json"}, JoinLines(second));
  REQUIRE_MESSAGE(added.exit_code == 0, added.err);
  const Json summary = ParseJson(added.out);
  CHECK(summary["lines"].U64() == 1500);
  CHECK(summary["new_keys"].U64() >= 1495);
  std::vector<std::string> both = first;
  both.insert(both.end(), second.begin(), second.end());
  RunResult after = Run({"query", file}, JoinLines(both));
  REQUIRE(after.exit_code == 0);
  CHECK(after.out == JoinLines(both));
  RunResult text = Run({"add", file}, JoinLines(second));
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.err, "1,500 lines inserted, 0 new keys"));
}

TEST_CASE("read-modify-write commands take the file's lock: a second writer waits, loses nothing") {
  // Two `add`s of one file used to both load it, and the second save dropped the first's keys.
  const std::string file = Scratch().File("locked.bloom");
  const std::string state = Scratch().File("locked.state");
  const std::vector<std::string> ours = NumberedLines("held-", 0, 1000);
  const std::vector<std::string> theirs = NumberedLines("waiting-", 0, 1000);
  Build({"--capacity", "10000", "--fpr", "1e-5"}, file, WriteLines("locked0.txt", {"first"}));
  REQUIRE(Run({"dedupe", "--state", state}, "first\n").exit_code == 0);
  {
    absl::StatusOr<FileLock> lock = LockForUpdate(file, LockWait::kFailFast);
    REQUIRE(lock.ok());
    absl::StatusOr<FileLock> state_lock = LockForUpdate(state, LockWait::kFailFast);
    REQUIRE(state_lock.ok());
    const std::string holder = "locked by pid " + std::to_string(getpid());
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"add", file, "--no-wait"},
          std::vector<std::string>{"merge", "-o", file, file, file, "--no-wait"},
          std::vector<std::string>{"dedupe", "--state", state, "--no-wait"}}) {
      RunResult refused = Run(args, JoinLines(theirs));
      CHECK_MESSAGE(refused.exit_code == 1, args[0]);
      CHECK_MESSAGE(Contains(refused.err, holder), refused.err);
    }

    Spawned waiting = Spawn({"add", file}, JoinLines(theirs));
    // It must wait for us (a slow machine can only make this pass, never fail).
    usleep(300'000);
    int status = 0;
    REQUIRE_MESSAGE(waitpid(waiting.pid, &status, WNOHANG) == 0,
                    "add finished while another process held the file's lock");
    // Our own load-modify-save under the lock, as a service would do it.
    absl::StatusOr<BlockedFilter> filter = BlockedFilter::Load(file);
    REQUIRE(filter.ok());
    for (const std::string& key : ours) (void)filter->Insert(key);
    REQUIRE(filter->Save(file).ok());
    *lock = FileLock();  // release: the waiter now locks and loads the file we saved
    RunResult done = Wait(waiting);
    REQUIRE_MESSAGE(done.exit_code == 0, done.err);
  }
  std::vector<std::string> all = {"first"};
  all.insert(all.end(), ours.begin(), ours.end());
  all.insert(all.end(), theirs.begin(), theirs.end());
  RunResult absent = Run({"query", file, "--absent"}, JoinLines(all));
  REQUIRE(absent.exit_code == 0);
  CHECK(absent.out.empty());  // no false negatives: every writer's keys are there
}

TEST_CASE("remove erases lines from a counting filter, and is refused for other kinds") {
  const std::vector<std::string> keep = NumberedLines("keep-", 0, 1500);
  const std::vector<std::string> drop = NumberedLines("drop-", 0, 1500);
  std::vector<std::string> all = keep;
  all.insert(all.end(), drop.begin(), drop.end());
  const std::string all_path = WriteLines("remove_all.txt", all);
  const std::string drop_path = WriteLines("remove_drop.txt", drop);
  const std::string file = Scratch().File("counting.bloom");
  Build({"--kind", "counting", "--capacity", "3000", "--fpr", "1e-6"}, file, all_path);

  RunResult removed = Run({"remove", file, drop_path, "--json"});
  REQUIRE_MESSAGE(removed.exit_code == 0, removed.err);
  const Json summary = ParseJson(removed.out);
  CHECK(summary["lines"].U64() == 1500);
  CHECK(summary["erased"].U64() == 1500);
  CHECK(summary["not_found"].U64() == 0);
  CHECK(summary["estimated_count"].Num() == doctest::Approx(1500));

  RunResult present = Run({"query", file, all_path});
  REQUIRE(present.exit_code == 0);
  // At FPR 1e-6 no erased key is expected to collide with the kept ones: exactly `keep` remains.
  CHECK(present.out == JoinLines(keep));

  // Lines never inserted are (almost all) not found, and say so on stderr.
  RunResult again = Run({"remove", file, drop_path});
  REQUIRE(again.exit_code == 0);
  CHECK(Contains(again.err, "1,500 lines: 0 erased, 1,500 not found"));

  const std::string blocked = Scratch().File("not_counting.bloom");
  Build({"--capacity", "3000"}, blocked, all_path);
  const std::string bytes_before = ReadFile(blocked);
  RunResult refused = Run({"remove", blocked, drop_path});
  CHECK(refused.exit_code == 1);
  CHECK(Contains(refused.err, "only counting filters"));
  CHECK(ReadFile(blocked) == bytes_before);
}

TEST_CASE("merge writes the union of compatible files and refuses incompatible ones") {
  const std::vector<std::string> a = NumberedLines("a-", 0, 1000);
  const std::vector<std::string> b = NumberedLines("b-", 0, 1000);
  const std::vector<std::string> c = NumberedLines("c-", 0, 1000);
  const std::vector<std::string> flags = {"--capacity", "4000", "--fpr", "1e-5"};
  Build(flags, Scratch().File("ma.bloom"), WriteLines("ma.txt", a));
  Build(flags, Scratch().File("mb.bloom"), WriteLines("mb.txt", b));
  Build(flags, Scratch().File("mc.bloom"), WriteLines("mc.txt", c));
  const std::string out = Scratch().File("merged.bloom");
  RunResult merged = Run({"merge", "-o", out, Scratch().File("ma.bloom"),
                          Scratch().File("mb.bloom"), Scratch().File("mc.bloom"), "--json"});
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  CHECK(ParseJson(merged.out)["inputs"].U64() == 3);
  std::vector<std::string> all = a;
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), c.begin(), c.end());
  RunResult union_query = Run({"query", out}, JoinLines(all));
  REQUIRE(union_query.exit_code == 0);
  CHECK(union_query.out == JoinLines(all));
  // The inputs are untouched: A alone does not hold B.
  RunResult a_only = Run({"query", Scratch().File("ma.bloom"), "--count"}, JoinLines(b));
  CHECK(std::stoul(a_only.out) <= 5);

  // Another geometry, another kind: exit 1 with the reason, and no output file.
  Build({"--capacity", "9000"}, Scratch().File("other_size.bloom"), WriteLines("mo.txt", a));
  Build({"--kind", "classic", "--capacity", "4000", "--fpr", "1e-5"},
        Scratch().File("other_kind.bloom"), WriteLines("mo.txt", a));
  const std::string not_written = Scratch().File("not_merged.bloom");
  RunResult size = Run(
      {"merge", "-o", not_written, Scratch().File("ma.bloom"), Scratch().File("other_size.bloom")});
  CHECK(size.exit_code == 1);
  CHECK(Contains(size.err, "incompatible"));
  RunResult kind = Run(
      {"merge", "-o", not_written, Scratch().File("ma.bloom"), Scratch().File("other_kind.bloom")});
  CHECK(kind.exit_code == 1);
  CHECK(Contains(kind.err, "cannot merge a classic filter into a blocked filter"));
  CHECK_FALSE(std::filesystem::exists(not_written));
}

TEST_CASE("fold shrinks an over-sized blocked or classic file within --fpr, refuses other kinds") {
  const std::vector<std::string> lines = NumberedLines("https://fold.example/", 0, 5000);
  const std::string big = Scratch().File("fold_big.bloom");
  const Json built =
      Build({"--capacity", "1M", "--fpr", "0.01"}, big, WriteLines("fold.txt", lines));
  const std::string small = Scratch().File("fold_small.bloom");
  RunResult fold = Run({"fold", "--fpr", "0.01", big, "-o", small, "--json"});
  REQUIRE_MESSAGE(fold.exit_code == 0, fold.err);
  const Json report = ParseJson(fold.out);
  CHECK(report["folded_from_memory_bytes"].U64() == built["memory_bytes"].U64());
  CHECK(report["memory_bytes"].U64() * 32 <= built["memory_bytes"].U64());
  CHECK(report["estimated_fpr"].Num() <= 0.01);
  CHECK(report["planned_fpr"].Num() <= 0.01);
  CHECK(report["capacity"].U64() >= lines.size());
  // Every line is still present, and the folded file is a file like any other.
  RunResult query = Run({"query", small}, JoinLines(lines));
  REQUIRE(query.exit_code == 0);
  CHECK(query.out == JoinLines(lines));
  RunResult info = Run({"info", small});
  REQUIRE_MESSAGE(info.exit_code == 0, info.err);
  // The text summary names both sizes; folding in place works under the file's lock.
  RunResult text = Run({"fold", "--fpr", "0.01", big, "-o", big});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(Contains(text.err, "folded"));
  CHECK(Contains(text.err, "FPR then about"));
  CHECK(std::filesystem::file_size(big) == std::filesystem::file_size(small));

  // Already above the FPR asked for, another kind, a bad FPR: exit 1 or 2 with the reason, and
  // nothing written.
  const std::string none = Scratch().File("fold_none.bloom");
  RunResult above = Run({"fold", "--fpr", "1e-9", small, "-o", none});
  CHECK(above.exit_code == 1);
  CHECK(Contains(above.err, "already"));
  const std::string scalable = Scratch().File("fold_scalable.bloom");
  Build({"--kind", "scalable", "--capacity", "1000"}, scalable, WriteLines("fold.txt", lines));
  RunResult kind = Run({"fold", "--fpr", "0.01", scalable, "-o", none});
  CHECK(kind.exit_code == 1);
  CHECK(Contains(kind.err, "only blocked and classic filters fold"));
  // A classic filter folds by halving its slices.
  const std::string classic = Scratch().File("fold_classic.bloom");
  const Json classic_built = Build({"--kind", "classic", "--capacity", "1M", "--fpr", "0.01"},
                                   classic, WriteLines("fold.txt", lines));
  const std::string classic_small = Scratch().File("fold_classic_small.bloom");
  RunResult classic_fold = Run({"fold", "--fpr", "0.01", classic, "-o", classic_small, "--json"});
  REQUIRE_MESSAGE(classic_fold.exit_code == 0, classic_fold.err);
  const Json classic_report = ParseJson(classic_fold.out);
  CHECK(classic_report["kind"].string == "classic");
  CHECK(classic_report["memory_bytes"].U64() * 32 <= classic_built["memory_bytes"].U64());
  CHECK(classic_report["estimated_fpr"].Num() <= 0.01);
  RunResult classic_query = Run({"query", classic_small}, JoinLines(lines));
  REQUIRE(classic_query.exit_code == 0);
  CHECK(classic_query.out == JoinLines(lines));
  RunResult bad = Run({"fold", "--fpr", "2", small, "-o", none});
  CHECK(bad.exit_code != 0);
  CHECK(Contains(bad.err, "(0, 1)"));
  CHECK_FALSE(std::filesystem::exists(none));
}

TEST_CASE("merge unites scalable files that both grew, reporting the bound the union keeps") {
  const std::vector<std::string> a = NumberedLines("worker-a-", 0, 1200);
  const std::vector<std::string> b = NumberedLines("worker-b-", 0, 1200);
  const std::vector<std::string> flags = {"--kind", "scalable", "--capacity",
                                          "100",    "--fpr",    "0.01"};
  Build(flags, Scratch().File("wa.bloom"), WriteLines("wa.txt", a));
  Build(flags, Scratch().File("wb.bloom"), WriteLines("wb.txt", b));
  const std::string out = Scratch().File("workers.bloom");
  RunResult merged =
      Run({"merge", "-o", out, Scratch().File("wa.bloom"), Scratch().File("wb.bloom"), "--json"});
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  const Json report = ParseJson(merged.out);
  // Each grew 4 stages (100 + 200 + 400 + 800); full disjoint stages are kept side by side.
  CHECK(report["stages"].U64() > 4);
  CHECK(report["planned_fpr"].number > 0.01);
  CHECK(report["planned_fpr"].number < 0.02);
  std::vector<std::string> all = a;
  all.insert(all.end(), b.begin(), b.end());
  RunResult query = Run({"query", out}, JoinLines(all));
  REQUIRE(query.exit_code == 0);
  CHECK(query.out == JoinLines(all));
  const Json info = ParseJson(Run({"info", out, "--json"}).out);
  CHECK(info["stages"].U64() == report["stages"].U64());
  // info states the bound the union keeps, as merge did, not its header's P.
  CHECK(info["planned_fpr"].number == report["planned_fpr"].number);
  const RunResult text = Run({"info", out});
  REQUIRE(text.exit_code == 0);
  CHECK(Contains(text.out, absl::StrFormat("%.3g", report["planned_fpr"].number)));
}

TEST_CASE("fold --max-memory caps the folded filter only; --max-load-memory caps FILE's load") {
  const std::vector<std::string> lines = NumberedLines("https://fold-cap.example/", 0, 2000);
  const std::string big = Scratch().File("fold_cap_big.bloom");
  const Json built =
      Build({"--capacity", "1M", "--fpr", "0.01"}, big, WriteLines("fold_cap.txt", lines));
  const uint64_t input_bytes = built["memory_bytes"].U64();
  const std::string small = Scratch().File("fold_cap_small.bloom");
  RunResult uncapped = Run({"fold", "--fpr", "0.01", big, "-o", small, "--json"});
  REQUIRE_MESSAGE(uncapped.exit_code == 0, uncapped.err);
  const uint64_t result_bytes = ParseJson(uncapped.out)["memory_bytes"].U64();
  REQUIRE(result_bytes * 64 <= input_bytes);  // several halvings, each over the result's size
  std::filesystem::remove(small);

  // A cap of exactly the result's size: the fold goes through, the halvings on the way (from
  // input_bytes / 2 down) not counted against it.
  RunResult capped = Run({"fold", "--fpr", "0.01", big, "-o", small, "--json", "--max-memory",
                          std::to_string(result_bytes)});
  REQUIRE_MESSAGE(capped.exit_code == 0, capped.err);
  CHECK(ParseJson(capped.out)["memory_bytes"].U64() == result_bytes);
  RunResult query = Run({"query", small}, JoinLines(lines));
  REQUIRE(query.exit_code == 0);
  CHECK(query.out == JoinLines(lines));
  // One byte less: refused (exit 1), naming the result's size, and nothing written.
  const std::string none = Scratch().File("fold_cap_none.bloom");
  RunResult over = Run(
      {"fold", "--fpr", "0.01", big, "-o", none, "--max-memory", std::to_string(result_bytes - 1)});
  CHECK(over.exit_code == 1);
  CHECK(Contains(over.err, absl::StrCat(result_bytes, " bytes")));
  CHECK_FALSE(Contains(over.err, absl::StrCat(input_bytes / 2, " bytes")));
  CHECK_FALSE(std::filesystem::exists(none));
  // The load has a cap of its own.
  RunResult load = Run({"fold", "--fpr", "0.01", big, "-o", none, "--max-load-memory",
                        std::to_string(input_bytes - 1)});
  CHECK(load.exit_code == 1);
  CHECK(Contains(load.err, absl::StrCat(input_bytes)));
  CHECK_FALSE(std::filesystem::exists(none));
  RunResult both = Run({"fold", "--fpr", "0.01", big, "-o", none, "--max-load-memory",
                        std::to_string(input_bytes), "--max-memory", std::to_string(result_bytes)});
  REQUIRE_MESSAGE(both.exit_code == 0, both.err);
  // --help says what each caps.
  RunResult help = Run({"fold", "--help"});
  CHECK(Contains(help.out, "--max-load-memory"));
  CHECK(Contains(help.out, "only the result counts"));
}

TEST_CASE("SIGTERM or SIGINT during a save removes its temp file and leaves the old file whole") {
  const char* shim = std::getenv("BLOOMERY_FSYNC_STALL");
  REQUIRE_MESSAGE(shim != nullptr, "set BLOOMERY_FSYNC_STALL to the fsync_stall shim");
  const char* asan = std::getenv("ASAN_OPTIONS");
  // The shim is preloaded ahead of the sanitizer runtime in the ASan build.
  const std::string asan_options =
      std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0";
  const std::string input = WriteLines("signal_in.txt", NumberedLines("s", 0, 20000));
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    TempDir dir;
    const std::string file = dir.File("f.bloom");
    Build({"--capacity", "1000"}, file, WriteLines("signal_old.txt", {"old"}));
    const std::string before = ReadFile(file);
    const std::string fifo = dir.File("stall.fifo");
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    // Opened before the child exists: the child's open for writing then never blocks.
    const int stall = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    REQUIRE(stall >= 0);
    Spawned child = Spawn({"build", "--capacity", "100000", "-o", file, input}, "", "",
                          {"LD_PRELOAD=" + std::string(shim), "BLOOMERY_STALL_FIFO=" + fifo,
                           "ASAN_OPTIONS=" + asan_options});
    // The child writes one byte once its temp file is complete and it is stalled in fsync (the
    // minute only bounds a broken run; nothing here is timed).
    pollfd ready{stall, POLLIN, 0};
    REQUIRE(poll(&ready, 1, 60'000) == 1);
    char byte = 0;
    REQUIRE(read(stall, &byte, 1) == 1);
    close(stall);
    std::vector<std::string> temps;
    for (const auto& entry : std::filesystem::directory_iterator(dir.File(""))) {
      const std::string name = entry.path().filename().string();
      if (name.starts_with(".f.bloom.tmp.")) temps.push_back(name);
    }
    REQUIRE(temps.size() == 1);  // the save was under way
    REQUIRE(kill(child.pid, sig) == 0);
    const RunResult r = Wait(child);
    CHECK(r.exit_code == 128 + sig);  // still killed by the signal
    CHECK_FALSE(std::filesystem::exists(dir.File(temps[0])));
    CHECK(ReadFile(file) == before);
  }
}

// ---------------------------------------------------------------------------------------------
// windowed files

// Issue #30: build --window-keys N asked for --capacity, and refused it with --window-keys.
TEST_CASE("build --window-keys N makes a windowed file that query and info read") {
  const std::string file = Scratch().File("window_keys_build.bloom");
  const std::string input = WriteLines("window_keys_in.txt", {"a", "b", "c", "d"});
  const Json summary = Build({"--window-keys", "3", "--fpr", "1e-9"}, file, input);
  CHECK(summary["kind"].string == "windowed");
  CHECK(summary["capacity"].U64() == 3);
  CHECK(summary["new_keys"].U64() == 4);
  // A window of 3 lines: "a" is gone after b, c, d; the last 3 are kept.
  RunResult query = Run({"query", file, input});
  REQUIRE_MESSAGE(query.exit_code == 0, query.err);
  CHECK(query.out == JoinLines({"b", "c", "d"}));
  RunResult info = Run({"info", file, "--json"});
  REQUIRE_MESSAGE(info.exit_code == 0, info.err);
  const Json json = ParseJson(info.out);
  CHECK(json["kind"].string == "windowed");
  CHECK(json["capacity"].U64() == 3);
  CHECK(json["generations"].items.size() == 4);
  // The window is the capacity; a geometry is not how a window is sized.
  const RunResult both = Run({"build", "--window-keys", "3", "--capacity", "3", "-o", file, input});
  CHECK(both.exit_code == 2);
  CHECK(Contains(both.err, "--window-keys is the capacity"));
  const RunResult bits =
      Run({"build", "--window-keys", "3", "--bits", "1M", "--hashes", "4", "-o", file, input});
  CHECK(bits.exit_code == 2);
  CHECK(Contains(bits.err, "--window-keys"));
  CHECK(Run({"build", "-o", file, input}).exit_code == 2);  // still: no size at all
}

// Duration windows (W = 100 s, G = 4: generations of 25 s) at fixed clocks.
TEST_CASE("windowed files by the clock: merge needs one origin; a save records what expired") {
  const auto at = [](int64_t seconds, const std::vector<std::string>& args,
                     const std::string& input = "") {
    return Wait(Spawn(args, input, "",
                      {"BLOOMERY_FAKE_CLOCK_NS=" + std::to_string(seconds * 1'000'000'000)}));
  };
  const std::string a = Scratch().File("window_a.bloom");
  const std::string b = Scratch().File("window_b.bloom");
  const std::string copy = Scratch().File("window_copy.bloom");
  const std::string merged = Scratch().File("window_merged.bloom");
  const std::vector<std::string> build = {"build", "--window", "100s", "--capacity", "1000", "-o"};
  auto build_to = [&](const std::string& path) {
    std::vector<std::string> args = build;
    args.push_back(path);
    return args;
  };
  REQUIRE(at(0, build_to(a), "a\n").exit_code == 0);
  REQUIRE(at(70, build_to(b), "b\n").exit_code == 0);
  // Begun 70 s apart: b's key would expire 31 s after its insert in the merged file.
  RunResult apart = at(70, {"merge", "-o", merged, a, b});
  CHECK(apart.exit_code == 1);
  CHECK(Contains(apart.err, "began at the same time"));
  // A copy of a's file shares its origin: merged at 60 s, each key keeps its own expiry.
  std::filesystem::copy_file(a, copy, std::filesystem::copy_options::overwrite_existing);
  REQUIRE(at(60, {"add", copy}, "c\n").exit_code == 0);  // generation 2: gone at 150 s
  RunResult together = at(60, {"merge", "-o", merged, a, copy});
  REQUIRE_MESSAGE(together.exit_code == 0, together.err);
  CHECK(at(99, {"query", merged}, "a\nc\n").out == "a\nc\n");
  CHECK(at(100, {"query", merged}, "a\nc\n").out == "c\n");
  CHECK(at(150, {"query", merged}, "a\nc\n").out.empty());
  // Saved at 150 s with nothing added, then read by a clock at 50 s: "a" stays expired.
  REQUIRE(at(150, {"add", a}).exit_code == 0);
  CHECK(at(50, {"query", a}, "a\n").out.empty());
}

// ---------------------------------------------------------------------------------------------
// layouts: --layout on what makes a blocked, scalable or windowed filter

TEST_CASE("build says which layout --layout auto took, in its summary and its JSON") {
  const std::string input = WriteLines("auto_layout.txt", NumberedLines("a", 0, 100));
  const std::string file = Scratch().File("auto_layout.bloom");
  for (const auto& choice : {std::pair{"smallest", "line512"}, {"fastest", "word64"}}) {
    const char* prefer = choice.first;  // named, not bound: clang 14's CAPTURE takes no binding
    const char* layout = choice.second;
    CAPTURE(prefer);
    const RunResult text = Run({"build", "--capacity", "1e6", "--fpr", "0.01", "--layout", "auto",
                                "--prefer", prefer, "-o", file, input});
    REQUIRE_MESSAGE(text.exit_code == 0, text.err);
    CHECK(Contains(text.err, absl::StrCat("blocked filter (", layout, ")")));
    const Json json =
        Build({"--capacity", "1e6", "--fpr", "0.01", "--layout", "auto", "--prefer", prefer}, file,
              input);
    CHECK(json["layout"].string == layout);
  }
}

TEST_CASE("build --layout makes that shape, info shows it; kinds without a layout refuse it") {
  const std::string keys = WriteLines("layout_keys.txt", NumberedLines("w", 0, 500));
  for (const BlockShape& shape : kBlockShapes) {
    CAPTURE(shape.name);
    const std::string file = Scratch().File("layout_" + std::string(shape.name) + ".bloom");
    Build({"--capacity", "1000", "--fpr", "0.01", "--layout", std::string(shape.name)}, file, keys);
    absl::StatusOr<BlockedFilter> built = BlockedFilter::Load(file);
    REQUIRE(built.ok());
    CHECK(built->layout() == shape.layout);
    absl::StatusOr<Plan> plan = PlanFor(1000, 0.01, shape.layout);
    REQUIRE(plan.ok());
    CHECK(built->bits() == plan->bits);
    RunResult info = Run({"info", file, "--json"});
    REQUIRE(info.exit_code == 0);
    const Json info_json = ParseJson(info.out);
    CHECK(info_json["layout"].string == shape.name);
    RunResult info_text = Run({"info", file});
    CHECK(Contains(info_text.out, "layout "));
    CHECK(Contains(info_text.out, std::string(shape.name)));
  }

  // auto: the planner's smallest shape for the request.
  const std::string chosen = Scratch().File("layout_auto.bloom");
  Build({"--capacity", "1000", "--fpr", "0.01", "--layout", "auto"}, chosen, keys);
  FilterOptions options;
  options.capacity = 1000;
  options.fpr = 0.01;
  absl::StatusOr<Plan> smallest = PlanFilter(options, Layout::kAuto);
  REQUIRE(smallest.ok());
  absl::StatusOr<BlockedFilter> auto_built = BlockedFilter::Load(chosen);
  REQUIRE(auto_built.ok());
  CHECK(auto_built->layout() == smallest->layout);

  const std::string scalable = Scratch().File("layout_scalable.bloom");
  Build({"--kind", "scalable", "--capacity", "100", "--layout", "word64"}, scalable, keys);
  RunResult info = Run({"info", scalable, "--json"});
  REQUIRE(info.exit_code == 0);
  const Json scalable_info = ParseJson(info.out);
  CHECK(scalable_info["layout"].string == "word64");
  // partitioned: a scalable chain of classic stages (and for no other kind, below).
  const std::string partitioned = Scratch().File("layout_partitioned.bloom");
  Build({"--kind", "scalable", "--capacity", "100", "--layout", "partitioned"}, partitioned, keys);
  absl::StatusOr<ScalableFilter> chain = ScalableFilter::Load(partitioned);
  REQUIRE(chain.ok());
  CHECK(chain->layout() == Layout::kPartitioned);
  CHECK(chain->stage_count() > 1);  // 500 keys over a first stage of 100
  for (const std::string& line : NumberedLines("w", 0, 500)) CHECK(chain->MayContain(line));
  const Json partitioned_info = ParseJson(Run({"info", partitioned, "--json"}).out);
  CHECK(partitioned_info["layout"].string == "partitioned");
  const Json line_info =
      ParseJson(Run({"info", Scratch().File("layout_line512.bloom"), "--json"}).out);
  CHECK(line_info["layout"].string == "line512");

  for (const std::vector<std::string>& refused : std::vector<std::vector<std::string>>{
           {"--kind", "classic", "--layout", "word64"},
           {"--kind", "counting", "--layout", "block256"},
           {"--kind", "scalable", "--layout", "auto"},
           {"--layout", "partitioned"},
           {"--kind", "windowed", "--window", "1h", "--layout", "partitioned"},
           {"--layout", "fancy"}}) {
    std::vector<std::string> args = {
        "build", "--capacity", "1000", "-o", Scratch().File("refused.bloom"), keys};
    if (refused[0] == "--window-keys") args.erase(args.begin() + 1, args.begin() + 3);
    args.insert(args.end(), refused.begin(), refused.end());
    CAPTURE(refused);
    RunResult r = Run(args);
    CHECK(r.exit_code == 2);
    CHECK(Contains(r.err, "--layout"));
  }

  // dedupe makes its state file with the layout too.
  const std::string state = Scratch().File("layout_state.bloom");
  RunResult dedupe =
      Run({"dedupe", "--capacity", "1000", "--layout", "block256", "--state", state, keys});
  REQUIRE_MESSAGE(dedupe.exit_code == 0, dedupe.err);
  absl::StatusOr<BlockedFilter> state_filter = BlockedFilter::Load(state);
  REQUIRE(state_filter.ok());
  CHECK(state_filter->layout() == Layout::kBlock256);
}

// Issue #26: a windowed filter takes a layout too, and --layout auto --prefer picks the planner's
// preference (smallest or fastest within --max-memory) for blocked and windowed filters.
TEST_CASE("build --window --layout makes windowed generations of that shape; --prefer chooses") {
  const std::string keys = WriteLines("wlayout_keys.txt", NumberedLines("w", 0, 500));
  for (const BlockShape& shape : kBlockShapes) {
    CAPTURE(shape.name);
    const std::string file = Scratch().File("wlayout_" + std::string(shape.name) + ".bloom");
    Build({"--window-keys", "1000", "--layout", std::string(shape.name)}, file, keys);
    absl::StatusOr<WindowedFilter> built = WindowedFilter::Load(file);
    REQUIRE(built.ok());
    CHECK(built->layout() == shape.layout);
    const Json info = ParseJson(Run({"info", file, "--json"}).out);
    CHECK(info["layout"].string == shape.name);
    CHECK(Contains(Run({"info", file}).out, std::string(shape.name)));
    RunResult q = Run({"query", file, keys, "--count"});  // every key inserted is there
    CHECK(q.exit_code == 0);
    CHECK(Contains(q.out, "500"));
  }
  const std::string timed = Scratch().File("wlayout_timed.bloom");
  Build({"--window", "7d", "--capacity", "1000", "--layout", "block256"}, timed, keys);
  absl::StatusOr<WindowedFilter> timed_filter = WindowedFilter::Load(timed);
  REQUIRE(timed_filter.ok());
  CHECK(timed_filter->layout() == Layout::kBlock256);

  // --prefer: the smallest by default, the fastest on request, and the fastest that fits.
  struct Case {
    std::vector<std::string> flags;
    Layout layout;
  };
  const std::vector<Case> cases = {
      {{"--capacity", "100000", "--layout", "auto"}, Layout::kLine512},
      {{"--capacity", "100000", "--layout", "auto", "--prefer", "smallest"}, Layout::kLine512},
      {{"--capacity", "100000", "--layout", "auto", "--prefer", "fastest"}, Layout::kWord64},
      {{"--capacity", "100000", "--layout", "auto", "--prefer", "fastest", "--max-memory",
        "140000"},
       Layout::kBlock256},
      {{"--window-keys", "100000", "--layout", "auto"}, Layout::kLine512},
      {{"--window-keys", "100000", "--layout", "auto", "--prefer", "fastest"}, Layout::kWord64},
  };
  for (const Case& c : cases) {
    CAPTURE(c.flags);
    const std::string file = Scratch().File("wlayout_prefer.bloom");
    std::filesystem::remove(file);
    Build(c.flags, file, keys);
    const Json info = ParseJson(Run({"info", file, "--json"}).out);
    CHECK(info["layout"].string == LayoutName(c.layout));
  }

  struct Refusal {
    std::vector<std::string> flags;
    std::string says;
  };
  for (const Refusal& r : std::vector<Refusal>{
           {{"--capacity", "1000", "--prefer", "fastest"}, "--prefer needs --layout auto"},
           {{"--capacity", "1000", "--layout", "word64", "--prefer", "fastest"},
            "--prefer needs --layout auto"},
           {{"--capacity", "1000", "--layout", "auto", "--prefer", "quick"}, "--prefer"},
           {{"--window-keys", "1000", "--layout", "fancy"}, "unknown --layout \"fancy\""},
           {{"--window-keys", "1000", "--layout", "partitioned"}, "--layout"},
           {{"--kind", "counting", "--capacity", "1000", "--layout", "word64"},
            "--layout needs --kind blocked, scalable or windowed"}}) {
    CAPTURE(r.flags);
    std::vector<std::string> args = {"build", "-o", Scratch().File("refused.bloom"), keys};
    args.insert(args.end(), r.flags.begin(), r.flags.end());
    RunResult run = Run(args);
    CHECK(run.exit_code == 2);
    CHECK(Contains(run.err, r.says));
  }
  // word64 has 8 slices: k = 9 is refused by the planner, with its message.
  RunResult k9 = Run({"build", "-o", Scratch().File("k9.bloom"), keys, "--window-keys", "1000",
                      "--layout", "word64", "--hashes", "9"});
  CHECK(k9.exit_code != 0);
  CHECK(Contains(k9.err, "hashes"));
}

}  // namespace
}  // namespace bloomery::cli_test
