// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// A program as a user of the installed library writes it: built by .ci/packages from outside the
// source tree through CMake's find_package, Meson's dependency() and pkg-config. Exits non-zero on
// any wrong answer.
#include <bloomery/bloomery.h>
#include <bloomery/version.h>

#include <cstdio>
#include <string>

int main() {
  absl::StatusOr<bloomery::BlockedFilter> f =
      bloomery::BlockedFilter::Create({.capacity = 10'000, .fpr = 0.01});
  if (!f.ok()) {
    std::fprintf(stderr, "Create: %s\n", std::string(f.status().message()).c_str());
    return 1;
  }
  int wrong = 0;
  // Insert answers "was new": false only for a new key that looked present (a false positive).
  int fresh = 0;
  for (int i = 0; i < 10'000; ++i) fresh += f->Insert("key-" + std::to_string(i));
  for (int i = 0; i < 10'000; ++i) {
    if (!f->MayContain("key-" + std::to_string(i))) ++wrong;  // no false negatives
  }
  int false_positives = 0;
  for (int i = 0; i < 10'000; ++i) false_positives += f->MayContain("other-" + std::to_string(i));
  // 1 % planned at 10,000 keys (fewer while filling): 100 expected; 200 is over 10 standard
  // deviations away.
  if (false_positives > 200 || fresh < 10'000 - 200) ++wrong;
  std::printf("bloomery %s: %d of 10000 keys new, %d false positives in 10000, %s\n",
              BLOOMERY_VERSION_STRING, fresh, false_positives, wrong == 0 ? "ok" : "WRONG");
  return wrong == 0 ? 0 : 1;
}
