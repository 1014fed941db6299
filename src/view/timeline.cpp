#include "view/timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/ncu_answers.h"
#include "analysis/ncu_join.h"
#include "analysis/pytorch/gpu_work.h"
#include "common/human_units.h"
#include "model/correlation_index.h"
#include "model/emit_nvtx_names.h"

namespace tracedoc::view {

namespace {

// Names are stored once per timeline: trace strings by id, made-up names ("[CUDA memcpy ...]") by text.
class NameTable {
 public:
  NameTable(const Trace& trace, std::vector<std::string>& names) : trace_(trace), names_(names) {}
  uint32_t of(StrId id) {
    auto [it, added] = by_id_.try_emplace(id, 0);
    if (added) it->second = add(std::string(trace_.str(id)));
    return it->second;
  }
  uint32_t of_text(const std::string& text) {
    auto [it, added] = by_text_.try_emplace(text, 0);
    if (added) it->second = add(text);
    return it->second;
  }

 private:
  uint32_t add(std::string s) {
    names_.push_back(std::move(s));
    return static_cast<uint32_t>(names_.size() - 1);
  }
  const Trace& trace_;
  std::vector<std::string>& names_;
  std::unordered_map<StrId, uint32_t> by_id_;
  std::unordered_map<std::string, uint32_t> by_text_;
};

// Colours are decided once per (category, name, on the critical path, Nsight Compute bound, share
// of the roof).
class Painter {
 public:
  Painter(const ColorScheme& colors, const std::vector<std::string>& names) : colors_(colors), names_(names) {}
  uint16_t paint(Category c, uint32_t name, bool critical, KernelBound bound, PeakBand peak) {
    const uint64_t key = (static_cast<uint64_t>(name) << 10) | (static_cast<uint64_t>(bound) << 8) |
                         (static_cast<uint64_t>(peak) << 5) | (static_cast<uint64_t>(c) << 1) | (critical ? 1 : 0);
    auto [it, added] = cache_.try_emplace(key, 0);
    if (added) it->second = colors_.color_of(c, names_[name], critical, bound, peak);
    return it->second;
  }

