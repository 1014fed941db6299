// How close a PyTorch run comes to its GPU's peak (docs/flops.md):
//
//   op_flops_sum  per operator, input shapes and dtype (the operators op_flops.h counts): Kind,
//                 Calls, FLOPs, Bytes, GPU Time (the kernels launched under the operators), TFLOP/s,
//                 GB/s, FLOP/Byte, Peak (%) of the dtype's peak and Bandwidth (%) of the memory's,
//                 Bound (compute or memory: which side of the roofline's ridge the intensity falls),
//                 Dtype, Input Dims, Operator; by FLOPs. `:peak=TFLOPS` and `:bandwidth=GBPS` stand
//                 for a GPU the table (analysis/gpu_peaks.h) lacks, or override it.
//   step_mfu_sum  per step (analysis/steps.h): its wall time, the model FLOPs of its operators
//                 (matrix multiplies, convolutions, attention), TFLOP/s and MFU: the time those FLOPs
//                 take at the GPU's peak for their dtypes over the step's wall time (for one dtype,
//                 FLOPs / (wall time × peak)). Same arguments, and the step ones (`:marker=NAME`).
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <optional>
#include <vector>

#include "analysis/gpu_peaks.h"
#include "analysis/pytorch/op_flops.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/report.h"
#include "analysis/steps.h"

namespace tracedoc::pytorch {

// The counted operators' costs with the GPU time and device of the kernels launched under them.
struct FlopsAttribution {
  OpCosts costs;
  std::vector<int64_t> gpu_ns;  // per operator: kernel time under it (counted operators only)
  std::vector<int32_t> device;  // per operator: the GPU of its first kernel, -1 without kernels
};
FlopsAttribution attribute_flops(const Trace& trace, const OpLinks& links);

// The peaks of each GPU of the trace (by device id): the user's (--gpu-peaks), the table's, else from the
// clock and SMs the trace recorded (gpu_peaks_from_clock); the overrides replace what they set.
struct PeakOverrides {
  double tflops = 0;          // > 0: every dtype's peak
  double bandwidth_gbps = 0;  // > 0: the memory bandwidth
};
std::map<int32_t, GpuPeaks> device_peaks(const Trace& trace, const PeakOverrides& overrides = {});

struct StepFlops {
  size_t step = 0;             // index into the StepSet
  TimeNs wall = 0;             // the step's CPU window
  int64_t model_flops = 0;     // matrix multiplies, convolutions, attention
  double seconds_at_peak = 0;  // what those FLOPs take at their dtypes' peaks
  bool peaks_known = true;     // every one of them ran on a GPU with a known peak for its dtype
  double tflops_per_s() const {
    return wall > 0 ? static_cast<double>(model_flops) / static_cast<double>(wall) / 1e3 : 0;
  }
  double mfu_pct() const { return wall > 0 ? seconds_at_peak * 1e11 / static_cast<double>(wall) : 0; }
};
std::vector<StepFlops> step_flops(const Trace& trace, const StepSet& steps, const FlopsAttribution& flops,
                                  const std::map<int32_t, GpuPeaks>& peaks);

Status op_flops_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);
Status step_mfu_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc::pytorch
