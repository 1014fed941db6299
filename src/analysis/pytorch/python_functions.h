// Python function time of a PyTorch trace: the `python_function` events the profiler records with
// `with_stack=True` (Trace::pytorch.python_functions, stored only when read with
// kLoadPythonFunctions), nested into a call tree and summed per function.
//
// The tree comes from Kineto's own ids where the trace has them: every call carries a "Python id",
// and its caller's as "Python parent id" (null for an outermost call, or naming a call that began
// before the profiler did, which is then left out). Traces without parent ids are nested by time
// containment per thread, as operators are (op_links.h).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/nsys_stats/time_summary.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

struct PythonCallTree {
  bool by_parent_id = false;    // from "Python parent id" (any row has one), else time nesting
  std::vector<int32_t> parent;  // per row: the caller's row, -1 for an outermost call
  std::vector<int64_t> self;    // per row: duration minus the direct callees' durations, clamped at 0
  // Every row, each after its caller and a caller's whole subtree before the next sibling of the
  // caller (a depth-first preorder), so a stack walk sees each row's ancestor chain.
  std::vector<uint32_t> preorder;
};

// Builds the tree. By ids, a callee may run on another thread than its caller (the autograd
// thread's checkpoint hooks name the main thread's run_backward) and still counts as its child.
// Ids that repeat keep their first row; a cycle of parent ids (not written by any profiler) is cut
// at one of its rows, which becomes outermost. O(n) by ids, O(n log n) by time.
PythonCallTree python_call_tree(const Trace& trace);

// python_func_sum — Python Function Summary: one row per function name (the event name,
// "torch/nn/modules/module.py(1501): _call_impl"). Columns: Self Time (%) (share of the self time
// of all rows shown), Self Time (duration minus direct callees), Total Time (duration; a call inside
// a call of the same function is counted once, through its outermost one), Calls, Avg (Total / Calls),
// Max (longest single call), Threads (distinct threads that ran it), Function. Sorted by self time
// descending, then name. NoData when the trace holds no python_function events.
Status python_func_sum(const Trace&, const ReportArgs&, RowSink&);

}  // namespace tracedoc::pytorch
