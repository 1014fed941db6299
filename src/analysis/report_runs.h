// Reports asked for by name ("cuda_gpu_kern_sum:base", `tracedoc stats -r`), and how a list of them
// runs: the summaries side by side on the task pool, each kept as a table; the trace reports (one
// row per event, possibly millions) later, one at a time, streaming to their writer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "common/name_pattern.h"

namespace tracedoc {

struct ReportRequest {
  const ReportDef* def = nullptr;
  ReportArgs args;
};

// One request per "name[:arg...]" item, each with the --filter-name pattern; an unknown report name
// is a usage error.
Result<std::vector<ReportRequest>> report_requests(const std::vector<std::string>& items,
                                                   const std::optional<NamePattern>& name_filter);

// The tables (model/table_set.h bits) the requests read, arguments included (`:nvtx-name` also
// reads NVTX ranges and API calls).
uint32_t tables_read(const std::vector<ReportRequest>& requests);
// The columns of the large tables they read (ReportDef::columns): all of them as soon as one
// report does not say.
ColumnSelection columns_read(const std::vector<ReportRequest>& requests);

class ReportRuns {
 public:
  // Computes the summary reports now, on the task pool, when there are two or more; a single one
  // streams like a trace report.
  ReportRuns(const Trace& trace, const std::vector<ReportRequest>& requests);
  ~ReportRuns();
  // Report i's rows into `sink`: the kept table, or the report run now.
  Status produce(size_t i, RowSink& sink) const;

 private:
  struct Kept;
  const Trace& trace_;
  const std::vector<ReportRequest>& requests_;
  std::vector<std::unique_ptr<Kept>> kept_;  // null for the reports that stream
};

}  // namespace tracedoc
