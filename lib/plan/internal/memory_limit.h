// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// memory_limit.h: how much memory this process may ask for, so that a filter this machine cannot
// hold is refused up front. Storage maps with MAP_NORESERVE, so the kernel would grant a 35 TB
// mapping and the process would only die later, page by page, when it touches it.
#ifndef BLOOMERY_LIB_PLAN_INTERNAL_MEMORY_LIMIT_H_
#define BLOOMERY_LIB_PLAN_INTERNAL_MEMORY_LIMIT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace bloomery::detail {

struct MemoryLimit {
  uint64_t bytes = 0;  // 0: unknown (then nothing is refused on its account)
  std::string source;  // where the figure came from, for error messages
};

// Physical memory (sysconf), lowered by this process's cgroup memory limit when one is set and
// readable (v2 memory.max, v1 memory.limit_in_bytes). Read once per process: a few small file
// reads, and the figure only decides what to refuse up front.
[[nodiscard]] const MemoryLimit& MachineMemoryLimit();

// OK when `bytes` fit under `cap`, or, when `cap` is 0, under MachineMemoryLimit(); otherwise
// ResourceExhausted naming the size, the limit and where the limit came from.
[[nodiscard]] absl::Status CheckMemoryCap(uint64_t bytes, uint64_t cap);

}  // namespace bloomery::detail

#endif  // BLOOMERY_LIB_PLAN_INTERNAL_MEMORY_LIMIT_H_
