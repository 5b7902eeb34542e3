// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// `bloomery dedupe`: stream lines through a filter of any kind (AnyFilter), optionally kept in a
// state file, in batches so the filter hashes, locates and prefetches many keys at a time.
// `bloomery intersect` (cli_intersect.cc) is declared after it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"

namespace bloomery::cli {
namespace {

constexpr uint64_t kDefaultDedupeCapacity = 10'000'000;
constexpr double kDefaultDedupeFpr = 1e-6;
constexpr uint64_t kDefaultCheckpointLines = 10'000'000;

struct DedupeFlags {
  CreateFlags create;
  bool stats = false;
  std::string state;
  uint64_t checkpoint = kDefaultCheckpointLines;
  bool strip_cr = false;
  bool allow_dirty = false;
  bool no_wait = false;
  std::string input = "-";
  CLI::Option* state_flag = nullptr;
};

// Whether the state file exists. Only "no such file" starts a fresh state: any other error
// (permissions, a symlink loop, a file in the way of a directory) must not silently forget what
// the state holds.
absl::StatusOr<bool> StateExists(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  return InputError(absl::StrCat("--state ", path, ": ", std::strerror(errno)));
}

// A checkpoint's Save put a new file at `path`, and `lock` is on the one it replaced (file.h: one
// lock covers one load-modify-save). Lock the new file before letting the old one go; if another
// process got to it first, stop rather than overwrite its work later: the state already holds
// every line written out, so a rerun loses nothing.
absl::Status RelockState(const std::string& path, FileLock& lock) {
  absl::StatusOr<FileLock> fresh = LockFile(path, /*no_wait=*/true);
  if (!fresh.ok()) {
    return absl::Status(fresh.status().code(),
                        absl::StrCat(fresh.status().message(),
                                     " (after a checkpoint; the state holds every line written)"));
  }
  lock = *std::move(fresh);
  return absl::OkStatus();
}

absl::Status RunDedupe(const DedupeFlags& flags) {
  // The flags are checked even when a state file will make them moot: a typo is always an error.
  absl::StatusOr<CreateSpec> spec = flags.create.Spec(kDefaultDedupeCapacity, kDefaultDedupeFpr);
  if (!spec.ok()) return spec.status();
  const bool with_state = Given(flags.state_flag);
  absl::StatusOr<LineReader> reader = LineReader::Open(flags.input, flags.strip_cr);
  if (!reader.ok()) return reader.status();

  bool resume = false;
  FileLock lock;  // held for the whole run: another dedupe of this state waits (or --no-wait)
  if (with_state) {
    absl::StatusOr<FileLock> held = LockFile(flags.state, flags.no_wait);
    if (!held.ok()) return held.status();
    lock = *std::move(held);
    absl::StatusOr<bool> exists = StateExists(flags.state);
    if (!exists.ok()) return exists.status();
    if (absl::Status s = CheckWritableBeside("--state", flags.state); !s.ok()) return s;
    resume = *exists;
  }
  LoadOptions load;
  load.max_bytes = flags.create.max_memory;
  load.allow_dirty = flags.allow_dirty;
  absl::StatusOr<AnyFilter> filter = resume ? LoadFilter(flags.state, load) : CreateFilter(*spec);
  if (!filter.ok()) return filter.status();
  double known = 0;  // distinct lines the filter held before this run (infinite: saturated)
  if (resume) {
    for (const std::string& flag : flags.create.Given()) {
      std::fprintf(stderr,
                   "bloomery dedupe: warning: %s ignored: %s exists and its %.*s filter is used "
                   "as it is\n",
                   flag.c_str(), flags.state.c_str(), static_cast<int>(KindName(*filter).size()),
                   KindName(*filter).data());
    }
    known = filter->EstimatedCount();
  }

  LineWriter out;
  uint64_t read = 0;
  absl::StatusOr<BatchTotals> totals = ForEachBatch(
      *reader, "dedupe",
      [&](std::span<const std::string_view> lines,
          std::span<bool> was_new) -> absl::StatusOr<size_t> {
        // InsertMany answers as if the keys were inserted one by one, so a line repeated within
        // the batch is new only at its first occurrence. A full scalable filter stops the run
        // here, with the state file at its last checkpoint, after the lines it did add are out.
        absl::StatusOr<size_t> added = filter->InsertMany(lines, was_new);
        for (size_t i = 0; i < lines.size(); ++i) {
          // A last line without '\n' is copied without one.
          const bool last = i + 1 == lines.size() && reader->unterminated();
          if (was_new[i]) out.Write(lines[i], !last);
        }
        if (!added.ok()) {
          if (absl::Status s = out.Flush(); !s.ok()) return s;
          return added.status();
        }
        read += lines.size();
        if (with_state && read % flags.checkpoint == 0) {
          // Output first: the state must never remember a line that was not written out.
          if (absl::Status s = out.Flush(); !s.ok()) return s;
          if (absl::Status s = filter->Save(flags.state); !s.ok()) return s;
          if (absl::Status s = RelockState(flags.state, lock); !s.ok()) return s;
        }
        return added;
      },
      with_state ? flags.checkpoint : 0);
  if (!totals.ok()) return totals.status();
  if (absl::Status s = out.Flush(); !s.ok()) return s;
  if (with_state && read % flags.checkpoint != 0) {
    if (absl::Status s = filter->Save(flags.state); !s.ok()) return s;
  }
  const uint64_t kept = totals->counted;
  // A window forgets: what it held before this run does not add up with what went in since.
  if (filter->get_if<WindowedFilter>() == nullptr) {
    WarnIfOverCapacity("dedupe", known + static_cast<double>(kept), filter->capacity(), *filter);
  }
  if (flags.stats) {
    std::fprintf(stderr,
                 "bloomery dedupe: read %s lines, kept %s, dropped %s; %.*s filter %s, "
                 "false-positive rate now about %s\n",
                 FormatCount(read).c_str(), FormatCount(kept).c_str(),
                 FormatCount(read - kept).c_str(), static_cast<int>(KindName(*filter).size()),
                 KindName(*filter).data(),
                 FormatBytes(static_cast<double>(filter->memory_bytes())).c_str(),
                 FormatFpr(filter->EstimatedFpr()).c_str());
  }
  return absl::OkStatus();
}

}  // namespace

// `bloomery intersect` (cli_intersect.cc), declared after dedupe.
void AddStreamCommands(Commands& commands) {
  auto [app, flags] = commands.Add<DedupeFlags>(
      "dedupe", "copy stdin (or FILE) to stdout, keeping only the first occurrence of each line",
      R"(A line is never printed twice; a line seen for the first time is dropped, wrongly, with
probability about the filter's false-positive rate. Past the planned capacity that rate
climbs: size the filter for the number of distinct lines, or use --kind scalable.
With --state, saving is atomic (temp file, fsync, rename), so FILE always holds a complete
filter from the last checkpoint. Output is flushed before each save, so every line the
state remembers has been written out; after a crash a restart on the same input may print
lines read since the last checkpoint again: delivery is at-least-once, never lost.
--window 7d (or --window-keys N) is for revisit crawls: a line is printed again once the
window has passed since it was first printed; --state keeps the window across runs.)",
      RunDedupe);
  app->add_option("input", flags->input, "lines to read (default: stdin, or \"-\")")
      ->type_name("INPUT");
  flags->create.Add(*app, "distinct lines expected (default 10M)",
                    "false-positive rate at capacity (default 1e-6): the chance of a wrong drop");
  AddFlag(*app, "--stats", flags->stats, "print lines read, kept and dropped to stderr at the end");
  flags->state_flag =
      app->add_option("--state", flags->state,
                      "remember the lines seen across runs: load the filter from FILE if it "
                      "exists (the sizing flags are then ignored, with a warning), else create it; "
                      "save it at every checkpoint and at the end")
          ->type_name("FILE")
          ->check(FileName());
  AddNumber(*app, "--checkpoint", flags->checkpoint, Unit::kCount, {},
            "with --state: save every N lines read (default 10M)")
      ->needs(flags->state_flag);
  AddAllowDirty(*app, flags->allow_dirty);
  AddNoWait(*app, flags->no_wait);
  AddStripCr(*app, flags->strip_cr);
  AddIntersectCommand(commands);
}

}  // namespace bloomery::cli
