// `tracedoc view`: an interactive timeline and report in one self-contained HTML file, or a static
// SVG picture of a time window.
//
//   tracedoc view INPUT... -o OUT [-f html|svg] [--svg] [--colors critical|default|FILE]
//                 [--window START/END] [--max-events N] [--width PX] [--rank N] [--no-findings]
//                 [--config FILE] [--step-marker NAME] [--max-memory SIZE]
//   tracedoc view INPUT --flame all|gpu-idle|steps|step#N|RANGE -o OUT.svg [--width PX]
//
// --window takes times from the start of the timeline (what the page's axis shows), in nsys's
// --filter-time syntax ("1.2s/1.3s", "120ms/", "/5ms"). With several inputs, -o is a directory
// and each input gets its own page named after it. Every output is written whole or not at all.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/cpu_samples.h"
#include "analysis/trace_filter.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/html_view_writer.h"
#include "report/svg_flame_writer.h"
#include "report/svg_timeline_writer.h"
#include "view/view_model.h"

namespace tracedoc::cli {

namespace {

struct ViewCommandOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string format = "html";
  bool svg = false;
  std::string colors = "default";
  std::string window;
  int64_t max_events = 500'000;
  int width = 1600;
  int64_t rank = -1;
  bool no_findings = false;
  std::string config, step_marker;
  std::vector<std::string> ncu;
  std::string flame;  // a flame graph of the CPU samples instead of the timeline: which samples
};

// The flame graph of one input's CPU samples (report/svg_flame_writer.h).
Status write_flame(const Trace& trace, const std::string& input, const ViewCommandOptions& opt,
                   const std::string& output) {
  if (trace.cpu_samples.size() == 0)
    return BadInput(fmt::format("{}: no CPU samples to draw (nsys profile --sample=cpu)", input));
  ReportArgs args;
  if (opt.flame != "all") args.args = {"during=" + opt.flame};
  auto keep = samples_during("view --flame", trace, args);
  if (!keep.ok()) {
    if (keep.status().code() == ErrorCode::kNoData) return BadInput(std::string(keep.status().message()));
    return keep.status();
  }
  const SampleTree tree = sample_tree(trace, {-1, *keep ? &**keep : nullptr}, false);
  FlameOptions flame;
  flame.width = opt.width;
  const std::string when = opt.flame == "all"        ? "every sample"
                           : opt.flame == "gpu-idle" ? "the launching threads while their GPUs idled"
                           : opt.flame == "steps"    ? "inside the steps"
                                                     : "during " + opt.flame;
  flame.title = fmt::format("CPU samples of {}: {}", std::filesystem::path(input).filename().string(), when);
  return write_text(output, render_flame_svg(trace, tree, flame));
}

std::string output_for(const ViewCommandOptions& opt, const std::string& input, const std::string& ext) {
  if (opt.inputs.size() == 1) return opt.output;
  std::filesystem::path in(input);
  std::string stem = in.filename().string();
  if (stem.empty()) stem = in.parent_path().filename().string();
  for (const char* suffix : {".gz", ".json", ".sqlite", ".nsys-rep"}) {
    if (stem.size() > std::strlen(suffix) && stem.ends_with(suffix)) stem.resize(stem.size() - std::strlen(suffix));
  }
  return (std::filesystem::path(opt.output) / (stem + "." + ext)).string();
}

int run_view(ViewCommandOptions opt) {
  if (opt.svg) opt.format = "svg";
  if (!opt.flame.empty()) {
    if (opt.format != "svg" && opt.format != "html") return fail(UsageError("view: --flame draws an SVG picture"));
    if (!opt.window.empty())
      return fail(UsageError("view: --flame takes its samples from its own argument (steps, step#N, a range name)"));
    opt.format = "svg";
  }
  if (opt.inputs.empty()) return fail(UsageError("view: at least one INPUT is required"));
  if (opt.output.empty() || opt.output == "-")
    return fail(UsageError("view: -o OUT is required (the page is written whole or not at all)"));
  if (opt.width < 400 || opt.width > 20000)
    return fail(UsageError("view: --width must be between 400 and 20000 pixels"));
  if (opt.inputs.size() > 1) {
    std::error_code ec;
    std::filesystem::create_directories(opt.output, ec);
    if (ec || !std::filesystem::is_directory(opt.output, ec)) {
      return fail(UsageError(fmt::format("view: {}: with several inputs -o must be a directory ({})", opt.output,
                                         ec ? ec.message() : "not a directory")));
    }
  }
  view::ViewRequest request;
  request.colors = opt.colors, request.window = opt.window, request.max_events = opt.max_events;
  request.findings = !opt.no_findings, request.config = opt.config, request.step_marker = opt.step_marker;
  auto built = view::view_options(request);
  if (!built.ok()) return fail(built.status());
  const view::ViewOptions& options = *built;
  for (const std::string& input : opt.inputs) {
    std::error_code ec;
    const std::string output = output_for(opt, input, opt.format);
    if (std::filesystem::equivalent(input, output, ec))
      return fail(UsageError(fmt::format("view: {}: the output would replace the input", output)));
    auto trace = read_trace(input, opt.rank, kLoadAll);  // prints its own timing
    if (!trace.ok()) return fail(trace.status());
    if (!opt.flame.empty()) {
      if (Status st = write_flame(*trace, input, opt, output); !st.ok()) return fail(st);
      continue;
    }
    if (Status st = attach_ncu_reports(*trace, opt.ncu); !st.ok()) return fail(st);
    // TRACEDOC_TIMING=1 prints where the time goes on stderr.
    const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;
    auto lap = [timing, began = std::chrono::steady_clock::now()](const char* what) mutable {
      if (!timing) return;
      const auto now = std::chrono::steady_clock::now();
      std::fprintf(stderr, "timing: %s %.3f s\n", what, std::chrono::duration<double>(now - began).count());
      began = now;
    };
    const view::ViewModel vm = view::build_view(*trace, options);
    lap("timeline, levels of detail, panels");
    if (opt.format == "svg") {
      SvgOptions svg;
      if (options.lod.window_start != kNoTime) svg.start = sat_add(vm.timeline.start, options.lod.window_start);
      if (options.lod.window_end != kNoTime) svg.end = sat_add(vm.timeline.start, options.lod.window_end);
      svg.width = opt.width;
      if (Status st = write_text(output, render_timeline_svg(vm, svg)); !st.ok()) return fail(st);
      continue;
    }
    if (!vm.lod.raw.complete) {
      std::fprintf(stderr,
                   "tracedoc: view: %s: %lld of %lld events embedded exactly (--max-events %lld); the rest is drawn "
                   "aggregated\n",
                   input.c_str(), static_cast<long long>(vm.lod.raw.events), static_cast<long long>(vm.timeline.events),
                   static_cast<long long>(opt.max_events));
    }
    const std::string page = render_view_html(*trace, vm);
    lap("page");
    if (Status st = write_text(output, page); !st.ok()) return fail(st);
    lap("write");
  }
  return kExitOk;
}

}  // namespace

