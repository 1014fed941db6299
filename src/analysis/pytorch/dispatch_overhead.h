// Framework dispatch overhead of a PyTorch trace: how much CPU time the framework itself spends in
// each operator, outside the CUDA calls it makes, against the GPU time that operator launches.
//
// Definitions (per operator instance, op_links.h gives the nesting and launches):
//   CPU self    the operator's duration minus its direct child operators' durations
//   CUDA API    the union of the runtime/driver calls made directly in it (not in a child), clipped
//               to the operator (a driver call inside a runtime call counts once)
//   framework   CPU self minus CUDA API, never below 0: Python binding, argument checks, dispatcher,
//               autograd bookkeeping, allocator work — the host work that no GPU can hide when the
//               GPU waits for launches
//   GPU self    GPU time of the kernels, copies and memsets launched by those direct calls
// An operator whose framework time is large against its GPU self time keeps the GPU waiting when it
// is on the critical path; many such operators make a step launch-bound (CUDA graphs and
// torch.compile remove the dispatch).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/pytorch/op_links.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

struct DispatchGroup {
  StrId name = kNoStr;  // operator name (first row's id)
  int64_t calls = 0, kernels = 0;
  int64_t cpu_self = 0, api = 0, framework = 0, gpu_self = 0;
};

struct DispatchOverhead {
  std::vector<DispatchGroup> ops;  // one per operator name, framework time descending, then name
  int64_t cpu_self = 0, api = 0, framework = 0, gpu_self = 0, kernels = 0;  // totals over all ops
  // The same totals restricted to the operators that launched GPU work directly.
  int64_t launching_framework = 0, launching_gpu = 0;
};

DispatchOverhead dispatch_overhead(const Trace& trace, const OpLinks& links);

}  // namespace tracedoc::pytorch
