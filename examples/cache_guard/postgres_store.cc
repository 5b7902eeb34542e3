// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// PostgreSQL backend over libpq: prepared statements, one backend per connection, the default
// READ COMMITTED isolation (a row is visible to others exactly when its transaction commits).
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store.h"

namespace cache_guard {
namespace {

// Owns one PGresult.
struct Result {
  explicit Result(PGresult* r) : result(r) {}
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result() { PQclear(result); }
  PGresult* result;
};

class PostgresConnection : public Connection {
 public:
  ~PostgresConnection() override { PQfinish(conn_); }

  // `prepare`: false for the connection that creates the schema (statements need the tables).
  static absl::StatusOr<std::unique_ptr<PostgresConnection>> Open(const std::string& conninfo,
                                                                  bool prepare) {
    auto conn = std::unique_ptr<PostgresConnection>(new PostgresConnection);
    conn->conn_ = PQconnectdb(conninfo.c_str());
    if (PQstatus(conn->conn_) != CONNECTION_OK) return conn->Error("connect");
    if (!prepare) return conn;
    for (auto [name, sql] : std::initializer_list<std::pair<const char*, const char*>>{
             {"get", "SELECT value FROM kv WHERE key = $1"},
             {"insert",
              "INSERT INTO kv(key, value, expires_at) VALUES($1, $2, $3) "
              "ON CONFLICT (key) DO NOTHING"},
             {"update", "UPDATE kv SET value = $2, expires_at = $3 WHERE key = $1"},
             {"delete", "DELETE FROM kv WHERE key = $1"},
             {"log", "INSERT INTO kv_log(key, op) VALUES($1, $2)"}}) {
      Result r(PQprepare(conn->conn_, name, sql, 0, nullptr));
      if (PQresultStatus(r.result) != PGRES_COMMAND_OK) return conn->Error(name);
    }
    return conn;
  }

  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    const std::string k(key);
    absl::StatusOr<Result*> r = Run("get", {k});
    if (!r.ok()) return r.status();
    std::unique_ptr<Result> owned(*r);
    std::optional<std::string> value;
    if (PQntuples(owned->result) > 0) {
      value = std::string(PQgetvalue(owned->result, 0, 0),
                          static_cast<size_t>(PQgetlength(owned->result, 0, 0)));
    }
    return value;
  }

  absl::StatusOr<bool> Put(std::string_view key, std::string_view value,
                           int64_t expires_at) override {
    const std::string k(key), v(value), e = absl::StrCat(expires_at);
    if (absl::Status s = Exec("BEGIN"); !s.ok()) return s;
    absl::StatusOr<bool> created = Changed("insert", {k, v, e});
    if (created.ok() && !*created) {
      if (absl::StatusOr<bool> updated = Changed("update", {k, v, e}); !updated.ok()) {
        created = updated.status();
      }
    }
    if (created.ok() && *created) {
      absl::StatusOr<bool> logged = Changed("log", {k, "1"});
      if (!logged.ok()) created = logged.status();
    }
    return Finish(created);
  }

  absl::StatusOr<bool> Delete(std::string_view key) override {
    const std::string k(key);
    if (absl::Status s = Exec("BEGIN"); !s.ok()) return s;
    absl::StatusOr<bool> deleted = Changed("delete", {k});
    if (deleted.ok() && *deleted) {
      absl::StatusOr<bool> logged = Changed("log", {k, "2"});
      if (!logged.ok()) deleted = logged.status();
    }
    return Finish(deleted);
  }

  absl::StatusOr<std::vector<std::string>> Expired(int64_t now, size_t limit) override {
    Result r(PQexec(conn_,
                    absl::StrCat("SELECT key FROM kv WHERE expires_at > 0 AND expires_at <= ", now,
                                 " LIMIT ", limit)
                        .c_str()));
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) return Error("expired");
    std::vector<std::string> keys;
    for (int i = 0; i < PQntuples(r.result); ++i) keys.emplace_back(PQgetvalue(r.result, i, 0));
    return keys;
  }

