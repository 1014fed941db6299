// Writes a Trace as an Nsight Systems SQLite export (schema 3.24-compatible subset: the tables and
// columns that `nsys stats` reads), so that nsys's own tools and SQL written for nsys exports work on it.
//
// Tables are created only when they have rows, as `nsys export` creates them, so that a report
// missing its data says so (nsys's SKIPPED) on the export as on the trace it came from.
//
// Times. An nsys export counts time in ns from the session start (TARGET_INFO_SESSION_START_TIME
// holds its UTC epoch ns). A trace read from an export is written on its own timebase. A PyTorch
// trace is not: its times are absolute epoch ns (~1.7e18, past 2^53, where any arithmetic in
// doubles, SQL's or pandas', rounds) or relative to baseTimeNanoseconds on a steady clock (days,
// ~1e15; events may precede the base). Its session start is the last whole second (UTC epoch)
// before the first event, and every time is written relative to it: exported time = trace time −
// shift, with shift = session start − baseTimeNanoseconds (0 without a base). Every event then
// starts after 0 (nsys's GPU rules only look at `start > 0`), times stay small integers, and the
// digits below the second are the trace's own.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

struct ExportTimebase {
  int64_t session_start_utc_ns = 0;  // TARGET_INFO_SESSION_START_TIME.utcEpochNs
  int64_t shift_ns = 0;              // subtracted from every time of the trace
};
// The timebase write_nsys_sqlite uses for `trace` (see above).
ExportTimebase export_timebase(const Trace& trace);

// Writes atomically (temporary file + rename); an existing file at `path` is replaced.
Status write_nsys_sqlite(const Trace& trace, const std::string& path);

}  // namespace tracedoc
