// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_stream_test.cc: the commands that stream lines: `bloomery dedupe` (a filter, a --state
// file, a window of lines or of time) and `bloomery intersect`.
// Each part of the CLI's tests drives the real binary as cli_test_util.h says.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "bloomery/bloomery.h"
#include "cli_test_util.h"
#include "test_util.h"

namespace bloomery::cli_test {
namespace {

// ---------------------------------------------------------------------------------------------
// dedupe

// Lines drawn with repetition from `distinct` values; some empty, some with spaces or '\r'.
std::vector<std::string> RepeatingLines(size_t count, uint64_t distinct, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::string> lines;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t v = rng.Below(distinct);
    lines.push_back(v % 97 == 0   ? ""
                    : v % 89 == 0 ? "with space " + std::to_string(v)
                    : v % 83 == 0 ? "cr\r" + std::to_string(v)
                                  : "https://example.com/" + std::to_string(v));
  }
  return lines;
}

std::vector<std::string> FirstOccurrences(const std::vector<std::string>& lines) {
  std::unordered_set<std::string> seen;
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    if (seen.insert(line).second) out.push_back(line);
  }
  return out;
}

TEST_CASE("dedupe prints exactly the first occurrence of every line, in order") {
  // 30,000 lines over 8,000 values: duplicates within one 4,096-line batch and across batches.
  const std::vector<std::string> lines = RepeatingLines(30'000, 8'000, 7);
  const std::string input = JoinLines(lines);
  const std::string expected = JoinLines(FirstOccurrences(lines));
  REQUIRE(SplitLines(expected).size() < lines.size());

  RunResult from_stdin = Run({"dedupe", "--capacity", "10000", "--fpr", "1e-9"}, input);
  CHECK(from_stdin.exit_code == 0);
  CHECK(from_stdin.out == expected);
  CHECK(from_stdin.err.empty());  // stderr is not a terminal: no progress bar

  const std::string path = Scratch().File("dedupe_input.txt");
  WriteFile(path, input);
  RunResult from_file = Run({"dedupe", "--bits", "2^20", "--hashes", "7", path});
  CHECK(from_file.exit_code == 0);
  CHECK(from_file.out == expected);

  RunResult stats = Run({"dedupe", "--capacity", "1e4", "--fpr", "1e-9", "--stats", "-"}, input);
  CHECK(stats.out == expected);
  CHECK(Contains(stats.err, "read 30,000 lines"));
}

TEST_CASE("dedupe: a last line without newline, empty input, and a filter far too small") {
  // The output ends as the input did: no newline is added to a last line that had none.
  CHECK(Run({"dedupe"}, "a\nb\na\nc").out == "a\nb\nc");
  CHECK(Run({"dedupe"}, "a\nb\na\nc\n").out == "a\nb\nc\n");
  CHECK(Run({"dedupe"}, "c\nb\nc").out == "c\nb\n");  // the unterminated last line is a repeat
  RunResult empty = Run({"dedupe"}, "");
  CHECK(empty.exit_code == 0);
  CHECK(empty.out.empty());

  // 512 bits for 5,000 distinct lines: many wrong drops, but never a duplicate, never a line out
  // of order, and a warning that the capacity was exceeded.
  const std::vector<std::string> lines = RepeatingLines(10'000, 5'000, 11);
  RunResult tiny =
      Run({"dedupe", "--bits", "512", "--hashes", "2", "--capacity", "100"}, JoinLines(lines));
  CHECK(tiny.exit_code == 0);
  const std::vector<std::string> kept = SplitLines(tiny.out);
  const std::vector<std::string> firsts = FirstOccurrences(lines);
  CHECK(kept.size() < firsts.size());
  size_t at = 0;
  for (const std::string& line : kept) {  // kept is a subsequence of the first occurrences
    while (at < firsts.size() && firsts[at] != line) ++at;
    CHECK(at < firsts.size());
    ++at;
  }
  CHECK(Contains(tiny.err, "over the planned capacity"));
}

