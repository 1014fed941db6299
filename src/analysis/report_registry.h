// Every report tracedoc runs (`tracedoc stats -r`, `--help-reports`), in one list: name, title,
// kind (summary or trace), the tables it reads and its function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/report.h"

namespace tracedoc {

const std::vector<ReportDef>& all_reports();
const ReportDef* find_report(std::string_view name);
// The set `nsys stats` runs when no -r is given (those tracedoc implements).
const std::vector<std::string>& default_reports();

}  // namespace tracedoc