 private:
  const ColorScheme& colors_;
  const std::vector<std::string>& names_;
  std::unordered_map<uint64_t, uint16_t> cache_;
};

struct GpuKey {
  int64_t global_pid;
  int32_t device, stream;
  auto operator<=>(const GpuKey&) const = default;
};

// Depth rows: each item goes on the first row whose last item has ended by its start. Properly
// nested items (a call stack) land one row below their parent, as a stack would put them; items
// that only partly overlap (a stream synchronization across kernels) take the first free row
// instead of stacking ever deeper. Items sorted by (start, longer first), so parents come first.
void nest(Track& track, int64_t& clipped) {
  std::sort(track.items.begin(), track.items.end(), [](const TrackItem& a, const TrackItem& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.category < b.category;
  });
  std::array<TimeNs, kMaxTrackRows> row_end;
  row_end.fill(std::numeric_limits<TimeNs>::min());
  uint8_t rows = 1;
  for (TrackItem& item : track.items) {
    size_t depth = 0;
    while (depth < kMaxTrackRows && row_end[depth] > item.start) ++depth;
    if (depth == kMaxTrackRows) {
      depth = kMaxTrackRows - 1;
      ++clipped;
    }
    item.depth = static_cast<uint8_t>(depth);
    row_end[depth] = std::max(row_end[depth], item.end);
    rows = std::max<uint8_t>(rows, static_cast<uint8_t>(depth + 1));
  }
  track.rows = rows;
}

std::string process_label(const Trace& trace, int64_t global_pid) {
  std::string name;
  for (const ProcessInfo& p : trace.processes) {
    if (p.global_pid == global_pid && p.name != kNoStr) name = std::string(trace.str(p.name));
  }
  const int64_t rank = trace.rank_of(global_pid);
  std::string label =
      rank >= 0 ? fmt::format("rank {} (pid {})", rank, pid_of(global_pid)) : fmt::format("pid {}", pid_of(global_pid));
  if (!name.empty()) label += " " + name;
  return label;
}

std::string thread_label(const Trace& trace, int64_t global_tid) {
  for (const ThreadInfo& t : trace.threads) {
    if (t.global_tid == global_tid && t.name != kNoStr && !trace.str(t.name).empty()) {
      return fmt::format("thread {} ({})", tid_of(global_tid), trace.str(t.name));
    }
  }
  return fmt::format("thread {}", tid_of(global_tid));
}

bool usable(TimeNs start, TimeNs end) { return start != kNoTime && end != kNoTime && end >= start; }

}  // namespace

ItemFigures::ItemFigures(const Trace& trace) : peaks(trace) {
  if (!trace.ncu_reports.empty()) ncu.emplace(trace);
}

Timeline build_timeline(const Trace& trace, const ColorScheme& colors, const CriticalPath* critical,
                        const ItemFigures& figures, const TimelineOptions& options) {
  Timeline tl;
  NameTable names(trace, tl.names);
  std::map<int64_t, Track> cpu;        // by global tid
  std::map<GpuKey, Track> gpu;         // by (process, device, stream)
  std::map<int32_t, Track> gpu_notes;  // by device
  auto cpu_track = [&](int64_t tid) -> Track& {
    Track& t = cpu[tid];
    t.kind = TrackKind::kCpuThread;
    t.global_tid = tid;
    t.global_pid = global_pid_of(tid);
    return t;
  };
  auto gpu_track = [&](int64_t pid, int32_t device, int32_t stream) -> Track& {
    Track& t = gpu[GpuKey{pid, device, stream}];
    t.kind = TrackKind::kGpuStream;
    t.global_pid = pid;
    t.device = device;
    t.stream = stream;
    return t;
  };
  auto add = [](Track& t, TimeNs s, TimeNs e, uint32_t row, uint32_t name, Category c) {
    t.items.push_back(TrackItem{s, e, row, name, c, 0, 0});
  };
  const KernelTable& k = trace.kernels;
  for (uint32_t i = 0; i < k.size(); ++i) {
    if (!usable(k.start[i], k.end[i])) continue;
    const StrId n = k.name[i] != kNoStr ? k.name[i] : k.short_name[i];
    add(gpu_track(k.global_pid[i], k.device[i], k.stream[i]), k.start[i], k.end[i], i, names.of(n), Category::kKernel);
  }
  const MemcpyTable& m = trace.memcpys;
  for (uint32_t i = 0; i < m.size(); ++i) {
    if (!usable(m.start[i], m.end[i])) continue;
    const std::string n = "[CUDA memcpy " + trace.copy_label(m.copy_kind[i]) + "]";
    add(gpu_track(m.global_pid[i], m.device[i], m.stream[i]), m.start[i], m.end[i], i, names.of_text(n),
        Category::kMemcpy);
  }
  const MemsetTable& ms = trace.memsets;
  for (uint32_t i = 0; i < ms.size(); ++i) {
    if (!usable(ms.start[i], ms.end[i])) continue;
    add(gpu_track(ms.global_pid[i], ms.device[i], ms.stream[i]), ms.start[i], ms.end[i], i,
        names.of_text("[CUDA memset]"), Category::kMemset);
  }
  const GraphTraceTable& gt = trace.graph_traces;
  for (uint32_t i = 0; i < gt.size(); ++i) {
    if (!usable(gt.start[i], gt.end[i])) continue;
    add(gpu_track(gt.global_pid[i], gt.device[i], gt.stream[i]), gt.start[i], gt.end[i], i,
        names.of_text(fmt::format("[CUDA graph {}]", gt.graph_id[i])), Category::kGraph);
  }
  // nsys records some synchronizations with device 0 whatever the stream's device (seen in a
  // two-GPU export): a sync goes on the device whose work ran on its (process, stream).
  // Syncs on a stream without other work go to the process's device when it used only one.
  std::map<std::pair<int64_t, int32_t>, int32_t> stream_device;
  std::map<int64_t, std::set<int32_t>> process_devices;
  for (const auto& [key, t] : gpu) {
    stream_device.try_emplace({key.global_pid, key.stream}, key.device);
    process_devices[key.global_pid].insert(key.device);
  }
  const SyncTable& sy = trace.syncs;
  for (uint32_t i = 0; i < sy.size(); ++i) {
    if (!usable(sy.start[i], sy.end[i])) continue;
    const std::string n(pytorch::sync_name(sy.sync_type[i]));
    const auto known = stream_device.find({sy.global_pid[i], sy.stream[i]});
    int32_t device = sy.device[i];
    if (known != stream_device.end()) {
      device = known->second;
    } else if (auto only = process_devices.find(sy.global_pid[i]);
               only != process_devices.end() && only->second.size() == 1) {
      device = *only->second.begin();
    }
    add(gpu_track(sy.global_pid[i], device, sy.stream[i]), sy.start[i], sy.end[i], i,
        names.of_text(n.empty() ? "[CUDA sync]" : n), Category::kSync);
  }
  const GpuAnnotationTable& ga = trace.pytorch.gpu_annotations;
  for (uint32_t i = 0; i < ga.size(); ++i) {
    if (!usable(ga.start[i], ga.end[i])) continue;
    Track& t = gpu_notes[ga.device[i]];
    t.kind = TrackKind::kGpuAnnotations;
    t.device = ga.device[i];
    add(t, ga.start[i], ga.end[i], i, names.of(ga.name[i]), Category::kGpuAnnotation);
  }
  const ApiTable& api = trace.api;
  for (uint32_t i = 0; i < api.size(); ++i) {
    if (!usable(api.start[i], api.end[i])) continue;
    add(cpu_track(api.global_tid[i]), api.start[i], api.end[i], i, names.of(api.name[i]), Category::kApi);
  }
  const RangeTable& r = trace.ranges;
  const bool ops_are_ranges = operators_are_ranges(trace);  // emit_nvtx's operators (model/emit_nvtx_names.h)
  for (uint32_t i = 0; i < r.size(); ++i) {
    const auto kind = static_cast<RangeKind>(r.kind[i]);
    if (kind == RangeKind::kNvtxDomainCreate) continue;
    if (r.end[i] == kNoTime && kind != RangeKind::kNvtxMark) {
      ++tl.unclosed;
      continue;
    }
    const TimeNs end = kind == RangeKind::kNvtxMark ? r.start[i] : r.end[i];
    if (!usable(r.start[i], end)) continue;
    if (ops_are_ranges && range_is_operator(trace, i)) continue;  // drawn below, as the operator it is
    add(cpu_track(r.global_tid[i]), r.start[i], end, i, names.of(r.text[i]), Category::kRange);
  }
  const OpTable& ops = trace.pytorch.ops;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    if (!usable(ops.start[i], ops.end[i])) continue;
    add(cpu_track(ops.global_tid[i]), ops.start[i], ops.end[i], i, names.of(ops.name[i]), Category::kOp);
  }
  // Threads known only by their CPU samples get a track too: the page draws their samples there.
  for (int64_t tid : trace.cpu_samples.global_tid) {
    if (!cpu.contains(tid)) cpu_track(tid);
  }
  if (options.os_calls) {
    const OsCallTable& os = trace.os_calls;
    for (uint32_t i = 0; i < os.size(); ++i) {
      if (!usable(os.start[i], os.end[i])) continue;
      add(cpu_track(os.global_tid[i]), os.start[i], os.end[i], i, names.of(os.name[i]), Category::kOsCall);
    }
  }

