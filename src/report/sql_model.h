// The normalized model as SQLite tables, for `tracedoc sql`: users who live in SQL query every input
// format the same way. docs/sql.md documents the tables; times are int64 ns on the trace's timebase.
//
// Every model table (model/trace.h's for_each_trace_table) is one SQL table of the same name, its
// columns derived from the table's column declarations (model/columns.h): a time `X` is `X_ns`,
// a table with start and end gains `duration_ns`, a global thread id is `rank, pid, tid`, a string
// id its text, a kernel row `X_rowid` (kernels.rowid), copy and memory kinds their labels, an absent
// value NULL. `tracedoc_columns(table_name, column_name, type, description)` lists them all. Beside
// them, what the analyses computed: steps, memory (the allocated level over time) and findings.
#pragma once

#include <sqlite3.h>

#include <string_view>
#include <vector>

#include "analysis/gpu_memory.h"
#include "analysis/result.h"
#include "analysis/steps.h"
#include "common/status.h"
#include "diagnose/engine.h"
#include "model/trace.h"

namespace tracedoc {

// The analyses' results the SQL tables render; a null one leaves its table empty.
struct SqlAnalyses {
  const StepSet* steps = nullptr;
  const std::vector<MemorySeries>* memory = nullptr;
  const diagnose::Diagnosis* diagnosis = nullptr;
};

// True when `query` names `table` (a lower-case name) as a word, in any case; an empty query names
// every table. Tables a query does not name are created empty: it cannot read them.
bool sql_query_names(std::string_view query, std::string_view table);

// Creates the tables in `db` (an empty database, usually ":memory:") and fills those `query` names.
Status load_sql_model(const Trace& trace, const SqlAnalyses& analyses, sqlite3* db, std::string_view query = {});

// `tracedoc sql` (and the Python package's Trace.sql): one read-only statement over the model in a
// new in-memory database, its rows into `sink` with SQLite's column names and each value's own type
// (integers stay exact). The analyses run only for the tables the query reads (steps, memory,
// findings: a diagnosis costs more than most queries). Errors start with `input`: a query that
// fails on one trace (an overflowing sum) may run on another.
Status run_sql_query(const Trace& trace, const std::string& input, const std::string& query, RowSink& sink);

}  // namespace tracedoc
