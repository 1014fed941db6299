// The summary from its parts (analysis/summary.h): what only the whole can say (rankings, medians,
// averages, the Ranks section) is computed here, once, whether the parts came from one trace or
// from the rank files of a job read on many machines.
//
// A rank directory's merge (ingest/kineto_directory.cpp) orders the ranks by rank (numbering the
// files without one in file order), moves each rank's times onto the earliest clock base and tags
// its ids with the rank. The parts of its files are merged the same way, so every figure equals the
// directory's: the ties of the rankings are broken by name, never by string ids, which differ
// between one file's pool and the merged one.
#include <algorithm>
#include <map>
#include <tuple>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"
#include "analysis/summary.h"

namespace tracedoc {

namespace {

// Count and total per name over the parts, the `top` largest by total (ties by name).
std::vector<NamedTotal> top_named(const std::vector<const std::vector<NamedTotal>*>& lists, size_t top) {
  std::vector<NamedTotal> all = merge_named_totals(lists);
  const size_t n = std::min(top, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                    [](const NamedTotal& a, const NamedTotal& b) {
                      return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
                    });
  all.resize(n);
  return all;
}

std::vector<CopySummary> merged_copies(const std::vector<SummaryPart>& parts) {
  std::map<std::pair<uint8_t, uint8_t>, CopyPart> by_kind;
  for (const SummaryPart& p : parts) {
    for (const CopyPart& c : p.copies) {
      auto [it, fresh] = by_kind.try_emplace({c.copy_kind, c.host}, c);
      if (fresh) continue;
      CopyPart& m = it->second;
      if (c.mixed_links || c.copy.link != m.copy.link) m.mixed_links = true;
      m.copy.count += c.copy.count;
      m.copy.bytes = sat_add(m.copy.bytes, c.copy.bytes);
      m.copy.total_ns = sat_add(m.copy.total_ns, c.copy.total_ns);
    }
  }
  std::vector<CopySummary> out;
  for (auto& [key, c] : by_kind) {
    if (c.mixed_links) c.copy.link.clear(), c.copy.link_peak_gb_per_s = 0;
    out.push_back(std::move(c.copy));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CopySummary& a, const CopySummary& b) { return a.bytes > b.bytes; });
  return out;
}

std::optional<StepsSummary> merged_steps(const std::vector<SummaryPart>& parts,
                                         std::vector<std::vector<int64_t>>* unit_steps) {
  const std::optional<StepSource> source = merged_step_source(parts);
  if (!source) return std::nullopt;
  StepsSummary s;
  s.source = *source;
  std::vector<int64_t> cpu, span, busy;
  std::vector<double> pct;
  for (const SummaryPart& p : parts) {
    const bool counted = p.has_steps && p.step_source == *source;
    for (const SummaryUnitPart& u : p.units) unit_steps->push_back(counted ? u.step_ns : std::vector<int64_t>{});
    if (!counted) continue;
    s.count += p.steps.size();
    for (const StepValues& v : p.steps) {
      cpu.push_back(v.cpu_ns);
      if (!v.gpu) continue;
      span.push_back(v.gpu_span_ns);
      busy.push_back(v.gpu_busy_ns);
      if (v.has_pct) pct.push_back(v.busy_pct);
    }
  }
  s.median_cpu_ns = median_ns(std::move(cpu));
  s.median_gpu_span_ns = median_ns(std::move(span));
  s.median_gpu_busy_ns = median_ns(std::move(busy));
  s.median_busy_pct = median(std::span<double>(pct));
  return s;
}

std::optional<StepRolesSummary> merged_step_roles(const std::vector<SummaryPart>& parts) {
  StepRolesSummary r;
  int64_t duration = 0;
  std::array<int64_t, 8> roles{};
  for (const SummaryPart& p : parts) {
    r.steps += p.role_steps;
    duration = sat_add(duration, p.role_step_ns);
    for (size_t k = 0; k < roles.size(); ++k) roles[k] = sat_add(roles[k], p.role_ns[k]);
  }
  if (r.steps == 0) return std::nullopt;
  const double n = static_cast<double>(r.steps);
  r.step_ns = static_cast<double>(duration) / n;
  for (size_t k = 0; k < roles.size(); ++k) r.role_ns[k] = static_cast<double>(roles[k]) / n;
  return r;
}

std::optional<DispatchSummary> merged_dispatch(const std::vector<SummaryPart>& parts, size_t top) {
  std::optional<DispatchSummary> out;
  std::vector<const std::vector<NamedTotal>*> ops;
  for (const SummaryPart& p : parts) {
    if (!p.has_dispatch) continue;
    if (!out) out.emplace();
    out->framework_ns = sat_add(out->framework_ns, p.dispatch.framework_ns);
    out->cuda_api_ns = sat_add(out->cuda_api_ns, p.dispatch.cuda_api_ns);
    out->gpu_ns = sat_add(out->gpu_ns, p.dispatch.gpu_ns);
    out->kernels += p.dispatch.kernels;
    ops.push_back(&p.dispatch.top_ops);
  }
  if (out) out->top_ops = top_named(ops, top);
  return out;
}

// The steps' model TFLOP/s and MFU (the steps the Steps section counts), and the operators'
// FLOPs added up per name, the `top` largest.
std::optional<MfuSummary> merged_mfu(const std::vector<SummaryPart>& parts, size_t top) {
  std::map<std::string_view, NamedFlops> by_name;
  std::vector<std::string_view> gpus;
  MfuSummary m;
  for (const SummaryPart& p : parts) {
    for (const NamedFlops& n : p.model_flop_ops) {
      NamedFlops& into = by_name[n.name];
      into.calls += n.calls;
      into.flops = sat_add(into.flops, n.flops);
    }
    gpus.insert(gpus.end(), p.peak_gpus.begin(), p.peak_gpus.end());
    m.unknown_ops += p.unknown_flop_ops;
    m.overflowing_ops += p.overflowing_flop_ops;
  }
  if (by_name.empty()) return std::nullopt;
  const std::optional<StepSource> source = merged_step_source(parts);
  std::vector<double> tflops, mfu;
  m.peaks_known = true;
  for (const SummaryPart& p : parts) {
    if (!source || !p.has_steps || p.step_source != *source) continue;
    for (const StepValues& v : p.steps) {
      if (v.model_flops <= 0 || v.cpu_ns <= 0) continue;
      tflops.push_back(static_cast<double>(v.model_flops) / static_cast<double>(v.cpu_ns) / 1e3);
      if (v.peaks_known)
        mfu.push_back(v.seconds_at_peak * 1e11 / static_cast<double>(v.cpu_ns));
      else
        m.peaks_known = false;
    }
  }
  m.steps = static_cast<int64_t>(tflops.size());
  m.peaks_known = m.peaks_known && !mfu.empty();
  m.median_tflops_per_s = median(std::span<double>(tflops));
  m.median_mfu_pct = m.peaks_known ? median(std::span<double>(mfu)) : 0;
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  for (std::string_view g : gpus) m.gpus += (m.gpus.empty() ? "" : ", ") + std::string(g);
  for (auto& [name, n] : by_name) {
    m.model_flops = sat_add(m.model_flops, n.flops);
    m.top_ops.push_back({std::string(name), n.calls, n.flops});
  }
  std::stable_sort(m.top_ops.begin(), m.top_ops.end(),
                   [](const NamedFlops& a, const NamedFlops& b) { return a.flops > b.flops; });
  if (m.top_ops.size() > top) m.top_ops.resize(top);
  return m;
}

std::optional<RanksSummary> merged_ranks(const std::vector<SummaryPart>& parts,
                                         const std::vector<std::vector<int64_t>>& unit_steps, size_t top) {
  size_t units = 0;
  for (const SummaryPart& p : parts) units += p.units.size();
  if (units < 2) return std::nullopt;
  // Each part's collectives, its units placed after the units of the parts before it.
  CollectiveStarts starts;
  size_t base = 0;
  for (const SummaryPart& p : parts) {
    add_collective_starts(starts, p.collectives, base, units, 0);
    base += p.units.size();
  }
  const CrossRankSkew skew = collective_skew(starts, units);
  RanksSummary r;
  for (const SummaryPart& p : parts) {
    for (const SummaryUnitPart& u : p.units) {
      RankRow row = u.row;
      const std::vector<int64_t>& steps = unit_steps[r.rows.size()];
      row.steps = static_cast<int64_t>(steps.size());
      row.step_median_ns = steps.empty() ? 0 : median_ns(steps);
      const ParticipantSkew& s = skew.participants[r.rows.size()];
      row.collectives = s.collectives, row.last = s.last, row.late_ns = s.late_ns, row.wait_ns = s.wait_ns;
      r.rows.push_back(std::move(row));
    }
  }
  std::vector<int64_t> compute;
  for (const RankRow& row : r.rows) compute.push_back(row.compute_ns);
  const ComputeBalance balance = compute_balance(std::move(compute));
  r.slowest = balance.slowest;
  r.slowest_ratio = balance.ratio();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].last > 0 &&
        (r.most_often_last < 0 || r.rows[i].last > r.rows[static_cast<size_t>(r.most_often_last)].last)) {
      r.most_often_last = static_cast<int64_t>(i);
    }
  }
  r.collectives.assign(skew.collectives.begin(),
                       skew.collectives.begin() + static_cast<std::ptrdiff_t>(std::min(top, skew.collectives.size())));
  r.matched = skew.matched, r.unmatched_names = skew.unmatched_names;
  return r;
}

