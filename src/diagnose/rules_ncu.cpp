// Rules on what Nsight Compute measured inside the kernels (--ncu REPORT, or a report read as its
// own timeline): uncoalesced global accesses, shared-memory bank conflicts, barrier stalls,
// occupancy and its limiter, and kernels near the roofline (memory_bound, compute_bound).
//
// ncu profiles a few launches of each kernel in a run of their own; the timeline says how much of
// the step each kernel takes. A hardware problem is rated by that share: each kernel instance on
// the timeline takes the answers of the ncu launch that stands for it (analysis/ncu_join.h), and a
// rule's savings are the instances' time times the share of it the problem costs (docs/diagnose.md).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// One kernel (name and launch shape) of a GPU unit: its instances' time per ncu launch answering
// for them (ncu often profiled several launches of it; each speaks for the instance it matched).
struct ProfiledKernel {
  std::string name;
  int64_t count = 0, ns = 0;
  std::vector<std::pair<NcuLaunchRef, int64_t>> launches;  // and the time they answer for, in launch order
  std::vector<Interval> spans;
};

std::vector<ProfiledKernel> profiled_kernels(Context& ctx, const pytorch::GpuUnit& u) {
  const NcuJoin& join = ctx.ncu_join();
  const KernelTable& k = ctx.trace().kernels;
  std::map<std::tuple<StrId, std::array<int32_t, 6>>, ProfiledKernel> by_kernel;
  for (const pytorch::GpuWorkItem& it : u.items) {
    if (it.kind != pytorch::WorkKind::kKernel || it.row >= join.answered_by.size()) continue;
    const NcuLaunchRef ref = join.answered_by[it.row];
    if (!ref) continue;
    const size_t r = it.row;
    ProfiledKernel& pk =
        by_kernel[{k.name[r], {k.grid_x[r], k.grid_y[r], k.grid_z[r], k.block_x[r], k.block_y[r], k.block_z[r]}}];
    if (pk.count == 0) pk.name = clipped_name(ctx.trace().str(k.name[r]));
    ++pk.count;
    const int64_t ns = sat_sub(it.end, it.start);
    pk.ns = sat_add(pk.ns, ns);
    pk.spans.push_back(it.interval());
    auto& launches = pk.launches;
    const auto same = std::find_if(launches.begin(), launches.end(), [&](const auto& l) {
      return l.first.report == ref.report && l.first.result == ref.result;
    });
    if (same == launches.end())
      launches.emplace_back(ref, ns);
    else
      same->second = sat_add(same->second, ns);
  }
  std::vector<ProfiledKernel> out;
  for (auto& [key, pk] : by_kernel) out.push_back(std::move(pk));
  std::stable_sort(out.begin(), out.end(),
                   [](const ProfiledKernel& a, const ProfiledKernel& b) { return a.ns > b.ns; });
  return out;
}

// What a rule finds in one kernel: the share of its time the problem costs, and why.
struct Hit {
  double cost = 0;  // 0..1 of the kernel's time
  std::string detail;
  std::vector<Figure> figures;  // the kernel's own figures (the finding keeps the largest kernel's)
  std::string remedy;           // what to change for this kernel; empty: the rule's remedy
};
using Check = std::optional<Hit> (*)(const NcuAnswers&, const Params&);

struct RuleText {
  const char* what;  // "uncoalesced global access"
  double confidence;
  std::string remedy;
};

