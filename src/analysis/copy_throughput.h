// How fast memory copies ran and how much of each step they took.
//
// Throughput: copies grouped per (process, device, direction, source kind, destination kind), so
// that pageable and pinned host memory, which differ by a factor of two or more on the same link,
// are never averaged together. Two figures per group: bytes over the summed durations (what the
// copies achieved as a whole, dominated by the large ones) and the median of the per-copy
// throughputs (what a typical copy achieved; small copies are latency-bound and pull it down).
//
// Step share: the time of a step during which at least one copy of the step's process was running,
// on any of its devices (the union of the copy intervals clipped to the step, so overlapping copies
// on two streams count once), over the step's duration; also per direction.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/steps.h"
#include "model/trace.h"

namespace tracedoc {

struct CopyGroup {
  int64_t global_pid = 0;
  int32_t device = 0;
  uint8_t copy_kind = 0, src_kind = kNoKind, dst_kind = kNoKind;  // as in MemcpyTable
  int64_t count = 0;
  int64_t bytes = 0;
  int64_t total_ns = 0;           // summed durations
  int64_t zero_duration = 0;      // copies recorded with no duration (left out of the median)
  double throughput = -1;         // bytes per second over total_ns; -1 when total_ns is 0
  double median_throughput = -1;  // median of bytes per second per copy; -1 when no copy has a duration
};

// Groups ordered by (process, device, copy kind, source kind, destination kind). Copies without
// times are skipped.
std::vector<CopyGroup> summarize_copies(const Trace& trace);

// The direction classes of the step share.
enum class CopyClass : uint8_t { kHtoD = 0, kDtoH = 1, kDtoD = 2, kOther = 3 };
inline constexpr int kCopyClasses = 4;
// Host to device or array (Unified Memory migrations included) is HtoD, the reverse DtoH, copies
// within one device (device or array on both ends) DtoD; peer-to-peer, host-to-host and unknown
// copies are Other.
CopyClass copy_class(uint8_t copy_kind);

struct CopyWindowShare {
  StepWindow window;                    // the step; for a whole-trace window range_row -1 and number kNoValue
  bool whole_trace = false;             // the process has no steps: the window is its GPU work's span
  int64_t copies = 0;                   // copies that started in the window
  int64_t bytes = 0;                    // their bytes
  int64_t copy_ns = 0;                  // union of all copy intervals inside the window
  int64_t class_ns[kCopyClasses] = {};  // the same per direction class
  TimeNs duration() const { return sat_sub(window.end, window.start); }
};

// One entry per step (analysis/steps.h), each read as the half-open window [start, end): a copy
// running at a step's end instant belongs to the next one. Then one whole-trace entry per process
// that has copies but no steps (its window runs from the first start to the last end of its kernels,
// copies and memsets). Ordered by (process, start), steps of equal start in their given order.
std::vector<CopyWindowShare> copy_step_shares(const Trace& trace, const std::vector<StepWindow>& steps);

}  // namespace tracedoc
