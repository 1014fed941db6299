#include "analysis/pytorch/op_links.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "common/flat_hash.h"

namespace tracedoc::pytorch {

namespace {

// Era 4 and later write "us.nnn" timestamps, exact to the ns; the earlier ones (and PyTorch's legacy
// exporter, era 0) write integer µs.
constexpr int kFirstNsEra = 4;
constexpr int64_t kMicrosecondSlackNs = 1000;

// Nests every operator under the innermost operator on its thread that contains it. `order` is the
// sorted walk, so the stack always holds the chain of ancestors of the last operator seen.
void nest_ops(const OpTable& ops, int64_t slack, OpLinks& links) {
  const size_t n = ops.size();
  auto contains = [&](uint32_t p, uint32_t c) {  // c starts at or after p (sorted)
    if (ops.end[c] <= ops.end[p]) return true;
    // Truncated µs: a child that starts inside may seem to end just after its parent.
    return slack > 0 && ops.start[c] < ops.end[p] && ops.end[c] <= ops.end[p] + slack;
  };
  std::vector<int64_t> child_time(n, 0);
  std::vector<uint32_t> stack;
  int64_t tid = 0;
  for (uint32_t i : links.order) {
    if (stack.empty() || ops.global_tid[i] != tid) {
      stack.clear();
      tid = ops.global_tid[i];
    }
    while (!stack.empty() && !contains(stack.back(), i)) stack.pop_back();
    const int32_t parent = stack.empty() ? kNoRow : static_cast<int32_t>(stack.back());
    links.parent[i] = parent;
    if (parent != kNoRow) child_time[parent] += ops.end[i] - ops.start[i];
    stack.push_back(i);
  }
  for (size_t i = 0; i < n; ++i) {
    links.cpu_self[i] = std::max<int64_t>(0, ops.end[i] - ops.start[i] - child_time[i]);
  }
}

// For every API call, the innermost operator holding its start: one merged walk over the operators
// and the calls, both sorted by (thread, start). The stack is again the ancestor chain; an operator
// that ended before the current call can hold neither this call nor any later call or operator of
// the thread, so it is popped for good.
void attribute_api_calls(const Trace& trace, OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  const ApiTable& api = trace.api;
  std::vector<uint32_t> calls(api.size());
  std::iota(calls.begin(), calls.end(), 0u);
  std::sort(calls.begin(), calls.end(), [&](uint32_t a, uint32_t b) {
    if (api.global_tid[a] != api.global_tid[b]) return api.global_tid[a] < api.global_tid[b];
    if (api.start[a] != api.start[b]) return api.start[a] < api.start[b];
    return a < b;
  });
  std::vector<uint32_t> stack;
  size_t next = 0;  // position in links.order
  bool first = true;
  int64_t tid = 0;
  for (uint32_t a : calls) {
    const int64_t call_tid = api.global_tid[a];
    const TimeNs t = api.start[a];
    if (first || call_tid != tid) {
      stack.clear();
      tid = call_tid;
      first = false;
    }
    while (next < links.order.size()) {
      const uint32_t i = links.order[next];
      if (ops.global_tid[i] > tid || (ops.global_tid[i] == tid && ops.start[i] > t)) break;
      ++next;
      if (ops.global_tid[i] != tid) continue;  // a thread that made no API calls
      while (!stack.empty() && static_cast<int32_t>(stack.back()) != links.parent[i]) stack.pop_back();
      stack.push_back(i);
    }
    while (!stack.empty() && ops.end[stack.back()] < t) stack.pop_back();
    links.api_op[a] = stack.empty() ? kNoRow : static_cast<int32_t>(stack.back());
  }
}

// Correlation id -> API call, by binary search over the sorted (id, row) pairs.
// API calls by correlation id: a flat hash from id to the first call with it, calls sharing an id
// chained in table order. One or two array reads per lookup, where a binary search over millions of
// calls missed the cache twenty times.
class CorrelationIndex {
 public:
  explicit CorrelationIndex(const ApiTable& api) : api_(api) {
    ids_.reserve(api.size());
    next_.assign(api.size(), kNoRow);
    std::vector<int32_t> tail;
    for (size_t a = 0; a < api.size(); ++a) {
      const int64_t c = api.correlation[a];
      if (c == kNoValue) continue;
      const uint32_t id = ids_.id(static_cast<uint64_t>(c));
      if (id == head_.size()) {
        head_.push_back(static_cast<int32_t>(a));
        tail.push_back(static_cast<int32_t>(a));
      } else {
        next_[static_cast<size_t>(tail[id])] = static_cast<int32_t>(a);
        tail[id] = static_cast<int32_t>(a);
      }
    }
  }