// One finding per GPU unit whose profiled kernels the check hits, the kernels as offenders.
void ncu_rule(Context& ctx, const Params& p, std::vector<Finding>& out, Check check, const RuleText& text) {
  if (ctx.trace().ncu_reports.empty()) return;
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const int64_t total = kernel_time(u);
    if (total <= 0) continue;
    Finding f;
    int64_t affected = 0;
    std::vector<Interval> spans;
    std::vector<Figure> top_figures;
    std::string top_remedy;
    int64_t top_ns = -1;
    for (const ProfiledKernel& k : profiled_kernels(ctx, u)) {
      // Each launch's answers rate the time it answers for; the kernel reads as its first hit.
      std::optional<Hit> shown;
      int64_t saved = 0;
      for (const auto& [ref, ns] : k.launches) {
        std::optional<Hit> hit = check(ctx.ncu_answers(ref), p);
        if (!hit) continue;
        saved = sat_add(saved, static_cast<int64_t>(static_cast<double>(ns) * hit->cost));
        if (!shown) shown = std::move(hit);
      }
      if (!shown) continue;
      f.savings_ns = sat_add(f.savings_ns, saved);
      affected = sat_add(affected, k.ns);
      const size_t launches = k.launches.size();
      f.offenders.push_back(
          {k.name, k.count, k.ns,
           launches > 1 ? fmt::format("{} (first of {} profiled launches)", shown->detail, launches) : shown->detail});
      if (k.ns > top_ns) top_ns = k.ns, top_figures = shown->figures, top_remedy = shown->remedy, spans = k.spans;
    }
    if (f.offenders.empty()) continue;
    const size_t kernels_hit = f.offenders.size();
    keep_top(f.offenders, 5);
    f.scope = ctx.unit_label(u);
    rate(f, ctx, p.warning(), p.critical());
    const Offender& top = f.offenders.front();
    f.title = fmt::format(
        "{}: {} ({} of the kernel time{}): {}", text.what, top.name, human_percent(share_of(top.total_ns, total)),
        kernels_hit > 1 ? fmt::format("; {} kernels, {} in all", kernels_hit, human_percent(share_of(affected, total)))
                        : std::string(),
        top.detail);
    f.confidence = text.confidence;
    f.figures = {{"affected_kernel_ns", static_cast<double>(affected), "ns"},
                 {"affected_share", share_of(affected, total), "fraction"}};
    f.figures.insert(f.figures.end(), top_figures.begin(), top_figures.end());
    f.ranges = longest_ranges(std::move(spans), 5, f.scope, top.name);
    f.remedy = top_remedy.empty() ? text.remedy : top_remedy + " " + text.remedy;
    out.push_back(std::move(f));
  }
}

bool known(double v) { return !std::isnan(v); }

std::optional<Hit> uncoalesced(const NcuAnswers& a, const Params& p) {
  const double excess = a.excessive_sectors_pct / 100;
  if (!known(excess) || excess < p.get("min_excessive")) return std::nullopt;
  Hit h;
  h.cost = excess;
  h.detail = fmt::format(
      "{:.1f} sectors per global load request, {:.1f} per store; {:.0f}% of its global sectors are "
      "beyond the ideal for its access widths",
      a.load_sectors_per_request, a.store_sectors_per_request, 100 * excess);
  h.figures = {{"load_sectors_per_request", a.load_sectors_per_request, "count"},
               {"store_sectors_per_request", a.store_sectors_per_request, "count"},
               {"excessive_sectors", a.excessive_sectors, "count"},
               {"excessive_sectors_share", excess, "fraction"}};
  return h;
}

std::optional<Hit> bank_conflicted(const NcuAnswers& a, const Params& p) {
  const double ld = a.shared_load_conflict_pct / 100, st = a.shared_store_conflict_pct / 100;
  const double worst = std::max(known(ld) ? ld : 0.0, known(st) ? st : 0.0);
  if (worst < p.get("min_conflict_share") || worst <= 0) return std::nullopt;
  Hit h;
  h.cost = worst;
  h.detail =
      fmt::format("{:.0f} bank conflicts on shared loads ({:.1f}% of their wavefronts), {:.0f} on stores ({:.1f}%)",
                  known(a.shared_load_conflicts) ? a.shared_load_conflicts : 0.0, known(ld) ? 100 * ld : 0.0,
                  known(a.shared_store_conflicts) ? a.shared_store_conflicts : 0.0, known(st) ? 100 * st : 0.0);
  h.figures = {{"shared_load_conflicts", known(a.shared_load_conflicts) ? a.shared_load_conflicts : 0.0, "count"},
               {"shared_store_conflicts", known(a.shared_store_conflicts) ? a.shared_store_conflicts : 0.0, "count"},
               {"conflict_share", worst, "fraction"}};
  return h;
}

// A stall reason's share of the stalls: the PC samples' share where sampled, else its warps per
// issued instruction over all reasons'.
double stall_share(const NcuAnswers& a, const NcuStall& s) {
  if (known(s.sample_pct)) return s.sample_pct / 100;
  double all = 0;
  for (const NcuStall& x : a.stalls) all += known(x.per_issue) ? x.per_issue : 0;
  return known(s.per_issue) && all > 0 ? s.per_issue / all : std::nan("");
}

