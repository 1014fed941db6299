// `tracedoc check`: a CI gate. Holds the figures of a trace against a budget file (step time, GPU
// busy share, copies, memory, kernel time, forbidden findings, regression against a baseline trace;
// src/budget/budget.h, docs/check.md).
//
//   tracedoc check INPUT --budget FILE [-f column|json|markdown] [-o FILE] [--baseline PATH]
//                  [--rank N] [--step-marker NAME]
//
// Exit codes: 0 every check passed (or the budget sets none), 1 a check failed, 2 bad input, bad
// budget or usage (nothing is written then).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "budget/budget.h"
#include "budget/evaluate.h"
#include "budget/measures.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "report/check_writer.h"

namespace tracedoc::cli {

namespace {

struct CheckCommandOptions {
  std::string input;
  std::string budget;
  std::string baseline;
  std::string format = "column";
  std::string output = "-";
  std::string step_marker;
  int64_t rank = -1;
};

int run_check(const CheckCommandOptions& opt) {
  if (opt.input.empty()) return fail(UsageError("check: INPUT is required"));
  if (opt.budget.empty()) return fail(UsageError("check: --budget FILE is required"));
  auto loaded_budget = budget::load_budget(opt.budget);
  if (!loaded_budget.ok()) return fail(loaded_budget.status());
  budget::Budget& b = *loaded_budget;
  if (!opt.step_marker.empty()) b.step_marker = opt.step_marker;
  const auto base_path = budget::baseline_trace_path(b, opt.baseline, "--baseline");
  if (!base_path.ok()) return fail(base_path.status());

  auto trace = read_trace(opt.input, opt.rank);
  if (!trace.ok()) return fail(trace.status());
  const budget::Measures current = budget::measure(*trace, b);
  std::optional<budget::Measures> base;
  if (!base_path->empty()) {
    auto base_trace = read_trace(*base_path, opt.rank);
    if (!base_trace.ok()) return fail(base_trace.status());
    base = budget::measure(*base_trace, b, budget::MeasureScope::kBaseline);
  }
  const budget::CheckReport report = budget::evaluate(b, current, base ? &*base : nullptr);

  std::string text;
  if (opt.format == "json") {
    text = check_json(report);
  } else if (opt.format == "markdown") {
    text = check_markdown(report);
  } else {
    text = check_text(report);
  }
  if (Status st = write_text(opt.output, text); !st.ok()) return fail(st);
  return report.failed() == 0 ? kExitOk : kExitFindings;
}

}  // namespace

std::function<int()> add_check_command(CLI::App& app) {
  auto opt = std::make_shared<CheckCommandOptions>();
  CLI::App* cmd = app.add_subcommand("check", "CI gate: hold a trace against a budget file; exit 1 when a check fails");
  cmd->add_option("input", opt->input, "Trace: nsys export, PyTorch trace or rank directory");
  cmd->add_option("--budget", opt->budget,
                  "TOML budget file: [steps], [gpu], [copies], [memory], [[kernel]], [findings], [baseline]");
  cmd->add_option("--baseline", opt->baseline,
                  "Baseline trace for the [baseline] limits (instead of the budget's baseline.path)");
  add_format_option(cmd, opt->format, {{"column", ""}, {"json", "schema_version 1"}, {"markdown", ""}}, {"text"});
  add_output_file_option(cmd, opt->output);
  add_step_marker_option(cmd, opt->step_marker);
  add_rank_option(cmd, opt->rank, " (of the baseline too)");
  return [opt] { return run_check(*opt); };
}

}  // namespace tracedoc::cli