  // The call with this id in this process; else the first call with this id; else kNoRow.
  int32_t find(int64_t correlation, int64_t global_pid) const {
    if (correlation == kNoValue) return kNoRow;
    const uint32_t id = ids_.find(static_cast<uint64_t>(correlation));
    if (id == DenseIdMap::kEmpty) return kNoRow;
    const int32_t first = head_[id];
    for (int32_t a = first; a != kNoRow; a = next_[static_cast<size_t>(a)]) {
      if (global_pid_of(api_.global_tid[static_cast<size_t>(a)]) == global_pid) return a;
    }
    return first;
  }

 private:
  const ApiTable& api_;
  DenseIdMap ids_;
  std::vector<int32_t> head_, next_;
};

template <typename Table>
void link_activity(const Table& table, const CorrelationIndex& index, std::vector<int32_t>& out) {
  out.resize(table.size());
  for (size_t r = 0; r < table.size(); ++r) out[r] = index.find(table.correlation[r], table.global_pid[r]);
}

}  // namespace

GpuLaunches link_gpu_launches(const Trace& trace) {
  const CorrelationIndex index(trace.api);
  GpuLaunches out;
  link_activity(trace.kernels, index, out.api[static_cast<int>(GpuKind::kKernel)]);
  link_activity(trace.memcpys, index, out.api[static_cast<int>(GpuKind::kMemcpy)]);
  link_activity(trace.memsets, index, out.api[static_cast<int>(GpuKind::kMemset)]);
  return out;
}

int64_t nesting_slack_ns(const Trace& trace) {
  return trace.pytorch.era >= kFirstNsEra ? 0 : kMicrosecondSlackNs;
}

OpLinks link_ops(const Trace& trace) {
  const OpTable& ops = trace.pytorch.ops;
  const size_t n = ops.size();
  OpLinks links;
  links.parent.assign(n, kNoRow);
  links.cpu_self.assign(n, 0);
  links.gpu_self.assign(n, 0);
  links.gpu_total.assign(n, 0);
  links.kernels_self.assign(n, 0);
  links.order.resize(n);
  std::iota(links.order.begin(), links.order.end(), 0u);
  std::sort(links.order.begin(), links.order.end(), [&](uint32_t a, uint32_t b) {
    if (ops.global_tid[a] != ops.global_tid[b]) return ops.global_tid[a] < ops.global_tid[b];
    if (ops.start[a] != ops.start[b]) return ops.start[a] < ops.start[b];
    if (ops.end[a] != ops.end[b]) return ops.end[a] > ops.end[b];
    return a < b;  // identical spans: the row written first is the parent
  });
  nest_ops(ops, nesting_slack_ns(trace), links);

  links.api_op.assign(trace.api.size(), kNoRow);
  attribute_api_calls(trace, links);

  links.launches = link_gpu_launches(trace);

  auto add_gpu = [&](GpuKind kind, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
    for (size_t r = 0; r < start.size(); ++r) {
      const int32_t op = links.launching_op(kind, r);
      if (op == kNoRow) continue;
      links.gpu_self[op] += end[r] - start[r];
      if (kind == GpuKind::kKernel) ++links.kernels_self[op];
    }
  };
  add_gpu(GpuKind::kKernel, trace.kernels.start, trace.kernels.end);
  add_gpu(GpuKind::kMemcpy, trace.memcpys.start, trace.memcpys.end);
  add_gpu(GpuKind::kMemset, trace.memsets.start, trace.memsets.end);

  links.gpu_total = links.gpu_self;
  for (auto it = links.order.rbegin(); it != links.order.rend(); ++it) {
    const int32_t p = links.parent[*it];
    if (p != kNoRow) links.gpu_total[p] += links.gpu_total[*it];
  }
  return links;
}

std::vector<uint8_t> nested_in_same_group(const OpLinks& links, std::span<const uint32_t> group, uint32_t group_count) {
  std::vector<uint8_t> nested(group.size(), 0);
  std::vector<uint32_t> open(group_count, 0);  // operators of each group on the ancestor chain
  std::vector<uint32_t> stack;
  for (uint32_t i : links.order) {
    // Preorder walk: the parent is on the stack (or the operator is a root and the stack empties).
    while (!stack.empty() && static_cast<int32_t>(stack.back()) != links.parent[i]) {
      --open[group[stack.back()]];
      stack.pop_back();
    }
    nested[i] = open[group[i]] > 0 ? 1 : 0;
    ++open[group[i]];
    stack.push_back(i);
  }
  return nested;
}

}  // namespace tracedoc::pytorch
