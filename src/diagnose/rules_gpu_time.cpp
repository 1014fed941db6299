// Rules on where the GPU's time goes inside the steps: idle overall (gpu_idle), idle in one regular
// gap per step (comb_pattern), waiting for data (dataloader_bound), waiting for launches
// (launch_bound).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/pytorch/launch_stats.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

bool is_data_loading(std::string_view name) {
  return name.starts_with("enumerate(DataLoader)") || name.starts_with("enumerate(DataPipe)");
}

const char* basis_word(Context& ctx) { return ctx.steps() ? "steps" : "run"; }

}  // namespace

void gpu_idle(Context& ctx, const Params& p, std::vector<Finding>& out) {
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const std::vector<Interval> windows = ctx.unit_windows(u);
    const int64_t window_ns = total_length(windows);
    if (window_ns <= 0) continue;
    const IntervalSet& busy = ctx.busy(u);
    const std::vector<Interval> idle = idle_within(busy, windows);
    const int64_t idle_ns = total_length(idle);
    const double idle_share = share_of(idle_ns, window_ns);
    if (idle_share < p.get("min_idle")) continue;
    std::vector<Interval> long_gaps;
    for (const Interval& g : idle) {
      if (g.length() > static_cast<int64_t>(p.get("min_gap_ns"))) long_gaps.push_back(g);
    }
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = total_length(long_gaps);
    rate(f, ctx, p.warning(), p.critical());
    f.title = fmt::format("GPU idle {} of the {}: {} in {} gaps longer than {}", human_percent(idle_share),
                          basis_word(ctx), human_duration(f.savings_ns), long_gaps.size(),
                          human_duration(static_cast<int64_t>(p.get("min_gap_ns"))));
    f.confidence = 0.8;
    f.figures = {{"window_ns", static_cast<double>(window_ns), "ns"},
                 {"busy_ns", static_cast<double>(sat_sub(window_ns, idle_ns)), "ns"},
                 {"idle_share", idle_share, "fraction"},
                 {"long_gaps", static_cast<double>(long_gaps.size()), "count"},
                 {"long_gap_ns", static_cast<double>(f.savings_ns), "ns"}};
    f.offenders = ctx.cpu_activity_during(IntervalSet::busy_union(long_gaps), u.owner, 5);
    f.ranges = longest_ranges(long_gaps, 3, ctx.unit_label(u), "GPU idle");
    f.remedy =
        "The GPU waits for the CPU. See what the CPU does during the gaps (offenders): move data loading "
        "and preprocessing off the training thread (DataLoader num_workers, pin_memory), remove host "
        "synchronization from the loop, batch many small launches (CUDA graphs, torch.compile) or give "
        "each launch more work (larger batch).";
    out.push_back(std::move(f));
  }
}

void comb_pattern(Context& ctx, const Params& p, std::vector<Finding>& out) {
  if (!ctx.steps()) return;
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const std::vector<Interval>& windows = ctx.windows_of(u.owner);
    if (static_cast<double>(windows.size()) < p.get("min_steps")) continue;
    const IntervalSet& busy = ctx.busy(u);
    // Per step, its largest GPU idle stretch (leading and trailing idle included).
    std::vector<Interval> largest;
    std::vector<double> shares;
    for (const Interval& w : windows) {
      Interval best{w.start, w.start};
      const IntervalSet idle = busy.clip(w).complement_within(w);
      for (const Interval& g : idle.intervals()) {
        if (g.length() > best.length()) best = g;
      }
      largest.push_back(best);
      shares.push_back(share_of(best.length(), w.length()));
    }
    std::vector<double> reordered = shares;  // median() reorders what it is given
    const double median_share = median(std::span<double>(reordered));
    if (median_share < p.get("min_gap_share")) continue;
    std::vector<Interval> regular;
    std::vector<int64_t> lengths, steps;
    for (size_t k = 0; k < largest.size(); ++k) {
      steps.push_back(windows[k].length());
      if (shares[k] < 0.5 * median_share) continue;
      regular.push_back(largest[k]);
      lengths.push_back(largest[k].length());
    }
    const double regular_share = static_cast<double>(regular.size()) / static_cast<double>(windows.size());
    const double cv = coefficient_of_variation(lengths);
    if (regular_share < p.get("min_regular") || cv > p.get("max_cv")) continue;

    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = total_length(regular);
    rate(f, ctx, p.warning(), p.critical());
    f.offenders = ctx.cpu_activity_during(IntervalSet::busy_union(regular), u.owner, 5);
    const int64_t median_gap = median_ns(lengths), median_step = median_ns(steps);
    f.title = fmt::format("comb pattern: the GPU waits {} of each step in one gap of {} (every {})",
                          human_percent(median_share), human_duration(median_gap), human_duration(median_step));
    if (!f.offenders.empty()) f.title += fmt::format("; the CPU is in {} meanwhile", f.offenders.front().name);
    f.confidence = cv < 0.25 ? 0.9 : 0.7;
    f.figures = {{"steps", static_cast<double>(windows.size()), "count"},
                 {"median_step_ns", static_cast<double>(median_step), "ns"},
                 {"median_gap_ns", static_cast<double>(median_gap), "ns"},
                 {"median_gap_share", median_share, "fraction"},
                 {"steps_with_gap", regular_share, "fraction"},
                 {"gap_cv", cv, "ratio"}};
    f.ranges =
        longest_ranges(std::vector<Interval>(regular.begin(), regular.begin() + std::min<size_t>(3, regular.size())), 3,
                       ctx.unit_label(u), "idle gap");
    f.remedy =
        "The CPU prepares each batch while the GPU waits. Overlap them: DataLoader(num_workers>0, "
        "pin_memory=True, prefetch_factor, persistent_workers=True), move CPU preprocessing to the "
        "workers or to the GPU (NVIDIA DALI), and copy batches with non_blocking=True.";
    out.push_back(std::move(f));
  }
}

