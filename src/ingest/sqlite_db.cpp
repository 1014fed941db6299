#include "ingest/sqlite_db.h"

#include <fmt/format.h>

namespace tracedoc {

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& o) noexcept {
  if (this != &o) {
    if (stmt_) sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    o.stmt_ = nullptr;
    status_ = std::move(o.status_);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) {
    status_ = BadInput(fmt::format("SQLite error while reading: {}", sqlite3_errmsg(sqlite3_db_handle(stmt_))));
  }
  return false;
}

std::string_view SqliteStatement::text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close(db_);
}

namespace {
// Percent-encodes the characters that have a meaning in an SQLite URI.
std::string uri_escape(const std::string& path) {
  std::string out;
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20) {
      out += fmt::format("%{:02X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}
}  // namespace

Result<SqliteDb> SqliteDb::open_read_only(const std::string& path) {
  SqliteDb db;
  db.path_ = path;
  std::string uri = "file:" + uri_escape(path) + "?mode=ro&immutable=1";
  int rc = sqlite3_open_v2(uri.c_str(), &db.db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db.db_ ? sqlite3_errmsg(db.db_) : "cannot open";
    return IoError(fmt::format("{}: cannot open as SQLite: {}", path, msg));
  }
  // Each connection is used by one thread only (the reader opens one per thread), so SQLite's
  // per-call mutex is pure overhead (it was 40% of a table scan).
  sqlite3_exec(db.db_, "PRAGMA cache_size=-65536", nullptr, nullptr, nullptr);
  return db;
}

Result<SqliteStatement> SqliteDb::prepare(const std::string& sql) const {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    return BadInput(fmt::format("{}: {}", path_, sqlite3_errmsg(db_)));
  }
  return SqliteStatement(stmt);
}

Result<std::set<std::string>> SqliteDb::table_names() const {
  TRACEDOC_ASSIGN_OR_RETURN(auto stmt, prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view')"));
  std::set<std::string> names;
  while (stmt.step()) names.emplace(stmt.text(0));
  if (!stmt.status().ok()) return BadInput(fmt::format("{}: {}", path_, stmt.status().message()));
  return names;
}

Result<std::set<std::string>> SqliteDb::column_names(const std::string& table) const {
  TRACEDOC_ASSIGN_OR_RETURN(auto stmt, prepare(fmt::format("PRAGMA table_info(\"{}\")", table)));
  std::set<std::string> cols;
  while (stmt.step()) cols.emplace(stmt.text(1));
  if (!stmt.status().ok()) return stmt.status();
  return cols;
}

std::string select_columns_sql(const std::string& table, const std::set<std::string>& present,
                               const std::vector<std::string>& wanted) {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (i) sql += ", ";
    sql += present.count(wanted[i]) ? "\"" + wanted[i] + "\"" : std::string("NULL");
  }
  sql += " FROM \"" + table + "\"";
  return sql;
}

}  // namespace tracedoc
