// The rules on how close a PyTorch run comes to its GPU's peak (docs/flops.md): low_mfu (the model
// FLOPs per step far below what the GPU can do, and where the step time goes instead) and
// gemm_shape (matrix multiplies whose dimensions keep the tensor cores from full speed). Both read
// the FLOPs the operators' recorded shapes give (analysis/pytorch/op_flops.h), so both are quiet on
// traces recorded without record_shapes=True.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "diagnose/rule_support.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

namespace {

// Whether `t` falls in one of the sorted, disjoint windows.
bool in_windows(const std::vector<Interval>& windows, TimeNs t) {
  auto it =
      std::upper_bound(windows.begin(), windows.end(), t, [](TimeNs v, const Interval& w) { return v < w.start; });
  return it != windows.begin() && t <= std::prev(it)->end;
}

// The counted operators of a GPU unit: its owner's, whose kernels ran on its device, started in
// one of its owner's steps (as recorded on the CPU) when the trace has steps.
std::vector<size_t> unit_ops(Context& ctx, const pytorch::GpuUnit& u) {
  const pytorch::FlopsAttribution& flops = ctx.flops();
  const OpTable& ops = ctx.trace().pytorch.ops;
  const std::vector<Interval>* cpu_windows = ctx.steps() ? &ctx.cpu_windows_of(u.owner) : nullptr;
  std::vector<size_t> out;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!flops.costs.cost[i].known || flops.costs.counted_by[i] != static_cast<int32_t>(i)) continue;
    if (flops.device[i] != u.device || ctx.owner_of(ops.global_tid[i]) != u.owner) continue;
    if (cpu_windows && !in_windows(*cpu_windows, ops.start[i])) continue;
    out.push_back(i);
  }
  return out;
}

// The computation kernels' time of a unit within its windows, by what launched them: operators with
// model FLOPs, the other counted operators (norms, elementwise, reductions: memory-bound), the rest.
std::array<int64_t, 3> compute_kernel_time(Context& ctx, const pytorch::GpuUnit& u,
                                           const std::vector<Interval>& windows) {
  const pytorch::FlopsAttribution& flops = ctx.flops();
  const pytorch::OpLinks& links = ctx.op_links();
  std::array<int64_t, 3> out{};
  for (const pytorch::GpuWorkItem& it : u.items) {
    if (it.kind != pytorch::WorkKind::kKernel || it.cls != pytorch::WorkClass::kComputation) continue;
    if (!in_windows(windows, it.start)) continue;
    size_t part = 2;
    if (const int32_t op = links.launching_op(pytorch::GpuKind::kKernel, it.row); op != pytorch::kNoRow) {
      const int32_t counted = flops.costs.counted_by[static_cast<size_t>(op)];
      if (counted != pytorch::kNoRow) {
        const pytorch::OpCost& c = flops.costs.cost[static_cast<size_t>(counted)];
        part = pytorch::is_model_flops(c.kind) ? 0 : 1;
      }
    }
    out[part] = sat_add(out[part], sat_sub(it.end, it.start));
  }
  return out;
}

// Elements per 16 bytes: the alignment the tensor cores' loads want of a GEMM's leading dimensions
// (8 for fp16 and bf16, 4 for fp32 and tf32, 16 for fp8 and int8).
int64_t alignment_of(pytorch::Dtype d) {
  switch (d) {
    case pytorch::Dtype::kFp64: return 2;
    case pytorch::Dtype::kFp32:
    case pytorch::Dtype::kTf32: return 4;
    case pytorch::Dtype::kFp16:
    case pytorch::Dtype::kBf16: return 8;
    case pytorch::Dtype::kFp8:
    case pytorch::Dtype::kInt8: return 16;
    case pytorch::Dtype::kFp4: return 32;
    default: return 0;
  }
}

int64_t round_up(int64_t v, int64_t to) { return to > 0 ? (v + to - 1) / to * to : v; }

struct Part {
  const char* name;
  int64_t ns;
  const char* advice;
};

}  // namespace

