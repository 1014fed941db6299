#include "analysis/pytorch/tb_overview.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "analysis/intervals.h"
#include "analysis/pytorch/gpu_work.h"
#include "analysis/pytorch/op_links.h"
#include "model/step_names.h"

namespace tracedoc::pytorch {

namespace {

constexpr TimeNs kMaxTime = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kMinTime = std::numeric_limits<TimeNs>::min();
constexpr int kClaimingRoles = kTbRoles - 1;  // Other is what they leave

bool is_data_loader(std::string_view name) {
  return (name.starts_with("enumerate(DataLoader)#") && name.ends_with(".__next__")) ||
         name.starts_with("enumerate(DataPipe)#");
}

// A collective's CPU-side range. The plugin's list (trace.py NcclOpNameSet / GlooOpNameSet) predates
// all_to_all, the _base variants and send/recv; any nccl:/gloo: range is one.
bool is_collective(std::string_view name, bool plugin_names) {
  if (!plugin_names) return name.starts_with("nccl:") || name.starts_with("gloo:");
  static constexpr std::string_view kNames[] = {"broadcast", "reduce", "all_reduce", "all_gather", "reduce_scatter"};
  if (!name.starts_with("nccl:") && !name.starts_with("gloo:")) return false;
  return std::find(std::begin(kNames), std::end(kNames), name.substr(5)) != std::end(kNames);
}

// Role of a CPU operator or annotation by its name; the plugin tests DataLoader first.
TbRole cpu_role(std::string_view name, bool plugin_names) {
  if (is_data_loader(name)) return TbRole::kDataLoader;
  if (is_collective(name, plugin_names)) return TbRole::kCommunication;
  return TbRole::kCpuExec;
}

// N of "ProfilerStep#N" (model/step_names.h); kNoValue when the name is not one.
int64_t step_number(std::string_view name) { return profiler_step_number(name).value_or(kNoValue); }

struct GpuOp {
  TimeNs start, end;
};

// Everything one unit contributes, gathered in one pass over the tables.
struct UnitInput {
  int64_t owner = 0;
  bool has_cpu = false;
  std::vector<Interval> roles[kClaimingRoles];
  std::vector<TbStep> steps;                      // host windows, in time order
  TimeNs cpu_min = kMaxTime, cpu_max = kMinTime;  // span of the CPU events
  std::vector<uint32_t> runtimes;                 // API rows, in start order
  std::vector<uint32_t> gpu_ops;                  // indices into the GPU op list
};

class Builder {
 public:
  Builder(const Trace& trace, const TbOptions& options) : t_(trace), o_(options) {}

  Result<TbOverview> run();

 private:
  UnitInput& unit(int64_t owner) {
    auto [it, fresh] = index_.try_emplace(owner, inputs_.size());
    if (fresh) {
      inputs_.emplace_back();
      inputs_.back().owner = owner;
    }
    return inputs_[it->second];
  }
  void add_cpu(UnitInput& u, TimeNs start, TimeNs end, TbRole role, bool in_span) {
    u.has_cpu = true;
    u.roles[static_cast<int>(role)].push_back({start, end});
    if (in_span) {
      u.cpu_min = std::min(u.cpu_min, start);
      u.cpu_max = std::max(u.cpu_max, end);
    }
  }
  void gather();
  void stretch_steps(const UnitInput& in, TbUnit& out);
  void break_down(const UnitInput& in, TbUnit& out) const;

