// The eight columns of nsys's time summaries (Time (%), Total Time, <count_name>, Avg, Med, Min, Max,
// StdDev), shared by the nsys-compatible reports, with the report interface they implement.
#pragma once

#include <vector>

#include "analysis/report.h"
#include "analysis/statistics.h"

namespace tracedoc::nsys_stats {

// The eight columns of nsys's time summaries: Time (%), Total Time, <count_name>, Avg, Med, Min,
// Max, StdDev; and one row's cells for them (avg, median and stdev rounded as SQLite's round(x, 1);
// the percentage is NULL when the grand total is 0, as SQLite's division by zero).
std::vector<ColumnSpec> time_summary_columns(const char* count_name);
void push_time_summary_cells(std::vector<Cell>& row, const SummaryStats& stats, int64_t grand_total);

}  // namespace tracedoc::nsys_stats
