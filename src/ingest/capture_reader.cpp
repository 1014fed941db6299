#include "ingest/capture_reader.h"

#include <signal.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/input_file.h"
#include "ingest/capture_format.h"
#include "ingest/elf_symbols.h"
#include "ingest/trace_directory.h"
#include "ingest/emit_nvtx_ops.h"
#include "ingest/kineto_events.h"
#include "model/correlation_index.h"
#include "model/table_sort.h"

namespace tracedoc {

namespace {

using capture::BodyReader;
using capture::RecordType;
namespace fs = std::filesystem;

constexpr int64_t kNoPid = -1;
constexpr int32_t kOsRuntimeEventClass = 27;  // TRACE_PROCESS_EVENT_OS_RUNTIME, as nsys numbers OSRT_API rows

// One process's file into the shared Trace. Times stay absolute here; read_capture shifts every
// table by the session start once all files are in.
class FileReader {
 public:
  FileReader(Trace& trace, std::string path, Symbolizer& symbols)
      : t_(trace), path_(std::move(path)), symbols_(symbols) {}

  // `name`: stacks are named now (read_capture); symbolize_capture leaves them as addresses.
  Status read(int64_t* process_start, bool name = true) {
    TRACEDOC_ASSIGN_OR_RETURN(const std::string bytes, read_file(path_));
    if (bytes.size() < sizeof(capture::kFileMagic) || std::memcmp(bytes.data(), capture::kFileMagic, 6) != 0) {
      return BadInput(fmt::format("{}: not a tracedoc capture file (no TDCAP header)", path_));
    }
    if (bytes[6] != capture::kFileMagic[6]) {
      return BadInput(fmt::format("{}: capture format version {} (this tracedoc reads version {})", path_,
                                  int(bytes[6]), int(capture::kFileMagic[6])));
    }
    size_t at = sizeof(capture::kFileMagic);
    while (at < bytes.size()) {
      if (bytes.size() - at < capture::kFrameHeader) {
        ++t_.warnings.torn_frames;
        break;
      }
      BodyReader header(std::string_view(bytes).substr(at, capture::kFrameHeader));
      const uint32_t magic = header.get<uint32_t>(), length = header.get<uint32_t>(), crc = header.get<uint32_t>();
      if (magic != capture::kFrameMagic || length > capture::kMaxFrame ||
          length > bytes.size() - at - capture::kFrameHeader) {
        ++t_.warnings.torn_frames;
        break;
      }
      const std::string_view payload = std::string_view(bytes).substr(at + capture::kFrameHeader, length);
      if (capture::crc32_of(payload) != crc) {
        ++t_.warnings.torn_frames;
        break;
      }
      read_payload(payload);
      at += capture::kFrameHeader + length;
    }
    close_open_ranges();
    add_threads();
    if (!name) return Status::Ok();
    name_stacks();
    if (t_.source.has_table("COMPOSITE_EVENTS") &&
        std::any_of(t_.cpu_samples.stack.begin(), t_.cpu_samples.stack.end(), [](StackId s) { return s != kNoStack; }))
      t_.source.tables.insert("SAMPLING_CALLCHAINS");
    *process_start = start_;
    return Status::Ok();
  }

 private:
  void read_payload(std::string_view payload) {
    size_t at = 0;
    while (payload.size() - at >= 4) {
      BodyReader head(payload.substr(at, 4));
      const auto type = static_cast<RecordType>(head.get<uint16_t>());
      const uint16_t size = head.get<uint16_t>();
      if (size > payload.size() - at - 4) break;  // cannot happen in a frame whose CRC matched
      BodyReader body(payload.substr(at + 4, size));
      read_record(type, body);
      at += 4 + size;
    }
  }

  StrId str(uint32_t id) const {
    auto it = strings_.find(id);
    return it != strings_.end() ? it->second : kNoStr;
  }
  int64_t tid_of(int64_t tid) const { return make_global_tid(0, pid_, tid); }
  int64_t gpid() const { return make_global_tid(0, pid_, 0); }

