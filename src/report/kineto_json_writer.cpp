#include "report/kineto_json_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/checked_math.h"
#include "model/emit_nvtx_names.h"
#include "report/output_file.h"

namespace tracedoc {

namespace {

constexpr std::string_view kCopyKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
// Kineto's memoryKindString; the reader maps the labels back (others read as unknown).
constexpr std::string_view kMemKinds[] = {"Pageable", "Pinned",        "Device",         "Array",
                                          "Managed",  "Device Static", "Managed Static", "Unknown"};

std::string_view copy_kind_name(uint8_t k) { return k < std::size(kCopyKinds) ? kCopyKinds[k] : "Unknown"; }
std::string_view mem_kind_name(uint8_t k) { return k < std::size(kMemKinds) ? kMemKinds[k] : "Unknown"; }

std::string_view sync_name(int32_t type) {
  // ENUM_CUPTI_SYNC_TYPE, in Kineto's words.
  switch (type) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

// The document, appended piece by piece; flushed to the file every few MB when there is one.
class Out {
 public:
  explicit Out(FILE* file) : file_(file) { buf_.reserve(1 << 20); }
  Out& raw(std::string_view s) {
    buf_.append(s);
    if (file_ && buf_.size() > (4u << 20)) flush();
    return *this;
  }
  Out& num(int64_t v) { return raw(fmt::format("{}", v)); }
  Out& str(std::string_view s) {
    buf_.push_back('"');
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(c);
      } else if (u < 0x20) {
        buf_.append(fmt::format("\\u{:04x}", u));
      } else {
        buf_.push_back(c);
      }
    }
    buf_.push_back('"');
    return *this;
  }
  // `{`: the next key() is the object's first.
  Out& obj() {
    fresh_ = true;
    return raw("{");
  }
  // `"key": ` (after a comma unless it opens the object), then the value.
  Out& key(std::string_view k) {
    if (!fresh_) raw(", ");
    return first_key(k);
  }
  Out& first_key(std::string_view k) {
    fresh_ = false;
    return str(k).raw(": ");
  }
  void flush() {
    if (file_ && !buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), file_);
    buf_.clear();
  }
  std::string take() { return std::move(buf_); }

 private:
  FILE* file_;
  std::string buf_;
  bool fresh_ = false;
};

// Writes the events of one trace; the comma between events is handled here.
class Writer {
 public:
  Writer(const Trace& t, Out& out, const std::vector<diagnose::Finding>& findings)
      : t_(t), o_(out), findings_(findings) {}
  void write();

 private:
  // Opens `{"ph": .., "cat": .., "name": .., "pid": .., "tid": .., "ts": ..[, "dur": ..]`.
  void open(std::string_view ph, std::string_view cat, std::string_view name, int64_t pid, int64_t tid, TimeNs ts,
            TimeNs end = kNoTime) {
    o_.raw(first_ ? "\n  {" : ",\n  {");
    first_ = false;
    o_.first_key("ph").str(ph);
    if (!cat.empty()) o_.key("cat").str(cat);
    o_.key("name").str(name).key("pid").num(pid).key("tid").num(tid).key("ts").raw(kineto_time(ts));
    if (end != kNoTime) o_.key("dur").raw(kineto_time(std::max<int64_t>(0, sat_sub(end, ts))));
  }
  void header();
  void metadata();
  void external_ids();
  void ops();
  void ranges();
  void api();
  void kernels();
  void copies();
  void syncs_and_annotations();
  void memory();
  void flows();
  void python_functions();
  void findings();
  TimeNs first_time() const;
  int64_t external_of(int64_t correlation) const {
    auto it = launch_external_.find(correlation);
    return it == launch_external_.end() ? kNoValue : it->second;
  }
  Out& maybe(std::string_view k, int64_t v) { return v == kNoValue ? o_ : o_.key(k).num(v); }
  const DeviceInfo* device(int32_t id) const {
    for (const auto& d : t_.devices)
      if (d.id == id) return &d;
    return nullptr;
  }

  const Trace& t_;
  Out& o_;
  const std::vector<diagnose::Finding>& findings_;
  bool first_ = true;
  std::vector<int64_t> api_external_;                     // per API call: its op's External id
  std::unordered_map<int64_t, int64_t> launch_external_;  // correlation -> External id
};

