// One-screen overview of a trace: what ran where, how busy each GPU was, where the time went, the
// steps, and the findings of the analyze rules. `tracedoc summary` prints it; the diagnosis engine
// and the diff build on the same figures.
//
// Everything is computed in a few linear passes (plus one sort per device for the busy union), so a
// summary costs a fraction of reading the trace.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/cross_rank.h"
#include "analysis/gpu_metrics.h"
#include "analysis/ncu_answers.h"
#include "analysis/quantile_sketch.h"
#include "analysis/steps.h"
#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

struct NamedTotal {
  std::string name;
  int64_t count = 0;
  int64_t total_ns = 0;
  QuantileSketch durations;  // kernels: each instance's duration (min, median, p95, max); empty otherwise
};

struct DeviceSummary {
  int64_t pid = 0;
  int64_t rank = -1;  // PyTorch rank directories and files; -1 when unknown
  int32_t device = 0;
  std::string name;                                     // GPU name when the trace records it
  TimeNs first_start = 0, last_end = 0;                 // the device's active span
  int64_t busy_ns = 0;                                  // union of its operations (overhead excluded)
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0;  // summed durations (streams overlap)
  int64_t kernels = 0, memcpys = 0, memsets = 0;
  // Whole CUDA graph executions (graph-level tracing): their nodes are not among the kernels.
  int64_t graphs = 0, graph_ns = 0;
  int64_t streams = 0;
  int64_t gaps_over_threshold = 0;  // idle stretches longer than the gap threshold
  int64_t longest_gap_ns = 0;
  TimeNs longest_gap_start = 0;
  // HTA's temporal breakdown (analysis/pytorch/gpu_breakdowns.h): compute = union of computation
  // kernels, non-compute = the rest of the busy time (copies, communication not under compute).
  int64_t compute_ns = 0, non_compute_ns = 0;
  // Communication kernels (NCCL/RCCL) and the part of them hidden under computation.
  int64_t communication_ns = 0, comm_overlap_ns = 0;
  // GPU memory (analysis/gpu_memory.h), kNoValue / kNoTime when the trace records none.
  int64_t peak_allocated = kNoValue;
  TimeNs peak_time = kNoTime;
  int64_t peak_reserved = kNoValue;
  // Kernel launches (analysis/pytorch/launch_stats.h, HTA's definitions): calls that launched a
  // kernel, copy or memset; the median launch delay (operation start - call end, at least 0); short
  // kernels (the GPU ran them for less time than the call took on the CPU).
  int64_t launches = 0, short_kernels = 0;
  double launch_delay_median_ns = 0;
  // The TensorBoard plugin's GPU metrics (analysis/pytorch/tb_overview.h; PyTorch traces only, NaN
  // when unknown): estimated SM efficiency and achieved occupancy over the steps, share of kernel
  // time in tensor-core kernels.
  double sm_efficiency_pct = std::numeric_limits<double>::quiet_NaN();
  double occupancy_pct = std::numeric_limits<double>::quiet_NaN();
  double tensor_core_pct = std::numeric_limits<double>::quiet_NaN();
  double busy_pct() const {
    return last_end > first_start
               ? 100.0 * static_cast<double>(busy_ns) / static_cast<double>(sat_sub(last_end, first_start))
               : 0;
  }
};

struct CopySummary {
  std::string direction;    // "Host-to-Device", ... (nsys's labels)
  std::string host_memory;  // "Pageable", "Pinned", "" when no host side
  int64_t count = 0, bytes = 0, total_ns = 0;
  std::string link;  // host link of the GPUs ("PCIe 4.0 x16"), empty when unknown or not crossed
  double link_peak_gb_per_s = 0;
  double gb_per_s() const { return total_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(total_ns) : 0; }
  double link_use_pct() const { return link_peak_gb_per_s > 0 ? 100.0 * gb_per_s() / link_peak_gb_per_s : 0; }
};

