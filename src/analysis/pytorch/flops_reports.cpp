#include "analysis/pytorch/flops_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"
#include "model/emit_nvtx_names.h"

namespace tracedoc::pytorch {

namespace {

Result<PeakOverrides> overrides_from(std::string_view report, const ReportArgs& args) {
  PeakOverrides o;
  for (auto [key, target] : {std::pair{"peak", &o.tflops}, std::pair{"bandwidth", &o.bandwidth_gbps}}) {
    const std::optional<std::string> text = text_report_arg(args, key);
    if (!text) continue;
    char* end = nullptr;
    *target = std::strtod(text->c_str(), &end);
    if (end == text->c_str() || *end != 0 || !(*target > 0) || !std::isfinite(*target))
      return UsageError(fmt::format("{}: {} must be a positive number, got '{}'", report, key, *text));
  }
  return o;
}

// Why a trace has no operators to count. An nsys export of a PyTorch run records its operators only
// as NVTX ranges; recorded with emit_nvtx(record_shapes=True) they carry their shapes and the reader
// made them operators (ingest/emit_nvtx_ops.h), so the ones left here have none ("aten::mm,
// op_id = 7").
Status no_operators(const Trace& trace) {
  size_t emitted = 0;
  for (size_t i = 0; i < trace.ranges.size(); ++i) {
    const std::optional<EmitNvtxName> e = parse_emit_nvtx_name(trace.str(trace.ranges.text[i]));
    emitted += e && e->name.starts_with("aten::");
  }
  if (emitted == 0) return no_data(trace, "does not contain PyTorch operator data.");
  return no_data(trace, fmt::format("records {} PyTorch operators as NVTX ranges (emit_nvtx), without their shapes: "
                                    "for their FLOPs, record with emit_nvtx(record_shapes=True) or profile with the "
                                    "PyTorch profiler (record_shapes=True)",
                                    emitted));
}

// A share of a peak, %. Past 100% it measures nothing of the GPU (the recorded types or shapes are
// wrong, or the peak table is), so it is left out rather than printed.
Cell peak_share_pct(double part, double peak) {
  if (!(peak > 0) || !std::isfinite(part) || part > peak) return Cell::null();
  return Cell::real(sqlite_round(part * 100.0 / peak, 1));
}
Cell rounded(double v, int digits) { return std::isfinite(v) ? Cell::real(sqlite_round(v, digits)) : Cell::null(); }

// FP32 matrix multiplies and convolutions run on the TF32 tensor cores where PyTorch allows it
// (torch.backends.cuda.matmul.allow_tf32, cudnn.allow_tf32, set_float32_matmul_precision), which the
// trace does not record. One of them that ran faster than the GPU's FP32 peak (for at least 5 µs, so
// that timestamp rounding cannot make it) shows it: that kind's FP32 operators on that GPU count
// as TF32.
void use_tf32_where_measured(const Trace& trace, FlopsAttribution& a) {
  const std::map<int32_t, GpuPeaks> peaks = device_peaks(trace);
  std::set<std::pair<int32_t, FlopKind>> tf32;
  for (size_t i = 0; i < a.costs.cost.size(); ++i) {
    const OpCost& c = a.costs.cost[i];
    if (!c.known || c.dtype != Dtype::kFp32 || !is_model_flops(c.kind) || a.gpu_ns[i] < 5000) continue;
    const auto peak = peaks.find(a.device[i]);
    if (peak == peaks.end()) continue;
    const double fp32 = peak->second.tflops[static_cast<size_t>(Dtype::kFp32)];
    if (peak->second.tflops[static_cast<size_t>(Dtype::kTf32)] <= fp32 || fp32 <= 0) continue;
    if (static_cast<double>(c.flops) / static_cast<double>(a.gpu_ns[i]) / 1e3 > fp32) tf32.emplace(a.device[i], c.kind);
  }
  if (tf32.empty()) return;
  for (size_t i = 0; i < a.costs.cost.size(); ++i) {
    OpCost& c = a.costs.cost[i];
    if (c.dtype == Dtype::kFp32 && tf32.contains({a.device[i], c.kind})) c.dtype = Dtype::kTf32;
  }
}

}  // namespace

FlopsAttribution attribute_flops(const Trace& trace, const OpLinks& links) {
  FlopsAttribution a;
  a.costs = op_costs(trace, links);
  const size_t n = trace.pytorch.ops.size();
  a.gpu_ns.assign(n, 0);
  a.device.assign(n, -1);
  const KernelTable& k = trace.kernels;
  for (size_t i = 0; i < k.size(); ++i) {
    const int32_t op = links.launching_op(GpuKind::kKernel, i);
    if (op == kNoRow) continue;
    const int32_t counted = a.costs.counted_by[static_cast<size_t>(op)];
    if (counted == kNoRow) continue;
    const auto c = static_cast<size_t>(counted);
    a.gpu_ns[c] = sat_add(a.gpu_ns[c], sat_sub(k.end[i], k.start[i]));
    if (a.device[c] < 0) a.device[c] = k.device[i];
  }
  use_tf32_where_measured(trace, a);
  return a;
}

std::map<int32_t, GpuPeaks> device_peaks(const Trace& trace, const PeakOverrides& overrides) {
  auto with_overrides = [&](std::optional<GpuPeaks> p) {
    if (!p && overrides.tflops <= 0) return p;
    if (!p) p = GpuPeaks{"--peak"};
    if (overrides.tflops > 0) p->tflops.fill(overrides.tflops), p->tflops[0] = 0;
    if (overrides.bandwidth_gbps > 0) p->bandwidth_gbps = overrides.bandwidth_gbps;
    return p;
  };
  std::map<int32_t, GpuPeaks> out;
  std::optional<GpuPeaks> only;  // the one kind of GPU the trace names, if it names one
  bool several = false;
  for (const DeviceInfo& d : trace.devices) {
    // The user's GPUs and the table first; a GPU they lack from the clock and SMs the trace recorded.
    std::optional<GpuPeaks> known = gpu_peaks(trace.str(d.name), d.total_memory);
    if (!known) {
      known = gpu_peaks_from_clock(trace.str(d.name), d.compute_major, d.compute_minor, d.sm_count, d.clock_hz,
                                   d.memory_bandwidth);
    }
    const std::optional<GpuPeaks> p = with_overrides(known);
    if (!p) {
      several = true;  // a GPU the table lacks: no guess for the unnamed ones
      continue;
    }
    if (only && only->name != p->name) several = true;
    if (!only) only = p;
    out.emplace(d.id, *p);
  }
  // GPUs the kernels ran on that the trace does not describe (a ROCm trace lists its visible device
  // as 0 while its kernels run on 2; a trace naming no device at all) are the trace's one kind of
  // GPU, or the overrides' (a user's peak for any GPU, --peak-tflops, when it names none).
  if (trace.devices.empty()) only = with_overrides(gpu_peaks(""));
  if (!only || several) return out;
  const std::set<int32_t> devices(trace.kernels.device.begin(), trace.kernels.device.end());
  for (int32_t d : devices) out.emplace(d, *only);
  if (out.empty()) out.emplace(0, *only);
  return out;
}

std::vector<StepFlops> step_flops(const Trace& trace, const StepSet& steps, const FlopsAttribution& flops,
                                  const std::map<int32_t, GpuPeaks>& peaks) {
  const OpTable& ops = trace.pytorch.ops;
  std::vector<StepFlops> out(steps.steps.size());
  // Steps of one process do not overlap: each operator goes to the step whose window holds its start.
  std::vector<size_t> order(steps.steps.size());
  for (size_t s = 0; s < order.size(); ++s) {
    out[s].step = s;
    out[s].wall = sat_sub(steps.steps[s].end, steps.steps[s].start);
    order[s] = s;
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tie(steps.steps[a].global_pid, steps.steps[a].start) <
           std::tie(steps.steps[b].global_pid, steps.steps[b].start);
  });
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost& c = flops.costs.cost[i];
    if (!c.known || !is_model_flops(c.kind) || flops.costs.counted_by[i] != static_cast<int32_t>(i)) continue;
    const int64_t pid = global_pid_of(ops.global_tid[i]);
    auto it =
        std::upper_bound(order.begin(), order.end(), std::pair{pid, ops.start[i]}, [&](const auto& key, size_t s) {
          return key < std::pair{steps.steps[s].global_pid, steps.steps[s].start};
        });
    if (it == order.begin()) continue;
    const StepWindow& w = steps.steps[*std::prev(it)];
    if (w.global_pid != pid || ops.start[i] > w.end) continue;
    StepFlops& sf = out[*std::prev(it)];
    sf.model_flops = sat_add(sf.model_flops, c.flops);
    const auto peak = peaks.find(flops.device[i]);
    const double tflops = peak == peaks.end() ? 0 : peak->second.peak_tflops(c.dtype);
    if (tflops > 0)
      sf.seconds_at_peak += static_cast<double>(c.flops) / (tflops * 1e12);
    else
      sf.peaks_known = false;
  }
  return out;
}