void Writer::header() {
  o_.raw("{\n  ").first_key("schemaVersion").raw("1,\n  ").first_key("deviceProperties").raw("[");
  // Only what the trace knows about each device; Kineto's other fields (maxThreadsPerBlock, ...)
  // would have to be invented.
  for (size_t i = 0; i < t_.devices.size(); ++i) {
    const DeviceInfo& d = t_.devices[i];
    o_.raw(i ? ",\n    {" : "\n    {").first_key("id").num(d.id).key("name").str(t_.str(d.name));
    o_.key("totalGlobalMem").num(d.total_memory).key("computeMajor").num(d.compute_major);
    o_.key("computeMinor").num(d.compute_minor).key("numSms").num(d.sm_count).raw("}");
  }
  o_.raw(t_.devices.empty() ? "],\n" : "\n  ],\n");
  const PyTorchInfo& py = t_.pytorch;
  if (py.rank >= 0) {
    // "rank": N with a space: HTA finds a file's rank with the regex "rank":\s+(\d+).
    o_.raw("  ")
        .first_key("distributedInfo")
        .raw("{")
        .first_key("backend")
        .str(py.backend.empty() ? "nccl" : py.backend);
    o_.key("rank").num(py.rank);
    if (py.world_size >= 0) o_.key("world_size").num(py.world_size);
    o_.raw("},\n");
  }
  o_.raw("  ").first_key("displayTimeUnit").str("ms").raw(",\n  ");
  o_.first_key("baseTimeNanoseconds").num(py.base_time_ns).raw(",\n  ").first_key("traceEvents").raw("[");
}

// Kineto gives a launch (and its GPU work) the External id of the operator it ran in: the innermost
// cpu_op of the same thread whose span holds the call.
void Writer::external_ids() {
  const OpTable& ops = t_.pytorch.ops;
  const ApiTable& api = t_.api;
  api_external_.assign(api.size(), kNoValue);
  struct Item {
    TimeNs start, end;
    int64_t tid;
    uint32_t row;
    bool is_op;
  };
  std::vector<Item> items;
  items.reserve(ops.size() + api.size());
  for (uint32_t i = 0; i < ops.size(); ++i) items.push_back({ops.start[i], ops.end[i], ops.global_tid[i], i, true});
  for (uint32_t i = 0; i < api.size(); ++i) items.push_back({api.start[i], api.end[i], api.global_tid[i], i, false});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start != b.start) return a.start < b.start;
    if (a.is_op != b.is_op) return a.is_op;  // an op opening with the call holds it
    return a.end > b.end;
  });
  std::vector<const Item*> open;
  for (const Item& it : items) {
    if (!open.empty() && open.back()->tid != it.tid) open.clear();
    while (!open.empty() && open.back()->end < it.start) open.pop_back();
    if (it.is_op) {
      open.push_back(&it);
      continue;
    }
    for (auto o = open.rbegin(); o != open.rend(); ++o) {
      if ((*o)->end >= it.end) {
        api_external_[it.row] = ops.external_id[(*o)->row];
        break;
      }
    }
    if (api.correlation[it.row] != kNoValue) launch_external_.emplace(api.correlation[it.row], api_external_[it.row]);
  }
}

void Writer::ops() {
  const OpTable& o = t_.pytorch.ops;
  for (size_t i = 0; i < o.size(); ++i) {
    if (o.start[i] == kNoTime) continue;
    open("X", "cpu_op", t_.str(o.name[i]), pid_of(o.global_tid[i]), tid_of(o.global_tid[i]), o.start[i], o.end[i]);
    o_.key("args").obj();
    maybe("External id", o.external_id[i]);
    maybe("Sequence number", o.sequence_number[i]);
    maybe("Fwd thread id", o.fwd_thread_id[i]);
    // Already compact JSON text.
    if (o.input_dims[i] != kNoStr) o_.key("Input Dims").raw(t_.str(o.input_dims[i]));
    if (o.input_types[i] != kNoStr) o_.key("Input type").raw(t_.str(o.input_types[i]));
    if (o.concrete_inputs[i] != kNoStr) o_.key("Concrete Inputs").raw(t_.str(o.concrete_inputs[i]));
    maybe("flops", o.flops[i]);
    o_.raw("}}");
  }
}