  void read_record(RecordType type, BodyReader& r) {
    switch (type) {
      case RecordType::kProcess: {
        pid_ = r.get<int64_t>();
        r.get<int64_t>();  // parent pid
        start_ = r.get<int64_t>();
        const std::string_view name = r.rest();
        t_.processes.push_back(ProcessInfo{gpid(), pid_, t_.strings.intern(name)});
        break;
      }
      case RecordType::kThreadName: {  // nvtxNameOsThread: the program's own name wins
        const int64_t tid = r.get<int64_t>();
        thread_names_[tid] = t_.strings.intern(r.rest());
        break;
      }
      case RecordType::kOsThreadName: {
        const int64_t tid = r.get<int64_t>();
        os_thread_names_[tid] = t_.strings.intern(r.rest());
        break;
      }
      case RecordType::kString: {
        const uint32_t id = r.get<uint32_t>();
        strings_[id] = t_.strings.intern(r.rest());
        break;
      }
      case RecordType::kDomain: {
        const uint32_t id = r.get<uint32_t>();
        const StrId name = t_.strings.intern(r.rest());
        // nsys keeps a domain-creation row (eventType 75) whose text is the domain's name.
        add_range(RangeKind::kNvtxDomainCreate, start_, kNoTime, 0, name, id, kNoValue);
        break;
      }
      case RecordType::kNvtxPush: {
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        const uint32_t domain = r.get<uint32_t>(), text = r.get<uint32_t>();
        const size_t row = add_range(RangeKind::kNvtxPushPop, time, kNoTime, tid, str(text), domain, kNoValue);
        stacks_[{tid, domain}].push_back(row);
        break;
      }
      case RecordType::kNvtxPop: {
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        const uint32_t domain = r.get<uint32_t>();
        auto& stack = stacks_[{tid, domain}];
        if (!stack.empty()) {
          t_.ranges.end[stack.back()] = time;
          stack.pop_back();
        }
        break;
      }
      case RecordType::kNvtxStart: {
        const uint64_t id = r.get<uint64_t>();
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        const uint32_t domain = r.get<uint32_t>(), text = r.get<uint32_t>();
        open_[id] =
            add_range(RangeKind::kNvtxStartEnd, time, kNoTime, tid, str(text), domain, static_cast<int64_t>(id));
        break;
      }
      case RecordType::kNvtxEnd: {
        const uint64_t id = r.get<uint64_t>();
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        auto it = open_.find(id);
        if (it == open_.end()) break;
        t_.ranges.end[it->second] = time;
        if (tid_of(tid) != t_.ranges.global_tid[it->second]) t_.ranges.end_global_tid[it->second] = tid_of(tid);
        open_.erase(it);
        break;
      }
      case RecordType::kNvtxMark: {
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        const uint32_t domain = r.get<uint32_t>(), text = r.get<uint32_t>();
        add_range(RangeKind::kNvtxMark, time, kNoTime, tid, str(text), domain, kNoValue);
        break;
      }
      case RecordType::kKernel: add_kernel(capture::get_body<capture::KernelBody>(r)); break;
      case RecordType::kMemcpy: add_memcpy(capture::get_body<capture::MemcpyBody>(r)); break;
      case RecordType::kMemset: add_memset(capture::get_body<capture::MemsetBody>(r)); break;
      case RecordType::kApi: add_api(capture::get_body<capture::ApiBody>(r)); break;
      case RecordType::kSync: add_sync(capture::get_body<capture::SyncBody>(r)); break;
      case RecordType::kMemory: add_memory(capture::get_body<capture::MemoryBody>(r)); break;
      case RecordType::kDevice: add_device(capture::get_body<capture::DeviceBody>(r)); break;
      case RecordType::kCudaEvent: add_cuda_event(capture::get_body<capture::CudaEventBody>(r)); break;
      case RecordType::kGraphTrace: add_graph_trace(capture::get_body<capture::GraphTraceBody>(r)); break;
      case RecordType::kOsCall: {
        add_os_call(capture::get_body<capture::OsCallBody>(r));
        t_.os_calls.stack.push_back(read_stack(r, t_.os_calls.stack));  // kNoStack without --osrt-backtrace
        break;
      }
      case RecordType::kCpuSample: {
        const int64_t tid = r.get<int64_t>(), time = r.get<int64_t>();
        r.get<int32_t>();  // the CPU: not modelled
        CpuSampleTable& c = t_.cpu_samples;
        c.time.push_back(time), c.global_tid.push_back(tid_of(tid));
        c.state.push_back(kRunningState), c.stack.push_back(read_stack(r, c.stack));
        t_.source.tables.insert("COMPOSITE_EVENTS");
        break;
      }
      case RecordType::kSymbol: {
        const uint64_t pc = r.get<uint64_t>();
        const bool return_address = r.get<uint8_t>() != 0, resolved = r.get<uint8_t>() != 0;
        const std::string_view names = r.rest();
        const size_t nul = names.find('\0');
        if (nul == std::string_view::npos) break;
        recorded_[{pc, return_address}] =
            Symbolizer::Frame{std::string(names.substr(0, nul)), std::string(names.substr(nul + 1)), resolved};
        break;
      }
      case RecordType::kModule: {
        MappedModule m;
        m.start = r.get<uint64_t>(), m.end = r.get<uint64_t>(), m.offset = r.get<uint64_t>();
        m.path = std::string(r.rest());
        // A mapping replaced at the same address (a library unloaded, another loaded there) names
        // the addresses from then on: the stacks are named once the whole file is read.
        auto same_start =
            std::find_if(modules_.begin(), modules_.end(), [&](const MappedModule& k) { return k.start == m.start; });
        if (same_start != modules_.end()) {
          *same_start = std::move(m);
        } else {
          modules_.insert(std::upper_bound(modules_.begin(), modules_.end(), m.start,
                                           [](uint64_t a, const MappedModule& k) { return a < k.start; }),
                          std::move(m));
        }
        break;
      }
      case RecordType::kOverhead: {
        const int64_t tid = r.get<int64_t>(), start = r.get<int64_t>(), end = r.get<int64_t>();
        r.get<uint32_t>();
        OverheadTable& o = t_.overhead;
        o.start.push_back(start), o.end.push_back(end), o.global_tid.push_back(tid_of(tid));
        o.name.push_back(t_.strings.intern("CUPTI overhead"));
        break;
      }
      case RecordType::kDropped:
      case RecordType::kCaptureRange: break;
      default: ++t_.warnings.unknown_events;  // a newer recorder's record: skipped by its size
    }
  }

