#include "analysis/report_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "analysis/cpu_samples.h"
#include "analysis/gpu_metrics.h"
#include "analysis/thread_schedule.h"
#include "analysis/ncu_reports.h"
#include "analysis/nsys_stats/cpu_thread_reports.h"
#include "analysis/nsys_stats/kernel_exec_reports.h"
#include "analysis/nsys_stats/memory_copy_reports.h"
#include "analysis/nsys_stats/nvtx_projection_reports.h"
#include "analysis/nsys_stats/summary_reports.h"
#include "analysis/nsys_stats/trace_reports.h"
#include "analysis/nsys_stats/um_openmp_reports.h"
#include "analysis/pytorch/flops_reports.h"
#include "analysis/pytorch/gpu_breakdown_reports.h"
#include "analysis/pytorch/op_kernel_sum.h"
#include "analysis/pytorch/pytorch_reports.h"
#include "analysis/pytorch/python_functions.h"
#include "analysis/pytorch/tb_reports.h"
#include "model/table_set.h"

namespace tracedoc {

using namespace nsys_stats;

Status no_data(const Trace& trace, std::string_view what) {
  return NoData(fmt::format("{} {}", trace.source.path, what));
}

namespace {

// `key=...`: the text after the '=', or nullopt for another argument.
std::optional<std::string_view> value_of(std::string_view arg, std::string_view key) {
  if (arg.size() <= key.size() || arg.substr(0, key.size()) != key || arg[key.size()] != '=') return std::nullopt;
  return arg.substr(key.size() + 1);
}

}  // namespace

Status check_report_args(std::string_view report, const ReportArgs& args, const std::vector<std::string_view>& flags,
                         const std::vector<std::string_view>& keys) {
  for (const std::string& a : args.args) {
    bool known = std::find(flags.begin(), flags.end(), std::string_view(a)) != flags.end();
    for (std::string_view k : keys) known = known || value_of(a, k).has_value();
    if (!known) return UsageError(fmt::format("{}: unknown argument '{}'", report, a));
  }
  return Status::Ok();
}

Result<int64_t> int_report_arg(std::string_view report, const ReportArgs& args, std::string_view key,
                               int64_t fallback) {
  int64_t value = fallback;
  for (const std::string& a : args.args) {
    const std::optional<std::string_view> text = value_of(a, key);
    if (!text) continue;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (ec != std::errc() || end != text->data() + text->size() || value < 0) {
      return UsageError(fmt::format("{}: {} must be a non-negative integer, got '{}'", report, key, *text));
    }
  }
  return value;
}

std::optional<std::string> text_report_arg(const ReportArgs& args, std::string_view key) {
  std::optional<std::string> out;
  for (const std::string& a : args.args) {
    if (const std::optional<std::string_view> text = value_of(a, key)) out = std::string(*text);
  }
  return out;
}

const std::vector<ReportDef>& all_reports() {
  static const std::vector<ReportDef> reports = {
      // HTA's GPU time breakdowns (comm_comp_overlap, gpu_time_breakdown, idle_time_breakdown, kernel_launch_stats,
      // kernel_type_breakdown, queue_length_sum, queue_length_trace): PyTorch traces and nsys exports; args in
      // gpu_breakdown_reports.h.
      {"comm_comp_overlap", "Communication/Computation Overlap", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::comm_comp_overlap},
      // CPU samples with call stacks, per function (nsys --sample=cpu).
      {"cpu_sample_sum", "CPU Sample Summary (by Function)", ReportKind::kSummary,
       kLoadCpuSched | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, cpu_sample_sum},
      {"cpu_sample_class_sum", "CPU Sample Summary (by Thread and Class)", ReportKind::kSummary,
       kLoadCpuSched | kLoadOsCalls | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges,
       cpu_sample_class_sum},
      {"cpu_sample_tree", "CPU Sample Call Tree", ReportKind::kSummary,
       kLoadCpuSched | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, cpu_sample_tree},
      {"cpu_thread_sched_sum", "CPU Thread Scheduling Summary", ReportKind::kSummary,
       kLoadCpuSched | kLoadOsCalls | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges,
       cpu_thread_sched_sum},
      {"cpu_thread_sum", "CPU Thread Summary", ReportKind::kSummary, kLoadCpuSched | kLoadOsCalls | kLoadApi,
       cpu_thread_sum},
      {"cuda_api_gpu_sum", "CUDA Summary (API/Kernels/MemOps)", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, cuda_api_gpu_sum, api_gpu_sum_columns},
      {"cuda_api_sum", "CUDA API Summary", ReportKind::kSummary, kLoadApi, cuda_api_sum, api_sum_columns},
      {"cuda_api_trace", "CUDA API Trace", ReportKind::kTrace, kLoadApi, cuda_api_trace},
      {"cuda_gpu_kern_gb_sum", "CUDA GPU Kernel/Grid/Block Summary", ReportKind::kSummary, kLoadKernels,
       cuda_gpu_kern_gb_sum, kernel_config_sum_columns},
      {"cuda_gpu_kern_sum", "CUDA GPU Kernel Summary", ReportKind::kSummary, kLoadKernels, cuda_gpu_kern_sum,
       kernel_sum_columns},
      // Needs --ncu REPORT: the kernel summary with the Nsight Compute answers beside it.
      {"ncu_kern_sum", "CUDA GPU Kernel Summary with Nsight Compute", ReportKind::kSummary, kLoadKernels, ncu_kern_sum},
      {"cuda_gpu_mem_size_sum", "CUDA GPU MemOps Summary (by Size)", ReportKind::kSummary, kLoadMemcpy | kLoadMemset,
       cuda_gpu_mem_size_sum, memop_sum_columns},
      {"cuda_gpu_mem_time_sum", "CUDA GPU MemOps Summary (by Time)", ReportKind::kSummary, kLoadMemcpy | kLoadMemset,
       cuda_gpu_mem_time_sum, memop_sum_columns},
      {"cuda_gpu_sum", "CUDA GPU Summary (Kernels/MemOps)", ReportKind::kSummary,
       kLoadKernels | kLoadMemcpy | kLoadMemset, cuda_gpu_sum, gpu_sum_columns},
      {"cuda_gpu_trace", "CUDA GPU Trace", ReportKind::kTrace, kLoadKernels | kLoadMemcpy | kLoadMemset,
       cuda_gpu_trace},
      {"cuda_kern_exec_sum", "CUDA Kernel Launch & Exec Time Summary", ReportKind::kSummary, kLoadApi | kLoadKernels,
       cuda_kern_exec_sum},
      {"cuda_kern_exec_trace", "CUDA Kernel Launch & Exec Time Trace", ReportKind::kTrace, kLoadApi | kLoadKernels,
       cuda_kern_exec_trace},
      // GPU memory over time and copy throughput (nsys exports and PyTorch traces; not nsys reports).
      {"gpu_copy_step_sum", "GPU Copy Time per Step", ReportKind::kSummary,
       kLoadMemcpy | kLoadKernels | kLoadMemset | kLoadRanges | kLoadApi, gpu_copy_step_sum},
      {"gpu_copy_sum", "GPU Copy Throughput Summary", ReportKind::kSummary, kLoadMemcpy, gpu_copy_sum},
      {"gpu_mem_step_sum", "GPU Memory per Step", ReportKind::kSummary,
       kLoadMemory | kLoadRanges | kLoadApi | kLoadKernels, gpu_mem_step_sum},
      {"gpu_mem_sum", "GPU Memory Summary", ReportKind::kSummary, kLoadMemory, gpu_mem_sum},
      {"gpu_mem_trace", "GPU Memory Trace", ReportKind::kTrace, kLoadMemory, gpu_mem_trace},
      {"gpu_metrics_sum", "GPU Metrics Summary", ReportKind::kSummary,
       kLoadGpuMetrics | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadApi | kLoadRanges, gpu_metrics_sum},
      {"gpu_time_breakdown", "GPU Time Breakdown", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::gpu_time_breakdown},
      {"idle_time_breakdown", "GPU Idle Time Breakdown", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::idle_time_breakdown},
      {"kernel_launch_stats", "Kernel Launch Statistics", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::kernel_launch_stats},
      {"kernel_type_breakdown", "GPU Kernel Type Breakdown", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::kernel_type_breakdown},
      {"nvtx_gpu_proj_sum", "NVTX GPU Projection Summary", ReportKind::kSummary,
       kLoadRanges | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, nvtx_gpu_proj_sum},
      {"nvtx_gpu_proj_trace", "NVTX GPU Projection Trace", ReportKind::kTrace,
       kLoadRanges | kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset, nvtx_gpu_proj_trace},
      {"nvtx_kern_sum", "NVTX Range Kernel Summary", ReportKind::kSummary, kLoadRanges | kLoadApi | kLoadKernels,
       nvtx_kern_sum},
      {"nvtx_pushpop_sum", "NVTX Push/Pop Range Summary", ReportKind::kSummary, kLoadRanges, nvtx_pushpop_sum,
       nvtx_sum_columns},
      {"nvtx_startend_sum", "NVTX Start/End Range Summary", ReportKind::kSummary, kLoadRanges, nvtx_startend_sum,
       nvtx_sum_columns},
      {"nvtx_sum", "NVTX Range Summary", ReportKind::kSummary, kLoadRanges, nvtx_sum, nvtx_sum_columns},
      // PyTorch traces only (the table bits are for nsys exports, which hold no PyTorch data).
      // op_sum:shapes groups operators by (name, input dims).
      // op_kernel_sum[:aten|:top]: kernels per launching operator (innermost, deepest aten::, outermost).
      // op_dispatch_sum: framework CPU time per operator outside CUDA calls, against the GPU time it launched.
      {"op_dispatch_sum", "PyTorch Framework Dispatch Summary", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::op_dispatch_sum},
      // op_flops_sum[:peak=TFLOPS][:bandwidth=GBPS]: FLOPs, bytes and % of peak per operator and shape.
      {"op_flops_sum", "PyTorch Operator FLOPs and Roofline Summary", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadRanges, pytorch::op_flops_sum},
      {"op_kernel_sum", "PyTorch Operator/Kernel Summary", ReportKind::kSummary, kLoadApi | kLoadKernels | kLoadRanges,
       pytorch::op_kernel_sum},
      {"op_sum", "PyTorch Operator Summary", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::op_sum},
      {"openmp_sum", "OpenMP Summary", ReportKind::kSummary, kLoadOpenMp, openmp_sum, reads_no_large_table},
      {"osrt_sum", "OS Runtime Summary", ReportKind::kSummary, kLoadOsCalls, osrt_sum, osrt_sum_columns},
      {"python_func_sum", "Python Function Summary", ReportKind::kSummary, kLoadPythonFunctions,
       pytorch::python_func_sum},  // PyTorch traces, with_stack=True
      {"queue_length_sum", "Launch Queue Length Summary", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::queue_length_sum},
      {"queue_length_trace", "Launch Queue Length over Time", ReportKind::kTrace,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges | kLoadSyncs, pytorch::queue_length_trace},
      {"step_mfu_sum", "PyTorch Step MFU Summary", ReportKind::kSummary, kLoadApi | kLoadKernels | kLoadRanges,
       pytorch::step_mfu_sum},
      {"step_sum", "PyTorch Step Summary", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::step_sum},
      // The TensorBoard profiler plugin's Overview (PyTorch traces; `:plugin` = the plugin's own definitions).
      {"tb_gpu_metrics", "TensorBoard Plugin GPU Metrics", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::tb_gpu_metrics},
      {"tb_step_breakdown", "TensorBoard Plugin Step Time Breakdown", ReportKind::kSummary,
       kLoadApi | kLoadKernels | kLoadMemcpy | kLoadMemset | kLoadRanges, pytorch::tb_step_breakdown},
      {"um_sum", "Unified Memory Analysis Summary", ReportKind::kSummary, kLoadUnifiedMemory, um_sum,
       reads_no_large_table},
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
    std::vector<std::string> wanted = {
        "nvtx_sum",   "osrt_sum", "cuda_api_sum", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
        "openmp_sum", "um_sum"};
    std::vector<std::string> out;
    for (auto& w : wanted)
      if (find_report(w)) out.push_back(w);
    return out;
  }();
  return names;
}

}  // namespace tracedoc