void Writer::ranges() {
  const RangeTable& r = t_.ranges;
  const bool ops_are_ranges = operators_are_ranges(t_);  // emit_nvtx's operators: written as cpu_op above
  for (size_t i = 0; i < r.size(); ++i) {
    if (r.start[i] == kNoTime) continue;
    if (ops_are_ranges && range_is_operator(t_, i)) continue;
    // A range never closed (nsys) has no Kineto form; it is written as an instant range.
    const TimeNs end = r.end[i] == kNoTime ? r.start[i] : r.end[i];
    open("X", "user_annotation", t_.str(r.text[i]), pid_of(r.global_tid[i]), tid_of(r.global_tid[i]), r.start[i], end);
    o_.raw("}");
  }
}

// The order to write the calls in. nsys-style summaries (cuda_api_sum) break ties between equal
// totals by name id, i.e. by the order in which names were first seen. The reader sorts each
// table stably by start time, so the file may hold the calls in any order that keeps calls with
// equal starts in table order: each name's first call is written first, in name-id order, unless
// an earlier call starts at the same time; the rest follow in table order.
std::vector<uint32_t> api_write_order(const ApiTable& a) {
  std::unordered_map<StrId, uint32_t> first_row;
  std::unordered_set<TimeNs> seen_start;
  std::vector<uint8_t> start_taken_before(a.size(), 0);
  for (uint32_t i = 0; i < a.size(); ++i) {
    first_row.emplace(a.name[i], i);
    if (!seen_start.insert(a.start[i]).second) start_taken_before[i] = 1;
  }
  std::vector<std::pair<StrId, uint32_t>> lead;
  for (const auto& [name, row] : first_row)
    if (!start_taken_before[row]) lead.emplace_back(name, row);
  std::sort(lead.begin(), lead.end());
  std::vector<uint32_t> order;
  order.reserve(a.size());
  std::vector<uint8_t> written(a.size(), 0);
  for (const auto& [name, row] : lead) {
    order.push_back(row);
    written[row] = 1;
  }
  for (uint32_t i = 0; i < a.size(); ++i)
    if (!written[i]) order.push_back(i);
  return order;
}

void Writer::api() {
  const ApiTable& a = t_.api;
  for (const uint32_t i : api_write_order(a)) {
    if (a.start[i] == kNoTime) continue;
    const bool driver = a.api_class[i] == static_cast<uint8_t>(ApiClass::kCudaDriver);
    open("X", driver ? "cuda_driver" : "cuda_runtime", t_.str(a.name[i]), pid_of(a.global_tid[i]),
         tid_of(a.global_tid[i]), a.start[i], a.end[i]);
    o_.key("args").obj();
    maybe("External id", api_external_[i]);
    maybe("correlation", a.correlation[i]);
    o_.raw("}}");
  }
}

void Writer::kernels() {
  const KernelTable& k = t_.kernels;
  const CollectiveTable& c = t_.pytorch.collectives;
  std::vector<int32_t> collective(k.size(), -1);
  for (size_t i = 0; i < c.size(); ++i)
    if (c.kernel[i] < k.size()) collective[c.kernel[i]] = static_cast<int32_t>(i);
  for (size_t i = 0; i < k.size(); ++i) {
    if (k.start[i] == kNoTime) continue;
    open("X", "kernel", t_.str(k.name[i]), k.device[i], k.stream[i], k.start[i], k.end[i]);
    o_.key("args").obj();
    maybe("External id", external_of(k.correlation[i]));
    o_.key("queued")
        .num(0)
        .key("device")
        .num(k.device[i])
        .key("context")
        .num(k.context[i])
        .key("stream")
        .num(k.stream[i]);
    maybe("correlation", k.correlation[i]);
    o_.key("registers per thread").num(k.registers_per_thread[i]);
    // Kineto prints one figure: static plus dynamic shared memory.
    o_.key("shared memory").num(int64_t{k.static_smem[i]} + k.dynamic_smem[i]);
    const int64_t blocks = int64_t{k.grid_x[i]} * k.grid_y[i] * k.grid_z[i];
    const int64_t threads = int64_t{k.block_x[i]} * k.block_y[i] * k.block_z[i];
    if (const DeviceInfo* d = device(k.device[i]); d && d->sm_count > 0) {
      const double per_sm = static_cast<double>(blocks) / d->sm_count;
      o_.key("blocks per SM").raw(fmt::format("{:.6f}", per_sm));
      o_.key("warps per SM").raw(fmt::format("{:.6f}", per_sm * static_cast<double>(threads) / 32.0));
    }
    o_.key("grid").raw(fmt::format("[{}, {}, {}]", k.grid_x[i], k.grid_y[i], k.grid_z[i]));
    o_.key("block").raw(fmt::format("[{}, {}, {}]", k.block_x[i], k.block_y[i], k.block_z[i]));
    if (i < k.est_occupancy.size() && std::isfinite(k.est_occupancy[i])) {
      o_.key("est. achieved occupancy %").raw(fmt::format("{}", k.est_occupancy[i]));  // shortest exact form
    }
    maybe("graph node id", k.graph_node_id[i]);
    if (const int32_t ci = collective[i]; ci >= 0) {
      o_.key("Collective name").str(t_.str(c.collective[ci]));
      maybe("In msg nelems", c.in_nelems[ci]);
      maybe("Out msg nelems", c.out_nelems[ci]);
      maybe("Group size", c.group_size[ci]);
      if (c.dtype[ci] != kNoStr) o_.key("dtype").str(t_.str(c.dtype[ci]));
      if (c.group_name[ci] != kNoStr) o_.key("Process Group Name").str(t_.str(c.group_name[ci]));
    }
    o_.raw("}}");
  }
}