void low_mfu(Context& ctx, const Params& p, std::vector<Finding>& out) {
  if (!ctx.pytorch() || ctx.trace().pytorch.ops.size() == 0) return;
  const pytorch::FlopsAttribution& flops = ctx.flops();
  const std::map<int32_t, GpuPeaks>& peaks = ctx.gpu_peaks();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    const auto peak = peaks.find(u.device);
    if (peak == peaks.end()) continue;  // MFU needs the GPU's peak
    int64_t model_flops = 0, model_gpu_ns = 0;
    double seconds_at_peak = 0;
    std::map<pytorch::Dtype, int64_t> flops_by_dtype;
    for (size_t i : unit_ops(ctx, u)) {
      const pytorch::OpCost& c = flops.costs.cost[i];
      if (!pytorch::is_model_flops(c.kind)) continue;
      const double tflops = peak->second.peak_tflops(c.dtype);
      if (tflops <= 0) continue;
      model_flops = sat_add(model_flops, c.flops);
      model_gpu_ns = sat_add(model_gpu_ns, flops.gpu_ns[i]);
      seconds_at_peak += static_cast<double>(c.flops) / (tflops * 1e12);
      flops_by_dtype[c.dtype] = sat_add(flops_by_dtype[c.dtype], c.flops);
    }
    if (model_flops <= 0) continue;
    // The wall time MFU is over: the steps as recorded on the CPU (as summary and step_mfu_sum), else
    // the unit's span; the breakdown is over the windows the GPU time is measured in.
    const std::vector<Interval> windows = ctx.unit_windows(u);
    const int64_t wall = ctx.steps() ? total_length(ctx.cpu_windows_of(u.owner)) : total_length(windows);
    const int64_t window_ns = total_length(windows);
    if (wall <= 0 || window_ns <= 0) continue;
    const double mfu = seconds_at_peak * 1e9 / static_cast<double>(wall);
    if (mfu * 100 >= p.get("max_mfu")) continue;

    // Where the time goes: the unit's time parts, its computation split by what launched the kernels.
    const std::array<int64_t, 5> parts = pytorch::time_parts(u).within(windows);
    const std::array<int64_t, 3> kernels = compute_kernel_time(ctx, u, windows);
    const int64_t kernel_sum = sat_add(sat_add(kernels[0], kernels[1]), kernels[2]);
    auto compute_share = [&](int64_t k) {
      return kernel_sum > 0 ? static_cast<int64_t>(static_cast<double>(parts[0]) * static_cast<double>(k) /
                                                   static_cast<double>(kernel_sum))
                            : 0;
    };
    const double ns_at_peak = seconds_at_peak * 1e9;
    const double model_peak_share = model_gpu_ns > 0 ? ns_at_peak / static_cast<double>(model_gpu_ns) : 0;
    std::vector<Part> where = {
        {"model-FLOP kernels", compute_share(kernels[0]),
         "give the matrix multiplies more work per launch (a larger batch or sequence), keep their dimensions "
         "multiples of 64 (gemm_shape), compute in bf16 or fp8 rather than fp32"},
        {"memory-bound operators", compute_share(kernels[1]),
         "fuse the elementwise, normalization and softmax operators (torch.compile, fused kernels such as "
         "FlashAttention, fused LayerNorm and fused optimizers)"},
        {"operators without a FLOP formula", compute_share(kernels[2]),
         "see which operators and kernels they are (op_kernel_sum)"},
        {"GPU idle", parts[4],
         "keep the GPU fed (gpu_idle, launch_bound, comb_pattern: CUDA graphs, torch.compile, DataLoader workers)"},
        {"communication", parts[1], "overlap communication with computation (DDP buckets, FSDP prefetch)"},
        {"copies", parts[2], "hide the copies under computation (pinned memory, non_blocking=True)"},
    };
    std::stable_sort(where.begin(), where.end(), [](const Part& a, const Part& b) { return a.ns > b.ns; });

    Finding f;
    f.scope = ctx.unit_label(u);
    // What better GEMMs would save: the model-FLOP kernels' time beyond what they take at the share
    // of the peak that well-shaped, large matrix multiplies reach.
    const double reachable = std::clamp(p.get("reachable"), 0.01, 1.0);
    f.savings_ns = std::max<int64_t>(0, sat_sub(model_gpu_ns, static_cast<int64_t>(ns_at_peak / reachable)));
    rate(f, ctx, p.warning(), p.critical());
    const pytorch::Dtype main_dtype =
        std::max_element(flops_by_dtype.begin(), flops_by_dtype.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    const double tflops_per_s = static_cast<double>(model_flops) / static_cast<double>(wall) / 1e3;
    f.title = fmt::format("MFU {:.2f}%: {:.3g} TFLOP/s of model FLOPs against the {}'s {:.0f} TFLOP/s {} peak",
                          mfu * 100, tflops_per_s, peak->second.name, peak->second.peak_tflops(main_dtype),
                          pytorch::dtype_name(main_dtype));
    std::string goes;
    for (const Part& w : where) {
      if (w.ns <= 0 || goes.size() > 200) continue;
      goes += fmt::format("{}{} {}", goes.empty() ? "" : ", ", w.name, human_percent(share_of(w.ns, window_ns)));
    }
    if (!goes.empty()) f.title += "; the time goes to " + goes;
    f.confidence = 0.7;
    f.figures = {{"mfu_pct", mfu * 100, "%"},
                 {"model_tflops_per_s", tflops_per_s, "TFLOP/s"},
                 {"peak_tflops", peak->second.peak_tflops(main_dtype), "TFLOP/s"},
                 {"model_flops", static_cast<double>(model_flops), "count"},
                 {"wall_ns", static_cast<double>(wall), "ns"},
                 {"model_kernel_peak_share", model_peak_share, "fraction"}};
    for (const Part& w : where) {
      std::string key = w.name;
      std::replace(key.begin(), key.end(), ' ', '_');
      std::replace(key.begin(), key.end(), '-', '_');
      for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      f.figures.push_back({key + "_share", share_of(w.ns, window_ns), "fraction"});
    }
    f.remedy = fmt::format(
        "The model's matrix multiplies, convolutions and attention would take {} at the GPU's peak; the steps "
        "take {}. While they run, the model-FLOP kernels reach {} of the peak.",
        human_duration(static_cast<int64_t>(ns_at_peak)), human_duration(wall), human_percent(model_peak_share));
    for (size_t k = 0; k < 2 && k < where.size(); ++k) {
      if (where[k].ns <= 0) break;
      f.remedy +=
          fmt::format(" {} ({}): {}.", where[k].name, human_percent(share_of(where[k].ns, window_ns)), where[k].advice);
    }
    out.push_back(std::move(f));
  }
}

