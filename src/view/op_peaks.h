// The operators' FLOPs (analysis/pytorch/flops_reports.h) as the timeline shows them: each counted
// operator's FLOPs, achieved TFLOP/s and share of its roof on its hover, and for the "peak" colour
// preset its band. The operators nested in a counted one and the kernels launched under it take its
// figures.
//
// The roof of an operator is what the roofline allows at its arithmetic intensity I (FLOPs per
// byte): min(peak of its dtype, I × memory bandwidth). An operator at 50% of its roof runs half as
// fast as its GPU could run that work, whether the work is compute- or memory-bound.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"
#include "view/color_scheme.h"

namespace tracedoc::view {

class OpPeaks {
 public:
  OpPeaks() = default;  // no estimates
  explicit OpPeaks(const Trace& trace);
  // Whether any operator has a FLOPs estimate (the trace recorded shapes).
  bool any() const { return any_; }
  PeakBand op_band(uint32_t op_row) const;
  PeakBand kernel_band(uint32_t kernel_row) const;
  // "4.41 GFLOP, 40.1 MB · 107 TFLOP/s (10.8% of the bf16 peak) · memory-bound: 98.7% of its roof";
  // empty for an operator without an estimate; an operator inside a counted one gets its line as
  // kernel_line words it.
  const std::string& op_line(uint32_t op_row) const;
  const std::string& kernel_line(uint32_t kernel_row) const;  // "under aten::linear: ..."

 private:
  int32_t counted_of_op(uint32_t op_row) const;
  int32_t counted_of_kernel(uint32_t kernel_row) const;

  bool any_ = false;
  std::vector<int32_t> op_counted_;      // per operator: the counted operator holding it, -1 none
  std::vector<int32_t> kernel_counted_;  // per kernel: the counted operator it ran under, -1 none
  std::vector<int32_t> slot_;            // per operator: index into bands_ / lines_, -1 none
  std::vector<PeakBand> bands_;
  std::vector<std::string> lines_, kernel_lines_;
};

// The band of a share of the roof: under 10% low, under 30% fair, under 60% good, else high.
PeakBand peak_band(double roof_share);

}  // namespace tracedoc::view
