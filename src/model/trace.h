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
#include <vector>

#include "model/pytorch_tables.h"
#include "model/string_pool.h"

namespace tracedoc {

using TimeNs = int64_t;
inline constexpr TimeNs kNoTime = std::numeric_limits<int64_t>::min();  // SQL NULL time
inline constexpr int64_t kNoValue = std::numeric_limits<int64_t>::min();  // SQL NULL integer

// Asks the kernel to back a large buffer with huge pages: filling millions of rows otherwise spends
// a tenth of the run in page faults.
void advise_huge_pages(const void* data, size_t bytes);

// Reserves room for n rows in every column of a table (readers that know the row count up front).
template <typename... Columns>
void reserve_columns(size_t n, Columns&... columns) {
  (columns.reserve(n), ...);
  (advise_huge_pages(columns.data(), columns.capacity() * sizeof(*columns.data())), ...);
}

inline int64_t pid_of(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
inline int64_t tid_of(int64_t global_tid) { return global_tid & 0xFFFFFF; }
inline int64_t global_pid_of(int64_t global_tid) { return global_tid & ~int64_t{0xFFFFFF}; }
inline int64_t make_global_tid(int64_t vm, int64_t pid, int64_t tid) {
  return (vm << 48) | ((pid & 0xFFFFFF) << 24) | (tid & 0xFFFFFF);
}

// Copy direction, numbered as CUPTI / nsys number them (ENUM_CUDA_MEMCPY_OPER).
enum class CopyKind : uint8_t {
  kUnknown = 0, kHtoD = 1, kDtoH = 2, kHtoA = 3, kAtoH = 4, kAtoA = 5, kAtoD = 6, kDtoA = 7,
  kDtoD = 8, kHtoH = 9, kPtoP = 10, kUvmHtoD = 11, kUvmDtoH = 12, kUvmDtoD = 13,
};
// Memory kind, numbered as ENUM_CUDA_MEM_KIND.
enum class MemKind : uint8_t {
  kPageable = 0, kPinned = 1, kDevice = 2, kArray = 3, kManaged = 4, kDeviceStatic = 5,
  kManagedStatic = 6, kUnknown = 7,
};
inline constexpr uint8_t kNoKind = 0xFF;  // SQL NULL kind

// Labels nsys prints for the enums above; used when an old export has no ENUM_* tables.
const char* copy_kind_label(uint8_t kind);
const char* mem_kind_label(uint8_t kind);

struct KernelTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, correlation;
  std::vector<int32_t> device, context, green_context, stream;  // green_context: kNoGreen if none
  std::vector<StrId> name, short_name, mangled_name;             // name = demangled
  std::vector<int32_t> grid_x, grid_y, grid_z, block_x, block_y, block_z;
  std::vector<int32_t> registers_per_thread, static_smem, dynamic_smem;
  std::vector<int64_t> graph_node_id;
  // Kineto's per-kernel "est. achieved occupancy %" (NaN where a kernel has none). Optional: empty
  // when the reader does not record it (nsys exports), else one per row (NaN in the rows of ranks of
  // a merged directory that did not record it).
  // Not in reserve(): a table that never fills it stays empty.
  std::vector<double> est_occupancy;
  void reserve(size_t n) { reserve_columns(n, start, end, global_pid, correlation, device, context, green_context, stream, name, short_name, mangled_name, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, static_smem, dynamic_smem, graph_node_id); }
  size_t size() const { return start.size(); }
};
inline constexpr int32_t kNoGreen = std::numeric_limits<int32_t>::min();

struct MemcpyTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, correlation, bytes;
  std::vector<int32_t> device, context, green_context, stream, src_device, dst_device;
  std::vector<uint8_t> copy_kind, src_kind, dst_kind;
  void reserve(size_t n) { reserve_columns(n, start, end, global_pid, correlation, bytes, device, context, green_context, stream, src_device, dst_device, copy_kind, src_kind, dst_kind); }
  size_t size() const { return start.size(); }
};

struct MemsetTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, correlation, bytes, value;
  std::vector<int32_t> device, context, green_context, stream;
  std::vector<uint8_t> mem_kind;
  void reserve(size_t n) { reserve_columns(n, start, end, global_pid, correlation, bytes, value, device, context, green_context, stream, mem_kind); }
  size_t size() const { return start.size(); }
};