void Writer::copies() {
  // The args Kineto writes on copies and memsets alike: ids, placement, size, achieved bandwidth.
  const auto args = [&](int64_t correlation, int32_t device, int32_t context, int32_t stream, int64_t bytes,
                        TimeNs start, TimeNs end) {
    o_.key("args").obj();
    maybe("External id", external_of(correlation));
    o_.key("device").num(device).key("context").num(context).key("stream").num(stream);
    maybe("correlation", correlation);
    o_.key("bytes").num(bytes);
    const int64_t dur = sat_sub(end, start);
    // Kineto: bytes per ns (= GB/s); a copy of no duration has no figure.
    if (dur > 0)
      o_.key("memory bandwidth (GB/s)").raw(fmt::format("{}", static_cast<double>(bytes) / static_cast<double>(dur)));
    o_.raw("}}");
  };
  const MemcpyTable& m = t_.memcpys;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.start[i] == kNoTime) continue;
    const std::string name = fmt::format("Memcpy {} ({} -> {})", copy_kind_name(m.copy_kind[i]),
                                         mem_kind_name(m.src_kind[i]), mem_kind_name(m.dst_kind[i]));
    open("X", "gpu_memcpy", name, m.device[i], m.stream[i], m.start[i], m.end[i]);
    args(m.correlation[i], m.device[i], m.context[i], m.stream[i], m.bytes[i], m.start[i], m.end[i]);
  }
  const MemsetTable& s = t_.memsets;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.start[i] == kNoTime) continue;
    open("X", "gpu_memset", fmt::format("Memset ({})", mem_kind_name(s.mem_kind[i])), s.device[i], s.stream[i],
         s.start[i], s.end[i]);
    args(s.correlation[i], s.device[i], s.context[i], s.stream[i], s.bytes[i], s.start[i], s.end[i]);
  }
}

void Writer::syncs_and_annotations() {
  const SyncTable& y = t_.syncs;
  for (size_t i = 0; i < y.size(); ++i) {
    if (y.start[i] == kNoTime) continue;
    open("X", "cuda_sync", sync_name(y.sync_type[i]), y.device[i], y.stream[i], y.start[i], y.end[i]);
    o_.key("args").obj().key("device").num(y.device[i]).key("context").num(y.context[i]);
    o_.key("stream").num(y.stream[i]);
    maybe("correlation", y.correlation[i]);
    o_.raw("}}");
  }
  const GpuAnnotationTable& g = t_.pytorch.gpu_annotations;
  for (size_t i = 0; i < g.size(); ++i) {
    open("X", "gpu_user_annotation", t_.str(g.name[i]), g.device[i], g.stream[i], g.start[i], g.end[i]);
    o_.key("args").obj().key("device").num(g.device[i]).key("stream").num(g.stream[i]);
    maybe("External id", g.external_id[i]);
    o_.raw("}}");
  }
}

void Writer::memory() {
  const AllocatorEventTable& a = t_.pytorch.allocator;
  for (size_t i = 0; i < a.size(); ++i) {
    open("i", "cpu_instant_event", "[memory]", pid_of(a.global_tid[i]), tid_of(a.global_tid[i]), a.time[i]);
    o_.key("s").str("t").key("args").obj();
    const auto field = [&](std::string_view k, int64_t v) {
      if (v != kNoValue) o_.key(k).num(v);
    };
    field("Total Reserved", a.total_reserved[i]);
    field("Total Allocated", a.total_allocated[i]);
    field("Bytes", a.bytes[i]);
    field("Addr", a.address[i]);
    if (a.device_type[i] != -1) field("Device Type", a.device_type[i]);
    if (a.device_type[i] != -1 || a.device_id[i] != -1) field("Device Id", a.device_id[i]);
    o_.raw("}}");
  }
}

