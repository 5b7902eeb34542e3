// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// cli_filter.h: AnyFilter, one handle over every filter kind, for the subcommands that work on
// filter files (build, add, remove, query, info, merge) and for dedupe (--kind, --state). It is
// the one place that knows the four kinds. It picks the loader from
// the file itself (bloomery::InspectFile) and gives the kinds one set of batch operations.
#ifndef BLOOMERY_TOOLS_CLI_FILTER_H_
#define BLOOMERY_TOOLS_CLI_FILTER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bloomery/bloomery.h"
#include "cli_common.h"

namespace bloomery::cli {

// What `build` (and `dedupe --state` for a new state file) creates.
struct CreateSpec {
  std::string kind = "blocked";  // blocked | classic | scalable | counting
  FilterOptions sizing;          // capacity/fpr or bits/hashes; capacity is the initial one for
                                 // scalable filters
  uint32_t counter_bits = 4;     // counting filters
};

// The flags that choose what to create: "--kind K", the sizing flags of SizingFromFlags, and
// "--counter-bits 4|8" (counting filters only). Errors (InvalidArgument): an unknown kind,
// --counter-bits for another kind, and those of SizingFromFlags.
[[nodiscard]] absl::StatusOr<CreateSpec> CreateSpecFromFlags(const Args& args,
                                                             uint64_t default_capacity,
                                                             double default_fpr);
// A status from reading a filter file, for the exit code: the library answers InvalidArgument for
// a file that is not a bloomery file, which is bad input (exit 1), not bad usage (exit 2).
[[nodiscard]] absl::Status FileStatus(const absl::Status& status);

class AnyFilter {
 public:
  // Errors: InvalidArgument for an unknown kind or sizing the kind refuses.
  [[nodiscard]] static absl::StatusOr<AnyFilter> Create(const CreateSpec& spec);
  // Loads a file of any kind with `options` (by default: checksums verified, a DIRTY file refused).
  // Errors: those of the kind's Load, through FileStatus.
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

  [[nodiscard]] uint64_t capacity() const;
  // The FPR the filter was planned for at capacity() keys (scalable: the chain's bound).
  [[nodiscard]] double planned_fpr() const;
  // Stages of a scalable filter; 1 for the other kinds.
  [[nodiscard]] uint32_t stage_count() const;
  [[nodiscard]] double EstimatedCount() const;
  [[nodiscard]] double EstimatedFpr() const;
  [[nodiscard]] uint64_t memory_bytes() const;

 private:
  using Variant = std::variant<BlockedFilter, ClassicFilter, ScalableFilter, CountingFilter>;
  explicit AnyFilter(Variant filter) : filter_(std::move(filter)) {}
  Variant filter_;
};

}  // namespace bloomery::cli

#endif  // BLOOMERY_TOOLS_CLI_FILTER_H_