void gemm_shape(Context& ctx, const Params& p, std::vector<Finding>& out) {
  if (!ctx.pytorch() || ctx.trace().pytorch.ops.size() == 0) return;
  const Trace& t = ctx.trace();
  const pytorch::FlopsAttribution& flops = ctx.flops();
  for (const pytorch::GpuUnit& u : ctx.gpu_work().units) {
    // By operator, shapes and type: its calls, GPU time and FLOPs, and whether n and k are aligned.
    struct Shape {
      Offender o;
      int64_t flops = 0;
      bool aligned = true;
      pytorch::Dtype dtype = pytorch::Dtype::kUnknown;
    };
    std::map<std::tuple<StrId, StrId, pytorch::Dtype>, Shape> shapes;
    for (size_t i : unit_ops(ctx, u)) {
      const pytorch::OpCost& c = flops.costs.cost[i];
      const int64_t align = alignment_of(c.dtype);
      if (c.kind != pytorch::FlopKind::kMatmul || align == 0 || c.n <= 0 || c.k <= 0) continue;
      Shape& s = shapes[{t.pytorch.ops.name[i], t.pytorch.ops.input_dims[i], c.dtype}];
      if (s.o.count == 0) {
        s.dtype = c.dtype;
        // The weight's dimensions (n, k) are the model's choice; the rows (m: batch × sequence) the data's.
        s.aligned = c.n % align == 0 && c.k % align == 0;
        s.o.name =
            fmt::format("{} {}×{}×{} {}", t.str(t.pytorch.ops.name[i]), c.m, c.n, c.k, pytorch::dtype_name(c.dtype));
        if (c.batch > 1) s.o.name += fmt::format(" (batch {})", c.batch);
        std::string pad;
        if (c.n % align) pad += fmt::format("n {} → {}", c.n, round_up(c.n, align));
        if (c.k % align) pad += fmt::format("{}k {} → {}", pad.empty() ? "" : ", ", c.k, round_up(c.k, align));
        s.o.detail = pad.empty() ? "" : "pad " + pad;
      }
      ++s.o.count;
      s.o.total_ns = sat_add(s.o.total_ns, flops.gpu_ns[i]);
      s.flops = sat_add(s.flops, c.flops);
    }
    // The measured rates of the two kinds of shapes, per type of the misaligned ones' main type.
    int64_t bad_ns = 0, bad_flops = 0, good_ns = 0, good_flops = 0, all_ns = 0;
    std::map<pytorch::Dtype, int64_t> bad_by_dtype;
    std::vector<Offender> offenders;
    for (const auto& [key, s] : shapes) all_ns = sat_add(all_ns, s.o.total_ns);
    for (const auto& [key, s] : shapes) {
      if (!s.aligned) {
        bad_ns = sat_add(bad_ns, s.o.total_ns), bad_flops = sat_add(bad_flops, s.flops);
        bad_by_dtype[s.dtype] = sat_add(bad_by_dtype[s.dtype], s.o.total_ns);
        if (s.o.total_ns > 0) offenders.push_back(s.o);
      }
    }
    if (bad_ns <= 0) continue;
    const pytorch::Dtype dtype =
        std::max_element(bad_by_dtype.begin(), bad_by_dtype.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    for (const auto& [key, s] : shapes) {
      if (s.aligned && s.dtype == dtype)
        good_ns = sat_add(good_ns, s.o.total_ns), good_flops = sat_add(good_flops, s.flops);
    }
    Finding f;
    f.scope = ctx.unit_label(u);
    f.savings_ns = static_cast<int64_t>(static_cast<double>(bad_ns) * std::clamp(p.get("penalty"), 0.0, 1.0));
    rate(f, ctx, p.warning(), p.critical());
    if (!gate_on_basis(f, ctx, f.savings_ns, p.get("min_share"))) continue;
    keep_top(offenders, 5);
    const int64_t align = alignment_of(dtype);
    f.title = fmt::format(
        "{} of the matrix-multiply time ({}) runs on shapes whose n or k is not a multiple of {} (16 bytes of {})",
        human_percent(share_of(bad_ns, all_ns)), human_duration(bad_ns), align, pytorch::dtype_name(dtype));
    f.confidence = 0.5;
    const double bad_rate = static_cast<double>(bad_flops) / static_cast<double>(bad_ns) / 1e3;
    f.figures = {{"misaligned_gemm_ns", static_cast<double>(bad_ns), "ns"},
                 {"gemm_ns", static_cast<double>(all_ns), "ns"},
                 {"misaligned_tflops_per_s", bad_rate, "TFLOP/s"}};
    if (good_ns > 0) {
      const double good_rate = static_cast<double>(good_flops) / static_cast<double>(good_ns) / 1e3;
      f.figures.push_back({"aligned_tflops_per_s", good_rate, "TFLOP/s"});
      f.title += fmt::format("; they reach {:.3g} TFLOP/s, the aligned ones {:.3g}", bad_rate, good_rate);
    }
    f.offenders = std::move(offenders);
    f.remedy = fmt::format(
        "Tensor cores read rows of 16 bytes ({} {} elements): an n or k that is not a multiple of {} makes cuBLAS "
        "pick slower kernels. Pad the sizes the offenders name to multiples of {} (64 or 128 also avoid partial "
        "tiles): the model's vocabulary, hidden, intermediate or head sizes (unused rows), or the sequence length "
        "(pad the tokens or patches and mask them).",
        align, pytorch::dtype_name(dtype), align, align);
    out.push_back(std::move(f));
  }
}

}  // namespace tracedoc::diagnose
