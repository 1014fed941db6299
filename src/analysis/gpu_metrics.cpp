#include "analysis/gpu_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "analysis/context.h"
#include "analysis/statistics.h"
#include "common/name_pattern.h"
#include "common/text.h"

namespace tracedoc {

size_t MetricSeries::first_after(TimeNs t) const {
  // A period ends at most `period` after its sample: samples at or before t - period end by t.
  return static_cast<size_t>(std::upper_bound(time.begin(), time.end(), t - period) - time.begin());
}

std::vector<MetricSeries> gpu_metric_series(const Trace& trace) {
  const GpuMetricTable& g = trace.gpu_metrics;
  std::vector<MetricSeries> out;
  std::unordered_map<uint64_t, size_t> index;  // (device, metric) -> series
  for (size_t i = 0; i < g.size(); ++i) {
    if (g.time[i] == kNoTime || g.value[i] == kNoValue || g.metric[i] == kNoStr) continue;
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(g.device[i])) << 32) | g.metric[i];
    auto [it, fresh] = index.try_emplace(key, out.size());
    if (fresh) out.push_back(MetricSeries{g.device[i], g.metric[i], metric_kind(trace.str(g.metric[i])), 0, {}, {}});
    MetricSeries& s = out[it->second];
    s.time.push_back(g.time[i]);
    s.value.push_back(g.value[i]);
  }
  for (MetricSeries& s : out) {
    if (!std::is_sorted(s.time.begin(), s.time.end())) {
      std::vector<size_t> order(s.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.time[a] < s.time[b]; });
      std::vector<TimeNs> time(s.size());
      std::vector<int64_t> value(s.size());
      for (size_t i = 0; i < order.size(); ++i) time[i] = s.time[order[i]], value[i] = s.value[order[i]];
      s.time = std::move(time), s.value = std::move(value);
    }
    std::vector<int64_t> gaps;
    gaps.reserve(s.size());
    for (size_t i = 1; i < s.size(); ++i) {
      if (s.time[i] > s.time[i - 1]) gaps.push_back(s.time[i] - s.time[i - 1]);
    }
    s.period = median_ns(std::move(gaps));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const MetricSeries& a, const MetricSeries& b) { return a.device < b.device; });
  return out;
}

namespace {}  // namespace

MetricKind metric_kind(std::string_view name) {
  const std::string n = lower(name);
  const auto starts = [&](std::string_view p) { return n.starts_with(p); };
  if (starts("sm active") || starts("sms active")) return MetricKind::kSmActive;
  if (starts("sm issue") || starts("sms issue")) return MetricKind::kSmIssue;
  if (starts("tensor active")) return MetricKind::kTensorActive;
  if (starts("compute warps in flight")) return MetricKind::kWarpsInFlight;
  if (starts("unallocated warps in active sm")) return MetricKind::kUnallocatedWarps;
  if (starts("dram read")) return MetricKind::kDramRead;
  if (starts("dram write")) return MetricKind::kDramWrite;
  if (starts("pcie rx throughput") || starts("pcie read throughput")) return MetricKind::kPcieRx;
  if (starts("pcie tx throughput") || starts("pcie write throughput")) return MetricKind::kPcieTx;
  return MetricKind::kOther;
}

std::string metric_unit(std::string_view name) {
  const size_t open = name.rfind('[');
  if (open != std::string_view::npos && name.back() == ']') {
    std::string_view unit = name.substr(open + 1, name.size() - open - 2);
    if (unit.ends_with('%')) return "%";
    return std::string(unit);
  }
  if (lower(name).find("frequency") != std::string::npos) return "Hz";
  return "%";
}

void MetricLevels::add_series(const MetricSeries& series) {
  for (size_t i = 0; i < series.size(); ++i) add(series.value[i], series.period_of(i).length());
}

void MetricLevels::add_series(const MetricSeries& series, Interval within) {
  for (size_t i = series.first_after(within.start); i < series.size() && series.time[i] < within.end; ++i) {
    const Interval p = series.period_of(i);
    add(series.value[i], std::min(p.end, within.end) - std::max(p.start, within.start));
  }
}

void MetricLevels::add_series(const MetricSeries& series, const IntervalSet& within) {
  for (const Interval& w : within.intervals()) add_series(series, w);
}

