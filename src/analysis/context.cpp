#include "analysis/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/checked_math.h"
#include "model/step_names.h"

namespace tracedoc {

AnalysisContext::AnalysisContext(const Trace& trace, StepOptions step_options)
    : trace_(trace), step_options_(std::move(step_options)) {}

const pytorch::GpuWork& AnalysisContext::gpu_work() {
  if (!work_) work_ = pytorch::collect_gpu_work(trace_);
  return *work_;
}

const pytorch::GpuLaunches& AnalysisContext::launches() {
  if (pytorch() && trace_.pytorch.ops.size() > 0) return op_links().launches;  // link_ops made them
  if (!launches_) launches_ = pytorch::link_gpu_launches(trace_);
  return *launches_;
}

const IntervalSet& AnalysisContext::busy(const pytorch::GpuUnit& unit) {
  const std::vector<pytorch::GpuUnit>& units = gpu_work().units;
  const size_t index = static_cast<size_t>(&unit - units.data());
  if (busy_.size() != units.size()) busy_.resize(units.size());
  if (!busy_[index]) busy_[index] = unit.busy();
  return *busy_[index];
}

const pytorch::OpLinks& AnalysisContext::op_links() {
  if (!links_) links_ = pytorch::link_ops(trace_);
  return *links_;
}

const pytorch::FlopsAttribution& AnalysisContext::flops() {
  if (!flops_) flops_ = pytorch::attribute_flops(trace_, op_links());
  return *flops_;
}

const std::map<int32_t, GpuPeaks>& AnalysisContext::gpu_peaks() {
  if (!peaks_) peaks_ = pytorch::device_peaks(trace_);
  return *peaks_;
}

int64_t AnalysisContext::owner_of(int64_t global_id) const { return pytorch::owner_of_id(pytorch(), global_id); }

void AnalysisContext::ensure_steps() {
  if (steps_done_) return;
  steps_done_ = true;
  auto found = find_steps(trace_, step_options_, &launches());
  if (!found.ok() || found->steps.empty()) return;
  steps_ = std::move(*found);
  // Stretch each step to the GPU work it launched, per owner, without overlapping the previous one.
  const std::vector<StepGpuWork> gpu = gpu_work_per_step(trace_, steps_->steps, &launches());
  std::map<int64_t, std::vector<std::pair<Interval, size_t>>> by_owner;
  for (size_t k = 0; k < steps_->steps.size(); ++k) {
    const StepWindow& w = steps_->steps[k];
    TimeNs end = w.end;
    if (gpu[k].end != kNoTime) end = std::max(end, gpu[k].end);
    by_owner[owner_of(w.global_pid)].push_back({{w.start, end}, k});
  }
  for (auto& [owner, list] : by_owner) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
    std::vector<Interval> cpu;
    for (const auto& [w, k] : list) cpu.push_back({steps_->steps[k].start, steps_->steps[k].end});
    cpu_windows_.push_back({owner, std::move(cpu)});
    std::vector<Interval> windows;
    std::vector<size_t> steps;
    TimeNs prev_end = kNoTime;
    for (const auto& [w, k] : list) {
      Interval x = w;
      if (prev_end != kNoTime) x.start = std::max(x.start, prev_end);
      if (x.end <= x.start) continue;
      windows.push_back(x);
      steps.push_back(k);
      prev_end = x.end;
    }
    windows_.push_back({owner, std::move(windows)});
    window_steps_.push_back({owner, std::move(steps)});
  }
}

IntervalSet AnalysisContext::owner_busy(int64_t owner) {
  IntervalSet all;
  for (const pytorch::GpuUnit& u : gpu_work().units) {
    if (u.owner == owner) all = all.unite(busy(u));
  }
  return all;
}

IntervalSet AnalysisContext::owner_idle(int64_t owner) {
  const IntervalSet busy = owner_busy(owner);
  if (busy.empty()) return {};
  const std::vector<Interval> windows = steps() ? windows_of(owner) : std::vector<Interval>{busy.span()};
  return IntervalSet::busy_union(idle_within(busy, windows));
}

const NcuJoin& AnalysisContext::ncu_join() {
  if (!ncu_join_) ncu_join_ = join_ncu(trace_);
  return *ncu_join_;
}

const NcuAnswers& AnalysisContext::ncu_answers(NcuLaunchRef launch) {
  auto [it, fresh] = ncu_answers_.try_emplace({launch.report, launch.result});
  if (fresh) {
    const NcuReport& report = *trace_.ncu_reports.at(static_cast<size_t>(launch.report));
    it->second = tracedoc::ncu_answers(report, report.results.at(static_cast<size_t>(launch.result)));
  }
  return it->second;
}

const StepSet* AnalysisContext::steps() {
  ensure_steps();
  return steps_ ? &*steps_ : nullptr;
}

namespace {

// The windows of `owner` in a per-owner list (none when it has no steps).
const std::vector<Interval>& windows_in(const std::vector<std::pair<int64_t, std::vector<Interval>>>& list,
                                        int64_t owner) {
  static const std::vector<Interval> kNone;
  for (const auto& [o, w] : list) {
    if (o == owner) return w;
  }
  return kNone;
}

}  // namespace

const std::vector<Interval>& AnalysisContext::windows_of(int64_t owner) {
  ensure_steps();
  return windows_in(windows_, owner);
}

const std::vector<size_t>& AnalysisContext::window_steps_of(int64_t owner) {
  ensure_steps();
  static const std::vector<size_t> kNone;
  for (const auto& [o, steps] : window_steps_) {
    if (o == owner) return steps;
  }
  return kNone;
}

