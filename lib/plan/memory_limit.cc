// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
#include "plan/internal/memory_limit.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace bloomery {
namespace {

// The first line of `path` as a byte count; 0 when unreadable, "max" (v2: no limit) or not a
// number. v1 writes "no limit" as a huge number, which the caller's min() then ignores.
uint64_t ReadLimitFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return 0;
  uint64_t value = 0;
  return absl::SimpleAtoi(line, &value) ? value : 0;
}

// The files that may hold this process's cgroup memory limit, most specific first: the cgroup
// named in /proc/self/cgroup, then the mount's root (inside a container's cgroup namespace the
// root is the container's own cgroup).
void ConsiderCgroupLimits(detail::MemoryLimit& limit) {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  std::string v2_path;
  std::string v1_path;
  while (std::getline(cgroups, line)) {
    // "hierarchy-id:controllers:path"; v2's line is "0::path".
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) v2_path = path;
    if (controllers == "memory" || controllers.find("memory,") != std::string::npos ||
        controllers.find(",memory") != std::string::npos) {
      v1_path = path;
    }
  }
  const std::string candidates[] = {
      "/sys/fs/cgroup" + v2_path + "/memory.max",
      "/sys/fs/cgroup/memory.max",
      "/sys/fs/cgroup/memory" + v1_path + "/memory.limit_in_bytes",
      "/sys/fs/cgroup/memory/memory.limit_in_bytes",
  };
  for (const std::string& file : candidates) {
    const uint64_t value = ReadLimitFile(file);
    if (value != 0 && (limit.bytes == 0 || value < limit.bytes)) {
      limit.bytes = value;
      limit.source = "the cgroup limit in " + file;
    }
  }
}

}  // namespace

namespace detail {

const MemoryLimit& MachineMemoryLimit() {
  static const MemoryLimit limit = [] {
    MemoryLimit l;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
      l.bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
      l.source = "physical memory";
    }
    ConsiderCgroupLimits(l);
    return l;
  }();
  return limit;
}

absl::Status CheckMemoryCap(uint64_t bytes, uint64_t cap) {
  if (cap != 0) {
    if (bytes <= cap) return absl::OkStatus();
    return absl::ResourceExhaustedError(absl::StrFormat(
        "filter needs %d bytes, over the %d-byte memory cap set by the caller", bytes, cap));
  }
  const MemoryLimit& machine = MachineMemoryLimit();
  if (machine.bytes == 0 || bytes <= machine.bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrFormat("filter needs %d bytes, over the %d-byte memory cap of this machine (%s); "
                      "set a larger cap explicitly to allocate it anyway",
                      bytes, machine.bytes, machine.source));
}

}  // namespace detail
}  // namespace bloomery