  // Groups: every process with a track, by global pid; GPU annotations go with the process whose
  // kernels ran on their device (Kineto records them per device only).
  std::map<int32_t, int64_t> device_owner;
  for (const auto& [key, t] : gpu) device_owner.try_emplace(key.device, key.global_pid);
  for (auto& [device, t] : gpu_notes) {
    auto it = device_owner.find(device);
    t.global_pid = it != device_owner.end() ? it->second : 0;
  }
  std::map<int64_t, std::vector<Track*>> by_process;
  for (auto& [tid, t] : cpu) by_process[t.global_pid].push_back(&t);
  for (auto& [device, t] : gpu_notes) by_process[t.global_pid].push_back(&t);
  for (auto& [key, t] : gpu) by_process[t.global_pid].push_back(&t);

  Painter painter(colors, tl.names);
  const bool use_path = critical != nullptr && colors.uses_critical_path();
  const KernelNcuAnswers* ncu = colors.uses_kernel_bound() && figures.ncu ? &*figures.ncu : nullptr;
  const OpPeaks* peaks = colors.uses_peak_band() ? &figures.peaks : nullptr;
  for (auto& [pid, tracks] : by_process) {
    tl.groups.push_back(TrackGroup{pid, process_label(trace, pid)});
    const uint32_t group = static_cast<uint32_t>(tl.groups.size() - 1);
    // CPU threads (the main thread first), then each device: its annotations, then its streams.
    std::stable_sort(tracks.begin(), tracks.end(), [](const Track* a, const Track* b) {
      auto rank = [](const Track* t) {
        if (t->kind == TrackKind::kCpuThread)
          return std::tuple<int, int64_t, int64_t>(0, tid_of(t->global_tid) == pid_of(t->global_tid) ? 0 : 1,
                                                   tid_of(t->global_tid));
        return std::tuple<int, int64_t, int64_t>(1, t->device, t->kind == TrackKind::kGpuAnnotations ? -1 : t->stream);
      };
      return rank(a) < rank(b);
    });
    for (Track* t : tracks) {
      t->group = group;
      switch (t->kind) {
        case TrackKind::kCpuThread: t->label = thread_label(trace, t->global_tid); break;
        case TrackKind::kGpuStream:
          // Stream -1 (0xFFFFFFFF in nsys): context-wide synchronizations, on no stream.
          t->label = t->stream < 0 ? fmt::format("GPU {} context", t->device)
                                   : fmt::format("GPU {} stream {}", t->device, t->stream);
          break;
        case TrackKind::kGpuAnnotations: t->label = fmt::format("GPU {} annotations", t->device); break;
      }
      nest(*t, tl.clipped_depth);
      for (TrackItem& item : t->items) {
        bool on_path = false;
        if (use_path) {
          if (item.category == Category::kKernel)
            on_path = critical->on_path(pytorch::WorkKind::kKernel, item.row);
          else if (item.category == Category::kMemcpy)
            on_path = critical->on_path(pytorch::WorkKind::kMemcpy, item.row);
          else if (item.category == Category::kMemset)
            on_path = critical->on_path(pytorch::WorkKind::kMemset, item.row);
        }
        const KernelBound bound = ncu && item.category == Category::kKernel ? ncu->bound(item.row) : KernelBound::kNone;
        PeakBand peak = PeakBand::kNone;
        if (peaks && item.category == Category::kKernel) peak = peaks->kernel_band(item.row);
        if (peaks && item.category == Category::kOp) peak = peaks->op_band(item.row);
        item.color = painter.paint(item.category, item.name, on_path, bound, peak);
      }
      tl.events += static_cast<int64_t>(t->items.size());
      tl.tracks.push_back(std::move(*t));
    }
  }
  bool first = true;
  const auto cover = [&](TimeNs start, TimeNs end) {
    tl.start = first ? start : std::min(tl.start, start);
    tl.end = first ? end : std::max(tl.end, end);
    first = false;
  };
  for (const Track& t : tl.tracks) {
    for (const TrackItem& item : t.items) cover(item.start, item.end);
  }
  for (TimeNs t : trace.cpu_samples.time) {
    if (t != kNoTime) cover(t, t);
  }
  return tl;
}

