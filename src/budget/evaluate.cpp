#include "budget/evaluate.h"

#include <fmt/format.h>

#include <cmath>

#include "analysis/checked_math.h"
#include "common/human_units.h"

namespace tracedoc::budget {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

CheckResult make(std::string check, std::string scope, bool at_most, double limit, std::string unit) {
  CheckResult r;
  r.check = std::move(check);
  r.scope = std::move(scope);
  r.at_most = at_most;
  r.limit = limit;
  r.unit = std::move(unit);
  return r;
}

void add(std::vector<CheckResult>& out, CheckResult r) {
  r.pass = !std::isnan(r.actual) && (r.at_most ? r.actual <= r.limit : r.actual >= r.limit);
  out.push_back(std::move(r));
}

std::string steps_text(const Measures& m) {
  return fmt::format("{} step{} ({})", m.step_ns.size(), m.step_ns.size() == 1 ? "" : "s", m.step_source);
}

const char* const kNoSteps = "no steps: no ProfilerStep#N ranges, no marker ranges, no repeating kernel sequence";

void step_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  const std::pair<int, const std::optional<double>*> limits[] = {{50, &b.step_p50_max_ms}, {95, &b.step_p95_max_ms}};
  for (const auto& [pct, limit] : limits) {
    if (!*limit) continue;
    CheckResult r = make(fmt::format("steps.p{}_max_ms", pct), "steps", true, **limit, "ms");
    if (m.step_ns.empty()) {
      r.detail = kNoSteps;
    } else {
      r.figure = m.step_percentile(pct);
      r.figure_unit = "ns";
      r.actual = static_cast<double>(r.figure) / 1e6;
      r.detail = fmt::format("p{} of {}, from {} to {}", pct, steps_text(m), human_duration(m.step_ns.front()),
                             human_duration(m.step_ns.back()));
    }
    add(out, std::move(r));
  }
}

// One result per GPU; a trace without GPU work fails the check (there is nothing to hold).
template <typename Fn>
void per_gpu(const Measures& m, const std::string& check, bool at_most, double limit, Fn fill,
             std::vector<CheckResult>& out) {
  if (m.gpus.empty()) {
    CheckResult r = make(check, "trace", at_most, limit, "%");
    r.detail = "no GPU work in the trace";
    add(out, std::move(r));
    return;
  }
  for (const GpuMeasure& g : m.gpus) {
    CheckResult r = make(check, g.label, at_most, limit, "%");
    r.basis = g.window_ns;
    r.figure_unit = "ns";
    fill(g, r);
    add(out, std::move(r));
  }
}

void gpu_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  const std::string over = m.step_ns.empty() ? "its span" : steps_text(m);  // "in its span", "in 3 steps (detected)"
  if (b.busy_min_pct) {
    per_gpu(
        m, "gpu.busy_min_pct", false, *b.busy_min_pct,
        [&](const GpuMeasure& g, CheckResult& r) {
          r.figure = g.busy_ns;
          r.actual = g.busy_pct();
          r.detail = fmt::format("busy {} of {} in {}", human_duration(g.busy_ns), human_duration(g.window_ns), over);
        },
        out);
  }
  if (b.idle_max_pct) {
    per_gpu(
        m, "gpu.idle_max_pct", true, *b.idle_max_pct,
        [&](const GpuMeasure& g, CheckResult& r) {
          r.figure = sat_sub(g.window_ns, g.busy_ns);
          r.actual = g.window_ns > 0 ? 100.0 * static_cast<double>(r.figure) / static_cast<double>(g.window_ns) : 0;
          r.detail = fmt::format("idle {} of {} in {}", human_duration(r.figure), human_duration(g.window_ns), over);
        },
        out);
  }
  if (b.copy_share_max_pct) {
    per_gpu(
        m, "copies.share_max_pct", true, *b.copy_share_max_pct,
        [&](const GpuMeasure& g, CheckResult& r) {
          r.figure = g.copy_ns;
          r.actual = g.copy_pct();
          r.detail = fmt::format("host<->device copies {} of {} in {}", human_duration(g.copy_ns),
                                 human_duration(g.window_ns), over);
        },
        out);
  }
}