TEST_CASE("dedupe errors: missing file (1), a directory (1), bad usage (2)") {
  RunResult missing = Run({"dedupe", Scratch().File("does_not_exist.txt")});
  CHECK(missing.exit_code == 1);
  CHECK(Contains(missing.err, "does_not_exist.txt"));
  CHECK(Run({"dedupe", std::filesystem::temp_directory_path().string()}).exit_code == 1);
  CHECK(Run({"dedupe", "--bits", "2^20", "--fpr", "0.01"}).exit_code == 2);
  CHECK(Run({"dedupe", "a.txt", "b.txt"}).exit_code == 2);
  CHECK(Run({"dedupe", "--capacity", "1e6x"}).exit_code == 2);
}

#if !BLOOMERY_TEST_SANITIZED
// The bytes of address space process `pid` has mapped (VmSize in /proc/PID/status). Only the
// unsanitized build caps the child's address space with it (the sanitizers' shadow memory
// cannot fit under such a cap).
uint64_t MappedBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    uint64_t kib = 0;
    if (std::sscanf(line.c_str(), "VmSize: %" SCNu64 " kB", &kib) == 1) return kib * 1024;
  }
  FAIL("no VmSize in /proc/" << pid << "/status");
  return 0;
}
#endif

// Issue #30: a line arriving through a pipe (64 KiB a read) was searched for its '\n' from its
// start after every read, so a 1 GiB line took 12 minutes; and it took five times its size in
// memory at its peak (the reader's buffer doubled by a copy, the writer's copy of the line grown
// twice over). Its time is not asserted; its memory is, as a limit on the child's address space.
TEST_CASE("a 64 MiB line through a pipe: dedupe prints it once, in about twice its size") {
  const std::string fifo = Scratch().File("long_line.fifo");
  std::filesystem::remove(fifo);
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // A child that died before reading must fail the write (EPIPE), not kill this process.
  struct sigaction ignore {};
  struct sigaction before {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(sigaction(SIGPIPE, &ignore, &before) == 0);
  const std::string line(size_t{64} << 20, 'x');
  const auto through_pipe = [&](const std::string& input) {
    Spawned child = Spawn({"dedupe", "--capacity", "1000", fifo});
    // Open the FIFO once the child has (ENXIO until then), unless the child has exited.
    int fd = -1;
    while ((fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
      REQUIRE(errno == ENXIO);
      siginfo_t info{};
      REQUIRE(waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0);
      REQUIRE_MESSAGE(info.si_pid == 0, "bloomery exited before opening its input");
      usleep(1000);
    }
#if !BLOOMERY_TEST_SANITIZED
    // No input has arrived yet, so the child holds at most its first 1 MiB read buffer and its
    // small filter (32 MiB of slack covers them). The line's buffer doubles to 128 MiB, and the
    // output goes out from it; the old reader and writer peaked at 320 MiB and failed here.
    // (Sanitizers reserve terabytes of address space.)
    const rlimit limit{MappedBytes(child.pid) + (32 << 20) + 3 * line.size(), RLIM_INFINITY};
    REQUIRE(prlimit(child.pid, RLIMIT_AS, &limit, nullptr) == 0);
#endif
    REQUIRE(fcntl(fd, F_SETFL, 0) == 0);  // blocking writes: the pipe paces them
    for (size_t done = 0; done < input.size();) {
      const ssize_t put = write(fd, input.data() + done, input.size() - done);
      if (put < 0 && errno == EINTR) continue;
      REQUIRE(put > 0);
      done += static_cast<size_t>(put);
    }
    close(fd);
    return Wait(child);
  };
  const RunResult small = through_pipe("x\ny\nx\n");
  REQUIRE_MESSAGE(small.exit_code == 0, small.err);
  CHECK(small.out == "x\ny\n");
  const RunResult big = through_pipe(line + "\ny\n" + line + "\n");
  REQUIRE(sigaction(SIGPIPE, &before, nullptr) == 0);
  REQUIRE_MESSAGE(big.exit_code == 0, big.err);
  CHECK(big.out.size() == line.size() + 3);
  CHECK(big.out == line + "\ny\n");
}

// ---------------------------------------------------------------------------------------------
// dedupe --state, --window-keys and --window

TEST_CASE("dedupe --state remembers lines across runs") {
  const std::vector<std::string> a = RepeatingLines(6'000, 3'000, 21);
  std::vector<std::string> b = RepeatingLines(6'000, 6'000, 22);  // overlaps a's values
  const std::string state = Scratch().File("dedupe_state.bloom");
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--capacity", "20000", "--fpr", "1e-9"},
        std::vector<std::string>{"--kind", "scalable", "--capacity", "500", "--fpr", "1e-7",
                                 "--checkpoint", "1000"}}) {
    CAPTURE(flags[1]);
    std::filesystem::remove(state);
    std::vector<std::string> first = {"dedupe", "--state", state};
    first.insert(first.end(), flags.begin(), flags.end());
    RunResult run1 = Run(first, JoinLines(a));
    REQUIRE_MESSAGE(run1.exit_code == 0, run1.err);
    CHECK(run1.out == JoinLines(FirstOccurrences(a)));
    REQUIRE(std::filesystem::exists(state));

    RunResult run2 = Run({"dedupe", "--state", state}, JoinLines(b));
    REQUIRE_MESSAGE(run2.exit_code == 0, run2.err);
    const std::unordered_set<std::string> in_a(a.begin(), a.end());
    std::vector<std::string> expected;
    for (const std::string& line : FirstOccurrences(b)) {
      if (!in_a.contains(line)) expected.push_back(line);
    }
    REQUIRE(expected.size() < FirstOccurrences(b).size());
    CHECK(run2.out == JoinLines(expected));
  }
  // Sizing flags with an existing state are ignored, with a warning.
  RunResult warned = Run({"dedupe", "--state", state, "--capacity", "10"}, JoinLines(a));
  CHECK(warned.exit_code == 0);
  CHECK(warned.out.empty());  // every line of a is remembered
  CHECK(Contains(warned.err, "--capacity ignored"));
}

