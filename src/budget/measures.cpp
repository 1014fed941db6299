#include "budget/measures.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "analysis/checked_math.h"
#include "analysis/cross_rank.h"
#include "analysis/gpu_memory.h"
#include "analysis/host_link.h"
#include "analysis/intervals.h"
#include "analysis/statistics.h"
#include "analysis/context.h"
#include "analysis/part_codec.h"

namespace tracedoc::budget {

namespace {

void measure_steps(AnalysisContext& ctx, MeasurePart& m) {
  const StepSet* steps = ctx.steps();
  if (!steps) return;
  m.has_steps = true;
  m.step_source = steps->source;
  std::set<int64_t> owners;
  for (const StepWindow& w : steps->steps) owners.insert(ctx.owner_of(w.global_pid));
  for (int64_t owner : owners) {
    for (const Interval& w : ctx.windows_of(owner)) m.step_ns.push_back(w.length());
  }
}

// Each GPU unit's busy and copy time inside its windows and its computation time (the union of its
// computation kernels, as the straggler rule sums it); the group collectives' starts.
void measure_gpus(AnalysisContext& ctx, bool ranks, MeasurePart& m) {
  const Trace& t = ctx.trace();
  const pytorch::GpuWork& work = ctx.gpu_work();
  for (const pytorch::GpuUnit& u : work.units) {
    UnitPart g{u.rank, u.pid, u.device, ctx.device_name(u.device)};
    const std::vector<Interval> windows = ctx.unit_windows(u);
    for (const Interval& w : windows) g.window_ns = sat_add(g.window_ns, w.length());
    std::vector<Interval> copies;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind == pytorch::WorkKind::kMemcpy && crosses_host_link(t.memcpys.copy_kind[it.row]))
        copies.push_back(it.interval());
    }
    g.busy_ns = ctx.busy(u).covered_within(windows);
    g.copy_ns = IntervalSet::busy_union(std::move(copies)).covered_within(windows);
    if (ranks) g.compute_ns = u.busy(1u << static_cast<int>(pytorch::WorkClass::kComputation)).total();
    m.gpus.push_back(std::move(g));
  }
  if (ranks) m.collectives = collective_starts(t, work);
}

void measure_memory(AnalysisContext& ctx, MeasurePart& m) {
  const Trace& t = ctx.trace();
  for (const MemorySeries& series : collect_gpu_memory(t)) {
    m.memory_recorded = true;
    UnitPart u{t.rank_of(series.global_pid), pid_of(series.global_pid), series.device, ctx.device_name(series.device)};
    u.peak_bytes = memory_stats(series).peak;
    m.memory.push_back(std::move(u));
  }
}

// Every kernel name's count and summed duration (as cuda_gpu_kern_sum sums them). Not the summary's
// per-name totals: kernel_total_ns, the basis of share_max_pct, counts the kernels without a name too.
void measure_kernel_names(const Trace& t, MeasurePart& m) {
  const KernelTable& k = t.kernels;
  std::vector<int64_t> count(t.strings.size(), 0), total(t.strings.size(), 0);
  for (size_t i = 0; i < k.size(); ++i) {
    const int64_t d = k.end[i] > k.start[i] ? sat_sub(k.end[i], k.start[i]) : 0;
    m.kernel_total_ns = sat_add(m.kernel_total_ns, d);
    const StrId name = k.name[i];
    if (name == kNoStr || name >= t.strings.size()) continue;
    ++count[name];
    total[name] = sat_add(total[name], d);
  }
  for (StrId id = 0; id < count.size(); ++id) {
    if (count[id]) m.kernels.push_back({std::string(t.str(id)), count[id], total[id], {}});
  }
}

