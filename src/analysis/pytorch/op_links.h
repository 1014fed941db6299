// Links of a PyTorch profiler trace, computed once per Trace: which operator runs inside which
// (nesting by time containment per CPU thread), which operator made each CUDA API call, which API
// call launched each GPU activity, and from these the CPU self time and the GPU self/total time of
// every operator.
//
// Kineto writes no parent ids for operators and, in the 2022-early 2024 traces, no usable op ->
// kernel id either (External id on the GPU side is the correlation id there), so everything is
// derived from time containment and CUPTI correlation ids, which every era has.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/trace.h"

namespace tracedoc::pytorch {

inline constexpr int32_t kNoRow = -1;

// Kinds of GPU activity, to index GpuLaunches::api.
enum class GpuKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// Per GPU activity (rows of Trace::kernels / memcpys / memsets, indexed by GpuKind): the API call
// with the same correlation id, kNoRow when none. A CUDA-graph launch is one call for many kernels.
struct GpuLaunches {
  std::vector<int32_t> api[3];
  int32_t of(GpuKind kind, size_t row) const { return api[static_cast<int>(kind)][row]; }
};

// Links every GPU activity to its API call. Correlation ids are unique per process, not across the
// ranks of a merged trace: among calls sharing an id, the one in the activity's own process wins.
GpuLaunches link_gpu_launches(const Trace& trace);

struct OpLinks {
  // Per operator (rows of Trace::pytorch.ops).
  std::vector<int32_t> parent;        // enclosing operator on the same thread, kNoRow for roots
  std::vector<int64_t> cpu_self;      // duration minus the direct children's durations, >= 0
  std::vector<int64_t> gpu_self;      // GPU time launched by API calls made directly in the op
  std::vector<int64_t> gpu_total;     // gpu_self plus that of every descendant
  std::vector<int64_t> kernels_self;  // kernels launched directly by the op
  // Operators sorted by (global_tid, start, end descending, row): a parent always comes before its
  // children, so a reverse walk visits children first.
  std::vector<uint32_t> order;

  // Per API call (rows of Trace::api): the innermost operator on the same thread whose [start, end]
  // holds the call's start, kNoRow when none.
  std::vector<int32_t> api_op;

  GpuLaunches launches;

  // The operator that launched a GPU activity, kNoRow when unknown.
  int32_t launching_op(GpuKind kind, size_t row) const {
    const int32_t a = launches.of(kind, row);
    return a == kNoRow ? kNoRow : api_op[a];
  }
};

// How far (ns) a child may end after its parent and still count as nested. Traces with integer-µs
// timestamps truncate start and duration separately, so a child can appear to end up to 1 µs after
// its parent; the ns-exact traces (eras 4 and 5) need no slack.
int64_t nesting_slack_ns(const Trace& trace);

// Computes every link above. O(n log n) in the number of operators, API calls and GPU activities.
OpLinks link_ops(const Trace& trace);

// For grouping operators (by name, or by name and input shapes): true for each operator that has an
// ancestor in the same group, whose time its outermost same-group ancestor already counts. `group`
// holds one group id per operator, each below `group_count`.
std::vector<uint8_t> nested_in_same_group(const OpLinks& links, std::span<const uint32_t> group, uint32_t group_count);

}  // namespace tracedoc::pytorch
