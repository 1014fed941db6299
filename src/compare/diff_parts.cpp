#include "compare/diff_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "analysis/context.h"
#include "analysis/intervals.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/part_codec.h"
#include "analysis/statistics.h"
#include "model/emit_nvtx_names.h"
#include "model/step_names.h"

namespace tracedoc::compare {

namespace {

using pytorch::GpuUnit;
using pytorch::time_parts;
using pytorch::TimeParts;

int64_t duration_of(TimeNs start, TimeNs end) { return end > start ? sat_sub(end, start) : 0; }  // as cuda_gpu_kern_sum

// Groups rows by their name id first (cheap), then spells each name once.
template <typename NameOf, typename DurationOf>
Samples group_by_name(size_t rows, NameOf name_of, DurationOf duration_of_row, const Trace& t) {
  std::unordered_map<StrId, std::vector<int64_t>> by_id;
  for (size_t i = 0; i < rows; ++i) {
    const StrId id = name_of(i);
    if (id == kNoStr || id >= t.strings.size()) continue;
    by_id[id].push_back(duration_of_row(i));
  }
  Samples out;
  for (auto& [id, d] : by_id) {
    auto& slot = out[std::string(t.str(id))];
    slot.insert(slot.end(), d.begin(), d.end());  // distinct ids never share a text, but be safe
  }
  return out;
}

Samples kernel_samples(const Trace& t) {
  const KernelTable& k = t.kernels;
  return group_by_name(
      k.size(), [&](size_t i) { return k.name[i]; }, [&](size_t i) { return duration_of(k.start[i], k.end[i]); }, t);
}

Samples operator_samples(const Trace& t) {
  const OpTable& o = t.pytorch.ops;
  return group_by_name(
      o.size(), [&](size_t i) { return o.name[i]; }, [&](size_t i) { return duration_of(o.start[i], o.end[i]); }, t);
}

// Push/pop and start/end ranges by nvtx_sum's Range name (domain:text), step ranges and the ranges
// that are the trace's operators (emit_nvtx with shapes) left out.
Samples range_samples(const Trace& t) {
  const RangeTable& r = t.ranges;
  nsys_stats::NvtxNamer namer(t);
  std::map<std::pair<StrId, StrId>, std::vector<size_t>> groups;  // (domain, text) -> rows
  const bool ops_are_ranges = operators_are_ranges(t);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!nsys_stats::is_pushpop(r.kind[i]) && !nsys_stats::is_startend(r.kind[i])) continue;
    if (ops_are_ranges && range_is_operator(t, i)) continue;  // compared as operators
    groups[{namer.domain(i), r.text[i]}].push_back(i);
  }
  Samples out;
  for (const auto& [key, rows] : groups) {
    bool null = false;
    const std::string tag = namer.tag(rows.front(), &null);
    if (null || is_profiler_step(tag)) continue;
    // emit_nvtx's ids differ in every call and every run: ranges are compared by the operator name.
    auto& slot = out[std::string(without_emit_nvtx_attributes(tag))];
    for (size_t i : rows) slot.push_back(std::max<int64_t>(0, namer.duration(i)));
  }
  return out;
}

// A unit's time parts within `windows`, their count and summed length.
void split_within(const TimeParts& parts, const std::vector<Interval>& windows, std::array<int64_t, 5>& into,
                  int64_t& count, int64_t& length) {
  into = parts.within(windows);
  count = static_cast<int64_t>(windows.size());
  length = 0;
  for (const Interval& w : windows) length = sat_add(length, w.length());
}

size_t place_among(const std::vector<int64_t>& pids, int64_t pid) {
  const auto it = std::lower_bound(pids.begin(), pids.end(), pid);
  return it != pids.end() && *it == pid ? static_cast<size_t>(it - pids.begin()) + 1 : 0;
}

void add_samples(Samples& into, const Samples& rank) {
  for (const auto& [name, d] : rank) {
    std::vector<int64_t>& slot = into[name];
    slot.insert(slot.end(), d.begin(), d.end());
  }
}