  // The rest of a record as a call stack (u64 addresses, innermost first), kept as addresses until
  // the file is read: the mappings that name them may be recorded after it. Returns kNoStack, which
  // name_stacks replaces when the record has a stack.
  StackId read_stack(BodyReader& r, std::vector<StackId>& column) {
    const size_t begin = addresses_.size();
    for (std::string_view rest = r.rest();
         rest.size() >= 8 && addresses_.size() - begin < static_cast<size_t>(capture::kMaxStackDepth);
         rest.remove_prefix(8)) {
      BodyReader one(rest.substr(0, 8));
      addresses_.push_back(one.get<uint64_t>());
    }
    if (addresses_.size() > begin) pending_stacks_.push_back({&column, column.size(), begin, addresses_.size()});
    return kNoStack;
  }

  // An address's name: as `tracedoc capture` recorded it, else from the ELF files now.
  Symbolizer::Frame name_of(uint64_t pc, bool return_address) {
    if (auto it = recorded_.find({pc, return_address}); it != recorded_.end()) return it->second;
    return symbols_.resolve(modules_, pc, return_address);
  }

 public:
  int64_t pid() const { return pid_; }
  // The kSymbol records naming every distinct address of the file's stacks (read with name = false).
  std::string symbol_records(int64_t* named) {
    std::string payload, body;
    std::set<std::pair<uint64_t, bool>> done;
    for (const PendingStack& p : pending_stacks_) {
      for (size_t i = p.begin; i < p.end; ++i) {
        const bool return_address = i > p.begin;
        if (!done.insert({addresses_[i], return_address}).second) continue;
        const Symbolizer::Frame f = name_of(addresses_[i], return_address);
        body.clear();
        capture::BodyWriter(body)
            .put<uint64_t>(addresses_[i])
            .put<uint8_t>(return_address ? 1 : 0)
            .put<uint8_t>(f.resolved ? 1 : 0)
            .bytes(std::string_view(f.symbol).substr(0, kMaxName))
            .bytes(std::string_view("\0", 1))
            .bytes(std::string_view(f.module).substr(0, kMaxName));
        capture::append_record(payload, RecordType::kSymbol, body);
        ++*named;
      }
    }
    return payload;
  }

