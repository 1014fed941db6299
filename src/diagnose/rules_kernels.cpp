// Rules on the kernels themselves: outlier instances (long_tail), launch configurations
// (kernel_config), time spent moving data between layouts (layout_overhead), matrix math without
// tensor cores (tensor_cores_unused).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "analysis/gpu_metrics.h"
#include "analysis/pytorch/tb_overview.h"
#include "diagnose/rule_support.h"
#include "diagnose/rules.h"
#include "common/text.h"

namespace tracedoc::diagnose {

namespace {

// Layout kernels: transposes, permutes and the copies PyTorch makes for .contiguous() / .to() /
// format conversions (cuDNN's NCHW <-> NHWC kernels included).
bool is_layout_kernel(const std::string& lname) {
  return contains_any(lname, {"transpose", "permute", "direct_copy_kernel", "copy_kernel", "contiguous", "nchwtonhwc",
                              "nhwctonchw", "nchw2nhwc", "nhwc2nchw"});
}

bool is_matrix_kernel(const std::string& lname) {
  if (lname.find("gemv") != std::string::npos) return false;  // matrix-vector: never on tensor cores
  return contains_any(lname,
                      {"gemm", "conv", "cutlass", "xmma", "cublas", "matmul", "wgrad", "dgrad", "fprop", "cijk_"});
}

bool is_tensor_core_matrix_kernel(std::string_view name, const std::string& lname) {
  if (pytorch::is_tensor_core_kernel(name)) return true;
  // Later library names (CUTLASS tensorop, Hopper/Blackwell sm90_/sm100_ kernels, wgmma), and AMD
  // Tensile kernels using matrix-core instructions (_MI16x16x..., MFMA).
  return contains_any(lname, {"tensorop", "wgmma", "sm80_", "sm86_", "sm89_", "sm90_", "sm100_", "hmma", "16816",
                              "1688", "_mi16x16", "_mi32x32", "mfma", "bf16", "fp16", "f16"});
}

// GPUs with tensor (matrix) cores: compute capability 7.0 on (but the GTX 16 series), or a name of such a GPU.
bool has_tensor_cores(const Context& ctx, int32_t device) {
  const std::string n = lower(ctx.device_name(device));
  // The GeForce GTX 16 series is Turing (7.5) cut down without tensor cores.
  if (contains_any(n, {"gtx 16", "gtx16"})) return false;
  for (const DeviceInfo& d : ctx.trace().devices) {
    if (d.id == device && d.compute_major > 0) return d.compute_major >= 7;
  }
  return contains_any(n, {"v100", "a100", "a10", "a30",   "a40",   "h100",  "h200",  "h800",  "b100",  "b200", "l4",
                          "l40",  "t4",   "rtx", "mi100", "mi200", "mi210", "mi250", "mi300", "mi325", "mi355"});
}

}  // namespace

void long_tail(const JobInputs& job, const Params& p, int64_t basis_ns, std::vector<Finding>& out) {
  Finding f;
  std::vector<Interval> worst;
  int64_t kernels_hit = 0;
  for (const KernelInstances& g : job.kernels) {
    const std::vector<int64_t>& d = g.durations;
    if (static_cast<double>(d.size()) < p.get("min_instances")) continue;
    const int64_t med = median_ns(d);
    std::vector<int64_t> dev;
    dev.reserve(d.size());
    for (int64_t x : d) dev.push_back(sat_sub(x, med) == INT64_MIN ? INT64_MAX : std::llabs(sat_sub(x, med)));
    const int64_t mad = std::max<int64_t>(median_ns(std::move(dev)), med / 20);
    const double limit = std::max(static_cast<double>(med) + p.get("k") * static_cast<double>(mad),
                                  p.get("min_ratio") * static_cast<double>(med));
    // The durations ascend: the outliers are the last ones.
    const auto first_outlier =
        std::upper_bound(d.begin(), d.end(), limit, [](double lim, int64_t x) { return lim < static_cast<double>(x); });
    const int64_t outliers = d.end() - first_outlier;
    if (outliers == 0) continue;
    int64_t excess = 0;
    for (auto it = first_outlier; it != d.end(); ++it) excess = sat_add(excess, sat_sub(*it, med));
    for (const Interval& i : g.longest) {
      if (static_cast<double>(i.length()) > limit) worst.push_back(i);
    }
    kernels_hit += outliers;
    f.savings_ns = sat_add(f.savings_ns, excess);
    f.offenders.push_back({clipped_name(g.name), outliers, excess,
                           fmt::format("{} of {} instances above {}: median {}, max {}; grid {}x{}x{}, block {}x{}x{}",
                                       outliers, d.size(), human_duration(static_cast<int64_t>(limit)),
                                       human_duration(med), human_duration(d.back()), g.launch[0], g.launch[1],
                                       g.launch[2], g.launch[3], g.launch[4], g.launch[5])});
  }
  if (f.offenders.empty()) return;
  rate(f, basis_ns, p.warning(), p.critical());
  if (f.savings_share < p.get("min_share")) return;
  const size_t groups_hit = f.offenders.size();
  keep_top(f.offenders, 5);
  f.scope = "trace";
  f.title =
      fmt::format("long tail: {} kernel instances run far longer than their median ({} kernels; {} above the median)",
                  kernels_hit, groups_hit, human_duration(f.savings_ns));
  f.confidence = 0.7;
  f.figures = {{"outlier_instances", static_cast<double>(kernels_hit), "count"},
               {"kernels_with_outliers", static_cast<double>(groups_hit), "count"},
               {"excess_ns", static_cast<double>(f.savings_ns), "ns"}};
  f.ranges = longest_ranges(worst, 5, "GPU", "outlier instance");
  f.remedy =
      "The same kernel with the same launch configuration sometimes runs much longer: usually "
      "autotuning or re-tuning (set torch.backends.cudnn.benchmark=True and keep input shapes fixed, "
      "or warm up before profiling), dynamic shapes (pad or bucket sequence lengths), contention with "
      "another stream or process, or clock throttling. Check what else runs at the listed times.";
  out.push_back(std::move(f));
}

void kernel_config(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const KernelTable& k = t.kernels;
  std::optional<std::vector<MetricSeries>> metrics;
  const bool occupancy = !k.est_occupancy.empty();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const int64_t total = kernel_time(u);
    if (total <= 0) continue;
    struct Group {
      int64_t count = 0, ns = 0;
      double occ_weighted = 0;
      int64_t occ_ns = 0;
      std::vector<Interval> runs;
    };
    std::map<std::tuple<StrId, int32_t, int32_t, int32_t>, Group> groups;
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind != pytorch::WorkKind::kKernel || it.cls != pytorch::WorkClass::kComputation) continue;
      Group& g = groups[{k.name[it.row], k.block_x[it.row], k.block_y[it.row], k.block_z[it.row]}];
      ++g.count;
      g.ns = sat_add(g.ns, sat_sub(it.end, it.start));
      g.runs.push_back(it.interval());
      if (occupancy && !std::isnan(k.est_occupancy[it.row])) {
        g.occ_weighted += k.est_occupancy[it.row] * static_cast<double>(sat_sub(it.end, it.start));
        g.occ_ns += sat_sub(it.end, it.start);
      }
    }
    // Where the GPU sampled its warps in flight (GPU metrics), they confirm or refute the guesses
    // about small blocks and low occupancy; lanes idle in a partial warp are certain either way.
    if (!metrics && t.gpu_metrics.size() > 0) metrics = gpu_metric_series(t);
    const MetricSeries* warps = nullptr;
    if (metrics) {
      for (const MetricSeries& m : *metrics) {
        if (m.device == u.device && m.kind == MetricKind::kWarpsInFlight) warps = &m;
      }
    }
    Finding f;
    int64_t affected = 0, measured = 0, confirmed = 0;
    for (const auto& [key, g] : groups) {
      if (share_of(g.ns, total) < p.get("min_kernel_share")) continue;
      const auto [name, bx, by, bz] = key;
      const int64_t threads = sat_mul(sat_mul(bx, by), bz);
      if (threads <= 0 || threads > (1 << 20)) continue;  // not a launchable block: damaged record
      std::vector<std::string> why;
      double waste = 0;
      if (threads % 32 != 0) {
        const int64_t lanes = (threads + 31) / 32 * 32;
        waste = static_cast<double>(lanes - threads) / static_cast<double>(lanes);
        why.push_back(fmt::format("{} threads per block, not a multiple of 32: {:.0f}% of each last warp idle", threads,
                                  100.0 * waste));
      } else if (static_cast<double>(threads) < p.get("min_threads")) {
        why.push_back(fmt::format("{} threads per block: too few to fill an SM", threads));
      }
      const double occ = g.occ_ns > 0 ? g.occ_weighted / static_cast<double>(g.occ_ns) : -1;
      if (occ >= 0 && occ < p.get("low_occupancy")) why.push_back(fmt::format("est. achieved occupancy {:.0f}%", occ));
      if (why.empty()) continue;
      if (warps != nullptr) {
        MetricLevels in_flight;
        for (const Interval& run : g.runs) in_flight.add_series(*warps, run);
        if (!in_flight.empty()) {
          const double pct = in_flight.mean();
          if (waste == 0 && pct >= p.get("max_warps_in_flight")) continue;  // measured: the SMs were full
          why.push_back(fmt::format("warps in flight {:.0f}% as the GPU sampled them", pct));
          ++measured;
          confirmed += pct < p.get("max_warps_in_flight") ? 1 : 0;
        }
      }
      std::string detail;
      for (size_t i = 0; i < why.size(); ++i) detail += (i ? "; " : "") + why[i];
      // Wasted lanes are saved outright; a small block or low occupancy is taken to cost a tenth of
      // the kernel's time (a guess, hence the low confidence).
      const int64_t saved = static_cast<int64_t>(static_cast<double>(g.ns) * std::max(waste, 0.1));
      f.savings_ns = sat_add(f.savings_ns, saved);
      affected = sat_add(affected, g.ns);
      f.offenders.push_back({clipped_name(t.str(name)), g.count, g.ns, detail});
    }
    if (f.offenders.empty()) continue;
    keep_top(f.offenders, f.offenders.size());
    f.scope = ctx.unit_label(u);
    rate(f, ctx, p.warning(), p.critical());
    f.title = fmt::format("kernel configuration: {} kernel{} with {} of the kernel time use the GPU poorly ({})",
                          f.offenders.size(), f.offenders.size() == 1 ? "" : "s",
                          human_percent(share_of(affected, total)), f.offenders.front().detail);
    f.confidence = measured > 0 && confirmed == measured ? 0.7 : 0.4;
    f.figures = {{"affected_kernel_ns", static_cast<double>(affected), "ns"},
                 {"affected_share", share_of(affected, total), "fraction"}};
    f.remedy =
        "Launch blocks of a multiple of 32 threads (a warp), 128-256 threads as a start, enough blocks "
        "to fill every SM; for low occupancy reduce registers or shared memory per thread "
        "(__launch_bounds__, smaller tiles). For library kernels, try other shapes (multiples of 8/64) "
        "or another algorithm (cudnn.benchmark, torch.compile max-autotune).";
    // These are launch-configuration heuristics; ncu measures what they guess at.
    if (t.ncu_reports.empty()) {
      f.remedy +=
          " An Nsight Compute report of these kernels would confirm it (ncu --set full -o R ..., then --ncu R): "
          "occupancy_limited then reads their measured occupancy and what limits it.";
    }
    out.push_back(std::move(f));
  }
}

