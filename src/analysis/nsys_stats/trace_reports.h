// Trace-style reports: one row per event, ordered by start time.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

Status cuda_gpu_trace(const Trace&, const ReportArgs&, RowSink&);
Status cuda_api_trace(const Trace&, const ReportArgs&, RowSink&);

// Indices 0..n-1 ordered by `start`, ties kept in table order (SQLite's ORDER BY on a scan).
std::vector<uint32_t> order_by_start(const std::vector<TimeNs>& start);

}  // namespace tracedoc::nsys_stats