void Writer::flows() {
  const FlowTable& f = t_.pytorch.forward_backward;
  for (size_t i = 0; i < f.size(); ++i) {
    open(f.phase[i] == 's' ? "s" : "f", "fwdbwd", "fwdbwd", pid_of(f.global_tid[i]), tid_of(f.global_tid[i]),
         f.time[i]);
    o_.key("id").num(f.id[i]);
    if (f.phase[i] != 's') o_.key("bp").str("e");
    o_.raw("}");
  }
  // ac2g: launch -> GPU work, one arrow per correlation id (a graph launch shares one with its kernels).
  std::unordered_map<int64_t, std::pair<int32_t, int32_t>> gpu;  // correlation -> (device, stream)
  std::unordered_map<int64_t, TimeNs> gpu_start;
  const auto note = [&](const auto& table) {
    for (size_t i = 0; i < table.size(); ++i) {
      const int64_t c = table.correlation[i];
      if (c == kNoValue || table.start[i] == kNoTime) continue;
      auto [it, inserted] = gpu_start.emplace(c, table.start[i]);
      if (inserted || table.start[i] < it->second) {
        it->second = table.start[i];
        gpu[c] = {table.device[i], table.stream[i]};
      }
    }
  };
  note(t_.kernels);
  note(t_.memcpys);
  note(t_.memsets);
  std::unordered_set<int64_t> done;
  const ApiTable& a = t_.api;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t c = a.correlation[i];
    if (c == kNoValue || a.start[i] == kNoTime || !gpu.count(c) || !done.insert(c).second) continue;
    open("s", "ac2g", "ac2g", pid_of(a.global_tid[i]), tid_of(a.global_tid[i]), a.start[i]);
    o_.key("id").num(c).raw("}");
    open("f", "ac2g", "ac2g", gpu[c].first, gpu[c].second, gpu_start[c]);
    o_.key("id").num(c).key("bp").str("e").raw("}");
  }
}

void Writer::python_functions() {
  const PythonFunctionTable& p = t_.pytorch.python_functions;
  for (size_t i = 0; i < p.size(); ++i) {
    open("X", "python_function", t_.str(p.name[i]), pid_of(p.global_tid[i]), tid_of(p.global_tid[i]), p.start[i],
         p.end[i]);
    o_.key("args").obj().key("Python parent id");
    if (p.parent_id[i] == kNoValue)
      o_.raw("null");
    else
      o_.num(p.parent_id[i]);
    maybe("Python id", p.python_id[i]);
    o_.raw("}}");
  }
}

TimeNs Writer::first_time() const {
  TimeNs first = INT64_MAX;
  for (const auto* col :
       {&t_.api.start, &t_.pytorch.ops.start, &t_.ranges.start, &t_.kernels.start, &t_.memcpys.start}) {
    if (!col->empty() && (*col)[0] != kNoTime) first = std::min(first, (*col)[0]);
  }
  return first == INT64_MAX ? 0 : first;
}

void Writer::findings() {
  if (findings_.empty()) return;
  // A pid no CPU process and no device uses: one past the largest of them.
  int64_t pid = 0;
  for (const auto& p : t_.processes) pid = std::max(pid, pid_of(p.global_pid));
  for (const auto& d : t_.devices) pid = std::max<int64_t>(pid, d.id);
  for (const auto* col : {&t_.kernels.device, &t_.memcpys.device, &t_.memsets.device}) {
    for (int32_t d : *col) pid = std::max<int64_t>(pid, d);
  }
  ++pid;
  const TimeNs first = first_time();
  open("M", "", "process_name", pid, 0, first);
  o_.key("args").obj().key("name").str("tracedoc findings").raw("}}");
  open("M", "", "process_sort_index", pid, 0, first);
  o_.key("args").obj().key("sort_index").num(-1).raw("}}");
  for (size_t i = 0; i < findings_.size(); ++i) {
    const diagnose::Finding& f = findings_[i];
    const int64_t tid = static_cast<int64_t>(i) + 1;
    open("M", "", "thread_name", pid, tid, first);
    o_.key("args")
        .obj()
        .key("name")
        .str(fmt::format("{} {} [{}]", diagnose::severity_name(f.severity), f.id, f.scope))
        .raw("}}");
    const auto args = [&](std::string_view where) {
      o_.key("args").obj().key("title").str(f.title).key("severity").str(diagnose::severity_name(f.severity));
      o_.key("savings_ns").num(f.savings_ns).key("confidence").str(diagnose::confidence_label(f.confidence));
      if (!where.empty()) o_.key("where").str(where);
      o_.key("remedy").str(f.remedy).raw("}}");
    };
    if (f.ranges.empty()) {
      open("i", "tracedoc_finding", f.id, pid, tid, first);
      o_.key("s").str("t");
      args({});
      continue;
    }
    for (const diagnose::TimeRange& r : f.ranges) {
      open("X", "tracedoc_finding", r.label.empty() ? f.id : fmt::format("{}: {}", f.id, r.label), pid, tid, r.start,
           r.end);
      args(r.where);
    }
  }
}

