#include "analysis/checked_math.h"
#include "analysis/steps.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "analysis/intervals.h"
#include "analysis/statistics.h"
#include "analysis/pytorch/op_links.h"
#include "model/step_names.h"

namespace tracedoc {

const char* step_source_name(StepSource s) {
  switch (s) {
    case StepSource::kMarker: return "marker";
    case StepSource::kProfilerStep: return "ProfilerStep";
    case StepSource::kDetected: return "detected";
  }
  return "?";
}

bool marker_matches(std::string_view name, std::string_view marker) {
  if (!marker.empty() && marker.back() == '*')
    return name.substr(0, marker.size() - 1) == marker.substr(0, marker.size() - 1);
  return name == marker;
}

Result<StepOptions> step_options_from_args(const std::vector<std::string>& args) {
  StepOptions o;
  for (const auto& a : args) {
    if (a.starts_with("marker=")) {
      o.marker = a.substr(7);
      if (o.marker.empty() || o.marker == "*")
        return UsageError("marker= needs a range name (NAME, or NAME* for a prefix)");
    } else if (a == "nodetect") {
      o.detect = false;
    } else if (a == "detect") {
      o.use_profiler_steps = false;  // detection even where ProfilerStep ranges exist
    }
  }
  return o;
}

namespace {

// Ranges (NVTX or PyTorch annotations) that match, closed ones only, numbered per process in time
// order.
StepSet ranges_as_steps(const Trace& trace, const std::vector<uint32_t>& rows, StepSource source) {
  StepSet set;
  set.source = source;
  const RangeTable& r = trace.ranges;
  std::map<int64_t, int64_t> next_number;
  for (uint32_t row : rows) {
    if (r.end[row] == kNoTime) continue;  // never closed: no extent
    StepWindow w;
    w.global_pid = global_pid_of(r.global_tid[row]);
    w.start = r.start[row];
    w.end = r.end[row];
    w.name = r.text[row];
    w.range_row = row;
    w.number = next_number[w.global_pid]++;
    set.steps.push_back(w);
  }
  std::stable_sort(set.steps.begin(), set.steps.end(),
                   [](const StepWindow& a, const StepWindow& b) { return a.start < b.start; });
  return set;
}

struct Sequence {
  std::vector<uint32_t> rows;  // kernel rows in start order
  std::vector<StrId> names;    // their names
};

// Each process's kernels on the device where it ran the most, in launch order (the order of the
// launching calls: program order, where GPU start order interleaves streams differently each
// iteration); kernels without a known launch call are placed by their own start and belong to the
// process the GPU record names. A process is the CPU process of the launching calls, so that the
// kernels of a PyTorch trace (whose GPU records carry the device as pid) go with their launcher.
// The busiest process first (the most kernels on its device; the lower pid of equals).
std::vector<Sequence> sequences_per_process(const Trace& trace, const pytorch::GpuLaunches& launches) {
  const KernelTable& k = trace.kernels;
  std::vector<int64_t> process(k.size());
  std::map<std::pair<int64_t, int32_t>, size_t> counts;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t a = launches.of(pytorch::GpuKind::kKernel, i);
    process[i] = a == pytorch::kNoRow ? k.global_pid[i] : global_pid_of(trace.api.global_tid[a]);
    ++counts[{process[i], k.device[i]}];
  }
  std::map<int64_t, std::pair<int32_t, size_t>> busiest;  // process -> (device, kernels)
  for (const auto& [key, n] : counts) {
    auto [it, fresh] = busiest.try_emplace(key.first, key.second, n);
    if (!fresh && n > it->second.second) it->second = {key.second, n};
  }
  std::vector<std::pair<int64_t, std::pair<int32_t, size_t>>> order(busiest.begin(), busiest.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  std::map<int64_t, size_t> slot;
  std::vector<Sequence> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) slot[order[i].first] = i;
  for (size_t i = 0; i < k.size(); ++i) {
    const size_t at = slot.at(process[i]);
    if (k.device[i] == order[at].second.first) out[at].rows.push_back(static_cast<uint32_t>(i));
  }
  auto order_time = [&](uint32_t row) {
    const int32_t a = launches.of(pytorch::GpuKind::kKernel, row);
    return a == pytorch::kNoRow ? k.start[row] : trace.api.start[a];
  };
  for (Sequence& seq : out) {
    std::stable_sort(seq.rows.begin(), seq.rows.end(), [&](uint32_t a, uint32_t b) {
      return std::make_pair(order_time(a), k.start[a]) < std::make_pair(order_time(b), k.start[b]);
    });
    seq.names.reserve(seq.rows.size());
    for (uint32_t r : seq.rows) seq.names.push_back(k.name[r]);
  }
  return out;
}

// A name repeating every `period` kernels: at least 80% of the gaps between its consecutive
// occurrences within 3% of the median gap, and those gaps covering at least 80% of the kernels from
// its first to its last occurrence.
struct Candidate {
  size_t period = 0;
  uint32_t first = 0;  // first occurrence of the name giving it
  StrId name = kNoStr;
  double coverage = 0;
};

std::optional<Candidate> regular_name(StrId name, const std::vector<uint32_t>& pos, std::vector<int64_t>& gaps) {
  if (pos.size() < 3) return std::nullopt;
  gaps.clear();
  for (size_t j = 1; j < pos.size(); ++j) gaps.push_back(pos[j] - pos[j - 1]);
  const size_t median = static_cast<size_t>(median_ns(gaps));  // whole kernels, half up
  if (median < 2) return std::nullopt;
  const size_t tolerance = std::max<size_t>(1, median * 3 / 100);
  size_t regular = 0, all = 0, regular_count = 0;
  for (const int64_t gap : gaps) {
    const size_t g = static_cast<size_t>(gap);
    all += g;
    if (g + tolerance >= median && g <= median + tolerance) regular += g, ++regular_count;
  }
  const double coverage = static_cast<double>(regular) / static_cast<double>(all);
  if (coverage < 0.8 || regular_count * 5 < gaps.size() * 4) return std::nullopt;
  return Candidate{median, pos.front(), name, coverage};
}

bool near_multiple(size_t q, size_t p) {
  if (p == 0 || q < 2 * p) return false;
  const size_t k = (q + p / 2) / p;
  const size_t target = k * p;
  const size_t diff = q > target ? q - target : target - q;
  return diff * 100 <= q;
}

// The steps of one process's sequence; nullopt when it does not repeat.
std::optional<StepSet> detect_in(const Trace& trace, const Sequence& seq, const pytorch::GpuLaunches& launches) {
  const auto& s = seq.names;
  if (s.size() < 6) return std::nullopt;  // too few kernels to find a repeating step
  std::unordered_map<StrId, std::vector<uint32_t>> at;
  for (uint32_t i = 0; i < s.size(); ++i) at[s[i]].push_back(i);
  // One candidate per period: the name seen first.
  std::map<size_t, Candidate> by_period;
  std::vector<int64_t> gaps;
  for (const auto& [name, pos] : at) {
    auto c = regular_name(name, pos, gaps);
    if (!c || s.size() < 2 * c->period) continue;
    auto [it, fresh] = by_period.try_emplace(c->period, *c);
    if (!fresh && c->first < it->second.first) it->second = *c;
  }
  // The longest period that is not (within 1%) a multiple of a shorter one: a layer repeats inside
  // an iteration but covers little of it (the backward pass and optimizer break its rhythm); two
  // iterations repeat too, but as a multiple of one.
  const Candidate* chosen = nullptr;
  for (auto it = by_period.rbegin(); it != by_period.rend() && !chosen; ++it) {
    bool multiple = false;
    for (const auto& [p, c] : by_period) {
      if (p < it->first && near_multiple(it->first, p)) multiple = true;
    }
    if (!multiple) chosen = &it->second;
  }
  if (chosen) {
    const Candidate* c = chosen;
    // Steps start at the anchor's launches.
    const ApiTable& api = trace.api;
    const auto& pos = at.at(c->name);
    StepSet set;
    set.source = StepSource::kDetected;
    set.period_kernels = c->period;
    set.match = c->coverage;
    set.anchor = c->name;
    auto launch_time = [&](uint32_t seq_index) -> std::pair<int64_t, TimeNs> {
      const uint32_t row = seq.rows[seq_index];
      const int32_t a = launches.of(pytorch::GpuKind::kKernel, row);
      if (a == pytorch::kNoRow) return {trace.kernels.global_pid[row], trace.kernels.start[row]};
      return {global_pid_of(api.global_tid[a]), api.start[a]};
    };
    for (size_t j = 0; j + 1 < pos.size(); ++j) {
      auto [pid, start] = launch_time(pos[j]);
      const TimeNs next_start = launch_time(pos[j + 1]).second;
      StepWindow w;
      w.global_pid = pid;
      w.start = start;
      w.end = std::max(start, sat_sub(next_start, 1));  // the next anchor's call opens the next step
      w.number = static_cast<int64_t>(j);
      set.steps.push_back(w);
    }
    // The last anchor opens a step only if a whole period follows it.
    if (pos.back() + c->period <= s.size() && !set.steps.empty()) {
      auto [pid, start] = launch_time(pos.back());
      TimeNs end = start;
      for (size_t i = pos.back(); i < s.size(); ++i) end = std::max(end, launch_time(static_cast<uint32_t>(i)).second);
      set.steps.push_back({pid, start, end, static_cast<int64_t>(set.steps.size()), kNoStr, -1});
    }
    if (set.steps.size() >= 2) return set;
  }
  return std::nullopt;
}

// Steps detected in every process of the trace (each rank or process of a multi-process export runs
// its own loop), in (process, start) order; the period, match and anchor are the busiest process's.
Result<StepSet> detect_steps(const Trace& trace, const pytorch::GpuLaunches& launches) {
  std::optional<StepSet> all;
  for (const Sequence& seq : sequences_per_process(trace, launches)) {
    std::optional<StepSet> found = detect_in(trace, seq, launches);
    if (!found) continue;
    if (!all) {
      all = std::move(found);
      continue;
    }
    all->steps.insert(all->steps.end(), found->steps.begin(), found->steps.end());
  }
  if (!all) return NoData("no repeating kernel sequence (no steps detected)");
  std::stable_sort(all->steps.begin(), all->steps.end(), [](const StepWindow& a, const StepWindow& b) {
    return std::make_pair(a.global_pid, a.start) < std::make_pair(b.global_pid, b.start);
  });
  return *std::move(all);
}

// Finds the step whose CPU window holds a call: per process, windows sorted by start.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<StepWindow>& steps) : steps_(steps) {
    for (uint32_t s = 0; s < steps.size(); ++s) by_pid_[steps[s].global_pid].push_back({steps[s].start, s});
    for (auto& [pid, list] : by_pid_) std::sort(list.begin(), list.end());
  }

  // Index into the steps, or -1.
  int32_t find(int64_t global_pid, TimeNs t) const {
    auto it = by_pid_.find(global_pid);
    if (it == by_pid_.end()) return -1;
    const auto& list = it->second;
    auto pos = std::upper_bound(list.begin(), list.end(), std::make_pair(t, UINT32_MAX));
    if (pos == list.begin()) return -1;
    --pos;
    return t <= steps_[pos->second].end ? static_cast<int32_t>(pos->second) : -1;
  }

 private:
  const std::vector<StepWindow>& steps_;
  std::map<int64_t, std::vector<std::pair<TimeNs, uint32_t>>> by_pid_;
};

}  // namespace

