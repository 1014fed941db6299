// Runs the diagnosis rules over a trace and orders what they find.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analysis/steps.h"
#include "common/status.h"
#include "diagnose/context.h"
#include "diagnose/finding.h"
#include "model/trace.h"

namespace tracedoc::diagnose {

struct RuleSettings {
  bool enabled = true;
  std::map<std::string, double> params;  // overrides of the rule's defaults
};

struct DiagnoseOptions {
  std::vector<std::string> rules;                // empty: every enabled rule
  std::map<std::string, RuleSettings> settings;  // by rule id
  StepOptions steps;
  // Time findings saving less than this share of the time basis, or less than this many ns, are
  // left out: too small to act on (and on toy traces, noise).
  double min_savings_share = 0.005;
  int64_t min_savings_ns = 10000;
};

// Checks rule ids and parameter names against the registry.
Status check_options(const DiagnoseOptions& options);

// Reads a TOML configuration into `options` (on top of what it holds):
//   [rules.<id>]
//   enabled = false
//   <param> = <number>
//   [steps]
//   marker = "NAME"
//   [diagnose]
//   min_savings_share = 0.005
//   min_savings_ns = 10000
// Unknown sections, rule ids, parameters and wrong types are errors naming the file and the key.
Status load_config(const std::string& path, DiagnoseOptions& options);

// How the Nsight Compute launches given with --ncu matched the timeline's kernels (the rules
// uncoalesced_access ... compute_bound read only matched kernels, and those of their identity).
struct NcuCoverage {
  size_t reports = 0, launches = 0, matched = 0;
  std::vector<std::string> unmatched;  // "REPORT launch N: KERNEL", in report order
};

struct Diagnosis {
  std::string input;
  int64_t basis_ns = 0;  // the time basis of the shares (context.h)
  std::string basis;     // "steps" or "span"
  int64_t steps = 0;
  std::vector<std::string> rules_run;
  std::vector<Finding> findings;  // by estimated savings, then severity, then rule id
  NcuCoverage ncu;                // reports == 0: none given (or the input is a report read alone)
};

Diagnosis diagnose(const Trace& trace, const DiagnoseOptions& options);

// The same on analyses a caller has already computed (`ctx` must have been made with options.steps).
Diagnosis diagnose(Context& ctx, const DiagnoseOptions& options);

}  // namespace tracedoc::diagnose
