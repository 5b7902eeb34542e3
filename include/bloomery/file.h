// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// file.h: what a saved filter file holds, without loading it.
//
// Every filter kind is saved in one format (docs/FORMAT.md). InspectFile validates a file's header
// (always) and its payload checksums (optionally, streaming: memory stays O(1 MiB) whatever the
// file's size) and reports the filter's kind and parameters, so a tool can pick the right loader
// or print what a file is.
//
//   absl::StatusOr<bloomery::FileInfo> info = bloomery::InspectFile("urls.bloom");
//   if (info.ok() && info->kind == bloomery::FilterKind::kBlocked) {
//     auto f = bloomery::BlockedFilter::Load(...);
//   }
#ifndef BLOOMERY_FILE_H_
#define BLOOMERY_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "bloomery/filter_kind.h"

namespace bloomery {

struct FileInfo {
  FilterKind kind = FilterKind::kBlocked;
  uint32_t version = 0;     // file format version
  uint64_t file_bytes = 0;  // size of the file
  uint64_t payload_bytes = 0;
  uint64_t bits = 0;    // total over all stages (counting: counters * counter_bits)
  uint32_t hashes = 0;  // k (scalable: of the first stage)
  uint32_t counter_bits = 0;
  uint32_t stages = 0;
  uint64_t capacity = 0;      // planned keys (scalable: of the first stage)
  double fpr = 0;             // planned FPR (scalable: the chain's bound)
  uint64_t insert_count = 0;  // keys counted in (scalable: sum over stages), 0 if not tracked
  uint64_t seed = 0;
  bool dirty = false;               // mapped read-write and not flushed
  bool checksums_verified = false;  // payload checksums were checked and match
};

// Validates `path` and describes it. verify_checksums: also stream the payload through its
// checksums (skipped for a DIRTY file, whose checksums are stale by definition).
// Errors: as BlockedFilter::Load (NotFound, InvalidArgument for a non-bloomery file,
// Unimplemented for a newer version, DataLoss for corruption).
[[nodiscard]] absl::StatusOr<FileInfo> InspectFile(const std::string& path,
                                                   bool verify_checksums = true);

// The same for a file's bytes held in memory (what a filter's SaveToBytes returns): the same
// validator, the same verdicts and errors.
[[nodiscard]] absl::StatusOr<FileInfo> InspectBytes(std::string_view bytes,
                                                    bool verify_checksums = true);

}  // namespace bloomery

#endif  // BLOOMERY_FILE_H_