 private:
  static constexpr size_t kMaxName = 32000;  // two of them fit a record (u16 size)

  // Every stack of the file, named (name_of).
  void name_stacks() {
    std::map<std::pair<uint64_t, bool>, uint32_t> frames;  // (address, is a return address) -> frame id
    std::vector<uint32_t> ids;
    for (const PendingStack& p : pending_stacks_) {
      ids.clear();
      for (size_t i = p.begin; i < p.end; ++i) {
        const bool return_address = i > p.begin;
        auto [it, added] = frames.try_emplace({addresses_[i], return_address}, 0);
        if (added) {
          const Symbolizer::Frame f = name_of(addresses_[i], return_address);
          StackFrame frame;
          frame.symbol = t_.strings.intern(f.symbol);
          frame.module = t_.strings.intern(f.module);
          frame.flags = f.resolved ? 0 : StackFrame::kUnresolved;
          it->second = t_.stacks.intern_frame(frame);
        }
        ids.push_back(it->second);
      }
      (*p.column)[p.row] = t_.stacks.intern_stack(ids);
    }
    pending_stacks_.clear();
    addresses_.clear();
  }

  size_t add_range(RangeKind kind, TimeNs start, TimeNs end, int64_t tid, StrId text, uint32_t domain,
                   int64_t range_id) {
    RangeTable& g = t_.ranges;
    g.start.push_back(start), g.end.push_back(end);
    g.global_tid.push_back(tid_of(tid)), g.end_global_tid.push_back(kNoValue);
    g.kind.push_back(static_cast<uint16_t>(kind)), g.text.push_back(text);
    g.domain_id.push_back(domain), g.range_id.push_back(range_id),
        g.row_id.push_back(static_cast<int64_t>(g.start.size()));
    t_.source.tables.insert("NVTX_EVENTS");
    return g.start.size() - 1;
  }

  // One entry per named thread: its NVTX name, else the name the kernel knew it by (the last seen).
  void add_threads() {
    for (const auto& [tid, name] : os_thread_names_) thread_names_.try_emplace(tid, name);
    for (const auto& [tid, name] : thread_names_) t_.threads.push_back(ThreadInfo{tid_of(tid), name, 0});
  }

  // Ranges the process never closed keep a NULL end; nothing to do but forget them.
  void close_open_ranges() {
    stacks_.clear();
    open_.clear();
  }

