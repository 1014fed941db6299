#include "report/diagnose_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cctype>

#include "common/human_units.h"
#include "diagnose/rules.h"
#include "report/json_object.h"
#include "report/markdown.h"

namespace tracedoc {

using diagnose::Diagnosis;
using diagnose::Finding;

namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "2.41 ms (12.3%)"
std::string savings_text(const Finding& f) {
  return fmt::format("{} ({})", human_duration(f.savings_ns), human_percent(f.savings_share));
}

std::string figure_value(const diagnose::Figure& g) {
  if (g.unit == "ns") return human_duration(static_cast<int64_t>(g.value));
  if (g.unit == "bytes") return human_bytes(static_cast<int64_t>(g.value));
  if (g.unit == "fraction") return human_percent(g.value);
  if (g.unit == "count") return fmt::format("{:.0f}", g.value);
  return fmt::format("{:.2f} {}", g.value, g.unit);
}

std::string header(const Diagnosis& d) {
  int64_t total = 0;
  for (const Finding& f : d.findings) total = std::max(total, f.savings_ns);
  std::string basis = d.basis == "steps" ? fmt::format("{} steps, {}", d.steps, human_duration(d.basis_ns))
                                         : fmt::format("span {}", human_duration(d.basis_ns));
  return fmt::format("{}: {} finding{} ({}; {} rules run)", d.input, d.findings.size(),
                     d.findings.size() == 1 ? "" : "s", basis, d.rules_run.size());
}

// "ncu: 5 of 6 profiled launches matched kernels of the timeline", then the unmatched ones.
std::string ncu_coverage(const diagnose::NcuCoverage& c) {
  if (c.reports == 0) return {};
  std::string out = fmt::format("  ncu: {} of {} profiled launch{} matched kernels of the timeline\n", c.matched,
                                c.launches, c.launches == 1 ? "" : "es");
  constexpr size_t kListed = 5;
  for (size_t i = 0; i < c.unmatched.size() && i < kListed; ++i) out += "    unmatched: " + c.unmatched[i] + "\n";
  if (c.unmatched.size() > kListed) out += fmt::format("    ... and {} more unmatched\n", c.unmatched.size() - kListed);
  return out;
}

}  // namespace

std::string diagnose_text(const std::vector<Diagnosis>& diagnoses) {
  std::string out;
  for (const Diagnosis& d : diagnoses) {
    if (!out.empty()) out += "\n";
    out += header(d) + "\n" + ncu_coverage(d.ncu);
    if (d.findings.empty()) {
      out += "  no problem found\n";
      continue;
    }
    for (const Finding& f : d.findings) {
      out += fmt::format("\n{:<8} {}  [{}]  {}\n", upper(diagnose::severity_name(f.severity)), f.id, f.scope, f.title);
      if (f.time_based) {
        out +=
            fmt::format("  saves up to {}, confidence {}\n", savings_text(f), diagnose::confidence_label(f.confidence));
      } else {
        out += fmt::format("  a memory problem (no time estimate), confidence {}\n",
                           diagnose::confidence_label(f.confidence));
      }
      if (!f.figures.empty()) {
        std::string line = "  evidence:";
        for (size_t i = 0; i < f.figures.size(); ++i) {
          line += fmt::format("{} {} {}", i ? "," : "", f.figures[i].key, figure_value(f.figures[i]));
        }
        out += line + "\n";
      }
      for (const diagnose::Offender& o : f.offenders) {
        out += fmt::format("    {:>9} {:>7}x  {}{}\n", human_duration(o.total_ns), o.count, o.name,
                           o.detail.empty() ? "" : " — " + o.detail);
      }
      for (const diagnose::TimeRange& r : f.ranges) {
        out += fmt::format("    at {} .. {} ns ({}) on {}: {}\n", r.start, r.end, human_duration(r.end - r.start),
                           r.where, r.label);
      }
      out += "  remedy: " + f.remedy + "\n";
    }
  }
  return out;
}

