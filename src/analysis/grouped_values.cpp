#include "analysis/grouped_values.h"

#include <algorithm>

#include "common/task_pool.h"

namespace tracedoc {

std::vector<SummaryStats> GroupedValues::summarize_all() {
  const size_t n = ids_.size();
  // offset[g + 1]: the rows of group g; a left-out row counts in offset[0], which stays out.
  std::vector<size_t> offset(n + 1, 0);
  for (uint32_t g : group_) ++offset[g == kLeftOut ? 0 : g + 1];
  offset[0] = 0;
  for (size_t g = 0; g < n; ++g) offset[g + 1] += offset[g];
  const size_t rows = offset[n];
  std::vector<int64_t> bucketed;
  reserve_on_huge_pages(bucketed, rows);
  bucketed.resize(rows);
  std::vector<size_t> cursor(offset.begin(), offset.end() - 1);
  if (durations_) {
    for (size_t i = 0; i < group_.size(); ++i) {
      if (group_[i] != kLeftOut) bucketed[cursor[group_[i]]++] = durations_.of(i);
    }
  } else {
    for (size_t i = 0; i < group_.size(); ++i) bucketed[cursor[group_[i]]++] = value_[i];
  }
  std::vector<SummaryStats> stats(n);
  auto summarize_groups = [&](size_t from, size_t to) {
    for (size_t g = from; g < to; ++g) {
      stats[g] = summarize(std::span<int64_t>(bucketed.data() + offset[g], offset[g + 1] - offset[g]));
    }
  };
  // Groups are independent: many rows are summarized in parts on the task pool, each part about
  // the same number of rows (the result does not depend on the parts).
  constexpr size_t kRowsPerPart = size_t{1} << 16;
  const size_t parts = std::min<size_t>(rows / kRowsPerPart, 4 * static_cast<size_t>(thread_count()));
  if (parts < 2 || n < parts) {
    summarize_groups(0, n);
    return stats;
  }
  std::vector<size_t> first_group(parts + 1, n);
  first_group[0] = 0;
  for (size_t p = 1, g = 0; p < parts; ++p) {
    const size_t before = rows * p / parts;
    while (g < n && offset[g] < before) ++g;
    first_group[p] = g;
  }
  parallel_for(parts, [&](size_t p) { summarize_groups(first_group[p], first_group[p + 1]); });
  return stats;
}

}  // namespace tracedoc
