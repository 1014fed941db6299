// The Overview page of the PyTorch TensorBoard profiler plugin (torch-tb-profiler, kineto/tb_plugin,
// deprecated and removed from kineto in 2026): the step time breakdown and the GPU metrics, computed
// on tracedoc's model in exact int64 ns.
//
// Steps. ProfilerStep#N ranges, or, without any, one step from the first to the last end of the CPU
// events (operators and annotations). Each step is stretched to the GPU work it launched: the GPU
// operations (kernels, copies, memsets) of every runtime call lying entirely inside the step's CPU
// window [host_start, host_end] (calls are walked in start order against the steps in time order, as
// the plugin's two-way merge walks them). With any such work in the trace, step i becomes
//   [max(prev_end, host_start), max(host_end, last end of its GPU operations)]
// where prev_end is step i-1's new end, and for the first step the later of its CPU start and the last
// end of GPU operations not launched inside any step that end before the first step's first GPU
// operation (leftovers of the iteration before). Then trailing steps that launched nothing are dropped,
// and the last remaining one too when it launched fewer than 0.8x the GPU operations of the one before
// it (the profiler stopped before its work was recorded).
//
// Breakdown. Roles in priority order: Kernel, Memcpy, Memset, Communication, Runtime, DataLoader,
// CPU Exec; each role's intervals (merged) take the part of the steps' time that no earlier role took;
// Other is what remains. Per step the role times are the taken intervals inside the step.
//   Kernel        kernels, except communication kernels (NCCL/RCCL: collective arguments or a name
//                 starting with nccl / rccl)
//   Memcpy/Memset copies / memsets
//   Communication communication kernels, and CPU ranges and operators named nccl:* or gloo:*
//   Runtime       CUDA/HIP runtime and driver calls
//   DataLoader    ranges/operators named enumerate(DataLoader)#*.__next__ or enumerate(DataPipe)#*
//   CPU Exec      every other CPU operator and annotation (ProfilerStep ranges excepted)
//
// GPU metrics, per GPU of the unit, over the window [first step's start, last step's end):
//   GPU Utilization      time with at least one kernel running / window
//   Est. SM Efficiency   ∫ min(Σ over running kernels of blocks/SMs, 1) dt / window (the SMs a kernel
//                        can occupy: its grid size over the GPU's SM count; concurrent kernels add up
//                        to at most all SMs); NaN without SM counts or grid sizes
//   Est. Achieved Occupancy  Kineto's per-kernel "est. achieved occupancy %" averaged over kernels,
//                        weighted by their time inside the window; NaN without the argument
//   Tensor Cores         time of kernels whose name marks a tensor-core kernel (the plugin's list,
//                        from NVIDIA PyProf) / time of all kernels of the GPU, whole trace
//
// Where tracedoc differs from the plugin (each a defect of the plugin; TbOptions::plugin() selects
// the plugin's behaviour, which tests/tb_plugin_test.cpp compares against the plugin itself):
//  1. GPU-side annotations (gpu_user_annotation): the plugin reads them as CPU annotations, so the
//     GPU copy of ProfilerStep#N is a second, overlapping step and every other one is CPU Exec time.
//  2. Driver calls (cuda_driver: cuLaunchKernel[Ex] of Triton and cuBLAS 12, ...): not runtime calls
//     to the plugin, so neither Runtime time nor launches that stretch a step, and their kernels are
//     not in its Tensor Cores share (which counts kernels launched by runtime calls only).
//  3. Communication: the plugin takes a kernel for communication when its External id is that of a
//     nccl:* operator, which no shared trace ever satisfies (the id is the correlation id in 2022-2024
//     traces and the record_param_comms op's since), so NCCL kernels count as Kernel; and it knows the
//     CPU names nccl:/gloo: broadcast, reduce, all_reduce, all_gather, reduce_scatter only.
//  4. Re-opened steps: the plugin's role algebra restarts from the whole step time when a role has
//     taken all of it, so the next role is counted whole again and the roles add up to more than the
//     step.
//  5. CPU span without ProfilerStep: the plugin takes operators only (since 2021 annotations have a
//     category of their own, which it leaves out).
// Not reproduced: the plugin's Tensor Cores share counts only kernels whose launching call its
// operator tree holds by External id, which in 2022-2024 traces (External id = correlation id) is
// none, so it shows no value there; its µs doubles (0.25 µs steps on 2024's absolute fractional
// timestamps; the test puts tracedoc's input into that view); its SM efficiency reads Kineto's
// "blocks per SM" argument (absent on ROCm, where tracedoc uses the launch grid and CU count;
// present without deviceProperties, where tracedoc has no SM count); MTIA runtime calls (not read by
// tracedoc).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "analysis/checked_math.h"
#include "model/trace.h"

