// `tracedoc ncu`: an Nsight Compute report (.ncu-rep, .ncu-repz) read natively, one row per profiled
// launch with what its metrics answer (occupancy and its limiter, coalescing, bank conflicts, stall
// reasons, throughput, roofline), then ncu's own rule messages; with --metrics or --all, the
// metrics as ncu stored them.
//
//   tracedoc ncu REPORT [-f column|table|csv|tsv|json] [-o BASE] [--kernel REGEX]
//                       [--metrics NAME,...|--all]
#include <memory>
#include <string>
#include <vector>

#include "analysis/ncu_reports.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "ingest/ncu_csv_reader.h"

namespace tracedoc::cli {

namespace {

struct NcuCommandOptions {
  InputOptions in;
  std::string kernel;
  std::vector<std::string> metrics;
  bool all = false;
};

int run_ncu(const NcuCommandOptions& opt) {
  if (opt.in.input.empty()) return fail(UsageError("ncu: a REPORT (.ncu-rep or .ncu-repz) is required"));
  auto settings = output_settings(opt.in);
  if (!settings.ok()) return fail(settings.status());
  NcuRowOptions rows;
  if (!opt.kernel.empty()) {
    auto pattern = NamePattern::compile(opt.kernel);
    if (!pattern.ok()) return fail(UsageError("ncu: --kernel: " + pattern.status().message()));
    rows.kernel = std::move(pattern).value();
  }
  rows.metrics = split_list(opt.metrics, ',');
  rows.all_metrics = opt.all;
  if (rows.all_metrics && !rows.metrics.empty()) return fail(UsageError("ncu: --metrics and --all exclude each other"));

  auto report = read_ncu_input(opt.in.input);
  if (!report.ok()) return fail(report.status());
  report_ncu_warnings(*report);
  const NcuReport& r = *report;
  std::vector<ReportJob> jobs;
  auto job = [&](const char* name, const char* display,
                 Status (*produce)(const NcuReport&, const NcuRowOptions&, RowSink&)) {
    ReportJob& j = jobs.emplace_back();
    j.name = j.file_stem = name;
    j.display_name = display;
    j.produce = [&r, &rows, produce](RowSink& sink) { return produce(r, rows, sink); };
  };
  job("ncu_kernels", "Nsight Compute: Profiled Launches", ncu_kernel_rows);
  job("ncu_rules", "Nsight Compute: Rule Results", ncu_rule_rows);
  if (rows.all_metrics || !rows.metrics.empty()) job("ncu_metrics", "Nsight Compute: Metrics", ncu_metric_rows);
  return write_reports(jobs, *settings);
}

}  // namespace

std::function<int()> add_ncu_command(CLI::App& app) {
  auto opt = std::make_shared<NcuCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "ncu",
      "Nsight Compute report: per launch, occupancy and its limiter, coalescing, bank conflicts, stalls, "
      "throughput and roofline, then ncu's rule messages");
  cmd->add_option("input", opt->in.input,
                  "Nsight Compute report (.ncu-rep, or .ncu-repz compressed with zstd), or its CSV export (ncu --csv)");
  add_report_format_option(cmd, opt->in.format);
  cmd->add_option("-o,--output", opt->in.output, "'-' for stdout, or a base name: files BASE_ncu_<table>.<ext>");
  cmd->add_option("--kernel", opt->kernel, "Only the launches whose kernel name this regular expression finds");
  cmd->add_option("--metrics", opt->metrics, "Also list these metrics of every launch, as stored (comma-separated)")
      ->allow_extra_args(false);  // `--metrics a,b REPORT`: the report is not one more metric
  cmd->add_flag("--all", opt->all, "Also list every metric of every launch, as stored");
  return [opt] { return run_ncu(*opt); };
}

}  // namespace tracedoc::cli