  const Trace& t_;
  const TbOptions& o_;
  std::map<int64_t, size_t> index_;
  std::vector<UnitInput> inputs_;
  std::vector<GpuOp> ops_;
  std::vector<std::pair<int32_t, uint32_t>> by_launch_;  // (API row, GPU op), sorted
  std::vector<uint8_t> matched_;                         // per GPU op, scratch of stretch_steps
};

void Builder::gather() {
  // GPU operations, each with the call that launched it.
  const GpuLaunches launches = link_gpu_launches(t_);
  std::vector<uint8_t> communication(t_.kernels.size(), 0);
  if (!o_.plugin_communication) {
    for (uint32_t k : t_.pytorch.collectives.kernel) {
      if (k < communication.size()) communication[k] = 1;
    }
    for (size_t k = 0; k < t_.kernels.size(); ++k) {
      if (classify_kernel_name(t_.str(t_.kernels.name[k]), Classifier::kTracedoc) == WorkClass::kCommunication)
        communication[k] = 1;
    }
  }
  auto add_gpu = [&](GpuKind kind, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end,
                     const std::vector<int64_t>& global_pid, auto role_of) {
    for (size_t r = 0; r < start.size(); ++r) {
      const int64_t owner = rank_tag_of(global_pid[r]);
      UnitInput& u = unit(owner);
      u.roles[static_cast<int>(role_of(r))].push_back({start[r], end[r]});
      u.gpu_ops.push_back(static_cast<uint32_t>(ops_.size()));
      const int32_t launch = launches.of(kind, r);
      if (launch != kNoRow) by_launch_.emplace_back(launch, static_cast<uint32_t>(ops_.size()));
      ops_.push_back({start[r], end[r]});
    }
  };
  const KernelTable& k = t_.kernels;
  add_gpu(GpuKind::kKernel, k.start, k.end, k.global_pid,
          [&](size_t r) { return communication[r] ? TbRole::kCommunication : TbRole::kKernel; });
  add_gpu(GpuKind::kMemcpy, t_.memcpys.start, t_.memcpys.end, t_.memcpys.global_pid,
          [](size_t) { return TbRole::kMemcpy; });
  add_gpu(GpuKind::kMemset, t_.memsets.start, t_.memsets.end, t_.memsets.global_pid,
          [](size_t) { return TbRole::kMemset; });
  std::sort(by_launch_.begin(), by_launch_.end());

  // Runtime calls (the table is in start order).
  const ApiTable& api = t_.api;
  for (size_t a = 0; a < api.size(); ++a) {
    const auto cls = static_cast<ApiClass>(api.api_class[a]);
    if (cls != ApiClass::kCudaRuntime && (cls != ApiClass::kCudaDriver || o_.ignore_driver_calls)) continue;
    UnitInput& u = unit(rank_tag_of(api.global_tid[a]));
    u.has_cpu = true;
    u.roles[static_cast<int>(TbRole::kRuntime)].push_back({api.start[a], api.end[a]});
    u.runtimes.push_back(static_cast<uint32_t>(a));
  }

  // Operators, annotations and steps. Since 2021 the plugin leaves annotations (their own category)
  // out of the CPU span; 2021 traces file them as operators, which tracedoc reads as ranges.
  const bool ranges_in_span = !o_.cpu_span_ops_only || t_.pytorch.era <= 1;
  const OpTable& ops = t_.pytorch.ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    add_cpu(unit(rank_tag_of(ops.global_tid[i])), ops.start[i], ops.end[i],
            cpu_role(t_.str(ops.name[i]), o_.plugin_communication), true);
  }
  const RangeTable& r = t_.ranges;
  std::vector<uint8_t> is_step(r.size(), 0);
  for (uint32_t row : t_.pytorch.steps) {
    if (row >= r.size() || r.end[row] == kNoTime) continue;
    is_step[row] = 1;
    TbStep s;
    s.name = r.text[row];
    s.number = step_number(t_.str(s.name));
    s.host_start = r.start[row];
    s.host_end = r.end[row];
    UnitInput& u = unit(rank_tag_of(r.global_tid[row]));
    u.steps.push_back(s);
    u.has_cpu = true;
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (is_step[i] || r.end[i] == kNoTime) continue;
    add_cpu(unit(rank_tag_of(r.global_tid[i])), r.start[i], r.end[i],
            cpu_role(t_.str(r.text[i]), o_.plugin_communication), ranges_in_span);
  }

