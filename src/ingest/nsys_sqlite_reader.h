// Reader for Nsight Systems SQLite exports (`nsys export --type sqlite`), every schema from 2.9.1
// (nsys 2022.1) on: it adapts to renamed metadata tables, missing ENUM_* tables, missing columns
// and absent tables, and never writes to or locks the input.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "model/column_selection.h"
#include "model/table_set.h"
#include "model/trace.h"

namespace tracedoc {

struct NsysReadOptions {
  uint32_t tables = kLoadAll;
  ColumnSelection columns;  // the columns of the large tables to fill (default: all; the others stay empty)
  bool parallel = true;     // load independent tables at once, on the task pool (common/task_pool.h)
  bool fast_scan = true;    // decode table pages directly (falls back to SQLite when it cannot)
};

// True when the first bytes of the file are the SQLite header.
bool looks_like_sqlite(const std::string& path);

Result<Trace> read_nsys_sqlite(const std::string& path, const NsysReadOptions& options = {});

// Counts the interval rows that end before they start into trace.warnings.negative_durations: the
// reader keeps them as nsys does (its reports must match) and says how many there are.
void count_reversed_rows(Trace& trace);

}  // namespace tracedoc