EventRecords::EventRecords(const Trace& trace) {
  const CudaEventTable& e = trace.cuda_events;
  if (e.size() == 0) return;
  const CorrelationIndex calls(trace.api);
  for (size_t i = 0; i < e.size(); ++i) {
    const int32_t call = calls.find_in_process(e.correlation[i], global_pid_of(e.global_pid[i]));
    const TimeNs t = call != CorrelationIndex::kNoCall ? trace.api.start[static_cast<size_t>(call)] : e.time[i];
    if (t == kNoTime) continue;
    by_event_[{pid_of(e.global_pid[i]), e.event_id[i]}].push_back(Record{t, e.device[i], e.stream[i]});
  }
  for (auto& [k, records] : by_event_) {
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.call < b.call; });
  }
}

const EventRecords::Record* EventRecords::last_before(int64_t global_pid, int64_t event_id, TimeNs t) const {
  const auto it = by_event_.find({pid_of(global_pid), event_id});
  if (it == by_event_.end()) return nullptr;
  const auto after =
      std::upper_bound(it->second.begin(), it->second.end(), t, [](TimeNs v, const Record& r) { return v < r.call; });
  return after == it->second.begin() ? nullptr : &*std::prev(after);
}

namespace {

// "event 41, recorded on GPU 0 stream 21": which stream's work a stream wait or event sync waited for.
std::string sync_detail(const Trace& trace, uint32_t i, const EventRecords* events) {
  const SyncTable& y = trace.syncs;
  constexpr int64_t kInvalidId = 0xFFFFFFFF;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE, as nsys stores it
  if (y.event_id[i] == kNoValue || y.event_id[i] == kInvalidId) return {};
  std::string s = fmt::format("event {}", y.event_id[i]);
  if (events != nullptr) {
    if (const EventRecords::Record* r = events->last_before(y.global_pid[i], y.event_id[i], y.start[i])) {
      s += fmt::format(", recorded on GPU {} stream {}", r->device, r->stream);
    }
  }
  return s;
}

}  // namespace

