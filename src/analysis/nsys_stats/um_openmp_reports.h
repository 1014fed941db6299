// Unified Memory and OpenMP reports: um_sum (migrations and page faults per virtual address) and
// openmp_sum (OpenMP event durations per event kind and name), as nsys 2023.4.4 computes them.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

// um_sum[:rows=<limit>]: one row per virtual address, by migration throughput (default 10 rows).
Status um_sum(const Trace&, const ReportArgs&, RowSink&);
// openmp_sum: duration statistics per (OpenMP event table, event name).
Status openmp_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::nsys_stats
