#include "report/nsys_sqlite_writer.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/checked_math.h"
#include "report/output_file.h"
#include "report/sqlite_insert.h"

namespace tracedoc {

namespace {

// Column lists follow the real export's order; columns tracedoc does not model are written as the
// neutral value nsys itself writes (0 or NULL). The metadata tables are always there; the event
// tables only when they have rows (header comment).
constexpr const char* kMetaSchema = R"SQL(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
  ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER,
  maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER,
  maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER,
  maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER,
  maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER,
  computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
)SQL";
constexpr const char* kKernelSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
)SQL";
constexpr const char* kMemcpySchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,
  srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,
  dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
)SQL";
constexpr const char* kMemsetSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
)SQL";
constexpr const char* kSyncSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER);
)SQL";
constexpr const char* kCudaEventSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (timestamp INTEGER, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, eventId INTEGER NOT NULL,
  eventSyncId INTEGER);
)SQL";
constexpr const char* kGraphTraceSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER NOT NULL, graphExecId INTEGER);
)SQL";
constexpr const char* kRuntimeSchema = R"SQL(
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
)SQL";
constexpr const char* kNvtxSchema = R"SQL(
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
)SQL";
// GPU memory allocations and frees (nsys --cuda-memory-usage=true); memoryOperationType 0
// allocation, 1 deallocation.
constexpr const char* kMemoryUsageSchema = R"SQL(
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER,
  contextId INTEGER, address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER,
  name TEXT, correlationId INTEGER, streamId INTEGER);
)SQL";
constexpr const char* kOsrtSchema = R"SQL(
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER NOT NULL,
  argumentsId INTEGER NOT NULL);
)SQL";
// CPU samples (nsys --sample=cpu) and the call stacks of samples and OS calls: one row per frame,
// stackDepth 0 the innermost.
constexpr const char* kSampleSchema = R"SQL(
CREATE TABLE ENUM_SAMPLING_THREAD_STATE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE COMPOSITE_EVENTS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,
  threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);
)SQL";
constexpr const char* kCallchainColumns =
    " (id INTEGER NOT NULL, symbol INTEGER NOT NULL, module INTEGER NOT NULL, kernelMode INTEGER, thumbCode INTEGER,"
    " unresolved INTEGER, specialEntry INTEGER, originalIP INTEGER, unwindMethod INTEGER,"
    " stackDepth INTEGER NOT NULL, PRIMARY KEY (id, stackDepth));";
constexpr const char* kThreadStateEnum[] = {"Unknown",   "Running",     "Interruptible", "Uninterruptible",
                                            "Stopped",   "Terminated",  "Unscheduled",   "Waiting",
                                            "OSRuntime", "Initialized", "Transition"};
// ENUM_STACK_UNWIND_METHOD's DWARF_EH: tracedoc's recorder unwinds with .eh_frame.
constexpr int64_t kUnwindDwarfEh = 6;

constexpr const char* kCopyEnumNames[] = {
    "CUDA_MEMCPY_KIND_UNKNOWN",  "CUDA_MEMCPY_KIND_HTOD",    "CUDA_MEMCPY_KIND_DTOH", "CUDA_MEMCPY_KIND_HTOA",
    "CUDA_MEMCPY_KIND_ATOH",     "CUDA_MEMCPY_KIND_ATOA",    "CUDA_MEMCPY_KIND_ATOD", "CUDA_MEMCPY_KIND_DTOA",
    "CUDA_MEMCPY_KIND_DTOD",     "CUDA_MEMCPY_KIND_HTOH",    "CUDA_MEMCPY_KIND_PTOP", "CUDA_MEMCPY_KIND_UVM_HTOD",
    "CUDA_MEMCPY_KIND_UVM_DTOH", "CUDA_MEMCPY_KIND_UVM_DTOD"};
