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
  ~SqlInsert() { if (stmt_) sqlite3_finalize(stmt_); }
  SqlInsert(const SqlInsert&) = delete;
  SqlInsert& operator=(const SqlInsert&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  SqlInsert& i(int64_t v) { sqlite3_bind_int64(stmt_, ++pos_, v); return *this; }
  // NULL when v is the model's "absent" value.
  SqlInsert& maybe(int64_t v, int64_t none) { return v == none ? null() : i(v); }
  SqlInsert& d(double v) { sqlite3_bind_double(stmt_, ++pos_, v); return *this; }
  SqlInsert& t(std::string_view v) {
    sqlite3_bind_text(stmt_, ++pos_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  SqlInsert& null() { sqlite3_bind_null(stmt_, ++pos_); return *this; }
  // Executes the row and readies the statement for the next one.
  bool run() {
    const int rc = stmt_ ? sqlite3_step(stmt_) : SQLITE_ERROR;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    pos_ = 0;
    return rc == SQLITE_DONE;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int pos_ = 0;
};

// "?,?,?" for n columns.
inline std::string placeholders(int n) {
  std::string s;
  for (int k = 0; k < n; ++k) s += k ? ",?" : "?";
  return s;
}

}  // namespace tracedoc
