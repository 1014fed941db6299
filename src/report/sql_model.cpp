#include "report/sql_model.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/ncu_answers.h"
#include "analysis/ncu_join.h"
#include "common/stop_request.h"
#include "report/sqlite_insert.h"

namespace tracedoc {

namespace {

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// INSERT INTO table VALUES (?, ...).
std::string insert_into(std::string_view table, size_t columns) {
  return fmt::format("INSERT INTO {} VALUES ({})", table, placeholders(static_cast<int>(columns)));
}

// How one model column renders as SQL columns, decided once per table from its declaration.
enum class Render : uint8_t { kTime, kOwner, kText, kKernelRowid, kReal, kChar, kCopyLabel, kMemLabel, kInteger };
struct Rendering {
  Render how = Render::kInteger;
  bool duration = false;           // kTime: the end of a table with a start; duration_ns follows
  bool rank = false, tid = false;  // kOwner: rank (an id without prefix), tid (a thread id)
  std::string_view prefix;         // kOwner: "end_" of end_global_tid
};

// `global_tid` renders as rank, pid, tid; `global_pid` as rank, pid; a prefixed id (`end_global_tid`)
// as end_pid, end_tid. Codes the trace can name (copy and memory kinds) render as the labels the
// reports print.
template <typename Table, typename T>
Rendering rendering_of(const Column<Table, T>& column, bool has_start) {
  Rendering r;
  const std::string_view name = column.name;
  switch (column.role) {
    case ColumnRole::kTime:
      r.how = Render::kTime;
      r.duration = has_start && name == "end";
      return r;
    case ColumnRole::kOwner:
      r.how = Render::kOwner;
      r.tid = name.ends_with("global_tid");
      r.prefix = name.substr(0, name.size() - std::string_view("global_tid").size());
      r.rank = r.prefix.empty();
      return r;
    case ColumnRole::kString: r.how = Render::kText; return r;
    case ColumnRole::kKernelRow: r.how = Render::kKernelRowid; return r;
    default: break;
  }
  if (std::is_floating_point_v<T>)
    r.how = Render::kReal;
  else if (std::is_same_v<T, char>)
    r.how = Render::kChar;
  else if (name == "copy_kind")
    r.how = Render::kCopyLabel;
  else if (name == "src_kind" || name == "dst_kind" || name == "mem_kind")
    r.how = Render::kMemLabel;
  return r;
}

// The SQL columns of one model column, appended as "name TYPE" to `out` with their descriptions.
template <typename Table, typename T>
void sql_columns(const Column<Table, T>& column, const Rendering& r,
                 std::vector<std::pair<std::string, std::string>>& out, std::vector<std::string>& descriptions) {
  const std::string name(column.name);
  const std::string doc(column.description);
  switch (r.how) {
    case Render::kTime:
      out.push_back({name + "_ns", "INTEGER"}), descriptions.push_back(doc + " (ns)");
      if (r.duration) out.push_back({"duration_ns", "INTEGER"}), descriptions.push_back("end_ns - start_ns");
      return;
    case Render::kOwner: {
      const std::string prefix(r.prefix);
      if (r.rank)
        out.push_back({"rank", "INTEGER"}), descriptions.push_back("PyTorch rank of " + doc + " (NULL: none)");
      out.push_back({prefix + "pid", "INTEGER"}), descriptions.push_back("process id of " + doc);
      if (r.tid) out.push_back({prefix + "tid", "INTEGER"}), descriptions.push_back("thread id of " + doc);
      return;
    }
    case Render::kKernelRowid:
      out.push_back({name + "_rowid", "INTEGER"}), descriptions.push_back(doc + ": kernels.rowid");
      return;
    case Render::kText:
    case Render::kChar:
    case Render::kCopyLabel:
    case Render::kMemLabel: out.push_back({name, "TEXT"}), descriptions.push_back(doc); return;
    case Render::kReal: out.push_back({name, "REAL"}), descriptions.push_back(doc); return;
    case Render::kInteger: out.push_back({name, "INTEGER"}), descriptions.push_back(doc); return;
  }
}

// Binds row `r` of one model column (its SQL columns, as sql_columns declares them); `start` is the
// row's start time, for the duration.
template <typename Table, typename T>
void bind_row(const Trace& tr, const Column<Table, T>& column, const Rendering& how, const std::vector<T>& values,
              size_t r, TimeNs start, SqlInsert& ins) {
  const T v = values.empty() ? column.absent : values[r];  // empty: an optional column not recorded
  const bool absent = column.is_absent(v);
  const auto integer = [&](int64_t x) -> SqlInsert& { return absent ? ins.null() : ins.i(x); };
  const auto id = static_cast<int64_t>(v);
  switch (how.how) {
    case Render::kTime:
      integer(id);
      if (how.duration) start == kNoTime ? ins.null() : integer(sat_sub(id, start));
      return;
    case Render::kOwner: {
      if (how.rank) {
        const int64_t rank = absent ? -1 : tr.rank_of(id);
        rank < 0 ? ins.null() : ins.i(rank);
      }
      integer(pid_of(id));
      if (how.tid) integer(tid_of(id));
      return;
    }
    case Render::kKernelRowid: integer(id + 1); return;
    case Render::kInteger: integer(id); return;
    default: break;
  }
  if (absent) {
    ins.null();
  } else if constexpr (std::is_floating_point_v<T>) {
    ins.d(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, char>) {
    ins.t(std::string_view(&v, 1));
  } else if (how.how == Render::kText) {
    ins.t(tr.str(static_cast<StrId>(v)));
  } else if (how.how == Render::kCopyLabel) {
    ins.t(tr.copy_label(static_cast<uint8_t>(v)));
  } else {
    ins.t(tr.mem_label(static_cast<uint8_t>(v)));
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
  // The start column (for durations), and how each column renders, decided once.
  const std::vector<TimeNs>* start = nullptr;
  for_each_column(table, [&](const auto& column, const auto& values) {
    if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::vector<TimeNs>>) {
      if (column.name == "start" && column.role == ColumnRole::kTime) start = &values;
    }
  });
  std::vector<Rendering> renderings;
  std::vector<std::pair<std::string, std::string>> columns;
  std::vector<std::string> descriptions;
  for_each_column_of<Table>([&](const auto& column) {
    renderings.push_back(rendering_of(column, start != nullptr));
    sql_columns(column, renderings.back(), columns, descriptions);
  });
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
  for (size_t r = 0; r < rows; ++r) {
    const TimeNs row_start = start ? (*start)[r] : kNoTime;
    size_t c = 0;
    for_each_column(table, [&](const auto& column, const auto& values) {
      bind_row(tr, column, renderings[c++], values, r, row_start, ins);
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
CREATE TABLE stack_frames (stack INTEGER, depth INTEGER, symbol TEXT, module TEXT, kernel_mode INTEGER,
  unresolved INTEGER);
CREATE TABLE ncu_launches (report INTEGER, launch INTEGER, report_path TEXT, kernel_rowid INTEGER, name TEXT,
  duration_ns INTEGER, bound TEXT, roofline_pct REAL, achieved_occupancy_pct REAL, theoretical_occupancy_pct REAL,
  occupancy_limiter TEXT, registers_per_thread INTEGER, shared_mem_per_block INTEGER,
  load_sectors_per_request REAL, store_sectors_per_request REAL, excessive_sectors_pct REAL,
  shared_load_conflict_pct REAL, shared_store_conflict_pct REAL, top_stall TEXT, sm_throughput_pct REAL,
  memory_throughput_pct REAL, dram_bytes REAL, flop_per_s REAL, arithmetic_intensity REAL);
)SQL";

// The Nsight Compute launches (--ncu, or a report read alone) with their answers, one row each;
// kernel_rowid is the timeline kernel the launch matched (analysis/ncu_join.h), NULL when none.
void insert_ncu_launches(const Trace& tr, sqlite3* db, Inserts& out) {
  const NcuJoin join = join_ncu(tr);
  SqlInsert ins(db, insert_into("ncu_launches", 24));
  const auto real = [&](double v) -> SqlInsert& { return std::isnan(v) ? ins.null() : ins.d(v); };
  for (size_t rep = 0; rep < tr.ncu_reports.size(); ++rep) {
    const NcuReport& report = *tr.ncu_reports[rep];
    for (size_t i = 0; i < report.results.size(); ++i) {
      const NcuAnswers a = ncu_answers(report, report.results[i]);
      const int64_t row = join.kernel_of[rep][i];
      ins.i(static_cast<int64_t>(rep)).i(static_cast<int64_t>(i)).t(report.path);
      (row < 0 ? ins.null() : ins.i(row + 1)).t(report.results[i].name());
      (rounded_int64(a.duration_ns) ? ins.i(*rounded_int64(a.duration_ns)) : ins.null()).t(a.bound);
      real(a.roofline_pct), real(a.achieved_occupancy_pct), real(a.theoretical_occupancy_pct);
      ins.t(occupancy_limiter_text(a)).i(a.registers_per_thread).i(a.shared_mem_per_block);
      real(a.load_sectors_per_request), real(a.store_sectors_per_request), real(a.excessive_sectors_pct);
      real(a.shared_load_conflict_pct), real(a.shared_store_conflict_pct);
      ins.t(a.stalls.empty() ? std::string() : a.stalls.front().reason);
      real(a.sm_throughput_pct), real(a.memory_throughput_pct), real(a.dram_bytes), real(a.flop_per_s);
      real(a.arithmetic_intensity);
      out.run(ins);
    }
  }
}

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
  if (!tr.ncu_reports.empty() && sql_query_names(query, "ncu_launches")) insert_ncu_launches(tr, db, out);
  if (tr.stacks.stack_count() > 0 && sql_query_names(query, "stack_frames")) {
    // Every call stack's frames, leaf (depth 0) first: cpu_samples.stack refers to them.
    SqlInsert ins(db, insert_into("stack_frames", 6));
    for (size_t s = 0; s < tr.stacks.stack_count(); ++s) {
      const std::span<const uint32_t> frames = tr.stacks.stack(static_cast<StackId>(s));
      for (size_t d = 0; d < frames.size(); ++d) {
        const StackFrame& f = tr.stacks.frame(frames[d]);
        ins.i(static_cast<int64_t>(s)).i(static_cast<int64_t>(d));
        (f.symbol == kNoStr ? ins.null() : ins.t(tr.str(f.symbol)));
        (f.module == kNoStr ? ins.null() : ins.t(tr.str(f.module)));
        ins.i(f.kernel_mode() ? 1 : 0).i(f.unresolved() ? 1 : 0);
        out.run(ins);
      }
    }
  }
  if (!out.ok || sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return IoError(fmt::format("cannot fill the SQL tables: {}", out.why.empty() ? sqlite3_errmsg(db) : out.why));
  }
  return Status::Ok();
}

namespace {

// Prepares the query (one statement, read-only) and hands its rows to the sink: column names as
// SQLite gives them, values with their own types (integers stay exact).
Status run_query(sqlite3* db, const std::string& query, RowSink& sink) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, &tail) != SQLITE_OK || !stmt) {
    const std::string why =
        stmt ? sqlite3_errmsg(db) : (sqlite3_errcode(db) == SQLITE_OK ? "empty query" : sqlite3_errmsg(db));
    sqlite3_finalize(stmt);
    return UsageError(fmt::format("sql: {}", why));
  }
  if (tail && std::string_view(tail).find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    sqlite3_finalize(stmt);
    return UsageError("sql: one statement at a time");
  }
  if (!sqlite3_stmt_readonly(stmt)) {
    sqlite3_finalize(stmt);
    return UsageError("sql: only queries that read (SELECT, WITH ... SELECT)");
  }
  const int n = sqlite3_column_count(stmt);
  std::vector<ColumnSpec> columns;
  for (int c = 0; c < n; ++c) {
    columns.push_back({sqlite3_column_name(stmt, c), Unit::kNone});
    // JSON rows are objects keyed by column name: two columns of one name would be one key.
    for (int e = 0; e < c; ++e) {
      if (columns[static_cast<size_t>(e)].name != columns.back().name) continue;
      sqlite3_finalize(stmt);
      return UsageError(
          fmt::format("sql: two result columns are named '{}': name them apart (AS)", columns.back().name));
    }
  }
  sink.begin(columns);
  std::vector<Cell> row(static_cast<size_t>(n));
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    for (int c = 0; c < n; ++c) {
      switch (sqlite3_column_type(stmt, c)) {
        case SQLITE_INTEGER: row[static_cast<size_t>(c)] = Cell::integer(sqlite3_column_int64(stmt, c)); break;
        case SQLITE_FLOAT: row[static_cast<size_t>(c)] = Cell::real(sqlite3_column_double(stmt, c)); break;
        case SQLITE_NULL: row[static_cast<size_t>(c)] = Cell::null(); break;
        default: {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row[static_cast<size_t>(c)] =
              Cell::text(std::string_view(text, static_cast<size_t>(sqlite3_column_bytes(stmt, c))));
        }
      }
    }
    sink.row(row);
  }
  sink.end();
  const Status st = rc == SQLITE_DONE        ? Status::Ok()
                    : rc == SQLITE_INTERRUPT ? Status(ErrorCode::kInterrupted, "sql: interrupted")
                                             : UsageError(fmt::format("sql: {}", sqlite3_errmsg(db)));
  sqlite3_finalize(stmt);
  return st;
}

}  // namespace

Status run_sql_query(const Trace& trace, const std::string& input, const std::string& query, RowSink& sink) {
  const auto on_input = [&](const Status& st) { return Status(st.code(), input + ": " + st.message()); };
  sqlite3* raw = nullptr;
  if (sqlite3_open(":memory:", &raw) != SQLITE_OK) {
    sqlite3_close(raw);
    return IoError("sql: cannot open an in-memory database");
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  // A query may run for ever (a recursive one): it stops when asked (Python's Ctrl-C).
  sqlite3_progress_handler(
      db.get(), 100'000, [](void*) { return StopRequest::requested() ? 1 : 0; }, nullptr);
  SqlAnalyses analyses;
  Result<StepSet> steps = sql_query_names(query, "steps") ? find_steps(trace) : Result<StepSet>(StepSet{});
  if (steps.ok()) analyses.steps = &*steps;
  std::vector<MemorySeries> memory;
  if (sql_query_names(query, "memory")) memory = collect_gpu_memory(trace), analyses.memory = &memory;
  diagnose::Diagnosis diagnosis;
  if (sql_query_names(query, "findings")) diagnosis = diagnose::diagnose(trace, {}), analyses.diagnosis = &diagnosis;
  if (Status st = load_sql_model(trace, analyses, db.get(), query); !st.ok()) return on_input(st);
  if (Status st = run_query(db.get(), query, sink); !st.ok()) return on_input(st);
  return Status::Ok();
}

}  // namespace tracedoc
