// Everything `tracedoc view` draws, computed from one trace: the coloured timeline with its levels
// of detail (timeline.h, lod.h), the GPU critical path the `critical` colours use, and the report
// panels beside it: CPU samples (sample_view.h), summary figures, diagnose findings, the top kernels, each step's time
// split into compute / communication / copies / other / idle, and GPU memory. report/html_view_writer and
// report/svg_timeline_writer render it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/critical_path.h"
#include "analysis/summary.h"
#include "diagnose/engine.h"
#include "model/trace.h"
#include "view/color_scheme.h"
#include "view/lod.h"
#include "view/sample_view.h"
#include "view/timeline.h"

namespace tracedoc::view {

struct StepBar {
  std::string unit;                // the GPU it was measured on ("rank 0 GPU 0")
  int64_t number = 0;              // ProfilerStep#N's N, or the step's index
  TimeNs start = 0, end = 0;       // the step window (stretched to its GPU work)
  std::array<int64_t, 5> parts{};  // pytorch::kTimePartNames order
};

struct KernelRow {
  std::string name;
  int64_t count = 0, total_ns = 0, median_ns = 0, max_ns = 0;
  double share = 0;  // of all kernel time
};

struct ViewOptions {
  ColorScheme colors = ColorScheme::defaults();
  LodOptions lod;
  TimelineOptions timeline;
  diagnose::DiagnoseOptions diagnose;
  bool findings = true;
  size_t top_kernels = 15;
};

struct ViewModel {
  std::string input, format, producer;
  ColorScheme colors;
  ItemFigures figures;  // the kernels' ncu answers and the operators' FLOPs, for colours and hovers
  Timeline timeline;
  Lod lod;
  SampleView samples;                   // CPU samples: lanes under the threads, stacks for the flame graph
  TimeNs view_start = 0, view_end = 0;  // what the page opens on: --window, else the whole run
  CriticalPath critical;                // empty flags when the scheme does not use it
  bool critical_computed = false;
  TraceSummary summary;
  std::vector<diagnose::Finding> findings;
  std::string step_source;  // "ProfilerStep", "marker", "detected", "" without steps
  std::vector<StepBar> steps;
  std::vector<KernelRow> kernels;  // by total time, the top ones
  int64_t kernel_total_ns = 0;
};

// What a user asks of the page, as `tracedoc view` and the Python package's Trace.view take it.
struct ViewRequest {
  std::string colors = "default";  // critical, default, or a colour scheme file (TOML or XML)
  std::string window;              // "[START]/[END]" from the timeline's start (--filter-time's syntax)
  int64_t max_events = 500'000;    // raw events embedded exactly; the rest is drawn aggregated
  bool findings = true;
  std::string config;       // diagnose configuration file (TOML), or empty
  std::string step_marker;  // the range that marks a step, or empty
};

// The options of a request; errors name the option (`view: --window ...`) as the CLI prints them.
Result<ViewOptions> view_options(const ViewRequest& request);

ViewModel build_view(const Trace& trace, const ViewOptions& options);

}  // namespace tracedoc::view
