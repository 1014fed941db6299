// `tracedoc export`: writes a trace in another format: an Nsight Systems SQLite export, so that a
// PyTorch profiler trace can be opened by `nsys stats`, `nsys analyze` and SQL written for nsys
// exports; or a PyTorch profiler (Kineto) Chrome trace, so that an nsys export opens in Perfetto,
// chrome://tracing and the PyTorch tools (kineto_json_writer.h), with the findings of `diagnose` as
// annotations above the timeline.
//
//   tracedoc export INPUT --to sqlite|chrome -o OUT [--rank N] [--no-findings] [--config FILE]
//                   [--step-marker NAME] [--max-memory SIZE]
//
// The output is written whole or not at all (temporary file + rename); a bad input leaves no file.
// Times of a PyTorch trace are written relative to a session start (nsys_sqlite_writer.h says how).
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "diagnose/engine.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/kineto_json_writer.h"
#include "report/nsys_sqlite_writer.h"

namespace tracedoc::cli {

namespace {

struct ExportOptions {
  std::string input;
  std::string to;
  std::string output;
  int64_t rank = -1;
  bool no_findings = false;
  std::string config, step_marker;
};

int run_export(const ExportOptions& opt) {
  if (opt.to != "sqlite" && opt.to != "chrome") {
    return fail(UsageError(fmt::format("export: unknown target '{}' (sqlite or chrome)", opt.to)));
  }
  if (opt.output.empty() || opt.output == "-") {
    return fail(UsageError("export: -o OUT is required (the output is written whole or not at all, not to stdout)"));
  }
  if (opt.input.empty()) return fail(UsageError("export: an INPUT file is required"));
  // The input is never modified, not even by naming it as the output.
  std::error_code ec;
  if (std::filesystem::equivalent(opt.input, opt.output, ec)) {
    return fail(UsageError(fmt::format("export: {}: the output would replace the input", opt.output)));
  }
  const bool annotate = opt.to == "chrome" && !opt.no_findings;
  if (!annotate && (!opt.config.empty() || !opt.step_marker.empty())) {
    return fail(UsageError("export: --config and --step-marker set up the findings of --to chrome"));
  }
  diagnose::DiagnoseOptions options;
  if (!opt.config.empty()) {
    if (Status st = diagnose::load_config(opt.config, options); !st.ok()) return fail(st);
  }
  if (!opt.step_marker.empty()) options.steps.marker = opt.step_marker;
  auto trace = read_trace(opt.input, opt.rank, kLoadAll);
  if (!trace.ok()) return fail(trace.status());
  std::vector<diagnose::Finding> findings;
  if (annotate) findings = diagnose::diagnose(*trace, options).findings;
  Status st =
      opt.to == "sqlite" ? write_nsys_sqlite(*trace, opt.output) : write_kineto_json(*trace, opt.output, findings);
  if (!st.ok()) return fail(st);
  return kExitOk;
}

}  // namespace

std::function<int()> add_export_command(CLI::App& app) {
  auto opt = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a trace as an Nsight Systems SQLite export or a PyTorch profiler Chrome trace");
  cmd->add_option("input", opt->input,
                  "Nsight Systems export or report, PyTorch profiler trace (.json, .json.gz) or a directory of "
                  "per-rank PyTorch traces");
  cmd->add_option("--to", opt->to,
                  "Output format: sqlite (an nsys export) or chrome (a PyTorch profiler / Chrome trace JSON)")
      ->required();
  add_output_file_option(cmd, opt->output, true);
  add_rank_option(cmd, opt->rank, " (default: all ranks, merged)");
  cmd->add_flag("--no-findings", opt->no_findings,
                "--to chrome: leave out the diagnose findings (written as annotations by default)");
  cmd->add_option("--config", opt->config, "--to chrome: diagnose's TOML configuration for the findings");
  add_step_marker_option(cmd, opt->step_marker,
                         "--to chrome: steps of the findings are these ranges (NAME* for a prefix)");
  return [opt] { return run_export(*opt); };
}

}  // namespace tracedoc::cli