// A window of 8 lines in 4 generations keeps a line for at least 6 lines first seen after it and
// forgets it after 8 (windowed_filter.h); repeats of a remembered line do not count.
TEST_CASE("dedupe --window-keys: a line comes back exactly when the window has passed it") {
  const std::vector<std::string> within = {"a", "f1", "f2", "f3", "f4", "f5", "a", "f1"};
  RunResult kept = Run({"dedupe", "--window-keys", "8"}, JoinLines(within));
  REQUIRE_MESSAGE(kept.exit_code == 0, kept.err);
  CHECK(kept.out == JoinLines({"a", "f1", "f2", "f3", "f4", "f5"}));
  const std::vector<std::string> past = {"a", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "a"};
  RunResult back = Run({"dedupe", "--window-keys", "8"}, JoinLines(past));
  REQUIRE_MESSAGE(back.exit_code == 0, back.err);
  CHECK(back.out == JoinLines(past));

  // --state keeps the window (and how far it has gone) across runs.
  const std::string state = Scratch().File("window_state.bloom");
  std::filesystem::remove(state);
  RunResult run1 = Run({"dedupe", "--window-keys", "8", "--state", state},
                       JoinLines({"a", "f1", "f2", "f3", "f4", "f5"}));
  REQUIRE_MESSAGE(run1.exit_code == 0, run1.err);
  RunResult run2 = Run({"dedupe", "--state", state}, JoinLines({"a", "f6", "f7", "f8", "a"}));
  REQUIRE_MESSAGE(run2.exit_code == 0, run2.err);
  CHECK(run2.out == JoinLines({"f6", "f7", "f8", "a"}));

  // info: four generations of 2 lines, newest first, every one live after a whole window.
  RunResult json_run = Run({"info", state, "--json"});
  REQUIRE_MESSAGE(json_run.exit_code == 0, json_run.err);
  const Json json = ParseJson(json_run.out);
  CHECK(json["kind"].string == "windowed");
  const Json& generations = json["generations"];
  REQUIRE(generations.items.size() == 4);
  for (size_t age = 0; age < 4; ++age) {
    CAPTURE(age);
    CHECK(generations[age]["age"].U64() == age);
    CHECK(generations[age]["live"].boolean);
    CHECK(generations[age]["epoch"].U64() + age == generations[0]["epoch"].U64());
    CHECK(generations[age]["unit"].string == "lines");
    CHECK(generations[age]["began_ago_min"].U64() == 2 * age);
    CHECK(generations[age]["began_ago_max"].U64() == 2 * age + 2);
  }
  RunResult text = Run({"info", state});
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(Contains(text.out, "began 6 to 8 lines ago"));
}

