// The GPU time breakdowns of Holistic Trace Analysis as `tracedoc stats` reports (gpu_breakdowns.h,
// launch_stats.h hold the definitions). One row per GPU: per (rank, device) on PyTorch traces (first
// column `Rank`, NULL when the trace names no rank), per (process, device) on nsys exports (first
// column `PID`). Times are exact ns; percentages are rounded to 2 decimals, as HTA rounds its own.
//
// Arguments shared by all six (report:arg[:arg...]):
//   drop-last-step  HTA's default filter: leave out the GPU work of the last ProfilerStep when the
//                   trace has two or more (tracedoc keeps it by default)
//   syncs           count CUDA synchronization records as GPU work, as HTA does
//   hta-classes     HTA 0.5.0's kernel classes (by name) instead of tracedoc's
//   hta-launches    HTA 0.5.0's lists of launch calls (launch stats, queue length)
//   hta             all four: HTA 0.5.0's numbers, up to its µs rounding and tie order
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::pytorch {

// gpu_time_breakdown — GPU Time Breakdown (HTA get_temporal_breakdown). Columns: Rank|PID, Device,
// Span (first start to last end of the GPU's work), Idle (span minus the union of the work),
// Compute (union of COMPUTATION kernels), Non-Compute (the rest of the busy time: communication and
// copies not hidden by compute), and the three as % of Span.
Status gpu_time_breakdown(const Trace&, const ReportArgs&, RowSink&);

// idle_time_breakdown — GPU Idle Time Breakdown (HTA get_idle_time_breakdown), one row per stream.
// Columns: Rank|PID, Device, Stream, Operations, Busy, Idle, Host Wait, Kernel Wait, Other Wait and
// the three waits as % of Idle. Argument `delay=NS`: the consecutive-kernel delay below which a gap
// that is not host wait is kernel wait (default 30000 ns = HTA's 30, which HTA compares with µs
// although its documentation says ns).
Status idle_time_breakdown(const Trace&, const ReportArgs&, RowSink&);

// kernel_type_breakdown — GPU Kernel Type Breakdown (HTA get_gpu_kernel_breakdown, kernel types):
// the time during which exactly a set of classes runs. Columns: Rank|PID, Device, Time (%) of the
// GPU's busy time in these classes, Total Time, Kernel Type ("COMPUTATION overlapping
// COMMUNICATION", ...). Longest first per GPU. Argument `no-memory`: leave copies and memsets out.
Status kernel_type_breakdown(const Trace&, const ReportArgs&, RowSink&);

// comm_comp_overlap — Communication/Computation Overlap (HTA get_comm_comp_overlap). Columns:
// Rank|PID, Device, Communication, Computation, Overlap (time both run), Overlap (%) of the
// communication time. NoData without communication kernels.
Status comm_comp_overlap(const Trace&, const ReportArgs&, RowSink&);

// kernel_launch_stats — Kernel Launch Statistics (HTA get_cuda_kernel_launch_stats). Columns:
// Rank|PID, Device, Launches, CPU Total (the calls), GPU Total (what they launched), Delay Total,
// Delay Avg, Delay Med, Delay Min, Delay Max, Delay StdDev (launch delay = operation start - call
// end, 0 when negative), Short Kernels, Runtime Outliers, Delay Outliers. Arguments
// `runtime-cutoff=NS` (default 50000), `delay-cutoff=NS` (default 100000), `no-memory` (kernel
// launches only).
Status kernel_launch_stats(const Trace&, const ReportArgs&, RowSink&);

// queue_length_sum — Launch Queue Length Summary (HTA get_queue_length_summary and
// get_time_spent_blocked_on_full_queue), one row per stream. Columns: Rank|PID, Device, Stream,
// Samples, Mean, StdDev, Min, Q1, Median, Q3, Max (pandas' describe of the length after each launch
// and each start, HTA's summary), Time-Weighted Mean, Blocked (time at or above the maximum queue
// length). Argument `max-queue=N` (default 1024).
Status queue_length_sum(const Trace&, const ReportArgs&, RowSink&);

// queue_length_trace — Launch Queue Length over Time (HTA get_queue_length_time_series), the same
// counting as queue_length_sum. Columns: Rank|PID, Device, Stream, Start, Queue Length: one row at
// each change, the length holding until the stream's next row (the last row of a stream is 0).
// Argument `bin=NS`: one row per bin of NS ns (from the stream's first launch) in which the queue is
// not empty, with columns Mean (time-weighted, 2 decimals) and Max instead of Queue Length.
Status queue_length_trace(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::pytorch
