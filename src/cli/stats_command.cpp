// `tracedoc stats`: the `nsys stats` reports, same names, columns and numbers.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "analysis/nsys_stats/registry.h"
#include "analysis/trace_filter.h"
#include "cli/commands.h"
#include "common/memory_budget.h"
#include "ingest/open_trace.h"
#include "report/atomic_file.h"
#include "report/writers.h"

namespace tracedoc::cli {

namespace {

struct StatsOptions {
  std::string input;
  std::vector<std::string> reports;
  std::string format;
  std::string output = "-";
  std::string timeunit = "ns";
  std::string filter_time, filter_nvtx, filter_name;
  bool all_ranks = false;
  bool list_reports = false;
  int64_t rank = -1;
  std::string max_memory;
};

// Holds back begin() until the first row, so that empty reports print nothing.
class DeferredSink : public RowSink {
 public:
  DeferredSink(RowSink& inner, std::function<void()> on_first_row) : inner_(inner), on_first_row_(std::move(on_first_row)) {}
  void begin(const std::vector<ColumnSpec>& columns) override { columns_ = columns; started_ = false; }
  void row(std::span<const Cell> cells) override {
    if (!started_) {
      started_ = true;
      on_first_row_();
      inner_.begin(columns_);
    }
    inner_.row(cells);
  }
  void end() override {
    if (started_) inner_.end();
  }

 private:
  RowSink& inner_;
  std::function<void()> on_first_row_;
  std::vector<ColumnSpec> columns_;
  bool started_ = false;
};

struct ReportRequest {
  const nsys_stats::ReportDef* def;
  nsys_stats::ReportArgs args;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    if (next == std::string::npos) break;
    pos = next + 1;
  }
  return out;
}

struct Precomputed {
  Status status;
  TableSink table;
};

bool is_trace_report(const ReportRequest& r) {
  const std::string_view name = r.def->name;
  return name.size() > 6 && name.substr(name.size() - 6) == "_trace";
}

// Runs the summary reports on two threads; entries stay null for trace reports (and when there is
// only one report, which then streams).
std::vector<std::unique_ptr<Precomputed>> precompute_summaries(const Trace& trace,
                                                               const std::vector<ReportRequest>& requests) {
  std::vector<std::unique_ptr<Precomputed>> out(requests.size());
  std::vector<size_t> jobs;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!is_trace_report(requests[i])) jobs.push_back(i);
  }
  if (jobs.size() < 2) return out;
  for (size_t i : jobs) out[i] = std::make_unique<Precomputed>();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      const size_t i = jobs[j];
      out[i]->status = requests[i].def->run(trace, requests[i].args, out[i]->table);
    }
  };
  std::thread helper(work);
  work();
  helper.join();
  return out;
}

int fail(const Status& st) {
  std::fprintf(stderr, "tracedoc: %s\n", st.message().c_str());
  return kExitBadInput;
}

// Per-event problems of a PyTorch trace, one line on stderr: counted, never fatal.
void report_read_warnings(const Trace& trace) {
  const auto& w = trace.warnings;
  if (!w.any()) return;
  std::vector<std::string> parts;
  const bool json = trace.source.format == "kineto-json";
  if (w.negative_durations) {
    parts.push_back(fmt::format("{} ending before they start ({})", w.negative_durations,
                                json ? "read with duration 0" : "kept as recorded, as nsys does"));
  }
  if (w.absurd_durations) parts.push_back(fmt::format("{} longer than a week (skipped)", w.absurd_durations));
  if (w.missing_times) parts.push_back(fmt::format("{} without a usable timestamp (skipped)", w.missing_times));
  std::fprintf(stderr, "tracedoc: warning: %s: events %s\n", trace.source.path.c_str(), fmt::format("{}", fmt::join(parts, "; ")).c_str());
}

int list_reports() {
  for (const auto& r : nsys_stats::all_reports()) std::printf("%-24s %s\n", r.name, r.display_name);
  return kExitOk;
}