// The budget's [[kernel]] entries over the kernel names of all parts: whether each entry's regex
// finds a name is decided once per distinct name.
void measure_kernels(const std::vector<MeasurePart>& parts, const Budget& budget, Measures& m) {
  m.kernels.assign(budget.kernels.size(), {});
  std::vector<const std::vector<NamedTotal>*> lists;
  for (const MeasurePart& p : parts) {
    m.kernel_total_ns = sat_add(m.kernel_total_ns, p.kernel_total_ns);
    lists.push_back(&p.kernels);
  }
  for (const NamedTotal& name : merge_named_totals(lists)) {
    for (size_t e = 0; e < budget.kernels.size(); ++e) {
      if (!budget.kernels[e].pattern->found_in(name.name)) continue;
      m.kernels[e].count += name.count;
      m.kernels[e].total_ns = sat_add(m.kernels[e].total_ns, name.total_ns);
    }
  }
}

void measure_ranks(const std::vector<MeasurePart>& parts, const std::vector<std::string>& labels, Measures& m) {
  std::vector<int64_t> compute;
  CollectiveStarts starts;
  size_t units = 0;
  for (const MeasurePart& p : parts) units += p.gpus.size();
  for (const MeasurePart& p : parts) {
    add_collective_starts(starts, p.collectives, compute.size(), units, 0);
    for (const UnitPart& g : p.gpus) compute.push_back(g.compute_ns);
  }
  m.ranks.gpus = static_cast<int64_t>(units);
  if (units < 2) return;
  const ComputeBalance balance = compute_balance(std::move(compute));
  m.ranks.slowest = labels[balance.slowest];
  m.ranks.slowest_compute_ns = balance.compute_ns[balance.slowest];
  m.ranks.median_compute_ns = balance.median_ns;
  const CrossRankSkew skew = collective_skew(starts, units);
  m.ranks.collectives = skew.matched;
  m.ranks.skew_p50_ns = skew.median_skew_ns;
}

bool measures_ranks(const Budget& budget) { return budget.compute_imbalance_max || budget.skew_p50_max_ms; }

// The diagnosis a [findings] budget reads: only the forbidden rules, on the budget's steps.
diagnose::DiagnoseOptions forbidden_rules(const Budget& budget) {
  diagnose::DiagnoseOptions options = budget.diagnose_options;
  options.rules = budget.forbid;
  options.steps.marker = budget.step_marker;
  return options;
}

MeasurePart part_of(AnalysisContext& ctx, const Budget& budget, MeasureScope scope) {
  const Trace& trace = ctx.trace();
  MeasurePart m;
  m.input = trace.source.path;
  m.pytorch = ctx.pytorch();
  if (m.pytorch) m.rank = trace.pytorch.rank, m.clock_base_ns = trace.pytorch.base_time_ns;
  m.scope = scope;
  measure_steps(ctx, m);
  const bool all = scope == MeasureScope::kAll;
  measure_gpus(ctx, all && measures_ranks(budget), m);
  if (!all) return m;
  if (budget.memory_peak_max_gb) measure_memory(ctx, m);
  if (!budget.kernels.empty()) measure_kernel_names(trace, m);
  if (!budget.forbid.empty()) {
    // On the same steps and GPU work as the figures above.
    m.diagnosed = true;
    m.diagnosis = diagnose::diagnose_part(ctx, forbidden_rules(budget));
  }
  return m;
}

void place_rank(MeasurePart& p, TimeNs shift) {
  for (UnitPart& g : p.gpus) {
    if (g.rank < 0) g.rank = p.rank;
  }
  for (UnitPart& g : p.memory) {
    if (g.rank < 0) g.rank = p.rank;
  }
  CollectiveStarts moved;
  add_collective_starts(moved, p.collectives, 0, p.gpus.size(), shift);
  p.collectives = std::move(moved);
}

}  // namespace

double GpuMeasure::busy_pct() const {
  return window_ns > 0 ? 100.0 * static_cast<double>(busy_ns) / static_cast<double>(window_ns) : 0;
}

double GpuMeasure::copy_pct() const {
  return window_ns > 0 ? 100.0 * static_cast<double>(copy_ns) / static_cast<double>(window_ns) : 0;
}

int64_t Measures::step_percentile(int pct) const { return percentile_ns(step_ns, pct); }

