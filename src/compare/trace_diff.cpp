#include "compare/trace_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "analysis/checked_math.h"
#include "analysis/cross_rank.h"
#include "analysis/intervals.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/rank_test.h"
#include "analysis/statistics.h"
#include "common/task_pool.h"
#include "analysis/context.h"
#include "model/step_names.h"

namespace tracedoc::compare {

namespace {

using pytorch::GpuUnit;
using pytorch::kTimePartNames;
using pytorch::time_parts;
using pytorch::TimeParts;
using pytorch::WorkClass;

int64_t duration_of(TimeNs start, TimeNs end) { return end > start ? sat_sub(end, start) : 0; }  // as cuda_gpu_kern_sum

// Per-instance durations by name, for one kind on one side.
using Samples = std::map<std::string, std::vector<int64_t>>;

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

// PyTorch's emit_nvtx names each operator's range "aten::mm, seq = 12, op_id = 4242, sizes = ..."
// with ids that differ in every call and every run: ranges are compared by the operator name.
std::string_view without_emit_nvtx_attributes(std::string_view name) {
  size_t cut = name.size();
  for (std::string_view attr :
       {std::string_view(", seq = "), std::string_view(", op_id = "), std::string_view(", sizes = ")}) {
    cut = std::min(cut, name.find(attr));
  }
  return name.substr(0, cut);
}

// Push/pop and start/end ranges by nvtx_sum's Range name (domain:text), step ranges left out.
Samples range_samples(const Trace& t) {
  const RangeTable& r = t.ranges;
  nsys_stats::NvtxNamer namer(t);
  std::map<std::pair<StrId, StrId>, std::vector<size_t>> groups;  // (domain, text) -> rows
  for (size_t i = 0; i < r.size(); ++i) {
    if (!nsys_stats::is_pushpop(r.kind[i]) && !nsys_stats::is_startend(r.kind[i])) continue;
    groups[{namer.domain(i), r.text[i]}].push_back(i);
  }
  Samples out;
  for (const auto& [key, rows] : groups) {
    bool null = false;
    const std::string tag = namer.tag(rows.front(), &null);
    if (null || is_profiler_step(tag)) continue;
    auto& slot = out[std::string(without_emit_nvtx_attributes(tag))];
    for (size_t i : rows) slot.push_back(std::max<int64_t>(0, namer.duration(i)));
  }
  return out;
}

SideFigures figures_of(std::vector<int64_t>& durations, double steps) {
  SideFigures f;
  f.count = static_cast<int64_t>(durations.size());
  for (int64_t d : durations) f.total_ns = sat_add(f.total_ns, d);
  std::sort(durations.begin(), durations.end());
  f.median_ns = nsys_quantile(durations, 0.5);
  if (steps > 0) {
    f.per_step_ns = static_cast<double>(f.total_ns) / steps;
    f.count_per_step = static_cast<double>(f.count) / steps;
  }
  return f;
}

double relative_pct(double before, double after) {
  return before != 0 ? 100.0 * (after - before) / before : std::numeric_limits<double>::quiet_NaN();
}

// What counts as a change of timing (trace_diff.h, Noise): significant at `alpha` and a median
// moved by at least min_change_pct.
Verdict timing_verdict(double p, double median_change_pct, const DiffOptions& o) {
  if (!(p < o.alpha) || !(std::abs(median_change_pct) >= o.min_change_pct)) return Verdict::kUnchanged;
  return median_change_pct > 0 ? Verdict::kSlower : Verdict::kFaster;
}

// What a side holds besides its GPU work: the step windows and the mean steps per process.
struct Side {
  const Trace& trace;
  AnalysisContext ctx;
  std::vector<int64_t> step_ns;  // every owner's windows
  double steps_per_owner = 0;    // 0 without steps
  std::string step_source;
  // The windows of the process with the most steps: a GPU whose process has no steps of its own
  // (step detection runs on the busiest process) is split over them, since processes of one job run
  // their steps side by side on one clock.
  std::vector<Interval> fallback_windows;
  // The processes with GPU work, ascending, and the number of owners (ranks or processes) of GPU
  // units: how findings and GPUs are matched across runs, whose process ids differ.
  std::vector<int64_t> gpu_pids;
  size_t gpu_owners = 0;
  Side(const Trace& t, const StepOptions& o) : trace(t), ctx(t, o) {
    std::set<int64_t> pids, unit_owners;
    for (const GpuUnit& u : ctx.gpu_work().units) pids.insert(u.pid), unit_owners.insert(u.owner);
    gpu_pids.assign(pids.begin(), pids.end());
    gpu_owners = unit_owners.size();
    const StepSet* steps = ctx.steps();
    if (!steps) return;
    step_source = step_source_name(steps->source);
    std::set<int64_t> owners;
    for (const StepWindow& w : steps->steps) owners.insert(ctx.owner_of(w.global_pid));
    for (int64_t owner : owners) {
      const std::vector<Interval>& windows = ctx.windows_of(owner);
      for (const Interval& w : windows) step_ns.push_back(w.length());
      if (windows.size() > fallback_windows.size()) fallback_windows = windows;
    }
    if (!owners.empty()) steps_per_owner = static_cast<double>(step_ns.size()) / static_cast<double>(owners.size());
  }
  // A process's place (1, 2, ...) among gpu_pids; 0 when it has no GPU work.
  size_t place_of(int64_t pid) const {
    const auto it = std::lower_bound(gpu_pids.begin(), gpu_pids.end(), pid);
    return it != gpu_pids.end() && *it == pid ? static_cast<size_t>(it - gpu_pids.begin()) + 1 : 0;
  }
};

void add_items(ItemKind kind, Samples base, Samples next, double base_steps, double new_steps, TraceDiff& d) {
  std::set<std::string> names;
  for (const auto& [n, _] : base) names.insert(n);
  for (const auto& [n, _] : next) names.insert(n);
  const size_t first = d.items.size();
  for (const std::string& name : names) {
    ItemDiff item;
    item.kind = kind;
    item.name = name;
    auto b = base.find(name), n = next.find(name);
    std::vector<int64_t> none;
    std::vector<int64_t>& bd = b != base.end() ? b->second : none;
    std::vector<int64_t>& nd = n != next.end() ? n->second : none;
    item.base = figures_of(bd, base_steps);
    item.next = figures_of(nd, new_steps);
    if (!bd.empty() && !nd.empty()) item.p_value = mann_whitney_u(bd, nd).p_value;
    d.items.push_back(std::move(item));
  }
  // Largest change first: per step when both sides have steps, else in total.
  std::stable_sort(
      d.items.begin() + static_cast<std::ptrdiff_t>(first), d.items.end(), [](const ItemDiff& x, const ItemDiff& y) {
        const bool per_step = !std::isnan(x.base.per_step_ns);
        const double dx = per_step ? x.next.per_step_ns - x.base.per_step_ns : static_cast<double>(x.delta_total_ns());
        const double dy = per_step ? y.next.per_step_ns - y.base.per_step_ns : static_cast<double>(y.delta_total_ns());
        return std::abs(dx) > std::abs(dy);
      });
}

// The verdicts, once every item has its p-value (the adjustment needs them all).
void judge_items(TraceDiff& d) {
  std::vector<double> p;
  std::vector<size_t> tested;
  for (size_t i = 0; i < d.items.size(); ++i) {
    if (std::isnan(d.items[i].p_value)) continue;
    p.push_back(d.items[i].p_value);
    tested.push_back(i);
  }
  d.tested = static_cast<int64_t>(p.size());
  const std::vector<double> q = benjamini_hochberg(p);
  for (size_t k = 0; k < tested.size(); ++k) d.items[tested[k]].q_value = q[k];
  const double min_change = d.options.min_change_pct;
  for (ItemDiff& item : d.items) {
    if (item.base.count == 0) {
      item.verdict = Verdict::kAdded;
      continue;
    }
    if (item.next.count == 0) {
      item.verdict = Verdict::kRemoved;
      continue;
    }
    item.timing = timing_verdict(item.q_value, item.median_change_pct(), d.options);
    const bool per_step = !std::isnan(item.base.count_per_step);
    const double count_change =
        per_step ? relative_pct(item.base.count_per_step, item.next.count_per_step)
                 : relative_pct(static_cast<double>(item.base.count), static_cast<double>(item.next.count));
    if (std::abs(count_change) >= min_change)
      item.calls = count_change > 0 ? Verdict::kMoreCalls : Verdict::kFewerCalls;
    item.verdict = item.calls != Verdict::kUnchanged ? item.calls : item.timing;
  }
}

// Each GPU's windows split into the parts of trace_diff.h; returns the sums over GPUs and adds the
// per-GPU means.
struct PartSums {
  std::array<int64_t, 5> total{};
  std::array<double, 5> mean{};
  double time_mean = 0;
  std::vector<int64_t> unit_compute_ns;  // each unit's union of computation kernels, whole trace (for the ranks)
};

PartSums split_time(Side& side, bool use_steps) {
  PartSums s;
  const auto& units = side.ctx.gpu_work().units;
  if (units.empty()) return s;
  for (const GpuUnit& u : units) {
    std::vector<Interval> windows;
    if (use_steps) {
      windows = side.ctx.windows_of(u.owner);
      if (windows.empty()) windows = side.fallback_windows;
    } else {
      const IntervalSet& all = side.ctx.busy(u);
      if (!all.empty()) windows.push_back(all.span());
    }
    int64_t window = 0;
    for (const Interval& w : windows) window = sat_add(window, w.length());
    const TimeParts parts = time_parts(u);
    s.unit_compute_ns.push_back(parts.compute.total());
    const std::array<int64_t, 5> part = parts.within(windows);
    const double per = windows.empty() ? 1.0 : static_cast<double>(windows.size());
    for (size_t i = 0; i < 5; ++i) {
      s.total[i] = sat_add(s.total[i], part[i]);
      s.mean[i] += static_cast<double>(part[i]) / per / static_cast<double>(units.size());
    }
    s.time_mean += static_cast<double>(window) / per / static_cast<double>(units.size());
  }
  return s;
}

// Scopes name processes by pid, which changes from run to run: findings are matched with "pid N"
// replaced by the process's place among the processes that have GPU work, and with the process part
// dropped when a side has only one.
std::string scope_key(const std::string& scope, const Side& side) {
  const bool pid_scope = scope.starts_with("pid "), rank_scope = scope.starts_with("rank ");
  if (!pid_scope && !rank_scope) return scope;
  const size_t digits = pid_scope ? 4 : 5;
  const size_t num_end = std::min(scope.find_first_not_of("0123456789", digits), scope.size());
  if (num_end == digits) return scope;                                    // no number after the word
  const std::string_view rest = std::string_view(scope).substr(num_end);  // " GPU 0 (...)" or empty
  if (side.gpu_owners <= 1) {
    const size_t text = rest.find_first_not_of(' ');
    return text == std::string_view::npos ? std::string("trace") : std::string(rest.substr(text));
  }
  if (pid_scope && num_end - digits <= 18) {  // whole digits that fit int64: stoll neither throws nor overflows
    const size_t place = side.place_of(std::stoll(scope.substr(digits, num_end - digits)));
    if (place > 0) return fmt::format("process #{}{}", place, rest);
  }
  return scope;
}

void compare_findings(const Side& base, const diagnose::Diagnosis& bd, const Side& next, const diagnose::Diagnosis& nd,
                      TraceDiff& d) {
  d.findings_compared = true;
  std::multimap<std::pair<std::string, std::string>, const diagnose::Finding*> before;
  for (const diagnose::Finding& f : bd.findings) before.emplace(std::make_pair(f.id, scope_key(f.scope, base)), &f);
  std::vector<FindingChange> appeared, persisted, disappeared;
  for (const diagnose::Finding& f : nd.findings) {
    FindingChange c;
    c.id = f.id, c.scope = f.scope, c.title = f.title;
    c.new_severity = f.severity, c.new_savings_ns = f.savings_ns, c.new_share = f.savings_share;
    auto it = before.find({f.id, scope_key(f.scope, next)});
    if (it == before.end()) {
      c.status = FindingStatus::kAppeared;
      appeared.push_back(std::move(c));
      continue;
    }
    c.status = FindingStatus::kPersisted;
    c.base_severity = it->second->severity, c.base_savings_ns = it->second->savings_ns,
    c.base_share = it->second->savings_share;
    before.erase(it);
    persisted.push_back(std::move(c));
  }
  for (const auto& [key, f] : before) {
    FindingChange c;
    c.status = FindingStatus::kDisappeared;
    c.id = f->id, c.scope = f->scope, c.title = f->title;
    c.base_severity = f->severity, c.base_savings_ns = f->savings_ns, c.base_share = f->savings_share;
    disappeared.push_back(std::move(c));
  }
  auto by_savings = [](const FindingChange& x, const FindingChange& y) {
    return std::max(x.base_savings_ns, x.new_savings_ns) > std::max(y.base_savings_ns, y.new_savings_ns);
  };
  for (auto* list : {&appeared, &disappeared, &persisted}) {
    std::stable_sort(list->begin(), list->end(), by_savings);
    d.findings.insert(d.findings.end(), list->begin(), list->end());
  }
}

// Each GPU's figures on one side, keyed for matching across runs.
struct RankFigures {
  std::string key, label;
  int64_t steps = 0, step_median_ns = 0, compute_ns = 0, collectives = 0, wait_ns = 0, last = 0;
};
struct SideRanks {
  std::vector<RankFigures> gpus;
  double imbalance = 0;
  int64_t skew_p50_ns = 0, collectives = 0;
};

// `unit_compute_ns`: each GPU unit's computation time, as split_time found it.
SideRanks side_ranks(Side& side, std::vector<int64_t> unit_compute_ns) {
  SideRanks out;
  const pytorch::GpuWork& work = side.ctx.gpu_work();
  const CrossRankSkew skew = collective_skew(side.trace, work);
  const ComputeBalance balance = compute_balance(std::move(unit_compute_ns));
  for (size_t i = 0; i < work.units.size(); ++i) {
    const GpuUnit& u = work.units[i];
    RankFigures g;
    g.key = u.rank >= 0 ? fmt::format("rank {}", u.rank)
                        : fmt::format("process #{} GPU {}", side.place_of(u.pid), u.device);
    g.label = side.ctx.unit_label(u);
    std::vector<int64_t> steps;
    for (const Interval& w : side.ctx.windows_of(u.owner)) steps.push_back(w.length());
    g.steps = static_cast<int64_t>(steps.size());
    g.step_median_ns = median_ns(std::move(steps));
    g.compute_ns = balance.compute_ns[i];
    g.collectives = skew.participants[i].collectives;
    g.wait_ns = skew.participants[i].wait_ns;
    g.last = skew.participants[i].last;
    out.gpus.push_back(std::move(g));
  }
  out.imbalance = balance.ratio();
  out.skew_p50_ns = skew.median_skew_ns;
  out.collectives = skew.matched;
  return out;
}

RanksDiff compare_ranks(const SideRanks& b, const SideRanks& n) {
  RanksDiff d;
  d.base_imbalance = b.imbalance, d.new_imbalance = n.imbalance;
  d.base_skew_p50_ns = b.skew_p50_ns, d.new_skew_p50_ns = n.skew_p50_ns;
  d.base_collectives = b.collectives, d.new_collectives = n.collectives;
  auto set_base = [](RankChange& c, const RankFigures& g) {
    c.in_base = true;
    c.base_steps = g.steps, c.base_step_median_ns = g.step_median_ns, c.base_compute_ns = g.compute_ns;
    c.base_collectives = g.collectives, c.base_wait_ns = g.wait_ns, c.base_last = g.last;
  };
  std::vector<bool> used(b.gpus.size(), false);
  for (const RankFigures& g : n.gpus) {
    RankChange c;
    c.gpu = g.label, c.in_new = true;
    c.new_steps = g.steps, c.new_step_median_ns = g.step_median_ns, c.new_compute_ns = g.compute_ns;
    c.new_collectives = g.collectives, c.new_wait_ns = g.wait_ns, c.new_last = g.last;
    for (size_t i = 0; i < b.gpus.size(); ++i) {
      if (used[i] || b.gpus[i].key != g.key) continue;
      used[i] = true;
      set_base(c, b.gpus[i]);
      break;
    }
    d.gpus.push_back(std::move(c));
  }
  for (size_t i = 0; i < b.gpus.size(); ++i) {
    if (used[i]) continue;
    RankChange c;
    c.gpu = b.gpus[i].label;
    set_base(c, b.gpus[i]);
    d.gpus.push_back(std::move(c));
  }
  return d;
}

// What each side computes on its own, for both sides at once (one per core): the time parts, the
// samples by name, the per-GPU figures and the diagnosis.
struct SideWork {
  PartSums parts;
  Samples kernels, operators, ranges;
  std::optional<SideRanks> ranks;  // two or more GPUs
  std::optional<diagnose::Diagnosis> diagnosis;
};

SideWork work_of(Side& side, bool both_steps, const DiffOptions& options) {
  SideWork w;
  w.parts = split_time(side, both_steps);
  w.kernels = kernel_samples(side.trace);
  w.operators = operator_samples(side.trace);
  w.ranges = range_samples(side.trace);
  if (side.ctx.gpu_work().units.size() >= 2) w.ranks = side_ranks(side, w.parts.unit_compute_ns);
  if (options.findings) {
    diagnose::DiagnoseOptions o = options.diagnose;
    o.steps = options.steps;
    w.diagnosis = diagnose::diagnose(side.ctx, o);
  }
  return w;
}

// Runs both sides' functions at once on the task pool.
template <typename A, typename B>
void side_by_side(A base_fn, B next_fn) {
  parallel_invoke({base_fn, next_fn});
}

SideInfo side_info(Side& side) {
  const Trace& t = side.trace;
  SideInfo s;
  s.input = t.source.path;
  s.format = t.source.format;
  s.kernels = static_cast<int64_t>(t.kernels.size());
  s.operators = static_cast<int64_t>(t.pytorch.ops.size());
  s.ranges = static_cast<int64_t>(t.ranges.size());
  s.gpus = static_cast<int64_t>(side.ctx.gpu_work().units.size());
  return s;
}

}  // namespace

const char* item_kind_name(ItemKind k) {
  switch (k) {
    case ItemKind::kKernel: return "kernel";
    case ItemKind::kOperator: return "operator";
    case ItemKind::kRange: return "range";
  }
  return "?";
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kUnchanged: return "unchanged";
    case Verdict::kSlower: return "slower";
    case Verdict::kFaster: return "faster";
    case Verdict::kMoreCalls: return "more";
    case Verdict::kFewerCalls: return "fewer";
    case Verdict::kAdded: return "added";
    case Verdict::kRemoved: return "removed";
  }
  return "?";
}