void memory_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  if (!b.memory_peak_max_gb) return;
  if (!m.memory_recorded) {
    CheckResult r = make("memory.peak_max_gb", "trace", true, *b.memory_peak_max_gb, "GB");
    r.detail = "no GPU memory events (nsys profile --cuda-memory-usage=true; torch.profiler profile_memory=True)";
    add(out, std::move(r));
    return;
  }
  for (const MemoryMeasure& s : m.memory) {
    CheckResult r = make("memory.peak_max_gb", s.label, true, *b.memory_peak_max_gb, "GB");
    r.figure = s.peak_bytes;
    r.figure_unit = "bytes";
    r.actual = static_cast<double>(s.peak_bytes) / 1e9;
    r.detail = fmt::format("peak allocated {}", human_bytes(s.peak_bytes));
    add(out, std::move(r));
  }
}

void kernel_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  for (size_t e = 0; e < b.kernels.size() && e < m.kernels.size(); ++e) {
    const KernelBudget& k = b.kernels[e];
    const KernelMeasure& km = m.kernels[e];
    const std::string scope = "kernels /" + k.name + "/";
    const std::string matched = km.count == 0
                                    ? "no kernel matches"
                                    : fmt::format("{} kernels, {} of {} kernel time", km.count,
                                                  human_duration(km.total_ns), human_duration(m.kernel_total_ns));
    auto result = [&](const char* key, double limit, const char* unit, int64_t figure, const char* figure_unit) {
      CheckResult r = make(fmt::format("kernel[{}].{}", e, key), scope, true, limit, unit);
      r.figure = figure;
      r.figure_unit = figure_unit;
      r.detail = matched;
      return r;
    };
    if (k.total_max_ms) {
      CheckResult r = result("total_max_ms", *k.total_max_ms, "ms", km.total_ns, "ns");
      r.actual = static_cast<double>(km.total_ns) / 1e6;
      add(out, std::move(r));
    }
    if (k.share_max_pct) {
      CheckResult r = result("share_max_pct", *k.share_max_pct, "%", km.total_ns, "ns");
      r.basis = m.kernel_total_ns;
      r.actual =
          m.kernel_total_ns > 0 ? 100.0 * static_cast<double>(km.total_ns) / static_cast<double>(m.kernel_total_ns) : 0;
      add(out, std::move(r));
    }
    if (k.count_max) {
      CheckResult r = result("count_max", *k.count_max, "count", km.count, "count");
      r.actual = static_cast<double>(km.count);
      add(out, std::move(r));
    }
    if (k.avg_max_us) {
      CheckResult r = result("avg_max_us", *k.avg_max_us, "us", km.total_ns, "ns");
      r.basis = km.count;
      r.actual = km.count > 0 ? static_cast<double>(km.total_ns) / static_cast<double>(km.count) / 1e3 : 0;
      add(out, std::move(r));
    }
  }
}

void finding_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  if (b.forbid.empty() || !m.diagnosis) return;
  for (const std::string& id : b.forbid) {
    CheckResult r = make("findings.forbid", id, true, 0, "count");
    int64_t n = 0;
    for (const diagnose::Finding& f : m.diagnosis->findings) {
      if (f.id != id || f.severity < b.forbid_min_severity) continue;
      if (n++ == 0) r.detail = fmt::format("{}: {}", diagnose::severity_name(f.severity), f.title);
    }
    if (n > 1) r.detail += fmt::format(" (and {} more)", n - 1);
    if (n == 0)
      r.detail = b.forbid_min_severity == diagnose::Severity::kInfo
                     ? "not found"
                     : fmt::format("not found at {} or above", diagnose::severity_name(b.forbid_min_severity));
    r.figure = n;
    r.figure_unit = "count";
    r.actual = static_cast<double>(n);
    add(out, std::move(r));
  }
}

