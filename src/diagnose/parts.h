// A job's diagnosis from its ranks read one by one (tracedoc.distributed.diagnose, over Dask): each
// rank's part, computed where its file is read, and the merge of the parts, which gives what
// diagnose() gives on the merged rank directory, finding for finding.
//
// A rule over each rank on its own (its GPUs, its threads: all but straggler and long_tail) finds
// in a rank's part what it finds for that rank in the whole job, except for the time basis: the
// job's is the largest of its ranks' (analysis/context.h), so a rank rates its findings on its own,
// smaller basis, keeps every finding a larger basis might keep, and records how it rated each one
// (Finding::rating); the merge rates them again on the job's basis and drops those whose condition
// on the basis no longer holds. The rules comparing ranks (straggler, long_tail) run at the merge on
// the ranks' JobInputs joined: every rank's computation time, every kernel's durations.
//
// diagnose() on one trace is the merge of its one part, so one code path serves both.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/steps.h"
#include "common/status.h"
#include "diagnose/engine.h"
#include "diagnose/rules.h"

namespace tracedoc::diagnose {

struct DiagnosePart {
  std::string input;
  bool pytorch = false;
  int64_t rank = -1;         // PyTorch traces: the file's rank (-1 unknown)
  TimeNs clock_base_ns = 0;  // PyTorch traces: the file's clock base
  bool has_steps = false;
  StepSource step_source = StepSource::kProfilerStep;
  int64_t steps = 0;
  int64_t basis_ns = 0;
  std::vector<Finding> findings;  // the per-rank rules', in rule order, rated on basis_ns, unfiltered
  JobInputs job;                  // for the rules comparing ranks
};

// `ctx` must have been made with options.steps.
DiagnosePart diagnose_part(Context& ctx, const DiagnoseOptions& options);
// `one_of_ranks`: the trace is one rank file of a job of several, whose diagnosis names its
// process "rank N" (a trace alone is "trace").
DiagnosePart diagnose_part(const Trace& trace, const DiagnoseOptions& options, bool one_of_ranks = false);

// A PyTorch trace without a rank (no distributedInfo, none in its file name) takes, in a rank
// directory, its place among the directory's traces as its rank: assume_rank gives a rank file
// read alone that rank, so that its part names its GPUs as the job's diagnosis does. False, and
// nothing changed, for a trace that has a rank or is not a PyTorch trace.
bool assume_rank(Trace& trace, int64_t rank);

// `directory`: the parts are a rank directory's files (empty: taken as they come, e.g. one trace).
// A job whose ranks found their steps in different ways (a marker in some, ProfilerStep ranges in
// others) is diagnosed differently as a whole: refused with a UsageError.
Result<Diagnosis> merge_diagnose_parts(std::vector<DiagnosePart> parts, const DiagnoseOptions& options,
                                       const std::string& directory = {});

std::string encode_diagnose_part(const DiagnosePart& part);
Result<DiagnosePart> decode_diagnose_part(std::string_view bytes);

// The part's fields, once, for both directions (analysis/part_codec.h); a diff part holds one.
template <typename F>
void fields(F& f, Figure& x) {
  f(x.key), f(x.value), f(x.unit);
}
template <typename F>
void fields(F& f, TimeRange& x) {
  f(x.start), f(x.end), f(x.where), f(x.label);
}
template <typename F>
void fields(F& f, Rating& x) {
  f(x.savings_ns), f(x.warning), f(x.critical), f(x.gate_ns), f(x.gate_share), f(x.gate_on_savings);
}
template <typename F>
void fields(F& f, Finding& x) {
  f(x.id), f(x.severity), f(x.confidence), f(x.scope), f(x.title), f(x.time_based), f(x.savings_ns);
  f(x.savings_share), f(x.figures), f(x.offenders), f(x.ranges), f(x.remedy), f(x.rating);
}
template <typename F>
void fields(F& f, OwnerWork& x) {
  f(x.label), f(x.compute_ns), f(x.communication_ns);
}
template <typename F>
void fields(F& f, KernelInstances& x) {
  f(x.name), f(x.launch), f(x.durations), f(x.longest);
}
template <typename F>
void fields(F& f, DiagnosePart& p) {
  f(p.input), f(p.pytorch), f(p.rank), f(p.clock_base_ns), f(p.has_steps), f(p.step_source), f(p.steps);
  f(p.basis_ns), f(p.findings), f(p.job.owners), f(p.job.kernels);
}

}  // namespace tracedoc::diagnose
