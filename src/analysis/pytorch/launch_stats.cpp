#include "analysis/pytorch/launch_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/intervals.h"
#include "analysis/statistics.h"
#include "common/text.h"

namespace tracedoc::pytorch {

namespace {

bool is_gpu_api(std::string_view n) { return n.starts_with("cu") || n.starts_with("hip"); }

bool is_kernel_launch(std::string_view n) {
  return is_gpu_api(n) && contains(n, "Launch") && contains(n, "Kernel") && !contains(n, "Graph");
}

bool is_async_memory_op(std::string_view n) {
  return is_gpu_api(n) && (contains(n, "Memcpy") || contains(n, "Memset")) &&
         (contains(n, "Async") || n == "hipMemcpyWithStream");
}

// HTA 0.5.0: cuda_kernel_analysis.py (launch stats) and trace_symbol_table.py
// get_runtime_launch_events_query (queue length). MTIA's launch name is kept for completeness.
constexpr std::string_view kHtaLaunch[] = {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                           "runFunction - job_prep_and_submit_for_execution"};
constexpr std::string_view kHtaLaunchMemory[] = {"cudaMemcpyAsync", "cudaMemsetAsync"};
constexpr std::string_view kHtaQueue[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC",      "cuLaunchKernel",
    "cudaMemcpyAsync",  "cudaMemsetAsync",          "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel",  "hipExtModuleLaunchKernel", "hipMemsetAsync",
    "hipMemcpyAsync",   "hipMemcpyWithStream"};

template <size_t N>
bool one_of(std::string_view n, const std::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), n) != std::end(list);
}

}  // namespace

Describe describe(std::vector<int64_t> values) {
  Describe d;
  d.count = static_cast<int64_t>(values.size());
  if (values.empty()) {
    d.mean = d.std = d.q1 = d.median = d.q3 = std::numeric_limits<double>::quiet_NaN();
    return d;
  }
  // pandas: mean = float sum / n; variance = sum of squared deviations from it / (n - 1).
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  d.mean = sum / static_cast<double>(values.size());
  if (values.size() < 2) {
    d.std = std::numeric_limits<double>::quiet_NaN();
  } else {
    double sq = 0;
    for (int64_t v : values) sq += (static_cast<double>(v) - d.mean) * (static_cast<double>(v) - d.mean);
    d.std = std::sqrt(sq / static_cast<double>(values.size() - 1));
  }
  std::sort(values.begin(), values.end());
  d.min = values.front();
  d.max = values.back();
  d.q1 = quantile_of_sorted(values, 0.25);
  d.median = quantile_of_sorted(values, 0.5);
  d.q3 = quantile_of_sorted(values, 0.75);
  return d;
}

bool is_launch_call(std::string_view name, LaunchNames names, bool include_memory) {
  const std::string_view n = api_base_name(name);
  if (names == LaunchNames::kHta050) return one_of(n, kHtaLaunch) || (include_memory && one_of(n, kHtaLaunchMemory));
  return is_kernel_launch(n) || (include_memory && is_async_memory_op(n));
}

bool is_queue_call(std::string_view name, LaunchNames names) {
  return names == LaunchNames::kTracedoc || one_of(api_base_name(name), kHtaQueue);
}

