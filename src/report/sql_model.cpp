#include "report/sql_model.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analysis/checked_math.h"
#include "report/sqlite_insert.h"

namespace tracedoc {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// INSERT INTO table VALUES (?, ...).
std::string insert_into(std::string_view table, size_t columns) {
  return fmt::format("INSERT INTO {} VALUES ({})", table, placeholders(static_cast<int>(columns)));
}

// Codes the trace can name: rendered as the labels the reports print.
bool is_copy_kind(std::string_view column) { return column == "copy_kind"; }
bool is_mem_kind(std::string_view column) {
  return column == "src_kind" || column == "dst_kind" || column == "mem_kind";
}

// How a global owner id renders: `global_tid` as rank, pid, tid; `global_pid` as rank, pid; a
// prefixed one (`end_global_tid`) as end_pid, end_tid.
struct OwnerParts {
  std::string prefix;
  bool rank = false, tid = false;
};
OwnerParts owner_parts(std::string_view name) {
  OwnerParts p;
  p.tid = name.ends_with("global_tid");
  p.prefix = std::string(name.substr(0, name.size() - std::string_view("global_tid").size()));
  p.rank = p.prefix.empty();
  return p;
}

// The SQL columns of one model column, appended as "name TYPE" to `out` with their descriptions.
template <typename Table, typename T>
void sql_columns(const Column<Table, T>& column, bool has_start, std::vector<std::pair<std::string, std::string>>& out,
                 std::vector<std::string>& descriptions) {
  const std::string name(column.name);
  const std::string doc(column.description);
  switch (column.role) {
    case ColumnRole::kTime:
      out.push_back({name + "_ns", "INTEGER"}), descriptions.push_back(doc + " (ns)");
      if (has_start && name == "end")
        out.push_back({"duration_ns", "INTEGER"}), descriptions.push_back("end_ns - start_ns");
      return;
    case ColumnRole::kOwner: {
      const OwnerParts p = owner_parts(column.name);
      if (p.rank)
        out.push_back({"rank", "INTEGER"}), descriptions.push_back("PyTorch rank of " + doc + " (NULL: none)");
      out.push_back({p.prefix + "pid", "INTEGER"}), descriptions.push_back("process id of " + doc);
      if (p.tid) out.push_back({p.prefix + "tid", "INTEGER"}), descriptions.push_back("thread id of " + doc);
      return;
    }
    case ColumnRole::kString: out.push_back({name, "TEXT"}), descriptions.push_back(doc); return;
    case ColumnRole::kKernelRow:
      out.push_back({name + "_rowid", "INTEGER"}), descriptions.push_back(doc + ": kernels.rowid");
      return;
    default: break;
  }
  const char* type = std::is_floating_point_v<T>                                          ? "REAL"
                     : std::is_same_v<T, char> || is_copy_kind(name) || is_mem_kind(name) ? "TEXT"
                                                                                          : "INTEGER";
  out.push_back({name, type}), descriptions.push_back(doc);
}

// Binds row `r` of one model column (its SQL columns, as sql_columns declares them).
template <typename Table, typename T>
void bind_row(const Trace& tr, const Column<Table, T>& column, const std::vector<T>& values, size_t r, TimeNs start,
              bool has_start, SqlInsert& ins) {
  const std::string_view name = column.name;
  const bool recorded = !values.empty();
  const T v = recorded ? values[r] : column.absent;
  const bool absent = [&] {
    if constexpr (std::is_floating_point_v<T>)
      return std::isnan(v);
    else
      return v == column.absent;
  }();
  switch (column.role) {
    case ColumnRole::kTime:
      if (absent)
        ins.null();
      else
        ins.i(static_cast<int64_t>(v));
      if (has_start && name == "end") {
        if (absent || start == kNoTime)
          ins.null();
        else
          ins.i(sat_sub(static_cast<int64_t>(v), start));
      }
      return;
    case ColumnRole::kOwner: {
      const OwnerParts p = owner_parts(name);
      const auto id = static_cast<int64_t>(v);
      if (p.rank) {
        const int64_t rank = absent ? -1 : tr.rank_of(id);
        if (rank < 0)
          ins.null();
        else
          ins.i(rank);
      }
      if (absent)
        ins.null();
      else
        ins.i(pid_of(id));
      if (p.tid) {
        if (absent)
          ins.null();
        else
          ins.i(tid_of(id));
      }
      return;
    }
    case ColumnRole::kString:
      if constexpr (std::is_same_v<T, StrId>) {
        if (absent)
          ins.null();
        else
          ins.t(tr.str(v));
      }
      return;
    case ColumnRole::kKernelRow:
      if (absent)
        ins.null();
      else
        ins.i(static_cast<int64_t>(v) + 1);
      return;
    default: break;
  }
  if (absent) {
    ins.null();
  } else if constexpr (std::is_floating_point_v<T>) {
    ins.d(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, char>) {
    ins.t(std::string_view(&v, 1));
  } else if (is_copy_kind(name)) {
    ins.t(tr.copy_label(static_cast<uint8_t>(v)));
  } else if (is_mem_kind(name)) {
    ins.t(tr.mem_label(static_cast<uint8_t>(v)));
  } else {
    ins.i(static_cast<int64_t>(v));
  }
}

// Collects the first failure of a statement, for the one-line error.
struct Inserts {
  bool ok = true;
  std::string why;
  void run(SqlInsert& ins) {
    if (ins.run()) return;
    ok = false;
    if (why.empty()) why = ins.error();
  }
};

// Creates one model table's SQL table (and its rows in tracedoc_columns); fills it when asked.
template <typename Table>
bool load_model_table(const Trace& tr, std::string_view name, const Table& table, bool fill, sqlite3* db,
                      Inserts& out) {
  bool has_start = false;
  for_each_column_of<Table>(
      [&](const auto& column) { has_start |= column.name == "start" && column.role == ColumnRole::kTime; });
  std::vector<std::pair<std::string, std::string>> columns;
  std::vector<std::string> descriptions;
  for_each_column_of<Table>([&](const auto& column) { sql_columns(column, has_start, columns, descriptions); });
  std::string create = fmt::format("CREATE TABLE {} (", name);
  for (size_t c = 0; c < columns.size(); ++c)
    create += fmt::format("{}{} {}", c ? ", " : "", columns[c].first, columns[c].second);
  create += ")";
  if (sqlite3_exec(db, create.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) return false;
  {
    SqlInsert doc(db, insert_into("tracedoc_columns", 4));
    for (size_t c = 0; c < columns.size(); ++c) {
      doc.t(name).t(columns[c].first).t(columns[c].second).t(descriptions[c]);
      out.run(doc);
    }
  }
  if (!fill) return true;
  SqlInsert ins(db, insert_into(name, columns.size()));
  const size_t rows = table.size();
  const std::vector<TimeNs>* start = nullptr;
  for_each_column(table, [&](const auto& column, const auto& values) {
    if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::vector<TimeNs>>) {
      if (column.name == "start" && column.role == ColumnRole::kTime) start = &values;
    }
  });
  for (size_t r = 0; r < rows; ++r) {
    const TimeNs row_start = start ? (*start)[r] : kNoTime;
    for_each_column(table, [&](const auto& column, const auto& values) {
      bind_row(tr, column, values, r, row_start, has_start, ins);
    });
    out.run(ins);
  }
  return true;
}

constexpr const char* kAnalysisSchema = R"SQL(
CREATE TABLE tracedoc_columns (table_name TEXT, column_name TEXT, type TEXT, description TEXT);
CREATE TABLE steps (step INTEGER, rank INTEGER, pid INTEGER, start_ns INTEGER, end_ns INTEGER,
  duration_ns INTEGER, name TEXT, source TEXT);
CREATE TABLE memory (time_ns INTEGER, rank INTEGER, pid INTEGER, device INTEGER, delta_bytes INTEGER,
  allocated_bytes INTEGER);
CREATE TABLE findings (id TEXT, severity TEXT, confidence REAL, scope TEXT, title TEXT, savings_ns INTEGER,
  savings_share REAL);
)SQL";

}  // namespace

