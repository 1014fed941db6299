#include "view/op_peaks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/pytorch/flops_reports.h"
#include "common/human_units.h"

namespace tracedoc::view {

PeakBand peak_band(double roof_share) {
  if (roof_share < 0.10) return PeakBand::kLow;
  if (roof_share < 0.30) return PeakBand::kFair;
  if (roof_share < 0.60) return PeakBand::kGood;
  return PeakBand::kHigh;
}

OpPeaks::OpPeaks(const Trace& trace) {
  const OpTable& ops = trace.pytorch.ops;
  // Without recorded shapes there is nothing to estimate: skip linking the operators.
  if (std::none_of(ops.input_dims.begin(), ops.input_dims.end(), [](StrId s) { return s != kNoStr; })) return;
  const pytorch::OpLinks links = pytorch::link_ops(trace);
  const pytorch::FlopsAttribution a = pytorch::attribute_flops(trace, links);
  const std::map<int32_t, GpuPeaks> peaks = pytorch::device_peaks(trace);
  slot_.assign(ops.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    const pytorch::OpCost& c = a.costs.cost[i];
    if (!c.known || a.costs.counted_by[i] != static_cast<int32_t>(i)) continue;
    any_ = true;
    std::string line = fmt::format("{}, {}", human_flops(c.flops), human_bytes(c.bytes));
    PeakBand band = PeakBand::kNone;
    const int64_t ns = a.gpu_ns[i];
    if (ns > 0) {
      const double tflops = static_cast<double>(c.flops) / static_cast<double>(ns) / 1e3;
      const double gbps = static_cast<double>(c.bytes) / static_cast<double>(ns);
      const auto peak = peaks.find(a.device[i]);
      const double p = peak == peaks.end() ? 0 : peak->second.peak_tflops(c.dtype);
      const double bandwidth = peak == peaks.end() ? 0 : peak->second.bandwidth_gbps;
      // An operator without FLOPs (embedding) is told by its bytes.
      if (c.flops > 0)
        line += fmt::format(" · {:.3g} TFLOP/s", tflops);
      else
        line += fmt::format(" · {:.3g} GB/s", gbps);
      if (c.flops > 0 && p > 0)
        line += fmt::format(" ({} of the {} peak)", human_percent(tflops / p), pytorch::dtype_name(c.dtype));
      if (c.flops == 0 && bandwidth > 0) line += fmt::format(" ({} of the bandwidth)", human_percent(gbps / bandwidth));
      if (p > 0) {
        // The least time the roofline allows: the FLOPs at the peak or the bytes at the memory's
        // bandwidth, whichever takes longer (ns: TFLOP/s = 10^3 FLOP/ns, GB/s = byte/ns).
        const double compute_ns = static_cast<double>(c.flops) / (p * 1e3);
        const double memory_ns = bandwidth > 0 ? static_cast<double>(c.bytes) / bandwidth : 0;
        const double share = std::max(compute_ns, memory_ns) / static_cast<double>(ns);
        line += fmt::format(" · {}-bound: {} of its roof", memory_ns > compute_ns ? "memory" : "compute",
                            human_percent(share));
        band = peak_band(share);
      }
    }
    slot_[i] = static_cast<int32_t>(bands_.size());
    bands_.push_back(band);
    kernel_lines_.push_back(fmt::format("under {}: {}", trace.str(ops.name[i]), line));
    lines_.push_back(std::move(line));
  }
  if (!any_) return;
  op_counted_.assign(a.costs.counted_by.begin(), a.costs.counted_by.end());
  kernel_counted_.assign(trace.kernels.size(), -1);
  for (size_t k = 0; k < trace.kernels.size(); ++k) {
    const int32_t op = links.launching_op(pytorch::GpuKind::kKernel, k);
    if (op != pytorch::kNoRow) kernel_counted_[k] = op_counted_[static_cast<size_t>(op)];
  }
}

int32_t OpPeaks::counted_of_op(uint32_t op_row) const {
  if (op_row >= op_counted_.size() || op_counted_[op_row] < 0) return -1;
  return slot_[static_cast<size_t>(op_counted_[op_row])];
}

int32_t OpPeaks::counted_of_kernel(uint32_t kernel_row) const {
  if (kernel_row >= kernel_counted_.size() || kernel_counted_[kernel_row] < 0) return -1;
  return slot_[static_cast<size_t>(kernel_counted_[kernel_row])];
}

PeakBand OpPeaks::op_band(uint32_t op_row) const {
  const int32_t s = counted_of_op(op_row);
  return s < 0 ? PeakBand::kNone : bands_[static_cast<size_t>(s)];
}

PeakBand OpPeaks::kernel_band(uint32_t kernel_row) const {
  const int32_t s = counted_of_kernel(kernel_row);
  return s < 0 ? PeakBand::kNone : bands_[static_cast<size_t>(s)];
}

const std::string& OpPeaks::op_line(uint32_t op_row) const {
  static const std::string kNone;
  const int32_t s = counted_of_op(op_row);
  if (s < 0) return kNone;
  // An operator inside the counted one (aten::addmm in aten::linear) shows the outer one's figures.
  return op_counted_[op_row] == static_cast<int32_t>(op_row) ? lines_[static_cast<size_t>(s)]
                                                             : kernel_lines_[static_cast<size_t>(s)];
}

const std::string& OpPeaks::kernel_line(uint32_t kernel_row) const {
  static const std::string kNone;
  const int32_t s = counted_of_kernel(kernel_row);
  return s < 0 ? kNone : kernel_lines_[static_cast<size_t>(s)];
}

}  // namespace tracedoc::view
