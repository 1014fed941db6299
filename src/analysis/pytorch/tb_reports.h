// The TensorBoard profiler plugin's Overview page as `tracedoc stats` reports (tb_overview.h holds
// the definitions). Times are exact ns; percentages are rounded to 2 decimals, as the plugin prints
// them. Both take the argument `plugin`: the plugin's own definitions where tracedoc corrects them
// (GPU-side annotations read as CPU ones, driver calls ignored, its communication rules, re-opened
// step time, operators-only CPU span), which reproduces its numbers up to its µs doubles.
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::pytorch {

// tb_step_breakdown — Step Time Breakdown (the Overview's "Step Time Breakdown" chart and its
// "Average Step Time" table). One row per step kept, in time order, then one `Average` row (the
// mean of each column over the steps; the percentages are of the mean step time), per rank.
// Columns: Rank, Step (N of ProfilerStep#N; NULL for the whole-trace step and the Average row),
// Start (the step's start stretched to its GPU work), Duration, the eight roles' times (Kernel,
// Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec, Other), the same as % of Duration,
// GPU Ops (GPU operations launched from inside the step's CPU window), Name (the range, "(whole
// trace)" without ProfilerStep ranges, "Average"). NoData without CPU events.
Status tb_step_breakdown(const Trace&, const ReportArgs&, RowSink&);

// tb_gpu_metrics — GPU metrics of the Overview ("GPU Summary"), one row per rank and GPU with
// kernels. Columns: Rank, Device, GPU Utilization (%), Est. SM Efficiency (%), Est. Achieved
// Occupancy (%), Kernel Time using Tensor Cores (%) (NULL where not measurable: no SM count or
// grid, no occupancy argument, no kernel time), Window Start and Window (the steps' span the first
// three are measured over), Kernel Busy (time in the window with a kernel running), Kernels,
// Kernel Time and Tensor Core Time (whole trace), Name (the GPU's). NoData without CPU events.
Status tb_gpu_metrics(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::pytorch