TimeNs shifted(TimeNs t, TimeNs shift) { return t == kNoTime ? t : sat_add(t, shift); }

// A rank file's part as the directory's merge sees it: its rank known, its times on the directory's
// clock.
void place_rank(SummaryPart& p, TimeNs shift) {
  for (DeviceSummary& d : p.devices) {
    if (d.rank < 0) d.rank = p.rank;
    d.first_start = shifted(d.first_start, shift), d.last_end = shifted(d.last_end, shift);
    d.longest_gap_start = shifted(d.longest_gap_start, shift);
    d.peak_time = shifted(d.peak_time, shift);
  }
  for (SummaryUnitPart& u : p.units) {
    if (u.row.rank < 0) u.row.rank = p.rank;
  }
  p.span_start = shifted(p.span_start, shift), p.span_end = shifted(p.span_end, shift);
  CollectiveStarts moved;
  add_collective_starts(moved, p.collectives, 0, p.units.size(), shift);
  p.collectives = std::move(moved);
  p.clock_base_ns = 0;
}

}  // namespace

std::vector<NamedTotal> merge_named_totals(const std::vector<const std::vector<NamedTotal>*>& lists) {
  std::map<std::string, NamedTotal, std::less<>> by_name;
  for (const std::vector<NamedTotal>* list : lists) {
    for (const NamedTotal& t : *list) {
      // The durations merge into a sketch of the first part's capacity (the one all parts were made with).
      auto [it, fresh] = by_name.try_emplace(t.name, NamedTotal{t.name, 0, 0, QuantileSketch(t.durations.capacity())});
      it->second.count += t.count;
      it->second.total_ns = sat_add(it->second.total_ns, t.total_ns);
      it->second.durations.merge(t.durations);
    }
  }
  std::vector<NamedTotal> all;
  all.reserve(by_name.size());
  for (auto& entry : by_name) all.push_back(std::move(entry.second));
  return all;
}

