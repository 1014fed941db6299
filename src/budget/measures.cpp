#include "budget/measures.h"

#include <algorithm>
#include <set>

#include "analysis/checked_math.h"
#include "analysis/cross_rank.h"
#include "analysis/gpu_memory.h"
#include "analysis/host_link.h"
#include "analysis/intervals.h"
#include "analysis/statistics.h"
#include "analysis/context.h"

namespace tracedoc::budget {

namespace {

void measure_steps(AnalysisContext& ctx, Measures& m) {
  const StepSet* steps = ctx.steps();
  if (!steps) return;
  m.step_source = step_source_name(steps->source);
  std::set<int64_t> owners;
  for (const StepWindow& w : steps->steps) owners.insert(ctx.owner_of(w.global_pid));
  for (int64_t owner : owners) {
    for (const Interval& w : ctx.windows_of(owner)) m.step_ns.push_back(w.length());
  }
  std::sort(m.step_ns.begin(), m.step_ns.end());
}

void measure_gpus(AnalysisContext& ctx, Measures& m) {
  const Trace& t = ctx.trace();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    GpuMeasure g;
    g.label = ctx.unit_label(u);
    const std::vector<Interval> windows = ctx.unit_windows(u);
    for (const Interval& w : windows) g.window_ns = sat_add(g.window_ns, w.length());
    std::vector<Interval> copies;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind == pytorch::WorkKind::kMemcpy && crosses_host_link(t.memcpys.copy_kind[it.row]))
        copies.push_back(it.interval());
    }
    g.busy_ns = ctx.busy(u).covered_within(windows);
    g.copy_ns = IntervalSet::busy_union(std::move(copies)).covered_within(windows);
    m.gpus.push_back(std::move(g));
  }
}

void measure_memory(AnalysisContext& ctx, Measures& m) {
  const Trace& t = ctx.trace();
  for (const MemorySeries& series : collect_gpu_memory(t)) {
    m.memory_recorded = true;
    // Labelled as the GPU units are ("rank 0 GPU 0 (...)", "pid 4242 GPU 0 (...)").
    pytorch::GpuUnit unit;
    unit.rank = t.rank_of(series.global_pid);
    unit.pid = pid_of(series.global_pid);
    unit.device = series.device;
    m.memory.push_back({ctx.unit_label(unit), memory_stats(series).peak});
  }
}

void measure_ranks(AnalysisContext& ctx, Measures& m) {
  const pytorch::GpuWork& work = ctx.gpu_work();
  m.ranks.gpus = static_cast<int64_t>(work.units.size());
  if (work.units.size() < 2) return;
  const ComputeBalance balance = compute_balance(work);
  m.ranks.slowest = ctx.unit_label(work.units[balance.slowest]);
  m.ranks.slowest_compute_ns = balance.compute_ns[balance.slowest];
  m.ranks.median_compute_ns = balance.median_ns;
  const CrossRankSkew skew = collective_skew(ctx.trace(), work);
  m.ranks.collectives = skew.matched;
  m.ranks.skew_p50_ns = skew.median_skew_ns;
}

void measure_kernels(const Trace& t, const Budget& budget, Measures& m) {
  const KernelTable& k = t.kernels;
  m.kernels.assign(budget.kernels.size(), {});
  // Whether each entry's regex finds a name, decided once per distinct name: -1 not yet, 0 / 1.
  std::vector<std::vector<int8_t>> found(budget.kernels.size(), std::vector<int8_t>(t.strings.size(), -1));
  for (size_t i = 0; i < k.size(); ++i) {
    const int64_t d = k.end[i] > k.start[i] ? sat_sub(k.end[i], k.start[i]) : 0;  // as cuda_gpu_kern_sum
    m.kernel_total_ns = sat_add(m.kernel_total_ns, d);
    const StrId name = k.name[i];
    if (name == kNoStr || name >= t.strings.size()) continue;
    for (size_t e = 0; e < budget.kernels.size(); ++e) {
      int8_t& hit = found[e][name];
      if (hit < 0) {
        hit = budget.kernels[e].pattern->found_in(t.str(name)) ? 1 : 0;
      }
      if (!hit) continue;
      ++m.kernels[e].count;
      m.kernels[e].total_ns = sat_add(m.kernels[e].total_ns, d);
    }
  }
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

Measures measure(const Trace& trace, const Budget& budget, MeasureScope scope) {
  Measures m;
  m.input = trace.source.path;
  StepOptions steps;
  steps.marker = budget.step_marker;
  AnalysisContext ctx(trace, steps);
  measure_steps(ctx, m);
  measure_gpus(ctx, m);
  if (scope == MeasureScope::kBaseline) return m;
  if (budget.memory_peak_max_gb) measure_memory(ctx, m);
  if (budget.compute_imbalance_max || budget.skew_p50_max_ms) measure_ranks(ctx, m);
  if (!budget.kernels.empty()) measure_kernels(trace, budget, m);
  if (!budget.forbid.empty()) {
    // Only the forbidden rules run, on the same steps and GPU work as the figures above.
    diagnose::DiagnoseOptions options = budget.diagnose_options;
    options.rules = budget.forbid;
    options.steps = steps;
    m.diagnosis = diagnose::diagnose(ctx, options);
  }
  return m;
}

}  // namespace tracedoc::budget
