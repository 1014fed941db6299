// HTA's GPU time breakdowns (Holistic Trace Analysis 0.5.0, hta/analyzers/breakdown_analysis.py and
// communication_analysis.py) on tracedoc's exact ns, per GPU unit (gpu_work.h), written in interval
// algebra (intervals.h):
//
//  temporal   span of the GPU's work (first start to last end) = idle + compute + non-compute:
//             idle = span - |union of all work|, compute = |union of COMPUTATION|,
//             non-compute = |union of all| - compute (communication and copies not hidden by compute).
//  idle       per stream, each gap between the stream's work (the holes of its union) is
//             host wait    when the next operation's launching call started after the gap opened
//                          (the CPU had not yet asked for it: the GPU waited on the host),
//             kernel wait  else when the gap is shorter than `consecutive_kernel_delay`
//                          (back-to-back launch overhead),
//             other wait   else (e.g. waiting on an event from another stream).
//  kernel types  time during which exactly a given set of classes runs, labelled like HTA:
//             "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ... (OTHER is left out, as HTA).
//  comm/comp  |COMMUNICATION ∩ COMPUTATION| / |COMMUNICATION|.
//
// Where tracedoc differs from HTA (each difference is measured in tests/hta_breakdowns_test.cpp):
//  * exact ns; HTA rounds every event to whole µs (ceil start, floor end), so sub-µs kernels become
//    0 or -1 µs long and, isolated, count as negative busy time (HTA then fails its own
//    `non_compute_time >= 0` assertion on some traces);
//  * consecutive_kernel_delay defaults to 30 µs. HTA documents "30 nanoseconds", but it compares the
//    number with trace µs, so HTA's effective default is 30 µs, which tracedoc takes as the intent;
//  * a gap is measured from the latest end on the stream, not from the previous event's end, so
//    overlapping work on one stream (programmatic dependent launch, rounding) never gives a negative
//    gap, and the first operation of a stream has no gap (HTA: NaN, ignored);
//  * work on one stream that starts at the same time is ordered by (end, kind, row); HTA's quicksort
//    leaves such ties in an arbitrary order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/pytorch/gpu_work.h"

namespace tracedoc::pytorch {

struct TemporalBreakdown {
  TimeNs first_start = 0, last_end = 0;  // the span; both 0 without work
  int64_t busy = 0;                      // |union of all work|
  int64_t idle = 0, compute = 0, non_compute = 0;
  int64_t span() const { return sat_sub(last_end, first_start); }
};
TemporalBreakdown temporal_breakdown(const GpuUnit& unit);

inline constexpr int64_t kDefaultConsecutiveKernelDelayNs = 30'000;

enum class IdleCategory : uint8_t { kHostWait = 0, kKernelWait = 1, kOther = 2 };

struct StreamIdle {
  int32_t stream = 0;
  int64_t operations = 0;
  TimeNs first_start = 0, last_end = 0;
  int64_t busy = 0;             // |union of the stream's work|
  int64_t gaps[3] = {0, 0, 0};  // idle time per IdleCategory
  int64_t gap_count[3] = {0, 0, 0};
  int64_t idle() const { return sat_add(sat_add(gaps[0], gaps[1]), gaps[2]); }
};
// One entry per stream, by stream number. Synchronization records are not operations of a stream
// (HTA leaves them out here too).
std::vector<StreamIdle> idle_time_breakdown(const GpuUnit& unit, int64_t consecutive_kernel_delay_ns);

struct KernelTypeTime {
  std::string label;     // "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ...
  uint32_t classes = 0;  // bit 1 << WorkClass of each class running
  int64_t time = 0;
};
// Time of every combination of COMPUTATION, COMMUNICATION and MEMORY (MEMORY only when
// `include_memory`) that runs for more than 0 ns, longest first (ties by label).
std::vector<KernelTypeTime> kernel_type_breakdown(const GpuUnit& unit, bool include_memory = true);

struct CommCompOverlap {
  int64_t communication = 0, computation = 0, overlap = 0;
  // overlap / communication; negative when there is no communication (HTA: NaN).
  double ratio() const {
    return communication > 0 ? static_cast<double>(overlap) / static_cast<double>(communication) : -1.0;
  }
};
CommCompOverlap comm_comp_overlap(const GpuUnit& unit);

}  // namespace tracedoc::pytorch
