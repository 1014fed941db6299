#include "compare/trace_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "analysis/checked_math.h"
#include "analysis/cross_rank.h"
#include "analysis/intervals.h"
#include "analysis/rank_test.h"
#include "analysis/statistics.h"
#include "common/task_pool.h"
#include "compare/diff_parts.h"

namespace tracedoc::compare {

namespace {

using pytorch::GpuUnit;
using pytorch::kTimePartNames;
using pytorch::time_parts;
using pytorch::TimeParts;
using pytorch::WorkClass;

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

// Each GPU's windows split into the parts of trace_diff.h: the sums over GPUs and the per-GPU means.
struct PartSums {
  std::array<int64_t, 5> total{};
  std::array<double, 5> mean{};
  double time_mean = 0;
};

PartSums split_time(const DiffSide& side, bool use_steps) {
  PartSums s;
  const double units = static_cast<double>(side.units.size());
  for (const DiffUnit& u : side.units) {
    const std::array<int64_t, 5>& part = use_steps ? u.step_parts : u.span_parts;
    const int64_t windows = use_steps ? u.step_windows : u.span_windows;
    const int64_t window = use_steps ? u.step_window_ns : u.span_window_ns;
    const double per = windows == 0 ? 1.0 : static_cast<double>(windows);
    for (size_t i = 0; i < 5; ++i) {
      s.total[i] = sat_add(s.total[i], part[i]);
      s.mean[i] += static_cast<double>(part[i]) / per / units;
    }
    s.time_mean += static_cast<double>(window) / per / units;
  }
  return s;
}

// Scopes name processes by pid, which changes from run to run: findings are matched with "pid N"
// replaced by the process's place among the processes that have GPU work, and with the process part
// dropped when a side has only one.
std::string scope_key(const std::string& scope, const DiffSide& side) {
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

void compare_findings(const DiffSide& base, const diagnose::Diagnosis& bd, const DiffSide& next,
                      const diagnose::Diagnosis& nd, TraceDiff& d) {
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

SideRanks side_ranks(const DiffSide& side) {
  SideRanks out;
  std::vector<int64_t> compute;
  for (const DiffUnit& u : side.units) compute.push_back(u.compute_ns);
  const ComputeBalance balance = compute_balance(std::move(compute));
  for (size_t i = 0; i < side.units.size(); ++i) {
    const DiffUnit& u = side.units[i];
    RankFigures g;
    g.key = u.key;
    g.label = u.label;
    g.steps = u.steps;
    g.step_median_ns = u.step_median_ns;
    g.compute_ns = balance.compute_ns[i];
    g.collectives = side.skew.participants[i].collectives;
    g.wait_ns = side.skew.participants[i].wait_ns;
    g.last = side.skew.participants[i].last;
    out.gpus.push_back(std::move(g));
  }
  out.imbalance = balance.ratio();
  out.skew_p50_ns = side.skew.median_skew_ns;
  out.collectives = side.skew.matched;
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

Result<TraceDiff> diff_sides(DiffSide base, DiffSide next, const DiffOptions& options) {
  TraceDiff d;
  d.options = options;
  const bool both_steps = base.steps_per_owner > 0 && next.steps_per_owner > 0;
  for (const DiffSide* side : {&base, &next}) {
    for (const DiffUnit& u : side->units) {
      if (!both_steps || u.own_windows || side->one_part) continue;
      return UsageError(
          fmt::format("{}: {} has no steps of its own, and only the whole job in one process splits its "
                      "time over another rank's: diff the directory in one process",
                      side->info.input, u.label));
    }
  }
  d.base = base.info;
  d.next = next.info;

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
  const PartSums bp = split_time(base, both_steps);
  const PartSums np = split_time(next, both_steps);
  for (size_t i = 0; i < kTimePartNames.size(); ++i) {
    d.parts.push_back({kTimePartNames[i], bp.total[i], np.total[i], bp.mean[i], np.mean[i]});
  }
  d.base_time_mean_ns = bp.time_mean, d.new_time_mean_ns = np.time_mean;

  const double base_steps = both_steps ? base.steps_per_owner : 0, new_steps = both_steps ? next.steps_per_owner : 0;
  add_items(ItemKind::kKernel, std::move(base.kernel_samples), std::move(next.kernel_samples), base_steps, new_steps,
            d);
  if (base.info.operators && next.info.operators) {
    add_items(ItemKind::kOperator, std::move(base.operator_samples), std::move(next.operator_samples), base_steps,
              new_steps, d);
  } else if (base.info.operators || next.info.operators) {
    d.notes.push_back(fmt::format("operators: not compared, {} records none", base.info.operators ? "NEW" : "BASE"));
  }
  if (!base.range_samples.empty() && !next.range_samples.empty()) {
    add_items(ItemKind::kRange, std::move(base.range_samples), std::move(next.range_samples), base_steps, new_steps, d);
  } else if (!base.range_samples.empty() || !next.range_samples.empty()) {
    d.notes.push_back(
        fmt::format("ranges: not compared, {} records none", !base.range_samples.empty() ? "NEW" : "BASE"));
  }
  judge_items(d);
  if (base.units.size() >= 2 && next.units.size() >= 2) d.ranks = compare_ranks(side_ranks(base), side_ranks(next));
  if (base.diagnosis && next.diagnosis) compare_findings(base, *base.diagnosis, next, *next.diagnosis, d);
  return d;
}

TraceDiff diff_traces(const Trace& base_trace, const Trace& next_trace, const DiffOptions& options) {
  // Both sides at once, each on its own analysis context.
  std::vector<DiffPart> base(1), next(1);
  parallel_invoke(
      {[&] { base[0] = diff_part(base_trace, options); }, [&] { next[0] = diff_part(next_trace, options); }});
  // A side of one part has its steps found one way and every GPU its split: nothing to refuse.
  return *diff_sides(*merge_diff_parts(std::move(base), options), *merge_diff_parts(std::move(next), options), options);
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