std::vector<StepGpuWork> gpu_work_per_step(const Trace& trace, const std::vector<StepWindow>& steps,
                                           const pytorch::GpuLaunches* known) {
  using pytorch::GpuKind;
  const ApiTable& api = trace.api;
  pytorch::GpuLaunches computed;
  if (!known) computed = pytorch::link_gpu_launches(trace);
  const pytorch::GpuLaunches& launches = known ? *known : computed;
  const StepFinder finder(steps);
  std::vector<StepGpuWork> gpu(steps.size());
  std::vector<std::vector<Interval>> intervals(steps.size());
  auto add = [&](GpuKind kind, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
    for (size_t r = 0; r < start.size(); ++r) {
      const int32_t a = launches.of(kind, r);
      if (a == pytorch::kNoRow) continue;
      const int32_t s = finder.find(global_pid_of(api.global_tid[a]), api.start[a]);
      if (s < 0) continue;
      StepGpuWork& g = gpu[s];
      g.start = g.start == kNoTime ? start[r] : std::min(g.start, start[r]);
      g.end = g.end == kNoTime ? end[r] : std::max(g.end, end[r]);
      if (kind == GpuKind::kKernel) ++g.kernels;
      intervals[s].push_back({start[r], end[r]});
    }
  };
  add(GpuKind::kKernel, trace.kernels.start, trace.kernels.end);
  add(GpuKind::kMemcpy, trace.memcpys.start, trace.memcpys.end);
  add(GpuKind::kMemset, trace.memsets.start, trace.memsets.end);
  for (size_t s = 0; s < steps.size(); ++s) gpu[s].busy = IntervalSet::busy_union(std::move(intervals[s])).total();
  return gpu;
}