// Issue #30: a window of W lines lasted G*ceil(W/G) (4 lines for W = 1..4 at G = 4).
TEST_CASE("dedupe --window-keys below the generations: a line comes back after W others") {
  CHECK(Run({"dedupe", "--window-keys", "1"}, "a\nb\na\n").out == "a\nb\na\n");
  CHECK(Run({"dedupe", "--window-keys", "1"}, "a\na\nb\n").out == "a\nb\n");  // not counted
  // W = 3 (G = 4): a line is kept through 2 lines first seen after it and gone after 3.
  CHECK(Run({"dedupe", "--window-keys", "3", "--fpr", "1e-9"}, "a\nb\nc\na\n").out == "a\nb\nc\n");
  CHECK(Run({"dedupe", "--window-keys", "3", "--fpr", "1e-9"}, "a\nb\nc\nd\na\n").out ==
        "a\nb\nc\nd\na\n");
}

// The library takes an injectable clock, so the CLI reads a fixed one from the environment.
TEST_CASE("dedupe --window 7d --state: a line comes back after 7 days, not after 3") {
  const std::string state = Scratch().File("window_days.bloom");
  std::filesystem::remove(state);
  const int64_t day = int64_t{86'400} * 1'000'000'000;
  const int64_t start = int64_t{1'800'000'000} * 1'000'000'000;
  auto run_at = [&](int64_t now, std::vector<std::string> args) {
    return Wait(
        Spawn(args, JoinLines({"x", "y"}), "", {"BLOOMERY_FAKE_CLOCK_NS=" + std::to_string(now)}));
  };
  RunResult first =
      run_at(start, {"dedupe", "--window", "7d", "--capacity", "1000", "--state", state});
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.out == JoinLines({"x", "y"}));
  CHECK(run_at(start + 3 * day, {"dedupe", "--state", state}).out.empty());
  CHECK(run_at(start + 8 * day, {"dedupe", "--state", state}).out == JoinLines({"x", "y"}));

  CHECK(Run({"dedupe", "--window", "7"}).exit_code == 2);  // a duration needs its unit
  CHECK(Run({"dedupe", "--window", "7d", "--window-keys", "5"}).exit_code == 2);
  CHECK(Run({"dedupe", "--window-keys", "5", "--kind", "blocked"}).exit_code == 2);
  CHECK(Run({"dedupe", "--kind", "windowed"}).exit_code == 2);
}

TEST_CASE("dedupe --state: only a missing file starts fresh, and an unwritable place fails first") {
  const std::string input = "a\nb\na\n";
  const std::string plain = WriteLines("not_a_dir.txt", {"x"});
  // "not_a_dir.txt/state": ENOTDIR, not "no state yet".
  RunResult not_dir = Run({"dedupe", "--state", plain + "/state.bloom"}, input);
  CHECK(not_dir.exit_code == 1);
  CHECK(not_dir.out.empty());
  CHECK(Contains(not_dir.err, "not_a_dir.txt"));
  // A directory that does not exist: no output at all, since the state could never be saved.
  RunResult no_dir = Run({"dedupe", "--state", Scratch().File("missing_dir/state.bloom")}, input);
  CHECK(no_dir.exit_code == 1);
  CHECK(no_dir.out.empty());
  // A missing file in a writable directory is a fresh state.
  RunResult fresh = Run({"dedupe", "--state", Scratch().File("fresh_state.bloom")}, input);
  CHECK(fresh.exit_code == 0);
  CHECK(fresh.out == "a\nb\n");
}

// ---------------------------------------------------------------------------------------------
// intersect

struct IntersectCase {
  std::string a_path;
  std::string b_path;
  std::vector<std::string> b_lines;
  std::vector<std::string> common;  // lines of B that are in A, in B's order
  size_t not_common = 0;
};

IntersectCase MakeIntersectCase() {
  IntersectCase c;
  std::vector<std::string> a;
  for (int i = 0; i < 6000; ++i) a.push_back("https://a.example/" + std::to_string(i * 3));
  std::unordered_set<std::string> in_a(a.begin(), a.end());
  SplitMix64 rng(3);
  for (int i = 0; i < 8000; ++i) {
    c.b_lines.push_back("https://a.example/" + std::to_string(rng.Below(30'000)));
    if (in_a.contains(c.b_lines.back())) {
      c.common.push_back(c.b_lines.back());
    } else {
      ++c.not_common;
    }
  }
  c.a_path = Scratch().File("a.txt");
  c.b_path = Scratch().File("b.txt");
  WriteFile(c.a_path, JoinLines(a));
  WriteFile(c.b_path, JoinLines(c.b_lines));
  return c;
}

// Checks that `out` is B's lines in order, with every common line; returns the false positives.
size_t CheckIntersection(const IntersectCase& c, const std::string& out) {
  const std::vector<std::string> printed = SplitLines(out);
  std::unordered_set<std::string> common(c.common.begin(), c.common.end());
  size_t at = 0;
  size_t common_seen = 0;
  size_t extra = 0;
  for (const std::string& line : printed) {
    while (at < c.b_lines.size() && c.b_lines[at] != line) {
      CHECK_FALSE(common.contains(c.b_lines[at]));  // a common line was skipped
      ++at;
    }
    REQUIRE(at < c.b_lines.size());  // printed line is not the next line of B
    ++at;
    common.contains(line) ? ++common_seen : ++extra;
  }
  CHECK(common_seen == c.common.size());
  return extra;
}

double ReportedFpr(const std::string& err) {
  const std::string marker = "expected false-positive rate ";
  const size_t at = err.find(marker);
  REQUIRE(at != std::string::npos);
  return std::stod(err.substr(at + marker.size()));
}

TEST_CASE("intersect prints every line of B that is in A, and few others") {
  const IntersectCase c = MakeIntersectCase();
  REQUIRE(c.common.size() > 1000);
  REQUIRE(c.not_common > 1000);

  RunResult roomy = Run({"intersect", c.a_path, c.b_path});
  REQUIRE_MESSAGE(roomy.exit_code == 0, roomy.err);
  const size_t roomy_extra = CheckIntersection(c, roomy.out);
  CHECK(WithinBinomialBound(roomy_extra, c.not_common, ReportedFpr(roomy.err)));
  CHECK(Contains(roomy.err, "A has 6,000 lines"));

  // 4 KiB for 6,000 lines: ~5.5 bits per line, a high FPR, printed and then honoured.
  RunResult tight = Run({"intersect", c.a_path, "-", "--memory", "4K", "--capacity", "6000"},
                        JoinLines(c.b_lines));
  REQUIRE_MESSAGE(tight.exit_code == 0, tight.err);
  const double fpr = ReportedFpr(tight.err);
  CHECK(fpr > 0.01);
  CHECK(WithinBinomialBound(CheckIntersection(c, tight.out), c.not_common, fpr));
}

TEST_CASE("intersect errors: missing files (1), bad usage (2)") {
  const IntersectCase c = MakeIntersectCase();
  RunResult missing_a = Run({"intersect", Scratch().File("nope_a"), c.b_path});
  CHECK(missing_a.exit_code == 1);
  CHECK(Contains(missing_a.err, "nope_a"));
  RunResult missing_b = Run({"intersect", c.a_path, Scratch().File("nope_b")});
  CHECK(missing_b.exit_code == 1);
  CHECK(Contains(missing_b.err, "nope_b"));
  CHECK(Run({"intersect", c.a_path}).exit_code == 2);
  CHECK(Run({"intersect", c.a_path, c.b_path, "--memory", "4Q"}).exit_code == 2);
  CHECK(Run({"intersect", c.a_path, c.b_path, "--memory", "8"}).exit_code == 2);
}

TEST_CASE("intersect reads an A that cannot be read twice (stdin, a pipe) once") {
  const IntersectCase c = MakeIntersectCase();
  // Without --capacity A is counted, then loaded: stdin is held in memory between the passes
  // (it used to be re-read, found empty, and nothing was printed).
  RunResult piped = Run({"intersect", "-", c.b_path}, ReadFile(c.a_path));
  REQUIRE_MESSAGE(piped.exit_code == 0, piped.err);
  CHECK(Contains(piped.err, "A has 6,000 lines"));
  CHECK(WithinBinomialBound(CheckIntersection(c, piped.out), c.not_common, ReportedFpr(piped.err)));
  // More than --memory cannot be held: a clear error, not an empty answer.
  RunResult over = Run({"intersect", "-", c.b_path, "--memory", "4K"}, ReadFile(c.a_path));
  CHECK(over.exit_code == 1);
  CHECK(Contains(over.err, "cannot be read twice"));
}

}  // namespace
}  // namespace bloomery::cli_test
