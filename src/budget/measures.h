// The figures a budget limits, measured on one trace with the analyses the other commands use, so
// that `tracedoc check` and `summary` / `diagnose` / `stats` never disagree about a number:
//  - steps: the step windows of the diagnosis (AnalysisContext: ProfilerStep#N, the marker, or
//    detected steps, each stretched to the end of the GPU work it launched and starting no earlier
//    than the previous step ended), every process's (rank's) steps pooled;
//  - per GPU (AnalysisContext's units: rank or process, and device): the union of its kernels,
//    copies and memsets, and of its host<->device copies, inside its owner's step windows, or inside
//    its own span when the trace has no steps (gpu_idle's basis);
//  - memory: the peak of allocated GPU memory per process and device (analysis/gpu_memory.h, as
//    gpu_mem_sum and summary report it);
//  - kernels: count and summed duration of the kernels whose demangled name a [[kernel]] regex
//    finds (as cuda_gpu_kern_sum sums them), and of all kernels;
//  - ranks: each GPU unit's computation time (the union of its computation kernels, as the straggler
//    rule sums it) and the skew of the collectives matched across the units (analysis/cross_rank.h);
//  - findings: the diagnosis with the forbidden rules only (a part per trace, merged: diagnose/parts.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/steps.h"
#include "analysis/summary.h"
#include "budget/budget.h"
#include "diagnose/engine.h"
#include "diagnose/parts.h"
#include "model/trace.h"

namespace tracedoc::budget {

struct GpuMeasure {
  std::string label;      // "pid 4242 GPU 0 (NVIDIA A100-SXM4-80GB)", "rank 1 GPU 1 (...)"
  int64_t window_ns = 0;  // its owner's step windows, or its own span without steps
  int64_t busy_ns = 0;    // union of its kernels, copies and memsets inside the windows
  int64_t copy_ns = 0;    // union of its host<->device copies inside the windows
  double busy_pct() const;
  double copy_pct() const;
};

struct MemoryMeasure {
  std::string label;  // as GpuMeasure's
  int64_t peak_bytes = 0;
};

// Across ranks (two or more GPU units), as summary's Ranks section and the straggler rule see them.
struct RanksMeasure {
  int64_t gpus = 0;
  std::string slowest;  // the GPU computing longest
  int64_t slowest_compute_ns = 0,
          median_compute_ns = 0;  // union of computation kernels; median as analysis/statistics.h
  int64_t collectives = 0;        // matched across the GPUs
  int64_t skew_p50_ns = 0;        // median skew of those
};

struct KernelMeasure {  // one per Budget::kernels entry, in order
  int64_t count = 0, total_ns = 0;
};

struct Measures {
  std::string input;
  std::string step_source;       // "ProfilerStep", "marker", "detected"; empty without steps
  std::vector<int64_t> step_ns;  // the step windows' lengths, ascending
  std::vector<GpuMeasure> gpus;  // ordered by (rank or process, device)
  bool memory_recorded = false;  // the trace holds GPU memory events
  std::vector<MemoryMeasure> memory;
  RanksMeasure ranks;
  int64_t kernel_total_ns = 0;  // every kernel's duration, summed
  std::vector<KernelMeasure> kernels;
  std::optional<diagnose::Diagnosis> diagnosis;  // the forbidden rules' findings

  // The `pct` percentile of the step times (analysis/statistics.h: linear between the closest ranks,
  // so p50 is the median every other command prints); 0 without steps.
  int64_t step_percentile(int pct) const;
  // Busy share of all GPUs together (their busy time over their windows), for baseline comparisons:
  // it does not depend on process ids, which change from run to run.
  double overall_busy_pct() const;
};

// What to measure: everything the budget limits, or only what its baseline limits compare (steps
// and GPU busy time).
enum class MeasureScope : uint8_t { kAll, kBaseline };

Measures measure(const Trace& trace, const Budget& budget, MeasureScope scope = MeasureScope::kAll);

// The measures of a job read one rank at a time (tracedoc.distributed): each rank file's part,
// merged as the rank directory reader merges the ranks (analysis/summary.h says how), gives what
// measure() gives on the whole directory. The parts hold what merges exactly: the step lengths,
// each GPU unit's figures with what labels it, each memory series' peak, every kernel name's count
// and total, the group collectives' start times. measure() is the merge of a trace's one part.
struct UnitPart {  // a GPU unit (or a memory series), labelled at the merge (its rank may be unknown)
  int64_t rank = -1, pid = 0;
  int32_t device = 0;
  std::string device_name;
  int64_t window_ns = 0, busy_ns = 0, copy_ns = 0, compute_ns = 0;  // a GPU unit's
  int64_t peak_bytes = 0;                                           // a memory series'
};

struct MeasurePart {
  std::string input;
  bool pytorch = false;
  int64_t rank = -1;         // PyTorch traces: the file's rank (-1 unknown)
  TimeNs clock_base_ns = 0;  // PyTorch traces: the file's clock base
  MeasureScope scope = MeasureScope::kAll;
  bool has_steps = false;
  StepSource step_source = StepSource::kProfilerStep;
  std::vector<int64_t> step_ns;
  std::vector<UnitPart> gpus;
  bool memory_recorded = false;
  std::vector<UnitPart> memory;
  CollectiveStarts collectives;  // over `gpus`
  int64_t kernel_total_ns = 0;
  std::vector<NamedTotal> kernels;   // every kernel name, when the budget limits kernels
  bool diagnosed = false;            // the budget forbids findings
  diagnose::DiagnosePart diagnosis;  // the forbidden rules' part (diagnose/parts.h)
};

// `one_of_ranks`: the trace is one rank file of a job of several (diagnose/parts.h).
MeasurePart measure_part(const Trace& trace, const Budget& budget, MeasureScope scope = MeasureScope::kAll,
                         bool one_of_ranks = false);
// `directory`: the parts are a rank directory's files (empty: taken as they come, e.g. one trace).
// Fails only where the forbidden rules' diagnosis of the parts does (merge_diagnose_parts).
Result<Measures> merge_measure_parts(std::vector<MeasurePart> parts, const Budget& budget,
                                     const std::string& directory = {});

std::string encode_measure_part(const MeasurePart& part);
Result<MeasurePart> decode_measure_part(std::string_view bytes);

}  // namespace tracedoc::budget
