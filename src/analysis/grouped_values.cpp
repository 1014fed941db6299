#include "analysis/grouped_values.h"

#include <algorithm>
#include <memory>

#include "common/task_pool.h"

namespace tracedoc {

std::vector<SummaryStats> GroupedValues::summarize_all() {
  const size_t n = ids_.size();
  // The rows in slices, bucketed at once on the task pool: a stable counting sort in which slice
  // s's rows of a group follow those of the slices before it. Each slice counts every group, so
  // there are slices only while the groups are few next to the rows (a group per row is one slice).
  const RowSlices slices(group_.size(), size_t{1} << 16,
                         std::min(4 * static_cast<size_t>(thread_count()), group_.size() / (4 * (n + 1))));
  // counts[s * n + g]: the rows of group g in slice s, then where the first of them goes.
  std::vector<size_t> counts(slices.count * n, 0);
  parallel_for(slices.count, [&](size_t s) {
    size_t* mine = counts.data() + s * n;
    for (size_t i = slices.begin(s); i < slices.end(s); ++i) {
      if (group_[i] != kLeftOut) ++mine[group_[i]];
    }
  });
  // offset[g]: the first row of group g in the buckets.
  std::vector<size_t> offset(n + 1, 0);
  size_t rows = 0;
  for (size_t g = 0; g < n; ++g) {
    offset[g] = rows;
    for (size_t s = 0; s < slices.count; ++s) {
      const size_t c = counts[s * n + g];
      counts[s * n + g] = rows;
      rows += c;
    }
  }
  offset[n] = rows;
  // Every bucket is written before it is read: no zeros first (new[], not a resized vector).
  std::unique_ptr<int64_t[]> bucketed(new int64_t[std::max<size_t>(rows, 1)]);
  advise_huge_pages(bucketed.get(), rows * sizeof(int64_t));
  parallel_for(slices.count, [&](size_t s) {
    size_t* cursor = counts.data() + s * n;
    for (size_t i = slices.begin(s); i < slices.end(s); ++i) {
      const uint32_t g = group_[i];
      if (g != kLeftOut) bucketed[cursor[g]++] = durations_ ? durations_.of(i) : value_[i];
    }
  });
  std::vector<SummaryStats> stats(n);
  auto summarize_groups = [&](size_t from, size_t to) {
    for (size_t g = from; g < to; ++g) {
      stats[g] = summarize(std::span<int64_t>(bucketed.get() + offset[g], offset[g + 1] - offset[g]));
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
