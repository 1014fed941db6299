#include "analysis/report_runs.h"

#include <fmt/format.h>

#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "analysis/report_registry.h"
#include "common/task_pool.h"

namespace tracedoc {

namespace {

// `report:arg:arg`, split at single colons: "::" stays in its argument (`during=aten::conv2d`,
// `marker=Trainer::step`), since no argument is empty.
std::vector<std::string> split_report_spec(const std::string& item) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < item.size(); ++i) {
    if (item[i] != ':') {
      parts.back() += item[i];
    } else if (i + 1 < item.size() && item[i + 1] == ':') {
      parts.back() += "::";
      ++i;
    } else {
      parts.emplace_back();
    }
  }
  return parts;
}

}  // namespace

Result<std::vector<ReportRequest>> report_requests(const std::vector<std::string>& items,
                                                   const std::optional<NamePattern>& name_filter) {
  std::vector<ReportRequest> requests;
  for (const std::string& item : items) {
    const std::vector<std::string> parts = split_report_spec(item);
    const ReportDef* def = find_report(parts[0]);
    if (!def) return UsageError(fmt::format("unknown report '{}' (see `tracedoc stats --help-reports`)", parts[0]));
    ReportRequest request{def, {}};
    request.args.args.assign(parts.begin() + 1, parts.end());
    request.args.name_filter = name_filter;
    requests.push_back(std::move(request));
  }
  return requests;
}

uint32_t tables_read(const std::vector<ReportRequest>& requests) {
  uint32_t tables = 0;
  for (const ReportRequest& r : requests) tables |= r.def->tables | nsys_stats::kernel_name_tables(r.args);
  return tables;
}

ColumnSelection columns_read(const std::vector<ReportRequest>& requests) {
  ColumnSelection columns = ColumnSelection::time_only();
  for (const ReportRequest& r : requests) {
    if (!r.def->columns) return ColumnSelection{};  // a report that reads every column
    columns |= r.def->columns(r.args);
  }
  return columns;
}

struct ReportRuns::Kept {
  Status status;
  TableSink table;
};

ReportRuns::ReportRuns(const Trace& trace, const std::vector<ReportRequest>& requests)
    : trace_(trace), requests_(requests), kept_(requests.size()) {
  std::vector<size_t> summaries;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].def->kind == ReportKind::kSummary) summaries.push_back(i);
  }
  if (summaries.size() < 2) return;
  for (size_t i : summaries) kept_[i] = std::make_unique<Kept>();
  parallel_for(summaries.size(), [&](size_t j) {
    const size_t i = summaries[j];
    kept_[i]->status = requests[i].def->run(trace, requests[i].args, kept_[i]->table);
  });
}

ReportRuns::~ReportRuns() = default;

Status ReportRuns::produce(size_t i, RowSink& sink) const {
  const Kept* kept = kept_[i].get();
  if (!kept) return requests_[i].def->run(trace_, requests_[i].args, sink);
  if (!kept->status.ok()) return kept->status;
  sink.begin(kept->table.columns());
  for (size_t r = 0; r < kept->table.row_count(); ++r) sink.row(kept->table.row_at(r));
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