void Writer::metadata() {
  // CPU processes and threads, then each device's rows (labelled with the first process's name, as
  // Kineto names GPU "processes" after the profiled program).
  const TimeNs first = first_time();  // Kineto stamps metadata with the trace's start
  std::string_view program;
  for (const auto& p : t_.processes) {
    if (program.empty()) program = t_.str(p.name);
    if (p.name == kNoStr) continue;
    open("M", "", "process_name", pid_of(p.global_pid), 0, first);
    o_.key("args").obj().key("name").str(t_.str(p.name)).raw("}}");
    open("M", "", "process_labels", pid_of(p.global_pid), 0, first);
    o_.key("args").obj().key("labels").str("CPU").raw("}}");
  }
  for (const auto& th : t_.threads) {
    if (th.name == kNoStr) continue;
    // Kineto's form, "thread 123 (pt_main_thread)", for names from elsewhere (nsys, synth).
    const std::string_view name = t_.str(th.name);
    const std::string label =
        name.starts_with("thread ") ? std::string(name) : fmt::format("thread {} ({})", tid_of(th.global_tid), name);
    open("M", "", "thread_name", pid_of(th.global_tid), tid_of(th.global_tid), first);
    o_.key("args").obj().key("name").str(label).raw("}}");
  }
  std::vector<std::pair<int32_t, int32_t>> streams;  // (device, stream) with GPU work
  const auto note = [&](const auto& table) {
    for (size_t i = 0; i < table.size(); ++i) streams.emplace_back(table.device[i], table.stream[i]);
  };
  note(t_.kernels);
  note(t_.memcpys);
  note(t_.memsets);
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  int32_t last_device = -1;
  for (const auto& [dev, stream] : streams) {
    if (dev != last_device) {
      last_device = dev;
      if (!program.empty()) {
        open("M", "", "process_name", dev, 0, first);
        o_.key("args").obj().key("name").str(program).raw("}}");
      }
      open("M", "", "process_labels", dev, 0, first);
      o_.key("args").obj().key("labels").str(fmt::format("GPU {}", dev)).raw("}}");
    }
    open("M", "", "thread_name", dev, stream, first);
    o_.key("args").obj().key("name").str(fmt::format("stream {} ", stream)).raw("}}");  // Kineto's trailing space
  }
}

void Writer::write() {
  header();
  external_ids();
  ops();
  ranges();
  api();
  kernels();
  copies();
  syncs_and_annotations();
  memory();
  flows();
  python_functions();
  findings();
  metadata();
  o_.raw("\n  ],\n  ").first_key("traceName").str(t_.source.path).raw("\n}\n");
}

}  // namespace

std::string kineto_time(int64_t ns) {
  // Unsigned magnitude: -INT64_MIN does not fit int64.
  const bool negative = ns < 0;
  const uint64_t mag = negative ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03}", negative ? "-" : "", mag / 1000, mag % 1000);
}

std::string kineto_json(const Trace& trace, const std::vector<diagnose::Finding>& findings) {
  Out out(nullptr);
  Writer(trace, out, findings).write();
  return out.take();
}

Status write_kineto_json(const Trace& trace, const std::string& path, const std::vector<diagnose::Finding>& findings) {
  OutputFile file;
  TRACEDOC_RETURN_IF_ERROR(file.open(path));
  {
    Out out(file.file());
    Writer(trace, out, findings).write();
    out.flush();
  }
  return file.commit();
}

}  // namespace tracedoc