std::function<int()> add_view_command(CLI::App& app) {
  auto opt = std::make_shared<ViewCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "view", "Write an interactive timeline and report as one self-contained HTML file (or an SVG picture)");
  cmd->add_option("inputs", opt->inputs, "Traces: nsys exports, PyTorch traces or rank directories (one page each)");
  cmd->add_option("-o,--output", opt->output,
                  "Output file (a directory with several inputs), written whole or not at all")
      ->required();
  add_format_option(cmd, opt->format, {{"html", ""}, {"svg", ""}});
  cmd->add_flag("--svg", opt->svg, "The same as -f svg: a static picture of the timeline (of --window when given)");
  cmd->add_option("--colors", opt->colors,
                  "Colour scheme: critical, roofline (kernels by their Nsight Compute bound), peak (operators and "
                  "their kernels by their share of the roof, from recorded shapes), default, or a TOML / "
                  "ColorPreferences XML file");
  cmd->add_option("--window", opt->window,
                  "START/END from the timeline's start (1.2s/1.3s): the exact events embedded, the SVG's window");
  cmd->add_option("--max-events", opt->max_events,
                  "Events embedded exactly (default 500000); the rest is drawn from aggregated levels of detail");
  cmd->add_option("--width", opt->width, "SVG width in pixels (default 1600)");
  add_rank_option(cmd, opt->rank, " (default: all ranks, merged)");
  cmd->add_flag("--no-findings", opt->no_findings, "Leave out the diagnose findings");
  cmd->add_option("--config", opt->config, "diagnose's TOML configuration for the findings");
  add_step_marker_option(cmd, opt->step_marker, "Steps are these ranges (NAME* for a prefix)");
  add_ncu_option(cmd, opt->ncu);
  cmd->add_option("--flame", opt->flame,
                  "A flame graph of the CPU samples instead of the timeline (SVG): all, gpu-idle (the launching "
                  "threads while their GPUs idle), steps, step#N, or a range name (NAME, NAME*)");
  return [opt] { return run_view(*opt); };
}

}  // namespace tracedoc::cli