bool sql_query_names(std::string_view query, std::string_view table) {
  if (query.empty()) return true;
  for (size_t at = 0; at + table.size() <= query.size(); ++at) {
    bool same = true;
    for (size_t i = 0; i < table.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(query[at + i])) == static_cast<unsigned char>(table[i]);
    }
    if (!same) continue;
    const bool starts = at == 0 || !is_identifier_char(query[at - 1]);
    const bool ends = at + table.size() == query.size() || !is_identifier_char(query[at + table.size()]);
    if (starts && ends) return true;
  }
  return false;
}

Status load_sql_model(const Trace& tr, const SqlAnalyses& analyses, sqlite3* db, std::string_view query) {
  if (sqlite3_exec(db, kAnalysisSchema, nullptr, nullptr, nullptr) != SQLITE_OK ||
      sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return IoError(fmt::format("cannot create the SQL tables: {}", sqlite3_errmsg(db)));
  }
  Inserts out;
  bool created = true;
  for_each_table(tr, [&](const TableInfo& info, const auto& table) {
    created = created && load_model_table(tr, info.name, table, sql_query_names(query, info.name), db, out);
  });
  if (!created) return IoError(fmt::format("cannot create the SQL tables: {}", sqlite3_errmsg(db)));

  const auto rank = [&](SqlInsert& ins, int64_t global_id) -> SqlInsert& {
    const int64_t r = tr.rank_of(global_id);
    return r < 0 ? ins.null() : ins.i(r);
  };
  if (analyses.steps) {
    SqlInsert ins(db, insert_into("steps", 8));
    for (const StepWindow& w : analyses.steps->steps) {
      ins.maybe(w.number, kNoValue);
      rank(ins, w.global_pid).i(pid_of(w.global_pid)).i(w.start).i(w.end).i(sat_sub(w.end, w.start));
      if (w.name == kNoStr)
        ins.null();
      else
        ins.t(tr.str(w.name));
      ins.t(step_source_name(analyses.steps->source));
      out.run(ins);
    }
  }
  if (analyses.memory) {
    SqlInsert ins(db, insert_into("memory", 6));
    for (const MemorySeries& s : *analyses.memory) {
      for (size_t e = 0; e < s.size(); ++e) {
        ins.i(s.time[e]);
        rank(ins, s.global_pid).i(pid_of(s.global_pid)).i(s.device).i(s.delta[e]).i(s.allocated[e]);
        out.run(ins);
      }
    }
  }
  if (analyses.diagnosis) {
    SqlInsert ins(db, insert_into("findings", 7));
    for (const diagnose::Finding& f : analyses.diagnosis->findings) {
      ins.t(f.id)
          .t(diagnose::severity_name(f.severity))
          .d(f.confidence)
          .t(f.scope)
          .t(f.title)
          .i(f.savings_ns)
          .d(f.savings_share);
      out.run(ins);
    }
  }
  if (!out.ok || sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return IoError(fmt::format("cannot fill the SQL tables: {}", out.why.empty() ? sqlite3_errmsg(db) : out.why));
  }
  return Status::Ok();
}

}  // namespace tracedoc
