// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// open_count.h: what the code under test does with one file, counted by the open/pread
// interposers of open_count.cc (linked into the test binary, so the library's calls reach them).
#ifndef BLOOMERY_TESTS_OPEN_COUNT_H_
#define BLOOMERY_TESTS_OPEN_COUNT_H_

#include <string>

namespace bloomery::testing {

struct FileReads {
  int opens = 0;         // open/openat calls that opened `path`
  int header_reads = 0;  // preads at offset 0 through a descriptor of `path`
};

// From now on counts the opens of `path` (spelled as the caller spells it: the library opens the
// path it is given) and the reads of its first bytes, from zero.
void CountReadsOf(const std::string& path);
// What was counted since CountReadsOf.
[[nodiscard]] FileReads CountedReads();

}  // namespace bloomery::testing

#endif  // BLOOMERY_TESTS_OPEN_COUNT_H_
