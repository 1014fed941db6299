#include "analysis/pytorch/python_functions.h"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/statistics.h"
#include "analysis/text_ids.h"
#include "common/flat_hash.h"

namespace tracedoc::pytorch {

namespace {

int64_t duration(const PythonFunctionTable& py, size_t i) { return sat_sub(py.end[i], py.start[i]); }

// Each row's caller by "Python parent id": the first row carrying that Python id. A parent id that
// names no row (a call that began before profiling did) leaves the row outermost.
std::vector<int32_t> parents_by_id(const PythonFunctionTable& py) {
  const size_t n = py.size();
  DenseIdMap ids;
  ids.reserve(n);
  std::vector<int32_t> row_of;  // dense id -> first row with that Python id
  row_of.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (py.python_id[i] == kNoValue) continue;
    if (ids.id(static_cast<uint64_t>(py.python_id[i])) == row_of.size()) row_of.push_back(static_cast<int32_t>(i));
  }
  std::vector<int32_t> parent(n, kNoRow);
  for (size_t i = 0; i < n; ++i) {
    if (py.parent_id[i] == kNoValue) continue;
    const uint32_t d = ids.find(static_cast<uint64_t>(py.parent_id[i]));
    if (d != DenseIdMap::kEmpty && row_of[d] != static_cast<int32_t>(i)) parent[i] = row_of[d];
  }
  return parent;
}

// A depth-first preorder over the parent links, callees in row (start time) order. Rows the walk
// from the outermost calls never reaches lie on, or hang off, a cycle of parent ids: the walk up
// from such a row repeats a row of the cycle, whose link is cut so that it starts a tree of its own.
std::vector<uint32_t> depth_first(std::vector<int32_t>& parent) {
  const size_t n = parent.size();
  std::vector<uint32_t> first(n + 1, 0), children(n);  // children of r: children[first[r], first[r + 1])
  for (int32_t p : parent)
    if (p != kNoRow) ++first[static_cast<size_t>(p) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<uint32_t> fill(first.begin(), first.end() - 1);
  for (uint32_t i = 0; i < n; ++i)
    if (parent[i] != kNoRow) children[fill[static_cast<size_t>(parent[i])]++] = i;

  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> order, stack;
  order.reserve(n);
  // Callees pushed last-first, so the first callee and its whole subtree come off the stack next.
  auto walk = [&](uint32_t root) {
    seen[root] = 1;
    stack.push_back(root);
    while (!stack.empty()) {
      const uint32_t r = stack.back();
      stack.pop_back();
      order.push_back(r);
      for (uint32_t k = first[r + 1]; k-- > first[r];) {
        if (!seen[children[k]]) seen[children[k]] = 1, stack.push_back(children[k]);
      }
    }
  };
  for (uint32_t i = 0; i < n; ++i)
    if (parent[i] == kNoRow) walk(i);
  if (order.size() < n) {
    std::vector<uint32_t> visit(n, UINT32_MAX);  // which start row's walk up reached a row
    for (uint32_t i = 0; i < n; ++i) {
      if (seen[i]) continue;
      uint32_t x = i;
      while (visit[x] != i) visit[x] = i, x = static_cast<uint32_t>(parent[x]);
      parent[x] = kNoRow;
      walk(x);
    }
  }
  return order;
}

// Without ids: each call inside the innermost call on its thread that contains it, as operators
// nest (op_links.h), the sorted walk being a preorder already.
std::vector<uint32_t> nest_by_time(const PythonFunctionTable& py, int64_t slack, std::vector<int32_t>& parent) {
  std::vector<uint32_t> order(py.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (py.global_tid[a] != py.global_tid[b]) return py.global_tid[a] < py.global_tid[b];
    if (py.start[a] != py.start[b]) return py.start[a] < py.start[b];
    if (py.end[a] != py.end[b]) return py.end[a] > py.end[b];
    return a < b;  // identical spans: the row written first is the caller
  });
  auto contains = [&](uint32_t p, uint32_t c) {  // c starts at or after p
    if (py.end[c] <= py.end[p]) return true;
    return slack > 0 && py.start[c] < py.end[p] && py.end[c] <= sat_add(py.end[p], slack);
  };
  std::vector<uint32_t> stack;
  int64_t tid = 0;
  for (uint32_t i : order) {
    if (stack.empty() || py.global_tid[i] != tid) {
      stack.clear();
      tid = py.global_tid[i];
    }
    while (!stack.empty() && !contains(stack.back(), i)) stack.pop_back();
    parent[i] = stack.empty() ? kNoRow : static_cast<int32_t>(stack.back());
    stack.push_back(i);
  }
  return order;
}

struct FunctionGroup {
  StrId name = kNoStr;  // the first row's id, for the label cell
  int64_t calls = 0, self = 0, total = 0, max = 0, threads = 0;
};

}  // namespace