LaunchStats kernel_launch_stats(const Trace& trace, const GpuUnit& unit, const LaunchStatsOptions& options) {
  LaunchStats s;
  std::vector<int64_t> delays;
  // Names repeat: decide once per string id.
  std::vector<int8_t> decided(trace.strings.size(), -1);
  for (const GpuWorkItem& it : unit.items) {
    if (it.kind == WorkKind::kSync || it.launch < 0) continue;
    const StrId name = trace.api.name[it.launch];
    if (name == kNoStr || name >= decided.size()) continue;
    if (decided[name] < 0)
      decided[name] = is_launch_call(trace.str(name), options.names, options.include_memory) ? 1 : 0;
    if (!decided[name]) continue;
    const int64_t cpu = sat_sub(it.launch_end, it.launch_start);
    const int64_t gpu = sat_sub(it.end, it.start);
    const int64_t delay = std::max<int64_t>(0, sat_sub(it.start, it.launch_end));
    ++s.launches;
    s.cpu_total = sat_add(s.cpu_total, cpu);
    s.gpu_total = sat_add(s.gpu_total, gpu);
    s.delay_total = sat_add(s.delay_total, delay);
    delays.push_back(delay);
    if (cpu <= options.runtime_cutoff_ns && gpu < cpu) ++s.short_kernels;
    if (cpu > options.runtime_cutoff_ns) ++s.runtime_outliers;
    if (delay > options.launch_delay_cutoff_ns) ++s.delay_outliers;
  }
  s.delay = describe(std::move(delays));
  return s;
}

namespace {

// Per stream, the interval each launched operation waits in the queue: [call start, operation start).
std::map<int32_t, std::vector<Interval>> queue_waits(const Trace& trace, const GpuUnit& unit, LaunchNames names) {
  std::map<int32_t, std::vector<Interval>> waits;
  std::vector<int8_t> decided(trace.strings.size(), -1);
  for (const GpuWorkItem& it : unit.items) {
    if (it.kind == WorkKind::kSync || it.launch < 0) continue;
    const StrId name = trace.api.name[it.launch];
    if (names != LaunchNames::kTracedoc) {
      if (name == kNoStr || name >= decided.size()) continue;
      if (decided[name] < 0) decided[name] = is_queue_call(trace.str(name), names) ? 1 : 0;
      if (!decided[name]) continue;
    }
    waits[it.stream].push_back({it.launch_start, std::max(it.start, it.launch_start)});
  }
  return waits;
}

}  // namespace

std::vector<StreamQueueSeries> queue_length_series(const Trace& trace, const GpuUnit& unit, LaunchNames names) {
  std::vector<StreamQueueSeries> out;
  for (auto& [stream, intervals] : queue_waits(trace, unit, names)) {
    out.push_back({stream, depth_over_time(intervals)});
  }
  return out;
}

std::vector<StreamQueue> queue_length_summary(const Trace& trace, const GpuUnit& unit, const QueueOptions& options) {
  auto waits = queue_waits(trace, unit, options.names);
  std::vector<StreamQueue> out;
  for (auto& [stream, intervals] : waits) {
    StreamQueue q;
    q.stream = stream;
    // The samples: +1 at each start of a wait, -1 at each end; at equal times the +1s first.
    std::vector<std::pair<TimeNs, int>> events;
    events.reserve(intervals.size() * 2);
    for (const Interval& i : intervals) {
      events.push_back({i.start, 0});
      events.push_back({i.end, 1});
    }
    std::sort(events.begin(), events.end());
    std::vector<int64_t> samples;
    samples.reserve(events.size());
    int64_t length = 0;
    for (const auto& [t, kind] : events) {
      length += kind == 0 ? 1 : -1;
      samples.push_back(length);
    }
    q.samples = describe(std::move(samples));
    q.first = events.front().first;
    q.last = events.back().first;

    // Over time: the step function of the depth, from the first launch to the last start.
    const std::vector<DepthChange> steps = depth_over_time(intervals);
    double weighted = 0;
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      const int64_t dt = sat_sub(steps[k + 1].time, steps[k].time);
      weighted += static_cast<double>(steps[k].depth) * static_cast<double>(dt);
      if (steps[k].depth >= options.max_queue_length) q.blocked = sat_add(q.blocked, dt);
    }
    const int64_t span = sat_sub(q.last, q.first);
    q.time_weighted_mean = span > 0 ? weighted / static_cast<double>(span) : 0.0;
    out.push_back(q);
  }
  return out;
}

}  // namespace tracedoc::pytorch