namespace tracedoc::pytorch {

enum class TbRole : uint8_t { kKernel, kMemcpy, kMemset, kCommunication, kRuntime, kDataLoader, kCpuExec, kOther };
inline constexpr int kTbRoles = 8;
// The plugin's labels: "Kernel", "Memcpy", "Memset", "Communication", "Runtime", "DataLoader",
// "CPU Exec", "Other".
const char* tb_role_name(TbRole role);

struct TbOptions {
  bool gpu_annotations_as_cpu = false;  // 1 above
  bool ignore_driver_calls = false;     // 2
  bool plugin_communication = false;    // 3
  bool reopen_claimed_time = false;     // 4
  bool cpu_span_ops_only = false;       // 5
  // Every flag set: the plugin's numbers.
  static TbOptions plugin() { return {true, true, true, true, true}; }
};

struct TbStep {
  int64_t number = kNoValue;            // N of ProfilerStep#N; kNoValue for the whole-trace step
  StrId name = kNoStr;                  // the range's name; kNoStr for the whole-trace step
  TimeNs host_start = 0, host_end = 0;  // the CPU window
  TimeNs start = 0, end = 0;            // stretched to the GPU work
  int64_t gpu_ops = 0;                  // GPU operations launched by calls inside the CPU window
  int64_t role[kTbRoles] = {};          // ns of each role, in TbRole order; they add up to end - start
                                        // (not always with the plugin's reopen_claimed_time)
  int64_t duration() const { return sat_sub(end, start); }
};

// One process of the trace (a rank of a merged directory; a single file is one unit).
struct TbUnit {
  int64_t owner = 0;          // rank tag of the ids (0 in a single file)
  int64_t rank = -1;          // -1 when unknown
  bool whole_trace = false;   // no ProfilerStep: one step over the CPU events
  int64_t dropped_steps = 0;  // trailing steps left out (see above)
  std::vector<TbStep> steps;  // the steps kept, in time order; never empty
};

struct TbGpuMetrics {
  int64_t owner = 0, rank = -1;
  int32_t device = 0;
  TimeNs window_start = 0, window_end = 0;
  int64_t kernels = 0;                                              // kernels of the GPU in the whole trace
  int64_t busy = 0;                                                 // ns inside the window with a kernel running
  double utilization = std::numeric_limits<double>::quiet_NaN();    // fraction
  double sm_efficiency = std::numeric_limits<double>::quiet_NaN();  // fraction
  double occupancy = std::numeric_limits<double>::quiet_NaN();      // percent
  int64_t kernel_time = 0, tensor_core_time = 0;                    // ns, whole trace
  double tensor_cores = std::numeric_limits<double>::quiet_NaN();   // fraction
};

struct TbOverview {
  std::vector<TbUnit> units;       // in owner order
  std::vector<TbGpuMetrics> gpus;  // in (owner, device) order
};

// NoData when the trace is not a PyTorch trace or has no CPU event to make a step of.
Result<TbOverview> tb_overview(const Trace& trace, const TbOptions& options = {});

// The GPU metrics of the units' windows (tb_overview calls it).
std::vector<TbGpuMetrics> tb_gpu_metrics(const Trace& trace, const std::vector<TbUnit>& units,
                                         const TbOptions& options = {});

// The plugin's tensor-core test: the name contains one of NVIDIA PyProf's kernel name fragments
// (h884, s1688, hmma, xmma_gemm, ...; tb_plugin/torch_tb_profiler/profiler/tensor_core.py).
bool is_tensor_core_kernel(std::string_view name);

}  // namespace tracedoc::pytorch
