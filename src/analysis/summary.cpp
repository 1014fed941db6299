#include "analysis/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/checked_math.h"
#include "analysis/copy_throughput.h"
#include "analysis/cpu_samples.h"
#include "analysis/context.h"
#include "analysis/cpu_threads.h"
#include "analysis/thread_schedule.h"
#include "analysis/gpu_activity.h"
#include "analysis/gpu_memory.h"
#include "analysis/host_link.h"
#include "analysis/intervals.h"
#include "analysis/ncu_join.h"
#include "analysis/nsys_analyze/rules.h"
#include "analysis/pytorch/dispatch_overhead.h"
#include "analysis/pytorch/flops_reports.h"
#include "analysis/pytorch/gpu_breakdowns.h"
#include "analysis/pytorch/gpu_work.h"
#include "analysis/pytorch/launch_stats.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/pytorch/tb_overview.h"
#include "analysis/statistics.h"
#include "common/task_pool.h"

namespace tracedoc {

namespace {

void widen(TimeNs& lo, TimeNs& hi, bool& any, TimeNs start, TimeNs end) {
  if (start == kNoTime) return;
  if (end == kNoTime || end < start) end = start;
  if (!any) {
    lo = start, hi = end, any = true;
    return;
  }
  lo = std::min(lo, start);
  hi = std::max(hi, end);
}

template <typename Table>
void widen_table(const Table& t, TimeNs& lo, TimeNs& hi, bool& any) {
  for (size_t i = 0; i < t.size(); ++i) widen(lo, hi, any, t.start[i], t.end[i]);
}

// Count and summed duration per name, every name (the merge ranks them); with `durations`, each
// name's instance durations too, in a sketch of that capacity (0: every value).
std::vector<NamedTotal> totals_by_name(const Trace& trace, const std::vector<StrId>& names,
                                       const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                                       int64_t* grand_total, std::optional<uint32_t> durations = std::nullopt) {
  std::vector<int64_t> count(trace.strings.size(), 0), total(trace.strings.size(), 0);
  int64_t all = 0;
  auto duration = [&](size_t i) { return end[i] > start[i] ? sat_sub(end[i], start[i]) : int64_t{0}; };
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == kNoStr || names[i] >= count.size()) continue;
    const int64_t d = duration(i);
    ++count[names[i]];
    total[names[i]] = sat_add(total[names[i]], d);
    all = sat_add(all, d);
  }
  if (grand_total) *grand_total = all;
  std::vector<NamedTotal> out;
  std::vector<uint32_t> slot(durations ? count.size() : 0);
  for (StrId id = 0; id < count.size(); ++id) {
    if (!count[id]) continue;
    if (durations) slot[id] = static_cast<uint32_t>(out.size());
    out.push_back({std::string(trace.str(id)), count[id], total[id], QuantileSketch(durations.value_or(0))});
  }
  if (durations) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != kNoStr && names[i] < count.size()) out[slot[names[i]]].durations.add(duration(i));
    }
  }
  return out;
}

std::string device_name(const Trace& trace, int32_t device) {
  for (const auto& info : trace.devices) {
    if (info.id == device && info.name != kNoStr) return std::string(trace.str(info.name));
  }
  return {};
}

