// Figures across the ranks of a distributed run: a merged directory of per-rank PyTorch traces, or
// an nsys export with one process (or one device) per rank. Each GPU unit (analysis/pytorch/
// gpu_work.h: (rank, device) or (process, device)) is a participant.
//
// Collective skew. NCCL (and RCCL) require every rank of a communicator to issue its collectives in
// the same order, so the k-th instance of a collective kernel name on each participant is the same
// collective. Its kernels cannot finish before the last rank arrives: the spread of their start
// times (the skew) is how long the early ranks waited, and the rank that starts last most often is
// the one the others wait for. Only collectives are matched (all-reduce, all-gather, reduce-scatter,
// broadcast, reduce, all-to-all): point-to-point kernels (SendRecv, Send, Recv) pair ranks, not the
// whole group. Where Kineto attached collective arguments to a kernel, they decide instead of the
// name (NCCL runs all-to-all as SendRecv kernels): every collective but send and recv is matched. A name is matched
// across the participants that launched it, when there are at least two and each launched it equally often (runs cut at
// different points leave the counts unequal: that name is counted as unmatched, not guessed at).
//
// Clocks. The participants of one nsys export share its clock; a merged PyTorch rank directory is
// aligned by baseTimeNanoseconds (or absolute epoch times), which is as good as the hosts' clock
// sync: a constant offset between two hosts shows as a constant skew.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/pytorch/gpu_work.h"
#include "analysis/steps.h"
#include "common/status.h"
#include "model/trace.h"

namespace tracedoc {

struct CollectiveSkew {
  std::string name;            // the kernel name
  int64_t participants = 0;    // GPU units that launched it
  int64_t matched = 0;         // collectives matched (the count on each participant)
  int64_t median_skew_ns = 0;  // median over the matched collectives of (latest start - earliest start)
  int64_t max_skew_ns = 0;
  TimeNs max_skew_at = kNoTime;  // the earliest start of the collective with the largest skew
  int64_t wait_ns = 0;           // summed over collectives and participants: latest start - own start
};

struct ParticipantSkew {
  size_t unit = 0;          // index into GpuWork::units
  int64_t collectives = 0;  // matched collectives it took part in
  int64_t last = 0;         // how many of them it started last (ties: none counted)
  int64_t late_ns = 0;      // summed: own start - earliest start
  int64_t wait_ns = 0;      // summed: latest start - own start (time it waited for the others)
};

struct CrossRankSkew {
  std::vector<CollectiveSkew> collectives;    // by wait_ns, descending
  std::vector<ParticipantSkew> participants;  // one per GPU unit, in unit order (zeros without collectives)
  int64_t matched = 0;                        // collectives matched, all names
  int64_t median_skew_ns = 0;                 // over every matched collective (analysis/statistics.h)
  int64_t unmatched_names = 0;                // collective names left out: unequal counts
};

// Each unit's computation time (the union of its computation kernels over the whole trace, as the
// straggler rule sums it) and the longest against the median unit's (analysis/statistics.h: of two
// units, their mean). summary's Ranks section, check's [ranks] and diff's ranks all read it.
struct ComputeBalance {
  std::vector<int64_t> compute_ns;  // per unit, in unit order
  size_t slowest = 0;               // the unit computing longest (the first of equals)
  int64_t median_ns = 0;
  double ratio() const;  // slowest over median; 0 when the median is 0 or there are no units
};
ComputeBalance compute_balance(const pytorch::GpuWork& work);
// The same from each unit's computation time, where the caller has it already.
ComputeBalance compute_balance(std::vector<int64_t> compute_ns);

// Empty (no collectives) for fewer than two units.
CrossRankSkew collective_skew(const Trace& trace, const pytorch::GpuWork& work);

// The two halves of collective_skew, for figures merged from per-rank parts (analysis/summary.h):
// per group-collective kernel name (in name order), each unit's start times in start order (a unit
// without that name has none; the outer vector may be shorter than the units), and the skew of
// such starts over `units` units.
using CollectiveStarts = std::map<std::string, std::vector<std::vector<TimeNs>>, std::less<>>;
CollectiveStarts collective_starts(const Trace& trace, const pytorch::GpuWork& work);
CrossRankSkew collective_skew(const CollectiveStarts& starts, size_t units);
// Adds a part's starts (over its own units) to `into`, its units placed from `first_unit` on, of
// `units` in all; its times moved by `shift` (onto a directory's clock).
void add_collective_starts(CollectiveStarts& into, const CollectiveStarts& part, size_t first_unit, size_t units,
                           TimeNs shift);

// The order of a rank directory's ranks (ingest/kineto_directory.cpp), for parts read from its files
// one by one (analysis/summary.h, budget/measures.h): files without a rank are numbered in file
// order, the parts sorted by rank, and `place(part, shift)` called on each with its rank set and
// the shift of its times onto the earliest clock base. Part has `rank` and `clock_base_ns`.
template <typename Part, typename Place>
void order_as_rank_directory(std::vector<Part>& parts, Place place) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].rank < 0) parts[i].rank = static_cast<int64_t>(i);
  }
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.rank < b.rank; });
  TimeNs base = kNoTime;
  for (const Part& p : parts) {
    if (p.clock_base_ns > 0 && (base == kNoTime || p.clock_base_ns < base)) base = p.clock_base_ns;
  }
  for (Part& p : parts) place(p, p.clock_base_ns > 0 ? p.clock_base_ns - base : 0);
}

// The step source of the parts' whole. One trace finds its steps with one source for all its
// processes (a marker before ProfilerStep ranges before detection, StepSource's order): ranks whose
// steps came from a later source have none in the whole. Part has `has_steps` and `step_source`.
template <typename Part>
std::optional<StepSource> merged_step_source(const std::vector<Part>& parts) {
  std::optional<StepSource> source;
  for (const Part& p : parts) {
    if (p.has_steps && (!source || p.step_source < *source)) source = p.step_source;
  }
  return source;
}

// The one way every part with steps found them (none: no part has steps). Analyses that a rank's
// steps shape throughout (diagnose, diff) cannot follow a job whose ranks found their steps in
// different ways, as its merged trace finds them one way for all: a UsageError naming two such
// rank files, `whole` the job, and `command` the command to run on the directory instead.
template <typename Part>
Result<std::optional<StepSource>> common_step_source(const std::vector<Part>& parts, const std::string& whole,
                                                     std::string_view command) {
  const Part* stepped = nullptr;
  for (const Part& p : parts) {
    if (!p.has_steps) continue;
    if (stepped && p.step_source != stepped->step_source) {
      return UsageError(fmt::format(
          "{}: {} finds its steps by {}, {} by {}: a job's ranks are read one by one only when they find their "
          "steps alike ({} the directory in one process, or give every rank the step marker)",
          whole, stepped->input, step_source_name(stepped->step_source), p.input, step_source_name(p.step_source),
          command));
    }
    stepped = &p;
  }
  if (!stepped) return std::optional<StepSource>();
  return std::optional<StepSource>(stepped->step_source);
}

// Whether a kernel name is a group collective (not point-to-point): NCCL/RCCL names holding
// AllReduce, AllGather, ReduceScatter, Broadcast, Reduce or AllToAll, without SendRecv/Send/Recv.
bool is_group_collective(std::string_view kernel_name);

}  // namespace tracedoc