Status op_flops_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_report_args("op_flops_sum", args, {}, {"peak", "bandwidth"}));
  TRACEDOC_ASSIGN_OR_RETURN(const PeakOverrides overrides, overrides_from("op_flops_sum", args));
  const OpTable& ops = trace.pytorch.ops;
  if (ops.size() == 0) return no_operators(trace);
  const OpLinks links = link_ops(trace);
  const FlopsAttribution flops = attribute_flops(trace, links);
  const std::map<int32_t, GpuPeaks> peaks = device_peaks(trace, overrides);

  struct Group {
    StrId name = kNoStr, dims = kNoStr;
    Dtype dtype = Dtype::kUnknown;
    FlopKind kind = FlopKind::kNone;
    int32_t device = -1;
    int64_t calls = 0, flops = 0, bytes = 0, gpu_ns = 0;
  };
  std::map<std::tuple<StrId, StrId, Dtype, int32_t>, Group> groups;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost& c = flops.costs.cost[i];
    if (!c.known || flops.costs.counted_by[i] != static_cast<int32_t>(i)) continue;
    if (!args.name_ok(trace.str(ops.name[i]))) continue;
    Group& g = groups[{ops.name[i], ops.input_dims[i], c.dtype, flops.device[i]}];
    g.name = ops.name[i], g.dims = ops.input_dims[i], g.dtype = c.dtype, g.kind = c.kind, g.device = flops.device[i];
    ++g.calls;
    g.flops = sat_add(g.flops, c.flops);
    g.bytes = sat_add(g.bytes, c.bytes);
    g.gpu_ns = sat_add(g.gpu_ns, flops.gpu_ns[i]);
  }
  if (groups.empty()) {
    return no_data(trace, ops.input_dims.empty() || std::all_of(ops.input_dims.begin(), ops.input_dims.end(),
                                                                [](StrId s) { return s == kNoStr; })
                              ? "does not record operator shapes (profile with record_shapes=True)."
                              : "has no operator whose shapes give its FLOPs.");
  }
  std::vector<const Group*> rows;
  for (const auto& [key, g] : groups) rows.push_back(&g);
  std::sort(rows.begin(), rows.end(), [&](const Group* a, const Group* b) {
    if (a->flops != b->flops) return a->flops > b->flops;
    if (a->gpu_ns != b->gpu_ns) return a->gpu_ns > b->gpu_ns;
    return std::tie(a->name, a->dims, a->dtype) < std::tie(b->name, b->dims, b->dtype);
  });
  sink.begin({{"Kind", Unit::kNone},
              {"Calls", Unit::kNone},
              {"FLOPs", Unit::kNone},
              {"Bytes", Unit::kNone},
              {"GPU Time", Unit::kDurNs},
              {"TFLOP/s", Unit::kNone},
              {"GB/s", Unit::kNone},
              {"FLOP/Byte", Unit::kNone},
              {"Peak", Unit::kRatioPct},
              {"Bandwidth", Unit::kRatioPct},
              {"Bound", Unit::kNone},
              {"Dtype", Unit::kNone},
              {"Input Dims", Unit::kNone},
              {"Operator", Unit::kNone}});
  std::vector<Cell> row;
  for (const Group* g : rows) {
    const auto ns = static_cast<double>(g->gpu_ns);
    const double tflops = g->gpu_ns > 0 ? static_cast<double>(g->flops) / ns / 1e3 : NAN;
    const double gbps = g->gpu_ns > 0 ? static_cast<double>(g->bytes) / ns : NAN;
    const double intensity = g->bytes > 0 ? static_cast<double>(g->flops) / static_cast<double>(g->bytes) : NAN;
    const auto peak = peaks.find(g->device);
    const double peak_tflops = peak == peaks.end() ? 0 : peak->second.peak_tflops(g->dtype);
    const double bandwidth = peak == peaks.end() ? 0 : peak->second.bandwidth_gbps;
    // The roofline's ridge: the intensity at which the memory feeds the units at their peak.
    std::string_view bound;
    if (peak_tflops > 0 && bandwidth > 0 && std::isfinite(intensity))
      bound = intensity >= peak_tflops * 1e3 / bandwidth ? "compute" : "memory";
    row.clear();
    row.push_back(Cell::text(flop_kind_name(g->kind)));
    row.push_back(Cell::integer(g->calls));
    row.push_back(Cell::integer(g->flops));
    row.push_back(Cell::integer(g->bytes));
    row.push_back(Cell::integer(g->gpu_ns));
    row.push_back(rounded(tflops, 3));
    row.push_back(rounded(gbps, 1));
    row.push_back(rounded(intensity, 2));
    row.push_back(g->gpu_ns > 0 ? peak_share_pct(tflops, peak_tflops) : Cell::null());
    row.push_back(g->gpu_ns > 0 ? peak_share_pct(gbps, bandwidth) : Cell::null());
    row.push_back(bound.empty() ? Cell::null() : Cell::text(bound));
    row.push_back(Cell::text(dtype_name(g->dtype)));
    row.push_back(g->dims == kNoStr ? Cell::null() : Cell::pooled(trace.str(g->dims)));
    row.push_back(Cell::pooled(trace.str(g->name)));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status step_mfu_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  ReportArgs step_args;
  ReportArgs peak_args;
  for (const std::string& a : args.args)
    (a.starts_with("peak=") || a.starts_with("bandwidth=") ? peak_args : step_args).args.push_back(a);
  TRACEDOC_ASSIGN_OR_RETURN(const PeakOverrides overrides, overrides_from("step_mfu_sum", peak_args));
  TRACEDOC_ASSIGN_OR_RETURN(auto options, step_options_from_args(step_args.args));
  if (trace.pytorch.ops.size() == 0) return no_operators(trace);
  const OpLinks links = link_ops(trace);
  auto found = find_steps(trace, options, &links.launches);
  if (!found.ok()) {
    if (found.status().code() != ErrorCode::kNoData) return found.status();
    return no_data(trace, "has no steps (no ProfilerStep ranges, no --step-marker, nothing periodic).");
  }
  const FlopsAttribution flops = attribute_flops(trace, links);
  const std::map<int32_t, GpuPeaks> peaks = device_peaks(trace, overrides);
  const std::vector<StepFlops> per_step = step_flops(trace, *found, flops, peaks);
  sink.begin({{"Rank", Unit::kNone},
              {"Step", Unit::kNone},
              {"Wall", Unit::kDurNs},
              {"Model FLOPs", Unit::kNone},
              {"TFLOP/s", Unit::kNone},
              {"MFU", Unit::kRatioPct},
              {"GPU", Unit::kNone}});
  std::vector<Cell> row;
  std::set<std::string_view> names;
  for (const auto& [device, p] : peaks) names.insert(p.name);
  std::string gpu_names;
  for (std::string_view n : names) gpu_names += (gpu_names.empty() ? "" : ", ") + std::string(n);
  for (const StepFlops& s : per_step) {
    const StepWindow& w = found->steps[s.step];
    const int64_t rank = trace.rank_of(w.global_pid);
    row.clear();
    row.push_back(rank >= 0 ? Cell::integer(rank) : Cell::null());
    row.push_back(w.number == kNoValue ? Cell::integer(static_cast<int64_t>(s.step)) : Cell::integer(w.number));
    row.push_back(Cell::integer(s.wall));
    row.push_back(Cell::integer(s.model_flops));
    row.push_back(rounded(s.tflops_per_s(), 3));
    row.push_back(s.peaks_known && s.wall > 0 && s.mfu_pct() <= 100 ? rounded(s.mfu_pct(), 2) : Cell::null());
    row.push_back(gpu_names.empty() ? Cell::null() : Cell::text(gpu_names));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
