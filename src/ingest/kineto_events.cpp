#include "ingest/kineto_events.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_set>

#include "common/task_pool.h"
#include "ingest/json_cursor.h"
#include "model/kernel_names.h"
#include "model/step_names.h"
#include "model/table_sort.h"

namespace tracedoc::kineto {

namespace {

using json::is;

constexpr TimeNs kWeekNs = TimeNs{7} * 24 * 3600 * 1000000000;  // as HTA 0.6 (MAX_EVENT_DURATION_US)

bool eq(const Value& v, std::string_view s) { return v.present && v.text == s; }

int64_t int_or(const Value& v, int64_t fallback) {
  int64_t x = 0;
  return v.present && json::parse_int64(v.text, &x) ? x : fallback;
}

// "Memcpy HtoD (Pageable -> Device)" -> direction and memory kinds, numbered as nsys numbers them.
struct CopyDescription {
  uint8_t kind = static_cast<uint8_t>(CopyKind::kUnknown);
  uint8_t src = static_cast<uint8_t>(MemKind::kUnknown), dst = static_cast<uint8_t>(MemKind::kUnknown);
};

uint8_t mem_kind_from(std::string_view s) {
  static constexpr std::pair<std::string_view, MemKind> kKinds[] = {
      {"Pageable", MemKind::kPageable}, {"Pinned", MemKind::kPinned},   {"Device", MemKind::kDevice},
      {"Array", MemKind::kArray},       {"Managed", MemKind::kManaged},
  };
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  for (const auto& [label, kind] : kKinds)
    if (s == label) return static_cast<uint8_t>(kind);
  return static_cast<uint8_t>(MemKind::kUnknown);
}

CopyDescription describe_copy(std::string_view name) {
  static constexpr std::pair<std::string_view, CopyKind> kDirections[] = {
      {"HtoD", CopyKind::kHtoD}, {"DtoH", CopyKind::kDtoH}, {"HtoA", CopyKind::kHtoA}, {"AtoH", CopyKind::kAtoH},
      {"AtoA", CopyKind::kAtoA}, {"AtoD", CopyKind::kAtoD}, {"DtoA", CopyKind::kDtoA}, {"DtoD", CopyKind::kDtoD},
      {"HtoH", CopyKind::kHtoH}, {"PtoP", CopyKind::kPtoP},
  };
  CopyDescription d;
  for (const auto& [label, kind] : kDirections) {
    if (name.find(label) != std::string_view::npos) {
      d.kind = static_cast<uint8_t>(kind);
      break;
    }
  }
  const size_t open = name.find('('), arrow = name.find("->"), close = name.rfind(')');
  if (open != std::string_view::npos && arrow != std::string_view::npos && close != std::string_view::npos &&
      open < arrow && arrow < close) {
    d.src = mem_kind_from(name.substr(open + 1, arrow - open - 1));
    d.dst = mem_kind_from(name.substr(arrow + 2, close - arrow - 2));
  }
  return d;
}

int32_t sync_type_from(std::string_view name) {
  // ENUM_CUPTI_SYNC_TYPE: 1 event synchronize, 2 stream wait event, 3 stream synchronize, 4 context.
  if (name == "Event Sync") return 1;
  if (name == "Stream Wait Event") return 2;
  if (name == "Stream Sync") return 3;
  if (name == "Context Sync") return 4;
  return 0;
}

}  // namespace

int EraClues::era() const {
  if (bare_array) return 0;
  if (operator_category || launch_flows) return 1;
  if (capitalized_categories) return 2;  // PyTorch 1.10: lowercase cpu_op, capitalized GPU categories
  if (base_time) return 5;
  if (fractional_times) return 4;
  if (ac2g_flows || ev_idx) return 3;
  return 2;
}

StrId TraceBuilder::name_id(const Value& v) {
  if (!v.present) return t_.strings.intern("");
  return v.escaped ? t_.strings.intern(json::unescape(v.text)) : t_.strings.intern(v.text);
}

int64_t TraceBuilder::compact_id(int64_t raw) {
  if (raw < 0) raw = raw == INT64_MIN ? 0 : -raw;  // Kineto's sanitizeTid
  if (raw < 0xFFFE00) return raw;
  auto [it, inserted] = compacted_.try_emplace(raw, next_compact_);
  if (inserted) next_compact_--;
  return it->second;
}

int64_t TraceBuilder::map_pid(const Value& v) {
  int64_t x = 0;
  if (v.present && json::parse_int64(v.text, &x)) return compact_id(x);
  // "CPU functions", "Spans", "Traces", "": named pseudo-processes get ids of their own.
  std::string key(v.text);
  auto [it, inserted] = named_pids_.try_emplace(key, next_named_pid_);
  if (inserted) next_named_pid_++;
  return it->second;
}

int64_t TraceBuilder::map_tid(const Value& v) {
  int64_t x = 0;
  if (v.present && json::parse_int64(v.text, &x)) return compact_id(x);
  return v.present ? map_pid(v) : 0;
}

int64_t TraceBuilder::cpu_global_tid(const RawEvent& e) {
  const int64_t pid = map_pid(e.pid);
  if (first_cpu_pid_ < 0) first_cpu_pid_ = pid;
  return make_global_tid(0, pid, map_tid(e.tid));
}

int32_t TraceBuilder::gpu_device(const RawEvent& e) const {
  int64_t d = int_or(e.device, kNoValue);
  if (d == kNoValue) d = int_or(e.pid, 0);
  return static_cast<int32_t>(d);
}

int32_t TraceBuilder::gpu_stream(const RawEvent& e) const {
  int64_t s = int_or(e.stream, kNoValue);
  if (s != kNoValue) return static_cast<int32_t>(s);
  std::string_view tid = e.tid.text;  // 2021: "stream 7"
  if (tid.starts_with("stream ")) tid.remove_prefix(7);
  while (!tid.empty() && tid.back() == ' ') tid.remove_suffix(1);
  int64_t x = 0;
  return json::parse_int64(tid, &x) ? static_cast<int32_t>(x) : 0;
}

bool TraceBuilder::times(const RawEvent& e, TimeNs* start, TimeNs* end) {
  auto& w = t_.warnings;
  if (!e.ts.present || !json::parse_micros_as_ns(e.ts.text, start)) {
    w.missing_times++;
    return false;
  }
  if (e.ts.text.find('.') != std::string_view::npos) clues_.fractional_times = true;
  TimeNs dur = 0;
  if (e.dur.present && !json::parse_micros_as_ns(e.dur.text, &dur)) {
    // NaN and Infinity (as Python's json writes them) are no duration: the event is dropped and
    // counted; a number too large for int64 ns is an absurd duration; anything else (null, N/A)
    // reads as 0.
    std::string_view word = e.dur.text;
    if (!word.empty() && (word.front() == '-' || word.front() == '+')) word.remove_prefix(1);
    if (word == "NaN" || word == "Infinity" || word == "nan" || word == "inf") {
      w.unusable_durations++;
      return false;
    }
    const char first = e.dur.text.empty() ? ' ' : e.dur.text.front();
    if ((first >= '0' && first <= '9') || first == '-' || first == '+') {
      w.absurd_durations++;
      return false;
    }
    dur = 0;
  }
  if (dur < 0) {
    w.negative_durations++;
    dur = 0;
  }
  if (dur > kWeekNs || *start > INT64_MAX - dur) {  // (the second: an end past int64)
    w.absurd_durations++;
    return false;
  }
  *end = *start + dur;
  return true;
}

namespace {

enum class Category {
  kNone,
  kOther,
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,
  kDriver,
  kCpuOp,
  kUserAnnotation,
  kGpuUserAnnotation,
  kCudaSync,
  kPythonFunction,
  kOperator2021,
  kFlow,
  kForwardBackwardFlow,
};

// One look at the category string (sizes first: most events are decided without a full compare).
Category classify(const Value& cat, bool* capitalized) {
  if (!cat.present) return Category::kNone;
  const std::string_view c = cat.text;
  *capitalized = false;
  switch (c.size()) {
    case 4:
      if (is(c, "ac2g")) return Category::kFlow;
      break;
    case 6:
      if (is(c, "kernel")) return Category::kKernel;
      if (is(c, "Kernel")) {
        *capitalized = true;
        return Category::kKernel;
      }
      if (is(c, "Memcpy")) {
        *capitalized = true;
        return Category::kMemcpy;
      }
      if (is(c, "Memset")) {
        *capitalized = true;
        return Category::kMemset;
      }
      if (is(c, "cpu_op")) return Category::kCpuOp;
      if (is(c, "fwdbwd")) return Category::kForwardBackwardFlow;
      break;
    case 7:
      if (is(c, "Runtime")) {
        *capitalized = true;
        return Category::kRuntime;
      }
      if (is(c, "fwd_bwd")) return Category::kForwardBackwardFlow;
      break;
    case 8:
      if (is(c, "Operator")) {
        *capitalized = true;
        return Category::kOperator2021;
      }
      break;
    case 9:
      if (is(c, "cuda_sync")) return Category::kCudaSync;
      break;
    case 10:
      if (is(c, "gpu_memcpy")) return Category::kMemcpy;
      if (is(c, "gpu_memset")) return Category::kMemset;
      break;
    case 11:
      if (is(c, "cuda_driver")) return Category::kDriver;
      break;
    case 12:
      if (is(c, "cuda_runtime")) return Category::kRuntime;
      break;
    case 15:
      if (is(c, "python_function")) return Category::kPythonFunction;
      if (is(c, "user_annotation")) return Category::kUserAnnotation;
      break;
    case 16:
      if (is(c, "forward_backward")) return Category::kForwardBackwardFlow;
      break;
    case 19:
      if (is(c, "gpu_user_annotation")) return Category::kGpuUserAnnotation;
      break;
    default: break;
  }
  return Category::kOther;
}

}  // namespace

void TraceBuilder::add_event(const RawEvent& e) {
  t_.pytorch.event_count++;
  if (e.has_ev_idx) clues_.ev_idx = true;
  bool capitalized = false;
  const Category category = classify(e.cat, &capitalized);
  if (category == Category::kPythonFunction) {
    t_.pytorch.python_function_count++;
    if (options_.python_functions) add_python_function(e);
    return;
  }
  const std::string_view ph = e.ph.text;
  if (ph.size() != 1) {
    t_.warnings.unknown_events++;
    return;
  }
  switch (ph[0]) {
    case 'X': {
      if (capitalized) clues_.capitalized_categories = true;
      if (category == Category::kOperator2021) clues_.operator_category = true;
      TimeNs start = 0, end = 0;
      if (!times(e, &start, &end)) return;
      switch (category) {
        case Category::kKernel: return add_kernel(e, start, end);
        case Category::kMemcpy: return add_memcpy(e, start, end);
        case Category::kMemset: return add_memset(e, start, end);
        case Category::kRuntime: return add_api(e, start, end, false);
        case Category::kDriver: return add_api(e, start, end, true);
        case Category::kCpuOp: return add_op(e, start, end);
        case Category::kUserAnnotation: return add_range(e, start, end);
        case Category::kGpuUserAnnotation: return add_gpu_annotation(e, start, end);
        case Category::kCudaSync: return add_sync(e, start, end);
        case Category::kOperator2021:
        case Category::kNone:
          // 2021 and legacy traces label record_function ranges and operators alike. The ranges
          // are the names with a '#': ProfilerStep#5, Optimizer.step#SGD.step,
          // enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__, ## backward ##.
          if (e.name.text.find('#') != std::string_view::npos) return add_range(e, start, end);
          return add_op(e, start, end);
        default: return;  // Trace spans, overhead, cuda_profiler_range, ...: not modelled
      }
    }
    case 'i':
    case 'I':
      if (eq(e.name, "[memory]")) add_memory(e);
      return;
    case 's':
    case 'f':
    case 't':
      t_.pytorch.flow_count++;
      if (category == Category::kFlow || is(e.cat.text, "fwdbwd")) clues_.ac2g_flows = true;  // 2022-10 names
      if (is(e.cat.text, "async") && is(e.name.text, "launch")) clues_.launch_flows = true;
      if (category == Category::kForwardBackwardFlow) add_forward_backward_flow(e);
      return;
    case 'M': return add_metadata(e);
    default: t_.warnings.unknown_events++;
  }
}

void TraceBuilder::add_kernel(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& k = t_.kernels;
  k.start.push_back(start);
  k.end.push_back(end);
  k.global_pid.push_back(kNoValue);
  k.correlation.push_back(int_or(e.correlation, kNoValue));
  k.device.push_back(gpu_device(e));
  k.context.push_back(static_cast<int32_t>(int_or(e.context, 0)));
  k.green_context.push_back(kNoGreen);
  k.stream.push_back(gpu_stream(e));
  const StrId name = name_id(e.name);
  k.name.push_back(name);
  k.mangled_name.push_back(name);
  const std::string short_name(short_kernel_name(t_.strings.get(name)));
  k.short_name.push_back(short_name.empty() ? name : t_.strings.intern(short_name));
  k.grid_x.push_back(static_cast<int32_t>(e.grid[0]));
  k.grid_y.push_back(static_cast<int32_t>(e.grid[1]));
  k.grid_z.push_back(static_cast<int32_t>(e.grid[2]));
  k.block_x.push_back(static_cast<int32_t>(e.block[0]));
  k.block_y.push_back(static_cast<int32_t>(e.block[1]));
  k.block_z.push_back(static_cast<int32_t>(e.block[2]));
  k.registers_per_thread.push_back(static_cast<int32_t>(int_or(e.registers, 0)));
  // Kineto prints one "shared memory" figure: static plus dynamic.
  k.static_smem.push_back(static_cast<int32_t>(int_or(e.shared_memory, 0)));
  k.dynamic_smem.push_back(0);
  k.graph_node_id.push_back(int_or(e.graph_node_id, kNoValue));
  // The TensorBoard plugin's Est. Achieved Occupancy averages this; NaN where absent.
  double occupancy = 0;
  const bool has_occupancy = e.occupancy.present && json::parse_double(e.occupancy.text, &occupancy);
  k.est_occupancy.push_back(has_occupancy ? occupancy : std::numeric_limits<double>::quiet_NaN());
  if (e.collective.present) {
    auto& c = t_.pytorch.collectives;
    c.kernel.push_back(static_cast<uint32_t>(k.size() - 1));
    c.collective.push_back(name_id(e.collective));
    c.dtype.push_back(e.dtype.present ? name_id(e.dtype) : kNoStr);
    c.group_name.push_back(e.group_name.present ? name_id(e.group_name) : kNoStr);
    c.in_nelems.push_back(int_or(e.in_nelems, kNoValue));
    c.out_nelems.push_back(int_or(e.out_nelems, kNoValue));
    c.group_size.push_back(int_or(e.group_size, kNoValue));
  }
}

void TraceBuilder::add_memcpy(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& m = t_.memcpys;
  const CopyDescription d = describe_copy(e.name.text);
  m.start.push_back(start);
  m.end.push_back(end);
  m.global_pid.push_back(kNoValue);
  m.correlation.push_back(int_or(e.correlation, kNoValue));
  m.bytes.push_back(int_or(e.bytes, 0));
  m.device.push_back(gpu_device(e));
  m.context.push_back(static_cast<int32_t>(int_or(e.context, 0)));
  m.green_context.push_back(kNoGreen);
  m.stream.push_back(gpu_stream(e));
  // Kineto's copy records carry no source / destination device; CUPTI (and so nsys) fills them only
  // for peer-to-peer copies. Left unknown, as nsys leaves them (NULL): cuda_memcpy_sync skips copies
  // whose source and destination device are the same, so "device" here would hide every copy.
  m.src_device.push_back(kNoGreen);
  m.dst_device.push_back(kNoGreen);
  m.copy_kind.push_back(d.kind);
  m.src_kind.push_back(d.src);
  m.dst_kind.push_back(d.dst);
}

void TraceBuilder::add_memset(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& m = t_.memsets;
  const std::string_view name = e.name.text;  // "Memset (Device)": the memory kind in parentheses
  const size_t open = name.find('('), close = name.rfind(')');
  m.start.push_back(start);
  m.end.push_back(end);
  m.global_pid.push_back(kNoValue);
  m.correlation.push_back(int_or(e.correlation, kNoValue));
  m.bytes.push_back(int_or(e.bytes, 0));
  m.value.push_back(0);
  m.device.push_back(gpu_device(e));
  m.context.push_back(static_cast<int32_t>(int_or(e.context, 0)));
  m.green_context.push_back(kNoGreen);
  m.stream.push_back(gpu_stream(e));
  m.mem_kind.push_back(open != std::string_view::npos && close != std::string_view::npos && open < close
                           ? mem_kind_from(name.substr(open + 1, close - open - 1))
                           : static_cast<uint8_t>(MemKind::kUnknown));
}

void TraceBuilder::add_api(const RawEvent& e, TimeNs start, TimeNs end, bool driver) {
  auto& a = t_.api;
  a.start.push_back(start);
  a.end.push_back(end);
  a.global_tid.push_back(cpu_global_tid(e));
  a.correlation.push_back(int_or(e.correlation, kNoValue));
  a.return_value.push_back(0);
  a.name.push_back(name_id(e.name));
  a.api_class.push_back(static_cast<uint8_t>(driver ? ApiClass::kCudaDriver : ApiClass::kCudaRuntime));
}

void TraceBuilder::add_op(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& o = t_.pytorch.ops;
  o.start.push_back(start);
  o.end.push_back(end);
  o.global_tid.push_back(cpu_global_tid(e));
  o.name.push_back(name_id(e.name));
  o.external_id.push_back(int_or(e.external_id, kNoValue));
  o.sequence_number.push_back(int_or(e.sequence_number, kNoValue));
  o.fwd_thread_id.push_back(int_or(e.fwd_thread_id, kNoValue));
  const auto compact = [&](const Value& v) {
    if (!v.present) return kNoStr;
    const StrId written = written_lists_.intern(v.text);
    if (written == compacted_lists_.size())
      compacted_lists_.push_back(t_.strings.intern(json::compact(v.text, scratch_)));
    return compacted_lists_[written];
  };
  o.input_dims.push_back(compact(e.input_dims));
  o.input_types.push_back(compact(e.input_types));
  o.concrete_inputs.push_back(compact(e.concrete_inputs));
  o.flops.push_back(int_or(e.flops, kNoValue));
}

void TraceBuilder::add_range(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& r = t_.ranges;
  r.start.push_back(start);
  r.end.push_back(end);
  r.global_tid.push_back(cpu_global_tid(e));
  r.end_global_tid.push_back(kNoValue);
  r.kind.push_back(static_cast<uint16_t>(RangeKind::kNvtxPushPop));  // record_function is a scope
  r.text.push_back(name_id(e.name));
  r.domain_id.push_back(kNoValue);
  r.range_id.push_back(kNoValue);
  r.row_id.push_back(static_cast<int64_t>(r.row_id.size()) + 1);
}

void TraceBuilder::add_gpu_annotation(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& g = t_.pytorch.gpu_annotations;
  g.start.push_back(start);
  g.end.push_back(end);
  g.device.push_back(gpu_device(e));
  g.stream.push_back(gpu_stream(e));
  g.name.push_back(name_id(e.name));
  g.external_id.push_back(int_or(e.external_id, kNoValue));
}

void TraceBuilder::add_sync(const RawEvent& e, TimeNs start, TimeNs end) {
  auto& s = t_.syncs;
  s.start.push_back(start);
  s.end.push_back(end);
  s.global_pid.push_back(kNoValue);
  s.correlation.push_back(int_or(e.correlation, kNoValue));
  s.event_id.push_back(kNoValue);
  s.device.push_back(gpu_device(e));
  s.context.push_back(static_cast<int32_t>(int_or(e.context, 0)));
  s.stream.push_back(gpu_stream(e));
  s.sync_type.push_back(sync_type_from(e.name.text));
}

void TraceBuilder::add_memory(const RawEvent& e) {
  TimeNs time = 0;
  if (!e.ts.present || !json::parse_micros_as_ns(e.ts.text, &time)) {
    t_.warnings.missing_times++;
    return;
  }
  auto& m = t_.pytorch.allocator;
  m.time.push_back(time);
  m.global_tid.push_back(cpu_global_tid(e));
  m.address.push_back(int_or(e.addr, kNoValue));
  m.bytes.push_back(int_or(e.bytes, kNoValue));
  m.total_allocated.push_back(int_or(e.total_allocated, kNoValue));
  m.total_reserved.push_back(int_or(e.total_reserved, kNoValue));
  m.device_type.push_back(static_cast<int32_t>(int_or(e.device_type, -1)));
  m.device_id.push_back(static_cast<int32_t>(int_or(e.device_id, -1)));
}

void TraceBuilder::add_forward_backward_flow(const RawEvent& e) {
  TimeNs time = 0;
  int64_t id = 0;
  if (!e.ts.present || !json::parse_micros_as_ns(e.ts.text, &time) || !json::parse_int64(e.id.text, &id)) return;
  auto& f = t_.pytorch.forward_backward;
  f.id.push_back(id);
  f.time.push_back(time);
  f.global_tid.push_back(cpu_global_tid(e));
  f.phase.push_back(e.ph.text[0] == 's' ? 's' : 'f');
}

void TraceBuilder::add_python_function(const RawEvent& e) {
  // Complete events only: the Python tracer writes nothing else, and a call without a span has no time.
  if (e.ph.text != "X") return;
  TimeNs start = 0, end = 0;
  if (!times(e, &start, &end)) return;
  auto& p = t_.pytorch.python_functions;
  p.start.push_back(start);
  p.end.push_back(end);
  // (presence, length, text) of pid and tid: distinct pairs give distinct keys, whatever the bytes.
  std::string key;
  key.reserve(e.pid.text.size() + e.tid.text.size() + 16);
  key.append(1, e.pid.present ? '1' : '0').append(std::to_string(e.pid.text.size())).append(1, ':').append(e.pid.text);
  key.append(1, e.tid.present ? '1' : '0').append(e.tid.text);
  auto [it, inserted] = python_thread_ids_.try_emplace(std::move(key), static_cast<uint32_t>(python_threads_.size()));
  if (inserted) {
    python_threads_.push_back({std::string(e.pid.text), std::string(e.tid.text), e.pid.present, e.tid.present});
  }
  p.global_tid.push_back(it->second);  // a thread number until finish()
  p.name.push_back(name_id(e.name));
  p.python_id.push_back(int_or(e.python_id, kNoValue));
  p.parent_id.push_back(int_or(e.python_parent_id, kNoValue));  // null reads as absent
}

void TraceBuilder::add_metadata(const RawEvent& e) {
  if (!e.arg_name.present) return;
  if (eq(e.name, "process_name")) {
    process_names_[make_global_tid(0, map_pid(e.pid), 0)] = name_id(e.arg_name);
  } else if (eq(e.name, "thread_name")) {
    thread_names_[make_global_tid(0, map_pid(e.pid), map_tid(e.tid))] = name_id(e.arg_name);
  }
}

void TraceBuilder::add_device(int64_t id, std::string_view name, int64_t sm_count, int64_t total_memory,
                              int64_t cc_major, int64_t cc_minor) {
  DeviceInfo d;
  d.id = static_cast<int32_t>(id);
  d.name = t_.strings.intern(name);
  d.sm_count = static_cast<int32_t>(sm_count);
  d.total_memory = total_memory;
  d.compute_major = static_cast<int32_t>(cc_major);
  d.compute_minor = static_cast<int32_t>(cc_minor);
  t_.devices.push_back(d);
}

void find_steps(Trace& t_) {
  auto& py = t_.pytorch;
  py.steps.clear();
  for (uint32_t i = 0; i < t_.ranges.size(); ++i) {
    if (is_profiler_step(t_.strings.get(t_.ranges.text[i]))) py.steps.push_back(i);
  }
}

void TraceBuilder::finish() {
  auto& py = t_.pytorch;
  py.era = clues_.era();
  if (!python_threads_.empty()) {
    std::vector<int64_t> global_tid(python_threads_.size());
    for (size_t i = 0; i < python_threads_.size(); ++i) {
      const PendingThread& th = python_threads_[i];
      Value pid, tid;
      pid.text = th.pid, pid.present = th.has_pid;
      tid.text = th.tid, tid.present = th.has_tid;
      global_tid[i] = make_global_tid(0, map_pid(pid), map_tid(tid));
    }
    for (int64_t& g : py.python_functions.global_tid) g = global_tid[static_cast<size_t>(g)];
  }
  sort_by_time(t_);

  // GPU activity belongs to the process whose runtime call launched it (nsys joins on it).
  std::unordered_map<int64_t, int64_t> launcher;
  launcher.reserve(t_.api.size());
  for (size_t i = 0; i < t_.api.size(); ++i) {
    if (t_.api.correlation[i] != kNoValue) launcher.emplace(t_.api.correlation[i], global_pid_of(t_.api.global_tid[i]));
  }
  const int64_t fallback_pid = make_global_tid(0, first_cpu_pid_ < 0 ? 0 : first_cpu_pid_, 0);
  auto assign = [&](const std::vector<int64_t>& correlation, std::vector<int64_t>& global_pid) {
    for (size_t i = 0; i < correlation.size(); ++i) {
      auto it = launcher.find(correlation[i]);
      global_pid[i] = it == launcher.end() ? fallback_pid : it->second;
    }
  };
  assign(t_.kernels.correlation, t_.kernels.global_pid);
  assign(t_.memcpys.correlation, t_.memcpys.global_pid);
  assign(t_.memsets.correlation, t_.memsets.global_pid);
  assign(t_.syncs.correlation, t_.syncs.global_pid);

  find_steps(t_);

  // Threads and processes that did something on the CPU.
  std::unordered_set<int64_t> tids, pids;
  for (auto* col : {&t_.api.global_tid, &py.ops.global_tid, &t_.ranges.global_tid, &py.allocator.global_tid}) {
    for (int64_t g : *col) tids.insert(g);
  }
  std::vector<int64_t> sorted_tids(tids.begin(), tids.end());
  std::sort(sorted_tids.begin(), sorted_tids.end());
  for (int64_t g : sorted_tids) {
    ThreadInfo th;
    th.global_tid = g;
    if (auto it = thread_names_.find(g); it != thread_names_.end()) th.name = it->second;
    t_.threads.push_back(th);
    if (pids.insert(global_pid_of(g)).second) {
      ProcessInfo p;
      p.global_pid = global_pid_of(g);
      p.pid = pid_of(g);
      if (auto it = process_names_.find(p.global_pid); it != process_names_.end()) p.name = it->second;
      t_.processes.push_back(p);
    }
  }

  // What the nsys reports look for before they run ("does not contain CUDA kernel data").
  auto& tables = t_.source.tables;
  tables.insert("StringIds");
  if (t_.kernels.size()) tables.insert("CUPTI_ACTIVITY_KIND_KERNEL");
  if (t_.memcpys.size()) tables.insert("CUPTI_ACTIVITY_KIND_MEMCPY");
  if (t_.memsets.size()) tables.insert("CUPTI_ACTIVITY_KIND_MEMSET");
  if (t_.api.size()) tables.insert("CUPTI_ACTIVITY_KIND_RUNTIME");
  if (t_.syncs.size()) tables.insert("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION");
  if (t_.ranges.size()) tables.insert("NVTX_EVENTS");
}

}  // namespace tracedoc::kineto
