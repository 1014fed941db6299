// Holds the figures of a trace (measures.h) against a budget (budget.h): one result per limit and
// per thing it applies to (each GPU, each memory series, each forbidden rule). A figure that cannot
// be measured (steps asked of a trace without steps, memory of a trace without memory events) is a
// failure: a CI gate must not pass because its input lost the data it checks.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "budget/budget.h"
#include "budget/measures.h"
#include "model/trace.h"

namespace tracedoc::budget {

struct CheckResult {
  std::string check;    // the budget key: "steps.p50_max_ms", "kernel[0].total_max_ms", "findings.forbid"
  std::string scope;    // what was measured: "steps", a GPU, "kernels /sgemm/", a rule id, "trace"
  bool at_most = true;  // the limit is a maximum (else a minimum)
  double limit = 0;
  double actual = std::numeric_limits<double>::quiet_NaN();  // in `unit`; NaN: not measurable
  std::string unit;                                          // "ms", "us", "%", "pp" (percentage points), "GB", "count"
  // The exact integer behind `actual` and the basis of a share, in `figure_unit` ("ns", "bytes",
  // "count"); kNoValue where there is none.
  int64_t figure = kNoValue, basis = kNoValue;
  std::string figure_unit;
  bool pass = false;
  std::string detail;  // how it was measured, in words
};

struct CheckReport {
  std::string input, budget, baseline;  // baseline: empty when none was compared
  std::vector<CheckResult> results;     // in the budget's section order
  size_t failed() const;
};

// `baseline`: the baseline trace's measures, or nullptr (then [baseline] limits are not checked;
// the caller makes sure a budget that sets them comes with a baseline).
CheckReport evaluate(const Budget& budget, const Measures& current, const Measures* baseline);

}  // namespace tracedoc::budget