  void add_kernel(const capture::KernelBody& b) {
    KernelTable& k = t_.kernels;
    const StrId name = str(b.name);
    k.start.push_back(b.start), k.end.push_back(b.end), k.global_pid.push_back(gpid()),
        k.correlation.push_back(b.correlation);
    k.device.push_back(b.device), k.context.push_back(b.context), k.green_context.push_back(kNoGreen),
        k.stream.push_back(b.stream);
    k.name.push_back(name), k.short_name.push_back(name), k.mangled_name.push_back(name);
    k.grid_x.push_back(b.grid_x), k.grid_y.push_back(b.grid_y), k.grid_z.push_back(b.grid_z);
    k.block_x.push_back(b.block_x), k.block_y.push_back(b.block_y), k.block_z.push_back(b.block_z);
    k.registers_per_thread.push_back(b.registers), k.static_smem.push_back(b.static_smem),
        k.dynamic_smem.push_back(b.dynamic_smem);
    k.graph_node_id.push_back(b.graph_node != 0 ? b.graph_node : kNoValue);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  }
  void add_memcpy(const capture::MemcpyBody& b) {
    MemcpyTable& m = t_.memcpys;
    m.start.push_back(b.start), m.end.push_back(b.end), m.global_pid.push_back(gpid()),
        m.correlation.push_back(b.correlation);
    m.bytes.push_back(b.bytes), m.device.push_back(b.device), m.context.push_back(b.context),
        m.green_context.push_back(kNoGreen);
    m.stream.push_back(b.stream), m.src_device.push_back(b.src_device), m.dst_device.push_back(b.dst_device);
    m.copy_kind.push_back(b.copy_kind), m.src_kind.push_back(b.src_kind), m.dst_kind.push_back(b.dst_kind);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_MEMCPY");
  }
  void add_memset(const capture::MemsetBody& b) {
    MemsetTable& m = t_.memsets;
    m.start.push_back(b.start), m.end.push_back(b.end), m.global_pid.push_back(gpid()),
        m.correlation.push_back(b.correlation);
    m.bytes.push_back(b.bytes), m.value.push_back(b.value), m.device.push_back(b.device),
        m.context.push_back(b.context);
    m.green_context.push_back(kNoGreen), m.stream.push_back(b.stream), m.mem_kind.push_back(b.mem_kind);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_MEMSET");
  }
  void add_api(const capture::ApiBody& b) {
    ApiTable& a = t_.api;
    a.start.push_back(b.start), a.end.push_back(b.end), a.global_tid.push_back(tid_of(b.tid)),
        a.correlation.push_back(b.correlation);
    a.return_value.push_back(b.return_value), a.name.push_back(str(b.name));
    a.api_class.push_back(b.api_class <= 1 ? b.api_class : static_cast<uint8_t>(ApiClass::kOther));
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_RUNTIME");
  }
  void add_sync(const capture::SyncBody& b) {
    SyncTable& y = t_.syncs;
    y.start.push_back(b.start), y.end.push_back(b.end), y.global_pid.push_back(gpid()),
        y.correlation.push_back(b.correlation);
    y.event_id.push_back(b.event >= 0 ? b.event : kNoValue), y.device.push_back(b.device),
        y.context.push_back(b.context);
    y.stream.push_back(b.stream), y.sync_type.push_back(b.sync_type);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
  }
  void add_memory(const capture::MemoryBody& b) {
    MemoryEventTable& m = t_.memory;
    m.time.push_back(b.time), m.global_pid.push_back(gpid()), m.address.push_back(b.address),
        m.bytes.push_back(b.bytes);
    m.correlation.push_back(b.correlation), m.device.push_back(b.device), m.mem_kind.push_back(b.mem_kind),
        m.operation.push_back(b.operation);
    t_.source.tables.insert("CUDA_GPU_MEMORY_USAGE_EVENTS");
  }
  void add_cuda_event(const capture::CudaEventBody& b) {
    CudaEventTable& e = t_.cuda_events;
    e.time.push_back(b.device_time != 0 ? b.device_time : kNoTime), e.global_pid.push_back(gpid());
    e.correlation.push_back(b.correlation), e.event_id.push_back(b.event),
        e.sync_id.push_back(b.sync_id >= 0 ? b.sync_id : kNoValue);
    e.device.push_back(b.device), e.context.push_back(b.context), e.stream.push_back(b.stream);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_CUDA_EVENT");
  }
  void add_graph_trace(const capture::GraphTraceBody& b) {
    GraphTraceTable& g = t_.graph_traces;
    g.start.push_back(b.start), g.end.push_back(b.end), g.global_pid.push_back(gpid()),
        g.correlation.push_back(b.correlation);
    g.graph_id.push_back(b.graph_id), g.graph_exec_id.push_back(kNoValue);
    g.device.push_back(b.device), g.context.push_back(b.context), g.stream.push_back(b.stream);
    t_.source.tables.insert("CUPTI_ACTIVITY_KIND_GRAPH_TRACE");
  }
  void add_os_call(const capture::OsCallBody& b) {
    OsCallTable& o = t_.os_calls;
    o.start.push_back(b.start), o.end.push_back(b.end), o.global_tid.push_back(tid_of(b.tid)),
        o.return_value.push_back(b.return_value);
    o.name.push_back(str(b.name)), o.event_class.push_back(kOsRuntimeEventClass), o.nesting_level.push_back(0);
    t_.source.tables.insert("OSRT_API");
  }
  void add_device(const capture::DeviceBody& b) {
    for (const DeviceInfo& d : t_.devices) {
      if (d.id == b.id) return;  // every process reports the devices it sees
    }
    t_.devices.push_back(DeviceInfo{b.id, str(b.name), b.sm_count, b.total_memory, b.compute_major, b.compute_minor});
    t_.source.tables.insert("TARGET_INFO_GPU");
  }

