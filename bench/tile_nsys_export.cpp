// Builds a large benchmark input from a real nsys export by tiling it: the event tables are repeated
// N times, each copy shifted in time past the previous one and with correlation ids renumbered, so
// the result is a valid export with N times the events of the original. Event tables are those with
// a time column (start, timestamp, rawTimestamp: GPU_METRICS and the samples too); CPU samples keep
// their call stacks (COMPOSITE_EVENTS ids and the SAMPLING_CALLCHAINS rows that refer to them are
// renumbered together). With TABLES (comma-separated), only those event tables are repeated and
// every other table is copied once.
//
//   tile_nsys_export SOURCE.sqlite OUTPUT.sqlite N [TABLES]
#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Column {
  std::string name;
  bool primary_key;
};

bool exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "tile_nsys_export: %s\n  in: %.200s\n", err ? err : "?", sql.c_str());
    sqlite3_free(err);
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> tables(sqlite3* db) {
  std::vector<std::pair<std::string, std::string>> out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name, sql FROM src.sqlite_master WHERE type='table' AND sql IS NOT NULL", -1, &st,
                     nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                     reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  }
  sqlite3_finalize(st);
  return out;
}

std::vector<Column> columns(sqlite3* db, const std::string& table) {
  std::vector<Column> out;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, ("PRAGMA src.table_info(\"" + table + "\")").c_str(), -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.push_back({reinterpret_cast<const char*>(sqlite3_column_text(st, 1)), sqlite3_column_int(st, 5) != 0});
  }
  sqlite3_finalize(st);
  return out;
}

long long scalar(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  long long v = 0;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

bool has(const std::vector<Column>& cols, const std::string& name) {
  for (const auto& c : cols)
    if (c.name == name) return true;
  return false;
}

bool is_time_column(const std::string& name) {
  return name == "start" || name == "end" || name == "timestamp" || name == "rawTimestamp";
}

// The tables whose `id` is a CPU sample's: renumbered alike in every copy.
bool has_sample_ids(const std::string& table) { return table == "COMPOSITE_EVENTS" || table == "SAMPLING_CALLCHAINS"; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: tile_nsys_export SOURCE.sqlite OUTPUT.sqlite N [TABLES]\n");
    return 2;
  }
  const std::string source = argv[1], output = argv[2];
  const int n = std::atoi(argv[3]);
  if (n < 1) return 2;
  std::set<std::string> only;  // empty: every event table
  if (argc == 5) {
    std::stringstream list(argv[4]);
    for (std::string t; std::getline(list, t, ',');)
      if (!t.empty()) only.insert(t);
  }
  std::remove(output.c_str());
  sqlite3* db = nullptr;
  if (sqlite3_open(output.c_str(), &db) != SQLITE_OK) return 2;
  exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144");
  if (!exec(db, "ATTACH DATABASE 'file:" + source + "?mode=ro&immutable=1' AS src")) return 2;

  // Time span and correlation range of one copy, over all event tables.
  long long min_start = 0, max_end = 0, max_corr = 0;
  bool first = true;
  auto list = tables(db);
  for (const auto& [name, sql] : list) {
    auto cols = columns(db, name);
    const std::string time = has(cols, "start") ? "start" : has(cols, "timestamp") ? "timestamp" : "";
    if (time.empty() || (time == "start" && !has(cols, "end") && name != "COMPOSITE_EVENTS")) continue;
    const std::string last = has(cols, "end") ? "coalesce(end, start)" : time;
    long long lo = scalar(db, "SELECT min(" + time + ") FROM src.\"" + name + "\"");
    long long hi = scalar(db, "SELECT max(" + last + ") FROM src.\"" + name + "\"");
    if (first || lo < min_start) min_start = lo;
    if (first || hi > max_end) max_end = hi;
    first = false;
    if (has(cols, "correlationId")) {
      long long c = scalar(db, "SELECT max(correlationId) FROM src.\"" + name + "\"");
      if (c > max_corr) max_corr = c;
    }
  }
  const long long span = max_end - min_start + 1000000;  // 1 ms between copies
  const long long corr_span = max_corr + 1;
  const long long id_span = scalar(db, "SELECT max(id) FROM src.COMPOSITE_EVENTS") + 1;  // 1 when absent

  exec(db, "BEGIN");
  long long rows = 0;
  for (const auto& [name, sql] : list) {
    if (!exec(db, sql)) return 2;
    auto cols = columns(db, name);
    const bool timed = has(cols, "start") || has(cols, "timestamp") || has(cols, "rawTimestamp");
    const bool events = (timed || name == "SAMPLING_CALLCHAINS") && (only.empty() || only.count(name));
    std::string names, values;
    // A one-column key is the rowid: copies get fresh ones. A key of several columns stays.
    const auto key_columns = std::count_if(cols.begin(), cols.end(), [](const Column& c) { return c.primary_key; });
    for (const auto& c : cols) {
      const bool sample_id = has_sample_ids(name) && c.name == "id";
      if (events && c.primary_key && key_columns == 1 && !sample_id) continue;
      const std::string q = "\"" + c.name + "\"";
      names += (names.empty() ? "" : ", ") + q;
      std::string v = q;
      if (events && is_time_column(c.name)) v = q + " + :shift";
      if (events && c.name == "correlationId") v = q + " + :corr";
      if (events && sample_id) v = q + " + :ids";
      values += (values.empty() ? "" : ", ") + v;
    }
    const std::string insert =
        "INSERT INTO main.\"" + name + "\" (" + names + ") SELECT " + values + " FROM src.\"" + name + "\"";
    const int copies = events ? n : 1;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, insert.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "tile_nsys_export: %s\n", sqlite3_errmsg(db));
      return 2;
    }
    for (int k = 0; k < copies; ++k) {
      int shift = sqlite3_bind_parameter_index(st, ":shift"), corr = sqlite3_bind_parameter_index(st, ":corr"),
          ids = sqlite3_bind_parameter_index(st, ":ids");
      if (shift) sqlite3_bind_int64(st, shift, static_cast<long long>(k) * span);
      if (corr) sqlite3_bind_int64(st, corr, static_cast<long long>(k) * corr_span);
      if (ids) sqlite3_bind_int64(st, ids, static_cast<long long>(k) * id_span);
      if (sqlite3_step(st) != SQLITE_DONE) {
        std::fprintf(stderr, "tile_nsys_export: %s: %s\n", name.c_str(), sqlite3_errmsg(db));
        return 2;
      }
      rows += sqlite3_changes(db);
      sqlite3_reset(st);
    }
    sqlite3_finalize(st);
  }
  exec(db, "COMMIT");
  exec(db, "DETACH DATABASE src");
  sqlite3_close(db);
  std::printf("%lld\n", rows);
  return 0;
}
