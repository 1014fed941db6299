// Rules over the GPU's own counters (nsys --gpu-metrics-devices; analysis/gpu_metrics.h): what the
// hardware measured while the kernels ran, not what their durations suggest.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/gpu_metrics.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

const MetricSeries* series_of(const std::vector<MetricSeries>& series, int32_t device, MetricKind kind) {
  for (const MetricSeries& s : series) {
    if (s.device == device && s.kind == kind) return &s;
  }
  return nullptr;
}

}  // namespace

void sm_underused(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  if (t.gpu_metrics.size() == 0) return;
  const std::vector<MetricSeries> series = gpu_metric_series(t);
  const KernelTable& k = t.kernels;
  const double max_sm_active = p.get("max_sm_active");
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const MetricSeries* sm = series_of(series, u.device, MetricKind::kSmActive);
    if (sm == nullptr) continue;
    const MetricSeries* warps = series_of(series, u.device, MetricKind::kWarpsInFlight);
    // Per kernel name: SM Active (and warps in flight) over its executions.
    struct Kernel {
      MetricLevels sm, warps;
      int64_t instances = 0;
      uint32_t row = 0;  // one instance, for its launch configuration
    };
    std::map<StrId, Kernel> kernels;
    MetricLevels all;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind != pytorch::WorkKind::kKernel || it.end <= it.start) continue;
      Kernel& kn = kernels[k.name[it.row]];
      kn.sm.add_series(*sm, it.interval());
      if (warps != nullptr) kn.warps.add_series(*warps, it.interval());
      all.add_series(*sm, it.interval());
      if (kn.instances++ == 0) kn.row = it.row;
    }
    if (all.empty()) continue;
    Finding f;
    int64_t low_ns = 0;
    for (auto& [name, kn] : kernels) {
      if (kn.sm.empty()) continue;
      const double active = kn.sm.mean();
      if (active >= max_sm_active) continue;
      // Were its work spread over every SM, it would take `active` of the time it took.
      const auto idle_share = 1.0 - active / 100.0;
      const auto wasted = static_cast<int64_t>(static_cast<double>(kn.sm.covered()) * idle_share);
      f.savings_ns = sat_add(f.savings_ns, wasted);
      low_ns = sat_add(low_ns, kn.sm.covered());
      const uint32_t r = kn.row;
      const int64_t blocks = static_cast<int64_t>(k.grid_x[r]) * k.grid_y[r] * k.grid_z[r];
      const int64_t threads = static_cast<int64_t>(k.block_x[r]) * k.block_y[r] * k.block_z[r];
      f.offenders.push_back(
          {clipped_name(t.str(name)), kn.instances, wasted,
           fmt::format("SM active {:.0f}%{}; {} blocks of {} threads", active,
                       kn.warps.empty() ? "" : fmt::format(", warps in flight {:.0f}%", kn.warps.mean()), blocks,
                       threads)});
    }
    rate(f, ctx, p.warning(), p.critical());
    if (f.savings_ns == 0 || !gate_on_basis(f, ctx, 0, p.get("min_share"), true)) continue;
    keep_top(f.offenders, 5);
    int32_t sm_count = 0;
    for (const DeviceInfo& d : t.devices) {
      if (d.id == u.device) sm_count = d.sm_count;
    }
    f.scope = ctx.unit_label(u);
    f.title = fmt::format(
        "kernels run with most SMs idle: {} of kernel time at under {:.0f}% SM Active as the GPU measured it "
        "(all kernels: {:.0f}%)",
        human_duration(low_ns), max_sm_active, all.mean());
    f.confidence = 0.7;
    f.figures = {{"kernel_ns", static_cast<double>(all.covered()), "ns"},
                 {"sm_active_pct", all.mean(), "%"},
                 {"low_sm_active_kernel_ns", static_cast<double>(low_ns), "ns"},
                 {"sm_count", static_cast<double>(sm_count), "count"}};
    f.remedy = fmt::format(
        "These kernels leave most of the GPU's {} SMs without work while they run: too few blocks (a grid "
        "smaller than the SM count: a small batch, a reduction into few outputs), kernels too short to fill "
        "the GPU, or work serialized on one stream. Give each launch more blocks (a larger batch, split-K "
        "or stream-K GEMMs, torch.compile's autotuning), fuse small kernels (torch.compile, CUDA graphs; "
        "optimizers with foreach=True or fused=True update every parameter in a few launches), and run "
        "independent work on other streams so kernels overlap.",
        sm_count > 0 ? std::to_string(sm_count) : std::string("many"));
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