std::optional<Hit> barrier_stalled(const NcuAnswers& a, const Params& p) {
  for (size_t rank = 0; rank < a.stalls.size(); ++rank) {
    const NcuStall& s = a.stalls[rank];
    if (s.reason != "barrier") continue;
    const double share = stall_share(a, s);
    if (!known(share) || share < p.get("min_share")) return std::nullopt;
    Hit h;
    h.cost = share;
    h.detail = fmt::format("barrier is stall reason #{}{}: {:.1f}% of the stalls", rank + 1,
                           known(s.per_issue) ? fmt::format(" ({:.2f} warps per issued instruction)", s.per_issue) : "",
                           100 * share);
    if (rank > 0) h.detail += fmt::format(", after {}", a.stalls[0].reason);
    h.figures = {{"barrier_rank", static_cast<double>(rank + 1), "count"}, {"barrier_share", share, "fraction"}};
    if (known(s.per_issue)) h.figures.push_back({"barrier_per_issue", s.per_issue, "x"});
    return h;
  }
  return std::nullopt;
}

// What raises occupancy, by what limits it (the first limiter when several tie).
std::string occupancy_remedy(const NcuAnswers& a) {
  const std::string limiter = a.occupancy_limiters.empty() ? "" : a.occupancy_limiters.front();
  if (limiter == "registers")
    return fmt::format(
        "Registers limit it{}: cap them with __launch_bounds__(threads, min_blocks) or "
        "-maxrregcount (Triton: fewer num_warps or a smaller BLOCK), and check for spills.",
        a.registers_per_thread > 0 ? fmt::format(" ({} per thread)", a.registers_per_thread) : "");
  if (limiter == "shared_mem")
    return fmt::format(
        "Shared memory limits it{}: smaller tiles or fewer pipeline stages (Triton "
        "num_stages), or a larger carve-out (cudaFuncAttributePreferredSharedMemoryCarveout).",
        a.shared_mem_per_block > 0 ? fmt::format(" ({} per block)", human_bytes(a.shared_mem_per_block)) : "");
  if (limiter == "blocks")
    return "The SM's limit on resident blocks caps it: the blocks are too small; launch 128-256 threads per block.";
  if (limiter == "warps")
    return "Its blocks could fill the SM, yet warps are missing: the grid has too few blocks for every SM, or warps "
           "finish unevenly (a tail); launch more blocks or balance the work per block.";
  if (limiter == "barriers") return "Named barriers per block limit it: use fewer of them.";
  return {};
}

std::optional<Hit> occupancy_low(const NcuAnswers& a, const Params& p) {
  const bool low_theoretical =
      known(a.theoretical_occupancy_pct) && a.theoretical_occupancy_pct < p.get("max_theoretical");
  const bool low_achieved = known(a.achieved_occupancy_pct) && a.achieved_occupancy_pct < p.get("low_occupancy");
  if (!low_theoretical && !low_achieved) return std::nullopt;
  Hit h;
  h.cost = p.get("savings");
  const std::string achieved =
      known(a.achieved_occupancy_pct) ? fmt::format("achieved occupancy {:.1f}%, ", a.achieved_occupancy_pct) : "";
  h.detail = fmt::format("{}theoretical {:.1f}%{}", achieved, a.theoretical_occupancy_pct,
                         a.occupancy_limiters.empty() ? "" : ", limited by " + occupancy_limiter_text(a));
  if (!low_theoretical) h.detail += " (the theoretical occupancy is fine: too few blocks, or imbalanced warps)";
  if (a.registers_per_thread > 0) h.detail += fmt::format("; {} registers per thread", a.registers_per_thread);
  if (a.shared_mem_per_block > 0)
    h.detail += fmt::format(", {} shared memory per block", human_bytes(a.shared_mem_per_block));
  h.remedy = occupancy_remedy(a);
  h.figures = {{"theoretical_occupancy_pct", a.theoretical_occupancy_pct, "%"}};
  if (known(a.achieved_occupancy_pct)) h.figures.push_back({"achieved_occupancy_pct", a.achieved_occupancy_pct, "%"});
  return h;
}

// How near a kernel runs to its roof: the roofline's share where ncu collected it, else the speed
// of light of the bound side (SM or memory throughput, % of peak).
double roof_share(const NcuAnswers& a) {
  if (known(a.roofline_pct)) return a.roofline_pct / 100;
  return (a.bound == "memory" ? a.memory_throughput_pct : a.sm_throughput_pct) / 100;
}

