#include "analysis/pytorch/dispatch_overhead.h"

#include <algorithm>
#include <numeric>

#include "analysis/checked_math.h"
#include "analysis/text_ids.h"
#include "common/flat_hash.h"

namespace tracedoc::pytorch {

namespace {

// Per operator, the union of its direct API calls clipped to the operator. The calls are visited
// grouped by operator and in start order, so one merge pass per operator suffices.
std::vector<int64_t> direct_api_time(const Trace& trace, const OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  const ApiTable& api = trace.api;
  std::vector<uint32_t> calls;
  calls.reserve(api.size());
  for (uint32_t a = 0; a < api.size(); ++a) {
    if (links.api_op[a] != kNoRow) calls.push_back(a);
  }
  std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    if (links.api_op[a] != links.api_op[b]) return links.api_op[a] < links.api_op[b];
    if (api.start[a] != api.start[b]) return api.start[a] < api.start[b];
    return a < b;
  });
  std::vector<int64_t> time(ops.size(), 0);
  int32_t op = kNoRow;
  TimeNs covered_to = 0;  // end of the union so far within the current operator
  for (uint32_t a : calls) {
    const int32_t o = links.api_op[a];
    if (o != op) {
      op = o;
      covered_to = ops.start[o];
    }
    const TimeNs from = std::max(api.start[a], covered_to);
    const TimeNs to = std::min(api.end[a], ops.end[o]);
    if (to > from) {
      time[o] = sat_add(time[o], to - from);
      covered_to = to;
    }
  }
  return time;
}

}  // namespace

DispatchOverhead dispatch_overhead(const Trace& trace, const OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  const std::vector<int64_t> api_time = direct_api_time(trace, links);
  DispatchOverhead out;
  TextIds texts(trace);
  DenseIdMap group_ids;
  for (size_t i = 0; i < ops.size(); ++i) {
    const uint32_t g = group_ids.id(texts.of(ops.name[i]));
    if (g == out.ops.size()) out.ops.push_back({ops.name[i]});
    DispatchGroup& d = out.ops[g];
    const int64_t self = links.cpu_self[i];
    const int64_t api = std::min(api_time[i], self);
    const int64_t framework = self - api;
    ++d.calls;
    d.kernels += links.kernels_self[i];
    d.cpu_self = sat_add(d.cpu_self, self);
    d.api = sat_add(d.api, api);
    d.framework = sat_add(d.framework, framework);
    d.gpu_self = sat_add(d.gpu_self, links.gpu_self[i]);
    if (links.gpu_self[i] > 0 || links.kernels_self[i] > 0) {
      out.launching_framework = sat_add(out.launching_framework, framework);
      out.launching_gpu = sat_add(out.launching_gpu, links.gpu_self[i]);
    }
  }
  for (const DispatchGroup& d : out.ops) {
    out.cpu_self = sat_add(out.cpu_self, d.cpu_self);
    out.api = sat_add(out.api, d.api);
    out.framework = sat_add(out.framework, d.framework);
    out.gpu_self = sat_add(out.gpu_self, d.gpu_self);
    out.kernels += d.kernels;
  }
  std::sort(out.ops.begin(), out.ops.end(), [&](const DispatchGroup& x, const DispatchGroup& y) {
    if (x.framework != y.framework) return x.framework > y.framework;
    return trace.str(x.name) < trace.str(y.name);
  });
  return out;
}

}  // namespace tracedoc::pytorch
