#include "analysis/grouped_values.h"

namespace tracedoc {

std::vector<SummaryStats> GroupedValues::summarize_all() {
  const size_t n = ids_.size();
  std::vector<size_t> offset(n + 1, 0);
  for (uint32_t g : group_) ++offset[g + 1];
  for (size_t g = 0; g < n; ++g) offset[g + 1] += offset[g];
  std::vector<int64_t> bucketed;
  reserve_on_huge_pages(bucketed, value_.size());
  bucketed.resize(value_.size());
  std::vector<size_t> cursor(offset.begin(), offset.end() - 1);
  for (size_t i = 0; i < value_.size(); ++i) bucketed[cursor[group_[i]]++] = value_[i];
  std::vector<SummaryStats> stats(n);
  for (size_t g = 0; g < n; ++g) {
    stats[g] = summarize(std::span<int64_t>(bucketed.data() + offset[g], offset[g + 1] - offset[g]));
  }
  return stats;
}

}  // namespace tracedoc
