// The shared analysis cache of diagnose, check, diff and view: the trace, and the analyses several
// of them need (GPU work per device, steps and their windows, operator links, busy time), each
// computed once on first use.
//
// Time basis. A finding's share is its estimated savings over the time the run took: the sum of the
// step windows of the process (each step's CPU window stretched to the end of the GPU work it
// launched, and starting no earlier than the previous step ended), or, without steps, the span of
// the process's GPU work. For several processes (ranks) the basis is the largest of theirs, since
// they run side by side.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/ncu_answers.h"
#include "analysis/ncu_join.h"
#include "analysis/pytorch/flops_reports.h"
#include "analysis/pytorch/gpu_work.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/statistics.h"  // median_ns, the one median of the rules
#include "analysis/steps.h"
#include "analysis/offender.h"
#include "model/trace.h"

namespace tracedoc {

// How every command names a GPU unit: "rank 1 GPU 0 (NVIDIA H100 80GB HBM3)", "pid 4242 GPU 0",
// "GPU 0" (a PyTorch trace of unknown rank); the name in brackets when known.
std::string gpu_unit_label(int64_t rank, int64_t pid, int32_t device, bool pytorch, const std::string& device_name);

class AnalysisContext {
 public:
  AnalysisContext(const Trace& trace, StepOptions step_options);

  const Trace& trace() const { return trace_; }
  bool pytorch() const { return trace_.source.format == "kineto-json"; }

  // GPU work per (rank or process, device), tracedoc's classes; no syncs, nothing dropped.
  const pytorch::GpuWork& gpu_work();
  // GPU activity -> launching call; on PyTorch traces with operators, op_links()'s own (computed once).
  const pytorch::GpuLaunches& launches();
  const pytorch::OpLinks& op_links();  // PyTorch traces (empty tables otherwise)
  // The operators' FLOPs and bytes with their kernels' time (analysis/pytorch/flops_reports.h), and
  // the peaks of the trace's GPUs from the table.
  const pytorch::FlopsAttribution& flops();
  const std::map<int32_t, GpuPeaks>& gpu_peaks();
  // The union of a unit's work (one of gpu_work().units), computed once per unit.
  const IntervalSet& busy(const pytorch::GpuUnit& unit);
  // The union of the work of every unit of an owner (all its devices).
  IntervalSet owner_busy(int64_t owner);
  // The time none of an owner's GPUs works, inside its step windows (else between its first and
  // last GPU work): what the rules about the host call GPU idle time. Empty without GPU work.
  IntervalSet owner_idle(int64_t owner);

  // The Nsight Compute launches joined to the kernels (empty without Trace::ncu_reports), and the
  // answers of one launch, each derived once.
  const NcuJoin& ncu_join();
  const NcuAnswers& ncu_answers(NcuLaunchRef launch);

  // The steps, nullptr when the trace has none (no marker, nothing periodic).
  const StepSet* steps();
  // The step windows of an owner (rank tag or global pid, as GpuUnit::owner), stretched as above:
  // for what happens on the GPU and for the time basis.
  const std::vector<Interval>& windows_of(int64_t owner);
  // The step (index into steps()->steps) of each of those windows.
  const std::vector<size_t>& window_steps_of(int64_t owner);
  // The same steps' CPU windows, as recorded, in start order: for what the CPU records in a step
  // (allocator events, data loading, OS calls), which the stretched windows would shift into the
  // next step wherever the GPU runs behind the CPU.
  const std::vector<Interval>& cpu_windows_of(int64_t owner);
  // The owner of a CPU thread or process id.
  int64_t owner_of(int64_t global_id) const;
  // The windows a unit's shares are computed over: its owner's steps, else its own span.
  std::vector<Interval> unit_windows(const pytorch::GpuUnit& unit);
  // The time basis of the whole trace (above).
  int64_t basis_ns();

  // "rank 0 GPU 0 (NVIDIA A100-SXM4-80GB)", "pid 4242 GPU 0".
  std::string unit_label(const pytorch::GpuUnit& unit) const;  // gpu_unit_label with its device's name
  std::string device_name(int32_t device) const;
  // What a finding about a whole process says it concerns: "rank 2", "pid 4242", or "trace" for a
  // single PyTorch file.
  std::string owner_label(int64_t owner) const;
  // A single PyTorch file read as one rank of a job of several (diagnose/parts.h): its process is
  // "rank N" (its rank), as the job's merged trace names it, not "trace".
  void name_as_rank_of_job() { rank_of_job_ = true; }

  // What the CPU of `owner` was doing during `during`: the annotation ranges (NVTX,
  // record_function; step markers left out) and outermost PyTorch operators overlapping it, by
  // overlapped time, the `top` largest.
  std::vector<Offender> cpu_activity_during(const IntervalSet& during, int64_t owner, size_t top);

  // Where an API call was made: its innermost PyTorch operator, else the innermost annotation range
  // (NVTX push/pop, record_function) holding its start on its thread; empty when none.
  std::string call_site(size_t api_row);

 private:
  void ensure_steps();

  const Trace& trace_;
  StepOptions step_options_;
  std::optional<pytorch::GpuWork> work_;
  std::optional<pytorch::GpuLaunches> launches_;
  std::optional<pytorch::OpLinks> links_;
  std::optional<pytorch::FlopsAttribution> flops_;
  std::optional<std::map<int32_t, GpuPeaks>> peaks_;
  std::vector<std::optional<IntervalSet>> busy_;  // by unit index
  std::optional<NcuJoin> ncu_join_;
  std::map<std::pair<int32_t, int32_t>, NcuAnswers> ncu_answers_;  // by (report, result)
  bool steps_done_ = false;
  std::optional<StepSet> steps_;
  std::vector<std::pair<int64_t, std::vector<Interval>>> windows_;      // per owner, stretched
  std::vector<std::pair<int64_t, std::vector<size_t>>> window_steps_;   // per owner: each window's step
  std::vector<std::pair<int64_t, std::vector<Interval>>> cpu_windows_;  // per owner, as recorded
  std::optional<int64_t> basis_;
  bool rank_of_job_ = false;
  // Annotation ranges per thread, by start (for call_site).
  std::optional<std::map<int64_t, std::vector<uint32_t>>> ranges_by_thread_;
};

// Share of part in whole (0 when whole <= 0).
double share_of(int64_t part, int64_t whole);

}  // namespace tracedoc
