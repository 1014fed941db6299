// Kernel launch & execution reports: each kernel joined with the CUDA API call that launched it,
// split into API time (the call), queue time (call end to kernel start) and kernel time.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

// cuda_kern_exec_sum: statistics per (PID, TID, device, API name, kernel name).
Status cuda_kern_exec_sum(const Trace&, const ReportArgs&, RowSink&);
// cuda_kern_exec_trace: one row per (kernel, launching call), ordered by call start.
Status cuda_kern_exec_trace(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::nsys_stats
