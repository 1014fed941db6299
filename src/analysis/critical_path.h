// The GPU critical path of a step: the chain of GPU work that decided when the step's GPU work
// ended. Walking back from the operation that ends last in the window, each operation's
// predecessor is the one that ended last before it started. Ends up to `same_stream_slack_ns`
// after the start still count (Kineto's µs timestamps round, so a stream predecessor can seem to
// end a little after its successor started), and the previous operation on the same stream wins
// when it ended within the slack of the latest: stream order is a known dependency, a cross-stream
// one only inferred. The walk stops at the window's start or when nothing ran before. Operations
// hidden under a longer one on another stream are off the path: making them faster would not end
// the step sooner. On a single stream every operation of a step is on it.
//
// The walk reasons from times alone (traces record no event-wait edges), so where the GPU idled
// between two path operations the CPU was the critical resource for that stretch; `cpu_gaps_ns`
// sums it. This is the GPU half of Holistic Trace Analysis's critical-path idea (which also walks
// the CPU operators), cheap enough for every step of a large trace: O(n log n) per GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/pytorch/gpu_work.h"

namespace tracedoc {

struct CriticalPathOptions {
  int64_t same_stream_slack_ns = 1000;
};

struct CriticalPath {
  // One flag per row of Trace::kernels / memcpys / memsets: 1 when on the path of some window.
  std::vector<uint8_t> kernel, memcpy, memset;
  int64_t operations = 0;   // on the path, every window
  int64_t path_ns = 0;      // their summed durations
  int64_t cpu_gaps_ns = 0;  // GPU idle between consecutive path operations
  bool on_path(pytorch::WorkKind kind, uint32_t row) const;
};

// `windows_of_unit[i]`: the windows (steps) of work.units[i], sorted and disjoint; an empty list
// means the unit's whole span is one window.
CriticalPath critical_path(const pytorch::GpuWork& work, const std::vector<std::vector<Interval>>& windows_of_unit,
                           size_t kernels, size_t memcpys, size_t memsets, const CriticalPathOptions& options = {});

}  // namespace tracedoc
