// Which event tables of the model a read fills: reports and rules declare the tables they use,
// and readers load only those, which keeps big files fast. The bits name model tables, so the
// analyses declare them without knowing any reader (model/ is below both).
#pragma once

#include <cstdint>

namespace tracedoc {

enum NsysTables : uint32_t {
  kLoadKernels = 1u << 0,
  kLoadMemcpy = 1u << 1,
  kLoadMemset = 1u << 2,
  kLoadApi = 1u << 3,
  kLoadRanges = 1u << 4,
  kLoadOsCalls = 1u << 5,
  kLoadSyncs = 1u << 6,
  kLoadMemory = 1u << 7,
  kLoadOverhead = 1u << 8,
  kLoadUnifiedMemory = 1u << 9,     // UVM migrations and CPU / GPU page faults
  kLoadOpenMp = 1u << 10,           // every OPENMP_EVENT_KIND_* table
  kLoadCpuSched = 1u << 11,         // SCHED_EVENTS and COMPOSITE_EVENTS (thread switches, CPU samples)
  kLoadGraphsAndEvents = 1u << 12,  // CUPTI_ACTIVITY_KIND_GRAPH_TRACE and CUPTI_ACTIVITY_KIND_CUDA_EVENT
  kLoadGpuMetrics = 1u << 13,       // GPU_METRICS with TARGET_INFO_GPU_METRICS
  // Opt-in bits, left out of kLoadAll: tables that only some reports read and that cost memory on
  // the largest traces. A default read (OpenOptions{}, `tracedoc summary`, the benchmarks) never
  // stores them; only a report that declares the bit (python_func_sum) does. New bits for ordinary
  // tables go below these, from 1u << 14 up, and are in kLoadAll by construction.
  kLoadPythonFunctions = 1u << 31,   // PyTorch traces: python_function events (with_stack=True)
  kLoadAll = ~kLoadPythonFunctions,  // every table but the opt-in ones
};

}  // namespace tracedoc
