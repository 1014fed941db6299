#include "analysis/gpu_activity.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tracedoc {

bool is_cuda_profiling_overhead(std::string_view name) {
  return name == "CUDA profiling data flush overhead" || name == "CUDA profiling stop overhead" ||
         name == "CUDA profiling overhead";
}

IntervalSet DeviceActivity::busy() const {
  std::vector<Interval> spans;
  spans.reserve(ops.size());
  for (const GpuOp& op : ops) spans.push_back({op.start, op.end});
  return IntervalSet::busy_union(std::move(spans));
}

namespace {

// Keyed by (pid, vm, device): nsys orders by the 24-bit pid; the vm bits only separate the ranks
// of a merged PyTorch directory, whose pids may repeat across nodes.
using DeviceKey = std::tuple<int64_t, int64_t, int32_t>;

DeviceKey key_of(int64_t global_pid, int32_t device) { return {pid_of(global_pid), global_pid >> 48, device}; }

template <typename Table>
void add_ops(const Table& t, GpuOpKind kind, const GpuActivityOptions& options,
             std::map<DeviceKey, DeviceActivity>& devices) {
  DeviceActivity* last = nullptr;  // consecutive rows are mostly on one device: skip the map lookup
  int64_t last_pid = 0;
  int32_t last_device = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.start[i] == kNoTime || t.end[i] == kNoTime) continue;
    if (options.skip_nonpositive_starts && t.start[i] <= 0) continue;
    bool fresh = false;
    if (!last || last_pid != t.global_pid[i] || last_device != t.device[i]) {
      auto [it, inserted] = devices.try_emplace(key_of(t.global_pid[i], t.device[i]));
      last = &it->second, last_pid = t.global_pid[i], last_device = t.device[i], fresh = inserted;
    }
    DeviceActivity& d = *last;
    if (fresh) {
      d.global_pid = global_pid_of(t.global_pid[i]);
      d.device = t.device[i];
      d.context = t.context[i];
      d.first_start = t.start[i];
      d.last_end = t.end[i];
    }
    d.first_start = std::min(d.first_start, t.start[i]);
    d.last_end = std::max(d.last_end, t.end[i]);
    d.ops.push_back({t.start[i], t.end[i], kind, static_cast<uint32_t>(i)});
  }
}

}  // namespace

std::vector<DeviceActivity> collect_gpu_activity(const Trace& trace, const GpuActivityOptions& options) {
  std::map<DeviceKey, DeviceActivity> devices;
  add_ops(trace.kernels, GpuOpKind::kKernel, options, devices);
  add_ops(trace.memcpys, GpuOpKind::kMemcpy, options, devices);
  add_ops(trace.memsets, GpuOpKind::kMemset, options, devices);
  if (options.include_graphs) add_ops(trace.graph_traces, GpuOpKind::kGraph, options, devices);

  if (options.include_overhead && trace.overhead.size() > 0) {
    // Overhead is recorded per CPU thread; it stalls every device of that thread's process.
    const auto& o = trace.overhead;
    for (size_t i = 0; i < o.size(); ++i) {
      if (o.start[i] == kNoTime || o.end[i] == kNoTime || o.name[i] == kNoStr) continue;
      if (!is_cuda_profiling_overhead(trace.str(o.name[i]))) continue;
      const int64_t pid = pid_of(o.global_tid[i]);
      for (auto& [key, d] : devices) {
        if (d.pid() != pid) continue;
        if (o.start[i] > d.first_start && o.end[i] < d.last_end) {
          d.ops.push_back({o.start[i], o.end[i], GpuOpKind::kOverhead, static_cast<uint32_t>(i)});
        }
      }
    }
  }

  std::vector<DeviceActivity> out;
  out.reserve(devices.size());
  for (auto& [key, d] : devices) {
    auto by_time = [](const GpuOp& a, const GpuOp& b) { return std::tie(a.start, a.end) < std::tie(b.start, b.end); };
    if (!std::is_sorted(d.ops.begin(), d.ops.end(), by_time)) std::sort(d.ops.begin(), d.ops.end(), by_time);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace tracedoc