  // The plugin's view of GPU-side annotations: CPU annotations, the ProfilerStep#N ones steps. They
  // carry no process; taken only when one unit has CPU events.
  if (o_.gpu_annotations_as_cpu) {
    UnitInput* only = nullptr;
    size_t with_cpu = 0;
    for (auto& u : inputs_) {
      if (u.has_cpu) ++with_cpu, only = &u;
    }
    const GpuAnnotationTable& g = t_.pytorch.gpu_annotations;
    for (size_t i = 0; with_cpu == 1 && i < g.size(); ++i) {
      const std::string_view name = t_.str(g.name[i]);
      if (const int64_t n = step_number(name); n != kNoValue) {
        TbStep s;
        s.name = g.name[i];
        s.number = n;
        s.host_start = g.start[i];
        s.host_end = g.end[i];
        only->steps.push_back(s);
      } else {
        only->roles[static_cast<int>(cpu_role(name, o_.plugin_communication))].push_back({g.start[i], g.end[i]});
      }
    }
  }
  for (auto& u : inputs_) {
    std::stable_sort(u.steps.begin(), u.steps.end(),
                     [](const TbStep& a, const TbStep& b) { return a.host_start < b.host_start; });
  }
}

// The plugin's StepParser._find_device_steps and _update_steps_duration, on one unit.
void Builder::stretch_steps(const UnitInput& in, TbUnit& out) {
  std::vector<TbStep>& steps = out.steps;
  const size_t n = steps.size();
  const ApiTable& api = t_.api;
  std::vector<TimeNs> first(n, kMaxTime), last(n, kMinTime);
  for (uint32_t op : in.gpu_ops) matched_[op] = 0;
  bool any_matched = false;

  // Two-way merge of the calls (start order) with the steps (time order): a call belongs to the
  // current step when it lies entirely inside its CPU window; calls starting before the window or
  // running past its end belong to none.
  size_t s = 0, c = 0;
  TimeNs lo = kMaxTime, hi = kMinTime;
  while (s < n && c < in.runtimes.size()) {
    const uint32_t a = in.runtimes[c];
    if (api.start[a] < steps[s].host_start) {
      ++c;
    } else if (api.end[a] <= steps[s].host_end) {
      auto it =
          std::lower_bound(by_launch_.begin(), by_launch_.end(), std::make_pair(static_cast<int32_t>(a), uint32_t{0}));
      for (; it != by_launch_.end() && it->first == static_cast<int32_t>(a); ++it) {
        const GpuOp& op = ops_[it->second];
        lo = std::min(lo, op.start);
        hi = std::max(hi, op.end);
        matched_[it->second] = 1;
        any_matched = true;
        ++steps[s].gpu_ops;
      }
      ++c;
    } else if (api.start[a] < steps[s].host_end) {
      ++c;
    } else {
      first[s] = lo, last[s] = hi;
      lo = kMaxTime, hi = kMinTime;
      ++s;
    }
  }
  for (; s < n; ++s) {
    first[s] = lo, last[s] = hi;
    lo = kMaxTime, hi = kMinTime;
  }

  for (TbStep& st : steps) st.start = st.host_start, st.end = st.host_end;
  if (!any_matched) return;  // no GPU work launched inside any step: CPU windows as they are

  // Step 0 starts after the leftovers of the iteration before it: GPU operations launched outside
  // every step that end before step 0's first one.
  TimeNs prev = steps[0].host_start;
  if (first[0] != kMaxTime) {
    for (uint32_t op : in.gpu_ops) {
      if (!matched_[op] && ops_[op].end < first[0]) prev = std::max(prev, ops_[op].end);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    TbStep& st = steps[i];
    st.start = std::max(prev, st.host_start);
    st.end = std::max(st.host_end, first[i] == kMaxTime ? st.start : last[i]);
    st.end = std::max(st.end, st.start);
    prev = st.end;
  }

  // Trailing steps that launched nothing, and a last one with < 0.8x its predecessor's GPU
  // operations, were cut short by the end of the recording.
  if (n > 1) {
    size_t i = n;
    while (i > 0 && steps[i - 1].gpu_ops == 0) --i;
    if (i > 0) {
      size_t keep = i;
      if (i > 1 && static_cast<double>(steps[i - 2].gpu_ops) * 0.8 > static_cast<double>(steps[i - 1].gpu_ops))
        keep = i - 1;
      out.dropped_steps = static_cast<int64_t>(n - keep);
      steps.resize(keep);
    }
  }
}

// The plugin's OverallParser: each role takes what the earlier ones left of the steps' time.
void Builder::break_down(const UnitInput& in, TbUnit& out) const {
  std::vector<Interval> windows;
  for (const TbStep& s : out.steps) windows.push_back({s.start, s.end});
  const IntervalSet step_time = IntervalSet::busy_union(std::move(windows));
  IntervalSet claimed[kClaimingRoles];
  IntervalSet open = o_.reopen_claimed_time ? IntervalSet() : step_time;
  for (int r = 0; r < kClaimingRoles; ++r) {
    IntervalSet role = IntervalSet::busy_union(in.roles[r]);
    if (o_.reopen_claimed_time && open.empty()) {
      // The plugin's `if slots:` test: with nothing open, the role is taken whole and all the
      // steps' time opens again.
      claimed[r] = std::move(role);
      open = step_time;
    } else {
      claimed[r] = open.intersect(role);
    }
    open = open.subtract(claimed[r]);
  }
  for (TbStep& s : out.steps) {
    const Interval w{s.start, s.end};
    for (int r = 0; r < kClaimingRoles; ++r) s.role[r] = claimed[r].covered_within(w);
    s.role[static_cast<int>(TbRole::kOther)] = open.covered_within(w);
  }
}

Result<TbOverview> Builder::run() {
  if (t_.source.format != "kineto-json") return NoData("does not contain PyTorch profiler data.");
  gather();
  matched_.assign(ops_.size(), 0);
  TbOverview result;
  for (UnitInput& in : inputs_) {
    if (!in.has_cpu) continue;  // GPU work alone has no step (the plugin's would be (maxsize, -maxsize))
    TbUnit u;
    u.owner = in.owner;
    u.rank = t_.rank_of_tag(in.owner);
    u.steps = in.steps;
    if (u.steps.empty()) {
      if (in.cpu_min > in.cpu_max) continue;
      TbStep whole;
      whole.host_start = in.cpu_min;
      whole.host_end = in.cpu_max;
      u.steps.push_back(whole);
      u.whole_trace = true;
    }
    stretch_steps(in, u);
    break_down(in, u);
    result.units.push_back(std::move(u));
  }
  if (result.units.empty()) return NoData("has no CPU events to make a step of.");
  std::sort(result.units.begin(), result.units.end(),
            [](const TbUnit& a, const TbUnit& b) { return a.owner < b.owner; });
  result.gpus = tb_gpu_metrics(t_, result.units, o_);
  return result;
}

}  // namespace

const char* tb_role_name(TbRole role) {
  switch (role) {
    case TbRole::kKernel: return "Kernel";
    case TbRole::kMemcpy: return "Memcpy";
    case TbRole::kMemset: return "Memset";
    case TbRole::kCommunication: return "Communication";
    case TbRole::kRuntime: return "Runtime";
    case TbRole::kDataLoader: return "DataLoader";
    case TbRole::kCpuExec: return "CPU Exec";
    case TbRole::kOther: return "Other";
  }
  return "Other";
}

Result<TbOverview> tb_overview(const Trace& trace, const TbOptions& options) { return Builder(trace, options).run(); }

}  // namespace tracedoc::pytorch