struct StepsSummary {
  StepSource source = StepSource::kProfilerStep;
  size_t count = 0;
  int64_t median_cpu_ns = 0;       // median step CPU window
  int64_t median_gpu_span_ns = 0;  // median first-to-last GPU work of a step
  int64_t median_gpu_busy_ns = 0;
  double median_busy_pct = 0;  // median over steps of busy / step length (CPU window)
};

// Model FLOPs (analysis/pytorch/flops_reports.h; PyTorch traces recorded with shapes): the steps'
// achieved model TFLOP/s and MFU, and the operators that carry the FLOPs.
struct NamedFlops {
  std::string name;
  int64_t calls = 0, flops = 0;
};
struct MfuSummary {
  int64_t steps = 0;                // steps with model FLOPs
  double median_tflops_per_s = 0;   // over those steps: model FLOPs / CPU window
  bool peaks_known = false;         // every step's FLOPs ran on a GPU with a known peak
  double median_mfu_pct = 0;        // then: median MFU of those steps
  std::string gpus;                 // the GPUs whose peaks count, by table name
  int64_t model_flops = 0;          // every counted operator's (in steps or not): the shares' whole
  std::vector<NamedFlops> top_ops;  // by FLOPs, the `top` largest
  int64_t unknown_ops = 0;          // operators whose shapes said too little for a formula
  int64_t overflowing_ops = 0;      // of those, operators whose shapes give 2^63 FLOPs or bytes or more
  // The median MFU, when it is one: a share of the peak above 100% says the recorded types or
  // shapes are wrong, not how well the GPU was used.
  bool mfu_known() const { return peaks_known && median_mfu_pct <= 100; }
};

// The TensorBoard plugin's average step (tb_step_breakdown's Average row) over every process's steps:
// where a step's time goes, each role taking the time no role before it took (Kernel, Memcpy, Memset,
// Communication, Runtime, DataLoader, CPU Exec, Other).
struct StepRolesSummary {
  int64_t steps = 0;
  double step_ns = 0;               // mean step duration
  std::array<double, 8> role_ns{};  // mean ns of each role, in that order
  static const char* role_name(size_t role);
};

// Framework dispatch overhead (analysis/pytorch/dispatch_overhead.h): CPU self time of the PyTorch
// operators outside CUDA calls, against the GPU time they launched.
struct DispatchSummary {
  int64_t framework_ns = 0, cuda_api_ns = 0, gpu_ns = 0, kernels = 0;
  std::vector<NamedTotal> top_ops;  // by framework time (total_ns), descending
};

// A CPU thread worth a line: a process's main thread, or one that waited on locks or the GPU.
struct ThreadSummary {
  int64_t pid = 0, tid = 0;
  std::string name;
  bool main = false;
  int64_t span_ns = 0;
  int64_t running_ns = -1;  // -1: no thread switches recorded
  int64_t lock_waits = 0, lock_wait_ns = 0;
  int64_t sync_wait_ns = 0, api_ns = 0;
  // CPU samples (nsys --sample=cpu) per class of what the thread was doing (analysis/cpu_samples.h's
  // SampleClass, in its order); empty without samples.
  std::vector<int64_t> sample_classes;
  // With thread switches, for a thread that launches GPU work: its process's GPU idle time in its
  // span and, of it, the time running, blocked in a traced wait, and off the CPU otherwise
  // (analysis/thread_schedule.h); gpu_idle_ns -1 otherwise.
  int64_t gpu_idle_ns = -1, idle_running_ns = 0, idle_blocked_ns = 0, idle_other_ns = 0;
};

// Across ranks (two or more GPUs; analysis/cross_rank.h): each GPU's step time and work, the one
// that computes longest, and the skew of the collectives (who the others wait for).
struct RankRow {
  int64_t pid = 0, rank = -1;
  int32_t device = 0;
  std::string name;            // GPU name, when recorded
  int64_t steps = 0;           // its process's (rank's) steps, 0 without
  int64_t step_median_ns = 0;  // median CPU window of those steps
  int64_t busy_ns = 0, compute_ns = 0;
  int64_t exposed_comm_ns = 0;       // communication not under compute
  int64_t collectives = 0;           // matched collectives it took part in
  int64_t last = 0;                  // ... that it started last
  int64_t late_ns = 0, wait_ns = 0;  // summed: own start - earliest; latest - own start
};