void baseline_checks(const Budget& b, const Measures& m, const Measures* base, std::vector<CheckResult>& out) {
  if (!base) return;
  const std::pair<int, const std::optional<double>*> limits[] = {{50, &b.step_p50_regression_max_pct},
                                                                 {95, &b.step_p95_regression_max_pct}};
  for (const auto& [pct, limit] : limits) {
    if (!*limit) continue;
    CheckResult r = make(fmt::format("baseline.step_p{}_regression_max_pct", pct), "steps", true, **limit, "%");
    if (m.step_ns.empty() || base->step_ns.empty()) {
      r.detail = m.step_ns.empty() ? kNoSteps : "the baseline has no steps";
    } else {
      const int64_t now = m.step_percentile(pct), then = base->step_percentile(pct);
      r.figure = now;
      r.basis = then;
      r.figure_unit = "ns";
      r.actual =
          then > 0 ? 100.0 * (static_cast<double>(now) - static_cast<double>(then)) / static_cast<double>(then) : kNaN;
      r.detail = fmt::format("p{} {} against {} in the baseline", pct, human_duration(now), human_duration(then));
    }
    add(out, std::move(r));
  }
  if (b.busy_drop_max_pct) {
    CheckResult r = make("baseline.busy_drop_max_pct", "all GPUs", true, *b.busy_drop_max_pct, "pp");
    if (m.gpus.empty() || base->gpus.empty()) {
      r.detail = m.gpus.empty() ? "no GPU work in the trace" : "no GPU work in the baseline";
    } else {
      r.actual = base->overall_busy_pct() - m.overall_busy_pct();
      r.detail =
          fmt::format("busy {:.1f}% against {:.1f}% in the baseline", m.overall_busy_pct(), base->overall_busy_pct());
    }
    add(out, std::move(r));
  }
}

}  // namespace

size_t CheckReport::failed() const {
  size_t n = 0;
  for (const CheckResult& r : results) n += r.pass ? 0 : 1;
  return n;
}

void rank_checks(const Budget& b, const Measures& m, std::vector<CheckResult>& out) {
  const char* const one_gpu = "fewer than two GPUs: nothing across ranks";
  if (b.compute_imbalance_max) {
    CheckResult r = make("ranks.compute_imbalance_max", "ranks", true, *b.compute_imbalance_max, "x");
    if (m.ranks.gpus < 2) {
      r.detail = one_gpu;
    } else if (m.ranks.median_compute_ns > 0) {
      r.figure = m.ranks.slowest_compute_ns, r.basis = m.ranks.median_compute_ns, r.figure_unit = "ns";
      r.actual = static_cast<double>(r.figure) / static_cast<double>(r.basis);
      r.detail = fmt::format("{} computes {}, the median of {} GPUs {}", m.ranks.slowest, human_duration(r.figure),
                             m.ranks.gpus, human_duration(r.basis));
    } else {
      r.detail = "no computation kernels";
    }
    add(out, std::move(r));
  }
  if (b.skew_p50_max_ms) {
    CheckResult r = make("ranks.skew_p50_max_ms", "ranks", true, *b.skew_p50_max_ms, "ms");
    if (m.ranks.gpus < 2) {
      r.detail = one_gpu;
    } else if (m.ranks.collectives == 0) {
      r.detail = "no collective matched across the GPUs (docs/check.md says which are)";
    } else {
      r.figure = m.ranks.skew_p50_ns, r.figure_unit = "ns";
      r.actual = static_cast<double>(r.figure) / 1e6;
      r.detail =
          fmt::format("median start skew of {} collectives matched across {} GPUs", m.ranks.collectives, m.ranks.gpus);
    }
    add(out, std::move(r));
  }
}

CheckReport evaluate(const Budget& budget, const Measures& current, const Measures* baseline) {
  CheckReport report;
  report.input = current.input;
  report.budget = budget.path;
  if (baseline) report.baseline = baseline->input;
  step_checks(budget, current, report.results);
  gpu_checks(budget, current, report.results);
  memory_checks(budget, current, report.results);
  rank_checks(budget, current, report.results);
  kernel_checks(budget, current, report.results);
  finding_checks(budget, current, report.results);
  baseline_checks(budget, current, baseline, report.results);
  return report;
}

}  // namespace tracedoc::budget