int run_stats(const StatsOptions& opt) {
  if (opt.list_reports) return list_reports();
  if (opt.input.empty()) return fail(UsageError("stats: an INPUT file is required"));

  // Reports and their arguments: "name[:arg[:arg]]", comma-separated, repeatable.
  std::vector<ReportRequest> requests;
  std::vector<std::string> names;
  for (const auto& r : opt.reports) for (auto& n : split(r, ',')) if (!n.empty()) names.push_back(n);
  if (names.empty()) names = nsys_stats::default_reports();
  uint32_t tables = 0;
  std::optional<std::regex> name_filter;
  if (!opt.filter_name.empty()) {
    try {
      name_filter.emplace(opt.filter_name, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return fail(UsageError(fmt::format("--filter-name: invalid regular expression '{}': {}", opt.filter_name, e.what())));
    }
  }
  for (const auto& n : names) {
    auto parts = split(n, ':');
    const auto* def = nsys_stats::find_report(parts[0]);
    if (!def) {
      return fail(UsageError(fmt::format("unknown report '{}' (see `tracedoc stats --help-reports`)", parts[0])));
    }
    ReportRequest req{def, {}};
    req.args.args.assign(parts.begin() + 1, parts.end());
    req.args.name_filter = name_filter;
    tables |= def->tables;
    tables |= nsys_stats::kernel_name_tables(req.args);  // :nvtx-name also reads NVTX and API calls
    requests.push_back(std::move(req));
  }

  OutputFormat format = isatty(STDOUT_FILENO) && opt.output == "-" ? OutputFormat::kColumn : OutputFormat::kCsv;
  if (!opt.format.empty()) {
    auto f = parse_output_format(opt.format);
    if (!f.ok()) return fail(f.status());
    format = *f;
  }
  auto unit = parse_time_unit(opt.timeunit);
  if (!unit.ok()) return fail(unit.status());

  TraceFilter filter;
  if (!opt.filter_time.empty()) {
    auto w = parse_time_window(opt.filter_time);
    if (!w.ok()) return fail(w.status());
    filter.window = *w;
  }
  if (!opt.filter_nvtx.empty()) {
    auto spec = parse_nvtx_filter(opt.filter_nvtx);
    if (!spec.ok()) return fail(spec.status());
    filter.nvtx = *spec;
    filter.all_ranks = opt.all_ranks;
    tables |= kLoadRanges;
  }

  auto memory_limit = opt.max_memory.empty() ? Result<uint64_t>(MemoryBudget::default_limit())
                                             : parse_memory_size(opt.max_memory);
  if (!memory_limit.ok()) return fail(memory_limit.status());
  MemoryBudget::set_limit(*memory_limit);

  OpenOptions open_options;
  open_options.nsys.tables = tables;
  open_options.rank = opt.rank;
  // TRACEDOC_TIMING=1 prints where the time goes (reading, reports, writing) on stderr.
  const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;
  const auto t_start = std::chrono::steady_clock::now();
  auto since = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  auto trace = open_trace(opt.input, open_options);
  if (timing) std::fprintf(stderr, "timing: read %.3f s\n", since());
  if (!trace.ok()) return fail(trace.status());
  report_read_warnings(*trace);
  if (filter.window || filter.nvtx) {
    Status st = apply_filter(*trace, filter);
    if (!st.ok()) return fail(st);
  }

  // Summary reports are computed on both cores at once and kept in memory; trace reports (one row
  // per event, possibly millions) stream straight to their writer when their turn comes.
  std::vector<std::unique_ptr<Precomputed>> precomputed = precompute_summaries(*trace, requests);
  if (timing) std::fprintf(stderr, "timing: summaries done %.3f s\n", since());
  auto produce = [&](size_t index, RowSink& sink) -> Status {
    if (const auto& pre = precomputed[index]) {
      if (!pre->status.ok()) return pre->status;
      sink.begin(pre->table.columns());
      for (size_t r = 0; r < pre->table.row_count(); ++r) sink.row(pre->table.row_at(r));
      sink.end();
      return Status::Ok();
    }
    return requests[index].def->run(*trace, requests[index].args, sink);
  };

  // Output file names carry the filter as nsys's do: _nvtx=<argument> (it overrides the time
  // window), else _start=<ns>_end=<ns>; --all-ranks, tracedoc's own, keeps its files apart.
  std::string filter_suffix;
  if (filter.nvtx) {
    filter_suffix = "_nvtx=" + filter.nvtx->argument + (filter.all_ranks ? "_all-ranks" : "");
  } else if (filter.window) {
    filter_suffix = fmt::format("_start={}_end={}", filter.window->start, filter.window->end);
  }

  const bool to_stdout = opt.output == "-";
  const bool human = format == OutputFormat::kColumn || format == OutputFormat::kTable;
  bool first = true;
  for (size_t index = 0; index < requests.size(); ++index) {
    const auto& req = requests[index];
    WriterOptions wo;
    wo.format = format;
    wo.units.time = *unit;
    wo.report_name = req.def->name;
    wo.display_name = human ? req.def->display_name : "";
    wo.input_path = opt.input;
    if (to_stdout) {
      TextOut out(stdout);
      auto writer = make_writer(wo, out);
      // As nsys, a report without rows prints nothing (JSON still prints its empty document).
      DeferredSink deferred(*writer, [&] {
        if (!first && !human) out.put('\n');
        first = false;
      });
      RowSink& sink = format == OutputFormat::kJson ? static_cast<RowSink&>(*writer) : deferred;
      Status st = produce(index, sink);
      out.flush();
      std::fflush(stdout);
      if (st.code() == ErrorCode::kNoData) {
        std::fprintf(stderr, "SKIPPED: %s\n", st.message().c_str());
        continue;
      }
      if (!st.ok()) return fail(st);
      continue;
    }
    // As nsys: the filter and then the report arguments become part of the name
    // (BASE_um_sum_rows=20.csv, BASE_cuda_gpu_kern_sum_start=0_end=5000_base.csv).
    std::string stem = req.def->name + filter_suffix;
    for (const auto& a : req.args.args) stem += "_" + a;
    const std::string path = fmt::format("{}_{}.{}", opt.output, stem, format_extension(format));
    AtomicFile file;
    Status st = file.open(path);
    if (!st.ok()) return fail(st);
    {
      TextOut out(file.file());
      auto writer = make_writer(wo, out);
      DeferredSink deferred(*writer, [] {});
      st = produce(index, format == OutputFormat::kJson ? static_cast<RowSink&>(*writer) : deferred);
      out.flush();
    }
    if (st.code() == ErrorCode::kNoData) {
      file.discard();
      std::fprintf(stderr, "SKIPPED: %s\n", st.message().c_str());
      continue;
    }
    if (!st.ok()) return fail(st);
    st = file.commit();
    if (!st.ok()) return fail(st);
    std::fprintf(stderr, "Generated: %s\n", path.c_str());
  }
  if (timing) std::fprintf(stderr, "timing: written %.3f s\n", since());
  return kExitOk;
}

}  // namespace

