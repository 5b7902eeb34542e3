// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// store.h: the database behind the guard, one connection per thread.
//
// The schema is the part of the pattern a service must copy: every write appends to a change log
// in the same transaction, so a guard restarted from a saved filter reads only the log entries
// after the filter's watermark instead of re-reading the table.
//
//   kv(key TEXT PRIMARY KEY, value TEXT, expires_at BIGINT)  -- expires_at 0: never
//   kv_log(seq <auto-increment> PRIMARY KEY, key TEXT, op SMALLINT)  -- op 1 created, 2 deleted
//
// A connection is used by one thread at a time; open one per thread (SQLite in WAL mode lets
// readers run beside the writer; PostgreSQL gives each connection its own backend).
#ifndef BLOOMERY_EXAMPLES_CACHE_GUARD_STORE_H_
#define BLOOMERY_EXAMPLES_CACHE_GUARD_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cache_guard {

enum class LogOp : int { kCreated = 1, kDeleted = 2 };

class Connection {
 public:
  virtual ~Connection() = default;

  // The row's value, or nullopt when no committed row has the key.
  virtual absl::StatusOr<std::optional<std::string>> Get(std::string_view key) = 0;
  // Upserts the row in one transaction; returns true when it created the row (and logged it).
  virtual absl::StatusOr<bool> Put(std::string_view key, std::string_view value,
                                   int64_t expires_at) = 0;
  // Deletes the row in one transaction; returns true when a row was deleted (and logged).
  virtual absl::StatusOr<bool> Delete(std::string_view key) = 0;
  // Up to `limit` keys whose expires_at is in (0, now].
  virtual absl::StatusOr<std::vector<std::string>> Expired(int64_t now, size_t limit) = 0;
  // The newest log sequence number (0 for an empty log).
  virtual absl::StatusOr<int64_t> LastLogSeq() = 0;
  // Calls `batch` with every key of the table, many at a time (views valid during the call).
  virtual absl::Status ScanKeys(
      const std::function<void(std::span<const std::string_view>)>& batch) = 0;
  // Calls `entry` for every log entry after `after_seq`, in sequence order.
  virtual absl::Status ScanLog(
      int64_t after_seq, const std::function<void(int64_t, std::string_view, LogOp)>& entry) = 0;
  // Benchmark setup: inserts rows key_prefix + i for i in [first, first + count) quickly (one
  // transaction, no per-row log entries: it stands for data that existed before the guard).
  virtual absl::Status Populate(std::string_view key_prefix, uint64_t first, uint64_t count) = 0;
};

// Opens connections to one database; thread-safe.
class Database {
 public:
  virtual ~Database() = default;
  virtual absl::StatusOr<std::unique_ptr<Connection>> Connect() = 0;
  // Drops and recreates the schema.
  virtual absl::Status Reset() = 0;
  [[nodiscard]] virtual std::string name() const = 0;
};

// `path`: the SQLite file (created if missing).
absl::StatusOr<std::unique_ptr<Database>> OpenSqlite(const std::string& path);
// `conninfo`: a libpq connection string, e.g. "host=127.0.0.1 port=5433 dbname=postgres".
// Unimplemented when the example was built without libpq.
absl::StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string& conninfo);

}  // namespace cache_guard

#endif  // BLOOMERY_EXAMPLES_CACHE_GUARD_STORE_H_
