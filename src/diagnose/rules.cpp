#include "diagnose/rules.h"

#include <algorithm>

namespace tracedoc::diagnose {

double Params::get(std::string_view name) const {
  const auto it = values_.find(std::string(name));
  return it == values_.end() ? 0.0 : it->second;
}

namespace {

std::vector<RuleDef> make_rules() {
  std::vector<RuleDef> rules = {
      {"bank_conflicts",
       "Nsight Compute: shared-memory bank conflicts serialise a kernel's shared loads or stores",
       {{"min_conflict_share", 0.10, "bank conflicts over shared-memory wavefronts (loads or stores)"}},
       bank_conflicts},
      {"barrier_stalls",
       "Nsight Compute: warps stall at block-wide barriers (__syncthreads) for a large share of the stalls",
       {{"min_share", 0.10, "barrier's share of the stalls (PC samples, else warps per issued instruction)"}},
       barrier_stalls},
      {"compute_bound",
       "Nsight Compute: a kernel runs near its compute roof: only fewer or cheaper operations help",
       {{"min_roof_share", 0.6, "achieved share of the roofline (else of the SM's peak throughput)"},
        {"reducible", 0.5, "share of the kernel's time saved by halving its operations (a guess)"}},
       compute_bound},
      {"memory_bound",
       "Nsight Compute: a kernel runs near its memory roof: only moving fewer bytes helps",
       {{"min_roof_share", 0.6, "achieved share of the roofline (else of the memory's peak throughput)"},
        {"reducible", 0.5, "share of the kernel's time saved by halving its bytes (a guess)"}},
       memory_bound},
      {"occupancy_limited",
       "Nsight Compute: few warps resident per SM, and what limits them (registers, shared memory, block size)",
       {{"max_theoretical", 50, "theoretical occupancy (%) below which a kernel is reported"},
        {"low_occupancy", 25, "or achieved occupancy (%) below which it is"},
        {"savings", 0.1, "share of the kernel's time more resident warps would save (a guess)"}},
       occupancy_limited},
      {"uncoalesced_access",
       "Nsight Compute: global loads and stores touch more sectors than their access width needs",
       {{"min_excessive", 0.25, "excess sectors over all global sectors (ncu's UncoalescedGlobalAccess figure)"}},
       uncoalesced_access},
      {"comb_pattern",
       "GPU work in regular bursts with an idle gap in every step: the CPU (input pipeline) cannot keep up",
       {{"min_gap_share", 0.15, "median share of a step spent in its largest GPU idle gap"},
        {"min_regular", 0.75, "share of steps that show such a gap"},
        {"max_cv", 0.5, "largest coefficient of variation of the gap lengths (regularity)"},
        {"min_steps", 3, "steps needed"}},
       comb_pattern},
      {"dataloader_bound",
       "data loading (enumerate(DataLoader) ranges) is a large share of each step",
       {{"min_share", 0.10, "share of the step time spent in data loading"}},
       dataloader_bound},
      {"exposed_comm",
       "communication kernels (NCCL/RCCL) not overlapped with computation",
       {{"min_share", 0.10, "exposed communication time over the time basis"}},
       exposed_comm},
      {"gemm_shape",
       "matrix multiplies whose n or k dimension is not a multiple of the tensor cores' 16-byte rows "
       "(8 bf16/fp16, 4 fp32, 16 fp8 elements), from the operators' recorded shapes",
       {{"penalty", 0.25, "share of those GEMMs' time that aligned shapes would save (a guess)"},
        {"min_share", 0.01, "that saving over the time basis"}},
       gemm_shape},
      {"gpu_idle",
       "the GPU idles for a large share of the run (host-bound)",
       {{"min_idle", 0.15, "idle share of the steps (or of the GPU's span)"},
        {"min_gap_ns", 100000, "idle stretches shorter than this are launch latency, not counted as savings"}},
       gpu_idle},
      {"cpu_bound_during_idle",
       "the GPU idles while the thread that launches its work runs on the CPU (CPU samples): Python, the "
       "dispatcher, allocation or data transforms delay the next launch",
       {{"min_share", 0.05, "GPU idle time with the launching thread on a CPU over the time basis"}},
       cpu_bound_during_idle},
      {"oversubscribed_cpu",
       "the threads that launch GPU work are off their CPU while the GPU idles without waiting for anything "
       "traced: runnable, but other threads or processes hold the cores",
       {{"min_share", 0.05,
         "GPU idle time with a launching thread off its CPU outside any traced wait, over the "
         "time basis"}},
       oversubscribed_cpu},
      {"sm_underused",
       "GPU metrics: kernels run while most SMs are idle (SM Active low): too few blocks, tiny kernels, "
       "serialized work",
       {{"max_sm_active", 50, "SM Active (%) over a kernel's executions below which it underuses the GPU"},
        {"min_share", 0.05, "estimated savings (kernel time times the idle SMs' share) over the time basis"}},
       sm_underused},
      {"host_waits",
       "the threads that launch GPU work wait in the OS (lock waits such as the GIL, I/O and polls, sleeps) while the "
       "GPU idles",
       {{"min_share", 0.05, "GPU idle time during those waits over the time basis"}},
       host_waits},
      {"kernel_config",
       "launch configurations that waste the GPU: blocks not a multiple of 32 threads, tiny blocks, low occupancy",
       {{"min_kernel_share", 0.05, "share of kernel time a kernel must have to matter"},
        {"min_threads", 64, "blocks with fewer threads are too small"},
        {"low_occupancy", 25, "estimated achieved occupancy (%) below which a kernel is reported"},
        {"max_warps_in_flight", 50,
         "GPU metrics: warps in flight (%) during a kernel at or above which its blocks and occupancy are fine"}},
       kernel_config},
      {"launch_bound",
       "many short kernels with the GPU idle between them: launch overhead dominates",
       {{"short_kernel_ns", 10000, "a kernel shorter than this is short"},
        {"min_short", 0.5, "share of kernels that are short (or the bubbles are min_idle_share of the idle time)"},
        {"min_idle_share", 0.5,
         "launch bubbles' share of the GPU's idle time in the steps that names launch overhead whatever the kernels' "
         "length"},
        {"max_gap_ns", 100000,
         "idle gaps up to this long, ended by an operation still being launched when the GPU went idle, are launch "
         "bubbles"},
        {"min_bubble", 0.10, "launch bubbles' share of the steps"}},
       launch_bound},
      {"layout_overhead",
       "a large share of GPU time in transpose / copy / contiguous kernels",
       {{"min_share", 0.10, "share of kernel time in layout kernels"}},
       layout_overhead},
      {"long_tail",
       "kernels of the same name and launch configuration with outliers far above their median",
       {{"min_instances", 8, "instances needed per kernel"},
        {"k", 10, "an outlier exceeds median + k * MAD (MAD at least 5% of the median)"},
        {"min_ratio", 2, "and is at least this many times the median"},
        {"min_share", 0.01, "excess time of the outliers over the time basis"}},
       nullptr,
       long_tail},
      {"low_mfu",
       "the model's FLOPs per step are far below the GPU's peak (MFU), and where the step time goes instead: "
       "idle, communication, memory-bound operators, matrix multiplies below the peak",
       {{"max_mfu", 25, "MFU (%) below which the run is reported"},
        {"reachable", 0.7,
         "share of the peak that large, well-shaped matrix multiplies reach: the model-FLOP "
         "kernels' time beyond it is the savings"}},
       low_mfu},
      {"memcpy_heavy",
       "host<->device copies take a large share of the step and are not hidden under kernels",
       {{"min_share", 0.10, "exposed copy time over the time basis"}},
       memcpy_heavy},
      {"pageable_memcpy",
       "copies from or to pageable host memory (staged, slower, and synchronous for the host)",
       {{"min_share", 0.01, "pageable copy time over the time basis"}},
       pageable_memcpy},
      {"staircase_memory",
       "GPU memory that grows step after step without returning",
       {{"min_steps", 4, "steps needed"},
        {"min_rising", 0.8, "share of step-to-step changes that rise"},
        {"min_growth_bytes", 64.0 * 1024 * 1024, "growth over the run"},
        {"oom_steps", 1000, "critical when the device would fill within this many more steps"}},
       staircase_memory},
      {"straggler",
       "one rank computes longer than the others, which wait for it in collectives",
       {{"min_ratio", 1.10, "slowest rank's compute time over the median rank's"}},
       nullptr,
       straggler},
      {"sync_stall",
       "synchronizing calls that drain the GPU's queue: the GPU idles while the CPU launches again",
       {{"min_share", 0.05, "GPU idle time after the syncs over the time basis"},
        {"max_bubble_ns", 2000000, "idle time after a sync counted at most (longer gaps are the CPU's own work)"}},
       sync_stall},
      {"tensor_cores_unused",
       "matrix multiplications and convolutions on kernels that do not use tensor cores",
       {{"min_gemm_share", 0.10, "share of kernel time in GEMM / convolution kernels"},
        {"max_tc_share", 0.5, "largest share of that time on tensor-core kernels"},
        {"speedup", 2, "expected speedup of the tensor-core variants (TF32 / BF16)"},
        {"max_tensor_active", 10,
         "GPU metrics: Tensor Active (%) during those kernels above which the tensor cores did run (no finding)"}},
       tensor_cores_unused},
  };
  for (RuleDef& r : rules) {
    r.params.push_back({"warning", 0.05, "share of the time basis at which a finding is a warning"});
    r.params.push_back({"critical", 0.20, "share of the time basis at which a finding is critical"});
  }
  std::sort(rules.begin(), rules.end(), [](const RuleDef& a, const RuleDef& b) { return a.id < b.id; });
  return rules;
}

}  // namespace

const std::vector<RuleDef>& all_rules() {
  static const std::vector<RuleDef> rules = make_rules();
  return rules;
}

const RuleDef* find_rule(std::string_view id) {
  for (const RuleDef& r : all_rules()) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

}  // namespace tracedoc::diagnose