const char* verdict_words(Verdict v) {
  if (v == Verdict::kMoreCalls) return "more calls";
  if (v == Verdict::kFewerCalls) return "fewer calls";
  return verdict_name(v);
}

bool is_change(Verdict v) { return v != Verdict::kUnchanged; }

const char* finding_status_name(FindingStatus s) {
  switch (s) {
    case FindingStatus::kAppeared: return "appeared";
    case FindingStatus::kDisappeared: return "disappeared";
    case FindingStatus::kPersisted: return "persisted";
  }
  return "?";
}

int64_t ItemDiff::delta_total_ns() const { return sat_sub(next.total_ns, base.total_ns); }

double ItemDiff::ratio() const {
  return base.total_ns > 0 ? static_cast<double>(next.total_ns) / static_cast<double>(base.total_ns)
                           : std::numeric_limits<double>::quiet_NaN();
}

std::string ItemDiff::verdict_label() const {
  if (calls != Verdict::kUnchanged && timing != Verdict::kUnchanged)
    return fmt::format("{}, {}", verdict_words(calls), verdict_words(timing));
  return verdict_words(verdict);
}

double ItemDiff::median_change_pct() const { return relative_pct(base.median_ns, next.median_ns); }

double StepDiff::median_change_pct() const { return relative_pct(base.median_ns, next.median_ns); }

