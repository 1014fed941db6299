#include "analysis/nsys_stats/time_summary.h"

namespace tracedoc::nsys_stats {

std::vector<ColumnSpec> time_summary_columns(const char* count_name) {
  return {{"Time", Unit::kRatioPct}, {"Total Time", Unit::kDurNs}, {count_name, Unit::kNone}, {"Avg", Unit::kDurNs},
          {"Med", Unit::kDurNs},     {"Min", Unit::kDurNs},        {"Max", Unit::kDurNs},     {"StdDev", Unit::kDurNs}};
}

void push_time_summary_cells(std::vector<Cell>& row, const SummaryStats& s, int64_t grand_total) {
  row.push_back(grand_total == 0 ? Cell::null()
                                 : Cell::real(sqlite_round(
                                       static_cast<double>(s.total) * 100.0 / static_cast<double>(grand_total), 1)));
  row.push_back(Cell::integer(s.total));
  row.push_back(Cell::integer(s.count));
  row.push_back(Cell::real(sqlite_round(s.avg, 1)));
  row.push_back(Cell::real(sqlite_round(s.median, 1)));
  row.push_back(Cell::integer(s.min));
  row.push_back(Cell::integer(s.max));
  row.push_back(Cell::real(sqlite_round(s.stdev, 1)));
}

}  // namespace tracedoc::nsys_stats