std::vector<DeviceSummary> device_summaries(const Trace& trace, int64_t gap_threshold) {
  GpuActivityOptions o;
  o.include_overhead = false;
  o.skip_nonpositive_starts = false;
  o.include_graphs = true;
  std::vector<DeviceSummary> out;
  for (const DeviceActivity& d : collect_gpu_activity(trace, o)) {
    DeviceSummary s;
    s.pid = d.pid();
    s.rank = trace.rank_of(d.global_pid);
    s.device = d.device;
    s.name = device_name(trace, d.device);
    s.first_start = d.first_start;
    s.last_end = d.last_end;
    std::set<int32_t> streams;
    for (const GpuOp& op : d.ops) {
      const int64_t len = op.end > op.start ? sat_sub(op.end, op.start) : 0;
      switch (op.kind) {
        case GpuOpKind::kKernel:
          ++s.kernels, s.kernel_ns = sat_add(s.kernel_ns, len), streams.insert(trace.kernels.stream[op.row]);
          break;
        case GpuOpKind::kMemcpy:
          ++s.memcpys, s.memcpy_ns = sat_add(s.memcpy_ns, len), streams.insert(trace.memcpys.stream[op.row]);
          break;
        case GpuOpKind::kMemset:
          ++s.memsets, s.memset_ns = sat_add(s.memset_ns, len), streams.insert(trace.memsets.stream[op.row]);
          break;
        case GpuOpKind::kGraph:
          ++s.graphs, s.graph_ns = sat_add(s.graph_ns, len), streams.insert(trace.graph_traces.stream[op.row]);
          break;
        case GpuOpKind::kOverhead: break;
      }
    }
    s.streams = static_cast<int64_t>(streams.size());
    const IntervalSet busy = d.busy();
    s.busy_ns = busy.total();
    for (const Interval& g : busy.gaps(gap_threshold)) {
      ++s.gaps_over_threshold;
      if (g.length() > s.longest_gap_ns) s.longest_gap_ns = g.length(), s.longest_gap_start = g.start;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Copies per (direction, host memory kind) over every process and device, with the host link when
// all the GPUs involved have the same known one.
std::vector<CopyPart> copy_parts(const Trace& trace) {
  std::map<std::pair<uint8_t, uint8_t>, CopyPart> by_kind;
  for (const CopyGroup& g : summarize_copies(trace)) {
    const auto kind = static_cast<CopyKind>(g.copy_kind);
    // The host side of a host<->device copy decides its speed: pageable memory is staged.
    uint8_t host = kNoKind;
    if (kind == CopyKind::kHtoD || kind == CopyKind::kHtoA) host = g.src_kind;
    if (kind == CopyKind::kDtoH || kind == CopyKind::kAtoH) host = g.dst_kind;
    const std::pair<uint8_t, uint8_t> key{g.copy_kind, host};
    const bool fresh = !by_kind.count(key);
    CopyPart& part = by_kind[key];
    CopySummary& c = part.copy;
    const HostLink link = crosses_host_link(g.copy_kind) ? host_link_for_gpu(device_name(trace, g.device)) : HostLink{};
    if (fresh) {
      part.copy_kind = g.copy_kind, part.host = host;
      c.direction = trace.copy_label(g.copy_kind);
      if (host != kNoKind) c.host_memory = trace.mem_label(host);
      c.link = std::string(link.name);
      c.link_peak_gb_per_s = link.peak_bytes_per_s / 1e9;
    } else if (c.link != link.name) {
      part.mixed_links = true;
    }
    c.count += g.count;
    c.bytes = sat_add(c.bytes, g.bytes);
    c.total_ns = sat_add(c.total_ns, g.total_ns);
  }
  std::vector<CopyPart> out;
  for (auto& entry : by_kind) out.push_back(std::move(entry.second));
  return out;
}

// HTA's temporal and communication breakdowns and launch statistics, matched to the devices by
// (rank or pid, device).
// Returns the GPU work, for the cross-rank figures.
pytorch::GpuWork add_breakdowns(const Trace& trace, std::vector<DeviceSummary>& devices) {
  pytorch::GpuWork work = pytorch::collect_gpu_work(trace);
  for (const pytorch::GpuUnit& unit : work.units) {
    const pytorch::TemporalBreakdown t = pytorch::temporal_breakdown(unit);
    const pytorch::CommCompOverlap c = pytorch::comm_comp_overlap(unit);
    const pytorch::LaunchStats l = pytorch::kernel_launch_stats(trace, unit);
    for (DeviceSummary& d : devices) {
      if (d.device != unit.device) continue;
      if (work.pytorch ? d.rank != unit.rank : d.pid != unit.pid) continue;
      d.compute_ns = t.compute;
      d.non_compute_ns = t.non_compute;
      d.communication_ns = c.communication;
      d.comm_overlap_ns = c.overlap;
      d.launches = l.launches;
      d.short_kernels = l.short_kernels;
      d.launch_delay_median_ns = l.launches ? l.delay.median : 0;
    }
  }
  return work;
}

// Each GPU unit with its device's figures and its owner's steps; the collective columns are the
// merge's.
std::vector<SummaryUnitPart> unit_parts(const pytorch::GpuWork& work, const std::vector<DeviceSummary>& devices,
                                        const std::map<int64_t, std::vector<int64_t>>& steps_by_owner) {
  std::vector<SummaryUnitPart> out;
  for (const pytorch::GpuUnit& unit : work.units) {
    SummaryUnitPart part;
    RankRow& row = part.row;
    row.pid = unit.pid, row.rank = unit.rank, row.device = unit.device;
    for (const DeviceSummary& d : devices) {
      if (d.device != unit.device || (work.pytorch ? d.rank != unit.rank : d.pid != unit.pid)) continue;
      row.name = d.name;
      row.busy_ns = d.busy_ns, row.compute_ns = d.compute_ns;  // the union of computation kernels
      row.exposed_comm_ns = sat_sub(d.communication_ns, d.comm_overlap_ns);
    }
    if (auto it = steps_by_owner.find(unit.owner); it != steps_by_owner.end()) part.step_ns = it->second;
    out.push_back(std::move(part));
  }
  return out;
}

// The TensorBoard plugin's Overview: the GPU metrics per device, and the steps' summed roles (the
// merge averages them over all units).
void add_tb_overview(const Result<pytorch::TbOverview>& overview, SummaryPart& part) {
  if (!overview.ok()) return;
  for (const pytorch::TbGpuMetrics& g : overview->gpus) {
    for (DeviceSummary& d : part.devices) {
      if (d.device != g.device || d.rank != g.rank) continue;
      d.sm_efficiency_pct = 100.0 * g.sm_efficiency;
      d.occupancy_pct = g.occupancy;
      d.tensor_core_pct = 100.0 * g.tensor_cores;
    }
  }
  for (const pytorch::TbUnit& u : overview->units) {
    for (const pytorch::TbStep& st : u.steps) {
      ++part.role_steps;
      part.role_step_ns = sat_add(part.role_step_ns, st.duration());
      for (int k = 0; k < pytorch::kTbRoles; ++k) {
        part.role_ns[static_cast<size_t>(k)] = sat_add(part.role_ns[static_cast<size_t>(k)], st.role[k]);
      }
    }
  }
}

// Every operator's framework time (DispatchSummary::top_ops holds them all until the merge).
DispatchSummary dispatch_part(const Trace& trace, const pytorch::OpLinks& links) {
  const pytorch::DispatchOverhead d = pytorch::dispatch_overhead(trace, links);
  DispatchSummary out{d.framework, d.api, d.gpu_self, d.kernels, {}};
  for (const pytorch::DispatchGroup& op : d.ops)
    out.top_ops.push_back({std::string(trace.str(op.name)), op.calls, op.framework, {}});
  return out;
}

std::vector<ThreadSummary> thread_summaries(const Trace& trace) {
  std::vector<ThreadSummary> out;
  const std::map<int64_t, SampleClassCounts> samples = sample_classes_by_thread(trace);
  for (const CpuThreadStats& t : cpu_thread_stats(trace)) {
    if (!t.main && t.lock_waits == 0 && t.sync_ns == 0) continue;
    if (t.main && t.api_calls == 0 && t.lock_waits == 0 && t.running_ns < 0) continue;  // not a GPU process
    ThreadSummary& s = out.emplace_back(ThreadSummary{pid_of(t.global_tid),
                                                      tid_of(t.global_tid),
                                                      t.name,
                                                      t.main,
                                                      t.span(),
                                                      t.running_ns,
                                                      t.lock_waits,
                                                      t.lock_wait_ns,
                                                      t.sync_ns,
                                                      t.api_ns,
                                                      {}});
    if (const auto it = samples.find(t.global_tid); it != samples.end())
      s.sample_classes.assign(it->second.begin(), it->second.end());
  }
  // Where the GPU-launching threads were while their GPUs idled (thread switches only).
  if (trace.sched.size() == 0) return out;
  std::optional<AnalysisContext> ctx;
  for (const ThreadSchedule& sched : thread_schedules(trace)) {
    if (!sched.launches_gpu_work) continue;
    for (ThreadSummary& s : out) {
      if (make_global_tid(0, s.pid, s.tid) != (sched.global_tid & 0xFFFFFFFFFFFF)) continue;
      if (!ctx) ctx.emplace(trace, StepOptions{});
      const IntervalSet idle = ctx->owner_idle(ctx->owner_of(sched.global_tid)).clip(sched.span);
      if (idle.empty()) continue;
      s.gpu_idle_ns = idle.total();
      s.idle_running_ns = sched.running.intersect(idle).total();
      s.idle_blocked_ns = sched.blocked.intersect(idle).total();
      s.idle_other_ns = sched.other_off_cpu().intersect(idle).total();
    }
  }
  return out;
}

void add_memory(const Trace& trace, std::vector<DeviceSummary>& devices) {
  for (const MemorySeries& series : collect_gpu_memory(trace)) {
    const MemoryWindowStats stats = memory_stats(series);
    for (DeviceSummary& d : devices) {
      if (d.pid != pid_of(series.global_pid) || d.device != series.device) continue;
      if (d.rank != trace.rank_of(series.global_pid)) continue;
      d.peak_allocated = stats.peak;
      d.peak_time = stats.peak_time;
      d.peak_reserved = stats.peak_reserved;
    }
  }
}

// The model FLOPs of every operator name, and of each step with the time they take at the GPUs'
// peaks (PyTorch traces recorded with shapes; nothing otherwise).
void add_model_flops(const Trace& trace, const pytorch::OpLinks& links, const StepSet* steps, SummaryPart& part) {
  const pytorch::FlopsAttribution flops = pytorch::attribute_flops(trace, links);
  part.unknown_flop_ops = flops.costs.unknown;
  part.overflowing_flop_ops = flops.costs.overflowing;
  std::map<std::string_view, NamedFlops> by_name;
  for (size_t i = 0; i < flops.costs.cost.size(); ++i) {
    const pytorch::OpCost& c = flops.costs.cost[i];
    if (!c.known || !pytorch::is_model_flops(c.kind) || flops.costs.counted_by[i] != static_cast<int32_t>(i)) continue;
    NamedFlops& n = by_name[trace.str(trace.pytorch.ops.name[i])];
    ++n.calls;
    n.flops = sat_add(n.flops, c.flops);
  }
  if (by_name.empty()) return;
  for (auto& [name, n] : by_name) n.name = std::string(name), part.model_flop_ops.push_back(std::move(n));
  const std::map<int32_t, GpuPeaks> peaks = pytorch::device_peaks(trace);
  for (const auto& [device, p] : peaks) part.peak_gpus.emplace_back(p.name);
  std::sort(part.peak_gpus.begin(), part.peak_gpus.end());
  part.peak_gpus.erase(std::unique(part.peak_gpus.begin(), part.peak_gpus.end()), part.peak_gpus.end());
  if (steps == nullptr) return;
  const std::vector<pytorch::StepFlops> per_step = pytorch::step_flops(trace, *steps, flops, peaks);
  for (size_t k = 0; k < per_step.size() && k < part.steps.size(); ++k) {
    part.steps[k].model_flops = per_step[k].model_flops;
    part.steps[k].seconds_at_peak = per_step[k].seconds_at_peak;
    part.steps[k].peaks_known = per_step[k].peaks_known && per_step[k].model_flops > 0;
  }
}

// Each step's values; `by_owner`: each owner's step lengths (the CPU windows), owners as GPU units
// name them. With the operator links, the model FLOPs too.
void add_steps(const Trace& trace, const StepOptions& options, const pytorch::GpuLaunches& launches, SummaryPart& part,
               std::map<int64_t, std::vector<int64_t>>& by_owner, const pytorch::OpLinks* links = nullptr) {
  auto found = find_steps(trace, options, &launches);
  if (!found.ok() || found->steps.empty()) {
    if (links) add_model_flops(trace, *links, nullptr, part);
    return;
  }
  const bool is_pytorch = trace.source.format == "kineto-json";
  for (const StepWindow& w : found->steps) {
    by_owner[pytorch::owner_of_id(is_pytorch, w.global_pid)].push_back(sat_sub(w.end, w.start));
  }
  const auto work = gpu_work_per_step(trace, found->steps, &launches);
  part.has_steps = true;
  part.step_source = found->source;
  for (size_t k = 0; k < work.size(); ++k) {
    StepValues v;
    v.cpu_ns = sat_sub(found->steps[k].end, found->steps[k].start);
    if (work[k].start != kNoTime) {
      v.gpu = true;
      v.gpu_span_ns = sat_sub(work[k].end, work[k].start);
      v.gpu_busy_ns = work[k].busy;
      // Busy over the step's own length: its GPU span when the GPU ran past the CPU window.
      const int64_t base = std::max(v.cpu_ns, v.gpu_span_ns);
      if (base > 0)
        v.has_pct = true, v.busy_pct = 100.0 * static_cast<double>(v.gpu_busy_ns) / static_cast<double>(base);
    }
    part.steps.push_back(v);
  }
  if (links) add_model_flops(trace, *links, &*found, part);
}

// Counts a rule's rows and sums its first column (each rule lists a duration first).
class RuleTally : public RowSink {
 public:
  void begin(const std::vector<ColumnSpec>&) override {}
  void row(std::span<const Cell> cells) override {
    ++rows;
    if (!cells.empty() && cells[0].type == Cell::Type::kInt) ns += cells[0].i;
  }
  void end() override {}
  int64_t rows = 0, ns = 0;
};

RuleTally tally(const Trace& trace, nsys_analyze::RuleFn rule) {
  nsys_analyze::RuleArgs args;
  args.rows = -1;
  RuleTally t;
  (void)rule(trace, args, t);  // NoData: nothing to count
  return t;
}

}  // namespace

const char* StepRolesSummary::role_name(size_t role) {
  return pytorch::tb_role_name(static_cast<pytorch::TbRole>(role));
}

SummaryPart summary_part(const Trace& trace, const SummaryOptions& options) {
  SummaryPart s;
  s.input = trace.source.path;
  s.format = trace.source.format;
  if (trace.source.format == "kineto-json") {
    s.producer = fmt::format("PyTorch profiler (trace era {})", trace.pytorch.era);
    s.rank = trace.pytorch.rank;
    s.clock_base_ns = trace.pytorch.base_time_ns;
  } else if (trace.source.format == "tracedoc-capture") {
    s.producer = "tracedoc capture";
  } else if (trace.source.format == "ncu-report") {
    s.producer = "Nsight Compute (its profiled launches laid back to back)";
  } else if (!trace.source.product_version.empty()) {
    s.producer = "Nsight Systems " + trace.source.product_version;
  } else {
    s.producer = "Nsight Systems";
  }
  widen_table(trace.kernels, s.span_start, s.span_end, s.any_time);
  widen_table(trace.memcpys, s.span_start, s.span_end, s.any_time);
  widen_table(trace.memsets, s.span_start, s.span_end, s.any_time);
  widen_table(trace.api, s.span_start, s.span_end, s.any_time);
  widen_table(trace.ranges, s.span_start, s.span_end, s.any_time);
  widen_table(trace.pytorch.ops, s.span_start, s.span_end, s.any_time);
  widen_table(trace.graph_traces, s.span_start, s.span_end, s.any_time);
  widen_table(trace.os_calls, s.span_start, s.span_end, s.any_time);
  s.gpu_ops = static_cast<int64_t>(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  s.api_calls = static_cast<int64_t>(trace.api.size());
  s.ranges = static_cast<int64_t>(trace.ranges.size());
  s.cpu_ops = static_cast<int64_t>(trace.pytorch.ops.size());
  s.gap_threshold_ns = options.gap_threshold_ns;

  // Two independent halves on the task pool: the summary then costs little next to reading the trace.
  pytorch::GpuWork work;
  auto device_side = [&] {
    s.devices = device_summaries(trace, options.gap_threshold_ns);
    add_memory(trace, s.devices);
    work = add_breakdowns(trace, s.devices);
    s.kernels = totals_by_name(trace, trace.kernels.name, trace.kernels.start, trace.kernels.end, &s.kernel_total_ns,
                               options.quantile_capacity);
    s.copies = copy_parts(trace);
    s.collectives = collective_starts(trace, work);
  };
  std::map<int64_t, std::vector<int64_t>> steps_by_owner;
  Result<pytorch::TbOverview> overview = NoData("not a PyTorch trace");
  auto host_side = [&] {
    // The operator links carry the launch links too: one pass serves the steps and the dispatch figures.
    if (trace.pytorch.ops.size() > 0) {
      const pytorch::OpLinks links = pytorch::link_ops(trace);
      add_steps(trace, options.steps, links.launches, s, steps_by_owner, &links);
      s.has_dispatch = true;
      s.dispatch = dispatch_part(trace, links);
    } else {
      add_steps(trace, options.steps, pytorch::link_gpu_launches(trace), s, steps_by_owner);
    }
    if (trace.source.format == "kineto-json") overview = pytorch::tb_overview(trace);
    s.api = totals_by_name(trace, trace.api.name, trace.api.start, trace.api.end, nullptr);
    s.threads = thread_summaries(trace);
    const RuleTally sync = tally(trace, nsys_analyze::cuda_api_sync);
    const RuleTally copies = tally(trace, nsys_analyze::cuda_memcpy_sync);
    s.findings.sync_calls = sync.rows, s.findings.sync_call_ns = sync.ns;
    s.findings.sync_copies = copies.rows, s.findings.sync_copy_ns = copies.ns;
    s.findings.pageable_async_copies = tally(trace, nsys_analyze::cuda_memcpy_async).rows;
    s.findings.sync_memsets = tally(trace, nsys_analyze::cuda_memset_sync).rows;
  };
  parallel_invoke({device_side, host_side});
  add_tb_overview(overview, s);  // matched to the devices the other half found
  s.pytorch_units = work.pytorch;
  s.units = unit_parts(work, s.devices, steps_by_owner);
  return s;
}

namespace {

NcuSummary ncu_summary(const Trace& trace, const std::vector<NamedTotal>& top_kernels) {
  const NcuJoin join = join_ncu(trace);
  NcuSummary out;
  out.reports = static_cast<int64_t>(trace.ncu_reports.size());
  out.launches = static_cast<int64_t>(join.launches);
  out.matched = static_cast<int64_t>(join.matched);
  const std::map<std::string_view, NcuLaunchRef> by_name = launch_by_name(trace, join.answered_by);
  for (const NamedTotal& k : top_kernels) {
    const auto it = by_name.find(k.name);
    if (it == by_name.end()) continue;
    const NcuReport& report = *trace.ncu_reports[static_cast<size_t>(it->second.report)];
    out.kernels.push_back({k.name, it->second.report, it->second.result,
                           ncu_answers(report, report.results[static_cast<size_t>(it->second.result)])});
  }
  return out;
}

}  // namespace

Result<int64_t> gap_threshold_from_ms(double ms) {
  constexpr double kMaxMs = 1e9;
  if (!(ms >= 0 && ms <= kMaxMs))
    return UsageError(fmt::format("the gap must be from 0 to {:g} ms, not {}", kMaxMs, ms));
  return static_cast<int64_t>(std::llround(ms * 1e6));
}

TraceSummary summarize(const Trace& trace, const SummaryOptions& options) {
  std::vector<SummaryPart> parts;
  parts.push_back(summary_part(trace, options));
  TraceSummary s = merge_summary_parts(std::move(parts), options);
  if (!trace.ncu_reports.empty()) s.ncu = ncu_summary(trace, s.top_kernels);
  s.gpu_metrics = gpu_metrics_by_device(trace);
  return s;
}

}  // namespace tracedoc
