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
#include "model/ncu_report.h"

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

}  // namespace tracedoc
