// A thin RAII layer over the SQLite C API for reading exports: read-only, lock-free opening,
// prepared statements with NULL-aware column access.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tracedoc {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  explicit SqliteStatement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  SqliteStatement(SqliteStatement&& o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
  SqliteStatement& operator=(SqliteStatement&& o) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // true: a row is available; false: done. Errors end the iteration and are kept in status().
  bool step();
  const Status& status() const { return status_; }

  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // Text or a blob reads as 0 (an integer column never holds one in a sound export), counted in
  // wrong_type().
  int64_t int64(int col) const { return int64_or_type(col, sqlite3_column_type(stmt_, col), 0); }
  // NULL reads as `fallback`, and so do text and blobs (counted, as in int64).
  int64_t int64_or(int col, int64_t fallback) const {
    const int type = sqlite3_column_type(stmt_, col);
    return type == SQLITE_NULL ? fallback : int64_or_type(col, type, fallback);
  }
  int64_t wrong_type() const { return wrong_type_; }
  bool is_number(int col) const {
    const int type = sqlite3_column_type(stmt_, col);
    return type == SQLITE_INTEGER || type == SQLITE_FLOAT;
  }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  std::string_view text(int col) const;

 private:
  int64_t int64_or_type(int col, int type, int64_t fallback) const {
    if (type != SQLITE_TEXT && type != SQLITE_BLOB) return sqlite3_column_int64(stmt_, col);
    ++wrong_type_;
    return fallback;
  }

  sqlite3_stmt* stmt_ = nullptr;
  Status status_;
  mutable int64_t wrong_type_ = 0;
};

class SqliteDb {
 public:
  SqliteDb() = default;
  SqliteDb(SqliteDb&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }
  SqliteDb& operator=(SqliteDb&& o) noexcept {
    std::swap(db_, o.db_);
    std::swap(path_, o.path_);
    return *this;
  }
  SqliteDb(const SqliteDb&) = delete;
  ~SqliteDb();

  // Opens `path` read-only without taking locks (the file is treated as immutable).
  static Result<SqliteDb> open_read_only(const std::string& path);

  Result<SqliteStatement> prepare(const std::string& sql) const;
  // Names of all tables. Fails on a file that is not a (sound) SQLite database.
  Result<std::set<std::string>> table_names() const;
  Result<std::set<std::string>> column_names(const std::string& table) const;
  const std::string& path() const { return path_; }

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// `SELECT <cols> FROM table`, where a column the table lacks is selected as NULL. Lets one reader
// serve every schema version.
std::string select_columns_sql(const std::string& table, const std::set<std::string>& present,
                               const std::vector<std::string>& wanted);

}  // namespace tracedoc
