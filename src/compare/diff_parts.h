// One side of `tracedoc diff` (a trace, or a job of rank files) as what the comparison reads, in
// parts: each rank file's part is computed where the file is read (tracedoc.distributed.diff, over
// Dask) and the parts merged into the side, which gives what the merged rank directory gives.
// diff_traces is the comparison of two sides of one part each, so one code path serves both.
//
// A part carries what merges exactly: each GPU's time split over its steps and over its span (the
// comparison picks one when it knows whether both sides have steps), its computation time, its
// steps' count and median, the group collectives' start times (the waits and skew are computed on
// the merged starts), every kernel's, operator's and range's per-instance durations (the rank test
// needs every value: 8 bytes an instance), and the diagnosis part (diagnose/parts.h).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/steps.h"
#include "common/status.h"
#include "compare/trace_diff.h"
#include "diagnose/parts.h"

namespace tracedoc::compare {

// Per-instance durations by name (kernels, operators or ranges) on one side.
using Samples = std::map<std::string, std::vector<int64_t>, std::less<>>;

// One GPU (rank or process, device) of a side.
struct DiffUnit {
  std::string key;    // how GPUs are matched across runs: "rank 3", "process #2 GPU 0"
  std::string label;  // as commands name it: "rank 3 GPU 0 (NVIDIA H100 80GB HBM3)"
  // Its time split (pytorch::time_parts, the five parts of trace_diff.h) over its owner's step
  // windows, and over the span of its work; with the windows' count and summed length. A GPU whose
  // owner has no steps is split over the windows of the trace's owner with the most (own_windows
  // false): only a side of one part has them all.
  bool own_windows = false;
  std::array<int64_t, 5> step_parts{}, span_parts{};
  int64_t step_windows = 0, step_window_ns = 0, span_windows = 0, span_window_ns = 0;
  int64_t compute_ns = 0;                 // the union of its computation kernels
  int64_t steps = 0, step_median_ns = 0;  // its owner's step windows
};

struct DiffPart {
  std::string input, format;
  bool pytorch = false;
  int64_t rank = -1;                               // PyTorch traces: the file's rank (-1 unknown)
  TimeNs clock_base_ns = 0;                        // PyTorch traces: the file's clock base
  int64_t kernels = 0, operators = 0, ranges = 0;  // rows
  bool has_steps = false;
  StepSource step_source = StepSource::kProfilerStep;
  std::vector<int64_t> step_ns;   // every owner's step windows
  int64_t step_owners = 0;        // owners with steps
  std::vector<int64_t> gpu_pids;  // processes with GPU work, ascending
  int64_t gpu_owners = 0;         // owners (ranks or processes) with GPU work
  std::vector<DiffUnit> units;
  CollectiveStarts collectives;  // over `units`
  Samples kernel_samples, operator_samples, range_samples;
  bool diagnosed = false;  // options.findings
  diagnose::DiagnosePart diagnosis;
};

// `one_of_ranks`: the trace is one rank file of a job of several (diagnose/parts.h).
DiffPart diff_part(const Trace& trace, const DiffOptions& options, bool one_of_ranks = false);

// A side: its parts merged, or one trace's.
struct DiffSide {
  SideInfo info;
  bool has_steps = false;
  std::string step_source;
  std::vector<int64_t> step_ns;
  double steps_per_owner = 0;  // 0 without steps
  std::vector<int64_t> gpu_pids;
  int64_t gpu_owners = 0;
  std::vector<DiffUnit> units;
  bool one_part = true;  // the units without steps of their own have their fallback split
  CrossRankSkew skew;    // over `units`, when two or more
  Samples kernel_samples, operator_samples, range_samples;
  bool has_operators = false;
  std::optional<diagnose::Diagnosis> diagnosis;
  size_t place_of(int64_t pid) const;  // a process's place (1, 2, ...) among gpu_pids; 0 when absent
};

// `directory`: the parts are a rank directory's files (empty: taken as they come, e.g. one trace).
// Ranks finding their steps in different ways are refused, as diagnose refuses them.
Result<DiffSide> merge_diff_parts(std::vector<DiffPart> parts, const DiffOptions& options,
                                  const std::string& directory = {});

// The comparison of two sides. A job's GPU without steps of its own, where both sides have steps,
// would be split over another rank's steps: refused (a UsageError) unless its side is one trace.
Result<TraceDiff> diff_sides(DiffSide base, DiffSide next, const DiffOptions& options);

std::string encode_diff_part(const DiffPart& part);
Result<DiffPart> decode_diff_part(std::string_view bytes);

}  // namespace tracedoc::compare
