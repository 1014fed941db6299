#include "view/view_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"
#include "analysis/trace_filter.h"
#include "common/task_pool.h"
#include "analysis/context.h"

namespace tracedoc::view {

namespace {

std::vector<KernelRow> top_kernels(const Trace& trace, size_t top, int64_t* total_ns) {
  std::unordered_map<StrId, std::vector<int64_t>> by_name;
  const KernelTable& k = trace.kernels;
  *total_ns = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.start[i] == kNoTime || k.end[i] == kNoTime) continue;
    const int64_t d = std::max<int64_t>(0, sat_sub(k.end[i], k.start[i]));
    by_name[k.name[i] != kNoStr ? k.name[i] : k.short_name[i]].push_back(d);
    *total_ns = sat_add(*total_ns, d);
  }
  std::vector<KernelRow> rows;
  rows.reserve(by_name.size());
  for (auto& [name, durations] : by_name) {
    KernelRow r;
    r.name = std::string(trace.str(name));
    r.count = static_cast<int64_t>(durations.size());
    for (int64_t d : durations) r.total_ns = sat_add(r.total_ns, d);
    r.max_ns = *std::max_element(durations.begin(), durations.end());
    r.median_ns = median_ns(std::move(durations));
    r.share = *total_ns > 0 ? static_cast<double>(r.total_ns) / static_cast<double>(*total_ns) : 0;
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (rows.size() > top) rows.resize(top);
  return rows;
}

// Each GPU's steps with their time split and the number of the step each window belongs to.
std::vector<StepBar> step_bars(AnalysisContext& ctx) {
  std::vector<StepBar> bars;
  const StepSet* steps = ctx.steps();
  if (steps == nullptr) return bars;
  for (const pytorch::GpuUnit& unit : ctx.gpu_work().units) {
    const std::vector<Interval>& windows = ctx.windows_of(unit.owner);
    if (windows.empty()) continue;
    const pytorch::TimeParts parts = pytorch::time_parts(unit);
    std::vector<const StepWindow*> own;
    for (const StepWindow& w : steps->steps) {
      if (ctx.owner_of(w.global_pid) == unit.owner) own.push_back(&w);
    }
    std::string label = ctx.unit_label(unit);
    for (size_t i = 0; i < windows.size(); ++i) {
      StepBar bar;
      bar.unit = label;
      bar.start = windows[i].start;
      bar.end = windows[i].end;
      bar.number = static_cast<int64_t>(i);
      // The window starts at its step's start, or later when the previous step's GPU work ran
      // past it: its step is the last one that started by then.
      const StepWindow* step = nullptr;
      for (const StepWindow* w : own) {
        if (w->start <= bar.start && (step == nullptr || w->start >= step->start)) step = w;
      }
      if (step != nullptr && step->number != kNoValue) bar.number = step->number;
      bar.parts = parts.within(std::span<const Interval>(&windows[i], 1));
      bars.push_back(std::move(bar));
    }
  }
  return bars;
}

// The group a GPU lane is drawn in: the process whose streams ran on that device and whose owner
// (rank or process) the lane belongs to; the first group when none matches.
uint32_t lane_group(const Timeline& tl, bool pytorch, int64_t owner, int32_t device, bool owner_is_pid) {
  for (const Track& t : tl.tracks) {
    if (t.kind != TrackKind::kGpuStream || t.device != device) continue;
    const int64_t o = owner_is_pid ? t.global_pid : pytorch::owner_of_id(pytorch, t.global_pid);
    if (o == owner) return t.group;
  }
  for (const Track& t : tl.tracks) {
    if (t.kind == TrackKind::kGpuStream && t.device == device) return t.group;
  }
  return 0;
}

// Everything but the summary: the diagnosis's analyses, the timeline and its levels of detail.
void build_timeline_part(const Trace& trace, const ViewOptions& options, ViewModel& vm) {
  AnalysisContext ctx(trace, options.diagnose.steps);
  const pytorch::GpuWork& work = ctx.gpu_work();
  std::vector<std::string> unit_labels;
  for (const pytorch::GpuUnit& u : work.units) unit_labels.push_back(ctx.unit_label(u));
  if (options.colors.uses_critical_path()) {
    std::vector<std::vector<Interval>> windows;
    for (const pytorch::GpuUnit& u : work.units) windows.push_back(ctx.windows_of(u.owner));
    vm.critical = critical_path(work, windows, trace.kernels.size(), trace.memcpys.size(), trace.memsets.size());
    vm.critical_computed = true;
  }
  vm.figures = ItemFigures(trace);
  vm.timeline =
      build_timeline(trace, vm.colors, vm.critical_computed ? &vm.critical : nullptr, vm.figures, options.timeline);
  vm.lod = build_lod(trace, vm.timeline, work, unit_labels, options.lod);
  vm.samples = build_sample_view(trace, vm.timeline, vm.lod, options.lod.max_samples);
  vm.view_start =
      options.lod.window_start != kNoTime ? sat_add(vm.timeline.start, options.lod.window_start) : vm.timeline.start;
  vm.view_end =
      options.lod.window_end != kNoTime ? sat_add(vm.timeline.start, options.lod.window_end) : vm.timeline.end;
  const bool pytorch = work.pytorch;
  for (UtilizationLane& u : vm.lod.utilization)
    u.group = lane_group(vm.timeline, pytorch, u.global_pid, u.device, false);
  for (MemoryLane& m : vm.lod.memory) m.group = lane_group(vm.timeline, pytorch, m.global_pid, m.device, true);
  // A GPU's counters belong to no one process: the first group with work on it shows them.
  for (MetricLane& m : vm.lod.metrics) m.group = lane_group(vm.timeline, pytorch, kNoValue, m.device, true);
  if (options.findings) vm.findings = diagnose::diagnose(ctx, options.diagnose).findings;
  if (const StepSet* steps = ctx.steps()) vm.step_source = step_source_name(steps->source);
  vm.steps = step_bars(ctx);
  vm.kernels = top_kernels(trace, options.top_kernels, &vm.kernel_total_ns);
}

}  // namespace

Result<ViewOptions> view_options(const ViewRequest& request) {
  if (request.max_events < 0) return UsageError("view: --max-events must be 0 or more");
  ViewOptions options;
  TRACEDOC_ASSIGN_OR_RETURN(options.colors, ColorScheme::load(request.colors));
  options.findings = request.findings;
  options.lod.max_events = request.max_events;
  if (!request.config.empty()) TRACEDOC_RETURN_IF_ERROR(diagnose::load_config(request.config, options.diagnose));
  if (!request.step_marker.empty()) options.diagnose.steps.marker = request.step_marker;
  if (!request.window.empty()) {
    auto w = parse_time_window(request.window);
    if (!w.ok()) return UsageError(fmt::format("view: --window {}: {}", request.window, w.status().message()));
    if (w->start != std::numeric_limits<int64_t>::min()) options.lod.window_start = w->start;
    if (w->end != std::numeric_limits<int64_t>::max()) options.lod.window_end = w->end;
  }
  return options;
}

ViewModel build_view(const Trace& trace, const ViewOptions& options) {
  ViewModel vm;
  vm.input = trace.source.path;
  vm.format = trace.source.format;
  vm.colors = options.colors;
  // The summary reads the trace on its own: it runs beside the rest on the task pool.
  SummaryOptions so;
  so.steps = options.diagnose.steps;
  parallel_invoke({[&] { vm.summary = summarize(trace, so); }, [&] { build_timeline_part(trace, options, vm); }});
  vm.producer = vm.summary.producer;
  return vm;
}

}  // namespace tracedoc::view
