// Reads Nsight Compute's CSV exports (`ncu --csv --page details`, `--page raw`, `--metrics ...`)
// into the same model as reports (model/ncu_report.h), so `tracedoc ncu` answers from either.
//
// The long form ncu prints (one row per launch and metric: "ID", "Kernel Name", "Block Size",
// "Grid Size", "Section Name", "Metric Name", "Metric Unit", "Metric Value", then the rule columns
// "Rule Name", "Rule Type", "Rule Description") and the wide form (one row per launch, a column
// per metric, a row of units under the header) are both read. `==PROF==` lines and anything before
// the header are skipped. Values: thousands separators ("13,485") removed, "n/a" read as absent,
// auto-scaled units ("us", "Mbyte", "Gbyte/s") brought to ncu's base units (ns, bytes) for the metric
// names the answers read; the printed unit is kept. The details page names metrics by their
// display names ("Achieved Occupancy"): those the answers need are also stored under the metric's
// name (docs/ncu.md lists them). A file without the columns it needs is refused naming them.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "model/ncu_report.h"

namespace tracedoc {

// Whether the text starts as an ncu CSV export does (after `==PROF==` lines: a header with "ID").
bool looks_like_ncu_csv(std::string_view text);

Result<NcuReport> read_ncu_csv_text(std::string_view text, const std::string& name);

// A report or a CSV export, told apart by content.
Result<NcuReport> read_ncu_input(const std::string& path);

}  // namespace tracedoc
