// What `stats` and `analyze` share: the input options (file, rank, memory guard, filters), reading
// the trace, and writing a list of reports to stdout or to BASE_<report>.<ext> files.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/result.h"
#include "analysis/trace_filter.h"
#include "common/text.h"
#include "common/status.h"
#include "ingest/nsys_sqlite_reader.h"
#include "model/ncu_report.h"
#include "model/trace.h"
#include "report/writers.h"

namespace tracedoc::cli {

struct InputOptions {
  std::string input;
  int64_t rank = -1;
  std::string format;
  std::string output = "-";
  std::string timeunit = "ns";
  std::string filter_time, filter_nvtx;
  bool all_ranks = false;
  std::vector<std::string> ncu;  // --ncu: Nsight Compute reports to join to the kernels
};

// Registers INPUT, --rank, -f, -o, --timeunit, --filter-time, --filter-nvtx and
// --all-ranks on a subcommand.
void add_input_options(CLI::App* cmd, InputOptions& opt);

// --ncu REPORT (repeatable), and reading those reports onto the trace (Trace::ncu_reports).
void add_ncu_option(CLI::App* cmd, std::vector<std::string>& into);
Status attach_ncu_reports(Trace& trace, const std::vector<std::string>& paths);
// A report's per-value problems (NcuReport::unusable_values), one warning line on stderr.
void report_ncu_warnings(const NcuReport& report);

// Prints "tracedoc: <message>" and returns the bad-input exit code.
int fail(const Status& st);

struct OutputSettings {
  OutputFormat format = OutputFormat::kCsv;
  UnitChoice units;
  std::string output = "-";   // "-" or a base name
  std::string input;          // for JSON documents and messages
  std::string filter_suffix;  // part of file names, as nsys names them
  bool human() const { return format == OutputFormat::kColumn || format == OutputFormat::kTable; }
};

// -f (column on a terminal, else CSV), -o and --timeunit, checked.
Result<OutputSettings> output_settings(const InputOptions& opt);

// The trace, read and filtered as the options say, with the output settings that go with it.
struct LoadedInput {
  Trace trace;
  OutputSettings output;
};
// `tables`: the NsysTables bits the reports read, `columns` the columns of them (columns_read; a
// filter or --ncu reads every column). Parses every option first, so that a usage error is reported
// before a large file is read.
Result<LoadedInput> load_input(const InputOptions& opt, uint32_t tables, const ColumnSelection& columns = {});

// What the diagnosis reads (diagnose, check, diff): GPU work and graph launches, API calls (launch
// links, steps), ranges and operators (steps, markers, call sites of findings), GPU memory, OS
// runtime calls (host_waits), CPU samples and thread switches (cpu_bound_during_idle) and GPU
// metrics (sm_underused).
inline constexpr uint32_t kDiagnoseTables = kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadApi | kLoadRanges |
                                            kLoadMemory | kLoadOsCalls | kLoadGraphsAndEvents | kLoadCpuSched |
                                            kLoadGpuMetrics;

// Reads one whole trace (no filters, no output settings): diagnose, check, diff.
Result<Trace> read_trace(const std::string& path, int64_t rank, uint32_t tables = kDiagnoseTables);

// Parses the filter options alone (also used for per-rule start=/end=/nvtx=).
Result<TraceFilter> parse_filter(const InputOptions& opt);

struct ReportJob {
  std::string name;          // report or rule name: JSON "report", column heading
  std::string display_name;  // column heading
  std::string file_stem;     // BASE_<file_stem>.<ext>
  std::function<Status(RowSink&)> produce;
  // Human formats only: printed under the heading before the rows, or alone when there are none.
  std::string advice;
  std::string no_rows_message;
};

// Writes the jobs in order. SKIPPED reports print nsys's line on stderr and write no file; empty
// results print nothing (CSV) as nsys does. Files are written atomically.
int write_reports(std::vector<ReportJob>& jobs, const OutputSettings& out);

// Writes a whole document to stdout ("-") or, atomically, to a file (whole or not at all).
Status write_text(const std::string& output, const std::string& text);

// Comma-separated lists from repeatable options, empty items dropped.
std::vector<std::string> split_list(const std::vector<std::string>& values, char sep);

}  // namespace tracedoc::cli