int64_t MetricLevels::covered() const {
  int64_t ns = 0;
  for (const auto& [v, w] : levels_) ns = sat_add(ns, w);
  return ns;
}

double MetricLevels::mean() const {
  long double sum = 0, ns = 0;
  for (const auto& [v, w] : levels_) {
    sum += static_cast<long double>(v) * static_cast<long double>(w);
    ns += static_cast<long double>(w);
  }
  return ns > 0 ? static_cast<double>(sum / ns) : 0;
}

int64_t MetricLevels::quantile(double fraction) { return weighted_quantile(levels_, fraction); }

int64_t MetricLevels::covered_below(int64_t value) const {
  int64_t ns = 0;
  for (const auto& [v, w] : levels_) ns = v < value ? sat_add(ns, w) : ns;
  return ns;
}

int64_t MetricLevels::max() const {
  int64_t m = 0;
  bool any = false;
  for (const auto& [v, w] : levels_) {
    if (!any || v > m) m = v;
    any = true;
  }
  return m;
}

double metric_mean_within(const std::vector<MetricSeries>& series, int32_t device, MetricKind kind,
                          const IntervalSet& within) {
  for (const MetricSeries& s : series) {
    if (s.device != device || s.kind != kind) continue;
    MetricLevels levels;
    levels.add_series(s, within);
    return levels.empty() ? -1 : levels.mean();
  }
  return -1;
}

namespace {

// The windows gpu_metrics_sum reports each GPU's metrics over.
struct GpuWindows {
  IntervalSet steps, kernels, copies, idle;
};

// `ctx` null: no step windows.
std::map<int32_t, GpuWindows> gpu_windows(const Trace& trace, AnalysisContext* ctx,
                                          const std::vector<MetricSeries>& series) {
  std::map<int32_t, std::vector<Interval>> kernels, copies, any;
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    kernels[k.device[i]].push_back({k.start[i], k.end[i]});
    any[k.device[i]].push_back({k.start[i], k.end[i]});
  }
  const MemcpyTable& m = trace.memcpys;
  for (size_t i = 0; i < m.size(); ++i) {
    copies[m.device[i]].push_back({m.start[i], m.end[i]});
    any[m.device[i]].push_back({m.start[i], m.end[i]});
  }
  const MemsetTable& ms = trace.memsets;
  for (size_t i = 0; i < ms.size(); ++i) any[ms.device[i]].push_back({ms.start[i], ms.end[i]});
  std::map<int32_t, GpuWindows> out;
  for (const MetricSeries& s : series) {
    auto [it, fresh] = out.try_emplace(s.device);
    if (!fresh) continue;
    GpuWindows& w = it->second;
    w.kernels = IntervalSet::busy_union(kernels[s.device]);
    w.copies = IntervalSet::busy_union(copies[s.device]);
    // Idle: the sampled span without any GPU work.
    TimeNs lo = kNoTime, hi = kNoTime;
    for (const MetricSeries& t : series) {
      if (t.device != s.device || t.size() == 0) continue;
      lo = lo == kNoTime ? t.time.front() : std::min(lo, t.time.front());
      hi = std::max(hi, t.period_of(t.size() - 1).end);
    }
    w.idle = IntervalSet::busy_union(any[s.device]).complement_within({lo, hi});
    if (ctx == nullptr) continue;
    std::vector<Interval> steps;
    for (const pytorch::GpuUnit& u : ctx->gpu_work().units) {
      if (u.device != s.device) continue;
      for (const Interval& x : ctx->windows_of(u.owner)) steps.push_back(x);
    }
    w.steps = IntervalSet::busy_union(std::move(steps));
  }
  return out;
}

Cell mean_cell(const MetricLevels& l) { return Cell::real(sqlite_round(l.mean(), 2)); }

// The columns every row of gpu_metrics_sum ends with, and their cells.
void add_figure_columns(std::vector<ColumnSpec>& columns) {
  for (ColumnSpec c : std::vector<ColumnSpec>{{"Time", Unit::kDurNs}, {"Mean"}, {"Median"}, {"P90"}, {"Max"}})
    columns.push_back(c);
}
void add_figure_cells(std::vector<Cell>& row, MetricLevels& l) {
  row.push_back(Cell::integer(l.covered()));
  row.push_back(mean_cell(l));
  row.push_back(Cell::integer(l.quantile(0.5)));
  row.push_back(Cell::integer(l.quantile(0.9)));
  row.push_back(Cell::integer(l.max()));
}

}  // namespace