std::function<int()> add_stats_command(CLI::App& app) {
  auto opt = std::make_shared<StatsOptions>();
  CLI::App* cmd = app.add_subcommand("stats", "Summary and trace reports compatible with `nsys stats`");
  cmd->add_option("input", opt->input,
                  "Nsight Systems export (.sqlite) or report (.nsys-rep), PyTorch profiler trace (.json, .json.gz) "
                  "or a directory of per-rank PyTorch traces");
  cmd->add_option("--rank", opt->rank, "PyTorch traces: only this rank (default: all ranks of a directory)");
  cmd->add_option("--max-memory", opt->max_memory,
                  "Stop with an error (exit 2) when reading needs more memory than this, e.g. 4G "
                  "(default: 80% of RAM or of the container's limit)");
  cmd->add_option("-r,--report", opt->reports, "Reports to run, comma-separated, with optional :args (default: the nsys default set)")
      ->allow_extra_args(false);  // `-r a,b INPUT`: the input is not one more report
  cmd->add_option("-f,--format", opt->format, "column, table, csv, tsv or json (default: column on a terminal, else csv)");
  cmd->add_option("-o,--output", opt->output, "'-' for stdout, or a base name: files BASE_<report>.<ext>");
  cmd->add_option("--timeunit", opt->timeunit, "ns, us, ms or s (default ns)");
  cmd->add_option("--filter-time", opt->filter_time, "[START]/[END]: keep events overlapping this window (ns, or with units ns/us/ms/s/m/h, summable: 1s200ms)");
  cmd->add_option("--filter-nvtx", opt->filter_nvtx, "RANGE[@DOMAIN][/N]: keep events overlapping the N-th instance of an NVTX range");
  cmd->add_flag("--all-ranks", opt->all_ranks, "With --filter-nvtx: keep events of every process, not only the range's own");
  cmd->add_option("--filter-name", opt->filter_name, "Keep kernels / API calls / ranges whose name matches this regular expression");
  cmd->add_flag("--help-reports", opt->list_reports, "List the available reports");
  return [opt] { return run_stats(*opt); };
}

}  // namespace tracedoc::cli