struct RanksSummary {
  std::vector<RankRow> rows;                // as the devices
  size_t slowest = 0;                       // row computing longest
  double slowest_ratio = 0;                 // its compute over the median row's
  int64_t most_often_last = -1;             // row that started last at most collectives, -1 when none
  std::vector<CollectiveSkew> collectives;  // by time waited, the `top` largest
  int64_t matched = 0, unmatched_names = 0;
};

struct FindingsSummary {                      // what `tracedoc analyze`'s rules list, counted
  int64_t sync_calls = 0, sync_call_ns = 0;   // cuda_api_sync
  int64_t sync_copies = 0, sync_copy_ns = 0;  // cuda_memcpy_sync
  int64_t pageable_async_copies = 0;          // cuda_memcpy_async
  int64_t sync_memsets = 0;                   // cuda_memset_sync
};

// With Nsight Compute reports (--ncu): how their launches matched, and for each top kernel that
// ncu profiled the answers of the launch standing for it (analysis/ncu_join.h).
struct NcuKernelSummary {
  std::string name;
  int64_t report = 0, launch = 0;  // index of the report (in --ncu order) and of the launch in it
  NcuAnswers answers;
};
struct NcuSummary {
  int64_t reports = 0, launches = 0, matched = 0;
  std::vector<NcuKernelSummary> kernels;  // in top_kernels order
};

struct TraceSummary {
  std::string input, format, producer;  // producer: "nsys 2024.5.1" / "PyTorch profiler (era 4)"
  TimeNs span_start = 0, span_end = 0;  // first to last recorded event (GPU and CPU)
  int64_t gpu_ops = 0, api_calls = 0, ranges = 0, cpu_ops = 0;
  std::vector<DeviceSummary> devices;
  int64_t kernel_total_ns = 0;
  std::vector<NamedTotal> top_kernels;  // by total time, descending
  std::vector<NamedTotal> top_api;      // CUDA/HIP API calls by total time
  std::vector<CopySummary> copies;      // by bytes, descending
  std::optional<StepsSummary> steps;
  std::optional<StepRolesSummary> step_roles;  // PyTorch traces
  std::optional<DispatchSummary> dispatch;     // PyTorch traces with operators
  std::optional<MfuSummary> mfu;               // PyTorch traces with shapes and model FLOPs
  std::vector<ThreadSummary> threads;          // main threads and threads that waited, by pid and tid
  std::optional<RanksSummary> ranks;           // two or more GPUs
  FindingsSummary findings;
  int64_t gap_threshold_ns = 0;
  std::optional<NcuSummary> ncu;
  // GPU hardware metrics (nsys --gpu-metrics-devices), per sampled GPU; empty without them. Like
  // `ncu`, read from the trace itself, not merged from a job's parts.
  std::vector<GpuMetricsDevice> gpu_metrics;
};

struct SummaryOptions {
  size_t top = 5;                      // rows in the top-kernel / top-API lists
  int64_t gap_threshold_ns = 1000000;  // gaps counted per device: idle stretches over 1 ms
  StepOptions steps;
  // The kernels' duration quantiles: 0 keeps every duration (exact); a rank's part sent across
  // machines keeps a sketch of this capacity per kernel name (analysis/quantile_sketch.h).
  uint32_t quantile_capacity = 0;
};

// The gap threshold of a number of milliseconds (summary --gap, Python's gap_ms): from 0 to a
// billion ms (11.6 days); NaN, infinities and larger values are usage errors, never a threshold
// cast past the int64 range.
Result<int64_t> gap_threshold_from_ms(double ms);

