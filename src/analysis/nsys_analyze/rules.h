// The `nsys analyze` expert-system rules: each finds one kind of problem in a trace and emits the
// offending rows (the CSV nsys writes), together with the advice printed above them.
//
// Rules read the same Trace as the stats reports, so they work on nsys exports and PyTorch
// profiler traces alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/result.h"
#include "common/status.h"
#include "model/trace.h"

namespace tracedoc::nsys_analyze {

// Rule options, as `nsys analyze -r rule:key=value:...` takes them. Unused ones are ignored by
// a rule, as nsys ignores them.
struct RuleArgs {
  int64_t rows = 50;       // most rows shown; <= 0: all
  int64_t gap_ms = 500;    // gpu_gaps: shortest gap reported, exclusive
  int64_t threshold = 50;  // gpu_time_util: report chunks used less than this percentage
  int64_t chunks = 30;     // gpu_time_util: chunks per device (1..1000)
  int64_t process = -1;    // cuda_api_sync: only this PID (nsys 2023.4 documents but ignores it)
  int64_t thread = -1;     // cuda_api_sync: only this TID (idem)
  // start=/end=/nvtx=: restrict the rule to a time window or an NVTX range, like --filter-*.
  std::string start, end, nvtx;
  std::vector<std::string> raw;  // the arguments as given, for output file names

  bool limited(size_t shown) const { return rows > 0 && shown >= static_cast<size_t>(rows); }
};

Result<RuleArgs> parse_rule_args(std::string_view rule, const std::vector<std::string>& args);

// A rule's own start=/end=/nvtx= options as the --filter-time / --filter-nvtx of the trace it reads
// (read again, so that the trace the other rules share stays whole); explicit times override the
// NVTX range, as in nsys. Both empty when the rule has none.
struct RuleInputFilter {
  std::string time, nvtx;
  bool any() const { return !time.empty() || !nvtx.empty(); }
};
RuleInputFilter rule_input_filter(const RuleArgs& args);

using RuleFn = Status (*)(const Trace&, const RuleArgs&, RowSink&);

struct RuleDef {
  const char* name;
  const char* old_name;  // the 2022 name nsys still accepts (cuda-async-memcpy, gpu-starv, ...)
  const char* display_name;
  uint32_t tables;  // NsysTables bits the rule reads
  RuleFn run;
  // Printed above the rows in column/table output ("what is wrong, what to do").
  std::string (*advice)(const RuleArgs&);
  // Printed instead when the rule found nothing.
  std::string (*no_problem)(const RuleArgs&);
};

const std::vector<RuleDef>& all_rules();
const RuleDef* find_rule(std::string_view name);  // by name or old name
// The rules `nsys analyze` runs without -r (those tracedoc implements).
std::vector<std::string> default_rules();

// The rules, in copy_rules.cpp and gpu_idle_rules.cpp.
Status cuda_memcpy_async(const Trace& trace, const RuleArgs& args, RowSink& sink);
Status cuda_memcpy_sync(const Trace& trace, const RuleArgs& args, RowSink& sink);
Status cuda_memset_sync(const Trace& trace, const RuleArgs& args, RowSink& sink);
Status cuda_api_sync(const Trace& trace, const RuleArgs& args, RowSink& sink);
Status gpu_gaps(const Trace& trace, const RuleArgs& args, RowSink& sink);
Status gpu_time_util(const Trace& trace, const RuleArgs& args, RowSink& sink);

// SQL `LIKE` as nsys's queries use it: `%` any run, `_` one character, ASCII case-insensitive.
bool sql_like(std::string_view text, std::string_view pattern);

}  // namespace tracedoc::nsys_analyze
