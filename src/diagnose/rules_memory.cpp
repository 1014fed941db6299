// GPU memory that climbs step after step (staircase_memory): references kept across iterations.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/gpu_memory.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

void staircase_memory(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  if (!ctx.steps()) return;
  constexpr int64_t kNoise = 1 << 20;  // changes below 1 MiB are the allocator's rounding, not growth
  for (const MemorySeries& series : collect_gpu_memory(t)) {
    // The allocator records its events on the CPU, when the step's code allocates: its steps' CPU
    // windows, not the stretched ones (with the GPU behind, those start in the previous step).
    const std::vector<Interval>& windows = ctx.cpu_windows_of(ctx.owner_of(series.global_pid));
    if (static_cast<double>(windows.size()) < p.get("min_steps")) continue;
    // Each step's peak: what the step needed on top of what earlier steps left behind.
    std::vector<int64_t> peaks;
    for (const Interval& w : windows) {
      const size_t begin = series.first_at_or_after(w.start), end = series.first_at_or_after(w.end);
      peaks.push_back(memory_window_stats(series, begin, end, series.allocated_before(w.start)).peak);
    }
    int64_t rising = 0;
    for (size_t k = 1; k < peaks.size(); ++k) rising += sat_sub(peaks[k], peaks[k - 1]) > kNoise ? 1 : 0;
    const double rising_share = static_cast<double>(rising) / static_cast<double>(peaks.size() - 1);
    const int64_t growth = sat_sub(peaks.back(), peaks.front());
    if (rising_share < p.get("min_rising") || static_cast<double>(growth) < p.get("min_growth_bytes")) continue;

    Finding f;
    f.scope = ctx.pytorch() ? (t.rank_of(series.global_pid) >= 0
                                   ? fmt::format("rank {} GPU {}", t.rank_of(series.global_pid), series.device)
                                   : fmt::format("GPU {}", series.device))
                            : fmt::format("pid {} GPU {}", pid_of(series.global_pid), series.device);
    const double per_step = static_cast<double>(growth) / static_cast<double>(peaks.size() - 1);
    int64_t capacity = 0;
    for (const DeviceInfo& d : t.devices) {
      if (d.id == series.device) capacity = d.total_memory;
    }
    double steps_left = -1;
    if (capacity > peaks.back() && per_step > 0)
      steps_left = static_cast<double>(sat_sub(capacity, peaks.back())) / per_step;
    f.severity = steps_left >= 0 && steps_left <= p.get("oom_steps") ? Severity::kCritical : Severity::kWarning;
    f.time_based = false;
    f.savings_ns = 0;  // memory, not time: ordered after the time findings
    f.title = fmt::format(
        "staircase memory: the step peak grows {} per step over {} steps ({} -> {}){}",
        human_bytes(static_cast<int64_t>(per_step)), peaks.size(), human_bytes(peaks.front()),
        human_bytes(peaks.back()),
        steps_left >= 0 ? fmt::format("; the GPU fills in about {:.0f} more steps", steps_left) : std::string());
    f.confidence = rising_share >= 0.95 ? 0.9 : 0.7;
    f.figures = {{"steps", static_cast<double>(peaks.size()), "count"},
                 {"first_step_peak_bytes", static_cast<double>(peaks.front()), "bytes"},
                 {"last_step_peak_bytes", static_cast<double>(peaks.back()), "bytes"},
                 {"growth_per_step_bytes", std::round(per_step), "bytes"},  // whole bytes
                 {"rising_share", rising_share, "fraction"}};
    if (capacity > 0) f.figures.push_back({"device_memory_bytes", static_cast<double>(capacity), "bytes"});
    if (steps_left >= 0)
      f.figures.push_back({"steps_until_full", std::floor(steps_left), "count"});  // whole steps left
    f.ranges = {{windows.front().start, windows.front().end, f.scope, "first step"},
                {windows.back().start, windows.back().end, f.scope, "last step"}};
    f.remedy =
        "Memory allocated in each step is still referenced after it: a loss or output kept in a list "
        "(append loss.item() or loss.detach() instead of loss), a growing cache, tensors captured by "
        "hooks or closures, or retain_graph=True. Compare torch.cuda.memory_summary() between steps, or "
        "record torch.cuda.memory._record_memory_history() and look at what survives a step.";
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
