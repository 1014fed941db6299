// The normalized trace model shared by every reader and every analysis.
//
// One Trace holds one recording (an nsys export, or a PyTorch profiler trace). Events are stored
// column-wise, times are int64 nanoseconds on the recording's own timebase, names are StringPool ids.
// CPU threads and processes are identified the way nsys serializes them, so that both input formats
// share one scheme:  global_tid = (vm << 48) | (pid << 24) | tid,  global_pid = global_tid with tid 0.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/call_stacks.h"
#include "model/columns.h"
#include "model/pytorch_tables.h"
#include "model/string_pool.h"

namespace tracedoc {

inline int64_t pid_of(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline int64_t tid_of(int64_t global_tid) { return global_tid & 0xFFFFFF; }
inline int64_t global_pid_of(int64_t global_tid) { return global_tid & ~int64_t{0xFFFFFF}; }
inline int64_t make_global_tid(int64_t vm, int64_t pid, int64_t tid) {
  return (vm << 48) | ((pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF);
}

// Copy direction, numbered as CUPTI / nsys number them (ENUM_CUDA_MEMCPY_OPER).
enum class CopyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
  kUvmHtoD = 11,
  kUvmDtoH = 12,
  kUvmDtoD = 13,
};
// Memory kind, numbered as ENUM_CUDA_MEM_KIND.
enum class MemKind : uint8_t {
  kPageable = 0,
  kPinned = 1,
  kDevice = 2,
  kArray = 3,
  kManaged = 4,
  kDeviceStatic = 5,
  kManagedStatic = 6,
  kUnknown = 7,
};

// Labels nsys prints for the enums above; used when an old export has no ENUM_* tables.
const char* copy_kind_label(uint8_t kind);
const char* mem_kind_label(uint8_t kind);

inline constexpr int32_t kNoGreen = kNoInt32;  // no green context

#define TRACEDOC_KERNEL_COLUMNS(X)                                                                 \
  X(start, TimeNs, kTime, kNoTime, "when the kernel started on the GPU")                           \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                                                  \
  X(global_pid, int64_t, kOwner, kNoValue, "the process that launched it")                         \
  X(correlation, int64_t, kValue, kNoValue, "links it to its launch call (ApiTable::correlation)") \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                                  \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                                        \
  X(green_context, int32_t, kValue, kNoGreen, "its green context, if any")                         \
  X(stream, int32_t, kValue, kNoInt32, "its stream")                                               \
  X(name, StrId, kString, kNoStr, "demangled name")                                                \
  X(short_name, StrId, kString, kNoStr, "name without arguments or templates")                     \
  X(mangled_name, StrId, kString, kNoStr, "mangled name")                                          \
  X(grid_x, int32_t, kValue, kNoInt32, "grid size, x")                                             \
  X(grid_y, int32_t, kValue, kNoInt32, "grid size, y")                                             \
  X(grid_z, int32_t, kValue, kNoInt32, "grid size, z")                                             \
  X(block_x, int32_t, kValue, kNoInt32, "block size, x")                                           \
  X(block_y, int32_t, kValue, kNoInt32, "block size, y")                                           \
  X(block_z, int32_t, kValue, kNoInt32, "block size, z")                                           \
  X(registers_per_thread, int32_t, kValue, kNoInt32, "registers per thread")                       \
  X(static_smem, int32_t, kValue, kNoInt32, "static shared memory per block, bytes")               \
  X(dynamic_smem, int32_t, kValue, kNoInt32, "dynamic shared memory per block, bytes")             \
  X(graph_node_id, int64_t, kValue, kNoValue, "its CUDA graph node, when launched by a graph")     \
  /* Kineto's "est. achieved occupancy %": NaN where a kernel has none, no rows from nsys. */      \
  X(est_occupancy, double, kOptionalValue, std::numeric_limits<double>::quiet_NaN(), "estimated achieved occupancy, %")
struct KernelTable {
  TRACEDOC_TABLE(KernelTable, TRACEDOC_KERNEL_COLUMNS)
};

#define TRACEDOC_MEMCPY_COLUMNS(X)                                          \
  X(start, TimeNs, kTime, kNoTime, "when the copy started")                 \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                           \
  X(global_pid, int64_t, kOwner, kNoValue, "the process that issued it")    \
  X(correlation, int64_t, kValue, kNoValue, "links it to its API call")     \
  X(bytes, int64_t, kValue, kNoValue, "bytes copied")                       \
  X(device, int32_t, kValue, kNoInt32, "the GPU that ran it")               \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                 \
  X(green_context, int32_t, kValue, kNoGreen, "its green context, if any")  \
  X(stream, int32_t, kValue, kNoInt32, "its stream")                        \
  X(src_device, int32_t, kValue, kNoInt32, "source GPU (peer copies)")      \
  X(dst_device, int32_t, kValue, kNoInt32, "destination GPU (peer copies)") \
  X(copy_kind, uint8_t, kValue, kNoKind, "direction (CopyKind)")            \
  X(src_kind, uint8_t, kValue, kNoKind, "source memory kind (MemKind)")     \
  X(dst_kind, uint8_t, kValue, kNoKind, "destination memory kind (MemKind)")
struct MemcpyTable {
  TRACEDOC_TABLE(MemcpyTable, TRACEDOC_MEMCPY_COLUMNS)
};

#define TRACEDOC_MEMSET_COLUMNS(X)                                         \
  X(start, TimeNs, kTime, kNoTime, "when the memset started")              \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                          \
  X(global_pid, int64_t, kOwner, kNoValue, "the process that issued it")   \
  X(correlation, int64_t, kValue, kNoValue, "links it to its API call")    \
  X(bytes, int64_t, kValue, kNoValue, "bytes set")                         \
  X(value, int64_t, kValue, kNoValue, "the byte value written")            \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                          \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                \
  X(green_context, int32_t, kValue, kNoGreen, "its green context, if any") \
  X(stream, int32_t, kValue, kNoInt32, "its stream")                       \
  X(mem_kind, uint8_t, kValue, kNoKind, "memory kind (MemKind)")
struct MemsetTable {
  TRACEDOC_TABLE(MemsetTable, TRACEDOC_MEMSET_COLUMNS)
};

// CUDA (or HIP) API calls made on CPU threads.
enum class ApiClass : uint8_t { kCudaRuntime = 0, kCudaDriver = 1, kOther = 2 };
#define TRACEDOC_API_COLUMNS(X)                                                                              \
  X(start, TimeNs, kTime, kNoTime, "when the call began")                                                    \
  X(end, TimeNs, kTime, kNoTime, "when it returned")                                                         \
  X(global_tid, int64_t, kOwner, kNoValue, "the calling thread")                                             \
  X(correlation, int64_t, kValue, kNoValue, "links it to the GPU work it launched")                          \
  X(return_value, int64_t, kValue, kNoValue, "what it returned")                                             \
  X(name, StrId, kString, kNoStr, "the function, as recorded, version suffix kept (cudaLaunchKernel_v7000)") \
  X(api_class, uint8_t, kValue, kNoKind, "runtime, driver or other (ApiClass)")                              \
  X(stack, int32_t, kOptionalValue, kNoStack, "its call stack (Trace::stacks; nsys --cudabacktrace), if recorded")
struct ApiTable {
  TRACEDOC_TABLE(ApiTable, TRACEDOC_API_COLUMNS)
};

// Annotation ranges and marks: NVTX (push/pop, start/end, marks, domain creation rows) from nsys,
// and later user annotations / operators from PyTorch traces. `kind` uses nsys event type numbers.
enum class RangeKind : uint16_t {
  kNvtxMark = 34,
  kNvtxPushPop = 59,
  kNvtxStartEnd = 60,
  kNvtxtPushPop = 70,
  kNvtxtStartEnd = 71,
  kNvtxDomainCreate = 75,
  kOther = 0xFFFF,
};
#define TRACEDOC_RANGE_COLUMNS(X)                                                                              \
  X(start, TimeNs, kTime, kNoTime, "when the range began (a mark's time)")                                     \
  X(end, TimeNs, kTime, kNoTime, "when it ended; absent: never closed")                                        \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread that began it")                                         \
  X(end_global_tid, int64_t, kOwner, kNoValue, "the thread that ended it, when another one did")               \
  X(kind, uint16_t, kValue, uint16_t{0xFFFF}, "nsys event type (RangeKind), raw value kept for unknown types") \
  X(text, StrId, kString, kNoStr, "the registered string if any, else the inline text")                        \
  X(domain_id, int64_t, kValue, kNoValue, "its NVTX domain")                                                   \
  X(range_id, int64_t, kValue, kNoValue, "nvtxRangeStart's id")                                                \
  X(row_id, int64_t, kValue, kNoValue, "the export's rowid (1-based row number), kept through filters")
struct RangeTable {
  TRACEDOC_TABLE(RangeTable, TRACEDOC_RANGE_COLUMNS)
};

// Operating-system runtime calls (pthread, poll, ioctl, ...).
#define TRACEDOC_OS_CALL_COLUMNS(X)                                          \
  X(start, TimeNs, kTime, kNoTime, "when the call began")                    \
  X(end, TimeNs, kTime, kNoTime, "when it returned")                         \
  X(global_tid, int64_t, kOwner, kNoValue, "the calling thread")             \
  X(return_value, int64_t, kValue, kNoValue, "what it returned")             \
  X(name, StrId, kString, kNoStr, "the function")                            \
  X(event_class, int32_t, kValue, kNoInt32, "nsys event class")              \
  X(nesting_level, int32_t, kValue, kNoInt32, "calls it was made inside of") \
  X(stack, int32_t, kOptionalValue, kNoStack, "its call stack (Trace::stacks; nsys --osrt-backtrace-*), if recorded")
struct OsCallTable {
  TRACEDOC_TABLE(OsCallTable, TRACEDOC_OS_CALL_COLUMNS)
};

// Thread scheduling (nsys SCHED_EVENTS, `--cpuctxsw`): a thread switched onto (sched_in) or off a CPU.
#define TRACEDOC_SCHED_COLUMNS(X)                                                    \
  X(time, TimeNs, kTime, kNoTime, "when the switch happened")                        \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread switched")                    \
  X(cpu, int32_t, kValue, kNoInt32, "the CPU")                                       \
  X(sched_in, uint8_t, kValue, kNoKind, "1: the thread starts running, 0: it stops") \
  X(state, uint8_t, kValue, kNoKind, "ENUM_SAMPLING_THREAD_STATE after the switch")
struct SchedTable {
  TRACEDOC_TABLE(SchedTable, TRACEDOC_SCHED_COLUMNS)
};

// CPU samples (nsys COMPOSITE_EVENTS, `--sample`): the sampled thread, its state and its call stack
// (SAMPLING_CALLCHAINS, in Trace::stacks).
#define TRACEDOC_CPU_SAMPLE_COLUMNS(X)                                                            \
  X(time, TimeNs, kTime, kNoTime, "when the sample was taken")                                    \
  X(global_tid, int64_t, kOwner, kNoValue, "the sampled thread")                                  \
  X(state, uint8_t, kValue, kNoKind, "ENUM_SAMPLING_THREAD_STATE: 1 running, 2/3/7 waiting, ...") \
  X(stack, int32_t, kValue, kNoStack, "its call stack (Trace::stacks), -1 when none was recorded")
struct CpuSampleTable {
  TRACEDOC_TABLE(CpuSampleTable, TRACEDOC_CPU_SAMPLE_COLUMNS)
};

// GPU hardware metrics sampled by nsys (`--gpu-metrics-devices`; GPU_METRICS, named by
// TARGET_INFO_GPU_METRICS): one row per metric per sample. A value describes the sampling period
// that starts at its time (analysis/gpu_metrics.h). Names differ across GPU generations and nsys
// versions ("SM Active", "SMs Active [Throughput %]"); they are kept as recorded.
#define TRACEDOC_GPU_METRIC_COLUMNS(X)                                                    \
  X(time, TimeNs, kTime, kNoTime, "the start of the sampling period the value describes") \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                         \
  X(metric, StrId, kString, kNoStr, "the metric, as nsys names it")                       \
  X(value, int64_t, kValue, kNoValue, "its value: percent of peak, Hz or a rate, by the metric")
struct GpuMetricTable {
  TRACEDOC_TABLE(GpuMetricTable, TRACEDOC_GPU_METRIC_COLUMNS)
};

// CUDA synchronization activity (event / stream / context syncs seen on the GPU side).
#define TRACEDOC_SYNC_COLUMNS(X)                                                                 \
  X(start, TimeNs, kTime, kNoTime, "when the wait began")                                        \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                                                \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")                                        \
  X(correlation, int64_t, kValue, kNoValue, "links it to its API call")                          \
  X(event_id, int64_t, kValue, kNoValue, "the CUDA event waited for (CudaEventTable::event_id)") \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                                \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                                      \
  X(stream, int32_t, kValue, kNoInt32, "the stream that waited")                                 \
  X(sync_type, int32_t, kValue, kNoInt32, "ENUM_CUPTI_SYNC_TYPE: event, stream wait, stream, context")
struct SyncTable {
  TRACEDOC_TABLE(SyncTable, TRACEDOC_SYNC_COLUMNS)
};

// CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT): the stream on which cudaEventRecord placed
// an event, which is the stream a later cudaStreamWaitEvent or cudaEventSynchronize (SyncTable's
// event_id) waits for. One row per record call; event ids are reused, sync_id is not.
#define TRACEDOC_CUDA_EVENT_COLUMNS(X)                                                                    \
  X(time, TimeNs, kTime, kNoTime, "device-side completion time; absent when not collected (the default)") \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")                                                 \
  X(correlation, int64_t, kValue, kNoValue, "links it to its cudaEventRecord call")                       \
  X(event_id, int64_t, kValue, kNoValue, "the event (reused by later records)")                           \
  X(sync_id, int64_t, kValue, kNoValue, "this record's own id")                                           \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                                         \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                                               \
  X(stream, int32_t, kValue, kNoInt32, "the stream the event was recorded on")
struct CudaEventTable {
  TRACEDOC_TABLE(CudaEventTable, TRACEDOC_CUDA_EVENT_COLUMNS)
};

// Whole CUDA graph executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): with graph-level tracing a graph
// launch is one GPU block and its kernels are not recorded one by one.
#define TRACEDOC_GRAPH_TRACE_COLUMNS(X)                                             \
  X(start, TimeNs, kTime, kNoTime, "when the graph's first node started")           \
  X(end, TimeNs, kTime, kNoTime, "when its last node ended")                        \
  X(global_pid, int64_t, kOwner, kNoValue, "the process that launched it")          \
  X(correlation, int64_t, kValue, kNoValue, "links it to its cudaGraphLaunch call") \
  X(graph_id, int64_t, kValue, kNoValue, "the graph")                               \
  X(graph_exec_id, int64_t, kValue, kNoValue, "its executable graph")               \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                   \
  X(context, int32_t, kValue, kNoInt32, "its CUDA context")                         \
  X(stream, int32_t, kValue, kNoInt32, "its stream")
struct GraphTraceTable {
  TRACEDOC_TABLE(GraphTraceTable, TRACEDOC_GRAPH_TRACE_COLUMNS)
};

// GPU memory allocation / free events (CUDA_GPU_MEMORY_USAGE_EVENTS, PyTorch [memory]).
#define TRACEDOC_MEMORY_EVENT_COLUMNS(X)                                    \
  X(time, TimeNs, kTime, kNoTime, "when the memory was allocated or freed") \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")                   \
  X(address, int64_t, kValue, kNoValue, "the block's address")              \
  X(bytes, int64_t, kValue, kNoValue, "its size")                           \
  X(correlation, int64_t, kValue, kNoValue, "links it to its API call")     \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                           \
  X(mem_kind, int32_t, kValue, kNoInt32, "memory kind (MemKind)")           \
  X(operation, int32_t, kValue, kNoInt32, "0 allocation, 1 free")
struct MemoryEventTable {
  TRACEDOC_TABLE(MemoryEventTable, TRACEDOC_MEMORY_EVENT_COLUMNS)
};

// Profiler overhead ranges (nsys PROFILER_OVERHEAD).
#define TRACEDOC_OVERHEAD_COLUMNS(X)                                \
  X(start, TimeNs, kTime, kNoTime, "when the overhead began")       \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                   \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread it delayed") \
  X(name, StrId, kString, kNoStr, "what the profiler was doing")
struct OverheadTable {
  TRACEDOC_TABLE(OverheadTable, TRACEDOC_OVERHEAD_COLUMNS)
};

// Unified Memory page migrations: the CUPTI_ACTIVITY_KIND_MEMCPY rows with a UVM copy kind
// (kUvmHtoD, kUvmDtoH, kUvmDtoD), kept with the base address of the pages they moved, which the
// ordinary memcpy table has no use for.
#define TRACEDOC_UM_MIGRATION_COLUMNS(X)                                                       \
  X(start, TimeNs, kTime, kNoTime, "when the migration started")                               \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                                              \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")                                      \
  X(bytes, int64_t, kValue, kNoValue, "bytes moved")                                           \
  X(virtual_address, int64_t, kValue, kNoValue, "base address of the pages moved")             \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                              \
  X(copy_kind, uint8_t, kValue, kNoKind, "direction (CopyKind: kUvmHtoD, kUvmDtoH, kUvmDtoD)") \
  X(migration_cause, uint8_t, kValue, kNoKind, "ENUM_CUDA_UNIF_MEM_MIGRATION")
struct UmMigrationTable {
  TRACEDOC_TABLE(UmMigrationTable, TRACEDOC_UM_MIGRATION_COLUMNS)
};

// CPU page faults on managed memory (CUDA_UM_CPU_PAGE_FAULT_EVENTS), one row per fault.
#define TRACEDOC_UM_CPU_FAULT_COLUMNS(X)                     \
  X(time, TimeNs, kTime, kNoTime, "when the fault happened") \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")    \
  X(address, int64_t, kValue, kNoValue, "the faulting page")
struct UmCpuPageFaultTable {
  TRACEDOC_TABLE(UmCpuPageFaultTable, TRACEDOC_UM_CPU_FAULT_COLUMNS)
};

// GPU page faults on managed memory (CUDA_UM_GPU_PAGE_FAULT_EVENTS): one row per faulting page and
// interval, with how many faults hit the page.
#define TRACEDOC_UM_GPU_FAULT_COLUMNS(X)                                          \
  X(start, TimeNs, kTime, kNoTime, "when the faults began")                       \
  X(end, TimeNs, kTime, kNoTime, "when they were served")                         \
  X(global_pid, int64_t, kOwner, kNoValue, "the process")                         \
  X(address, int64_t, kValue, kNoValue, "the faulting page")                      \
  X(fault_count, int64_t, kValue, kNoValue, "faults on the page in the interval") \
  X(device, int32_t, kValue, kNoInt32, "the GPU")                                 \
  X(access_type, uint8_t, kValue, kNoKind, "ENUM_CUDA_UNIF_MEM_ACCESS_TYPE")
struct UmGpuPageFaultTable {
  TRACEDOC_TABLE(UmGpuPageFaultTable, TRACEDOC_UM_GPU_FAULT_COLUMNS)
};

struct UnifiedMemoryTable {
  UmMigrationTable migrations;
  UmCpuPageFaultTable cpu_faults;
  UmGpuPageFaultTable gpu_faults;
};

// OpenMP (OMPT) events from every OPENMP_EVENT_KIND_* table of an export, in one table. nsys keeps
// one table per event kind and summarizes each on its own, so every row remembers its source table.
#define TRACEDOC_OPENMP_COLUMNS(X)                                  \
  X(start, TimeNs, kTime, kNoTime, "when the event began")          \
  X(end, TimeNs, kTime, kNoTime, "when it ended")                   \
  X(global_tid, int64_t, kOwner, kNoValue, "the thread")            \
  X(name, StrId, kString, kNoStr, "the event's name")               \
  X(event_kind, uint8_t, kValue, kNoKind, "ENUM_OPENMP_EVENT_KIND") \
  X(source, uint16_t, kValue, uint16_t{0xFFFF}, "index into source_tables")
struct OpenMpEventTable {
  TRACEDOC_TABLE(OpenMpEventTable, TRACEDOC_OPENMP_COLUMNS)
  std::vector<std::string> source_tables;  // not per row: e.g. "OPENMP_EVENT_KIND_PARALLEL"
};

struct ThreadInfo {
  int64_t global_tid = 0;
  StrId name = kNoStr;
  int32_t priority = 0;
  bool operator==(const ThreadInfo&) const = default;
};
struct ProcessInfo {
  int64_t global_pid = 0;
  int64_t pid = 0;
  StrId name = kNoStr;
  bool operator==(const ProcessInfo&) const = default;
};
struct DeviceInfo {
  int32_t id = 0;
  StrId name = kNoStr;
  int32_t sm_count = 0;
  int64_t total_memory = 0;
  int32_t compute_major = 0, compute_minor = 0;
  int64_t clock_hz = 0;          // the SMs' peak clock (nsys clockRate, ncu's clock rate); 0: not recorded
  int64_t memory_bandwidth = 0;  // bytes per second (nsys memoryBandwidth); 0: not recorded
  bool operator==(const DeviceInfo&) const = default;
};

// Where the trace came from and what it contained (reports say "does not contain ..." from this).
struct TraceSource {
  std::string path;
  std::string format;           // "nsys-sqlite" or "kineto-json"
  std::string product_version;  // e.g. 2026.1.1.204
  std::string schema_version;   // e.g. 3.24.14
  int64_t session_start_utc_ns = 0;
  std::set<std::string> tables;  // source tables present (nsys table names)
  bool has_green_context = false;
  bool has_enum_tables = false;
  bool has_table(const std::string& t) const { return tables.count(t) != 0; }
};

// Per-event problems found while reading; counted, reported once, never fatal.
struct ReadWarnings {
  int64_t negative_durations = 0;  // end before start: JSON events kept with dur 0, SQLite rows as they are
  int64_t absurd_durations = 0;    // dur longer than a week (or past int64): the event is dropped
  int64_t missing_times = 0;       // events without a usable ts (absent, not a number, past int64): dropped
  int64_t unknown_events = 0;      // phases/categories tracedoc does not model
  int64_t torn_frames = 0;         // captures: frames cut short or damaged (the process died writing)
  int64_t unusable_durations = 0;  // JSON dur NaN or Infinity: the event is dropped
  int64_t oversized_events = 0;    // JSON events (or top-level members) over KinetoReadOptions::max_unit_bytes: skipped
  int64_t bad_values = 0;  // nsys rows with a value of the wrong type (text in an integer column): read as absent
  int64_t unknown_string_ids = 0;  // nsys name ids with no StringIds row: read as unnamed
  int64_t unnamed_metrics = 0;     // GPU_METRICS rows whose metric TARGET_INFO_GPU_METRICS does not name: dropped
  // A folder's entries that were not read, one line each ("PATH: not read: why"; ingest/trace_directory.h).
  std::vector<std::string> skipped_entries;
  bool operator==(const ReadWarnings&) const = default;
  bool any() const {
    return negative_durations || absurd_durations || missing_times || unusable_durations || oversized_events ||
           bad_values || unknown_string_ids || unnamed_metrics;
  }
};

struct NcuReport;  // model/ncu_report.h

struct Trace {
  TraceSource source;
  StringPool strings;
  KernelTable kernels;
  MemcpyTable memcpys;
  MemsetTable memsets;
  ApiTable api;
  RangeTable ranges;
  OsCallTable os_calls;
  SchedTable sched;
  CpuSampleTable cpu_samples;
  CallStacks stacks;  // call stacks of the CPU samples, OS runtime calls and CUDA API calls
  GpuMetricTable gpu_metrics;
  SyncTable syncs;
  CudaEventTable cuda_events;
  GraphTraceTable graph_traces;
  MemoryEventTable memory;
  OverheadTable overhead;
  UnifiedMemoryTable unified_memory;
  OpenMpEventTable openmp;
  PyTorchInfo pytorch;  // PyTorch profiler traces only
  ReadWarnings warnings;
  std::vector<ThreadInfo> threads;
  std::vector<ProcessInfo> processes;
  std::vector<DeviceInfo> devices;
  // Labels from the export's own ENUM tables (index = enum value); empty means use the built-in ones.
  std::vector<std::string> copy_kind_labels, mem_kind_labels;

  // Set by apply_filter (--filter-time / --filter-nvtx): the CUDA API and NVTX tables as they were
  // before filtering. nsys's kernel naming for `nvtx-name` reads them as main.<table>, past the
  // filter's views. Null when no filter was applied.
  std::shared_ptr<const ApiTable> unfiltered_api;
  std::shared_ptr<const RangeTable> unfiltered_ranges;
  const ApiTable& api_before_filter() const { return unfiltered_api ? *unfiltered_api : api; }
  const RangeTable& ranges_before_filter() const { return unfiltered_ranges ? *unfiltered_ranges : ranges; }

  // Nsight Compute reports of the same program (--ncu), joined to the kernels by analysis/ncu_join.h.
  std::vector<std::shared_ptr<const NcuReport>> ncu_reports;

  std::string_view str(StrId id) const { return strings.get(id); }
  std::string copy_label(uint8_t kind) const;
  std::string mem_label(uint8_t kind) const;

  // The PyTorch rank of a CPU thread or process id: a merged rank directory tags ids with
  // (rank + 1) << 48, a single file has its own rank (distributedInfo). -1 when unknown, and for nsys
  // exports, whose upper bits are a hardware id, not a rank. rank_of_tag takes the tag (id >> 48).
  int64_t rank_of(int64_t global_id) const { return rank_of_tag(global_id >> 48); }
  int64_t rank_of_tag(int64_t tag) const {
    if (source.format != "kineto-json") return -1;
    return tag > 0 ? tag - 1 : pytorch.rank;
  }
};

// Which tables the readers of PyTorch traces and captures put in order of their first time column
// (kineto::sort_by_time); the others keep the order their events were recorded in. nsys exports
// keep the export's row order in every table.
enum class TableOrder : uint8_t { kByTime, kAsRecorded };
struct TableInfo {
  std::string_view name;  // as `tracedoc sql` and the Arrow export name the table
  TableOrder order = TableOrder::kByTime;
};

// Every event table of a Trace, once: f(info, get) for each, where get(trace) returns the table of
// a Trace (or const Trace). Generic work over all tables (the time sort, rank merges, the property
// test) goes through this list, so a new table is added here and nowhere else. The order is the
// order in which a rank merge meets strings; collectives follow kernels, whose rows they name.
template <typename F>
void for_each_trace_table(F&& f) {
  using enum TableOrder;
  f(
      TableInfo{"kernels", kByTime}, [](auto& t) -> auto& { return t.kernels; });
  f(
      TableInfo{"collectives", kAsRecorded}, [](auto& t) -> auto& { return t.pytorch.collectives; });
  f(
      TableInfo{"memcpy", kByTime}, [](auto& t) -> auto& { return t.memcpys; });
  f(
      TableInfo{"memset", kByTime}, [](auto& t) -> auto& { return t.memsets; });
  f(
      TableInfo{"api", kByTime}, [](auto& t) -> auto& { return t.api; });
  f(
      TableInfo{"ranges", kByTime}, [](auto& t) -> auto& { return t.ranges; });
  f(
      TableInfo{"ops", kByTime}, [](auto& t) -> auto& { return t.pytorch.ops; });
  f(
      TableInfo{"gpu_annotations", kByTime}, [](auto& t) -> auto& { return t.pytorch.gpu_annotations; });
  f(
      TableInfo{"python_functions", kByTime}, [](auto& t) -> auto& { return t.pytorch.python_functions; });
  f(
      TableInfo{"allocator", kByTime}, [](auto& t) -> auto& { return t.pytorch.allocator; });
  f(
      TableInfo{"flows", kAsRecorded}, [](auto& t) -> auto& { return t.pytorch.forward_backward; });
  f(
      TableInfo{"syncs", kByTime}, [](auto& t) -> auto& { return t.syncs; });
  f(
      TableInfo{"cuda_events", kAsRecorded}, [](auto& t) -> auto& { return t.cuda_events; });
  f(
      TableInfo{"graph_traces", kByTime}, [](auto& t) -> auto& { return t.graph_traces; });
  f(
      TableInfo{"memory_events", kByTime}, [](auto& t) -> auto& { return t.memory; });
  f(
      TableInfo{"overhead", kByTime}, [](auto& t) -> auto& { return t.overhead; });
  f(
      TableInfo{"os_calls", kByTime}, [](auto& t) -> auto& { return t.os_calls; });
  f(
      TableInfo{"sched", kAsRecorded}, [](auto& t) -> auto& { return t.sched; });
  f(
      TableInfo{"cpu_samples", kAsRecorded}, [](auto& t) -> auto& { return t.cpu_samples; });
  f(
      TableInfo{"gpu_metrics", kAsRecorded}, [](auto& t) -> auto& { return t.gpu_metrics; });
  f(
      TableInfo{"um_migrations", kAsRecorded}, [](auto& t) -> auto& { return t.unified_memory.migrations; });
  f(
      TableInfo{"um_cpu_faults", kAsRecorded}, [](auto& t) -> auto& { return t.unified_memory.cpu_faults; });
  f(
      TableInfo{"um_gpu_faults", kAsRecorded}, [](auto& t) -> auto& { return t.unified_memory.gpu_faults; });
  f(
      TableInfo{"openmp", kAsRecorded}, [](auto& t) -> auto& { return t.openmp; });
}

// f(info, table) for every event table of a trace (const tables for a const Trace).
template <typename TraceType, typename F>
void for_each_table(TraceType& trace, F&& f) {
  for_each_trace_table([&](const TableInfo& info, auto get) { f(info, get(trace)); });
}

}  // namespace tracedoc