size_t TraceDiff::count(ItemKind kind, Verdict verdict) const {
  return static_cast<size_t>(std::count_if(items.begin(), items.end(),
                                           [&](const ItemDiff& i) { return i.kind == kind && i.verdict == verdict; }));
}

Status check_options(const DiffOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1))
    return UsageError(fmt::format("diff: --alpha must lie between 0 and 1, not {:g}", options.alpha));
  if (!(options.min_change_pct >= 0) || !std::isfinite(options.min_change_pct)) {
    return UsageError(
        fmt::format("diff: --min-change must be a percentage of 0 or more, not {:g}", options.min_change_pct));
  }
  return diagnose::check_options(options.diagnose);
}

TraceDiff diff_traces(const Trace& base_trace, const Trace& next_trace, const DiffOptions& options) {
  TraceDiff d;
  d.options = options;
  // Each side's steps first (whether both have steps decides what the parts split), then the rest
  // of each side's own work; both sides at once, each on its own Context.
  std::optional<Side> base_side, next_side;
  side_by_side([&] { base_side.emplace(base_trace, options.steps); },
               [&] { next_side.emplace(next_trace, options.steps); });
  Side& base = *base_side;
  Side& next = *next_side;
  const bool both_steps = base.steps_per_owner > 0 && next.steps_per_owner > 0;
  SideWork bw, nw;
  side_by_side([&] { bw = work_of(base, both_steps, options); }, [&] { nw = work_of(next, both_steps, options); });
  d.base = side_info(base);
  d.next = side_info(next);

  if (both_steps) {
    StepDiff s;
    s.base_source = base.step_source, s.new_source = next.step_source;
    s.p_value = mann_whitney_u(base.step_ns, next.step_ns).p_value;
    s.base = figures_of(base.step_ns, 0);
    s.next = figures_of(next.step_ns, 0);
    s.verdict = timing_verdict(s.p_value, s.median_change_pct(), options);
    d.steps = s;
  } else if (base.steps_per_owner > 0 || next.steps_per_owner > 0) {
    d.steps_note = fmt::format("only {} has steps", base.steps_per_owner > 0 ? "BASE" : "NEW");
  } else {
    d.steps_note = "neither trace has steps";
  }
  d.time_basis = both_steps ? "step" : "span";
  const PartSums& bp = bw.parts;
  const PartSums& np = nw.parts;
  for (size_t i = 0; i < kTimePartNames.size(); ++i) {
    d.parts.push_back({kTimePartNames[i], bp.total[i], np.total[i], bp.mean[i], np.mean[i]});
  }
  d.base_time_mean_ns = bp.time_mean, d.new_time_mean_ns = np.time_mean;

  const double base_steps = both_steps ? base.steps_per_owner : 0, new_steps = both_steps ? next.steps_per_owner : 0;
  add_items(ItemKind::kKernel, std::move(bw.kernels), std::move(nw.kernels), base_steps, new_steps, d);
  if (base_trace.pytorch.ops.size() && next_trace.pytorch.ops.size()) {
    add_items(ItemKind::kOperator, std::move(bw.operators), std::move(nw.operators), base_steps, new_steps, d);
  } else if (base_trace.pytorch.ops.size() || next_trace.pytorch.ops.size()) {
    d.notes.push_back(
        fmt::format("operators: not compared, {} records none", base_trace.pytorch.ops.size() ? "NEW" : "BASE"));
  }
  if (!bw.ranges.empty() && !nw.ranges.empty()) {
    add_items(ItemKind::kRange, std::move(bw.ranges), std::move(nw.ranges), base_steps, new_steps, d);
  } else if (!bw.ranges.empty() || !nw.ranges.empty()) {
    d.notes.push_back(fmt::format("ranges: not compared, {} records none", !bw.ranges.empty() ? "NEW" : "BASE"));
  }
  judge_items(d);
  if (bw.ranks && nw.ranks) d.ranks = compare_ranks(*bw.ranks, *nw.ranks);
  if (bw.diagnosis && nw.diagnosis) compare_findings(base, *bw.diagnosis, next, *nw.diagnosis, d);
  return d;
}

Regression regression_of(const TraceDiff& d) {
  if (d.steps) return {"median step time", d.steps->median_change_pct(), d.steps->verdict == Verdict::kSlower};
  double base = 0, next = 0;
  for (const TimePart& p : d.parts) {
    if (p.name == "idle") continue;
    base += p.base_mean_ns, next += p.new_mean_ns;
  }
  return {"GPU busy time (no steps to compare)", base > 0 ? 100.0 * (next - base) / base : 0, true};
}

}  // namespace tracedoc::compare
