// The report interface: what every report (the `nsys stats`-compatible ones, the PyTorch and
// TensorBoard ones, the GPU memory and copy reports) is and takes. The reports include this; the
// registry (analysis/report_registry.h) includes them, so neither includes the other back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/result.h"
#include "common/name_pattern.h"
#include "common/status.h"
#include "model/column_selection.h"
#include "model/trace.h"

namespace tracedoc {

struct ReportArgs {
  std::vector<std::string> args;           // report arguments after the name (`cuda_gpu_kern_sum:base`)
  std::optional<NamePattern> name_filter;  // --filter-name: keep rows whose name matches
  bool has(std::string_view a) const {
    for (const auto& x : args)
      if (x == a) return true;
    return false;
  }
  bool name_ok(std::string_view name) const { return !name_filter || name_filter->found_in(name); }
};

// A report returns NoData(<reason>) when the trace lacks what it summarizes; the CLI then prints
// nsys's "SKIPPED: <file> <reason>" line.
using ReportFn = Status (*)(const Trace&, const ReportArgs&, RowSink&);

// A summary report aggregates (one row per name, size, thread, ...); a trace report lists events,
// one row each, and streams its rows to the writer (the CLI runs summaries side by side and the
// traces one at a time, as they are written).
enum class ReportKind : uint8_t { kSummary, kTrace };

struct ReportDef {
  const char* name;
  const char* display_name;
  ReportKind kind;
  uint32_t tables;  // table bits (model/table_set.h) the report reads
  ReportFn run;
  // The columns of the large tables it reads, given its arguments (model/column_selection.h); null:
  // every column. A read for several reports fills the columns of all of them.
  ColumnSelection (*columns)(const ReportArgs&) = nullptr;
};

// ReportDef::columns of a report that reads none of the tables a selection narrows.
inline ColumnSelection reads_no_large_table(const ReportArgs&) { return ColumnSelection::time_only(); }

// NoData("<file> <what>"): the trace lacks what the report summarizes ("does not contain ...").
Status no_data(const Trace& trace, std::string_view what);

// Rejects arguments a report does not know (a typo would otherwise silently change nothing):
// `flags` are its plain arguments (`cuda_gpu_kern_sum:base`), `keys` its `key=value` ones.
Status check_report_args(std::string_view report, const ReportArgs& args, const std::vector<std::string_view>& flags,
                         const std::vector<std::string_view>& keys);
// The value of `key=N` (a non-negative integer), or `fallback` when absent.
Result<int64_t> int_report_arg(std::string_view report, const ReportArgs& args, std::string_view key, int64_t fallback);
// The text of `key=TEXT`, or nullopt when absent.
std::optional<std::string> text_report_arg(const ReportArgs& args, std::string_view key);

}  // namespace tracedoc
