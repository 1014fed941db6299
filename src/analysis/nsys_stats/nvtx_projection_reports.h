// Reports that attribute GPU work to NVTX ranges (see nvtx_projection.h for the attribution rules).
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

// One row per range that launched GPU work: projected start/duration on the GPU, original range,
// stack level, parent and children.
Status nvtx_gpu_proj_trace(const Trace&, const ReportArgs&, RowSink&);
// nvtx_gpu_proj_trace grouped by range name and style.
Status nvtx_gpu_proj_sum(const Trace&, const ReportArgs&, RowSink&);
// Kernel durations grouped by (range name, style, process, thread, kernel name); a kernel counts in
// every range that contains its launch. Arguments: base | mangled (kernel name variant).
Status nvtx_kern_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::nsys_stats