Result<StepSet> find_steps(const Trace& trace, const StepOptions& options, const pytorch::GpuLaunches* launches) {
  const RangeTable& r = trace.ranges;
  if (!options.marker.empty()) {
    std::vector<uint32_t> rows;
    for (uint32_t i = 0; i < r.size(); ++i) {
      if (r.text[i] != kNoStr && marker_matches(trace.str(r.text[i]), options.marker)) rows.push_back(i);
    }
    if (rows.empty()) return NoData(fmt::format("has no range named '{}' to mark steps", options.marker));
    return ranges_as_steps(trace, rows, StepSource::kMarker);
  }
  if (options.use_profiler_steps) {
    std::vector<uint32_t> rows = trace.pytorch.steps;
    if (rows.empty()) {
      // nsys exports of PyTorch runs: ProfilerStep#N as NVTX ranges (torch.autograd.profiler.emit_nvtx).
      for (uint32_t i = 0; i < r.size(); ++i) {
        if (r.text[i] == kNoStr) continue;
        const std::string_view name = trace.str(r.text[i]);
        if (is_profiler_step(name)) rows.push_back(i);
      }
    }
    if (!rows.empty()) {
      StepSet set = ranges_as_steps(trace, rows, StepSource::kProfilerStep);
      for (auto& w : set.steps) w.number = profiler_step_number(trace.str(w.name)).value_or(kNoValue);
      if (!set.steps.empty()) return set;
    }
  }
  if (!options.detect) return NoData("does not contain ProfilerStep ranges.");
  if (launches) return detect_steps(trace, *launches);
  return detect_steps(trace, pytorch::link_gpu_launches(trace));
}

}  // namespace tracedoc
