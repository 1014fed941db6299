// Summary-style reports (one row per name with count, total, avg, median, min, max, stdev).
#pragma once

#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

Status cuda_gpu_kern_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_gpu_kern_gb_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_gpu_mem_time_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_gpu_mem_size_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_api_sum(const Trace&, const ReportArgs&, RowSink&);
Status osrt_sum(const Trace&, const ReportArgs&, RowSink&);
Status nvtx_sum(const Trace&, const ReportArgs&, RowSink&);
Status nvtx_pushpop_sum(const Trace&, const ReportArgs&, RowSink&);
Status nvtx_startend_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_gpu_sum(const Trace&, const ReportArgs&, RowSink&);
Status cuda_api_gpu_sum(const Trace&, const ReportArgs&, RowSink&);

// The columns each of them reads (ReportDef::columns).
ColumnSelection kernel_sum_columns(const ReportArgs&);         // cuda_gpu_kern_sum
ColumnSelection kernel_config_sum_columns(const ReportArgs&);  // cuda_gpu_kern_gb_sum
ColumnSelection memop_sum_columns(const ReportArgs&);          // cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum
ColumnSelection api_sum_columns(const ReportArgs&);            // cuda_api_sum
ColumnSelection osrt_sum_columns(const ReportArgs&);
ColumnSelection nvtx_sum_columns(const ReportArgs&);     // nvtx_sum, nvtx_pushpop_sum, nvtx_startend_sum
ColumnSelection gpu_sum_columns(const ReportArgs&);      // cuda_gpu_sum
ColumnSelection api_gpu_sum_columns(const ReportArgs&);  // cuda_api_gpu_sum

}  // namespace tracedoc::nsys_stats