TraceSummary merge_summary_parts(std::vector<SummaryPart> parts, const SummaryOptions& options,
                                 const std::string& directory) {
  TraceSummary s;
  if (parts.empty()) return s;
  if (!directory.empty() && parts[0].format == "kineto-json") order_as_rank_directory(parts, place_rank);
  const SummaryPart& first = parts[0];
  s.input = directory.empty() ? first.input : directory;
  s.format = first.format, s.producer = first.producer;
  s.gap_threshold_ns = first.gap_threshold_ns;
  bool any = false;
  for (SummaryPart& p : parts) {
    if (p.any_time) {
      s.span_start = any ? std::min(s.span_start, p.span_start) : p.span_start;
      s.span_end = any ? std::max(s.span_end, p.span_end) : p.span_end;
      any = true;
    }
    s.gpu_ops += p.gpu_ops, s.api_calls += p.api_calls, s.ranges += p.ranges, s.cpu_ops += p.cpu_ops;
    s.kernel_total_ns = sat_add(s.kernel_total_ns, p.kernel_total_ns);
    s.devices.insert(s.devices.end(), p.devices.begin(), p.devices.end());
    s.threads.insert(s.threads.end(), p.threads.begin(), p.threads.end());
    FindingsSummary& f = s.findings;
    f.sync_calls += p.findings.sync_calls, f.sync_call_ns = sat_add(f.sync_call_ns, p.findings.sync_call_ns);
    f.sync_copies += p.findings.sync_copies, f.sync_copy_ns = sat_add(f.sync_copy_ns, p.findings.sync_copy_ns);
    f.pageable_async_copies += p.findings.pageable_async_copies;
    f.sync_memsets += p.findings.sync_memsets;
  }
  std::vector<const std::vector<NamedTotal>*> kernels, api;
  for (const SummaryPart& p : parts) kernels.push_back(&p.kernels), api.push_back(&p.api);
  // The devices in the order one trace lists them (analysis/gpu_activity.h: nsys's pid order, the
  // ranks of a directory apart).
  std::stable_sort(s.devices.begin(), s.devices.end(), [](const DeviceSummary& a, const DeviceSummary& b) {
    return std::tie(a.pid, a.rank, a.device) < std::tie(b.pid, b.rank, b.device);
  });
  s.top_kernels = top_named(kernels, options.top);
  s.top_api = top_named(api, options.top);
  s.copies = merged_copies(parts);
  std::vector<std::vector<int64_t>> unit_steps;
  s.steps = merged_steps(parts, &unit_steps);
  if (!s.steps) {
    for (const SummaryPart& p : parts) unit_steps.resize(unit_steps.size() + p.units.size());
  }
  s.step_roles = merged_step_roles(parts);
  s.dispatch = merged_dispatch(parts, options.top);
  s.mfu = merged_mfu(parts, options.top);
  s.ranks = merged_ranks(parts, unit_steps, options.top);
  return s;
}

}  // namespace tracedoc
