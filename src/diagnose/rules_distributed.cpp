// Rules for distributed runs: communication the computation does not hide (exposed_comm), and one
// rank that makes the others wait (straggler).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/pytorch/gpu_breakdowns.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

void exposed_comm(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const pytorch::CommCompOverlap c = pytorch::comm_comp_overlap(u);
    if (c.communication <= 0) continue;
    const int64_t exposed = sat_sub(c.communication, c.overlap);
    const std::vector<Interval> windows = ctx.unit_windows(u);
    const double share = share_of(exposed, total_length(windows));
    if (share < p.get("min_share")) continue;
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = exposed;
    rate(f, ctx, p.warning(), p.critical());
    std::map<StrId, Offender> kernels;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.cls != pytorch::WorkClass::kCommunication || it.kind != pytorch::WorkKind::kKernel) continue;
      Offender& o = kernels[t.kernels.name[it.row]];
      o.name = std::string(t.str(t.kernels.name[it.row]));
      ++o.count;
      o.total_ns = sat_add(o.total_ns, sat_sub(it.end, it.start));
    }
    for (auto& [id, o] : kernels) f.offenders.push_back(o);
    keep_top(f.offenders, 5);
    f.title = fmt::format(
        "exposed communication: {} of collective time runs with no computation beside it ({} of the {}, {} hidden)",
        human_duration(exposed), human_percent(share), ctx.steps() ? "steps" : "run",
        human_percent(share_of(c.overlap, c.communication)));
    f.confidence = 0.6;
    f.figures = {{"communication_ns", static_cast<double>(c.communication), "ns"},
                 {"overlap_ns", static_cast<double>(c.overlap), "ns"},
                 {"exposed_ns", static_cast<double>(exposed), "ns"},
                 {"exposed_share", share, "fraction"}};
    f.remedy =
        "Overlap gradient communication with the backward pass: DDP's bucketing (bucket_cap_mb, "
        "gradient_as_bucket_view=True), FSDP's backward_prefetch / forward_prefetch, no "
        "synchronization between backward and the optimizer, and fewer, larger collectives. If the "
        "collectives wait for a slower rank, see straggler.";
    out.push_back(std::move(f));
  }
}

void straggler(const JobInputs& job, const Params& p, int64_t basis_ns, std::vector<Finding>& out) {
  const std::vector<OwnerWork>& ranks = job.owners;
  if (ranks.size() < 2) return;
  std::vector<int64_t> compute;
  for (const OwnerWork& r : ranks) compute.push_back(r.compute_ns);
  const int64_t median = median_ns(compute);
  const auto slowest = std::max_element(
      ranks.begin(), ranks.end(), [](const OwnerWork& a, const OwnerWork& b) { return a.compute_ns < b.compute_ns; });
  if (median <= 0) return;
  const double ratio = static_cast<double>(slowest->compute_ns) / static_cast<double>(median);
  if (ratio < p.get("min_ratio")) return;
  Finding f;
  f.scope = "trace";
  f.savings_ns = sat_sub(slowest->compute_ns, median);
  rate(f, basis_ns, p.warning(), p.critical());
  for (const OwnerWork& r : ranks) {
    f.offenders.push_back({r.label, 1, r.compute_ns,
                           fmt::format("compute {}, communication {}", human_duration(r.compute_ns),
                                       human_duration(r.communication_ns))});
  }
  keep_top(f.offenders, 8);
  f.title =
      fmt::format("straggler: {} computes {:.2f}x as long as the median rank ({} more); the others wait in collectives",
                  slowest->label, ratio, human_duration(f.savings_ns));
  f.confidence = 0.7;
  f.figures = {{"ranks", static_cast<double>(ranks.size()), "count"},
               {"slowest_compute_ns", static_cast<double>(slowest->compute_ns), "ns"},
               {"median_compute_ns", static_cast<double>(median), "ns"},
               {"ratio", ratio, "x"}};
  f.remedy =
      "Balance the work across ranks: equal batch sizes and sequence lengths per rank (bucket by "
      "length), the same GPU model and clocks, no extra work (logging, evaluation, checkpointing) on "
      "one rank inside the step; check that rank's node for thermal throttling or a slower link.";
  out.push_back(std::move(f));
}

}  // namespace tracedoc::diagnose
