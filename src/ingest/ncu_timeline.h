// An Nsight Compute report read as a timeline of its own, so that `tracedoc diagnose REPORT.ncu-rep`
// (and stats, summary, view, sql) work where no nsys export or PyTorch trace of the program exists.
//
// ncu replays every profiled kernel alone, serialised, with caches flushed, so the report holds no
// real timeline: each result becomes one kernel row, laid back to back on its device in the order
// ncu profiled them, lasting ncu's gpu__time_duration.sum. A kernel's share of that timeline is its
// share of the profiled kernel time, which is what the diagnosis weights a hardware problem by. The
// report itself rides along (Trace::ncu_reports), so every launch joins its own row.
#pragma once

#include <string>

#include "common/status.h"
#include "model/ncu_report.h"
#include "model/trace.h"

namespace tracedoc {

// Whether `head` (a file's first bytes) is an ncu report (.ncu-rep, .ncu-repz) or an ncu CSV export.
bool looks_like_ncu_input(std::string_view head);

// The timeline of a report (above); format "ncu-report".
Trace ncu_report_timeline(NcuReport report);

// Reads an ncu report or CSV export (read_ncu_input) as that timeline.
Result<Trace> read_ncu_timeline(const std::string& path);

}  // namespace tracedoc
