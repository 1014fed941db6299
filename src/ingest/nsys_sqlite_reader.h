// Reader for Nsight Systems SQLite exports (`nsys export --type sqlite`), every schema from 2.9.1
// (nsys 2022.1) on: it adapts to renamed metadata tables, missing ENUM_* tables, missing columns
// and absent tables, and never writes to or locks the input.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

// Which event tables to load; reports ask only for what they use, which keeps big files fast.
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
  kLoadUnifiedMemory = 1u << 9,  // UVM migrations and CPU / GPU page faults
  kLoadOpenMp = 1u << 10,        // every OPENMP_EVENT_KIND_* table
  kLoadCpuSched = 1u << 11,      // SCHED_EVENTS and COMPOSITE_EVENTS (thread switches, CPU samples)
  kLoadGraphsAndEvents = 1u << 12,  // CUPTI_ACTIVITY_KIND_GRAPH_TRACE and CUPTI_ACTIVITY_KIND_CUDA_EVENT
  // Opt-in bits, left out of kLoadAll: tables that only some reports read and that cost memory on
  // the largest traces. A default read (OpenOptions{}, `tracedoc summary`, the benchmarks) never
  // stores them; only a report that declares the bit (python_func_sum) does. New bits for ordinary
  // tables go below these, from 1u << 12 up, and are in kLoadAll by construction.
  kLoadPythonFunctions = 1u << 31,  // PyTorch traces: python_function events (with_stack=True)
  kLoadAll = ~kLoadPythonFunctions,  // every table but the opt-in ones
};

struct NsysReadOptions {
  uint32_t tables = kLoadAll;
  bool parallel = true;   // load independent tables at once, on the task pool (common/task_pool.h)
  bool fast_scan = true;  // decode table pages directly (falls back to SQLite when it cannot)
};

// True when the first bytes of the file are the SQLite header.
bool looks_like_sqlite(const std::string& path);

Result<Trace> read_nsys_sqlite(const std::string& path, const NsysReadOptions& options = {});

// Counts the interval rows that end before they start into trace.warnings.negative_durations: the
// reader keeps them as nsys does (its reports must match) and says how many there are.
void count_reversed_rows(Trace& trace);

}  // namespace tracedoc
