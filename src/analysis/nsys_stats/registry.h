// The `nsys stats`-compatible reports: names, descriptions, what they read, how they run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/result.h"
#include "analysis/statistics.h"
#include "common/name_pattern.h"
#include "common/status.h"
#include "model/trace.h"

namespace tracedoc::nsys_stats {

struct ReportArgs {
  std::vector<std::string> args;         // report arguments after the name (`cuda_gpu_kern_sum:base`)
  std::optional<NamePattern> name_filter;  // --filter-name: keep rows whose name matches
  bool has(std::string_view a) const {
    for (const auto& x : args) if (x == a) return true;
    return false;
  }
  bool name_ok(std::string_view name) const {
    return !name_filter || name_filter->found_in(name);
  }
};

// A report returns NoData(<reason>) when the trace lacks what it summarizes; the CLI then prints
// nsys's "SKIPPED: <file> <reason>" line.
using ReportFn = Status (*)(const Trace&, const ReportArgs&, RowSink&);

struct ReportDef {
  const char* name;
  const char* display_name;
  uint32_t tables;  // NsysTables bits the report reads
  ReportFn run;
};

const std::vector<ReportDef>& all_reports();
const ReportDef* find_report(std::string_view name);
// The set `nsys stats` runs when no -r is given (those tracedoc implements).
const std::vector<std::string>& default_reports();

// Shared by the report implementations.
Status no_data(const Trace& trace, std::string_view what);

// The eight columns of nsys's time summaries: Time (%), Total Time, <count_name>, Avg, Med, Min,
// Max, StdDev; and one row's cells for them (avg, median and stdev rounded as SQLite's round(x, 1);
// the percentage is NULL when the grand total is 0, as SQLite's division by zero).
std::vector<ColumnSpec> time_summary_columns(const char* count_name);
void push_time_summary_cells(std::vector<Cell>& row, const SummaryStats& stats, int64_t grand_total);

}  // namespace tracedoc::nsys_stats