  // ENUM_SAMPLING_THREAD_STATE "Running": a CPU-time timer fires only while its thread runs.
  static constexpr uint8_t kRunningState = 1;

  Trace& t_;
  std::string path_;
  Symbolizer& symbols_;
  std::vector<MappedModule> modules_;                                // the process's executable mappings, by start
  std::map<std::pair<uint64_t, bool>, Symbolizer::Frame> recorded_;  // kSymbol: (address, return) -> name
  struct PendingStack {
    std::vector<StackId>* column;  // where the named stack goes
    size_t row, begin, end;        // addresses_[begin, end)
  };
  std::vector<PendingStack> pending_stacks_;
  std::vector<uint64_t> addresses_;
  int64_t pid_ = kNoPid;
  int64_t start_ = std::numeric_limits<int64_t>::max();
  std::unordered_map<uint32_t, StrId> strings_;
  std::map<int64_t, StrId> thread_names_, os_thread_names_;             // tid -> name
  std::map<std::pair<int64_t, uint32_t>, std::vector<size_t>> stacks_;  // (tid, domain) -> open push rows
  std::unordered_map<uint64_t, size_t> open_;                           // start/end range id -> row
};

template <typename... Columns>
void shift(TimeNs origin, Columns&... columns) {
  for (auto* column : {&columns...}) {
    for (TimeNs& t : *column) {
      // Saturating, as the analyses' sat_sub: a damaged capture's times must not overflow.
      if (t != kNoTime && __builtin_sub_overflow(t, origin, &t)) {
        t = origin < 0 ? std::numeric_limits<TimeNs>::max() : std::numeric_limits<TimeNs>::min();
      }
    }
  }
}

// The per-event checks every reader makes (model/trace.h, ReadWarnings), for the tables a capture
// fills: a row that ends before it starts, lasts longer than a week, or whose time lies more than a
// day before the first process started or more than a year after (a damaged file: times near 2^63)
// is dropped and counted, never summed into a report.
class UsableRows {
 public:
  UsableRows(ReadWarnings& w, std::optional<TimeNs> origin)
      : w_(w),
        earliest_(origin ? sat_add(*origin, -kDayNs) : kNoTime + 1),
        latest_(origin ? sat_add(*origin, kYearNs) : std::numeric_limits<TimeNs>::max()) {}

