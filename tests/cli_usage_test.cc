// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_usage_test.cc: what every `bloomery` command shares: usage errors and --help, the number
// flags' one convention and their ranges, and the exit codes of bad files and unwritable output.
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bloomery/bloomery.h"
#include "bloomery/version.h"
#include "cli_test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// Usage and help.

TEST_CASE("no command, an unknown command or an unknown flag is a usage error (exit 2)") {
  RunResult none = Run({});
  CHECK(none.exit_code == 2);
  CHECK(Contains(none.err, "usage: bloomery"));

  RunResult unknown = Run({"frobnicate"});
  CHECK(unknown.exit_code == 2);
  CHECK(Contains(unknown.err, "unknown command \"frobnicate\""));

  RunResult flag = Run({"plan", "--capacity", "100", "--fpr", "0.01", "--frob"});
  CHECK(flag.exit_code == 2);
  CHECK(Contains(flag.err, "unknown option --frob"));

  RunResult help = Run({"--help"});
  CHECK(help.exit_code == 0);
  for (const char* command : {"plan", "table", "bench", "dedupe", "intersect", "build", "add",
                              "remove", "query", "info", "merge"}) {
    CHECK(Contains(help.out, command));
  }
}

// The version is the library's (VERSION, through bloomery/version.h): what help2man and packagers
// read.
TEST_CASE("--version prints the library's version on stdout, exit 0, and --help lists it") {
  RunResult version = Run({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out == std::string("bloomery ") + BLOOMERY_VERSION_STRING + "\n");
  CHECK(version.err.empty());
  CHECK(Contains(Run({"--help"}).out, "--version"));
}

TEST_CASE("every subcommand has --help on stdout, exit 0") {
  for (const std::string command : {"plan", "table", "bench", "dedupe", "intersect", "build", "add",
                                    "remove", "query", "info", "merge"}) {
    CAPTURE(command);
    RunResult r = Run({command, "--help"});
    CHECK(r.exit_code == 0);
    CHECK(Contains(r.out, "usage: bloomery " + command));
    CHECK(r.err.empty());
  }
}

// Help names each value by its placeholder only: CLI11 appends a transform's own description
// ("D:INT UNIT") unless it is cleared.
TEST_CASE("help shows value placeholders, not CLI11's transform descriptions") {
  for (const std::string command : {"dedupe", "build"}) {
    CAPTURE(command);
    RunResult r = Run({command, "--help"});
    REQUIRE(r.exit_code == 0);
    CHECK(Contains(r.out, "--window D "));
    CHECK_FALSE(Contains(r.out, "INT UNIT"));
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers and flags: one convention for every command; bad values are usage errors naming the
// flag.

uint64_t PlannedBlockedBits(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"plan", "--json"};
  full.insert(full.end(), args.begin(), args.end());
  RunResult r = Run(full);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return ParseJson(r.out)["blocked"]["bits"].U64();
}

TEST_CASE("numbers may be written as 1e6, 1M, 1Mi, 2^20, 4G, 1%: one convention for every flag") {
  const uint64_t plain = PlannedBlockedBits({"--capacity", "1000000", "--fpr", "0.01"});
  CHECK(PlannedBlockedBits({"--capacity", "1e6", "--fpr", "0.01"}) == plain);
  CHECK(PlannedBlockedBits({"--capacity", "1M", "--fpr", "1%"}) == plain);
  CHECK(PlannedBlockedBits({"--capacity=1000k", "--fpr=1e-2"}) == plain);
  CHECK(PlannedBlockedBits({"--capacity", "1048576", "--fpr", "0.01"}) ==
        PlannedBlockedBits({"--capacity", "2^20", "--fpr", "0.01"}));
  for (const char* bits : {"1Gi", "2^30", "1073741824"}) {
    CAPTURE(bits);
    CHECK(PlannedBlockedBits({"--bits", bits, "--hashes", "6"}) == uint64_t{1} << 30);
  }
  // 1G is 10^9 for --bits as for --capacity (1,953,125 lines of 512 bits).
  CHECK(PlannedBlockedBits({"--bits", "1G", "--hashes", "6"}) == 1'000'000'000);
  CHECK(PlannedBlockedBits({"--capacity", "1Mi", "--fpr", "0.01"}) ==
        PlannedBlockedBits({"--capacity", "2^20", "--fpr", "0.01"}));
  // Said once, in the top-level help.
  CHECK(Contains(Run({"--help"}).out, "Ki, Mi, Gi, Ti powers of 1024"));
  // Bits are not bytes: "1GB" must not quietly mean 2^30 bits (nor 2^33).
  for (const char* bits : {"1GB", "1GiB", "8B"}) {
    CAPTURE(bits);
    RunResult r = Run({"plan", "--bits", bits, "--hashes", "6"});
    CHECK(r.exit_code == 2);
    CHECK(Contains(r.err, "--bits"));
  }
}

TEST_CASE("bad numbers and bad combinations are usage errors (exit 2) naming the flag") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--capacity", "12x"},  {"--capacity", "-5"}, {"--capacity", " 5"}, {"--capacity", "1.5"},
      {"--capacity", "1e30"}, {"--capacity", ""},   {"--capacity", "0"},  {"--capacity", "2^99"},
      {"--fpr", "1.5"},       {"--fpr", "0"},       {"--fpr", "nan"},     {"--fpr", "abc"},
      {"--fpr", "-0.1"},      {"--hashes", "17"},   {"--hashes", "0"},    {"--hashes", "6x"},
      {"--capacity", "0x10"}, {"--fpr", "0x0.1"},   {"--fpr", "inf"},     {"--capacity", "+5"},
      {"--capacity", "1e"},   {"--fpr", "1e-"},     {"--capacity", "."},  {"--hashes", "+4"}};
  for (const auto& entry : bad) {
    const std::string& flag = entry.first;  // named, not bound: clang 14's CAPTURE takes no binding
    const std::string& value = entry.second;
    CAPTURE(flag);
    CAPTURE(value);
    std::vector<std::string> args = {"plan", "--capacity", "1000", "--fpr",
                                     "0.01", "--hashes",   "4"};
    const auto at = std::find(args.begin(), args.end(), flag);
    REQUIRE(at != args.end());
    *(at + 1) = value;
    RunResult r = Run(args);
    CHECK(r.exit_code == 2);
    CHECK(Contains(r.err, flag));
  }
  CHECK(Run({"plan", "--bits", "4Q", "--hashes", "6"}).exit_code == 2);
  CHECK(Run({"plan", "--capacity", "1000"}).exit_code == 2);  // no --fpr
  CHECK(Run({"plan", "--bits", "2^20", "--fpr", "0.01"}).exit_code == 2);
  CHECK(Run({"plan", "--bits", "2^20"}).exit_code == 2);  // neither hashes nor capacity
  CHECK(Run({"plan", "--capacity", "1", "--capacity", "2", "--fpr", "0.1"}).exit_code == 2);
  CHECK(Run({"plan", "--capacity", "10", "--fpr", "0.1", "extra"}).exit_code == 2);
  CHECK(Run({"plan", "--capacity", "10", "--fpr", "0.1", "--json=yes"}).exit_code == 2);
  CHECK(Run({"plan", "--capacity", "10", "--fpr"}).exit_code == 2);
}

// CLI11 checks these as it parses (required, excludes, needs, IsMember, FileName): still usage
// errors, exit 2, and the message names the flag.
TEST_CASE("missing, empty or conflicting flags are usage errors naming the flag") {
  const std::string input = WriteLines("flags_in.txt", {"x"});
  const std::string file = Scratch().File("flags.bloom");
  Build({"--capacity", "100"}, file, input);
  const std::string out = Scratch().File("flags_out.bloom");
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"build", "--capacity", "100", input}, "-o"},
      {{"build", "--capacity", "100", "-o", "", input}, "-o"},
      {{"merge", "-o", "", file, file}, "-o"},
      {{"merge", file, file}, "-o"},
      {{"merge", "-o", out, file}, "inputs"},
      {{"query", file, "--absent", "--count"}, "--count"},
      {{"query", file, "--present", "--count"}, "--present"},
      {{"query", file, "--json", "--absent"}, "--json"},
      {{"table", "--layout", "fancy"}, "--layout"},
      {{"table", "--keys", "100", "--svg", ""}, "--svg"},
      {{"dedupe", "--state", ""}, "--state"},
      {{"dedupe", "--checkpoint", "10"}, "--checkpoint"},
      {{"plan", "--bits", "2^20", "--fpr", "0.01", "--hashes", "4"}, "--fpr"},
      {{"dedupe", "--window", "7d", "--window-keys", "5"}, "--window-keys"},
  };
  for (const auto& [args, flag] : bad) {
    std::string command;
    for (const std::string& arg : args) absl::StrAppend(&command, " '", arg, "'");
    CAPTURE(command);
    const RunResult r = Run(args, "x\n");
    CHECK(r.exit_code == 2);
    CHECK(Contains(r.err, flag));
    CHECK(r.out.empty());
  }
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE(
    "every number flag refuses a value outside its range: a usage error naming it, no crash") {
  const std::string keys = WriteLines("range_keys.txt", NumberedLines("r", 0, 100));
  const std::string file = Scratch().File("range.bloom");
  Build({"--capacity", "1000"}, file, keys);
  const std::string out = Scratch().File("range_out.bloom");
  const std::vector<std::string> build = {"build", "-o", out, keys};
  const auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  struct Case {
    std::vector<std::string> args;
    std::string flag;
  };
  const std::vector<Case> cases = {
      // bench: the L2 floor needs two lines of L2 (--l2 1 read through a null pointer).
      {{"bench", "--keys", "1000", "--l2", "1"}, "--l2"},
      {{"bench", "--keys", "1000", "--l2", "0"}, "--l2"},
      {{"bench", "--keys", "1000", "--l2", "127"}, "--l2"},
      {{"bench", "--keys", "1000", "--l2", "2^40"}, "--l2"},
      {{"bench", "--keys", "0"}, "--keys"},
      {{"bench", "--keys", "2^33"}, "--keys"},
      {{"bench", "--keys", "1000", "--fpr", "1"}, "--fpr"},
      {{"bench", "--keys", "1000", "--threads", "0"}, "--threads"},
      {{"bench", "--keys", "1000", "--reps", "0"}, "--reps"},
      {{"bench", "--keys", "1000", "--reps", "101"}, "--reps"},
      // plan and table
      {{"plan", "--capacity", "0", "--fpr", "0.01"}, "--capacity"},
      {{"plan", "--bits", "0", "--hashes", "4"}, "--bits"},
      {{"plan", "--capacity", "1000", "--fpr", "0.01", "--hashes", "17"}, "--hashes"},
      {{"plan", "--capacity", "1000", "--fpr", "0.01", "--max-memory", "2^63"}, "--max-memory"},
      {{"table", "--keys", "0"}, "--keys"},
      {{"table", "--keys", "2^33"}, "--keys"},
      // build (and every command that creates a filter: the same flags)
      {with(build, {"--capacity", "0"}), "--capacity"},
      {with(build, {"--capacity", "1000", "--fpr", "0"}), "--fpr"},
      {with(build, {"--bits", "0", "--hashes", "3"}), "--bits"},
      {with(build, {"--capacity", "1000", "--hashes", "0"}), "--hashes"},
      {with(build, {"--kind", "counting", "--capacity", "1000", "--counter-bits", "0"}),
       "--counter-bits"},
      {with(build, {"--kind", "counting", "--capacity", "1000", "--counter-bits", "65"}),
       "--counter-bits"},
      {with(build, {"--window-keys", "0"}), "--window-keys"},
      {with(build, {"--capacity", "1000", "--window", "0s"}), "--window"},
      {with(build, {"--capacity", "1000", "--window", "-5s"}), "--window"},
      {with(build, {"--capacity", "1000", "--max-memory", "2^63"}), "--max-memory"},
      // dedupe, intersect
      {{"dedupe", "--state", Scratch().File("range_state.bloom"), "--checkpoint", "0", keys},
       "--checkpoint"},
      {{"dedupe", "--capacity", "0", keys}, "--capacity"},
      {{"intersect", "--memory", "1", keys, keys}, "--memory"},
      {{"intersect", "--capacity", "0", keys, keys}, "--capacity"},
      // the filter-file commands
      {{"add", file, keys, "--max-memory", "2^63"}, "--max-memory"},
      {{"query", file, keys, "--max-memory", "2^63"}, "--max-memory"},
      {{"info", file, "--max-memory", "2^63"}, "--max-memory"},
      {{"merge", "-o", out, file, file, "--max-memory", "2^63"}, "--max-memory"},
      {{"repair", file, "--max-memory", "2^63"}, "--max-memory"},
      {{"fold", "--fpr", "0", file, "-o", out}, "--fpr"},
      {{"fold", "--fpr", "nan", file, "-o", out}, "--fpr"},
      {{"fold", "--fpr", "0.01", file, "-o", out, "--max-memory", "2^63"}, "--max-memory"},
      {{"fold", "--fpr", "0.01", file, "-o", out, "--max-load-memory", "2^63"},
       "--max-load-memory"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const RunResult r = Run(c.args);
    CHECK(r.exit_code == 2);  // not 139: a crash
    CHECK(Contains(r.err, c.flag));
    CHECK(r.out.empty());
  }
  // The bounds themselves are taken: the smallest L2 the floor works with.
  RunResult smallest = Run({"bench", "--keys", "1000", "--reps", "1", "--l2", "128", "--json"});
  REQUIRE_MESSAGE(smallest.exit_code == 0, smallest.err);
  CHECK(ParseJson(smallest.out)["l2_cache_bytes"].U64() == 128);
  CHECK_FALSE(std::filesystem::exists(out));
}

// ---------------------------------------------------------------------------------------------
// Exit codes: usage errors exit 2, bad files and unwritable output exit 1.

TEST_CASE("filter file commands: usage errors exit 2, bad files exit 1") {
  const std::string input = WriteLines("usage_in.txt", {"x", "y"});
  const std::string file = Scratch().File("usage.bloom");
  Build({"--capacity", "100"}, file, input);
  CHECK(Run({"build", "--capacity", "100", input}).exit_code == 2);              // no -o
  CHECK(Run({"build", "-o", Scratch().File("u.bloom"), input}).exit_code == 2);  // no sizing
  CHECK(Run({"build", "--capacity", "100", "--kind", "cuckoo", "-o", file, input}).exit_code == 2);
  CHECK(Run({"build", "--capacity", "100", "--counter-bits", "8", "-o", file, input}).exit_code ==
        2);
  CHECK(Run({"build", "--kind", "counting", "--capacity", "100", "--counter-bits", "6", "-o", file,
             input})
            .exit_code == 2);
  CHECK(Run({"build", "--kind", "scalable", "--bits", "2^16", "--hashes", "4", "-o", file, input})
            .exit_code == 2);
  RunResult scalable_hashes =
      Run({"build", "--kind", "scalable", "--capacity", "100", "--hashes", "4", "-o", file, input});
  CHECK(scalable_hashes.exit_code == 2);
  CHECK(Contains(scalable_hashes.err, "--hashes is refused"));
  CHECK(Run({"add"}).exit_code == 2);
  CHECK(Run({"remove"}).exit_code == 2);
  CHECK(Run({"query", file, "--present", "--absent"}).exit_code == 2);
  CHECK(Run({"query", file, "--json"}).exit_code == 2);
  CHECK(Run({"info"}).exit_code == 2);
  CHECK(Run({"info", file, file}).exit_code == 2);
  CHECK(Run({"merge", "-o", Scratch().File("m.bloom"), file}).exit_code == 2);
  CHECK(Run({"merge", file, file}).exit_code == 2);
  CHECK(Run({"dedupe", "--checkpoint", "10"}).exit_code == 2);
  CHECK(Run({"dedupe", "--state", file, "--checkpoint", "0"}).exit_code == 2);
  CHECK(Run({"add", Scratch().File("absent.bloom"), input}).exit_code == 1);
  CHECK(Run({"query", input, input}).exit_code == 1);  // not a filter file
  CHECK(Run({"dedupe", "--state", input}, "x\n").exit_code == 1);
}

TEST_CASE("every command exits 1 when stdout cannot be written (/dev/full)") {
  const std::string input = WriteLines("full_in.txt", NumberedLines("f", 0, 100));
  const std::string file = Scratch().File("full.bloom");
  Build({"--capacity", "1000"}, file, input);
  const std::vector<std::vector<std::string>> commands = {
      {"info", file},
      {"info", file, "--json"},
      {"query", file, input},
      {"query", file, "--count", input},
      {"build", "--capacity", "1000", "-o", Scratch().File("full2.bloom"), input, "--json"},
      {"plan", "--capacity", "1e6", "--fpr", "0.01"},
      {"dedupe", input},
      {"intersect", input, input},
      {"--help"},
      {"plan", "--help"}};
  for (const std::vector<std::string>& args : commands) {
    CAPTURE(args.front());
    CAPTURE(args.back());
    RunResult r = Run(args, "", "/dev/full");
    CHECK(r.exit_code == 1);
    CHECK(Contains(r.err, "writing to stdout"));
  }
}

}  // namespace
}  // namespace bloomery::cli_test
