// `tracedoc sql`: SQL over the normalized model (src/report/sql_model.h, docs/sql.md), the same tables
// for nsys exports and PyTorch traces, with the diagnosis's findings as a table too.
//
//   tracedoc sql INPUT "SELECT ..." [-f column|table|csv|tsv|json] [-o BASE] [--rank N]
#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "diagnose/engine.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/sql_model.h"

namespace tracedoc::cli {

namespace {

struct SqlOptions {
  InputOptions in;
  std::string query;
};

// Runs the query and hands its rows to the writer: column names as SQLite gives them, values with
// their own types (integers stay exact).
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
  const Status st = rc == SQLITE_DONE ? Status::Ok() : UsageError(fmt::format("sql: {}", sqlite3_errmsg(db)));
  sqlite3_finalize(stmt);
  return st;
}

int run_sql(const SqlOptions& opt) {
  if (opt.in.input.empty() || opt.query.empty()) return fail(UsageError("sql: INPUT and a QUERY are required"));
  auto loaded = load_input(opt.in, kLoadAll);
  if (!loaded.ok()) return fail(loaded.status());
  sqlite3* raw = nullptr;
  if (sqlite3_open(":memory:", &raw) != SQLITE_OK) {
    sqlite3_close(raw);
    return fail(IoError("sql: cannot open an in-memory database"));
  }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  // The analyses run only for the tables the query reads (a diagnosis costs more than the query).
  const Trace& trace = loaded->trace;
  SqlAnalyses analyses;
  Result<StepSet> steps = sql_query_names(opt.query, "steps") ? find_steps(trace) : Result<StepSet>(StepSet{});
  if (steps.ok()) analyses.steps = &*steps;
  std::vector<MemorySeries> memory;
  if (sql_query_names(opt.query, "memory")) memory = collect_gpu_memory(trace), analyses.memory = &memory;
  diagnose::Diagnosis diagnosis;
  if (sql_query_names(opt.query, "findings"))
    diagnosis = diagnose::diagnose(trace, {}), analyses.diagnosis = &diagnosis;
  // Errors name the input: a query that fails on one trace (an overflowing sum) may run on another.
  const auto fail_on_input = [&](const Status& st) {
    return fail(Status(st.code(), opt.in.input + ": " + st.message()));
  };
  if (Status st = load_sql_model(trace, analyses, db.get(), opt.query); !st.ok()) return fail_on_input(st);
  // The query runs before anything is written, so a bad query leaves no output file.
  TableSink rows;
  if (Status st = run_query(db.get(), opt.query, rows); !st.ok()) return fail_on_input(st);
  std::vector<ReportJob> jobs(1);
  jobs[0].name = "sql";
  jobs[0].display_name = "Query";
  jobs[0].file_stem = "sql";
  jobs[0].produce = [&rows](RowSink& sink) -> Status {
    sink.begin(rows.columns());
    for (size_t r = 0; r < rows.row_count(); ++r) sink.row(rows.row_at(r));
    sink.end();
    return Status::Ok();
  };
  return write_reports(jobs, loaded->output);
}

}  // namespace

std::function<int()> add_sql_command(CLI::App& app) {
  auto opt = std::make_shared<SqlOptions>();
  CLI::App* cmd =
      app.add_subcommand("sql",
                         "Run a SELECT over the trace as SQL tables (every model table: kernels, memcpy, api, ranges, "
                         "ops, ...; steps, memory, findings; tracedoc_columns describes them)");
  cmd->add_option("input", opt->in.input, "Nsight Systems export, PyTorch trace or rank directory");
  cmd->add_option("query", opt->query, "One SELECT (docs/sql.md lists the tables and columns)");
  add_report_format_option(cmd, opt->in.format);
  cmd->add_option("-o,--output", opt->in.output, "'-' for stdout, or a base name: BASE_sql.<ext>");
  add_rank_option(cmd, opt->in.rank);
  add_max_memory_option(cmd, opt->in.max_memory);
  return [opt] { return run_sql(*opt); };
}

}  // namespace tracedoc::cli
