#include "analysis/ncu_reports.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/ncu_answers.h"
#include "analysis/ncu_join.h"
#include "analysis/nsys_stats/summary_reports.h"

namespace tracedoc {

namespace {

Cell number(double v) { return std::isnan(v) ? Cell::null() : Cell::real(v); }
Cell rounded(double v, int digits) {
  if (std::isnan(v)) return Cell::null();
  const double scale = std::pow(10.0, digits);
  return Cell::real(std::round(v * scale) / scale);
}
std::string xyz(const std::array<uint64_t, 3>& v) { return fmt::format("{}x{}x{}", v[0], v[1], v[2]); }

// A launch's row number (its place in the report, as ncu numbers its results) and whether it is kept.
template <typename Each>
void each_launch(const NcuReport& report, const NcuRowOptions& options, Each&& each) {
  for (size_t i = 0; i < report.results.size(); ++i) {
    const NcuResult& r = report.results[i];
    if (options.kernel && !options.kernel->found_in(r.name())) continue;
    each(static_cast<int64_t>(i), r);
  }
}

// "barrier 4.08/issue 13.5%": warps stalled for the reason per issued instruction, and the share of
// the PC samples that found a warp stalled so (either alone where only one was collected).
std::string stall_text(const NcuAnswers& a, size_t k) {
  if (k >= a.stalls.size()) return {};
  const NcuStall& s = a.stalls[k];
  std::string out = s.reason;
  if (!std::isnan(s.per_issue)) out += fmt::format(" {:.2f}/issue", s.per_issue);
  if (!std::isnan(s.sample_pct)) out += fmt::format(" {:.1f}%", s.sample_pct);
  return out;
}

// An integer column's cell: null where the value is absent or does not fit.
Cell integer_cell(double x) {
  const auto v = rounded_int64(x);
  return v ? Cell::integer(*v) : Cell::null();
}

Cell duration_cell(const NcuAnswers& a) { return integer_cell(a.duration_ns); }

Cell value_cell(const NcuValue& v) {
  switch (v.kind) {
    case NcuValue::Kind::kString: return Cell::pooled(v.text);
    case NcuValue::Kind::kFloat:
    case NcuValue::Kind::kDouble: return Cell::real(v.real);
    case NcuValue::Kind::kUint32:
    case NcuValue::Kind::kUint64:
      return v.integer > static_cast<uint64_t>(INT64_MAX) ? Cell::real(static_cast<double>(v.integer))
                                                          : Cell::integer(static_cast<int64_t>(v.integer));
    case NcuValue::Kind::kNone: break;
  }
  return Cell::null();
}

// The answer columns ncu_kern_sum puts beside the timeline's (ncu_kernel_rows has them all).
const std::vector<ColumnSpec>& joined_columns() {
  static const std::vector<ColumnSpec> columns = {{"ncu Report"},
                                                  {"ncu Launch"},
                                                  {"ncu Duration", Unit::kDurNs},
                                                  {"Achieved Occupancy", Unit::kRatioPct},
                                                  {"Occupancy Limiter"},
                                                  {"Load Sectors/Request"},
                                                  {"Excessive Sectors", Unit::kRatioPct},
                                                  {"Shared Load Conflicts", Unit::kRatioPct},
                                                  {"Stall 1"},
                                                  {"Stall 2"},
                                                  {"Bound"}};
  return columns;
}

// The cells of joined_columns for one launch; `keep` holds the texts the cells point into.
void joined_cells(const NcuReport& report, size_t report_index, size_t result, std::vector<std::string>& keep,
                  std::vector<Cell>& row) {
  const NcuAnswers a = ncu_answers(report, report.results[result]);
  keep = {occupancy_limiter_text(a), stall_text(a, 0), stall_text(a, 1), a.bound};
  row.insert(row.end(),
             {Cell::integer(static_cast<int64_t>(report_index)), Cell::integer(static_cast<int64_t>(result)),
              duration_cell(a), rounded(a.achieved_occupancy_pct, 2), Cell::text(keep[0]),
              rounded(a.load_sectors_per_request, 2), rounded(a.excessive_sectors_pct, 1),
              rounded(a.shared_load_conflict_pct, 2), Cell::text(keep[1]), Cell::text(keep[2]), Cell::text(keep[3])});
}

}  // namespace

Status ncu_kern_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  if (trace.ncu_reports.empty()) return no_data(trace, "was given no Nsight Compute report (--ncu REPORT).");
  TableSink kernels;
  TRACEDOC_RETURN_IF_ERROR(nsys_stats::cuda_gpu_kern_sum(trace, args, kernels));
  const NcuJoin join = join_ncu(trace);
  // Each kernel name's first matched launch, by the first instance (in row order) that matched.
  const std::map<std::string_view, NcuLaunchRef> by_name = launch_by_name(trace, join.launch_of);
  std::vector<ColumnSpec> columns = kernels.columns();
  const size_t name_column = columns.size() - 1;  // cuda_gpu_kern_sum ends with Name
  columns.insert(columns.end(), joined_columns().begin(), joined_columns().end());
  sink.begin(columns);
  std::vector<Cell> row;
  std::vector<std::string> keep;
  for (size_t r = 0; r < kernels.row_count(); ++r) {
    const std::span<const Cell> cells = kernels.row_at(r);
    row.assign(cells.begin(), cells.end());
    const auto it = by_name.find(cells[name_column].s);
    if (it == by_name.end()) {
      row.resize(columns.size(), Cell::null());
    } else {
      const auto rep = static_cast<size_t>(it->second.report);
      joined_cells(*trace.ncu_reports[rep], rep, static_cast<size_t>(it->second.result), keep, row);
    }
    sink.row(row);
  }
  // Launches that matched no kernel of the timeline: listed, not dropped.
  for (size_t rep = 0; rep < join.kernel_of.size(); ++rep) {
    const NcuReport& report = *trace.ncu_reports[rep];
    for (size_t i = 0; i < join.kernel_of[rep].size(); ++i) {
      if (join.kernel_of[rep][i] >= 0) continue;
      row.assign(name_column, Cell::null());
      row.push_back(Cell::pooled(report.results[i].name()));
      joined_cells(report, rep, i, keep, row);
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

Status ncu_kernel_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink) {
  sink.begin({{"Launch"},
              {"Kernel"},
              {"Grid"},
              {"Block"},
              {"Registers"},
              {"Shared Mem/Block (B)"},
              {"Duration", Unit::kDurNs},
              {"Achieved Occupancy", Unit::kRatioPct},
              {"Theoretical Occupancy", Unit::kRatioPct},
              {"Occupancy Limiter"},
              {"Load Sectors/Request"},
              {"Store Sectors/Request"},
              {"Excessive Sectors", Unit::kRatioPct},
              {"Shared Load Conflicts", Unit::kRatioPct},
              {"Shared Store Conflicts", Unit::kRatioPct},
              {"Stall 1"},
              {"Stall 2"},
              {"Stall 3"},
              {"SM Throughput", Unit::kRatioPct},
              {"Memory Throughput", Unit::kRatioPct},
              {"DRAM Bytes"},
              {"FLOP/s"},
              {"FLOP/Byte"},
              {"Bound"},
              {"ncu Rules"}});
  std::vector<Cell> row;
  each_launch(report, options, [&](int64_t index, const NcuResult& r) {
    const NcuAnswers a = ncu_answers(report, r);
    const std::string limiters = occupancy_limiter_text(a);
    std::string rules;
    // The rules that had something to say: a warning, an error or an optimization.
    for (const NcuRuleResult& rule : r.rules) {
      for (const NcuRuleMessage& m : rule.messages) {
        if (m.type < 2) continue;
        rules += (rules.empty() ? "" : " ") + rule.identifier;
        break;
      }
    }
    const std::string grid = xyz(r.grid), block = xyz(r.block);
    const std::string s1 = stall_text(a, 0), s2 = stall_text(a, 1), s3 = stall_text(a, 2);
    row = {Cell::integer(index),
           Cell::pooled(r.name()),
           Cell::text(grid),
           Cell::text(block),
           Cell::integer(a.registers_per_thread),
           Cell::integer(a.shared_mem_per_block),
           duration_cell(a),
           rounded(a.achieved_occupancy_pct, 2),
           rounded(a.theoretical_occupancy_pct, 2),
           Cell::text(limiters),
           rounded(a.load_sectors_per_request, 2),
           rounded(a.store_sectors_per_request, 2),
           rounded(a.excessive_sectors_pct, 1),
           rounded(a.shared_load_conflict_pct, 2),
           rounded(a.shared_store_conflict_pct, 2),
           Cell::text(s1),
           Cell::text(s2),
           Cell::text(s3),
           rounded(a.sm_throughput_pct, 2),
           rounded(a.memory_throughput_pct, 2),
           integer_cell(a.dram_bytes),
           number(a.flop_per_s),
           rounded(a.arithmetic_intensity, 3),
           Cell::text(a.bound),
           Cell::text(rules)};
    sink.row(row);
  });
  sink.end();
  return Status::Ok();
}

Status ncu_rule_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink) {
  sink.begin({{"Launch"}, {"Kernel"}, {"Rule"}, {"Section"}, {"Type"}, {"Message"}});
  std::vector<Cell> row;
  each_launch(report, options, [&](int64_t index, const NcuResult& r) {
    for (const NcuRuleResult& rule : r.rules) {
      for (const NcuRuleMessage& m : rule.messages) {
        row = {Cell::integer(index),
               Cell::pooled(r.name()),
               Cell::pooled(rule.identifier),
               Cell::pooled(rule.section),
               Cell::text(NcuRuleMessage::type_name(m.type)),
               Cell::pooled(m.text)};
        sink.row(row);
      }
    }
  });
  sink.end();
  return Status::Ok();
}

Status ncu_metric_rows(const NcuReport& report, const NcuRowOptions& options, RowSink& sink) {
  for (const std::string& name : options.metrics) {
    if (!report.name_index.contains(name))
      return UsageError(fmt::format("{}: no launch has a metric named {}", report.path, name));
  }
  sink.begin({{"Launch"}, {"Kernel"}, {"Metric"}, {"Kind"}, {"Value"}, {"Instances"}});
  std::vector<Cell> row;
  auto emit = [&](int64_t index, const NcuResult& r, const NcuMetric& m) {
    row = {Cell::integer(index),
           Cell::pooled(r.name()),
           Cell::pooled(report.metric_names[m.name]),
           Cell::text(NcuValue::kind_name(m.value.kind)),
           value_cell(m.value),
           Cell::integer(static_cast<int64_t>(m.instances.size()))};
    sink.row(row);
  };
  each_launch(report, options, [&](int64_t index, const NcuResult& r) {
    if (options.all_metrics) {
      for (const NcuMetric& m : r.metrics) emit(index, r, m);
      return;
    }
    for (const std::string& name : options.metrics) {
      if (const NcuMetric* m = report.metric(r, name)) emit(index, r, *m);
    }
  });
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
