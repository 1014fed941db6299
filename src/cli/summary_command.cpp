// `tracedoc summary`: a one-screen overview of one or more traces (devices, span, GPU busy %, top
// kernels, copies, API calls, steps, host-blocking calls), or every figure as JSON.
//
//   tracedoc summary [-f text|json] [-o FILE] [--top N] [--gap MS] [--step-marker NAME] INPUT...
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/summary.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/summary_writer.h"

namespace tracedoc::cli {

namespace {

struct SummaryCommandOptions {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string output = "-";
  std::vector<std::string> ncu;
  std::string step_marker;
  int64_t rank = -1;
  size_t top = 5;
  double gap_ms = 1.0;
};

int run_summary(const SummaryCommandOptions& opt) {
  if (opt.inputs.empty()) return fail(UsageError("summary: at least one INPUT is required"));
  const auto gap = gap_threshold_from_ms(opt.gap_ms);
  if (!gap.ok()) return fail(UsageError("summary: --gap: " + gap.status().message()));
  SummaryOptions options;
  options.top = opt.top;
  options.gap_threshold_ns = *gap;
  if (!opt.step_marker.empty()) options.steps.marker = opt.step_marker;

  std::vector<TraceSummary> summaries;
  for (const auto& input : opt.inputs) {
    InputOptions in;
    in.input = input;
    in.rank = opt.rank;
    in.ncu = opt.ncu;
    // Every table a summary reads: the GPU work and graph launches, API calls, ranges (steps,
    // markers), GPU memory, CPU thread switches and OS runtime calls.
    auto loaded = load_input(in, kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadApi | kLoadRanges | kLoadMemory |
                                     kLoadCpuSched | kLoadOsCalls | kLoadGraphsAndEvents | kLoadGpuMetrics);
    if (!loaded.ok()) return fail(loaded.status());
    summaries.push_back(summarize(loaded->trace, options));
  }

  std::string text;
  if (opt.format == "json") {
    text = summary_json(summaries);
  } else {
    for (size_t i = 0; i < summaries.size(); ++i) text += (i ? "\n" : "") + summary_text(summaries[i]);
  }
  const Status st = write_text(opt.output, text);
  return st.ok() ? kExitOk : fail(st);
}

}  // namespace

std::function<int()> add_summary_command(CLI::App& app) {
  auto opt = std::make_shared<SummaryCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "summary", "One-screen overview: GPUs and how busy they were, top kernels, copies, API calls, steps");
  cmd->add_option("inputs", opt->inputs,
                  "Traces: nsys exports, PyTorch traces or rank directories (one overview each)");
  add_format_option(cmd, opt->format, {{"text", ""}, {"json", "every figure, exact ns and bytes"}}, {"column"});
  add_output_file_option(cmd, opt->output);
  cmd->add_option("--top", opt->top, "Rows in the top kernel and API lists (default 5)");
  cmd->add_option("--gap", opt->gap_ms, "Count GPU idle gaps longer than this many ms (default 1)");
  add_step_marker_option(cmd, opt->step_marker);
  add_ncu_option(cmd, opt->ncu);
  add_rank_option(cmd, opt->rank);
  return [opt] { return run_summary(*opt); };
}

}  // namespace tracedoc::cli