std::string diagnose_json(const std::vector<Diagnosis>& diagnoses) {
  std::string out;
  JsonObject root(out, 0);
  root.field("schema_version", int64_t{1});
  json_array(root, "diagnoses", diagnoses, [](JsonObject& o, const Diagnosis& d) {
    o.field("input", d.input);
    o.field("basis", d.basis);
    o.field("basis_ns", d.basis_ns);
    o.field("steps", d.steps);
    o.key("rules_run");
    o.out() += "[";
    for (size_t i = 0; i < d.rules_run.size(); ++i) {
      o.out() += i ? ", " : "";
      append_json_string(o.out(), d.rules_run[i]);
    }
    o.out() += "]";
    if (d.ncu.reports > 0) {
      o.key("ncu");
      JsonObject n(o.out(), o.indent() + 2);
      n.field("reports", static_cast<int64_t>(d.ncu.reports));
      n.field("launches", static_cast<int64_t>(d.ncu.launches));
      n.field("matched", static_cast<int64_t>(d.ncu.matched));
      n.key("unmatched");
      n.out() += "[";
      for (size_t i = 0; i < d.ncu.unmatched.size(); ++i) {
        n.out() += i ? ", " : "";
        append_json_string(n.out(), d.ncu.unmatched[i]);
      }
      n.out() += "]";
      n.close();
    }
    json_array(o, "findings", d.findings, [](JsonObject& j, const Finding& f) {
      j.field("id", f.id);
      j.field("severity", std::string(diagnose::severity_name(f.severity)));
      j.field("confidence", f.confidence);
      j.field("scope", f.scope);
      j.field("title", f.title);
      j.flag("time_based", f.time_based);
      j.field("savings_ns", f.savings_ns);
      j.field("savings_share", f.savings_share);
      j.key("figures");
      JsonObject figures(j.out(), j.indent() + 2);
      for (const diagnose::Figure& g : f.figures) {
        // Whole quantities are exact integers; a NaN (or a value past int64) is null, never cast.
        const bool whole = g.unit == "ns" || g.unit == "bytes" || g.unit == "count";
        if (whole && std::isfinite(g.value) && std::abs(g.value) < 9.2e18) {
          figures.field(g.key.c_str(), static_cast<int64_t>(g.value));
        } else {
          figures.field(g.key.c_str(), g.value);
        }
      }
      figures.close();
      json_array(j, "offenders", f.offenders, [](JsonObject& x, const diagnose::Offender& v) {
        x.field("name", v.name);
        x.field("count", v.count);
        x.field("total_ns", v.total_ns);
        x.field("detail", v.detail);
      });
      json_array(j, "ranges", f.ranges, [](JsonObject& x, const diagnose::TimeRange& v) {
        x.field("start_ns", v.start);
        x.field("end_ns", v.end);
        x.field("where", v.where);
        x.field("label", v.label);
      });
      j.field("remedy", f.remedy);
    });
  });
  root.close();
  out += "\n";
  return out;
}

std::string diagnose_markdown(const std::vector<Diagnosis>& diagnoses) {
  std::string out;
  for (const Diagnosis& d : diagnoses) {
    out += fmt::format("### tracedoc diagnose: `{}`\n\n", markdown_cell(d.input));
    out += header(d).substr(d.input.size() + 2) + "\n\n";
    if (d.findings.empty()) {
      out += "No problem found.\n\n";
      continue;
    }
    out += "| Severity | Rule | Where | Finding | Saves up to |\n|---|---|---|---|---|\n";
    for (const Finding& f : d.findings) {
      out += fmt::format("| {} | `{}` | {} | {} | {} |\n", diagnose::severity_name(f.severity), f.id,
                         markdown_cell(f.scope), markdown_cell(f.title),
                         f.time_based ? savings_text(f) : std::string("(memory)"));
    }
    out += "\n";
    for (const Finding& f : d.findings) {
      out += fmt::format("<details><summary><code>{}</code>: {}</summary>\n\n", f.id, markdown_cell(f.title));
      for (const diagnose::Figure& g : f.figures) out += fmt::format("- {}: {}\n", g.key, figure_value(g));
      for (const diagnose::Offender& o : f.offenders) {
        out += fmt::format("- `{}` ×{}, {}{}\n", markdown_cell(o.name), o.count, human_duration(o.total_ns),
                           o.detail.empty() ? "" : " — " + markdown_cell(o.detail));
      }
      out += "\n**Remedy:** " + f.remedy + "\n\n</details>\n\n";
    }
  }
  return out;
}

std::string rules_text() {
  std::string out;
  for (const diagnose::RuleDef& r : diagnose::all_rules()) {
    out += fmt::format("{}\n  {}\n", r.id, r.summary);
    for (const diagnose::Param& p : r.params) out += fmt::format("    {} = {:g}  ({})\n", p.name, p.value, p.doc);
  }
  return out;
}

}  // namespace tracedoc
