#include "report/diff_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/checked_math.h"
#include "common/human_units.h"
#include "report/json_object.h"
#include "report/markdown.h"

namespace tracedoc {

using compare::FindingChange;
using compare::ItemDiff;
using compare::ItemKind;
using compare::TimePart;
using compare::TraceDiff;
using compare::Verdict;

namespace {

constexpr ItemKind kKinds[] = {ItemKind::kKernel, ItemKind::kOperator, ItemKind::kRange};
constexpr Verdict kVerdicts[] = {Verdict::kSlower,    Verdict::kFaster,     Verdict::kAdded,    Verdict::kRemoved,
                                 Verdict::kMoreCalls, Verdict::kFewerCalls, Verdict::kUnchanged};

std::string dur(double ns) { return std::isnan(ns) ? "-" : human_duration(std::llround(ns)); }

std::string signed_dur(double ns) {
  if (std::isnan(ns)) return "-";
  const int64_t v = std::llround(ns);
  if (v < 0) return fmt::format("-{}", human_duration(-v));  // three significant digits either way
  return v > 0 ? fmt::format("+{}", human_duration(v)) : human_duration(v);
}

std::string signed_pct(double pct) { return std::isnan(pct) ? "-" : fmt::format("{:+.1f}%", pct); }

std::string p_text(double p) {
  if (std::isnan(p)) return "-";
  if (p < 1e-6) return "<1e-6";
  return p < 0.001 ? fmt::format("{:.1e}", p) : fmt::format("{:.3f}", p);
}

// Names in column and markdown output: C++ kernel names run to a thousand characters; csv and json
// carry them whole.
constexpr size_t kNameWidth = 100;
std::string short_name(const std::string& name) { return clip_text(name, kNameWidth); }

std::string ratio_text(double r) { return std::isnan(r) ? "-" : fmt::format("{:.2f}x", r); }

const char* kind_title(ItemKind k) {
  switch (k) {
    case ItemKind::kKernel: return "Kernels";
    case ItemKind::kOperator: return "Operators";
    case ItemKind::kRange: return "Ranges";
  }
  return "?";
}

// "3 slower, 1 added, 40 unchanged": the verdicts that occur, in a fixed order.
std::string verdict_counts(const TraceDiff& d, ItemKind kind) {
  std::string out;
  for (Verdict v : kVerdicts) {
    const size_t n = d.count(kind, v);
    if (n == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", n, compare::verdict_words(v));
  }
  return out;
}

bool has_kind(const TraceDiff& d, ItemKind kind) {
  return std::any_of(d.items.begin(), d.items.end(), [&](const ItemDiff& i) { return i.kind == kind; });
}

// The items of a kind a listing shows: the changed ones (all of them with `all`), at most `top`.
std::vector<const ItemDiff*> listed(const TraceDiff& d, ItemKind kind, const DiffTextOptions& o, size_t* hidden) {
  std::vector<const ItemDiff*> out;
  *hidden = 0;
  for (const ItemDiff& i : d.items) {
    if (i.kind != kind) continue;
    if (!o.all && !compare::is_change(i.verdict)) continue;
    if (!o.all && out.size() >= o.top) {
      ++*hidden;
      continue;
    }
    out.push_back(&i);
  }
  return out;
}

bool per_step(const TraceDiff& d) { return d.steps.has_value(); }
double shown_time(const TraceDiff& d, const compare::SideFigures& f) {
  return per_step(d) ? f.per_step_ns : static_cast<double>(f.total_ns);
}
std::string count_text(const TraceDiff& d, const compare::SideFigures& f) {
  if (!per_step(d)) return fmt::format("{}", f.count);
  const double c = f.count_per_step;
  return c == std::floor(c) ? fmt::format("{:.0f}", c) : fmt::format("{:.1f}", c);
}

std::string settings_line(const TraceDiff& d) {
  return fmt::format(
      "a change counts when the Mann-Whitney U test gives q < {:g} (Benjamini-Hochberg over {} tested) "
      "and the median moves by {:g}% or more",
      d.options.alpha, d.tested, d.options.min_change_pct);
}

std::string step_line(const TraceDiff& d) {
  if (!d.steps) return "Steps: not compared (" + d.steps_note + ")";
  const compare::StepDiff& s = *d.steps;
  std::string source = s.base_source == s.new_source ? s.base_source : s.base_source + " / " + s.new_source;
  return fmt::format("Step time: median {} -> {} ({}), {} (p {}; {} -> {} steps, {})", dur(s.base.median_ns),
                     dur(s.next.median_ns), signed_pct(s.median_change_pct()), compare::verdict_name(s.verdict),
                     p_text(s.p_value), s.base.count, s.next.count, source);
}

std::string parts_title(const TraceDiff& d) {
  return d.time_basis == "step" ? "Where the step time went (mean per step and GPU)"
                                : "Where the GPU time went (mean span per GPU)";
}

std::string finding_severity(const FindingChange& f) {
  using compare::FindingStatus;
  const char* b = diagnose::severity_name(f.base_severity);
  const char* n = diagnose::severity_name(f.new_severity);
  if (f.status == FindingStatus::kAppeared) return n;
  if (f.status == FindingStatus::kDisappeared) return b;
  return f.base_severity == f.new_severity ? std::string(n) : fmt::format("{} -> {}", b, n);
}

std::string finding_savings(const FindingChange& f) {
  using compare::FindingStatus;
  if (f.status == FindingStatus::kAppeared) return "saves up to " + dur(static_cast<double>(f.new_savings_ns));
  if (f.status == FindingStatus::kDisappeared) return "saved up to " + dur(static_cast<double>(f.base_savings_ns));
  return fmt::format("savings {} -> {}", dur(static_cast<double>(f.base_savings_ns)),
                     dur(static_cast<double>(f.new_savings_ns)));
}

std::string findings_counts(const TraceDiff& d) {
  size_t n[3] = {0, 0, 0};
  for (const FindingChange& f : d.findings) ++n[static_cast<int>(f.status)];
  return fmt::format("{} appeared, {} disappeared, {} persisted", n[0], n[1], n[2]);
}

std::string side_line(const char* label, const compare::SideInfo& s) {
  return fmt::format("  {:<4}  {}  ({}; {} kernels, {} operators, {} ranges, {} GPUs)\n", label, s.input, s.format,
                     s.kernels, s.operators, s.ranges, s.gpus);
}

std::string ranks_headline(const compare::RanksDiff& r) {
  auto skew = [](int64_t matched, int64_t p50) {
    return matched > 0 ? dur(static_cast<double>(p50)) : std::string("-");
  };
  return fmt::format(
      "{} GPUs: compute imbalance {:.2f}x -> {:.2f}x, collective skew p50 {} -> {} ({} -> {} collectives matched)",
      r.gpus.size(), r.base_imbalance, r.new_imbalance, skew(r.base_collectives, r.base_skew_p50_ns),
      skew(r.new_collectives, r.new_skew_p50_ns), r.base_collectives, r.new_collectives);
}

// The GPUs a listing shows: many ranks, the ones whose computation time changed most.
constexpr size_t kRanksShown = 12;
std::vector<const compare::RankChange*> shown_ranks(const compare::RanksDiff& r) {
  std::vector<const compare::RankChange*> out;
  for (const compare::RankChange& g : r.gpus) out.push_back(&g);
  if (out.size() > kRanksShown) {
    std::stable_sort(out.begin(), out.end(), [](const compare::RankChange* a, const compare::RankChange* b) {
      return std::llabs(a->new_compute_ns - a->base_compute_ns) > std::llabs(b->new_compute_ns - b->base_compute_ns);
    });
    out.resize(kRanksShown);
  }
  return out;
}

// "16.7 ms -> 16.9 ms": a side without the GPU, or without the figure (`known` false), shows "-",
// as summary shows a figure a trace cannot give.
std::string side_pair(const compare::RankChange& g, int64_t base, int64_t next, bool base_known = true,
                      bool new_known = true, const char* arrow = "->") {
  auto side = [](bool present, int64_t v) { return present ? dur(static_cast<double>(v)) : std::string("-"); };
  return fmt::format("{} {} {}", side(g.in_base && base_known, base), arrow, side(g.in_new && new_known, next));
}
std::string step_pair(const compare::RankChange& g) {
  return side_pair(g, g.base_step_median_ns, g.new_step_median_ns, g.base_steps > 0, g.new_steps > 0);
}
std::string wait_pair(const compare::RankChange& g) {
  return side_pair(g, g.base_wait_ns, g.new_wait_ns, g.base_collectives > 0, g.new_collectives > 0);
}
std::string last_pair(const compare::RankChange& g, const char* arrow) {
  auto side = [](bool present, int64_t v) { return present ? fmt::format("{}", v) : std::string("-"); };
  return fmt::format("{} {} {}", side(g.in_base && g.base_collectives > 0, g.base_last), arrow,
                     side(g.in_new && g.new_collectives > 0, g.new_last));
}

}  // namespace

std::string diff_text(const TraceDiff& d, const DiffTextOptions& o) {
  std::string out = "tracedoc diff\n" + side_line("base", d.base) + side_line("new", d.next);
  out += "  " + settings_line(d) + "\n\n";
  out += step_line(d) + "\n\n";
  out += parts_title(d) + "\n";
  out += fmt::format("  {:<14} {:>10} {:>10} {:>11}\n", "", "base", "new", "delta");
  for (const TimePart& p : d.parts) {
    out += fmt::format("  {:<14} {:>10} {:>10} {:>11}\n", p.name, dur(p.base_mean_ns), dur(p.new_mean_ns),
                       signed_dur(p.new_mean_ns - p.base_mean_ns));
  }
  out += fmt::format("  {:<14} {:>10} {:>10} {:>11}\n", d.time_basis, dur(d.base_time_mean_ns), dur(d.new_time_mean_ns),
                     signed_dur(d.new_time_mean_ns - d.base_time_mean_ns));
  if (d.ranks) {
    const compare::RanksDiff& r = *d.ranks;
    out += "\nRanks: " + ranks_headline(r) + "\n";
    out += fmt::format("  {:<44} {:>21} {:>21} {:>21} {:>9}\n", "GPU", "step p50 base -> new", "compute base -> new",
                       "waited base -> new", "last at");
    for (const compare::RankChange* g : shown_ranks(r)) {
      out += fmt::format("  {:<44} {:>21} {:>21} {:>21} {:>9}\n", clip_text(g->gpu, 44), step_pair(*g),
                         side_pair(*g, g->base_compute_ns, g->new_compute_ns), wait_pair(*g), last_pair(*g, "->"));
    }
    if (r.gpus.size() > kRanksShown)
      out += fmt::format("  ({} more GPUs; -f json lists every one)\n", r.gpus.size() - kRanksShown);
  }
  const char* time_head = per_step(d) ? "per step" : "in total";
  for (ItemKind kind : kKinds) {
    if (!has_kind(d, kind)) continue;
    size_t hidden = 0;
    const auto rows = listed(d, kind, o, &hidden);
    out += fmt::format("\n{} ({}): {}\n", kind_title(kind), time_head, verdict_counts(d, kind));
    if (rows.empty()) continue;
    out += fmt::format("  {:<20} {:>10} {:>10} {:>11} {:>7}  {:>21}  {:>17} {:>7}  {}\n", "verdict", "base", "new",
                       "delta", "ratio", "median base -> new", "count base -> new", "q", "name");
    for (const ItemDiff* i : rows) {
      const double b = shown_time(d, i->base), n = shown_time(d, i->next);
      out += fmt::format("  {:<20} {:>10} {:>10} {:>11} {:>7}  {:>21}  {:>17} {:>7}  {}\n", i->verdict_label(), dur(b),
                         dur(n), signed_dur(n - b), ratio_text(i->ratio()),
                         fmt::format("{} -> {}", dur(i->base.median_ns), dur(i->next.median_ns)),
                         fmt::format("{} -> {}", count_text(d, i->base), count_text(d, i->next)), p_text(i->q_value),
                         short_name(i->name));
    }
    if (hidden) out += fmt::format("  ({} more changed; --top N or --all lists them)\n", hidden);
  }
  if (d.findings_compared) {
    out += fmt::format("\nFindings (tracedoc diagnose): {}\n", findings_counts(d));
    for (const FindingChange& f : d.findings) {
      out += fmt::format("  {:<11} {:<19} {:<20} [{}]  {}; {}\n", compare::finding_status_name(f.status),
                         finding_severity(f), f.id, f.scope, f.title, finding_savings(f));
    }
  }
  if (!d.notes.empty()) out += "\n";
  for (const std::string& n : d.notes) out += "Note: " + n + "\n";
  return out;
}

std::string diff_markdown(const TraceDiff& d, const DiffTextOptions& o) {
  std::string out =
      fmt::format("### tracedoc diff: `{}` → `{}`\n\n", markdown_cell(d.base.input), markdown_cell(d.next.input));
  out += markdown_cell(step_line(d)) + "\n\n";
  out += fmt::format("**{}**\n\n| Part | Base | New | Delta |\n|---|---:|---:|---:|\n", parts_title(d));
  for (const TimePart& p : d.parts) {
    out += fmt::format("| {} | {} | {} | {} |\n", p.name, dur(p.base_mean_ns), dur(p.new_mean_ns),
                       signed_dur(p.new_mean_ns - p.base_mean_ns));
  }
  out += fmt::format("| **{}** | **{}** | **{}** | **{}** |\n", d.time_basis, dur(d.base_time_mean_ns),
                     dur(d.new_time_mean_ns), signed_dur(d.new_time_mean_ns - d.base_time_mean_ns));
  if (d.ranks) {
    out += fmt::format(
        "\n**Ranks**: {}\n\n| GPU | Step p50 | Compute | Waited at collectives | Started last "
        "|\n|---|---:|---:|---:|---:|\n",
        ranks_headline(*d.ranks));
    for (const compare::RankChange* g : shown_ranks(*d.ranks)) {
      out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_cell(g->gpu), step_pair(*g),
                         side_pair(*g, g->base_compute_ns, g->new_compute_ns), wait_pair(*g), last_pair(*g, "→"));
    }
  }
  const char* time_head = per_step(d) ? "per step" : "total";
  for (ItemKind kind : kKinds) {
    if (!has_kind(d, kind)) continue;
    size_t hidden = 0;
    const auto rows = listed(d, kind, o, &hidden);
    out += fmt::format("\n**{}**: {}\n", kind_title(kind), verdict_counts(d, kind));
    if (rows.empty()) continue;
    out += fmt::format(
        "\n| Verdict | Base ({}) | New | Delta | Ratio | Median | Count | q | Name "
        "|\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
        time_head);
    for (const ItemDiff* i : rows) {
      const double b = shown_time(d, i->base), n = shown_time(d, i->next);
      out += fmt::format("| {} | {} | {} | {} | {} | {} → {} | {} → {} | {} | `{}` |\n", i->verdict_label(), dur(b),
                         dur(n), signed_dur(n - b), ratio_text(i->ratio()), dur(i->base.median_ns),
                         dur(i->next.median_ns), count_text(d, i->base), count_text(d, i->next), p_text(i->q_value),
                         markdown_cell(short_name(i->name)));
    }
    if (hidden) out += fmt::format("\n{} more changed.\n", hidden);
  }
  if (d.findings_compared) {
    out += fmt::format("\n**Findings** (tracedoc diagnose): {}\n\n", findings_counts(d));
    for (const FindingChange& f : d.findings) {
      out += fmt::format("- **{}** `{}` ({}) [{}]: {}; {}\n", compare::finding_status_name(f.status), f.id,
                         finding_severity(f), markdown_cell(f.scope), markdown_cell(f.title), finding_savings(f));
    }
  }
  out += "\n<sub>" + markdown_cell(settings_line(d)) + "</sub>\n";
  for (const std::string& n : d.notes) out += "\n<sub>Note: " + markdown_cell(n) + "</sub>\n";
  return out;
}

namespace {

void side_json(JsonObject& parent, const char* key, const compare::SideFigures& f, bool steps) {
  parent.key(key);
  JsonObject o(parent.out(), parent.indent() + 2);
  o.field("count", f.count);
  o.field("total_ns", f.total_ns);
  o.field("median_ns", f.median_ns);
  if (steps) {
    o.field("per_step_ns", f.per_step_ns);
    o.field("count_per_step", f.count_per_step);
  }
  o.close();
}

void info_json(JsonObject& parent, const char* key, const compare::SideInfo& s) {
  parent.key(key);
  JsonObject o(parent.out(), parent.indent() + 2);
  o.field("input", s.input);
  o.field("format", s.format);
  o.field("kernels", s.kernels);
  o.field("operators", s.operators);
  o.field("ranges", s.ranges);
  o.field("gpus", s.gpus);
  o.close();
}

}  // namespace

std::string diff_json(const TraceDiff& d) {
  std::string out;
  JsonObject root(out, 0);
  root.field("schema_version", int64_t{1});
  info_json(root, "base", d.base);
  info_json(root, "new", d.next);
  root.key("settings");
  {
    JsonObject s(out, 2);
    s.field("test", std::string("mann-whitney-u"));
    s.field("adjustment", std::string("benjamini-hochberg"));
    s.precise("alpha", d.options.alpha);
    s.precise("min_change_pct", d.options.min_change_pct);
    s.field("tested", d.tested);
    s.close();
  }
  if (!d.steps) root.field("steps_note", d.steps_note);
  root.key("steps");
  if (!d.steps) {
    out += "null";
  } else {
    JsonObject s(out, 2);
    s.field("base_source", d.steps->base_source);
    s.field("new_source", d.steps->new_source);
    side_json(s, "base", d.steps->base, false);
    side_json(s, "new", d.steps->next, false);
    s.field("median_change_pct", d.steps->median_change_pct());
    s.precise("p_value", d.steps->p_value);
    s.field("verdict", std::string(compare::verdict_name(d.steps->verdict)));
    s.close();
  }
  root.key("time");
  {
    JsonObject t(out, 2);
    t.field("basis", d.time_basis);
    t.field("base_mean_ns", d.base_time_mean_ns);
    t.field("new_mean_ns", d.new_time_mean_ns);
    json_array(t, "parts", d.parts, [](JsonObject& o, const TimePart& p) {
      o.field("name", p.name);
      o.field("base_ns", p.base_ns);
      o.field("new_ns", p.new_ns);
      o.field("base_mean_ns", p.base_mean_ns);
      o.field("new_mean_ns", p.new_mean_ns);
      o.field("delta_mean_ns", p.new_mean_ns - p.base_mean_ns);
    });
    t.close();
  }
  root.key("ranks");
  if (!d.ranks) {
    out += "null";
  } else {
    const compare::RanksDiff& r = *d.ranks;
    JsonObject k(out, 2);
    k.field("base_compute_imbalance", r.base_imbalance);
    k.field("new_compute_imbalance", r.new_imbalance);
    k.field("base_skew_p50_ns", r.base_skew_p50_ns);
    k.field("new_skew_p50_ns", r.new_skew_p50_ns);
    k.field("base_collectives_matched", r.base_collectives);
    k.field("new_collectives_matched", r.new_collectives);
    json_array(k, "gpus", r.gpus, [](JsonObject& g, const compare::RankChange& c) {
      g.field("gpu", c.gpu);
      g.flag("in_base", c.in_base);
      g.flag("in_new", c.in_new);
      g.field("base_steps", c.base_steps);
      g.field("new_steps", c.new_steps);
      g.field("base_step_median_ns", c.base_step_median_ns);
      g.field("new_step_median_ns", c.new_step_median_ns);
      g.field("base_compute_ns", c.base_compute_ns);
      g.field("new_compute_ns", c.new_compute_ns);
      g.field("base_collectives", c.base_collectives);
      g.field("new_collectives", c.new_collectives);
      g.field("base_waited_ns", c.base_wait_ns);
      g.field("new_waited_ns", c.new_wait_ns);
      g.field("base_started_last", c.base_last);
      g.field("new_started_last", c.new_last);
    });
    k.close();
  }
  const bool steps = d.steps.has_value();
  json_array(root, "items", d.items, [&](JsonObject& o, const ItemDiff& i) {
    o.field("kind", std::string(compare::item_kind_name(i.kind)));
    o.field("name", i.name);
    o.field("verdict", std::string(compare::verdict_name(i.verdict)));
    o.field("timing", std::string(compare::verdict_name(i.timing)));
    o.field("calls", std::string(compare::verdict_name(i.calls)));
    side_json(o, "base", i.base, steps);
    side_json(o, "new", i.next, steps);
    o.field("delta_total_ns", i.delta_total_ns());
    o.field("ratio", i.ratio());
    o.field("median_change_pct", i.median_change_pct());
    o.precise("p_value", i.p_value);
    o.precise("q_value", i.q_value);
  });
  root.flag("findings_compared", d.findings_compared);
  json_array(root, "findings", d.findings, [](JsonObject& o, const FindingChange& f) {
    o.field("status", std::string(compare::finding_status_name(f.status)));
    o.field("id", f.id);
    o.field("scope", f.scope);
    o.field("title", f.title);
    if (f.status != compare::FindingStatus::kAppeared) {
      o.field("base_severity", std::string(diagnose::severity_name(f.base_severity)));
      o.field("base_savings_ns", f.base_savings_ns);
    }
    if (f.status != compare::FindingStatus::kDisappeared) {
      o.field("new_severity", std::string(diagnose::severity_name(f.new_severity)));
      o.field("new_savings_ns", f.new_savings_ns);
    }
  });
  root.key("notes");
  out += "[";
  for (size_t i = 0; i < d.notes.size(); ++i) {
    out += i ? ", " : "";
    append_json_string(out, d.notes[i]);
  }
  out += "]";
  root.close();
  out += "\n";
  return out;
}

namespace {

// One CSV row of any kind (docs/diff.md): the cells a kind has no figure for stay empty.
struct CsvRow {
  std::string_view kind, name, verdict, timing, calls;
  std::optional<int64_t> base_count, new_count;
  int64_t base_total = 0, new_total = 0;
  std::string ratio, base_median, new_median, change, base_per_step, new_per_step, p, q;
};

// A real with `spec`, or an empty cell for NaN (not applicable).
std::string real_cell(double v, std::string_view spec) {
  return std::isnan(v) ? std::string() : fmt::format(fmt::runtime(spec), v);
}

void emit(RowSink& sink, const CsvRow& r) {
  auto count = [](const std::optional<int64_t>& c) { return c ? Cell::integer(*c) : Cell::null(); };
  const Cell cells[] = {Cell::text(r.kind),
                        Cell::text(r.name),
                        Cell::text(r.verdict),
                        Cell::text(r.timing),
                        Cell::text(r.calls),
                        count(r.base_count),
                        count(r.new_count),
                        Cell::integer(r.base_total),
                        Cell::integer(r.new_total),
                        Cell::integer(sat_sub(r.new_total, r.base_total)),
                        Cell::text(r.ratio),
                        Cell::text(r.base_median),
                        Cell::text(r.new_median),
                        Cell::text(r.change),
                        Cell::text(r.base_per_step),
                        Cell::text(r.new_per_step),
                        Cell::text(r.p),
                        Cell::text(r.q)};
  sink.row(cells);
}

// A step or item row: counts, totals, medians, per step and the test.
CsvRow figures_row(std::string_view kind, std::string_view name, const compare::SideFigures& b,
                   const compare::SideFigures& n, double ratio, double change, double p, double q) {
  CsvRow r;
  r.kind = kind, r.name = name;
  r.base_count = b.count, r.new_count = n.count;
  r.base_total = b.total_ns, r.new_total = n.total_ns;
  r.ratio = real_cell(ratio, "{:.4f}");
  r.base_median = fmt::format("{:.1f}", b.median_ns), r.new_median = fmt::format("{:.1f}", n.median_ns);
  r.change = real_cell(change, "{:.2f}");
  r.base_per_step = real_cell(b.per_step_ns, "{:.1f}"), r.new_per_step = real_cell(n.per_step_ns, "{:.1f}");
  r.p = real_cell(p, "{:.6g}"), r.q = real_cell(q, "{:.6g}");
  return r;
}

}  // namespace

void diff_rows(const TraceDiff& d, RowSink& sink) {
  sink.begin({{"Kind"},
              {"Name"},
              {"Verdict"},
              {"Timing"},
              {"Calls"},
              {"Base Count"},
              {"New Count"},
              {"Base Total (ns)"},
              {"New Total (ns)"},
              {"Delta Total (ns)"},
              {"Ratio"},
              {"Base Median (ns)"},
              {"New Median (ns)"},
              {"Median Change (%)"},
              {"Base Per Step (ns)"},
              {"New Per Step (ns)"},
              {"p-value"},
              {"q-value"}});
  if (d.steps) {
    const compare::StepDiff& s = *d.steps;
    const double ratio =
        s.base.total_ns > 0 ? static_cast<double>(s.next.total_ns) / static_cast<double>(s.base.total_ns) : NAN;
    CsvRow r = figures_row("step", "step", s.base, s.next, ratio, s.median_change_pct(), s.p_value, NAN);
    r.verdict = r.timing = compare::verdict_name(s.verdict);
    emit(sink, r);
  }
  auto part_row = [&](const std::string& name, int64_t base_ns, int64_t new_ns, double base_mean, double new_mean) {
    CsvRow r;
    r.kind = "time", r.name = name;
    r.base_total = base_ns, r.new_total = new_ns;
    r.base_per_step = fmt::format("{:.1f}", base_mean), r.new_per_step = fmt::format("{:.1f}", new_mean);
    emit(sink, r);
  };
  int64_t base_sum = 0, new_sum = 0;
  for (const TimePart& p : d.parts) {
    part_row(p.name, p.base_ns, p.new_ns, p.base_mean_ns, p.new_mean_ns);
    base_sum = sat_add(base_sum, p.base_ns), new_sum = sat_add(new_sum, p.new_ns);
  }
  part_row("total", base_sum, new_sum, d.base_time_mean_ns, d.new_time_mean_ns);
  if (d.ranks) {
    for (const compare::RankChange& g : d.ranks->gpus) {
      CsvRow r;
      r.kind = "rank", r.name = g.gpu;
      r.base_total = g.base_compute_ns, r.new_total = g.new_compute_ns;
      // An absent step median (no steps on that side) is an empty cell.
      if (g.base_steps > 0) r.base_median = fmt::format("{}", g.base_step_median_ns);
      if (g.new_steps > 0) r.new_median = fmt::format("{}", g.new_step_median_ns);
      emit(sink, r);
    }
  }
  for (const ItemDiff& i : d.items) {
    CsvRow r = figures_row(compare::item_kind_name(i.kind), i.name, i.base, i.next, i.ratio(), i.median_change_pct(),
                           i.p_value, i.q_value);
    r.verdict = compare::verdict_name(i.verdict), r.timing = compare::verdict_name(i.timing),
    r.calls = compare::verdict_name(i.calls);
    emit(sink, r);
  }
  for (const FindingChange& f : d.findings) {
    const std::string name = f.id + " [" + f.scope + "]";
    CsvRow r;
    r.kind = "finding", r.name = name, r.verdict = compare::finding_status_name(f.status);
    r.base_total = f.base_savings_ns, r.new_total = f.new_savings_ns;
    emit(sink, r);
  }
  sink.end();
}

}  // namespace tracedoc
