// `tracedoc diff`: what changed between two recordings of the same program: kernels, operators,
// ranges and steps before and after, with a significance test so that run-to-run noise is not
// reported as change; where the step time went; which diagnose findings appeared or disappeared
// (src/compare/trace_diff.h, docs/diff.md).
//
//   tracedoc diff BASE NEW [-f column|csv|json|markdown] [-o FILE] [--alpha Q] [--min-change PCT]
//                 [--top N] [--all] [--step-marker NAME] [--rank N] [--no-findings] [--config FILE]
//                 [--fail-on-regression PCT] [--max-memory SIZE]
//
// BASE and NEW are files or rank directories of either format, mixed as well. Exit codes: 0 done,
// 1 --fail-on-regression was given and NEW is slower by more than that, 2 bad input or usage
// (nothing is written then).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "common/task_pool.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "compare/trace_diff.h"
#include "report/diff_writer.h"
#include "report/writers.h"

namespace tracedoc::cli {

namespace {

struct DiffCommandOptions {
  std::string base, next;
  std::string format = "column";
  std::string output = "-";
  double alpha = 0.05;
  double min_change = 5.0;
  size_t top = 10;
  bool all = false;
  std::string step_marker;
  int64_t rank = -1;
  bool no_findings = false;
  std::string config;
  std::optional<double> fail_on_regression;
};

int run_diff(const DiffCommandOptions& opt) {
  if (opt.base.empty() || opt.next.empty()) return fail(UsageError("diff: BASE and NEW are required"));
  compare::DiffOptions options;
  options.alpha = opt.alpha;
  options.min_change_pct = opt.min_change;
  options.findings = !opt.no_findings;
  if (!opt.config.empty()) {
    if (Status st = diagnose::load_config(opt.config, options.diagnose); !st.ok()) return fail(st);
  }
  options.steps = options.diagnose.steps;
  if (!opt.step_marker.empty()) options.steps.marker = opt.step_marker;
  if (Status st = compare::check_options(options); !st.ok()) return fail(st);

  // Both traces at once, on the task pool.
  std::optional<Result<Trace>> base, next_read;
  parallel_invoke({[&] { base.emplace(read_trace(opt.base, opt.rank)); },
                   [&] { next_read.emplace(read_trace(opt.next, opt.rank)); }});
  Result<Trace>& next = *next_read;
  if (!base->ok()) return fail(base->status());
  if (!next.ok()) return fail(next.status());

  const compare::TraceDiff d = compare::diff_traces(**base, *next, options);
  DiffTextOptions text_options;
  text_options.top = opt.top;
  text_options.all = opt.all;
  std::string text;
  if (opt.format == "json") {
    text = diff_json(d);
  } else if (opt.format == "markdown") {
    text = diff_markdown(d, text_options);
  } else if (opt.format == "csv") {
    text = render_rows(WriterOptions{}, [&](RowSink& sink) { diff_rows(d, sink); });
  } else {
    text = diff_text(d, text_options);
  }
  if (Status st = write_text(opt.output, text); !st.ok()) return fail(st);
  if (!opt.fail_on_regression) return kExitOk;
  const compare::Regression r = compare::regression_of(d);
  if (r.exceeds(*opt.fail_on_regression)) {
    std::fprintf(stderr, "tracedoc: diff: regression: %s %+.1f%%, more than the %g%% allowed\n", r.what.c_str(),
                 r.change_pct, *opt.fail_on_regression);
    return kExitFindings;
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_diff_command(CLI::App& app) {
  auto opt = std::make_shared<DiffCommandOptions>();
  CLI::App* cmd = app.add_subcommand("diff", "Before/after: what changed between two traces, with significance");
  cmd->add_option("base", opt->base, "The trace before: nsys export, PyTorch trace or rank directory");
  cmd->add_option("new", opt->next, "The trace after (either format)");
  add_format_option(cmd, opt->format, {{"column", ""}, {"csv", ""}, {"json", "schema_version 1"}, {"markdown", ""}},
                    {"text"});
  add_output_file_option(cmd, opt->output);
  cmd->add_option("--alpha", opt->alpha, "Significance level of the adjusted p-values (default 0.05)");
  cmd->add_option("--min-change", opt->min_change,
                  "Smallest change of a median or per-step count that counts, in % (default 5)");
  cmd->add_option("--top", opt->top, "Changed items listed per kind in column and markdown output (default 10)");
  cmd->add_flag("--all", opt->all, "List every item, the unchanged ones too (column, markdown)");
  add_step_marker_option(cmd, opt->step_marker);
  add_rank_option(cmd, opt->rank, " (of both traces)");
  cmd->add_flag("--no-findings", opt->no_findings, "Do not run diagnose on the two traces");
  cmd->add_option("--config", opt->config, "diagnose's TOML configuration, for the findings and the [steps] marker");
  cmd->add_option("--fail-on-regression", opt->fail_on_regression,
                  "Exit 1 when the median step time got significantly slower by more than this %")
      ->check(number_from_to(0, 1e6));
  return [opt] { return run_diff(*opt); };
}

}  // namespace tracedoc::cli
