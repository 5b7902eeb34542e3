// Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
//
// SQLite backend: WAL journal (readers never wait for the writer), synchronous=NORMAL (durable
// at checkpoints, the usual service setting), a busy timeout so concurrent writers queue.
#include <sqlite3.h>

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store.h"

namespace cache_guard {
namespace {

absl::Status SqliteError(sqlite3* db, std::string_view what) {
  return absl::InternalError(absl::StrCat("sqlite ", std::string(what), ": ", sqlite3_errmsg(db)));
}

// One prepared statement, reset after each use.
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  absl::Status Prepare(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      return SqliteError(db, sql);
    }
    return absl::OkStatus();
  }
  sqlite3_stmt* get() const { return stmt_; }
  void BindText(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }
  // Steps once; SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string_view Text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return {text == nullptr ? "" : text, static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteConnection : public Connection {
 public:
  ~SqliteConnection() override {
    // Statements must be finalized before the handle closes.
    get_.reset();
    insert_.reset();
    update_.reset();
    delete_.reset();
    log_.reset();
    sqlite3_close(db_);
  }

  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path) {
    auto conn = std::unique_ptr<SqliteConnection>(new SqliteConnection);
    if (sqlite3_open_v2(path.c_str(), &conn->db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      return SqliteError(conn->db_, "open");
    }
    sqlite3_busy_timeout(conn->db_, 10'000);
    absl::Status status = conn->Exec(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
        "CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value TEXT NOT NULL,"
        "  expires_at INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
        "CREATE INDEX IF NOT EXISTS kv_expiry ON kv(expires_at) WHERE expires_at > 0;"
        "CREATE TABLE IF NOT EXISTS kv_log(seq INTEGER PRIMARY KEY AUTOINCREMENT,"
        "  key TEXT NOT NULL, op INTEGER NOT NULL);");
    if (!status.ok()) return status;
    for (auto [stmt, sql] :
         std::initializer_list<std::pair<std::unique_ptr<Statement>*, const char*>>{
             {&conn->get_, "SELECT value FROM kv WHERE key = ?1"},
             {&conn->insert_,
              "INSERT OR IGNORE INTO kv(key, value, expires_at) VALUES(?1, ?2, ?3)"},
             {&conn->update_, "UPDATE kv SET value = ?2, expires_at = ?3 WHERE key = ?1"},
             {&conn->delete_, "DELETE FROM kv WHERE key = ?1"},
             {&conn->log_, "INSERT INTO kv_log(key, op) VALUES(?1, ?2)"}}) {
      *stmt = std::make_unique<Statement>();
      if (absl::Status s = (*stmt)->Prepare(conn->db_, sql); !s.ok()) return s;
    }
    return conn;
  }

  absl::StatusOr<std::optional<std::string>> Get(std::string_view key) override {
    get_->BindText(1, key);
    const int rc = get_->Step();
    std::optional<std::string> value;
    if (rc == SQLITE_ROW) value = std::string(get_->Text(0));
    get_->Reset();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqliteError(db_, "get");
    return value;
  }

  absl::StatusOr<bool> Put(std::string_view key, std::string_view value,
                           int64_t expires_at) override {
    // BEGIN IMMEDIATE takes the write lock up front: no deadlock-prone lock upgrade.
    if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
    insert_->BindText(1, key);
    insert_->BindText(2, value);
    sqlite3_bind_int64(insert_->get(), 3, expires_at);
    int rc = insert_->Step();
    insert_->Reset();
    const bool created = rc == SQLITE_DONE && sqlite3_changes(db_) == 1;
    if (rc == SQLITE_DONE && !created) {
      update_->BindText(1, key);
      update_->BindText(2, value);
      sqlite3_bind_int64(update_->get(), 3, expires_at);
      rc = update_->Step();
      update_->Reset();
    }
    if (rc == SQLITE_DONE && created) rc = Log(key, LogOp::kCreated);
    return Finish(rc, created, "put");
  }

  absl::StatusOr<bool> Delete(std::string_view key) override {
    if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
    delete_->BindText(1, key);
    int rc = delete_->Step();
    delete_->Reset();
    const bool deleted = rc == SQLITE_DONE && sqlite3_changes(db_) == 1;
    if (deleted) rc = Log(key, LogOp::kDeleted);
    return Finish(rc, deleted, "delete");
  }

  absl::StatusOr<std::vector<std::string>> Expired(int64_t now, size_t limit) override {
    Statement stmt;
    if (absl::Status s = stmt.Prepare(
            db_, "SELECT key FROM kv WHERE expires_at > 0 AND expires_at <= ?1 LIMIT ?2");
        !s.ok()) {
      return s;
    }
    sqlite3_bind_int64(stmt.get(), 1, now);
    sqlite3_bind_int64(stmt.get(), 2, static_cast<int64_t>(limit));
    std::vector<std::string> keys;
    int rc;
    while ((rc = stmt.Step()) == SQLITE_ROW) keys.emplace_back(stmt.Text(0));
    if (rc != SQLITE_DONE) return SqliteError(db_, "expired");
    return keys;
  }

  absl::StatusOr<int64_t> LastLogSeq() override {
    Statement stmt;
    if (absl::Status s = stmt.Prepare(db_, "SELECT COALESCE(MAX(seq), 0) FROM kv_log"); !s.ok()) {
      return s;
    }
    if (stmt.Step() != SQLITE_ROW) return SqliteError(db_, "last seq");
    return sqlite3_column_int64(stmt.get(), 0);
  }

  absl::Status ScanKeys(
      const std::function<void(std::span<const std::string_view>)>& batch) override {
    Statement stmt;
    if (absl::Status s = stmt.Prepare(db_, "SELECT key FROM kv"); !s.ok()) return s;
    // Views into SQLite's row buffers die at the next step, so a batch owns its keys.
    constexpr size_t kBatch = 4096;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    keys.reserve(kBatch);
    auto flush = [&] {
      views.assign(keys.begin(), keys.end());
      batch(views);
      keys.clear();
    };
    int rc;
    while ((rc = stmt.Step()) == SQLITE_ROW) {
      keys.emplace_back(stmt.Text(0));
      if (keys.size() == kBatch) flush();
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, "scan");
    flush();
    return absl::OkStatus();
  }

  absl::Status ScanLog(
      int64_t after_seq,
      const std::function<void(int64_t, std::string_view, LogOp)>& entry) override {
    Statement stmt;
    if (absl::Status s =
            stmt.Prepare(db_, "SELECT seq, key, op FROM kv_log WHERE seq > ?1 ORDER BY seq");
        !s.ok()) {
      return s;
    }
    sqlite3_bind_int64(stmt.get(), 1, after_seq);
    int rc;
    while ((rc = stmt.Step()) == SQLITE_ROW) {
      entry(sqlite3_column_int64(stmt.get(), 0), stmt.Text(1),
            static_cast<LogOp>(sqlite3_column_int(stmt.get(), 2)));
    }
    return rc == SQLITE_DONE ? absl::OkStatus() : SqliteError(db_, "scan log");
  }

  absl::Status Populate(std::string_view key_prefix, uint64_t first, uint64_t count) override {
    if (absl::Status s = Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
    const std::string prefix(key_prefix);
    std::string key;
    int rc = SQLITE_DONE;
    for (uint64_t i = first; i < first + count && rc == SQLITE_DONE; ++i) {
      key = absl::StrCat(prefix, i);
      insert_->BindText(1, key);
      insert_->BindText(2, key);
      sqlite3_bind_int64(insert_->get(), 3, 0);
      rc = insert_->Step();
      insert_->Reset();
    }
    absl::StatusOr<bool> done = Finish(rc, true, "populate");
    return done.status();
  }

 private:
  SqliteConnection() = default;

  absl::Status Exec(const char* sql) {
    return sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? absl::OkStatus()
                                                                          : SqliteError(db_, sql);
  }
  int Log(std::string_view key, LogOp op) {
    log_->BindText(1, key);
    sqlite3_bind_int(log_->get(), 2, static_cast<int>(op));
    const int rc = log_->Step();
    log_->Reset();
    return rc;
  }
  // Commits when every step succeeded, else rolls back and reports the error.
  absl::StatusOr<bool> Finish(int rc, bool result, std::string_view what) {
    if (rc != SQLITE_DONE) {
      absl::Status error = SqliteError(db_, what);
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return error;
    }
    if (absl::Status s = Exec("COMMIT"); !s.ok()) return s;
    return result;
  }

  sqlite3* db_ = nullptr;
  std::unique_ptr<Statement> get_, insert_, update_, delete_, log_;
};

class SqliteDatabase : public Database {
 public:
  explicit SqliteDatabase(std::string path) : path_(std::move(path)) {}
  absl::StatusOr<std::unique_ptr<Connection>> Connect() override {
    return SqliteConnection::Open(path_);
  }
  absl::Status Reset() override {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
    return Connect().status();
  }
  [[nodiscard]] std::string name() const override { return "sqlite"; }

 private:
  std::string path_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Database>> OpenSqlite(const std::string& path) {
  auto db = std::make_unique<SqliteDatabase>(path);
  if (absl::StatusOr<std::unique_ptr<Connection>> conn = db->Connect(); !conn.ok()) {
    return conn.status();
  }
  return db;
}

}  // namespace cache_guard