// CUDA (or HIP) API calls made on CPU threads.
enum class ApiClass : uint8_t { kCudaRuntime = 0, kCudaDriver = 1, kOther = 2 };
struct ApiTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid, correlation, return_value;
  std::vector<StrId> name;  // as recorded, version suffix kept (cudaLaunchKernel_v7000)
  std::vector<uint8_t> api_class;
  void reserve(size_t n) { reserve_columns(n, start, end, global_tid, correlation, return_value, name, api_class); }
  size_t size() const { return start.size(); }
};

// Annotation ranges and marks: NVTX (push/pop, start/end, marks, domain creation rows) from nsys,
// and later user annotations / operators from PyTorch traces. `kind` uses nsys event type numbers.
enum class RangeKind : uint16_t {
  kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxtPushPop = 70, kNvtxtStartEnd = 71,
  kNvtxDomainCreate = 75, kOther = 0xFFFF,
};
struct RangeTable {
  std::vector<TimeNs> start, end;            // end == kNoTime: never closed
  std::vector<int64_t> global_tid, end_global_tid;  // end_global_tid: kNoValue unless ended elsewhere
  std::vector<uint16_t> kind;                // RangeKind, raw value kept for unknown types
  std::vector<StrId> text;                   // registered string if any, else the inline text
  std::vector<int64_t> domain_id;            // kNoValue when absent
  std::vector<int64_t> range_id;             // nvtxRangeStart id, kNoValue when absent
  std::vector<int64_t> row_id;               // the export's rowid (1-based row number), kept through filters
  void reserve(size_t n) { reserve_columns(n, start, end, global_tid, end_global_tid, kind, text, domain_id, range_id, row_id); }
  size_t size() const { return start.size(); }
};

// Operating-system runtime calls (pthread, poll, ioctl, ...).
struct OsCallTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid, return_value;
  std::vector<StrId> name;
  std::vector<int32_t> event_class, nesting_level;
  void reserve(size_t n) { reserve_columns(n, start, end, global_tid, return_value, name, event_class, nesting_level); }
  size_t size() const { return start.size(); }
};

// Thread scheduling (nsys SCHED_EVENTS, `--cpuctxsw`): a thread switched onto (sched_in) or off a CPU.
struct SchedTable {
  std::vector<TimeNs> time;
  std::vector<int64_t> global_tid;
  std::vector<int32_t> cpu;
  std::vector<uint8_t> sched_in;  // 1: the thread starts running, 0: it stops
  std::vector<uint8_t> state;     // ENUM_SAMPLING_THREAD_STATE after the switch, kNoKind if unknown
  void reserve(size_t n) { reserve_columns(n, time, global_tid, cpu, sched_in, state); }
  size_t size() const { return time.size(); }
};

// CPU samples (nsys COMPOSITE_EVENTS, `--sample`): the sampled thread and its state.
struct CpuSampleTable {
  std::vector<TimeNs> time;
  std::vector<int64_t> global_tid;
  std::vector<uint8_t> state;  // ENUM_SAMPLING_THREAD_STATE: 1 running, 2/3/7 waiting, ...
  void reserve(size_t n) { reserve_columns(n, time, global_tid, state); }
  size_t size() const { return time.size(); }
};

// CUDA synchronization activity (event / stream / context syncs seen on the GPU side).
struct SyncTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, correlation, event_id;
  std::vector<int32_t> device, context, stream, sync_type;
  void reserve(size_t n) { reserve_columns(n, start, end, global_pid, correlation, event_id, device, context, stream, sync_type); }
  size_t size() const { return start.size(); }
};

// CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT): the stream on which cudaEventRecord placed
// an event, which is the stream a later cudaStreamWaitEvent or cudaEventSynchronize (SyncTable's
// event_id) waits for. One row per record call; event ids are reused, sync_id is not.
struct CudaEventTable {
  std::vector<TimeNs> time;  // device-side completion time; kNoTime when not collected (the default)
  std::vector<int64_t> global_pid, correlation, event_id, sync_id;  // sync_id: kNoValue when absent
  std::vector<int32_t> device, context, stream;
  void reserve(size_t n) { reserve_columns(n, time, global_pid, correlation, event_id, sync_id, device, context, stream); }
  size_t size() const { return event_id.size(); }
};

// Whole CUDA graph executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE): with graph-level tracing a graph
// launch is one GPU block and its kernels are not recorded one by one.
struct GraphTraceTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, correlation, graph_id, graph_exec_id;  // graph_exec_id: kNoValue when absent
  std::vector<int32_t> device, context, stream;
  void reserve(size_t n) { reserve_columns(n, start, end, global_pid, correlation, graph_id, graph_exec_id, device, context, stream); }
  size_t size() const { return start.size(); }
};