  absl::StatusOr<int64_t> LastLogSeq() override {
    Result r(PQexec(conn_, "SELECT COALESCE(MAX(seq), 0) FROM kv_log"));
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) return Error("last seq");
    return std::strtoll(PQgetvalue(r.result, 0, 0), nullptr, 10);
  }

  absl::Status ScanKeys(
      const std::function<void(std::span<const std::string_view>)>& batch) override {
    // Row-by-row mode streams the table instead of buffering it all in the client.
    if (PQsendQuery(conn_, "SELECT key FROM kv") != 1 || PQsetSingleRowMode(conn_) != 1) {
      return Error("scan");
    }
    constexpr size_t kBatch = 4096;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    auto flush = [&] {
      views.assign(keys.begin(), keys.end());
      batch(views);
      keys.clear();
    };
    absl::Status status;
    while (PGresult* raw = PQgetResult(conn_)) {
      Result r(raw);
      const ExecStatusType st = PQresultStatus(r.result);
      if (st == PGRES_SINGLE_TUPLE) {
        keys.emplace_back(PQgetvalue(r.result, 0, 0),
                          static_cast<size_t>(PQgetlength(r.result, 0, 0)));
        if (keys.size() == kBatch) flush();
      } else if (st != PGRES_TUPLES_OK) {
        status = Error("scan");
      }
    }
    if (!status.ok()) return status;
    flush();
    return absl::OkStatus();
  }

  absl::Status ScanLog(
      int64_t after_seq,
      const std::function<void(int64_t, std::string_view, LogOp)>& entry) override {
    Result r(PQexec(conn_, absl::StrCat("SELECT seq, key, op FROM kv_log WHERE seq > ", after_seq,
                                        " ORDER BY seq")
                               .c_str()));
    if (PQresultStatus(r.result) != PGRES_TUPLES_OK) return Error("scan log");
    for (int i = 0; i < PQntuples(r.result); ++i) {
      entry(std::strtoll(PQgetvalue(r.result, i, 0), nullptr, 10),
            std::string_view(PQgetvalue(r.result, i, 1),
                             static_cast<size_t>(PQgetlength(r.result, i, 1))),
            static_cast<LogOp>(std::atoi(PQgetvalue(r.result, i, 2))));
    }
    return absl::OkStatus();
  }

  absl::Status Populate(std::string_view key_prefix, uint64_t first, uint64_t count) override {
    const std::string prefix(key_prefix);
    return Exec(absl::StrCat("INSERT INTO kv(key, value) SELECT '", prefix, "' || i, '", prefix,
                             "' || i FROM generate_series(", first, ", ", first + count - 1,
                             ") AS i ON CONFLICT DO NOTHING")
                    .c_str());
  }

  absl::Status Exec(const char* sql) {
    Result r(PQexec(conn_, sql));
    const ExecStatusType st = PQresultStatus(r.result);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? absl::OkStatus() : Error(sql);
  }

 private:
  PostgresConnection() = default;

  absl::Status Error(std::string_view what) const {
    return absl::InternalError(
        absl::StrCat("postgres ", std::string(what), ": ", PQerrorMessage(conn_)));
  }

  // Runs prepared statement `name`; the caller owns the result.
  absl::StatusOr<Result*> Run(const char* name, std::initializer_list<std::string> params) {
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    auto r = std::make_unique<Result>(PQexecPrepared(conn_, name, static_cast<int>(values.size()),
                                                     values.data(), nullptr, nullptr, 0));
    const ExecStatusType st = PQresultStatus(r->result);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return Error(name);
    return r.release();
  }
  // Runs a prepared write; true when it changed a row.
  absl::StatusOr<bool> Changed(const char* name, std::initializer_list<std::string> params) {
    absl::StatusOr<Result*> r = Run(name, params);
    if (!r.ok()) return r.status();
    std::unique_ptr<Result> owned(*r);
    return std::string_view(PQcmdTuples(owned->result)) == "1";
  }
  absl::StatusOr<bool> Finish(absl::StatusOr<bool> result) {
    if (!result.ok()) {
      (void)Exec("ROLLBACK");
      return result;
    }
    if (absl::Status s = Exec("COMMIT"); !s.ok()) return s;
    return result;
  }

  PGconn* conn_ = nullptr;
};

class PostgresDatabase : public Database {
 public:
  explicit PostgresDatabase(std::string conninfo) : conninfo_(std::move(conninfo)) {}
  absl::StatusOr<std::unique_ptr<Connection>> Connect() override {
    absl::StatusOr<std::unique_ptr<PostgresConnection>> conn =
        PostgresConnection::Open(conninfo_, /*prepare=*/true);
    if (!conn.ok()) return conn.status();
    return std::unique_ptr<Connection>(*std::move(conn));
  }
  absl::Status Reset() override {
    absl::StatusOr<std::unique_ptr<PostgresConnection>> conn =
        PostgresConnection::Open(conninfo_, /*prepare=*/false);
    if (!conn.ok()) return conn.status();
    return (*conn)->Exec(
        "SET client_min_messages = warning; DROP TABLE IF EXISTS kv, kv_log;"
        "CREATE TABLE kv(key TEXT PRIMARY KEY, value TEXT NOT NULL,"
        "  expires_at BIGINT NOT NULL DEFAULT 0);"
        "CREATE INDEX kv_expiry ON kv(expires_at) WHERE expires_at > 0;"
        "CREATE TABLE kv_log(seq BIGSERIAL PRIMARY KEY, key TEXT NOT NULL, op SMALLINT NOT NULL);");
  }
  [[nodiscard]] std::string name() const override { return "postgres"; }

 private:
  std::string conninfo_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string& conninfo) {
  return std::make_unique<PostgresDatabase>(conninfo);
}

}  // namespace cache_guard