std::vector<GpuMetricsDevice> gpu_metrics_by_device(const Trace& trace) {
  std::vector<GpuMetricsDevice> out;
  if (trace.gpu_metrics.size() == 0) return out;
  const std::vector<MetricSeries> series = gpu_metric_series(trace);
  const std::map<int32_t, GpuWindows> windows = gpu_windows(trace, nullptr, series);
  for (const MetricSeries& s : series) {
    if (out.empty() || out.back().device != s.device) {
      GpuMetricsDevice d;
      d.device = s.device;
      d.period_ns = s.period;
      const GpuWindows& w = windows.at(s.device);
      MetricLevels all, kernels, copies;
      all.add_series(s);
      kernels.add_series(s, w.kernels);
      copies.add_series(s, w.copies);
      d.samples = static_cast<int64_t>(s.size());
      d.sampled_ns = all.covered(), d.kernel_ns = kernels.covered(), d.copy_ns = copies.covered();
      out.push_back(d);
    }
    GpuMetricsDevice& d = out.back();
    const GpuWindows& w = windows.at(s.device);
    const auto mean_in = [&](const IntervalSet& set) {
      MetricLevels l;
      l.add_series(s, set);
      return l.empty() ? std::numeric_limits<double>::quiet_NaN() : l.mean();
    };
    switch (s.kind) {
      case MetricKind::kSmActive: {
        MetricLevels l;
        l.add_series(s, w.kernels);
        d.sm_active = l.empty() ? d.sm_active : l.mean();
        d.low_sm_active_ns = l.covered_below(50);
        break;
      }
      case MetricKind::kSmIssue: d.sm_issue = mean_in(w.kernels); break;
      case MetricKind::kTensorActive: d.tensor_active = mean_in(w.kernels); break;
      case MetricKind::kWarpsInFlight: d.warps_in_flight = mean_in(w.kernels); break;
      case MetricKind::kDramRead: d.dram_read = mean_in(w.kernels); break;
      case MetricKind::kDramWrite: d.dram_write = mean_in(w.kernels); break;
      case MetricKind::kPcieRx: d.pcie_rx = mean_in(w.copies); break;
      case MetricKind::kPcieTx: d.pcie_tx = mean_in(w.copies); break;
      default: break;
    }
  }
  return out;
}

