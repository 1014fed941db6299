// Reports over the PyTorch-only parts of a trace (operators, ProfilerStep ranges), in the shape of the
// nsys stats reports so that `tracedoc stats -r op_sum,step_sum` prints, converts units (--timeunit)
// and filters (--filter-name) them like the others. Both return NoData on nsys exports.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::pytorch {

// op_sum — PyTorch Operator Summary (TensorBoard's operator view): one row per operator name, or per
// (name, input dims) with the report argument `op_sum:shapes`. Columns: CPU Time (%) (share of all
// CPU self time), CPU Total, CPU Self, Calls, GPU Total (kernels, copies and memsets launched by the
// op or its descendants), GPU Self (launched by the op itself), Kernels (launched by the op itself),
// [Input Dims], Operator. Totals count each span once: a call nested inside a call of the same row
// (aten::x inside aten::x) adds to Calls and to the self times but not again to the totals.
// Sorted by CPU self time descending, then operator name (and input dims).
Status op_sum(const Trace&, const ReportArgs&, RowSink&);

// op_dispatch_sum — PyTorch Framework Dispatch Summary (dispatch_overhead.h has the definitions): one
// row per operator name. Columns: Framework Time (%) (share of all framework time), Framework Time
// (CPU self time outside CUDA calls), Calls, CPU Self, CUDA API (time in runtime/driver calls made
// directly in the op), GPU Self (what those calls launched), Kernels, Framework/Kernel (framework
// time per kernel launched, NULL when none), Operator. Sorted by framework time descending.
Status op_dispatch_sum(const Trace&, const ReportArgs&, RowSink&);

// step_sum — Step Summary: one row per step, in time order. Steps are ProfilerStep#N ranges, or with
// `step_sum:marker=NAME` (or NAME* for a prefix) the NVTX / record_function ranges of that name, or,
// when a trace has neither, detected from the repeating kernel sequence (analysis/steps.h;
// `step_sum:detect` forces detection, `step_sum:nodetect` forbids it). Columns: Rank, Step, CPU Start,
// CPU Duration, GPU Start, GPU End, GPU Span (first start to last end) and GPU Busy (union of the
// intervals) of the GPU activity launched by API calls made during the step by any thread of its
// process (NULL when none), Kernels (count), Name ("step#N (detected)" for detected steps).
Status step_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::pytorch