TraceSummary summarize(const Trace& trace, const SummaryOptions& options = {});

// What a summary is made of before anything is ranked, averaged or compared across GPUs: every
// figure that merges exactly (counts, sums, extremes), every name's totals (not the top few), each
// step's values and each collective's start times (never the events). A job's ranks, read one by
// one (on different machines), give parts whose merge is the summary of the whole rank directory,
// exactly as `tracedoc summary DIR` computes it: summarize(trace) is merge_summary_parts of the
// trace's one part.
struct StepValues {
  int64_t cpu_ns = 0;  // the CPU window
  bool gpu = false;    // whether the step launched GPU work (the next three are set only then)
  int64_t gpu_span_ns = 0, gpu_busy_ns = 0;
  bool has_pct = false;
  double busy_pct = 0;
  int64_t model_flops = 0;     // of the step's operators (flops_reports.h's step_flops)
  double seconds_at_peak = 0;  // what they take at their GPUs' peaks
  bool peaks_known = false;    // for every one of them
};

struct SummaryUnitPart {  // a GPU unit (a rank's or process's device), as the Ranks section reads it
  RankRow row;            // its own figures (the collective columns are filled by the merge)
  std::vector<int64_t> step_ns;
};

struct CopyPart {
  uint8_t copy_kind = 0, host = 0;  // the grouping key
  bool mixed_links = false;
  CopySummary copy;
};

struct SummaryPart {
  std::string input, format, producer;
  int64_t rank = -1;         // PyTorch traces: the file's rank (-1 unknown: the merge numbers it)
  TimeNs clock_base_ns = 0;  // PyTorch traces: the file's clock base (times are relative to it)
  bool any_time = false;     // whether span_start/end hold anything
  TimeNs span_start = 0, span_end = 0;
  int64_t gpu_ops = 0, api_calls = 0, ranges = 0, cpu_ops = 0;
  std::vector<DeviceSummary> devices;
  int64_t kernel_total_ns = 0;
  std::vector<NamedTotal> kernels, api;  // every name
  std::vector<CopyPart> copies;
  bool has_steps = false;
  StepSource step_source = StepSource::kProfilerStep;
  std::vector<StepValues> steps;
  int64_t role_steps = 0;  // the TensorBoard plugin's steps: count, summed duration and roles
  int64_t role_step_ns = 0;
  std::array<int64_t, 8> role_ns{};
  bool has_dispatch = false;
  DispatchSummary dispatch;                // top_ops holds every operator
  std::vector<NamedFlops> model_flop_ops;  // every operator name with model FLOPs
  std::vector<std::string> peak_gpus;      // the GPUs' table names, sorted
  int64_t unknown_flop_ops = 0;
  int64_t overflowing_flop_ops = 0;
  std::vector<ThreadSummary> threads;
  bool pytorch_units = false;
  std::vector<SummaryUnitPart> units;
  CollectiveStarts collectives;  // over `units`
  FindingsSummary findings;
  int64_t gap_threshold_ns = 0;
};

SummaryPart summary_part(const Trace& trace, const SummaryOptions& options = {});

// Such lists (from different traces) added up per name, in name order.
std::vector<NamedTotal> merge_named_totals(const std::vector<const std::vector<NamedTotal>*>& lists);

// The summary of parts: PyTorch rank files are merged as a rank directory is (ordered by rank, the
// unknown ranks numbered in file order, times on the earliest clock base); other parts are taken
// as they come. `input` names the whole (the directory); empty keeps the first part's. Only
// options.top is read (the rest was applied by summary_part).
TraceSummary merge_summary_parts(std::vector<SummaryPart> parts, const SummaryOptions& options,
                                 const std::string& input = {});

// A part as bytes (to send from the machine that read the rank to the one that merges) and back.
// Decoding checks every length: bytes that are not a part give BadInput.
std::string encode_summary_part(const SummaryPart& part);
Result<SummaryPart> decode_summary_part(std::string_view bytes);

}  // namespace tracedoc