constexpr const char* kMemEnumNames[] = {
    "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE",       "CUDA_MEMOPR_MEMORY_KIND_PINNED",
    "CUDA_MEMOPR_MEMORY_KIND_DEVICE",         "CUDA_MEMOPR_MEMORY_KIND_ARRAY",
    "CUDA_MEMOPR_MEMORY_KIND_MANAGED",        "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC",
    "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN"};

constexpr std::pair<const char*, const char*> kSyncEnum[] = {
    {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
    {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
    {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
    {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
    {"CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"}};

constexpr int64_t kSecondNs = 1000000000;

// The earliest start of anything the export holds (INT64_MAX when it holds nothing).
int64_t first_event(const Trace& tr) {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const auto* col : {&tr.kernels.start, &tr.memcpys.start, &tr.memsets.start, &tr.syncs.start,
                          &tr.graph_traces.start, &tr.api.start, &tr.ranges.start, &tr.os_calls.start}) {
    for (TimeNs t : *col) first = std::min(first, t);
  }
  return first;
}

struct Db {
  sqlite3* db = nullptr;
  ~Db() {
    if (db) sqlite3_close(db);
  }
};

// Whether every statement so far succeeded, and the first failure's message: SQLite's own message
// is replaced by the next statement's ("not an error") once that one succeeds.
class WriteOutcome {
 public:
  explicit WriteOutcome(sqlite3* db) : db_(db) {}
  WriteOutcome& operator&=(bool success) {
    if (!success && ok_) ok_ = false, first_error_ = sqlite3_errmsg(db_);
    return *this;
  }
  explicit operator bool() const { return ok_; }
  const std::string& first_error() const { return first_error_; }

 private:
  sqlite3* db_;
  bool ok_ = true;
  std::string first_error_;
};

Status write_tables(const Trace& tr, sqlite3* db) {
  auto exec = [&](const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK; };
  if (!exec(kMetaSchema) || !exec("BEGIN"))
    return IoError(fmt::format("cannot create export schema: {}", sqlite3_errmsg(db)));
  const ExportTimebase timebase = export_timebase(tr);
  // Trace time -> export time; the shift keeps every real time far inside int64.
  const auto at = [shift = timebase.shift_ns](TimeNs t) { return t == kNoTime ? t : sat_sub(t, shift); };
  WriteOutcome ok(db);
  // Creates an event table, only when it gets rows.
  const auto table = [&](size_t rows, const char* schema) { return rows > 0 && (ok &= exec(schema)); };
  {
    SqlInsert s(db, "INSERT INTO StringIds VALUES (?,?)");
    for (StrId id = 0; id < tr.strings.size(); ++id) ok &= s.i(id).t(tr.strings.get(id)).run();
    SqlInsert m(db, "INSERT INTO META_DATA_EXPORT VALUES (?,?)");
    ok &= m.t("EXPORT_PRODUCT_NAME").t("tracedoc").run();
    ok &= m.t("EXPORT_PRODUCT_VERSION")
              .t(tr.source.product_version.empty() ? "2024.5.1.113" : tr.source.product_version)
              .run();
    ok &= m.t("EXPORT_SCHEMA_VERSION").t("3.13.2").run();
    ok &= m.t("EXPORT_SCHEMA_VERSION_MAJOR").t("3").run();
    ok &= m.t("EXPORT_SCHEMA_VERSION_MINOR").t("13").run();
    ok &= m.t("EXPORT_SCHEMA_VERSION_MICRO").t("2").run();
    if (timebase.shift_ns != 0) {
      // The way back to the source trace's own times: source time = exported time + this.
      ok &= m.t("TRACEDOC_SOURCE_TIME_SHIFT_NS").t(std::to_string(timebase.shift_ns)).run();
    }
    SqlInsert ce(db, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?,?,?)");
    for (uint8_t k = 0; k < std::size(kCopyEnumNames); ++k)
      ok &= ce.i(k).t(kCopyEnumNames[k]).t(tr.copy_label(k)).run();
    SqlInsert me(db, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?,?,?)");
    for (uint8_t k = 0; k < std::size(kMemEnumNames); ++k) ok &= me.i(k).t(kMemEnumNames[k]).t(tr.mem_label(k)).run();
    SqlInsert se(db, "INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?,?,?)");
    for (int64_t k = 0; k < static_cast<int64_t>(std::size(kSyncEnum)); ++k)
      ok &= se.i(k).t(kSyncEnum[k].first).t(kSyncEnum[k].second).run();
    SqlInsert st(db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?,NULL,NULL,NULL)");
    ok &= st.i(timebase.session_start_utc_ns).run();
    SqlInsert g(db,
                "INSERT INTO TARGET_INFO_GPU (vmId,id,name,totalMemory,smCount,computeMajor,computeMinor,cuDevice,"
                "clockRate,memoryBandwidth) VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (const auto& d : tr.devices) {
      ok &= g.i(0)
                .i(d.id)
                .t(tr.str(d.name))
                .i(d.total_memory)
                .i(d.sm_count)
                .i(d.compute_major)
                .i(d.compute_minor)
                .i(d.id)
                .maybe(d.clock_hz, 0)
                .maybe(d.memory_bandwidth, 0)
                .run();
    }
    SqlInsert p(db, "INSERT INTO PROCESSES VALUES (?,?,?)");
    for (const auto& pr : tr.processes) ok &= p.i(pr.global_pid).i(pr.pid).t(tr.str(pr.name)).run();
    // An export names only the threads it knows a name for.
    SqlInsert th(db, "INSERT INTO ThreadNames VALUES (?,?,?)");
    for (const auto& t : tr.threads) {
      if (tr.strings.valid(t.name)) ok &= th.i(t.name).i(t.priority).i(t.global_tid).run();
    }
  }
  if (const auto& k = tr.kernels; table(k.size(), kKernelSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + placeholders(28) + ")");
    for (size_t r = 0; r < k.size(); ++r) {
      ins.i(at(k.start[r]))
          .i(at(k.end[r]))
          .i(k.device[r])
          .i(k.context[r])
          .maybe(k.green_context[r], kNoGreen)
          .i(k.stream[r])
          .maybe(k.correlation[r], kNoValue)
          .i(k.global_pid[r])
          .i(k.name[r])
          .i(k.short_name[r])
          .maybe(k.mangled_name[r], kNoStr)
          .i(3)
          .i(0)
          .i(k.registers_per_thread[r])
          .i(k.grid_x[r])
          .i(k.grid_y[r])
          .i(k.grid_z[r])
          .i(k.block_x[r])
          .i(k.block_y[r])
          .i(k.block_z[r])
          .i(k.static_smem[r])
          .i(k.dynamic_smem[r])
          .i(0)
          .i(0)
          .i(static_cast<int64_t>(r) + 1)
          .i(0)
          .maybe(k.graph_node_id[r], kNoValue)
          .i(0);
      ok &= ins.run();
    }
  }
  if (const auto& m = tr.memcpys; table(m.size(), kMemcpySchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (" + placeholders(20) + ")");
    for (size_t r = 0; r < m.size(); ++r) {
      ins.i(at(m.start[r]))
          .i(at(m.end[r]))
          .i(m.device[r])
          .i(m.context[r])
          .maybe(m.green_context[r], kNoGreen)
          .i(m.stream[r])
          .maybe(m.correlation[r], kNoValue)
          .i(m.global_pid[r])
          .i(m.bytes[r])
          .i(m.copy_kind[r])
          .null()
          .maybe(m.src_kind[r], kNoKind)
          .maybe(m.dst_kind[r], kNoKind)
          .maybe(m.src_device[r], kNoGreen)
          .null()
          .maybe(m.dst_device[r], kNoGreen)
          .null()
          .null()
          .null()
          .null();
      ok &= ins.run();
    }
  }
  if (const auto& s = tr.memsets; table(s.size(), kMemsetSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (" + placeholders(12) + ")");
    for (size_t r = 0; r < s.size(); ++r) {
      ins.i(at(s.start[r]))
          .i(at(s.end[r]))
          .i(s.device[r])
          .i(s.context[r])
          .maybe(s.green_context[r], kNoGreen)
          .i(s.stream[r])
          .maybe(s.correlation[r], kNoValue)
          .i(s.global_pid[r])
          .i(s.value[r])
          .i(s.bytes[r])
          .null()
          .maybe(s.mem_kind[r], kNoKind);
      ok &= ins.run();
    }
  }
  if (const auto& y = tr.syncs; table(y.size(), kSyncSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (" + placeholders(10) + ")");
    for (size_t r = 0; r < y.size(); ++r) {
      ins.i(at(y.start[r]))
          .i(at(y.end[r]))
          .i(y.device[r])
          .i(y.context[r])
          .null()
          .i(y.stream[r])
          .maybe(y.correlation[r], kNoValue)
          .i(y.global_pid[r])
          .i(y.sync_type[r])
          .maybe(y.event_id[r], kNoValue);
      ok &= ins.run();
    }
  }
  if (const auto& e = tr.cuda_events; table(e.size(), kCudaEventSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (" + placeholders(9) + ")");
    for (size_t r = 0; r < e.size(); ++r) {
      // nsys writes 0 when the device timestamp was not collected.
      ins.i(e.time[r] == kNoTime ? 0 : at(e.time[r]))
          .i(e.device[r])
          .i(e.context[r])
          .null()
          .i(e.stream[r])
          .maybe(e.correlation[r], kNoValue)
          .i(e.global_pid[r])
          .i(e.event_id[r] == kNoValue ? 0 : e.event_id[r])
          .maybe(e.sync_id[r], kNoValue);
      ok &= ins.run();
    }
  }
  if (const auto& g = tr.graph_traces; table(g.size(), kGraphTraceSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (" + placeholders(10) + ")");
    for (size_t r = 0; r < g.size(); ++r) {
      ins.i(at(g.start[r]))
          .i(at(g.end[r]))
          .i(g.device[r])
          .i(g.context[r])
          .null()
          .i(g.stream[r])
          .maybe(g.correlation[r], kNoValue)
          .i(g.global_pid[r])
          .i(g.graph_id[r] == kNoValue ? 0 : g.graph_id[r])
          .maybe(g.graph_exec_id[r], kNoValue);
      ok &= ins.run();
    }
  }
  if (const auto& a = tr.api; table(a.size(), kRuntimeSchema)) {
    SqlInsert ins(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + placeholders(8) + ")");
    for (size_t r = 0; r < a.size(); ++r) {
      ins.i(at(a.start[r]))
          .i(at(a.end[r]))
          .i(a.api_class[r] == 1 ? 1 : 0)
          .i(a.global_tid[r])
          .maybe(a.correlation[r], kNoValue)
          .i(a.name[r])
          .i(a.return_value[r] == kNoValue ? 0 : a.return_value[r])
          .null();
      ok &= ins.run();
    }
  }
  if (const auto& n = tr.ranges; table(n.size(), kNvtxSchema)) {
    SqlInsert ins(db,
                  "INSERT INTO NVTX_EVENTS (start,end,eventType,rangeId,text,textId,globalTid,endGlobalTid,domainId) "
                  "VALUES (?,?,?,?,?,?,?,?,?)");
    for (size_t r = 0; r < n.size(); ++r) {
      ins.i(at(n.start[r])).maybe(at(n.end[r]), kNoTime).i(n.kind[r]).maybe(n.range_id[r], kNoValue);
      // nsys names a domain by the inline text of its creation row (its reports read `text` there,
      // not the string table), and ranges by their registered string.
      if (n.kind[r] == static_cast<uint16_t>(RangeKind::kNvtxDomainCreate) && n.text[r] != kNoStr) {
        ins.t(tr.str(n.text[r])).null();
      } else {
        ins.null().maybe(n.text[r], kNoStr);
      }
      ins.i(n.global_tid[r]).maybe(n.end_global_tid[r], kNoValue).maybe(n.domain_id[r], kNoValue);
      ok &= ins.run();
    }
  }
  // GPU memory: an nsys export's own events, or a PyTorch trace's caching-allocator events on a GPU
  // (device type 0 is the CPU), each as an allocation or a free of its size. nsys records no
  // running total, so the allocator's totals are not carried over: the memory reports then count
  // from 0 at the first event, as they do for nsys exports.
  const auto& al = tr.pytorch.allocator;
  size_t gpu_allocator_events = 0;
  for (size_t r = 0; r < al.size(); ++r)
    gpu_allocator_events += al.device_type[r] != 0 && al.bytes[r] != kNoValue ? 1 : 0;
  if (const auto& e = tr.memory; table(e.size() + gpu_allocator_events, kMemoryUsageSchema)) {
    SqlInsert ins(db, "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (" + placeholders(12) + ")");
    for (size_t r = 0; r < e.size(); ++r) {
      ins.i(at(e.time[r]))
          .i(e.global_pid[r])
          .i(e.device[r])
          .null()
          .i(e.address[r])
          .null()
          .i(e.bytes[r])
          .i(e.mem_kind[r])
          .i(e.operation[r])
          .null()
          .maybe(e.correlation[r], kNoValue)
          .null();
      ok &= ins.run();
    }
    for (size_t r = 0; r < al.size(); ++r) {
      if (al.device_type[r] == 0 || al.bytes[r] == kNoValue) continue;
      const int64_t bytes = al.bytes[r];
      ins.i(at(al.time[r]))
          .i(global_pid_of(al.global_tid[r]))
          .i(al.device_id[r])
          .null()
          .maybe(al.address[r], kNoValue)
          .null()
          .i(bytes < 0 ? sat_sub(0, bytes) : bytes)
          .i(static_cast<int64_t>(MemKind::kDevice))
          .i(bytes < 0 ? 1 : 0)
          .null()
          .null()
          .null();
      ok &= ins.run();
    }
  }
  // One table's stacks, each under the id its event refers to.
  const auto write_stack = [&](SqlInsert& ins, int64_t id, StackId stack) {
    const auto frames = tr.stacks.stack(stack);
    for (size_t depth = 0; depth < frames.size(); ++depth) {
      const StackFrame& f = tr.stacks.frame(frames[depth]);
      ins.i(id).i(f.symbol == kNoStr ? -1 : f.symbol).i(f.module == kNoStr ? -1 : f.module);
      ins.i(f.kernel_mode() ? 1 : 0).i(0).i(f.unresolved() ? 1 : 0).i(0).null().i(kUnwindDwarfEh);
      ok &= ins.i(static_cast<int64_t>(depth)).run();
    }
  };
  if (const auto& c = tr.cpu_samples; table(c.size(), kSampleSchema)) {
    SqlInsert states(db, "INSERT INTO ENUM_SAMPLING_THREAD_STATE VALUES (?,?,?)");
    for (int64_t k = 0; k < static_cast<int64_t>(std::size(kThreadStateEnum)); ++k)
      ok &= states.i(k).t(kThreadStateEnum[k]).t(k == 8 ? "OS runtime" : kThreadStateEnum[k]).run();
    ok &= exec((std::string("CREATE TABLE SAMPLING_CALLCHAINS") + kCallchainColumns).c_str());
    SqlInsert ins(db, "INSERT INTO COMPOSITE_EVENTS VALUES (?,?,NULL,?,?,0)");
    SqlInsert chains(db, "INSERT INTO SAMPLING_CALLCHAINS VALUES (" + placeholders(10) + ")");
    for (size_t r = 0; r < c.size(); ++r) {
      const auto id = static_cast<int64_t>(r) + 1;
      ok &= ins.i(id).i(at(c.time[r])).maybe(c.state[r], kNoKind).i(c.global_tid[r]).run();
      write_stack(chains, id, c.stack[r]);
    }
  }
  if (const auto& o = tr.os_calls; table(o.size(), kOsrtSchema)) {
    const bool stacks = !o.stack.empty();
    if (stacks) ok &= exec((std::string("CREATE TABLE OSRT_CALLCHAINS") + kCallchainColumns).c_str());
    std::optional<SqlInsert> chains;
    if (stacks) chains.emplace(db, "INSERT INTO OSRT_CALLCHAINS VALUES (" + placeholders(10) + ")");
    int64_t callchain = 0;  // 0: the call has no stack, as nsys writes it
    SqlInsert ins(db, "INSERT INTO OSRT_API VALUES (" + placeholders(9) + ")");
    for (size_t r = 0; r < o.size(); ++r) {
      const bool has_stack = stacks && o.stack[r] != kNoStack;
      if (has_stack) write_stack(*chains, ++callchain, o.stack[r]);
      ins.i(at(o.start[r]))
          .i(at(o.end[r]))
          .i(o.event_class[r])
          .i(o.global_tid[r])
          .i(o.name[r])
          .i(o.return_value[r] == kNoValue ? 0 : o.return_value[r])
          .i(o.nesting_level[r])
          .i(has_stack ? callchain : 0)
          .i(0);
      ok &= ins.run();
    }
  }
  if (!ok) return IoError(fmt::format("writing the export failed: {}", ok.first_error()));
  if (!exec("COMMIT")) return IoError(fmt::format("writing the export failed: {}", sqlite3_errmsg(db)));
  return Status::Ok();
}

}  // namespace

ExportTimebase export_timebase(const Trace& trace) {
  if (trace.source.format != "kineto-json") return {trace.source.session_start_utc_ns, 0};
  const int64_t base = trace.pytorch.base_time_ns;
  const int64_t first = first_event(trace);
  if (first == std::numeric_limits<int64_t>::max()) return {base, 0};
  // The last whole second strictly before the first event (floor division, also below 1970).
  const int64_t before = sat_sub(sat_add(first, base), 1);
  const int64_t second = before / kSecondNs - (before % kSecondNs < 0 ? 1 : 0);
  const int64_t start = sat_mul(second, kSecondNs);
  return {start, sat_sub(start, base)};
}

Status write_nsys_sqlite(const Trace& trace, const std::string& path) {
  OutputFile out;
  TRACEDOC_RETURN_IF_ERROR(out.open_staged(path));
  Status st;
  {
    Db db;
    if (sqlite3_open(out.staging_path().c_str(), &db.db) != SQLITE_OK) {
      return IoError(fmt::format("{}: cannot create: {}", path, db.db ? sqlite3_errmsg(db.db) : "out of memory"));
    }
    sqlite3_exec(db.db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF", nullptr, nullptr, nullptr);
    st = write_tables(trace, db.db);
    // SQLite says "disk I/O error" for a full disk and a file-size limit alike: the system's reason.
    if (!st.ok()) {
      if (const std::string why = out.why_writes_fail(); !why.empty())
        st = Status(st.code(), fmt::format("{} ({})", st.message(), why));
    }
    if (st.ok() && sqlite3_close(db.db) != SQLITE_OK)
      st = IoError(std::string("closing the export failed: ") + sqlite3_errmsg(db.db));
    if (st.ok()) db.db = nullptr;
  }
  if (!st.ok()) return Status(st.code(), fmt::format("{}: {}", path, st.message()));
  return out.commit();
}

}  // namespace tracedoc
