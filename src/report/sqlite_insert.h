// A prepared SQLite INSERT bound column by column, for the writers that build SQLite databases (the
// nsys-schema export, the `tracedoc sql` tables).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tracedoc {

class SqlInsert {
 public:
  SqlInsert(sqlite3* db, const std::string& sql) { sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr); }
  ~SqlInsert() {
    if (stmt_) sqlite3_finalize(stmt_);
  }
  SqlInsert(const SqlInsert&) = delete;
  SqlInsert& operator=(const SqlInsert&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  SqlInsert& i(int64_t v) { return bound(sqlite3_bind_int64(stmt_, ++pos_, v)); }
  // NULL when v is the model's "absent" value.
  SqlInsert& maybe(int64_t v, int64_t none) { return v == none ? null() : i(v); }
  SqlInsert& d(double v) { return bound(sqlite3_bind_double(stmt_, ++pos_, v)); }
  // Text longer than SQLite takes (its length limit, 1e9 bytes by default) fails the row.
  SqlInsert& t(std::string_view v) {
    if (v.size() > static_cast<size_t>(INT32_MAX)) return bound(SQLITE_TOOBIG);
    return bound(sqlite3_bind_text(stmt_, ++pos_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  SqlInsert& null() { return bound(sqlite3_bind_null(stmt_, ++pos_)); }
  // Executes the row and readies the statement for the next one. False when binding or inserting
  // failed; error() then says why.
  bool run() {
    int rc = stmt_ ? sqlite3_step(stmt_) : SQLITE_ERROR;
    if (bind_rc_ != SQLITE_OK) rc = bind_rc_;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    pos_ = 0;
    bind_rc_ = SQLITE_OK;
    if (rc != SQLITE_DONE && first_error_ == SQLITE_OK) first_error_ = rc;
    return rc == SQLITE_DONE;
  }
  // The first failure of this statement, as SQLite names it ("string or blob too big"), or "".
  std::string error() const { return first_error_ == SQLITE_OK ? std::string() : sqlite3_errstr(first_error_); }

 private:
  SqlInsert& bound(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }
  sqlite3_stmt* stmt_ = nullptr;
  int pos_ = 0;
  int bind_rc_ = SQLITE_OK;
  int first_error_ = SQLITE_OK;
};

// "?,?,?" for n columns.
inline std::string placeholders(int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += k ? ",?" : "?";
  return s;
}

}  // namespace tracedoc