const std::vector<Interval>& AnalysisContext::cpu_windows_of(int64_t owner) {
  ensure_steps();
  return windows_in(cpu_windows_, owner);
}

std::vector<Interval> AnalysisContext::unit_windows(const pytorch::GpuUnit& unit) {
  const std::vector<Interval>& w = windows_of(unit.owner);
  if (!w.empty()) return w;
  if (unit.items.empty()) return {};
  TimeNs lo = unit.items.front().start, hi = lo;
  for (const auto& it : unit.items) hi = std::max(hi, it.end);
  return {{lo, hi}};
}

int64_t AnalysisContext::basis_ns() {
  if (basis_) return *basis_;
  ensure_steps();
  std::map<int64_t, int64_t> per_owner;
  for (const auto& [owner, windows] : windows_) {
    int64_t sum = 0;
    for (const Interval& w : windows) sum = sat_add(sum, w.length());
    per_owner[owner] = sum;
  }
  for (const pytorch::GpuUnit& u : gpu_work().units) {
    if (per_owner.count(u.owner) && per_owner[u.owner] > 0) continue;
    int64_t span = 0;
    for (const Interval& w : unit_windows(u)) span = sat_add(span, w.length());
    per_owner[u.owner] = std::max(per_owner[u.owner], span);
  }
  int64_t basis = 0;
  for (const auto& [owner, v] : per_owner) basis = std::max(basis, v);
  basis_ = basis;
  return basis;
}

std::string AnalysisContext::device_name(int32_t device) const {
  for (const DeviceInfo& d : trace_.devices) {
    if (d.id == device && d.name != kNoStr) return std::string(trace_.str(d.name));
  }
  return {};
}

std::string AnalysisContext::owner_label(int64_t owner) const {
  if (!pytorch()) return fmt::format("pid {}", pid_of(owner));
  const bool ranked = owner > 0 || (rank_of_job_ && trace_.rank_of_tag(owner) >= 0);
  return ranked ? fmt::format("rank {}", trace_.rank_of_tag(owner)) : std::string("trace");
}

std::string gpu_unit_label(int64_t rank, int64_t pid, int32_t device, bool pytorch, const std::string& device_name) {
  std::string s = rank >= 0 ? fmt::format("rank {} GPU {}", rank, device)
                            : (pytorch ? fmt::format("GPU {}", device) : fmt::format("pid {} GPU {}", pid, device));
  if (!device_name.empty()) s += " (" + device_name + ")";
  return s;
}

std::string AnalysisContext::unit_label(const pytorch::GpuUnit& unit) const {
  return gpu_unit_label(unit.rank, unit.pid, unit.device, pytorch(), device_name(unit.device));
}

std::vector<Offender> AnalysisContext::cpu_activity_during(const IntervalSet& during, int64_t owner, size_t top) {
  std::map<std::string_view, Offender> by_name;
  auto add = [&](StrId name, int64_t global_tid, TimeNs start, TimeNs end) {
    if (name == kNoStr || start == kNoTime || end == kNoTime || end <= start) return;
    if (owner_of(global_tid) != owner) return;
    const std::string_view n = trace_.str(name);
    if (is_profiler_step(n)) return;
    const int64_t overlap = during.covered_within({start, end});
    if (overlap <= 0) return;
    Offender& o = by_name[n];
    ++o.count;
    o.total_ns = sat_add(o.total_ns, overlap);
  };
  const RangeTable& r = trace_.ranges;
  for (size_t i = 0; i < r.size(); ++i) add(r.text[i], r.global_tid[i], r.start[i], r.end[i]);
  if (pytorch() && trace_.pytorch.ops.size() > 0) {
    const pytorch::OpLinks& links = op_links();
    const OpTable& ops = trace_.pytorch.ops;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (links.parent[i] == pytorch::kNoRow) add(ops.name[i], ops.global_tid[i], ops.start[i], ops.end[i]);
    }
  }
  std::vector<Offender> out;
  for (auto& [name, o] : by_name) {
    o.name = std::string(name);
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const Offender& a, const Offender& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

std::string AnalysisContext::call_site(size_t api_row) {
  if (pytorch() && trace_.pytorch.ops.size() > 0) {
    const int32_t op = op_links().api_op[api_row];
    if (op != pytorch::kNoRow) return std::string(trace_.str(trace_.pytorch.ops.name[static_cast<size_t>(op)]));
  }
  const RangeTable& r = trace_.ranges;
  if (!ranges_by_thread_) {
    ranges_by_thread_.emplace();
    for (uint32_t i = 0; i < r.size(); ++i) {
      if (r.end[i] == kNoTime || r.end[i] <= r.start[i]) continue;
      (*ranges_by_thread_)[r.global_tid[i]].push_back(i);
    }
    for (auto& [tid, rows] : *ranges_by_thread_) {
      std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return r.start[a] < r.start[b]; });
    }
  }
  const auto it = ranges_by_thread_->find(trace_.api.global_tid[api_row]);
  if (it == ranges_by_thread_->end()) return {};
  const std::vector<uint32_t>& rows = it->second;
  const TimeNs t = trace_.api.start[api_row];
  auto pos = std::upper_bound(rows.begin(), rows.end(), t, [&](TimeNs v, uint32_t row) { return v < r.start[row]; });
  // Nested ranges: the latest-starting one that still holds t is the innermost. A bounded look back
  // (ranges that ended before t are skipped); step markers are not call sites.
  for (int looked = 0; pos != rows.begin() && looked < 256; ++looked) {
    --pos;
    if (r.end[*pos] < t) continue;
    const std::string_view name = trace_.str(r.text[*pos]);
    if (is_profiler_step(name)) continue;
    return std::string(name);
  }
  return {};
}

double share_of(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace tracedoc
