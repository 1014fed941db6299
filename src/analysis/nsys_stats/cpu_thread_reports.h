// cpu_thread_sum — CPU Thread Summary (analysis/cpu_threads.h): one row per CPU thread, ordered by
// (PID, TID). Columns: PID, TID, Thread (name), Main ("yes" for the process's main thread), Span
// (first to last event), Running (thread switches; NULL without them), Running (%) of the span,
// Switches In, Samples, Samples Running (%), OS Runtime (outermost OS runtime calls), Lock Waits
// (count), Lock Wait, Longest Lock Wait, I/O Wait, Sleep, CUDA API (time in CUDA/HIP calls), Sync
// Wait (time in synchronizing calls). Not an nsys report; works on nsys exports (switches, samples,
// OS runtime, CUDA API) and PyTorch traces (CUDA API only).
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

Status cpu_thread_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc::nsys_stats
