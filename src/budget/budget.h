// A performance budget for CI (`tracedoc check`): limits on the figures of a trace — step time,
// GPU busy share, copy share, memory peak, kernel time by name, forbidden diagnosis findings, and
// regressions against a baseline trace. docs/check.md documents the format:
//
//   [steps]     p50_max_ms, p95_max_ms, marker
//   [gpu]       busy_min_pct, idle_max_pct
//   [copies]    share_max_pct
//   [memory]    peak_max_gb
//   [ranks]     compute_imbalance_max, skew_p50_max_ms
//   [[kernel]]  name (regex), total_max_ms, share_max_pct, count_max, avg_max_us
//   [findings]  forbid = [rule ids], min_severity, config
//   [baseline]  path, step_p50_regression_max_pct, step_p95_regression_max_pct, busy_drop_max_pct
//
// Every key is optional. A key the format does not have, a value of the wrong type or range, an
// unknown rule id or a bad regular expression is an error naming the file and the key: a typo in a
// CI budget must not turn a check off silently.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/name_pattern.h"
#include "diagnose/engine.h"
#include "diagnose/finding.h"

namespace tracedoc::budget {

// One [[kernel]] entry: limits on the kernels whose (demangled) name the regex finds.
struct KernelBudget {
  std::string name;                    // the regular expression as written (RE2, searched, not fully matched)
  std::optional<NamePattern> pattern;  // set once `name` is read
  std::optional<double> total_max_ms, share_max_pct, count_max, avg_max_us;
};

struct Budget {
  std::string path;         // the budget file, as given (messages name it)
  std::string step_marker;  // [steps] marker: steps are the ranges of this name (as --step-marker)
  std::optional<double> step_p50_max_ms, step_p95_max_ms;
  std::optional<double> busy_min_pct, idle_max_pct;  // per GPU
  std::optional<double> copy_share_max_pct;          // per GPU
  std::optional<double> memory_peak_max_gb;          // per process and device, GB = 10^9 bytes
  // Across ranks (analysis/cross_rank.h): the longest-computing GPU over the median GPU, and the
  // median skew of the matched collectives.
  std::optional<double> compute_imbalance_max, skew_p50_max_ms;
  std::vector<KernelBudget> kernels;
  std::vector<std::string> forbid;  // rule ids (checked against the registry)
  diagnose::Severity forbid_min_severity = diagnose::Severity::kInfo;
  // The diagnosis settings: defaults, or [findings] config (a diagnose --config file).
  diagnose::DiagnoseOptions diagnose_options;
  // [baseline] path, resolved against the budget file's folder; empty when none.
  std::string baseline_path;
  std::optional<double> step_p50_regression_max_pct, step_p95_regression_max_pct, busy_drop_max_pct;

  // True when the budget sets no limit at all (nothing to check).
  bool empty() const;
  // True when a [baseline] limit is set (a baseline trace is needed).
  bool compares_baseline() const;
};

// Reads and validates a budget file. Relative paths inside it (findings.config, baseline.path) are
// resolved against the file's folder, so a budget works from any working directory.
Result<Budget> load_budget(const std::string& path);

// The baseline trace a check reads: `given` (the --baseline option, named `given_name` in
// messages) or else the budget's [baseline] path; empty when the budget sets no [baseline] limit.
// Decided before any trace is read, so that a budget that cannot be checked fails fast.
Result<std::string> baseline_trace_path(const Budget& budget, const std::string& given, std::string_view given_name);

}  // namespace tracedoc::budget
