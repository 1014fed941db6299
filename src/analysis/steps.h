// Training / inference steps: the unit in which performance engineers read a timeline ("the GPU
// waits 31% of each step").
//
// A step is a CPU-side window of one process; the GPU work of the step is what the API calls made in
// that window launched (so a step's kernels may run after its CPU window closes). Steps come from,
// in order of preference:
//  1. a marker the user names (`marker=NAME`, NVTX range or record_function / user_annotation range;
//     `NAME*` matches by prefix);
//  2. PyTorch's own `ProfilerStep#N` ranges;
//  3. detection from the periodicity of the GPU work, when there are no markers (below).
//
// Detection. Training and inference loops launch the same kernel sequence every iteration. Each
// process (the CPU process of the launching calls: every rank or process of a multi-process export
// runs its own loop) is searched on its own: on the device where it ran the most kernels, their
// names in launch order form a sequence s.
//  * Candidate periods: for every name occurring at least 3 times, the median distance (in kernels)
//    between its consecutive occurrences, when at least 80% of the distances lie within 3% of it and
//    those regular distances cover at least 80% of the kernels between its first and last
//    occurrence (kernels interleave differently across streams from one iteration to the next, so
//    neither positions nor distances repeat exactly; the median as analysis/statistics.h, in whole
//    kernels). Names launched once per iteration (the optimizer's, the loss's) give the iteration
//    length; names launched once per layer give the layer length but cover little: the backward
//    pass and the optimizer break their rhythm.
//  * The sequence must hold at least two periods. The longest candidate that is not (within 1%) a
//    multiple of a shorter one wins: two iterations also repeat, but as a multiple of one.
//  * The anchor is the candidate name of that period occurring first; each of its occurrences starts
//    a step, whose CPU window runs from the anchor's launch call to the next anchor's. Work before the
//    first anchor and after the last complete period is left out.
// Tested on the shared PyTorch traces that have ProfilerStep ranges, with the ranges hidden: the
// detected step count and median step length agree with the markers (tests/steps_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

namespace pytorch {
struct GpuLaunches;
}

enum class StepSource : uint8_t { kMarker, kProfilerStep, kDetected };
const char* step_source_name(StepSource s);  // "marker", "ProfilerStep", "detected"

struct StepWindow {
  int64_t global_pid = 0;  // the process whose calls belong to the step
  TimeNs start = 0;        // CPU window [start, end]
  TimeNs end = 0;
  int64_t number = kNoValue;  // N of ProfilerStep#N; detected / marker steps: 0, 1, ... per process
  StrId name = kNoStr;        // the range's name; kNoStr for detected steps
  int64_t range_row = -1;     // row in Trace::ranges, -1 for detected steps
};

struct StepSet {
  StepSource source = StepSource::kProfilerStep;
  std::vector<StepWindow> steps;  // in (process, start) order for detection, time order otherwise
  // Detection only: the period in kernels, the share of the sequence it explains, the anchor kernel.
  size_t period_kernels = 0;
  double match = 0;
  StrId anchor = kNoStr;
};

struct StepOptions {
  std::string marker;              // empty: ProfilerStep#N, else detection
  bool use_profiler_steps = true;  // false: ignore ProfilerStep ranges (tests hide them this way)
  bool detect = true;
};

// NoData when there are no steps to be found (no marker instance, nothing periodic). `launches`:
// the trace's GPU activity -> API call links when the caller has them already (computed otherwise).
Result<StepSet> find_steps(const Trace& trace, const StepOptions& options = {},
                           const pytorch::GpuLaunches* launches = nullptr);

// The GPU work of each step: kernels, copies and memsets launched by API calls made in the step's
// CPU window by any thread of its process (the latest-starting window when windows nest).
struct StepGpuWork {
  TimeNs start = kNoTime, end = kNoTime;  // first start, last end; kNoTime when nothing was launched
  int64_t busy = 0;                       // union of the intervals (streams overlap)
  int64_t kernels = 0;
};
std::vector<StepGpuWork> gpu_work_per_step(const Trace& trace, const std::vector<StepWindow>& steps,
                                           const pytorch::GpuLaunches* launches = nullptr);

// Whether a range name is the one `marker` names: NAME exactly, or `NAME*` by prefix.
bool marker_matches(std::string_view name, std::string_view marker);

// Parses a report / command argument list for step options: `marker=NAME`, `detect`, `nodetect`.
// Arguments that are not step options are left alone. Fails on an empty marker name.
Result<StepOptions> step_options_from_args(const std::vector<std::string>& args);

}  // namespace tracedoc