void layout_overhead(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const KernelTable& k = t.kernels;
  const bool ops = ctx.pytorch() && t.pytorch.ops.size() > 0;
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const int64_t total = kernel_time(u);
    if (total <= 0) continue;
    std::map<std::string, Offender> by_site;
    std::vector<Interval> spans;
    int64_t layout = 0;
    std::vector<int8_t> is_layout(t.strings.size(), -1);
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind != pytorch::WorkKind::kKernel) continue;
      const StrId name = k.name[it.row];
      if (name == kNoStr || name >= is_layout.size()) continue;
      if (is_layout[name] < 0) is_layout[name] = is_layout_kernel(lower(t.str(name))) ? 1 : 0;
      if (!is_layout[name]) continue;
      layout = sat_add(layout, sat_sub(it.end, it.start));
      spans.push_back(it.interval());
      std::string site;
      if (ops) {
        const int32_t op = ctx.op_links().launching_op(pytorch::GpuKind::kKernel, it.row);
        if (op != pytorch::kNoRow) site = std::string(t.str(t.pytorch.ops.name[static_cast<size_t>(op)]));
      }
      const std::string key = clipped_name(t.str(name)) + (site.empty() ? "" : " (" + site + ")");
      Offender& o = by_site[key];
      o.name = key;
      ++o.count;
      o.total_ns = sat_add(o.total_ns, sat_sub(it.end, it.start));
    }
    const double share = share_of(layout, total);
    if (share < p.get("min_share")) continue;
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = layout / 2;  // half: some copies are needed (dtype changes, real reshapes)
    rate(f, ctx, p.warning(), p.critical());
    for (auto& [key, o] : by_site) f.offenders.push_back(o);
    keep_top(f.offenders, 5);
    f.title = fmt::format("layout overhead: transpose / copy kernels take {} of the kernel time ({})",
                          human_percent(share), human_duration(layout));
    f.confidence = 0.5;
    f.figures = {{"layout_kernel_ns", static_cast<double>(layout), "ns"}, {"layout_share", share, "fraction"}};
    f.ranges = longest_ranges(spans, 3, ctx.unit_label(u), "layout kernel");
    f.remedy =
        "Data is being rearranged rather than computed on. Look for .contiguous(), .transpose()/.permute() "
        "followed by a copy, and .to(dtype) in the hot path (offenders list the launching operator); "
        "keep one memory format end to end (channels_last for convolutions), transpose via the GEMM's "
        "own flags (matmul(a, b.T) instead of matmul(a, b.T.contiguous())), and let torch.compile fuse "
        "the rest.";
    out.push_back(std::move(f));
  }
}

