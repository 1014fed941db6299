// `tracedoc ncu`'s tables, as report rows (analysis/result.h), so that every output format of the
// reports (column, csv, json ...) prints them:
//   ncu_kernels  one row per profiled launch with the answers of analysis/ncu_answers.h;
//   ncu_rules    ncu's own rule messages per launch (stored by ncu at collection time);
//   ncu_metrics  metrics as ncu stored them, value kind and all (--metrics NAMES or --all).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/result.h"
#include "common/name_pattern.h"
#include "common/status.h"
#include "analysis/report.h"
#include "model/ncu_report.h"
#include "model/trace.h"

namespace tracedoc {

struct NcuRowOptions {
  std::optional<NamePattern> kernel;  // launches whose name this finds; all when unset
  std::vector<std::string> metrics;   // ncu_metrics: these names (exact); empty with all_metrics
  bool all_metrics = false;
};

Status ncu_kernel_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink);
Status ncu_rule_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink);
// Names asked for that no launch has are a usage error, before any row.
Status ncu_metric_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink);

// `tracedoc stats -r ncu_kern_sum --ncu REPORT TRACE`: cuda_gpu_kern_sum's rows (the timeline's
// kernels by name) with the answers of the ncu launch matched to the kernel's first matched instance
// beside them (one ncu launch stands for every instance of its kernel), then a row per ncu launch
// that matched no kernel (timeline columns empty). NoData without --ncu.
Status ncu_kern_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