  template <typename Table>
  void intervals(Table& table) {
    std::vector<uint8_t> keep(table.size(), 1);
    bool any = false;
    for (size_t i = 0; i < table.size(); ++i) {
      const TimeNs start = table.start[i], end = table.end[i];
      if (!in_window(start) || (end != kNoTime && !in_window(end))) {
        ++w_.missing_times;
      } else if (end != kNoTime && end < start) {
        ++w_.negative_durations;
      } else if (TimeNs d = 0; end != kNoTime && (__builtin_sub_overflow(end, start, &d) || d > kWeekNs)) {
        ++w_.absurd_durations;
      } else {
        continue;
      }
      keep[i] = 0, any = true;
    }
    if (any) keep_rows(table, keep);
  }

  template <typename Table>
  void instants(Table& table, const std::vector<TimeNs>& time) {
    std::vector<uint8_t> keep(table.size(), 1);
    bool any = false;
    for (size_t i = 0; i < table.size(); ++i) {
      if (time[i] == kNoTime || in_window(time[i])) continue;
      ++w_.missing_times;
      keep[i] = 0, any = true;
    }
    if (any) keep_rows(table, keep);
  }

 private:
  static constexpr TimeNs kDayNs = 86'400'000'000'000, kWeekNs = 7 * kDayNs, kYearNs = 365 * kDayNs;
  static TimeNs sat_add(TimeNs a, TimeNs b) {
    TimeNs r = 0;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? std::numeric_limits<TimeNs>::max() : kNoTime + 1) : r;
  }
  bool in_window(TimeNs t) const { return t != kNoTime && t >= earliest_ && t <= latest_; }

  ReadWarnings& w_;
  TimeNs earliest_, latest_;
};

void drop_unusable_rows(Trace& t, std::optional<TimeNs> origin) {
  UsableRows rows(t.warnings, origin);
  rows.intervals(t.kernels), rows.intervals(t.memcpys), rows.intervals(t.memsets), rows.intervals(t.api);
  rows.intervals(t.ranges), rows.intervals(t.syncs), rows.intervals(t.graph_traces), rows.intervals(t.overhead);
  rows.intervals(t.os_calls);
  rows.instants(t.memory, t.memory.time), rows.instants(t.cpu_samples, t.cpu_samples.time);
  rows.instants(t.cuda_events, t.cuda_events.time);
}

// Every time relative to the session start, as nsys writes them.
void shift_times(Trace& t, TimeNs origin) {
  shift(origin, t.kernels.start, t.kernels.end, t.memcpys.start, t.memcpys.end, t.memsets.start, t.memsets.end,
        t.api.start, t.api.end, t.ranges.start, t.ranges.end, t.syncs.start, t.syncs.end, t.memory.time,
        t.overhead.start, t.overhead.end, t.cuda_events.time, t.graph_traces.start, t.graph_traces.end,
        t.os_calls.start, t.os_calls.end, t.cpu_samples.time);
}

// CUDA event records carry no host time: keep those whose cudaEventRecord call was captured (the
// delay, duration and capture range gate the calls).
void drop_uncaptured_events(Trace& t) {
  const CorrelationIndex calls(t.api);
  CudaEventTable& e = t.cuda_events;
  CudaEventTable kept;
  for (size_t i = 0; i < e.size(); ++i) {
    if (calls.find_in_process(e.correlation[i], e.global_pid[i]) == CorrelationIndex::kNoCall) continue;
    kept.time.push_back(e.time[i]), kept.global_pid.push_back(e.global_pid[i]),
        kept.correlation.push_back(e.correlation[i]);
    kept.event_id.push_back(e.event_id[i]), kept.sync_id.push_back(e.sync_id[i]), kept.device.push_back(e.device[i]);
    kept.context.push_back(e.context[i]), kept.stream.push_back(e.stream[i]);
  }
  e = std::move(kept);
}

std::vector<std::string> capture_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().extension() == ".tdcap") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