void tensor_cores_unused(Context& ctx, const Params& p, std::vector<Finding>& out) {
  const Trace& t = ctx.trace();
  const KernelTable& k = t.kernels;
  std::optional<std::vector<MetricSeries>> metrics;
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    if (!has_tensor_cores(ctx, u.device)) continue;
    const int64_t total = kernel_time(u);
    if (total <= 0) continue;
    int64_t matrix = 0, tensor_core = 0;
    std::map<StrId, Offender> slow;
    std::vector<Interval> simt_runs;  // the matrix kernels without tensor cores
    for (const pytorch::GpuWorkItem& it : u.items) {
      if (it.kind != pytorch::WorkKind::kKernel) continue;
      const std::string_view name = t.str(k.name[it.row]);
      const std::string lname = lower(name);
      if (!is_matrix_kernel(lname)) continue;
      matrix = sat_add(matrix, sat_sub(it.end, it.start));
      if (is_tensor_core_matrix_kernel(name, lname)) {
        tensor_core = sat_add(tensor_core, sat_sub(it.end, it.start));
        continue;
      }
      Offender& o = slow[k.name[it.row]];
      o.name = clipped_name(name);
      ++o.count;
      o.total_ns = sat_add(o.total_ns, sat_sub(it.end, it.start));
      simt_runs.push_back(it.interval());
    }
    if (share_of(matrix, total) < p.get("min_gemm_share")) continue;
    const double tc_share = share_of(tensor_core, matrix);
    if (tc_share > p.get("max_tc_share")) continue;
    // Where the GPU sampled its tensor cores (GPU metrics), what they did while those kernels ran
    // decides: busy, and the kernel names misled; idle, and the finding is certain.
    if (!metrics) metrics = gpu_metric_series(t);
    const double measured =
        metric_mean_within(*metrics, u.device, MetricKind::kTensorActive, IntervalSet::busy_union(simt_runs));
    if (measured > p.get("max_tensor_active")) continue;
    Finding f;
    f.scope = ctx.unit_label(u);
    const int64_t simt = sat_sub(matrix, tensor_core);
    f.savings_ns = static_cast<int64_t>(static_cast<double>(simt) * (1.0 - 1.0 / std::max(1.0, p.get("speedup"))));
    rate(f, ctx, p.warning(), p.critical());
    for (auto& [id, o] : slow) f.offenders.push_back(o);
    keep_top(f.offenders, 5);
    f.title =
        fmt::format("tensor cores unused: {} of the matrix-multiply/convolution time ({}) runs on kernels without them",
                    human_percent(1.0 - tc_share), human_duration(simt));
    f.confidence = 0.6;
    f.figures = {{"matrix_kernel_ns", static_cast<double>(matrix), "ns"},
                 {"matrix_share_of_kernels", share_of(matrix, total), "fraction"},
                 {"tensor_core_share", tc_share, "fraction"}};
    if (measured >= 0) {
      f.title += fmt::format("; the GPU measured Tensor Active {} while they ran", human_percent(measured / 100.0));
      f.confidence = 0.9;
      f.figures.push_back({"tensor_active_pct", measured, "%"});
    }
    f.remedy =
        "The GPU has tensor cores but the GEMMs and convolutions run in FP32 on the CUDA cores. Train "
        "with automatic mixed precision (torch.autocast(\"cuda\", dtype=torch.bfloat16)), or allow TF32 "
        "for FP32 math (torch.backends.cuda.matmul.allow_tf32 = True, "
        "torch.backends.cudnn.allow_tf32 = True, torch.set_float32_matmul_precision(\"high\")); keep "
        "matrix sizes multiples of 8.";
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
