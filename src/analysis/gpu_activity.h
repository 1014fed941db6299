// What each GPU did and when: the kernels, copies and memsets of a trace grouped per (process,
// device), the unit in which nsys's expert rules and HTA's breakdowns judge GPU utilization.
//
// Profiler overhead counts as busy, as nsys counts it: CUDA profiling overhead ranges of a process
// (buffer flushes, stop) that lie strictly inside a device's active span are added to that device,
// because the GPU time lost to them is not something the user can fix.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/intervals.h"
#include "model/trace.h"

namespace tracedoc {

enum class GpuOpKind : uint8_t { kKernel, kMemcpy, kMemset, kOverhead, kGraph };

struct GpuOp {
  TimeNs start = 0;
  TimeNs end = 0;
  GpuOpKind kind = GpuOpKind::kKernel;
  uint32_t row = 0;  // index in its table (kernels, memcpys, memsets, overhead, graph_traces)
};

struct DeviceActivity {
  int64_t global_pid = 0;  // the owning process (vm and pid bits)
  int32_t device = 0;
  int32_t context = 0;                   // of the first operation: one context per device and process in practice
  std::vector<GpuOp> ops;                // sorted by (start, end)
  TimeNs first_start = 0, last_end = 0;  // span of the GPU operations proper (overhead excluded)

  int64_t pid() const { return pid_of(global_pid); }
  // Union of the operations' time (overhead included when it was collected).
  IntervalSet busy() const;
};

struct GpuActivityOptions {
  bool include_overhead = true;
  // nsys ignores operations with start <= 0 (timestamps before the session start): its rules select
  // `WHERE start > 0`. PyTorch traces have no such convention and keep every operation.
  bool skip_nonpositive_starts = true;
  // Whole-graph executions (graph-level tracing, trace.graph_traces) as GPU operations. nsys's rules
  // read only the kernel, memcpy and memset tables, so they leave them out.
  bool include_graphs = false;
};

// One entry per (process, device), ordered by (pid, device) as nsys orders its results.
std::vector<DeviceActivity> collect_gpu_activity(const Trace& trace, const GpuActivityOptions& options = {});

// The overhead names nsys treats as GPU-busy time for CUDA devices.
bool is_cuda_profiling_overhead(std::string_view name);

}  // namespace tracedoc
