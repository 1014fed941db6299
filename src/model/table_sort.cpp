#include "model/table_sort.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "common/task_pool.h"

namespace tracedoc {

// The stable order of rows by start time. Tables are mostly made of long sorted runs (a file's events
// come in time order per thread; a merged rank directory is one sorted run per rank), so sorted runs
// are merged pairwise (n log runs); std::merge takes ties from the left run, which gives exactly
// the order std::stable_sort gives, and that one is used when runs are short.
std::vector<uint32_t> stable_time_order(const std::vector<TimeNs>& start) {
  const size_t n = start.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::vector<size_t> bounds = {0};
  for (size_t i = 1; i < n; ++i)
    if (start[i] < start[i - 1]) bounds.push_back(i);
  bounds.push_back(n);
  const auto earlier = [&](uint32_t a, uint32_t b) { return start[a] < start[b]; };
  if ((bounds.size() - 1) * 16 > n) {
    std::stable_sort(order.begin(), order.end(), earlier);
    return order;
  }
  std::vector<uint32_t> merged(n);
  while (bounds.size() > 2) {
    std::vector<size_t> next = {0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t lo = bounds[r], mid = bounds[r + 1], hi = r + 2 < bounds.size() ? bounds[r + 2] : mid;
      std::merge(order.begin() + lo, order.begin() + mid, order.begin() + mid, order.begin() + hi, merged.begin() + lo,
                 earlier);
      next.push_back(hi);
    }
    order.swap(merged);
    bounds.swap(next);
  }
  return order;
}

void sort_by_time(Trace& t_) {
  // Stable time order, as the nsys tables come, for every table declared kByTime; collectives
  // follow their kernels. The tables are independent: first every table's order, then every
  // column's reordering (one job per column), each on any thread.
  struct TableSort {
    const std::vector<TimeNs>* key;
    std::vector<uint32_t> order;
  };
  std::vector<TableSort> tables;
  for_each_table(t_, [&](const TableInfo& info, auto& table) {
    if (info.order == TableOrder::kByTime) tables.push_back({first_time_column(table), {}});
  });
  parallel_for(tables.size(), [&](size_t i) { tables[i].order = stable_time_order(*tables[i].key); });

  std::vector<std::function<void()>> jobs;
  size_t sorted = 0;
  for_each_table(t_, [&](const TableInfo& info, auto& table) {
    if (info.order != TableOrder::kByTime) return;
    const std::vector<uint32_t>& order = tables[sorted++].order;
    for_each_column(
        table, [&](const auto&, auto& values) { jobs.push_back([&values, &order] { gather_values(values, order); }); });
  });
  parallel_for(jobs.size(), [&](size_t i) { jobs[i](); });

  const auto kernels =
      std::find_if(tables.begin(), tables.end(), [&](const TableSort& t) { return t.key == &t_.kernels.start; });
  const std::vector<uint32_t>& kernel_order = kernels->order;
  std::vector<uint32_t> new_row(kernel_order.size());
  for (uint32_t i = 0; i < kernel_order.size(); ++i) new_row[kernel_order[i]] = i;
  for_each_table(t_, [&](const TableInfo&, auto& table) { renumber_kernel_rows(table, new_row); });
  std::iota(t_.ranges.row_id.begin(), t_.ranges.row_id.end(), int64_t{1});  // row numbers in the new order
}

}  // namespace tracedoc
