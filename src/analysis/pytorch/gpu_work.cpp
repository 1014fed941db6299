#include "analysis/pytorch/gpu_work.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/pytorch/op_links.h"
#include "common/text.h"

namespace tracedoc::pytorch {

namespace {

// Who a GPU activity or CPU event belongs to. A merged rank directory tags thread and process ids
// with rank + 1 in their top bits (a single file with 0); nsys exports group by process.
struct Owners {
  bool pytorch;
  int64_t owner_of_pid(int64_t global_pid) const { return owner_of_id(pytorch, global_pid); }
};

// Correlation id -> API call of the same owner, for the synchronization records (the other GPU
// activity is linked by link_gpu_launches).
class SyncLinker {
 public:
  explicit SyncLinker(const ApiTable& api) : api_(api) {
    for (size_t a = 0; a < api.size(); ++a) {
      if (api.correlation[a] != kNoValue) pairs_.emplace_back(api.correlation[a], static_cast<uint32_t>(a));
    }
    std::sort(pairs_.begin(), pairs_.end());
  }
  int32_t find(int64_t correlation, int64_t global_pid) const {
    if (correlation == kNoValue) return -1;
    auto it = std::lower_bound(pairs_.begin(), pairs_.end(), std::make_pair(correlation, uint32_t{0}));
    for (auto j = it; j != pairs_.end() && j->first == correlation; ++j) {
      if (global_pid_of(api_.global_tid[j->second]) == global_pid) return static_cast<int32_t>(j->second);
    }
    return it != pairs_.end() && it->first == correlation ? static_cast<int32_t>(it->second) : -1;
  }

 private:
  const ApiTable& api_;
  std::vector<std::pair<int64_t, uint32_t>> pairs_;
};

// `decide(name)` for each string id, decided once per id: a trace repeats a few hundred names over
// hundreds of thousands of rows.
template <typename Decide>
class PerName {
 public:
  PerName(const Trace& trace, Decide decide)
      : trace_(trace), decide_(std::move(decide)), memo_(trace.strings.size(), kUnset) {}
  uint8_t operator()(StrId id) {
    if (id >= memo_.size()) return static_cast<uint8_t>(decide_(trace_.str(id)));
    if (memo_[id] == kUnset) memo_[id] = static_cast<uint8_t>(decide_(trace_.str(id)));
    return memo_[id];
  }

 private:
  static constexpr uint8_t kUnset = 0xFF;
  const Trace& trace_;
  Decide decide_;
  std::vector<uint8_t> memo_;
};

// HTA's cut for drop_last_step: per owner, the latest start of an event whose name contains
// "ProfilerStep"; absent when the trace has fewer than two such names (HTA then keeps everything).
class LastStepCut {
 public:
  LastStepCut(const Trace& trace, const Owners& owners) {
    std::set<std::string_view> names;
    std::set<int64_t> range_owners;
    PerName is_step(trace, [](std::string_view name) { return contains(name, "ProfilerStep"); });
    auto note = [&](StrId name, int64_t owner, TimeNs start) {
      if (!is_step(name)) return;
      names.insert(trace.str(name));
      auto [it, fresh] = cut_.try_emplace(owner, start);
      if (!fresh) it->second = std::max(it->second, start);
    };
    const RangeTable& r = trace.ranges;
    for (size_t i = 0; i < r.size(); ++i) note(r.text[i], owners.owner_of_pid(r.global_tid[i]), r.start[i]);
    const OpTable& ops = trace.pytorch.ops;
    for (size_t i = 0; i < ops.size(); ++i) note(ops.name[i], owners.owner_of_pid(ops.global_tid[i]), ops.start[i]);
    // Kineto also writes each step as a GPU-side annotation, which HTA takes for a CPU event (its
    // stream is -1) and so into the cut. Annotations carry no rank: used when there is one owner.
    for (const auto& [owner, t] : cut_) range_owners.insert(owner);
    const GpuAnnotationTable& g = trace.pytorch.gpu_annotations;
    if (range_owners.size() <= 1) {
      const int64_t owner = range_owners.empty() ? 0 : *range_owners.begin();
      for (size_t i = 0; i < g.size(); ++i) note(g.name[i], owner, g.start[i]);
    } else {
      for (size_t i = 0; i < g.size(); ++i) {
        if (is_step(g.name[i])) names.insert(trace.str(g.name[i]));
      }
    }
    active_ = names.size() >= 2;
  }