// GPU memory allocation / free events (CUDA_GPU_MEMORY_USAGE_EVENTS, PyTorch [memory]).
struct MemoryEventTable {
  std::vector<TimeNs> time;
  std::vector<int64_t> global_pid, address, bytes, correlation;
  std::vector<int32_t> device, mem_kind, operation;  // operation: 0 allocation, 1 free
  void reserve(size_t n) { reserve_columns(n, time, global_pid, address, bytes, correlation, device, mem_kind, operation); }
  size_t size() const { return time.size(); }
};

// Profiler overhead ranges (nsys PROFILER_OVERHEAD).
struct OverheadTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid;
  std::vector<StrId> name;
  void reserve(size_t n) { reserve_columns(n, start, end, global_tid, name); }
  size_t size() const { return start.size(); }
};

// Unified Memory page migrations: the CUPTI_ACTIVITY_KIND_MEMCPY rows with a UVM copy kind
// (kUvmHtoD, kUvmDtoH, kUvmDtoD), kept with the base address of the pages they moved, which the
// ordinary memcpy table has no use for.
struct UmMigrationTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, bytes;
  std::vector<int64_t> virtual_address;  // kNoValue when not recorded
  std::vector<int32_t> device;
  std::vector<uint8_t> copy_kind;
  std::vector<uint8_t> migration_cause;  // ENUM_CUDA_UNIF_MEM_MIGRATION, kNoKind when not recorded
  size_t size() const { return start.size(); }
};

// CPU page faults on managed memory (CUDA_UM_CPU_PAGE_FAULT_EVENTS), one row per fault.
struct UmCpuPageFaultTable {
  std::vector<TimeNs> time;
  std::vector<int64_t> global_pid, address;  // address: the faulting page, kNoValue when not recorded
  size_t size() const { return time.size(); }
};

// GPU page faults on managed memory (CUDA_UM_GPU_PAGE_FAULT_EVENTS): one row per faulting page and
// interval, with how many faults hit the page.
struct UmGpuPageFaultTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_pid, address, fault_count;  // kNoValue when not recorded
  std::vector<int32_t> device;
  std::vector<uint8_t> access_type;  // ENUM_CUDA_UNIF_MEM_ACCESS_TYPE, kNoKind when not recorded
  size_t size() const { return start.size(); }
};

struct UnifiedMemoryTable {
  UmMigrationTable migrations;
  UmCpuPageFaultTable cpu_faults;
  UmGpuPageFaultTable gpu_faults;
};

// OpenMP (OMPT) events from every OPENMP_EVENT_KIND_* table of an export, in one table. nsys keeps
// one table per event kind and summarizes each on its own, so every row remembers its source table.
struct OpenMpEventTable {
  std::vector<TimeNs> start, end;
  std::vector<int64_t> global_tid;
  std::vector<StrId> name;
  std::vector<uint8_t> event_kind;         // ENUM_OPENMP_EVENT_KIND, kNoKind when not recorded
  std::vector<uint16_t> source;            // index into source_tables
  std::vector<std::string> source_tables;  // e.g. "OPENMP_EVENT_KIND_PARALLEL"
  size_t size() const { return start.size(); }
  // Drops rows from index n on (a table whose scan has to be redone).
  void truncate(size_t n) {
    for (auto* c : {&start, &end, &global_tid}) c->resize(n);
    name.resize(n);
    event_kind.resize(n);
    source.resize(n);
  }
};

struct ThreadInfo {
  int64_t global_tid = 0;
  StrId name = kNoStr;
  int32_t priority = 0;
};
struct ProcessInfo {
  int64_t global_pid = 0;
  int64_t pid = 0;
  StrId name = kNoStr;
};
struct DeviceInfo {
  int32_t id = 0;
  StrId name = kNoStr;
  int32_t sm_count = 0;
  int64_t total_memory = 0;
  int32_t compute_major = 0, compute_minor = 0;
};

// Where the trace came from and what it contained (reports say "does not contain ..." from this).
struct TraceSource {
  std::string path;
  std::string format;          // "nsys-sqlite" or "kineto-json"
  std::string product_version; // e.g. 2026.1.1.204
  std::string schema_version;  // e.g. 3.24.14
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
  int64_t bad_values = 0;          // nsys rows with a value of the wrong type (text in an integer column): read as absent
  int64_t unknown_string_ids = 0;  // nsys name ids with no StringIds row: read as unnamed
  bool any() const {
    return negative_durations || absurd_durations || missing_times || unusable_durations || oversized_events ||
           bad_values || unknown_string_ids;
  }
};

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

}  // namespace tracedoc