PythonCallTree python_call_tree(const Trace& trace) {
  const PythonFunctionTable& py = trace.pytorch.python_functions;
  const size_t n = py.size();
  PythonCallTree tree;
  tree.by_parent_id = std::any_of(py.parent_id.begin(), py.parent_id.end(), [](int64_t p) { return p != kNoValue; });
  if (tree.by_parent_id) {
    tree.parent = parents_by_id(py);
    tree.preorder = depth_first(tree.parent);
  } else {
    tree.parent.assign(n, kNoRow);
    tree.preorder = nest_by_time(py, nesting_slack_ns(trace), tree.parent);
  }
  std::vector<int64_t> callee_time(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (tree.parent[i] == kNoRow) continue;
    int64_t& t = callee_time[static_cast<size_t>(tree.parent[i])];
    t = sat_add(t, duration(py, i));
  }
  // Callees can outlast their caller by a rounding step in µs traces, and by more when they run on
  // another thread: the self time stops at 0.
  tree.self.resize(n);
  for (size_t i = 0; i < n; ++i) tree.self[i] = std::max<int64_t>(0, sat_sub(duration(py, i), callee_time[i]));
  return tree;
}

Status python_func_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const PythonFunctionTable& py = trace.pytorch.python_functions;
  if (py.size() == 0) {
    if (trace.pytorch.python_function_count > 0) {
      return no_data(trace,
                     "has python_function events, but none was stored (read with kLoadPythonFunctions; "
                     "calls without a timestamp are skipped).");
    }
    return no_data(trace,
                   "does not contain Python function data (python_function events): record the trace "
                   "with torch.profiler.profile(with_stack=True).");
  }
  const PythonCallTree tree = python_call_tree(trace);

  TextIds texts(trace);
  DenseIdMap group_ids, thread_ids, group_threads;
  std::vector<FunctionGroup> groups;
  std::vector<uint32_t> group(py.size());
  for (size_t i = 0; i < py.size(); ++i) {
    const uint32_t g = group_ids.id(texts.of(py.name[i]));
    if (g == groups.size()) groups.push_back({py.name[i]});
    group[i] = g;
    FunctionGroup& f = groups[g];
    const int64_t d = duration(py, i);
    ++f.calls;
    f.self = sat_add(f.self, tree.self[i]);
    f.max = std::max(f.max, d);
    const uint64_t thread = thread_ids.id(static_cast<uint64_t>(py.global_tid[i]));
    const size_t pairs = group_threads.size();
    if (group_threads.id((uint64_t{g} << 32) | thread) == pairs) ++f.threads;
  }

  // Totals: only calls with no caller of the same function on their chain, so a recursion's time is
  // counted once. The preorder walk keeps the chain on the stack and counts each group's calls on it.
  std::vector<uint32_t> open(groups.size(), 0);
  std::vector<uint32_t> stack;
  for (uint32_t i : tree.preorder) {
    while (!stack.empty() && static_cast<int32_t>(stack.back()) != tree.parent[i]) {
      --open[group[stack.back()]];
      stack.pop_back();
    }
    FunctionGroup& f = groups[group[i]];
    if (open[group[i]] == 0) f.total = sat_add(f.total, duration(py, i));
    ++open[group[i]];
    stack.push_back(i);
  }

  std::vector<uint32_t> order;
  int64_t grand_self = 0;
  for (uint32_t g = 0; g < groups.size(); ++g) {
    if (!args.name_ok(trace.str(groups[g].name))) continue;
    order.push_back(g);
    grand_self = sat_add(grand_self, groups[g].self);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (groups[a].self != groups[b].self) return groups[a].self > groups[b].self;
    if (int c = trace.str(groups[a].name).compare(trace.str(groups[b].name)); c != 0) return c < 0;
    return a < b;
  });

  sink.begin({{"Self Time", Unit::kRatioPct},
              {"Self Time", Unit::kDurNs},
              {"Total Time", Unit::kDurNs},
              {"Calls", Unit::kNone},
              {"Avg", Unit::kDurNs},
              {"Max", Unit::kDurNs},
              {"Threads", Unit::kNone},
              {"Function", Unit::kNone}});
  std::vector<Cell> row;
  for (uint32_t g : order) {
    const FunctionGroup& f = groups[g];
    row.clear();
    row.push_back(grand_self == 0 ? Cell::null()
                                  : Cell::real(sqlite_round(
                                        static_cast<double>(f.self) * 100.0 / static_cast<double>(grand_self), 1)));
    row.push_back(Cell::integer(f.self));
    row.push_back(Cell::integer(f.total));
    row.push_back(Cell::integer(f.calls));
    row.push_back(Cell::real(sqlite_round(static_cast<double>(f.total) / static_cast<double>(f.calls), 1)));
    row.push_back(Cell::integer(f.max));
    row.push_back(Cell::integer(f.threads));
    row.push_back(Cell::pooled(trace.str(f.name)));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