void dataloader_bound(Context& ctx, const Params& p, std::vector<Finding>& out) {
  // Data-loading ranges per owner (CPU-only traces included).
  std::map<int64_t, std::vector<Interval>> loading;
  std::map<int64_t, int64_t> calls;
  const RangeTable& r = ctx.trace().ranges;
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.end[i] == kNoTime || r.end[i] <= r.start[i] || !is_data_loading(ctx.trace().str(r.text[i]))) continue;
    const int64_t owner = ctx.owner_of(r.global_tid[i]);
    loading[owner].push_back({r.start[i], r.end[i]});
    ++calls[owner];
  }
  for (auto& [owner, intervals] : loading) {
    const IntervalSet dl = IntervalSet::busy_union(intervals);
    std::vector<Interval> windows = ctx.windows_of(owner);
    if (windows.empty()) windows = {dl.span()};
    const int64_t window_ns = total_length(windows);
    int64_t dl_ns = 0;
    for (const Interval& w : windows) dl_ns = sat_add(dl_ns, dl.covered_within(w));
    // Per step: within each step's CPU window, where the loading is recorded (a stretched window
    // would hand the next step's loading to the step whose GPU work is still running).
    const std::vector<Interval>& cpu = ctx.cpu_windows_of(owner);
    std::vector<int64_t> per_step;
    for (const Interval& w : cpu.empty() ? windows : cpu) per_step.push_back(dl.covered_within(w));
    const double share = share_of(dl_ns, window_ns);
    if (share < p.get("min_share")) continue;
    // With a GPU, only the loading time during which the GPU idles costs anything.
    bool has_gpu = false;
    for (const pytorch::GpuUnit& u : ctx.gpu_work().units) has_gpu |= u.owner == owner;
    int64_t exposed = dl_ns;
    if (has_gpu) {
      const IntervalSet in_windows = IntervalSet::busy_union(windows);
      exposed = dl.intersect(in_windows).subtract(ctx.owner_busy(owner)).total();
    }
    Finding f;
    f.scope = ctx.owner_label(owner);
    f.savings_ns = exposed;
    rate(f, ctx, p.warning(), p.critical());
    f.title =
        fmt::format("data loading takes {} of the {} ({} per step, median){}", human_percent(share), basis_word(ctx),
                    human_duration(median_ns(per_step)),
                    has_gpu ? fmt::format("; the GPU idles through {} of it", human_duration(exposed)) : std::string());
    f.confidence = 0.9;
    f.figures = {{"loading_ns", static_cast<double>(dl_ns), "ns"},
                 {"loading_share", share, "fraction"},
                 {"median_per_step_ns", static_cast<double>(median_ns(per_step)), "ns"},
                 {"gpu_idle_while_loading_ns", static_cast<double>(exposed), "ns"},
                 {"calls", static_cast<double>(calls[owner]), "count"}};
    f.offenders = ctx.cpu_activity_during(dl, owner, 3);
    std::vector<Interval> longest(dl.intervals().begin(), dl.intervals().end());
    f.ranges = longest_ranges(std::move(longest), 3, f.scope, "data loading");
    f.remedy =
        "Load and preprocess batches in parallel with training: DataLoader(num_workers=N>0, "
        "pin_memory=True, persistent_workers=True, prefetch_factor=2+); cache decoded data; move "
        "augmentation to the GPU (DALI, torchvision v2 on tensors).";
    out.push_back(std::move(f));
  }
}

