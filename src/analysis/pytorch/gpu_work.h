// The GPU work of a trace as the time breakdowns of Holistic Trace Analysis (HTA) see it: every
// kernel, copy and memset (and, on request, CUDA synchronization event) with its class
// (communication / memory / computation / other), its stream, and the API call that launched it,
// grouped per GPU: one unit per (rank, device) in a PyTorch trace, per (process, device) in an nsys
// export.
//
// HTA groups per rank, whatever the devices of the rank; tracedoc groups per device of the rank
// because a second GPU's work would otherwise hide the first one's idle time. In every shared
// PyTorch trace a rank drives one device, so the two agree there.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/intervals.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

enum class WorkClass : uint8_t { kCommunication = 0, kMemory = 1, kComputation = 2, kOther = 3 };
inline constexpr int kWorkClasses = 4;
// HTA's labels: "COMMUNICATION", "MEMORY", "COMPUTATION", "OTHER".
const char* work_class_name(WorkClass c);

enum class WorkKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2, kSync = 3 };

// How kernels are classed.
//  kTracedoc: copies and memsets are MEMORY (by table, whatever their name); a kernel is
//    COMMUNICATION when Kineto attached collective arguments to it or its name starts with "nccl"
//    or "rccl" (NCCL/RCCL device kernels: ncclKernel_*, ncclDevKernel_*), else COMPUTATION;
//    synchronization events are OTHER.
//  kHta050: HTA 0.5.0's regular expressions on the event name (hta/utils/utils.py
//    get_kernel_type), for comparisons: COMMUNICATION ^nccl.*Kernel, MEMORY ^Memcpy|^Memset|^dma,
//    OTHER (.*Memcpy)|(^Memset)|(.*Sync), else COMPUTATION. Its known defects follow: a kernel named
//    *Memcpy* or *Sync* (e.g. a SyncBatchNorm kernel) is OTHER and left out of compute time, and the
//    "Stream Wait Event" synchronization record counts as COMPUTATION.
enum class Classifier : uint8_t { kTracedoc, kHta050 };

struct GpuWorkOptions {
  Classifier classifier = Classifier::kTracedoc;
  // CUDA synchronization records (cuda_sync events, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) are the
  // host waiting, not GPU work, so tracedoc leaves them out. HTA counts every event with a stream
  // as GPU time, these included; set for comparisons.
  bool include_syncs = false;
  // HTA's default (Trace._filter_irrelevant_gpu_kernels with include_last_profiler_step=False):
  // when the trace holds two or more distinct ProfilerStep names, keep only GPU work whose launching
  // API call started before the last step's start (the latest start of an event named
  // *ProfilerStep*, CPU range or, in a single-rank trace, its GPU-side annotation), per rank; work
  // without a launching call is dropped too. tracedoc keeps everything by default: the last step is
  // usually complete in a trace written by the profiler's schedule, and cutting it hides its work.
  bool drop_last_step = false;
};

struct GpuWorkItem {
  TimeNs start = 0, end = 0;
  int32_t stream = 0;
  WorkKind kind = WorkKind::kKernel;
  WorkClass cls = WorkClass::kComputation;
  uint32_t row = 0;                                     // in its table (kernels, memcpys, memsets, syncs)
  int32_t launch = -1;                                  // the launching API call (row of Trace::api), -1 when unknown
  TimeNs launch_start = kNoTime, launch_end = kNoTime;  // of that call
  Interval interval() const { return {start, end}; }
};

struct GpuUnit {
  int64_t owner = 0;  // rank tag (PyTorch) or global pid (nsys): the grouping key
  int64_t rank = -1;  // PyTorch rank, -1 when unknown or for nsys exports
  int64_t pid = 0;    // process id of the owner (nsys exports; 0 for PyTorch ranks)
  int32_t device = 0;
  std::vector<GpuWorkItem> items;  // sorted by (start, end, kind, row)

  // Union of the items' time, of every class or of the classes in `mask` (bit 1 << class).
  IntervalSet busy(uint32_t class_mask = 0xF) const;
};

// A unit's GPU time split into the parts a step's time is made of, each part taking only the time
// no part before it took: computation kernels; communication not under computation; copies and
// memsets under neither; other work under none of those. What is left of a window is idle.
struct TimeParts {
  IntervalSet compute, communication, copies, other;
  // Within the windows (sorted, disjoint): {compute, communication, copies, other, idle}.
  std::array<int64_t, 5> within(std::span<const Interval> windows) const;
};
inline constexpr std::array<const char*, 5> kTimePartNames = {"compute", "communication", "copies", "other", "idle"};
TimeParts time_parts(const GpuUnit& unit);

struct GpuWork {
  bool pytorch = false;        // units are ranks (PyTorch trace) rather than processes (nsys export)
  std::vector<GpuUnit> units;  // ordered by (rank or pid, device)
};

GpuWork collect_gpu_work(const Trace& trace, const GpuWorkOptions& options = {});

// The class of a kernel name under a classifier (kTracedoc without the collective-arguments rule).
WorkClass classify_kernel_name(std::string_view name, Classifier classifier);
// Kineto's names of the synchronization records, by CUPTI sync type (1 event, 2 stream wait event,
// 3 stream, 4 context).
std::string_view sync_name(int32_t sync_type);

// The owner (GpuUnit::owner) of a CPU thread or process id: the rank tag in a PyTorch trace (rank + 1
// in the top bits of a merged rank directory's ids, 0 in a single file), the process in an nsys
// export.
inline int64_t rank_tag_of(int64_t global_id) { return global_id >> 48; }
inline int64_t owner_of_id(bool pytorch, int64_t global_id) {
  return pytorch ? rank_tag_of(global_id) : global_pid_of(global_id);
}

// An API call's name without nsys's version suffix (cudaLaunchKernel_v7000 -> cudaLaunchKernel).
std::string_view api_base_name(std::string_view name);

}  // namespace tracedoc::pytorch