Status gpu_metrics_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  constexpr std::string_view kReport = "gpu_metrics_sum";
  TRACEDOC_RETURN_IF_ERROR(check_report_args(kReport, args, {"detect", "nodetect"}, {"per", "metric", "marker"}));
  const std::string per = text_report_arg(args, "per").value_or("");
  if (!per.empty() && per != "step" && per != "kernel")
    return UsageError(fmt::format("{}: per must be step or kernel, got '{}'", kReport, per));
  std::optional<NamePattern> metric_pattern;
  if (const auto m = text_report_arg(args, "metric")) {
    TRACEDOC_ASSIGN_OR_RETURN(NamePattern p, NamePattern::compile(*m));
    metric_pattern = std::move(p);
  }
  TRACEDOC_ASSIGN_OR_RETURN(StepOptions step_options, step_options_from_args(args.args));
  if (trace.gpu_metrics.size() == 0)
    return no_data(trace, "does not contain GPU metrics (nsys profile --gpu-metrics-devices=all).");
  std::vector<MetricSeries> series = gpu_metric_series(trace);
  if (metric_pattern) {
    std::erase_if(series, [&](const MetricSeries& s) { return !metric_pattern->found_in(trace.str(s.metric)); });
  }
  AnalysisContext ctx(trace, step_options);
  std::map<StrId, std::string> units;  // the cells view them
  for (const MetricSeries& s : series) units.try_emplace(s.metric, metric_unit(trace.str(s.metric)));
  std::vector<Cell> row;
  const auto metric_cells = [&](const MetricSeries& s) {
    row.push_back(Cell::integer(s.device));
    row.push_back(Cell::pooled(trace.str(s.metric)));
    row.push_back(Cell::text(units.at(s.metric)));
  };
  std::vector<ColumnSpec> columns;
  if (per.empty()) {
    columns = {{"GPU"}, {"Metric"}, {"Unit"}, {"Window"}};
    add_figure_columns(columns);
    sink.begin(columns);
    const std::map<int32_t, GpuWindows> windows = gpu_windows(trace, &ctx, series);
    for (const MetricSeries& s : series) {
      const GpuWindows& w = windows.at(s.device);
      const std::pair<const char*, const IntervalSet*> kinds[] = {
          {"all", nullptr}, {"steps", &w.steps}, {"kernels", &w.kernels}, {"copies", &w.copies}, {"idle", &w.idle}};
      for (const auto& [name, set] : kinds) {
        MetricLevels l;
        if (set == nullptr) {
          l.add_series(s);
        } else {
          l.add_series(s, *set);
        }
        if (l.empty()) continue;
        row.clear();
        metric_cells(s);
        row.push_back(Cell::text(name));
        add_figure_cells(row, l);
        sink.row(row);
      }
    }
  } else if (per == "step") {
    if (ctx.steps() == nullptr)
      return no_data(trace, "has no steps (no ProfilerStep or marker range, nothing periodic).");
    columns = {{"PID"}, {"Step"}, {"GPU"}, {"Metric"}, {"Unit"}};
    add_figure_columns(columns);
    sink.begin(columns);
    std::map<int64_t, std::vector<int32_t>> devices_of;  // owner -> its GPUs
    for (const pytorch::GpuUnit& u : ctx.gpu_work().units) devices_of[u.owner].push_back(u.device);
    for (const auto& [owner, devices] : devices_of) {
      const std::vector<Interval>& windows = ctx.windows_of(owner);
      const std::vector<size_t>& steps = ctx.window_steps_of(owner);
      for (size_t k = 0; k < windows.size(); ++k) {
        const StepWindow& step = ctx.steps()->steps[steps[k]];
        for (const MetricSeries& s : series) {
          if (std::find(devices.begin(), devices.end(), s.device) == devices.end()) continue;
          MetricLevels l;
          l.add_series(s, windows[k]);
          if (l.empty()) continue;
          row = {Cell::integer(pid_of(step.global_pid)),
                 step.number == kNoValue ? Cell::null() : Cell::integer(step.number)};
          metric_cells(s);
          add_figure_cells(row, l);
          sink.row(row);
        }
      }
    }
  } else {
    columns = {{"Kernel"}, {"GPU"}, {"Metric"}, {"Unit"}, {"Instances"}};
    add_figure_columns(columns);
    sink.begin(columns);
    // Kernel names by total time, each with its executions per GPU.
    const KernelTable& k = trace.kernels;
    std::map<std::pair<StrId, int32_t>, std::vector<Interval>> runs;
    std::map<StrId, int64_t> total;
    for (size_t i = 0; i < k.size(); ++i) {
      if (!args.name_ok(trace.str(k.name[i]))) continue;
      runs[{k.name[i], k.device[i]}].push_back({k.start[i], k.end[i]});
      total[k.name[i]] = sat_add(total[k.name[i]], k.end[i] - k.start[i]);
    }
    std::vector<std::pair<std::pair<StrId, int32_t>, const std::vector<Interval>*>> order;
    for (const auto& [key, list] : runs) order.emplace_back(key, &list);
    std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
      const int64_t ta = total[a.first.first], tb = total[b.first.first];
      if (ta != tb) return ta > tb;
      return trace.str(a.first.first) != trace.str(b.first.first) ? trace.str(a.first.first) < trace.str(b.first.first)
                                                                  : a.first.second < b.first.second;
    });
    for (const auto& [key, list] : order) {
      for (const MetricSeries& s : series) {
        if (s.device != key.second) continue;
        MetricLevels l;
        for (const Interval& run : *list) l.add_series(s, run);
        if (l.empty()) continue;
        row = {Cell::pooled(trace.str(key.first))};
        metric_cells(s);
        row.push_back(Cell::integer(static_cast<int64_t>(list->size())));
        add_figure_cells(row, l);
        sink.row(row);
      }
    }
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
