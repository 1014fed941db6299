#include "analysis/nsys_stats/registry.h"

#include <fmt/format.h>

#include "analysis/nsys_stats/cpu_thread_reports.h"
#include "analysis/nsys_stats/kernel_exec_reports.h"
#include "analysis/nsys_stats/memory_copy_reports.h"
#include "analysis/nsys_stats/nvtx_projection_reports.h"
#include "analysis/nsys_stats/summary_reports.h"
#include "analysis/nsys_stats/trace_reports.h"
#include "analysis/nsys_stats/um_openmp_reports.h"
#include "analysis/pytorch/gpu_breakdown_reports.h"
#include "analysis/pytorch/op_kernel_sum.h"
#include "analysis/pytorch/pytorch_reports.h"
#include "analysis/pytorch/python_functions.h"
#include "analysis/pytorch/tb_reports.h"
#include "model/table_set.h"

namespace tracedoc::nsys_stats {

Status no_data(const Trace& trace, std::string_view what) {
  return NoData(fmt::format("{} {}", trace.source.path, what));
}

std::vector<ColumnSpec> time_summary_columns(const char* count_name) {
  return {{"Time", Unit::kRatioPct}, {"Total Time", Unit::kDurNs}, {count_name, Unit::kNone},
          {"Avg", Unit::kDurNs},     {"Med", Unit::kDurNs},        {"Min", Unit::kDurNs},
          {"Max", Unit::kDurNs},     {"StdDev", Unit::kDurNs}};
}

void push_time_summary_cells(std::vector<Cell>& row, const SummaryStats& s, int64_t grand_total) {
  row.push_back(grand_total == 0 ? Cell::null()
                                 : Cell::real(sqlite_round(static_cast<double>(s.total) * 100.0 /
                                                           static_cast<double>(grand_total), 1)));
  row.push_back(Cell::integer(s.total));
  row.push_back(Cell::integer(s.count));
  row.push_back(Cell::real(sqlite_round(s.avg, 1)));
  row.push_back(Cell::real(sqlite_round(s.median, 1)));
  row.push_back(Cell::integer(s.min));
  row.push_back(Cell::integer(s.max));
  row.push_back(Cell::real(sqlite_round(s.stdev, 1)));
}

const std::vector<ReportDef>& all_reports() {
  static const std::vector<ReportDef> reports = {
      // HTA's GPU time breakdowns (comm_comp_overlap, gpu_time_breakdown, idle_time_breakdown, kernel_launch_stats,
      // kernel_type_breakdown, queue_length_sum, queue_length_trace): PyTorch traces and nsys exports; args in gpu_breakdown_reports.h.
      {"comm_comp_overlap", "Communication/Computation Overlap", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::comm_comp_overlap},
      {"cpu_thread_sum", "CPU Thread Summary", kLoadCpuSched | kLoadOsCalls | kLoadApi, cpu_thread_sum},
      {"cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, cuda_api_gpu_sum},
      {"cuda_api_sum", "CUDA API Summary", kLoadApi, cuda_api_sum},
      {"cuda_api_trace", "CUDA API Trace", kLoadApi, cuda_api_trace},
      {"cuda_gpu_kern_gb_sum", "CUDA GPU Kernel/Grid/Block Summary", kLoadKernels, cuda_gpu_kern_gb_sum},
      {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", kLoadKernels, cuda_gpu_kern_sum},
      {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", kLoadMemcpy | kLoadMemset, cuda_gpu_mem_size_sum},
      {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", kLoadMemcpy | kLoadMemset, cuda_gpu_mem_time_sum},
      {"cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps)", kLoadKernels | kLoadMemcpy | kLoadMemset, cuda_gpu_sum},
      {"cuda_gpu_trace", "CUDA GPU Trace", kLoadKernels | kLoadMemcpy | kLoadMemset, cuda_gpu_trace},
      {"cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary", kLoadApi | kLoadKernels, cuda_kern_exec_sum},
      {"cuda_kern_exec_trace", "CUDA Kernel Launch & Exec Time Trace", kLoadApi | kLoadKernels, cuda_kern_exec_trace},
      // GPU memory over time and copy throughput (nsys exports and PyTorch traces; not nsys reports).
      {"gpu_copy_step_sum", "GPU Copy Time per Step", kLoadMemcpy | kLoadKernels | kLoadMemset | kLoadRanges | kLoadApi, gpu_copy_step_sum},
      {"gpu_copy_sum", "GPU Copy Throughput Summary", kLoadMemcpy, gpu_copy_sum},
      {"gpu_mem_step_sum", "GPU Memory per Step", kLoadMemory | kLoadRanges | kLoadApi | kLoadKernels, gpu_mem_step_sum},
      {"gpu_mem_sum", "GPU Memory Summary", kLoadMemory, gpu_mem_sum},
      {"gpu_mem_trace", "GPU Memory Trace", kLoadMemory, gpu_mem_trace},
      {"gpu_time_breakdown", "GPU Time Breakdown", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::gpu_time_breakdown},
      {"idle_time_breakdown", "GPU Idle Time Breakdown", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::idle_time_breakdown},
      {"kernel_launch_stats", "Kernel Launch Statistics", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::kernel_launch_stats},
      {"kernel_type_breakdown", "GPU Kernel Type Breakdown", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::kernel_type_breakdown},
      {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary", kLoadRanges | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, nvtx_gpu_proj_sum},
      {"nvtx_gpu_proj_trace", "NVTX GPU Projection Trace", kLoadRanges | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, nvtx_gpu_proj_trace},
      {"nvtx_kern_sum", "NVTX Range Kernel Summary", kLoadRanges | kLoadApi | kLoadKernels, nvtx_kern_sum},
      {"nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", kLoadRanges, nvtx_pushpop_sum},
      {"nvtx_startend_sum", "NVTX Start/End Range Summary", kLoadRanges, nvtx_startend_sum},
      {"nvtx_sum", "NVTX Range Summary", kLoadRanges, nvtx_sum},
      // PyTorch traces only (the table bits are for nsys exports, which hold no PyTorch data).
      // op_sum:shapes groups operators by (name, input dims).
      // op_kernel_sum[:aten|:top]: kernels per launching operator (innermost, deepest aten::, outermost).
      // op_dispatch_sum: framework CPU time per operator outside CUDA calls, against the GPU time it launched.
      {"op_dispatch_sum", "PyTorch Framework Dispatch Summary", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::op_dispatch_sum},
      {"op_kernel_sum", "PyTorch Operator/Kernel Summary", kLoadApi | kLoadKernels | kLoadRanges, pytorch::op_kernel_sum},
      {"op_sum", "PyTorch Operator Summary", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::op_sum},
      {"openmp_sum", "OpenMP Summary", kLoadOpenMp, openmp_sum},
      {"osrt_sum", "OS Runtime Summary", kLoadOsCalls, osrt_sum},
      {"python_func_sum", "Python Function Summary", kLoadPythonFunctions, pytorch::python_func_sum},  // PyTorch traces, with_stack=True
      {"queue_length_sum", "Launch Queue Length Summary", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::queue_length_sum},
      {"queue_length_trace", "Launch Queue Length over Time", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::queue_length_trace},
      {"step_sum", "PyTorch Step Summary", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::step_sum},
      // The TensorBoard profiler plugin's Overview (PyTorch traces; `:plugin` = the plugin's own definitions).
      {"tb_gpu_metrics", "TensorBoard Plugin GPU Metrics", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::tb_gpu_metrics},
      {"tb_step_breakdown", "TensorBoard Plugin Step Time Breakdown", kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::tb_step_breakdown},
      {"um_sum", "Unified Memory Analysis Summary", kLoadUnifiedMemory, um_sum},
  };
  return reports;
}

const ReportDef* find_report(std::string_view name) {
  for (const auto& r : all_reports()) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

const std::vector<std::string>& default_reports() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> wanted = {"nvtx_sum", "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum",
                                       "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "openmp_sum", "um_sum"};
    std::vector<std::string> out;
    for (auto& w : wanted) if (find_report(w)) out.push_back(w);
    return out;
  }();
  return names;
}

}  // namespace tracedoc::nsys_stats