  // Keep a GPU activity launched by a call starting at `launch_start` (kNoTime: no call)?
  bool keep(int64_t owner, TimeNs launch_start) const {
    if (!active_) return true;
    if (launch_start == kNoTime) return false;
    auto it = cut_.find(owner);
    return it != cut_.end() && launch_start < it->second;  // no step on this rank: HTA keeps nothing
  }

 private:
  bool active_ = false;
  std::map<int64_t, TimeNs> cut_;
};

}  // namespace

const char* work_class_name(WorkClass c) {
  switch (c) {
    case WorkClass::kCommunication: return "COMMUNICATION";
    case WorkClass::kMemory: return "MEMORY";
    case WorkClass::kComputation: return "COMPUTATION";
    case WorkClass::kOther: return "OTHER";
  }
  return "OTHER";
}

WorkClass classify_kernel_name(std::string_view name, Classifier classifier) {
  if (classifier == Classifier::kTracedoc) {
    return name.starts_with("nccl") || name.starts_with("rccl") ? WorkClass::kCommunication : WorkClass::kComputation;
  }
  // Python's re.match: anchored at the start, and `.` stops at a line break, so only the first line
  // of a name is ever looked at.
  const std::string_view n = name.substr(0, name.find('\n'));
  if (n.starts_with("nccl") && contains(n, "Kernel", 4)) return WorkClass::kCommunication;
  if (n.starts_with("Memcpy") || n.starts_with("Memset") || n.starts_with("dma")) return WorkClass::kMemory;
  if (contains(n, "Memcpy") || contains(n, "Sync")) return WorkClass::kOther;
  return WorkClass::kComputation;
}

std::string_view sync_name(int32_t sync_type) {
  switch (sync_type) {
    case 1: return "Event Sync";
    case 2: return "Stream Wait Event";
    case 3: return "Stream Sync";
    case 4: return "Context Sync";
  }
  return "Unknown Sync";
}

std::string_view api_base_name(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v == std::string_view::npos || v + 2 == name.size()) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, v);
}

IntervalSet GpuUnit::busy(uint32_t class_mask) const {
  std::vector<Interval> v;
  v.reserve(items.size());
  for (const GpuWorkItem& it : items) {
    if (class_mask & (1u << static_cast<int>(it.cls))) v.push_back(it.interval());
  }
  return IntervalSet::busy_union(std::move(v));
}

TimeParts time_parts(const GpuUnit& unit) {
  TimeParts p;
  p.compute = unit.busy(1u << static_cast<int>(WorkClass::kComputation));
  p.communication = unit.busy(1u << static_cast<int>(WorkClass::kCommunication)).subtract(p.compute);
  const IntervalSet taken = p.compute.unite(p.communication);
  p.copies = unit.busy(1u << static_cast<int>(WorkClass::kMemory)).subtract(taken);
  p.other = unit.busy(1u << static_cast<int>(WorkClass::kOther)).subtract(taken.unite(p.copies));
  return p;
}

std::array<int64_t, 5> TimeParts::within(std::span<const Interval> windows) const {
  std::array<int64_t, 5> part = {compute.covered_within(windows), communication.covered_within(windows),
                                 copies.covered_within(windows), other.covered_within(windows), 0};
  int64_t window = 0, busy = 0;
  for (const Interval& w : windows) window = sat_add(window, w.length());
  for (size_t i = 0; i < 4; ++i) busy = sat_add(busy, part[i]);
  part[4] = sat_sub(window, busy);
  return part;
}