void launch_bound(Context& ctx, const Params& p, std::vector<Finding>& out) {
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    std::vector<int64_t> kernel_ns, launch_ns;
    int64_t short_kernels = 0;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind != pytorch::WorkKind::kKernel) continue;
      kernel_ns.push_back(sat_sub(it.end, it.start));
      if (kernel_ns.back() < static_cast<int64_t>(p.get("short_kernel_ns"))) ++short_kernels;
      if (it.launch >= 0) launch_ns.push_back(sat_sub(it.launch_end, it.launch_start));
    }
    // Any number of kernels: a block of 35 eager kernels waits for its launches as a loop of
    // thousands does. Two at least, for a gap between them.
    if (kernel_ns.size() < 2 || launch_ns.size() < kernel_ns.size() / 2) continue;
    const double short_share = static_cast<double>(short_kernels) / static_cast<double>(kernel_ns.size());
    // The signature: many short idle stretches between kernels in which the GPU waits for the next
    // launch: the operation that ends the gap was still being launched when the GPU went idle (its
    // call ended after the gap began). A gap whose next operation was queued before it is a
    // dependency wait, not launch overhead; long gaps are the CPU's other work (gpu_idle).
    const std::vector<Interval> windows = ctx.unit_windows(u);
    const int64_t window_ns = total_length(windows);
    std::vector<Interval> bubbles;
    int64_t idle_ns = 0;
    for (const Interval& g : idle_within(ctx.busy(u), windows)) {
      idle_ns = sat_add(idle_ns, g.length());
      if (g.length() > static_cast<int64_t>(p.get("max_gap_ns"))) continue;
      // The operations that start when the gap ends (items are sorted by start).
      auto it = std::lower_bound(u.items.begin(), u.items.end(), g.end,
                                 [](const pytorch::GpuWorkItem& x, TimeNs t) { return x.start < t; });
      bool waited_for_launch = false;
      for (; it != u.items.end() && it->start == g.end; ++it) {
        waited_for_launch |= it->launch >= 0 && it->launch_end > g.start;
      }
      if (waited_for_launch) bubbles.push_back(g);
    }
    const int64_t bubble_ns = total_length(bubbles);
    const double bubble_share = share_of(bubble_ns, window_ns);
    if (bubble_share < p.get("min_bubble")) continue;
    // Launch overhead is the cause when the kernels are mostly shorter than a launch, or, whatever
    // their length (small GEMMs queued behind a large one), when the launch bubbles are most of
    // the GPU's idle time.
    const double idle_share = share_of(bubble_ns, idle_ns);
    if (short_share < p.get("min_short") && idle_share < p.get("min_idle_share")) continue;
    // The launch queue of the busiest stream, for the evidence: near empty when launches cannot
    // keep ahead of the GPU.
    std::map<int32_t, size_t> per_stream;
    for (const pytorch::GpuWorkItem& it : u.items) ++per_stream[it.stream];
    int32_t busiest = 0;
    size_t most = 0;
    for (const auto& [s, n] : per_stream) {
      if (n > most) most = n, busiest = s;
    }
    double queue = 0;
    for (const pytorch::StreamQueue& q : pytorch::queue_length_summary(ctx.trace(), u)) {
      if (q.stream == busiest) queue = q.time_weighted_mean;
    }
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = bubble_ns;
    rate(f, ctx, p.warning(), p.critical());
    const int64_t median_kernel = median_ns(kernel_ns), median_launch = median_ns(launch_ns);
    f.title = fmt::format(
        "launch-bound: {} of {} kernels shorter than {} (median {}, launch call {}); the GPU idles {} in {} gaps "
        "between them",
        short_kernels, kernel_ns.size(), human_duration(static_cast<int64_t>(p.get("short_kernel_ns"))),
        human_duration(median_kernel), human_duration(median_launch), human_percent(bubble_share), bubbles.size());
    f.confidence = median_launch >= median_kernel ? 0.85 : 0.6;
    f.figures = {{"kernels", static_cast<double>(kernel_ns.size()), "count"},
                 {"short_kernel_share", short_share, "fraction"},
                 {"median_kernel_ns", static_cast<double>(median_kernel), "ns"},
                 {"median_launch_ns", static_cast<double>(median_launch), "ns"},
                 {"launch_bubbles", static_cast<double>(bubbles.size()), "count"},
                 {"launch_bubble_ns", static_cast<double>(bubble_ns), "ns"},
                 {"launch_bubble_share", bubble_share, "fraction"},
                 {"launch_bubble_idle_share", idle_share, "fraction"},
                 {"queue_length_mean", queue, "launches"}};  // a time-weighted mean: a real
    f.ranges = longest_ranges(bubbles, 3, ctx.unit_label(u), "launch bubble");
    f.remedy =
        "Each kernel costs more to launch than to run. Capture the step in a CUDA graph "
        "(torch.cuda.CUDAGraph, torch.compile(mode=\"reduce-overhead\")), fuse elementwise chains "
        "(torch.compile), or give each kernel more work (larger batch).";
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
