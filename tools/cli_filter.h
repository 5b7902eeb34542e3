// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_filter.h: AnyFilter, one handle over every filter kind, for the subcommands that work on
// filter files (build, add, remove, query, info, merge, repair) and for dedupe (--kind, --state).
// It is the one place in tools/ that maps kinds to operations: it picks the loader from the file
// itself (bloomery::InspectFile) and gives the kinds one set of batch operations.
#ifndef BLOOMERY_TOOLS_CLI_FILTER_H_
#define BLOOMERY_TOOLS_CLI_FILTER_H_

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"

namespace bloomery::cli {

// What `build` (and `dedupe --state` for a new state file) creates.
struct CreateSpec {
  FilterKind kind = FilterKind::kBlocked;
  FilterOptions sizing;       // capacity/fpr or bits/hashes; capacity is the initial one for
                              // scalable filters; max_memory_bytes from --max-memory
  uint32_t counter_bits = 4;  // counting filters
  // Windowed filters: the window as a duration; zero means a window of sizing.capacity lines.
  int64_t window_ns = 0;
};

// The flags that choose what to create: "--kind K", the sizing flags, "--counter-bits 4|8"
// (counting filters only) and "--max-memory SIZE".
struct CreateFlags {
  void Add(CLI::App& app, const std::string& capacity_help, const std::string& fpr_help);
  // Errors (InvalidArgument): an unknown kind, --counter-bits for another kind, and those of
  // SizingFlags::Options.
  [[nodiscard]] absl::StatusOr<CreateSpec> Spec(uint64_t default_capacity,
                                                double default_fpr) const;
  // The flags given that shape a new filter ("--kind", "--capacity", ...).
  [[nodiscard]] std::vector<std::string> Given() const;

  std::string kind = "blocked";
  SizingFlags sizing;
  uint32_t counter_bits = 4;
  uint64_t max_memory = 0;
  int64_t window_ns = 0;
  uint64_t window_keys = 0;
  CLI::Option* kind_flag = nullptr;
  CLI::Option* counter_bits_flag = nullptr;
  CLI::Option* window_flag = nullptr;
  CLI::Option* window_keys_flag = nullptr;
};

// A status from reading filter file `path`, for the exit code and the message: the library
// answers InvalidArgument for a file that is not a bloomery file, which is bad input (exit 1), not
// bad usage (exit 2); the message names the file.
[[nodiscard]] absl::Status FileStatus(const absl::Status& status, const std::string& path);

// The advisory lock that one load-modify-save of `path` holds (LockForUpdate, file.h): a second
// bloomery process updating the same file waits for the first (or, with no_wait, fails at once
// naming it), so no writer's keys are lost. Hold it from before the load until after the save.
[[nodiscard]] absl::StatusOr<FileLock> LockFile(const std::string& path, bool no_wait);

class AnyFilter {
 public:
  // Errors: InvalidArgument for an unknown kind or sizing the kind refuses.
  [[nodiscard]] static absl::StatusOr<AnyFilter> Create(const CreateSpec& spec);
  // Loads a file of any kind with `options` (by default: checksums verified, a DIRTY file refused).
  // Errors: those of InspectFile and the kind's Load, through FileStatus.
  [[nodiscard]] static absl::StatusOr<AnyFilter> Load(const std::string& path,
                                                      const LoadOptions& options = {});

  [[nodiscard]] std::string_view kind() const;
  // Adds lines; was_new[i] as Insert's answer. A scalable filter that is full refuses new keys:
  // that is ResourceExhausted, after the keys before it went in.
  [[nodiscard]] absl::StatusOr<size_t> InsertMany(std::span<const std::string_view> keys,
                                                  std::span<bool> was_new);
  size_t MayContainMany(std::span<const std::string_view> keys, std::span<bool> results) const;
  // Counting filters only (FailedPrecondition otherwise): erased[i] true if the key was erased,
  // false if it was certainly absent.
  [[nodiscard]] absl::StatusOr<size_t> EraseMany(std::span<const std::string_view> keys,
                                                 std::span<bool> erased);
  // FailedPrecondition for different kinds or incompatible parameters.
  [[nodiscard]] absl::Status UnionWith(const AnyFilter& other);
  [[nodiscard]] absl::Status Save(const std::string& path) const;

  // Keys planned for; for a filter sized by bits and hashes alone, the count at which those
  // hashes are the best choice (bits * ln 2 / k), past which its FPR climbs fast.
  [[nodiscard]] uint64_t capacity() const;
  // The FPR the filter was planned for at capacity() keys (scalable: the chain's bound).
  [[nodiscard]] double planned_fpr() const;
  // Stages of a scalable filter; 1 for the other kinds.
  [[nodiscard]] uint32_t stage_count() const;
  // Infinite for a saturated filter (every bit set): no count can be inferred from it.
  [[nodiscard]] double EstimatedCount() const;
  [[nodiscard]] double EstimatedFpr() const;
  [[nodiscard]] uint64_t memory_bytes() const;
  // The windowed filter, or null for the other kinds.
  [[nodiscard]] WindowedFilter* windowed() { return std::get_if<WindowedFilter>(&filter_); }

 private:
  using Variant =
      std::variant<BlockedFilter, ClassicFilter, ScalableFilter, CountingFilter, WindowedFilter>;
  explicit AnyFilter(Variant filter) : filter_(std::move(filter)) {}
  Variant filter_;
};

// A windowed filter's clock: the system clock, or (tests only) the fixed time in ns since the Unix
// epoch that BLOOMERY_FAKE_CLOCK_NS holds, so a test can step a --state file's time across runs.
[[nodiscard]] WindowClock ClockFromEnvironment();

// "saturated" when `count` is infinite (every bit set), else the count rounded, for people.
[[nodiscard]] std::string FormatEstimate(double count);
// The same for JSON: the string "saturated" or a number, never null.
[[nodiscard]] Json EstimateJson(double count);

// Warns on stderr when `keys` went over `capacity` (a Filter: AnyFilter or BlockedFilter).
template <typename Filter>
void WarnIfOverCapacity(std::string_view command, double keys, uint64_t capacity,
                        const Filter& filter) {
  if (capacity == 0 || keys <= static_cast<double>(capacity)) return;
  std::fprintf(stderr,
               "bloomery %.*s: warning: %s keys went in, over the planned capacity of %s; the "
               "false-positive rate rose to about %s (plan for more)\n",
               static_cast<int>(command.size()), command.data(), FormatEstimate(keys).c_str(),
               FormatCount(capacity).c_str(), FormatFpr(filter.EstimatedFpr()).c_str());
}

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_FILTER_H_
