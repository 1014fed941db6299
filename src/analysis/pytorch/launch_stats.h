// HTA's launch analyses on tracedoc's exact ns, per GPU unit (gpu_work.h):
//
//  launch stats  (hta/analyzers/cuda_kernel_analysis.py cuda_kernel_launch_stats) every launch call
//                joined with the operation it launched: CPU duration of the call, GPU duration of
//                the operation, launch delay = operation start - call end (0 when negative).
//                Short kernels: CPU duration <= runtime cutoff and GPU duration < CPU duration (the
//                launch costs more than the kernel); runtime outliers: CPU duration > runtime cutoff;
//                launch-delay outliers: delay > delay cutoff. HTA's cutoffs are 50 and 100 µs.
//  queue length  (hta/analyzers/trace_counters.py) per stream, the operations launched but not yet
//                started: +1 when a launch call starts, -1 when its operation starts. Summarized as
//                pandas' describe() of the value after each of those events (count, mean, std,
//                quartiles: HTA's summary), plus the time-weighted mean and the time spent at or above
//                `max_queue_length` (HTA's "time blocked on a full queue", default 1024 entries).
//
// Which calls are launches:
//  kTracedoc  launch stats: every kernel launch of the CUDA runtime and driver APIs and of HIP
//             (cudaLaunchKernel[ExC], cudaLaunchCooperativeKernel, cuLaunchKernel[Ex],
//             hipLaunchKernel, hipExtLaunchKernel, hipModuleLaunchKernel, hipExtModuleLaunchKernel,
//             *_ptsz variants, nsys's _vNNNN suffixes) and, with include_memory, every asynchronous
//             copy and memset (cudaMemcpy*Async, cuMemcpy*Async, cudaMemsetAsync, hipMemcpyAsync,
//             hipMemcpyWithStream, ...); graph launches are not per-operation launches and are left
//             out. Queue length: every operation with a launching call, graph launches and
//             synchronous copies included, since each was enqueued by that call.
//  kHta050    HTA 0.5.0's lists, for comparisons. Launch stats: cudaLaunchKernel,
//             cudaLaunchKernelExC (+ cudaMemcpyAsync, cudaMemsetAsync): no driver API
//             (cuLaunchKernel, used by Triton), no HIP, so AMD traces have no launches at all.
//             Queue length: those plus cuLaunchKernel, hipLaunchKernel, hipExtModuleLaunchKernel,
//             hipMemcpyAsync, hipMemsetAsync, hipMemcpyWithStream (no cuLaunchKernelEx,
//             hipExtLaunchKernel, hipModuleLaunchKernel, graph launches).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/pytorch/gpu_work.h"

namespace tracedoc::pytorch {

enum class LaunchNames : uint8_t { kTracedoc, kHta050 };

// pandas' Series.describe() of a sample: mean, sample standard deviation (NaN below 2 values),
// quartiles by linear interpolation between the closest ranks.
struct Describe {
  int64_t count = 0;
  double mean = 0, std = 0;  // NaN without values (std: below 2 values)
  int64_t min = 0, max = 0;  // 0 without values
  double q1 = 0, median = 0, q3 = 0;
};
Describe describe(std::vector<int64_t> values);

struct LaunchStatsOptions {
  int64_t runtime_cutoff_ns = 50'000;
  int64_t launch_delay_cutoff_ns = 100'000;
  bool include_memory = true;
  LaunchNames names = LaunchNames::kTracedoc;
};

struct LaunchStats {
  int64_t launches = 0;
  int64_t cpu_total = 0, gpu_total = 0;  // durations of the calls and of their operations
  int64_t delay_total = 0;
  Describe delay;  // launch delays (ns)
  int64_t short_kernels = 0, runtime_outliers = 0, delay_outliers = 0;
};
LaunchStats kernel_launch_stats(const Trace& trace, const GpuUnit& unit, const LaunchStatsOptions& options = {});

// Is `name` (an API call, nsys's version suffix allowed) a launch of an operation under `names`?
bool is_launch_call(std::string_view name, LaunchNames names, bool include_memory);
// The same for queue-length accounting (kTracedoc: every call counts, see above).
bool is_queue_call(std::string_view name, LaunchNames names);

struct QueueOptions {
  int64_t max_queue_length = 1024;  // CUDA_MAX_LAUNCH_QUEUE_PER_STREAM in HTA
  LaunchNames names = LaunchNames::kTracedoc;
};

struct StreamQueue {
  int32_t stream = 0;
  Describe samples;  // the queue length after each launch and each start
  double time_weighted_mean = 0;
  int64_t blocked = 0;         // time at or above max_queue_length
  TimeNs first = 0, last = 0;  // first launch, last start
};
// One entry per stream with launched operations, by stream number. At equal times launches count
// before starts (as HTA's events sort when ties keep their order); an operation that starts before
// its launching call (clock skew) is taken to start when the call does, so the length never drops
// below what was launched.
std::vector<StreamQueue> queue_length_summary(const Trace& trace, const GpuUnit& unit,
                                              const QueueOptions& options = {});

// The queue length over time per stream, by stream number: a (time, length) pair at each change, from
// the first launch (length >= 1) to the last start (length 0). Same counting as above; launches and
// starts at one instant are applied together, so the series holds no zero-length steps.
struct StreamQueueSeries {
  int32_t stream = 0;
  std::vector<DepthChange> changes;
};
std::vector<StreamQueueSeries> queue_length_series(const Trace& trace, const GpuUnit& unit,
                                                   LaunchNames names = LaunchNames::kTracedoc);

}  // namespace tracedoc::pytorch
