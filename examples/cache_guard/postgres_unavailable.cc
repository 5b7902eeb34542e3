// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// Built instead of postgres_store.cc when libpq (libpq-dev) is not installed.
#include "store.h"

namespace cache_guard {

absl::StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string&) {
  return absl::UnimplementedError("cache_guard was built without libpq (install libpq-dev)");
}

}  // namespace cache_guard