// The diagnosis diff runs on both sides: its own options, on the diff's steps.
diagnose::DiagnoseOptions diagnosis_options(const DiffOptions& options) {
  diagnose::DiagnoseOptions o = options.diagnose;
  o.steps = options.steps;
  return o;
}

void place_rank(DiffPart& p, TimeNs shift) {
  for (auto& [name, per_unit] : p.collectives) {
    for (std::vector<TimeNs>& starts : per_unit) {
      for (TimeNs& t : starts) t = sat_add(t, shift);
    }
  }
}

}  // namespace

size_t DiffSide::place_of(int64_t pid) const { return place_among(gpu_pids, pid); }

DiffPart diff_part(const Trace& t, const DiffOptions& options, bool one_of_ranks) {
  AnalysisContext ctx(t, options.steps);
  if (one_of_ranks) ctx.name_as_rank_of_job();
  DiffPart p;
  p.input = t.source.path;
  p.format = t.source.format;
  p.pytorch = ctx.pytorch();
  if (p.pytorch) p.rank = t.pytorch.rank, p.clock_base_ns = t.pytorch.base_time_ns;
  p.kernels = static_cast<int64_t>(t.kernels.size());
  p.operators = static_cast<int64_t>(t.pytorch.ops.size());
  p.ranges = static_cast<int64_t>(t.ranges.size());
  const pytorch::GpuWork& work = ctx.gpu_work();
  std::set<int64_t> pids, unit_owners;
  for (const GpuUnit& u : work.units) pids.insert(u.pid), unit_owners.insert(u.owner);
  p.gpu_pids.assign(pids.begin(), pids.end());
  p.gpu_owners = static_cast<int64_t>(unit_owners.size());
  // The windows of the process with the most steps: a GPU whose process has no steps of its own
  // (step detection runs on the busiest process) is split over them, since processes of one job run
  // their steps side by side on one clock.
  std::vector<Interval> fallback;
  if (const StepSet* steps = ctx.steps()) {
    p.has_steps = true;
    p.step_source = steps->source;
    std::set<int64_t> owners;
    for (const StepWindow& w : steps->steps) owners.insert(ctx.owner_of(w.global_pid));
    for (int64_t owner : owners) {
      const std::vector<Interval>& windows = ctx.windows_of(owner);
      for (const Interval& w : windows) p.step_ns.push_back(w.length());
      if (windows.size() > fallback.size()) fallback = windows;
    }
    p.step_owners = static_cast<int64_t>(owners.size());
  }
  for (const GpuUnit& u : work.units) {
    DiffUnit d;
    d.key = u.rank >= 0 ? fmt::format("rank {}", u.rank)
                        : fmt::format("process #{} GPU {}", place_among(p.gpu_pids, u.pid), u.device);
    d.label = ctx.unit_label(u);
    const TimeParts parts = time_parts(u);
    d.compute_ns = parts.compute.total();
    const std::vector<Interval>& own = ctx.windows_of(u.owner);
    std::vector<int64_t> lengths;
    for (const Interval& w : own) lengths.push_back(w.length());
    d.steps = static_cast<int64_t>(lengths.size());
    d.step_median_ns = median_ns(std::move(lengths));
    d.own_windows = !own.empty();
    split_within(parts, own.empty() ? fallback : own, d.step_parts, d.step_windows, d.step_window_ns);
    std::vector<Interval> span;
    if (const IntervalSet& all = ctx.busy(u); !all.empty()) span.push_back(all.span());
    split_within(parts, span, d.span_parts, d.span_windows, d.span_window_ns);
    p.units.push_back(std::move(d));
  }
  p.collectives = collective_starts(t, work);
  p.kernel_samples = kernel_samples(t);
  p.operator_samples = operator_samples(t);
  p.range_samples = range_samples(t);
  // In order: the comparison takes them in any order, and sorted they travel in a byte or two each.
  for (Samples* samples : {&p.kernel_samples, &p.operator_samples, &p.range_samples}) {
    for (auto& [name, d] : *samples) std::sort(d.begin(), d.end());
  }
  if (options.findings) {
    p.diagnosed = true;
    p.diagnosis = diagnose::diagnose_part(ctx, diagnosis_options(options));
  }
  return p;
}