std::optional<Hit> near_roof(const NcuAnswers& a, const Params& p, std::string_view side) {
  const double share = roof_share(a);
  if (a.bound != side || !known(share) || share < p.get("min_roof_share")) return std::nullopt;
  Hit h;
  h.cost = p.get("reducible");
  h.detail = fmt::format("{} bound at {:.0f}% of its roof", side, 100 * share);
  if (side == "memory") {
    if (known(a.arithmetic_intensity)) h.detail += fmt::format(", {:.3g} FLOP per DRAM byte", a.arithmetic_intensity);
    if (known(a.dram_bytes)) h.detail += fmt::format(", {} from DRAM", human_bytes(static_cast<int64_t>(a.dram_bytes)));
  } else {
    if (known(a.flop_per_s)) h.detail += fmt::format(", {:.3g} TFLOP/s", a.flop_per_s * 1e-12);
    if (known(a.sm_throughput_pct)) h.detail += fmt::format(", SM throughput {:.0f}% of peak", a.sm_throughput_pct);
  }
  h.figures = {{"roof_share", share, "fraction"}};
  if (known(a.arithmetic_intensity)) h.figures.push_back({"flop_per_byte", a.arithmetic_intensity, "x"});
  return h;
}

std::optional<Hit> near_memory_roof(const NcuAnswers& a, const Params& p) { return near_roof(a, p, "memory"); }
std::optional<Hit> near_compute_roof(const NcuAnswers& a, const Params& p) { return near_roof(a, p, "compute"); }

}  // namespace

void uncoalesced_access(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, uncoalesced,
           {"uncoalesced global access", 0.7,
            "A warp's 32 threads should touch consecutive addresses: index with threadIdx.x along the contiguous "
            "(last) dimension, use structure-of-arrays rather than arrays of structs, and stage strided or "
            "transposed accesses through shared memory. In PyTorch, make the tensor contiguous in the layout the "
            "kernel reads (.contiguous(), channels_last throughout); in Triton, put tl.arange on the contiguous axis "
            "and keep the block's inner dimension a multiple of 32 elements."});
}

void bank_conflicts(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, bank_conflicted,
           {"shared-memory bank conflicts", 0.5,
            "Threads of a warp that hit the same bank (addresses 128 bytes apart) are served one after another: "
            "pad shared arrays by one element per row (float tile[32][33]), swizzle the index (XOR with the row), "
            "or have consecutive threads read consecutive 4-byte words. CUTLASS and Triton layouts swizzle for you: "
            "prefer them to hand-written tiles."});
}

void barrier_stalls(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, barrier_stalled,
           {"barrier stalls", 0.6,
            "Warps wait at __syncthreads() for the slowest warp of their block: use fewer block-wide barriers "
            "(warp-level reductions with __shfl_xor_sync or cooperative_groups::reduce, one block-wide step at the "
            "end), even out the work per warp, or use smaller blocks so fewer warps wait at each barrier. In Triton, "
            "a tl.sum / tl.max across the whole block is such a barrier: reduce in fewer, larger steps."});
}

void occupancy_limited(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, occupancy_low,
           {"occupancy limited", 0.4,
            "Low occupancy only matters when warps wait on latency: check the stall reasons before trading "
            "registers or tile size for it."});
}

void memory_bound(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, near_memory_roof,
           {"memory bound near the roofline", 0.4,
            "The kernel moves bytes about as fast as the memory allows: tuning its arithmetic gains nothing. "
            "Move fewer bytes: fuse it with its neighbours (torch.compile, a Triton or CUDA kernel doing both "
            "passes), keep data in lower precision (bf16/fp16, fp8 where accuracy allows), and avoid "
            "materialising intermediates."});
}

void compute_bound(Context& ctx, const Params& p, std::vector<Finding>& out) {
  ncu_rule(ctx, p, out, near_compute_roof,
           {"compute bound near the roofline", 0.4,
            "The kernel executes about as fast as its units allow: memory tuning gains nothing. Do fewer or "
            "cheaper operations: tensor cores (TF32 via torch.backends.cuda.matmul.allow_tf32, bf16/fp16 "
            "autocast), lower precision, or an algorithm with less arithmetic (FlashAttention, fused kernels that "
            "skip recomputation)."});
}

}  // namespace tracedoc::diagnose