KernelNcuAnswers::KernelNcuAnswers(const Trace& trace) {
  const NcuJoin join = join_ncu(trace);
  launch_.assign(join.answered_by.size(), -1);
  std::map<std::pair<int32_t, int32_t>, int32_t> slots;
  for (size_t row = 0; row < join.answered_by.size(); ++row) {
    const NcuLaunchRef ref = join.answered_by[row];
    if (!ref) continue;
    auto [it, fresh] = slots.try_emplace({ref.report, ref.result}, static_cast<int32_t>(lines_.size()));
    if (fresh) {
      const NcuReport& report = *trace.ncu_reports[static_cast<size_t>(ref.report)];
      const NcuAnswers a = ncu_answers(report, report.results[static_cast<size_t>(ref.result)]);
      bounds_.push_back(a.bound == "memory"    ? KernelBound::kMemory
                        : a.bound == "compute" ? KernelBound::kCompute
                                               : KernelBound::kNone);
      lines_.push_back(ncu_answers_line(a));
    }
    launch_[row] = it->second;
  }
}

KernelBound KernelNcuAnswers::bound(uint32_t row) const {
  return row < launch_.size() && launch_[row] >= 0 ? bounds_[static_cast<size_t>(launch_[row])] : KernelBound::kNone;
}

std::string_view KernelNcuAnswers::line(uint32_t row) const {
  return row < launch_.size() && launch_[row] >= 0 ? std::string_view(lines_[static_cast<size_t>(launch_[row])])
                                                   : std::string_view();
}

std::string item_detail(const Trace& trace, const TrackItem& item, const EventRecords* events,
                        const KernelNcuAnswers* ncu, const OpPeaks* peaks) {
  const uint32_t i = item.row;
  switch (item.category) {
    case Category::kKernel: {
      const KernelTable& k = trace.kernels;
      std::string s = fmt::format("grid {}×{}×{} · block {}×{}×{}", k.grid_x[i], k.grid_y[i], k.grid_z[i], k.block_x[i],
                                  k.block_y[i], k.block_z[i]);
      if (k.registers_per_thread[i] > 0) s += fmt::format(" · {} registers", k.registers_per_thread[i]);
      const int64_t smem = static_cast<int64_t>(std::max(0, k.static_smem[i])) + std::max(0, k.dynamic_smem[i]);
      if (smem > 0) s += fmt::format(" · {} shared", human_bytes(smem));
      s += fmt::format(" · GPU {} stream {}", k.device[i], k.stream[i]);
      if (ncu != nullptr && !ncu->line(i).empty()) s += fmt::format(" · ncu: {}", ncu->line(i));
      if (peaks != nullptr && !peaks->kernel_line(i).empty()) s += " · " + peaks->kernel_line(i);
      return s;
    }
    case Category::kMemcpy: {
      const MemcpyTable& m = trace.memcpys;
      std::string s = human_bytes(m.bytes[i]);
      if (m.src_kind[i] != kNoKind || m.dst_kind[i] != kNoKind)
        s += fmt::format(" · {} → {}", trace.mem_label(m.src_kind[i]), trace.mem_label(m.dst_kind[i]));
      const int64_t ns = sat_sub(m.end[i], m.start[i]);
      if (ns > 0 && m.bytes[i] > 0)
        s += fmt::format(" · {:.2f} GB/s", static_cast<double>(m.bytes[i]) / static_cast<double>(ns));
      return s;
    }
    case Category::kMemset: return human_bytes(trace.memsets.bytes[i]);
    case Category::kGraph:
      return fmt::format("whole graph execution (its kernels were not traced one by one) · GPU {} stream {}",
                         trace.graph_traces.device[i], trace.graph_traces.stream[i]);
    case Category::kSync: return sync_detail(trace, i, events);
    case Category::kOp: {
      const StrId dims = trace.pytorch.ops.input_dims[i];
      std::string s = dims != kNoStr ? "input dims " + std::string(trace.str(dims)) : std::string();
      if (peaks != nullptr && !peaks->op_line(i).empty()) s += (s.empty() ? "" : " · ") + peaks->op_line(i);
      return s;
    }
    default: return {};
  }
}

int64_t item_correlation(const Trace& trace, const TrackItem& item) {
  auto valid = [](int64_t c) { return c == kNoValue ? int64_t{-1} : c; };
  switch (item.category) {
    case Category::kKernel: return valid(trace.kernels.correlation[item.row]);
    case Category::kMemcpy: return valid(trace.memcpys.correlation[item.row]);
    case Category::kMemset: return valid(trace.memsets.correlation[item.row]);
    case Category::kSync: return valid(trace.syncs.correlation[item.row]);
    case Category::kGraph: return valid(trace.graph_traces.correlation[item.row]);
    case Category::kApi: return valid(trace.api.correlation[item.row]);
    default: return -1;
  }
}

}  // namespace tracedoc::view