Result<DiffSide> merge_diff_parts(std::vector<DiffPart> parts, const DiffOptions& options,
                                  const std::string& directory) {
  DiffSide s;
  if (parts.empty()) return s;
  if (!directory.empty() && parts[0].pytorch) order_as_rank_directory(parts, place_rank);
  s.info.input = directory.empty() ? parts[0].input : directory;
  s.info.format = parts[0].format;
  s.one_part = parts.size() == 1;
  size_t units = 0;
  for (const DiffPart& p : parts) units += p.units.size();
  CollectiveStarts starts;
  std::vector<diagnose::DiagnosePart> diagnoses;
  TRACEDOC_ASSIGN_OR_RETURN(const std::optional<StepSource> source, common_step_source(parts, s.info.input, "diff"));
  int64_t step_owners = 0;
  for (DiffPart& p : parts) {
    s.info.kernels += p.kernels, s.info.operators += p.operators, s.info.ranges += p.ranges;
    s.step_ns.insert(s.step_ns.end(), p.step_ns.begin(), p.step_ns.end());
    step_owners += p.step_owners;
    s.gpu_pids.insert(s.gpu_pids.end(), p.gpu_pids.begin(), p.gpu_pids.end());
    s.gpu_owners += p.gpu_owners;
    add_collective_starts(starts, p.collectives, s.units.size(), units, 0);
    for (DiffUnit& u : p.units) s.units.push_back(std::move(u));
    add_samples(s.kernel_samples, p.kernel_samples);
    add_samples(s.operator_samples, p.operator_samples);
    add_samples(s.range_samples, p.range_samples);
    if (p.diagnosed) diagnoses.push_back(std::move(p.diagnosis));
  }
  std::sort(s.gpu_pids.begin(), s.gpu_pids.end());
  s.gpu_pids.erase(std::unique(s.gpu_pids.begin(), s.gpu_pids.end()), s.gpu_pids.end());
  s.info.gpus = static_cast<int64_t>(units);
  s.has_steps = source.has_value();
  if (source) s.step_source = step_source_name(*source);
  if (step_owners > 0) s.steps_per_owner = static_cast<double>(s.step_ns.size()) / static_cast<double>(step_owners);
  if (units >= 2) s.skew = collective_skew(starts, units);
  if (!diagnoses.empty()) {
    TRACEDOC_ASSIGN_OR_RETURN(
        diagnose::Diagnosis found,
        diagnose::merge_diagnose_parts(std::move(diagnoses), diagnosis_options(options), directory));
    s.diagnosis = std::move(found);
  }
  return s;
}

// The part's fields, once, for both directions (analysis/part_codec.h).
template <typename F>
void fields(F& f, DiffUnit& u) {
  f(u.key), f(u.label), f(u.own_windows), f(u.step_parts), f(u.span_parts), f(u.step_windows), f(u.step_window_ns);
  f(u.span_windows), f(u.span_window_ns), f(u.compute_ns), f(u.steps), f(u.step_median_ns);
}
template <typename F>
void fields(F& f, DiffPart& p) {
  f(p.input), f(p.format), f(p.pytorch), f(p.rank), f(p.clock_base_ns), f(p.kernels), f(p.operators), f(p.ranges);
  f(p.has_steps), f(p.step_source), f(p.step_ns), f(p.step_owners), f(p.gpu_pids), f(p.gpu_owners), f(p.units);
  f(p.collectives), f(p.kernel_samples), f(p.operator_samples), f(p.range_samples), f(p.diagnosed);
  f(p.diagnosis);
}

namespace {
constexpr part_codec::Format kFormat{"TDFP", 2, "diff part"};
}  // namespace

std::string encode_diff_part(const DiffPart& part) { return part_codec::encode(part, kFormat); }

Result<DiffPart> decode_diff_part(std::string_view bytes) { return part_codec::decode<DiffPart>(bytes, kFormat); }

}  // namespace tracedoc::compare
