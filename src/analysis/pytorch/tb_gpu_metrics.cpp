// The GPU metrics of the TensorBoard plugin's Overview (gpu_metrics_parser.py, tensor_cores_parser.py,
// docs/gpu_utilization.md), per GPU of each unit over the window of its steps.
#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <utility>

#include "analysis/checked_math.h"
#include "analysis/intervals.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/pytorch/tb_overview.h"
#include "analysis/pytorch/gpu_work.h"

namespace tracedoc::pytorch {

namespace {

// Est. SM efficiency: the share of the GPU's SMs the running kernels can occupy (a kernel: its blocks
// over the SM count; concurrent kernels add up, to at most all SMs), integrated over the window. The
// plugin's merge_ranges_with_value sweep: at equal times starts come before ends; NaN when no
// kernel with a known grid runs inside the window.
double sm_efficiency(const KernelTable& k, const std::vector<uint32_t>& rows, int64_t sm_count, Interval window) {
  if (sm_count <= 0 || window.end <= window.start) return std::numeric_limits<double>::quiet_NaN();
  struct Edge {
    TimeNs time;
    int kind;  // 0 start, 1 end
    double value;
  };
  std::vector<Edge> edges;
  for (uint32_t r : rows) {
    const int64_t blocks = int64_t{k.grid_x[r]} * k.grid_y[r] * k.grid_z[r];
    if (blocks <= 0) continue;  // no grid recorded (ROCm kernels)
    const double per_sm = static_cast<double>(blocks) / static_cast<double>(sm_count);
    edges.push_back({k.start[r], 0, per_sm});
    edges.push_back({k.end[r], 1, per_sm});
  }
  std::stable_sort(edges.begin(), edges.end(),
                   [](const Edge& a, const Edge& b) { return a.time != b.time ? a.time < b.time : a.kind < b.kind; });
  double weighted = 0;
  bool any = false;
  double load = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i > 0 && edges[i].time > edges[i - 1].time && load > 0.0) {
      const TimeNs from = std::max(edges[i - 1].time, window.start), to = std::min(edges[i].time, window.end);
      if (from < to) {
        weighted += std::min(load, 1.0) * static_cast<double>(sat_sub(to, from));
        any = true;
      }
    }
    load += edges[i].kind == 0 ? edges[i].value : -edges[i].value;
  }
  return any ? weighted / static_cast<double>(sat_sub(window.end, window.start))
             : std::numeric_limits<double>::quiet_NaN();
}

// Kineto's est. achieved occupancy (%), averaged over the kernels weighted by their time inside the
// window; kernels without it (or with a negative one) are left out.
double mean_occupancy(const KernelTable& k, const std::vector<uint32_t>& rows, Interval window) {
  if (k.est_occupancy.size() != k.size()) return std::numeric_limits<double>::quiet_NaN();
  double weighted = 0;
  int64_t time = 0;
  for (uint32_t r : rows) {
    const double occupancy = k.est_occupancy[r];
    if (!(occupancy >= 0.0)) continue;  // NaN: not recorded
    const TimeNs from = std::max(k.start[r], window.start), to = std::min(k.end[r], window.end);
    if (from >= to) continue;
    weighted += occupancy * static_cast<double>(sat_sub(to, from));
    time = sat_add(time, sat_sub(to, from));
  }
  return time > 0 ? weighted / static_cast<double>(time) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

bool is_tensor_core_kernel(std::string_view name) {
  // tb_plugin's TC_Allowlist, after NVIDIA PyProf (prof/tc.py): fragments of cuBLAS/cuDNN kernel
  // names that use tensor cores. Kernels of later libraries (CUTLASS sm90_*, flash attention, Triton)
  // are not in it, as in the plugin.
  static constexpr std::string_view kFragments[] = {"h884",
                                                    "s884",
                                                    "h1688",
                                                    "s1688",
                                                    "hmma",
                                                    "i8816",
                                                    "16816",
                                                    "dgrad_1x1_stride_2x2",
                                                    "first_layer_wgrad_kernel",
                                                    "conv1x1",
                                                    "conv2d_c1_k1",
                                                    "direct_group",
                                                    "xmma_implicit_gemm",
                                                    "xmma_sparse_conv",
                                                    "xmma_warp_specialized_implicit_gemm",
                                                    "xmma_gemm",
                                                    "xmma_sparse_gemm",
                                                    "c1688"};
  for (std::string_view f : kFragments) {
    if (name.find(f) != std::string_view::npos) return true;
  }
  return false;
}

std::vector<TbGpuMetrics> tb_gpu_metrics(const Trace& trace, const std::vector<TbUnit>& units,
                                         const TbOptions& options) {
  const KernelTable& k = trace.kernels;
  // The plugin's Tensor Cores share sees only kernels launched by a runtime call (difference 2).
  std::vector<uint8_t> counted(k.size(), 1);
  if (options.ignore_driver_calls) {
    const GpuLaunches launches = link_gpu_launches(trace);
    for (size_t r = 0; r < k.size(); ++r) {
      const int32_t a = launches.of(GpuKind::kKernel, r);
      counted[r] = a != kNoRow && static_cast<ApiClass>(trace.api.api_class[a]) == ApiClass::kCudaRuntime;
    }
  }
  std::map<int64_t, const TbUnit*> unit_of;
  for (const TbUnit& u : units) {
    if (!u.steps.empty()) unit_of[u.owner] = &u;
  }
  std::map<int32_t, int64_t> sm_count;
  for (const DeviceInfo& d : trace.devices) sm_count[d.id] = d.sm_count;

  std::map<std::pair<int64_t, int32_t>, std::vector<uint32_t>> groups;
  for (size_t r = 0; r < k.size(); ++r)
    groups[{rank_tag_of(k.global_pid[r]), k.device[r]}].push_back(static_cast<uint32_t>(r));

  std::vector<TbGpuMetrics> out;
  for (const auto& [key, rows] : groups) {
    auto u = unit_of.find(key.first);
    if (u == unit_of.end()) continue;  // a process without steps has no window
    TbGpuMetrics m;
    m.owner = key.first;
    m.rank = u->second->rank;
    m.device = key.second;
    m.window_start = u->second->steps.front().start;
    m.window_end = u->second->steps.back().end;
    const Interval window{m.window_start, m.window_end};
    m.kernels = static_cast<int64_t>(rows.size());

    std::vector<Interval> busy;
    busy.reserve(rows.size());
    for (uint32_t r : rows) {
      busy.push_back({k.start[r], k.end[r]});
      if (!counted[r]) continue;
      m.kernel_time = sat_add(m.kernel_time, sat_sub(k.end[r], k.start[r]));
      if (is_tensor_core_kernel(trace.str(k.name[r])))
        m.tensor_core_time = sat_add(m.tensor_core_time, sat_sub(k.end[r], k.start[r]));
    }
    m.busy = IntervalSet::busy_union(std::move(busy)).covered_within(window);
    if (window.end > window.start)
      m.utilization = static_cast<double>(m.busy) / static_cast<double>(sat_sub(window.end, window.start));
    const auto sms = sm_count.find(m.device);
    m.sm_efficiency = sm_efficiency(k, rows, sms == sm_count.end() ? 0 : sms->second, window);
    m.occupancy = mean_occupancy(k, rows, window);
    if (m.kernel_time > 0)
      m.tensor_cores = static_cast<double>(m.tensor_core_time) / static_cast<double>(m.kernel_time);
    out.push_back(m);
  }
  return out;
}

}  // namespace tracedoc::pytorch
