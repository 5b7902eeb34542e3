// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_intersect_test.cc: `bloomery intersect`'s exact mode, saved and prebuilt filters, --fpr and
// --layout, and threads, driving the real binary ($BLOOMERY_CLI) through cli_run.h as the other CLI
// tests do. The answers are held to a reference computed here: the lines of B that are in A, in B's
// order.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "bloomery/bloomery.h"
#include "cli_run.h"
#include "test_util.h"

namespace bloomery {
namespace {

using cli_run::Contains;
using cli_run::ReadFile;
using cli_run::Run;
using cli_run::RunResult;
using cli_run::Scratch;
using cli_run::WriteFile;
using testing::SplitMix64;

std::string Url(uint64_t i) {
  return "https://site" + std::to_string(i % 97) + ".example.com/p/" + std::to_string(i * 7919) +
         "?id=" + std::to_string(i);
}

// A of `a_lines` distinct URLs, B of `b_lines` URLs drawn from twice A's range (about half in A,
// some repeated), and the reference answer.
struct Case {
  std::string a_path;
  std::string b_path;
  std::string expected;  // the lines of B that are in A, in B's order, repeats kept
  size_t common = 0;
  size_t b_lines = 0;
};

Case MakeCase(const std::string& name, uint64_t a_lines, uint64_t b_lines) {
  Case c;
  std::string a;
  std::unordered_set<std::string> in_a;
  for (uint64_t i = 0; i < a_lines; ++i) {
    a += Url(i * 2) + "\n";  // the even ids
    in_a.insert(Url(i * 2));
  }
  SplitMix64 rng(54);
  std::string b;
  for (uint64_t j = 0; j < b_lines; ++j) {
    const std::string line = Url(rng.Below(2 * a_lines));
    b += line + "\n";
    if (in_a.contains(line)) {
      c.expected += line + "\n";
      ++c.common;
    }
  }
  c.b_lines = b_lines;
  c.a_path = Scratch().File(name + "_a.txt");
  c.b_path = Scratch().File(name + "_b.txt");
  WriteFile(c.a_path, a);
  WriteFile(c.b_path, b);
  return c;
}

size_t Lines(const std::string& text) {
  size_t n = 0;
  for (const char ch : text) n += ch == '\n';
  return n;
}

TEST_CASE("intersect --exact prints exactly the lines of B that are in A, in B's order") {
  const Case c = MakeCase("exact", 6000, 8000);
  REQUIRE(c.common > 2000);
  // A 5% filter passes ~250 of B's lines that are not in A: the plain run prints them.
  RunResult loose = Run({"intersect", c.a_path, c.b_path, "--fpr", "0.05"});
  REQUIRE_MESSAGE(loose.exit_code == 0, loose.err);
  CHECK(Lines(loose.out) > c.common + 100);

  RunResult exact = Run({"intersect", c.a_path, c.b_path, "--fpr", "0.05", "--exact"});
  REQUIRE_MESSAGE(exact.exit_code == 0, exact.err);
  CHECK(exact.out == c.expected);
  CHECK(Contains(exact.err, "(one part)"));
  CHECK(Contains(exact.err, "were false positives"));

  // Candidates over --memory: they and A's lines that may be candidates are split by hash into
  // parts on disk; same answer.
  RunResult parts =
      Run({"intersect", c.a_path, c.b_path, "--fpr", "0.05", "--exact", "--memory", "64Ki"});
  REQUIRE_MESSAGE(parts.exit_code == 0, parts.err);
  CHECK(parts.out == c.expected);
  CHECK(Contains(parts.err, "parts, by hash)"));

  // A from a pipe is held in memory for its second pass; B from a pipe is read once.
  RunResult piped_a = Run({"intersect", "-", c.b_path, "--exact"}, ReadFile(c.a_path));
  REQUIRE_MESSAGE(piped_a.exit_code == 0, piped_a.err);
  CHECK(piped_a.out == c.expected);
  RunResult piped_b =
      Run({"intersect", c.a_path, "-", "--exact", "--fpr", "0.05"}, ReadFile(c.b_path));
  REQUIRE_MESSAGE(piped_b.exit_code == 0, piped_b.err);
  CHECK(piped_b.out == c.expected);

  // The temp files are made in --temp-dir, and gone at the end.
  const std::string temp = Scratch().File("exact_temp");
  std::filesystem::create_directory(temp);
  RunResult in_temp = Run({"intersect", c.a_path, c.b_path, "--exact", "--memory", "64Ki", "--fpr",
                           "0.05", "--temp-dir", temp});
  CHECK(in_temp.out == c.expected);
  CHECK(std::filesystem::is_empty(temp));
  RunResult no_temp = Run(
      {"intersect", c.a_path, c.b_path, "--exact", "--temp-dir", Scratch().File("no_such_dir")});
  CHECK(no_temp.exit_code == 1);
  CHECK(Contains(no_temp.err, "--temp-dir"));
}

TEST_CASE("intersect --save-filter, then --filter F B, answers the same") {
  const Case c = MakeCase("saved", 6000, 8000);
  const std::string file = Scratch().File("a.bloom");
  RunResult built = Run({"intersect", c.a_path, c.b_path, "--fpr", "0.02", "--save-filter", file});
  REQUIRE_MESSAGE(built.exit_code == 0, built.err);
  RunResult reused = Run({"intersect", "--filter", file, c.b_path});
  REQUIRE_MESSAGE(reused.exit_code == 0, reused.err);
  CHECK(reused.out == built.out);
  CHECK(Lines(reused.out) > c.common);  // at 2%, some false positives
  // With A as well, --exact removes them.
  RunResult exact = Run({"intersect", "--filter", file, c.a_path, c.b_path, "--exact"});
  REQUIRE_MESSAGE(exact.exit_code == 0, exact.err);
  CHECK(exact.out == c.expected);
  // A filter `bloomery build` made does as well.
  const std::string built_file = Scratch().File("built.bloom");
  RunResult build =
      Run({"build", "--capacity", "6000", "--fpr", "0.02", "-o", built_file, c.a_path});
  REQUIRE_MESSAGE(build.exit_code == 0, build.err);
  CHECK(Run({"intersect", "--filter", built_file, c.b_path}).out == built.out);

  // Usage: A without --exact, sizing flags with --filter, --exact without A, a bad file.
  CHECK(Run({"intersect", "--filter", file, c.a_path, c.b_path}).exit_code == 2);
  CHECK(Run({"intersect", "--filter", file, c.b_path, "--fpr", "0.01"}).exit_code == 2);
  CHECK(Run({"intersect", "--filter", file, c.b_path, "--exact"}).exit_code == 2);
  CHECK(Run({"intersect", c.b_path}).exit_code == 2);
  RunResult not_filter = Run({"intersect", "--filter", c.a_path, c.b_path});
  CHECK(not_filter.exit_code == 1);
  CHECK(Contains(not_filter.err, c.a_path));
}

TEST_CASE("intersect --fpr and --layout size the filter as the planner does") {
  const Case c = MakeCase("fpr", 6000, 100);
  for (const char* fpr : {"0.01", "1e-4"}) {
    for (const Layout layout : {Layout::kLine512, Layout::kBlock256, Layout::kWord64}) {
      const std::string name(LayoutName(layout));
      CAPTURE(fpr);
      CAPTURE(name);
      const std::string file = Scratch().File("fpr.bloom");
      RunResult r = Run(
          {"intersect", c.a_path, c.b_path, "--fpr", fpr, "--layout", name, "--save-filter", file});
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      FilterOptions options;
      options.capacity = 6000;
      options.fpr = std::stod(fpr);
      options.layout = layout;
      absl::StatusOr<BlockedFilter> planned = BlockedFilter::Create(options);
      REQUIRE(planned.ok());
      absl::StatusOr<BlockedFilter> saved = BlockedFilter::Load(file);
      REQUIRE(saved.ok());
      CHECK(saved->layout() == layout);
      CHECK(saved->bits() == planned->bits());
      CHECK(saved->hashes() == planned->hashes());
    }
  }
  // Without --fpr the budget is filled (up to 64 bits a line): another size.
  const std::string file = Scratch().File("budget.bloom");
  REQUIRE(Run({"intersect", c.a_path, c.b_path, "--save-filter", file}).exit_code == 0);
  CHECK(BlockedFilter::Load(file)->bits() >= 6000 * 63);
  // --layout auto asks the planner, which needs --fpr; a plan over --memory is refused.
  CHECK(Run({"intersect", c.a_path, c.b_path, "--fpr", "1e-3", "--layout", "auto", "--prefer",
             "fastest"})
            .exit_code == 0);
  CHECK(Run({"intersect", c.a_path, c.b_path, "--layout", "auto"}).exit_code == 2);
  CHECK(Run({"intersect", c.a_path, c.b_path, "--layout", "nope"}).exit_code == 2);
  RunResult over = Run({"intersect", c.a_path, c.b_path, "--fpr", "1e-9", "--memory", "4Ki"});
  CHECK(over.exit_code == 1);
  CHECK(Contains(over.err, "raise --memory"));
}

TEST_CASE("intersect --threads answers as one thread does, in B's order") {
  // Several chunks of lines a thread: more than 4 x 16,384 lines.
  const Case c = MakeCase("threads", 50'000, 80'000);
  RunResult one = Run({"intersect", c.a_path, c.b_path, "--fpr", "0.01"});
  REQUIRE_MESSAGE(one.exit_code == 0, one.err);
  for (const char* threads : {"2", "5"}) {
    CAPTURE(threads);
    RunResult many = Run({"intersect", c.a_path, c.b_path, "--fpr", "0.01", "--threads", threads});
    REQUIRE_MESSAGE(many.exit_code == 0, many.err);
    CHECK(many.out == one.out);
    RunResult exact =
        Run({"intersect", c.a_path, c.b_path, "--fpr", "0.01", "--threads", threads, "--exact"});
    REQUIRE_MESSAGE(exact.exit_code == 0, exact.err);
    CHECK(exact.out == c.expected);
  }
  CHECK(Run({"intersect", c.a_path, c.b_path, "--threads", "0"}).exit_code == 2);
}

TEST_CASE("intersect: a pipe over --memory is refused, naming --capacity") {
  const Case c = MakeCase("pipe", 6000, 100);
  RunResult over = Run({"intersect", "-", c.b_path, "--memory", "4Ki"}, ReadFile(c.a_path));
  CHECK(over.exit_code == 1);
  CHECK(Contains(over.err, "--capacity"));
  // With --capacity, A is read once: no need to hold it.
  RunResult once = Run({"intersect", "-", c.b_path, "--memory", "4Ki", "--capacity", "6000"},
                       ReadFile(c.a_path));
  CHECK_MESSAGE(once.exit_code == 0, once.err);
}

}  // namespace
}  // namespace bloomery
