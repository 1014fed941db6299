#include "cli/report_output.h"
#include "cli/shared_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "common/memory_budget.h"
#include "common/utf8.h"
#include "ingest/kineto_reader.h"
#include "ingest/ncu_csv_reader.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/open_trace.h"
#include "ingest/read_warnings.h"
#include "report/output_file.h"

namespace tracedoc::cli {

namespace {

// What the read left to say (ingest/read_warnings.h), one line each on stderr: counted, never fatal.
void report_read_warnings(const Trace& trace) {
  for (const std::string& line : read_warning_lines(trace))
    std::fprintf(stderr, "tracedoc: warning: %s\n", line.c_str());
}

void print_heading(TextOut& out, const ReportJob& job) {
  out.write(fmt::format("\n ** {} ({}):\n\n", job.display_name, job.name));
}

}  // namespace

void report_ncu_warnings(const NcuReport& report) {
  if (const std::string line = ncu_warning_line(report); !line.empty())
    std::fprintf(stderr, "tracedoc: warning: %s\n", line.c_str());
}

Status write_text(const std::string& output, const std::string& raw) {
  // Every text output is valid UTF-8 (common/utf8.h), whatever bytes the trace's names hold.
  const std::string replaced = is_valid_utf8(raw) ? std::string() : replace_invalid_utf8(raw);
  const std::string& text = replaced.empty() ? raw : replaced;
  if (output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return Status::Ok();
  }
  return write_output(output, text);
}

int fail(const Status& st) {
  std::fprintf(stderr, "tracedoc: %s\n", st.message().c_str());
  return kExitBadInput;
}

std::vector<std::string> split_list(const std::vector<std::string>& values, char sep) {
  std::vector<std::string> out;
  for (const auto& v : values) {
    for (auto& item : split(v, sep)) {
      if (!item.empty()) out.push_back(item);
    }
  }
  return out;
}

void add_input_options(CLI::App* cmd, InputOptions& opt) {
  cmd->add_option("input", opt.input,
                  "Nsight Systems export (.sqlite) or report (.nsys-rep), PyTorch profiler trace (.json, .json.gz) "
                  "or a directory of per-rank PyTorch traces");
  add_rank_option(cmd, opt.rank, " (default: all ranks, merged)");
  add_report_format_option(cmd, opt.format);
  cmd->add_option("-o,--output", opt.output, "'-' for stdout, or a base name: files BASE_<report>.<ext>");
  cmd->add_option("--timeunit", opt.timeunit, "ns, us, ms or s (default ns)");
  add_ncu_option(cmd, opt.ncu);
  cmd->add_option(
      "--filter-time", opt.filter_time,
      "[START]/[END]: keep events overlapping this window (ns, or with units ns/us/ms/s/m/h, summable: 1s200ms)");
  cmd->add_option("--filter-nvtx", opt.filter_nvtx,
                  "RANGE[@DOMAIN][/N]: keep events overlapping the N-th instance of an NVTX range");
  cmd->add_flag("--all-ranks", opt.all_ranks,
                "With --filter-nvtx: keep events of every process, not only the range's own");
}

Result<TraceFilter> parse_filter(const InputOptions& opt) {
  return ::tracedoc::parse_filter(opt.filter_time, opt.filter_nvtx, opt.all_ranks);
}

Result<Trace> read_trace(const std::string& path, int64_t rank, uint32_t tables) {
  InputOptions in;
  in.input = path;
  in.rank = rank;
  TRACEDOC_ASSIGN_OR_RETURN(auto loaded, load_input(in, tables));
  return std::move(loaded.trace);
}

Result<OutputSettings> output_settings(const InputOptions& opt) {
  OutputSettings out;
  out.format = isatty(STDOUT_FILENO) && opt.output == "-" ? OutputFormat::kColumn : OutputFormat::kCsv;
  if (!opt.format.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(auto f, parse_output_format(opt.format));
    out.format = f;
  }
  TRACEDOC_ASSIGN_OR_RETURN(auto unit, parse_time_unit(opt.timeunit));
  out.units.time = unit;
  out.output = opt.output;
  out.input = opt.input;
  return out;
}

Result<LoadedInput> load_input(const InputOptions& opt, uint32_t tables, const ColumnSelection& columns) {
  if (opt.input.empty()) return UsageError("an INPUT file is required");
  TRACEDOC_ASSIGN_OR_RETURN(OutputSettings out, output_settings(opt));

  TRACEDOC_ASSIGN_OR_RETURN(auto filter, parse_filter(opt));
  if (filter.nvtx) tables |= kLoadRanges;
  // Output file names carry the filter as nsys's do: _nvtx=<argument> (it overrides the time
  // window), else _start=<ns>_end=<ns>; --all-ranks, tracedoc's own, keeps its files apart.
  if (filter.nvtx) {
    out.filter_suffix = "_nvtx=" + filter.nvtx->argument + (filter.all_ranks ? "_all-ranks" : "");
  } else if (filter.window) {
    out.filter_suffix = fmt::format("_start={}_end={}", filter.window->start, filter.window->end);
  }

  OpenOptions open_options;
  open_options.nsys.tables = tables;
  // The filters and the Nsight Compute join read columns no report declares.
  if (!filter.window && !filter.nvtx && opt.ncu.empty()) open_options.nsys.columns = columns;
  open_options.rank = opt.rank;
  // TRACEDOC_TIMING=1 prints where the time goes on stderr.
  const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;
  const auto t_start = std::chrono::steady_clock::now();
  auto trace = open_trace(opt.input, open_options);
  if (timing) {
    std::fprintf(stderr, "timing: read %.3f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  }
  if (!trace.ok()) return trace.status();
  report_read_warnings(*trace);
  if (filter.window || filter.nvtx) {
    Status st = apply_filter(*trace, filter);
    if (!st.ok()) return st;
  }
  TRACEDOC_RETURN_IF_ERROR(attach_ncu_reports(*trace, opt.ncu));
  MemoryBudget::set_subject(opt.input);  // what the analyses of the trace read
  return LoadedInput{std::move(*trace), std::move(out)};
}

void add_ncu_option(CLI::App* cmd, std::vector<std::string>& into) {
  cmd->add_option("--ncu", into,
                  "Nsight Compute report (.ncu-rep, .ncu-repz, or ncu --csv) of the same program, joined to the "
                  "kernels (repeatable)")
      ->allow_extra_args(false);  // `--ncu R INPUT`: the input is not one more report
}

Status attach_ncu_reports(Trace& trace, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    TRACEDOC_ASSIGN_OR_RETURN(NcuReport report, read_ncu_input(path));
    report_ncu_warnings(report);
    trace.ncu_reports.push_back(std::make_shared<const NcuReport>(std::move(report)));
  }
  return Status::Ok();
}

int write_reports(std::vector<ReportJob>& jobs, const OutputSettings& settings) {
  const bool to_stdout = settings.output == "-";
  const bool human = settings.human();
  bool first = true;
  for (ReportJob& job : jobs) {
    WriterOptions wo;
    wo.format = settings.format;
    wo.units = settings.units;
    wo.report_name = job.name;
    wo.input_path = settings.input;
    // The heading (and advice) are printed here, so the writer prints none.
    if (to_stdout) {
      TextOut out(stdout);
      auto writer = make_writer(wo, out);
      // As nsys, a report without rows prints nothing (JSON still prints its empty document).
      DeferredSink deferred(*writer, [&] {
        if (!first && !human) out.put('\n');
        first = false;
        if (human) {
          print_heading(out, job);
          if (!job.advice.empty()) out.write(job.advice + "\n\n");
        }
      });
      RowSink& sink = settings.format == OutputFormat::kJson ? static_cast<RowSink&>(*writer) : deferred;
      Status st = job.produce(sink);
      if (st.ok() && human && !deferred.started() && !job.no_rows_message.empty()) {
        print_heading(out, job);
        out.write(job.no_rows_message + "\n");
      }
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
    const std::string path = fmt::format("{}_{}.{}", settings.output, job.file_stem, format_extension(settings.format));
    OutputFile file;
    Status st = file.open(path);
    if (!st.ok()) return fail(st);
    {
      TextOut out(file.file());
      auto writer = make_writer(wo, out);
      DeferredSink deferred(*writer, [&] {
        if (human) {
          print_heading(out, job);
          if (!job.advice.empty()) out.write(job.advice + "\n\n");
        }
      });
      st = job.produce(settings.format == OutputFormat::kJson ? static_cast<RowSink&>(*writer) : deferred);
      if (st.ok() && human && !deferred.started() && !job.no_rows_message.empty()) {
        print_heading(out, job);
        out.write(job.no_rows_message + "\n");
      }
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
  return kExitOk;
}

}  // namespace tracedoc::cli
