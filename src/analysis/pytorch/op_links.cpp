#include "analysis/pytorch/op_links.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>

#include "model/correlation_index.h"

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

// Row indices ordered by (thread, start, `tie_first` on equal starts, row). The readers keep every
// table in start order, so grouping the rows by thread, stably, gives (thread, start) order in
// linear time and only runs of equal starts (a few rows each) need sorting: on a merged 64-rank
// directory this replaced the largest serial part of the summary. A table not in start order is
// sorted outright; the result is the same either way.
template <typename TieFirst>
std::vector<uint32_t> by_thread_then_start(const std::vector<int64_t>& tid, const std::vector<TimeNs>& start,
                                           TieFirst tie_first) {
  const size_t n = tid.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto less = [&](uint32_t a, uint32_t b) {
    if (tid[a] != tid[b]) return tid[a] < tid[b];
    if (start[a] != start[b]) return start[a] < start[b];
    if (tie_first(a, b)) return true;
    if (tie_first(b, a)) return false;
    return a < b;
  };
  if (!std::is_sorted(start.begin(), start.end())) {
    std::sort(order.begin(), order.end(), less);
    return order;
  }
  // Dense thread numbers in thread order, then a stable counting sort by them.
  std::unordered_map<int64_t, uint32_t> dense;
  for (int64_t t : tid) dense.try_emplace(t, 0);
  std::vector<int64_t> threads;
  threads.reserve(dense.size());
  for (const auto& [t, _] : dense) threads.push_back(t);
  std::sort(threads.begin(), threads.end());
  for (uint32_t k = 0; k < threads.size(); ++k) dense[threads[k]] = k;
  std::vector<size_t> first(threads.size() + 1, 0);
  std::vector<uint32_t> group(n);
  for (size_t i = 0; i < n; ++i) ++first[(group[i] = dense[tid[i]]) + 1];
  for (size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
  for (uint32_t i = 0; i < n; ++i) order[first[group[i]]++] = i;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && tid[order[j]] == tid[order[i]] && start[order[j]] == start[order[i]]) ++j;
    if (j - i > 1)
      std::sort(order.begin() + static_cast<std::ptrdiff_t>(i), order.begin() + static_cast<std::ptrdiff_t>(j), less);
    i = j;
  }
  return order;
}

// For every API call, the innermost operator holding its start: one merged walk over the operators
// and the calls, both sorted by (thread, start). The stack is again the ancestor chain; an operator
// that ended before the current call can hold neither this call nor any later call or operator of
// the thread, so it is popped for good.
void attribute_api_calls(const Trace& trace, OpLinks& links) {
  const OpTable& ops = trace.pytorch.ops;
  const ApiTable& api = trace.api;
  const std::vector<uint32_t> calls =
      by_thread_then_start(api.global_tid, api.start, [](uint32_t, uint32_t) { return false; });
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

// Only PyTorch profiler traces round to microseconds: nsys exports and captures are ns-exact.
int64_t nesting_slack_ns(const Trace& trace) {
  return trace.source.format != "kineto-json" || trace.pytorch.era >= kFirstNsEra ? 0 : kMicrosecondSlackNs;
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
  // (thread, start, longer first, row): identical spans put the row written first as the parent.
  links.order =
      by_thread_then_start(ops.global_tid, ops.start, [&](uint32_t a, uint32_t b) { return ops.end[a] > ops.end[b]; });
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