double Measures::overall_busy_pct() const {
  int64_t busy = 0, window = 0;
  for (const GpuMeasure& g : gpus) busy = sat_add(busy, g.busy_ns), window = sat_add(window, g.window_ns);
  return window > 0 ? 100.0 * static_cast<double>(busy) / static_cast<double>(window) : 0;
}

MeasurePart measure_part(const Trace& trace, const Budget& budget, MeasureScope scope, bool one_of_ranks) {
  StepOptions steps;
  steps.marker = budget.step_marker;
  AnalysisContext ctx(trace, steps);
  if (one_of_ranks) ctx.name_as_rank_of_job();
  return part_of(ctx, budget, scope);
}

Result<Measures> merge_measure_parts(std::vector<MeasurePart> parts, const Budget& budget,
                                     const std::string& directory) {
  Measures m;
  if (parts.empty()) return m;
  if (!directory.empty() && parts[0].pytorch) order_as_rank_directory(parts, place_rank);
  m.input = directory.empty() ? parts[0].input : directory;
  const std::optional<StepSource> source = merged_step_source(parts);
  if (source) m.step_source = step_source_name(*source);
  std::vector<std::string> labels;
  for (const MeasurePart& p : parts) {
    if (source && p.has_steps && p.step_source == *source)
      m.step_ns.insert(m.step_ns.end(), p.step_ns.begin(), p.step_ns.end());
    for (const UnitPart& g : p.gpus) {
      labels.push_back(gpu_unit_label(g.rank, g.pid, g.device, p.pytorch, g.device_name));
      m.gpus.push_back({labels.back(), g.window_ns, g.busy_ns, g.copy_ns});
    }
    m.memory_recorded |= p.memory_recorded;
    for (const UnitPart& s : p.memory)
      m.memory.push_back({gpu_unit_label(s.rank, s.pid, s.device, p.pytorch, s.device_name), s.peak_bytes});
  }
  std::sort(m.step_ns.begin(), m.step_ns.end());
  if (parts[0].scope == MeasureScope::kBaseline) return m;
  if (measures_ranks(budget)) measure_ranks(parts, labels, m);
  if (!budget.kernels.empty()) measure_kernels(parts, budget, m);
  std::vector<diagnose::DiagnosePart> diagnoses;
  for (MeasurePart& p : parts) {
    if (p.diagnosed) diagnoses.push_back(std::move(p.diagnosis));
  }
  if (!diagnoses.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(diagnose::Diagnosis found,
                              diagnose::merge_diagnose_parts(std::move(diagnoses), forbidden_rules(budget), directory));
    m.diagnosis = std::move(found);
  }
  return m;
}

// The part's fields, once, for both directions (analysis/part_codec.h).
template <typename F>
void fields(F& f, UnitPart& u) {
  f(u.rank), f(u.pid), f(u.device), f(u.device_name), f(u.window_ns), f(u.busy_ns), f(u.copy_ns), f(u.compute_ns);
  f(u.peak_bytes);
}
template <typename F>
void fields(F& f, MeasurePart& p) {
  f(p.input), f(p.pytorch), f(p.rank), f(p.clock_base_ns), f(p.scope), f(p.has_steps), f(p.step_source);
  f(p.step_ns), f(p.gpus), f(p.memory_recorded), f(p.memory), f(p.collectives), f(p.kernel_total_ns), f(p.kernels);
  f(p.diagnosed), f(p.diagnosis);
}

namespace {
constexpr part_codec::Format kFormat{"TDMP", 3, "budget measure part"};
}  // namespace

std::string encode_measure_part(const MeasurePart& part) { return part_codec::encode(part, kFormat); }

Result<MeasurePart> decode_measure_part(std::string_view bytes) {
  return part_codec::decode<MeasurePart>(bytes, kFormat);
}

Measures measure(const Trace& trace, const Budget& budget, MeasureScope scope) {
  std::vector<MeasurePart> parts;
  parts.push_back(measure_part(trace, budget, scope));
  // One part: its steps are found one way, so its diagnosis merges.
  return *merge_measure_parts(std::move(parts), budget);
}

}  // namespace tracedoc::budget