bool looks_like_capture(const std::string& path) {
  const auto head = read_file_head(path, 6);
  return head.ok() && head->size() == 6 && std::memcmp(head->data(), capture::kFileMagic, 6) == 0;
}

bool is_capture_directory(const std::string& path) { return !capture_files(path).empty(); }

Result<int64_t> symbolize_capture(const std::string& path) {
  std::error_code ec;
  const std::vector<std::string> files =
      fs::is_directory(path, ec) ? capture_files(path) : std::vector<std::string>{path};
  Symbolizer symbols;
  int64_t named = 0;
  for (const std::string& file : files) {
    Trace scratch;
    FileReader reader(scratch, file, symbols);
    int64_t start = 0;
    if (Status st = reader.read(&start, false); !st.ok()) return st;
    const std::string payload = reader.symbol_records(&named);
    if (payload.empty()) continue;
    if (scratch.warnings.torn_frames > 0) continue;  // a torn tail: a frame after it would not be read
    // A process that outlived the command (a daemon it started) may still write its file.
    if (reader.pid() > 0 && ::kill(static_cast<pid_t>(reader.pid()), 0) == 0) continue;
    std::ofstream out(file, std::ios::binary | std::ios::app);
    const std::string frame = capture::frame_of(payload);
    if (!out.write(frame.data(), static_cast<std::streamsize>(frame.size())))
      return IoError(fmt::format("{}: cannot append the symbols: {}", file, std::strerror(errno)));
  }
  return named;
}

Result<Trace> read_capture(const std::string& path) {
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  std::vector<std::string> files{path}, skipped;
  if (dir) {
    TRACEDOC_ASSIGN_OR_RETURN(TraceDirectory listed, list_trace_directory(path));
    if (listed.kind != TraceDirectory::Kind::kCapture)
      return BadInput(fmt::format("{}: no .tdcap files (not a tracedoc capture directory)", path));
    files = std::move(listed.files), skipped = std::move(listed.skipped);
  }
  Trace t;
  t.warnings.skipped_entries = std::move(skipped);
  t.source.path = path;
  t.source.format = "tracedoc-capture";
  t.source.product_version = "tracedoc capture 1";
  t.source.tables.insert("StringIds");
  int64_t origin = std::numeric_limits<int64_t>::max();
  Symbolizer symbols;
  for (const std::string& file : files) {
    int64_t start = 0;
    if (Status st = FileReader(t, file, symbols).read(&start); !st.ok()) return st;
    origin = std::min(origin, start);
  }
  // The OS calls' stacks are an optional column: kept only when --osrt-backtrace recorded some.
  if (std::all_of(t.os_calls.stack.begin(), t.os_calls.stack.end(), [](StackId s) { return s == kNoStack; })) {
    t.os_calls.stack.clear();
  } else {
    t.source.tables.insert("OSRT_CALLCHAINS");
  }
  // Without a process record (its frame torn) no time is out of place: only the durations are checked.
  const bool started = origin != std::numeric_limits<int64_t>::max();
  if (!started) origin = 0;
  drop_unusable_rows(t, started ? std::optional<TimeNs>(origin) : std::nullopt);
  // Whole seconds, as nsys's session start: times stay small and exact.
  origin -= origin % 1'000'000'000;
  t.source.session_start_utc_ns = origin;
  shift_times(t, origin);
  drop_uncaptured_events(t);
  sort_by_time(t);
  // Samples arrive per process in the order the recorder drained them, threads interleaved: in time
  // order, as nsys's COMPOSITE_EVENTS.
  permute_rows(t.cpu_samples, stable_time_order(t.cpu_samples.time));
  add_emit_nvtx_operators(t);
  return t;
}

}  // namespace tracedoc
