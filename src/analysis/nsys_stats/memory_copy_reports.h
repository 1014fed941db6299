// Timeline reports on GPU memory and memory copies, for nsys exports and PyTorch traces alike:
// how much memory each process held on each GPU over time and per step, and how fast copies ran
// against the GPU's host link and how much of each step they took. Not nsys reports; they follow
// the nsys reports' conventions (NoData for missing data, ns and bytes converted by the writers).
//
// The step reports take the steps of analysis/steps.h: ProfilerStep#N ranges (PyTorch's, or NVTX
// ranges of that name in an nsys export), or the ranges named by `marker=NAME`, or with `detect`
// the steps detected from the repeating kernel sequence. Each step is read as the half-open window
// [start, end) of its range: an event at the end instant belongs to the next step. A process
// without steps is reported as one "(whole trace)" window (Step NULL). Rank is NULL outside PyTorch
// traces; PID is the process id.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

// gpu_mem_sum — GPU Memory Summary: one row per (process, device) with GPU memory events, in
// (rank, pid, device) order (analysis/gpu_memory.h says where the events come from). Columns:
// Rank, PID, Device, Peak Allocated, Peak Time (the first event that reached the peak), Start
// Allocated (before the first event), End Allocated (after the last), Growth (end - start),
// Allocations, Frees, Bytes Allocated, Bytes Freed, Peak Reserved (PyTorch's "Total Reserved";
// NULL where not recorded), Source ("allocator totals" when the values are PyTorch's recorded
// totals, which include memory allocated before profiling began; "event sizes" when they are the
// sum of the events' sizes from 0 at the first event).
Status gpu_mem_sum(const Trace&, const ReportArgs&, RowSink&);

// gpu_mem_step_sum — GPU Memory per Step: one row per step and device of the step's process.
// Columns: Rank, PID, Device, Step, Start, Duration, Start Allocated (just before the step),
// End Allocated (at its end, events at the end instant excluded), Growth, Peak Allocated (within the
// step, start value included), Peak Time, Allocations, Frees, Name. The whole-trace window of a
// process without steps runs from its first memory event to its last. `--filter-name` matches the
// step name. Arguments: marker=NAME, detect.
Status gpu_mem_step_sum(const Trace&, const ReportArgs&, RowSink&);

// gpu_mem_trace — GPU Memory Trace: the step function itself, one row per memory event in time
// order. Columns: Time, Rank, PID, Device, Bytes (signed: frees negative), Allocated (after the
// event), Reserved (after the event, NULL where not recorded).
Status gpu_mem_trace(const Trace&, const ReportArgs&, RowSink&);

// gpu_copy_sum — GPU Copy Throughput Summary: one row per (process, device, copy kind, source kind,
// destination kind). Columns: Rank, PID, Device, GPU (name), Copy Kind, Src Kind, Dst Kind, Count,
// Total Bytes, Total Time, Throughput (total bytes / total time), Med Throughput (median of the
// per-copy throughputs), Link, Link Peak, Link Use (throughput / link peak, %). Link columns are
// filled for copies that cross the host link (host <-> device); Link is "unknown" when the GPU is
// not in the link table (analysis/host_link.h) and NULL for copies on the device side.
Status gpu_copy_sum(const Trace&, const ReportArgs&, RowSink&);

// gpu_copy_step_sum — GPU Copy Time per Step: one row per step (or whole trace) of every process
// with copies or steps. Columns: Rank, PID, Step, Start, Duration, Copies and Bytes (of the copies
// that started in the step), Copy Time (union of the copy intervals inside the step), Copy (% of
// the step's duration), HtoD Time, DtoH Time, DtoD Time, Other Time (peer-to-peer, host-to-host,
// unknown), Name. `--filter-name` matches the step name. Arguments: marker=NAME, detect.
Status gpu_copy_step_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::nsys_stats