GpuWork collect_gpu_work(const Trace& trace, const GpuWorkOptions& options) {
  GpuWork out;
  out.pytorch = trace.source.format == "kineto-json";
  const Owners owners{out.pytorch};
  const GpuLaunches launches = link_gpu_launches(trace);
  const LastStepCut cut(trace, owners);
  const ApiTable& api = trace.api;

  // Collective arguments mark communication kernels whatever their name (tracedoc's classes).
  std::vector<uint8_t> collective(trace.kernels.size(), 0);
  for (uint32_t k : trace.pytorch.collectives.kernel) {
    if (k < collective.size()) collective[k] = 1;
  }

  std::map<std::pair<int64_t, int32_t>, size_t> unit_of;
  auto add = [&](int64_t global_pid, int32_t device, GpuWorkItem item) {
    const int64_t owner = owners.owner_of_pid(global_pid);
    if (item.launch >= 0) {
      item.launch_start = api.start[item.launch];
      item.launch_end = api.end[item.launch];
    }
    if (options.drop_last_step && !cut.keep(owner, item.launch_start)) return;
    auto [it, fresh] = unit_of.try_emplace({owner, device}, out.units.size());
    if (fresh) {
      GpuUnit u;
      u.owner = owner;
      u.device = device;
      if (out.pytorch) {
        u.rank = trace.rank_of_tag(owner);
      } else {
        u.pid = pid_of(global_pid);
      }
      out.units.push_back(std::move(u));
    }
    out.units[it->second].items.push_back(item);
  };

  const KernelTable& k = trace.kernels;
  PerName kernel_class(trace, [&](std::string_view name) { return classify_kernel_name(name, options.classifier); });
  for (size_t r = 0; r < k.size(); ++r) {
    GpuWorkItem w{k.start[r],
                  k.end[r],
                  k.stream[r],
                  WorkKind::kKernel,
                  WorkClass::kComputation,
                  static_cast<uint32_t>(r),
                  launches.of(GpuKind::kKernel, r)};
    w.cls = options.classifier == Classifier::kTracedoc && collective[r]
                ? WorkClass::kCommunication
                : static_cast<WorkClass>(kernel_class(k.name[r]));
    add(k.global_pid[r], k.device[r], w);
  }
  // Copies and memsets are MEMORY under both classifiers (Kineto names them "Memcpy ..."/"Memset ...").
  const MemcpyTable& m = trace.memcpys;
  for (size_t r = 0; r < m.size(); ++r) {
    add(m.global_pid[r], m.device[r],
        {m.start[r], m.end[r], m.stream[r], WorkKind::kMemcpy, WorkClass::kMemory, static_cast<uint32_t>(r),
         launches.of(GpuKind::kMemcpy, r)});
  }
  const MemsetTable& s = trace.memsets;
  for (size_t r = 0; r < s.size(); ++r) {
    add(s.global_pid[r], s.device[r],
        {s.start[r], s.end[r], s.stream[r], WorkKind::kMemset, WorkClass::kMemory, static_cast<uint32_t>(r),
         launches.of(GpuKind::kMemset, r)});
  }
  if (options.include_syncs) {
    const SyncTable& y = trace.syncs;
    const SyncLinker linker(api);
    for (size_t r = 0; r < y.size(); ++r) {
      const WorkClass cls = options.classifier == Classifier::kTracedoc
                                ? WorkClass::kOther
                                : classify_kernel_name(sync_name(y.sync_type[r]), options.classifier);
      add(y.global_pid[r], y.device[r],
          {y.start[r], y.end[r], y.stream[r], WorkKind::kSync, cls, static_cast<uint32_t>(r),
           linker.find(y.correlation[r], y.global_pid[r])});
    }
  }

  for (GpuUnit& u : out.units) {
    std::sort(u.items.begin(), u.items.end(), [](const GpuWorkItem& a, const GpuWorkItem& b) {
      return std::tie(a.start, a.end, a.kind, a.row) < std::tie(b.start, b.end, b.kind, b.row);
    });
  }
  std::sort(out.units.begin(), out.units.end(), [](const GpuUnit& a, const GpuUnit& b) {
    return std::tie(a.rank, a.pid, a.owner, a.device) < std::tie(b.rank, b.pid, b.owner, b.device);
  });
  return out;
}

}  // namespace tracedoc::pytorch
