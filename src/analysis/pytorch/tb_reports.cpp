#include "analysis/checked_math.h"
#include "analysis/pytorch/tb_reports.h"

#include <cmath>

#include "analysis/pytorch/tb_overview.h"
#include "analysis/statistics.h"

namespace tracedoc::pytorch {

namespace {

Result<TbOverview> overview(const Trace& trace, const ReportArgs& args) {
  auto result = tb_overview(trace, args.has("plugin") ? TbOptions::plugin() : TbOptions{});
  if (!result.ok() && result.status().code() == ErrorCode::kNoData) return no_data(trace, result.status().message());
  return result;
}

Cell rank_cell(int64_t rank) { return rank < 0 ? Cell::null() : Cell::integer(rank); }

// A share in percent, rounded as the plugin prints it; NULL for an empty whole.
Cell percent(double part, double whole) {
  return whole > 0 ? Cell::real(sqlite_round(part * 100.0 / whole, 2)) : Cell::null();
}
Cell percent(double fraction) {
  return std::isnan(fraction) ? Cell::null() : Cell::real(sqlite_round(fraction * 100.0, 2));
}

}  // namespace

Status tb_step_breakdown(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_ASSIGN_OR_RETURN(auto result, overview(trace, args));

  std::vector<ColumnSpec> columns = {
      {"Rank", Unit::kNone}, {"Step", Unit::kNone}, {"Start", Unit::kTsNs}, {"Duration", Unit::kDurNs}};
  for (int r = 0; r < kTbRoles; ++r) columns.push_back({tb_role_name(static_cast<TbRole>(r)), Unit::kDurNs});
  for (int r = 0; r < kTbRoles; ++r) columns.push_back({tb_role_name(static_cast<TbRole>(r)), Unit::kRatioPct});
  columns.push_back({"GPU Ops", Unit::kNone});
  columns.push_back({"Name", Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const TbUnit& u : result.units) {
    double sum_duration = 0, sum_role[kTbRoles] = {};
    for (const TbStep& s : u.steps) {
      row.clear();
      row.push_back(rank_cell(u.rank));
      row.push_back(s.number == kNoValue ? Cell::null() : Cell::integer(s.number));
      row.push_back(Cell::integer(s.start));
      row.push_back(Cell::integer(s.duration()));
      for (int r = 0; r < kTbRoles; ++r) row.push_back(Cell::integer(s.role[r]));
      for (int r = 0; r < kTbRoles; ++r)
        row.push_back(percent(static_cast<double>(s.role[r]), static_cast<double>(s.duration())));
      row.push_back(Cell::integer(s.gpu_ops));
      row.push_back(s.name == kNoStr ? Cell::text("(whole trace)") : Cell::pooled(trace.str(s.name)));
      sink.row(row);
      sum_duration += static_cast<double>(s.duration());
      for (int r = 0; r < kTbRoles; ++r) sum_role[r] += static_cast<double>(s.role[r]);
    }
    // The plugin's Average Step Time: each column's mean over the steps, shares of the mean step.
    const double n = static_cast<double>(u.steps.size());
    row.clear();
    row.push_back(rank_cell(u.rank));
    row.push_back(Cell::null());
    row.push_back(Cell::null());
    row.push_back(Cell::real(sum_duration / n));
    for (int r = 0; r < kTbRoles; ++r) row.push_back(Cell::real(sum_role[r] / n));
    for (int r = 0; r < kTbRoles; ++r) row.push_back(percent(sum_role[r], sum_duration));
    row.push_back(Cell::null());
    row.push_back(Cell::text("Average"));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status tb_gpu_metrics(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_ASSIGN_OR_RETURN(auto result, overview(trace, args));
  if (result.gpus.empty()) return no_data(trace, "does not contain kernels inside the steps of a process.");

  sink.begin({{"Rank", Unit::kNone},
              {"Device", Unit::kNone},
              {"GPU Utilization", Unit::kRatioPct},
              {"Est. SM Efficiency", Unit::kRatioPct},
              {"Est. Achieved Occupancy", Unit::kRatioPct},
              {"Kernel Time using Tensor Cores", Unit::kRatioPct},
              {"Window Start", Unit::kTsNs},
              {"Window", Unit::kDurNs},
              {"Kernel Busy", Unit::kDurNs},
              {"Kernels", Unit::kNone},
              {"Kernel Time", Unit::kDurNs},
              {"Tensor Core Time", Unit::kDurNs},
              {"Name", Unit::kNone}});
  std::vector<Cell> row;
  for (const TbGpuMetrics& g : result.gpus) {
    row.clear();
    row.push_back(rank_cell(g.rank));
    row.push_back(Cell::integer(g.device));
    row.push_back(percent(g.utilization));
    row.push_back(percent(g.sm_efficiency));
    // Kineto's occupancy is already a percentage.
    row.push_back(std::isnan(g.occupancy) ? Cell::null() : Cell::real(sqlite_round(g.occupancy, 2)));
    row.push_back(percent(g.tensor_cores));
    row.push_back(Cell::integer(g.window_start));
    row.push_back(Cell::integer(sat_sub(g.window_end, g.window_start)));
    row.push_back(Cell::integer(g.busy));
    row.push_back(Cell::integer(g.kernels));
    row.push_back(Cell::integer(g.kernel_time));
    row.push_back(Cell::integer(g.tensor_core_time));
    Cell name = Cell::null();
    for (const DeviceInfo& d : trace.devices) {
      if (d.id == g.device && d.name != kNoStr) name = Cell::pooled(trace.str(d.name));
    }
    row.push_back(name);
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
