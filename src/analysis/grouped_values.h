// One-pass grouping for summary reports: each row is tagged with a dense group id, values are then
// bucketed per group with a stable counting sort (so each group keeps row order, which the sample
// standard deviation depends on), and the nsys statistics are computed per bucket.
// No per-group allocations: millions of distinct NVTX ranges group as fast as a few kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/statistics.h"
#include "common/flat_hash.h"
#include "common/huge_pages.h"

namespace tracedoc {

class GroupedValues {
 public:
  uint32_t group_of(uint64_t key) { return ids_.id(key); }
  // Room for `rows` rows. The group table grows on demand: sized for the worst case (a group per
  // row) it would no longer fit in cache when, as usual, names repeat.
  void reserve(size_t rows) {
    reserve_on_huge_pages(group_, rows);
    reserve_on_huge_pages(value_, rows);
  }
  void add(uint32_t group, int64_t value) {
    group_.push_back(group);
    value_.push_back(value);
  }
  size_t group_count() const { return ids_.size(); }
  uint64_t key(uint32_t group) const { return ids_.key(group); }

  // Statistics per group id.
  std::vector<SummaryStats> summarize_all();

 private:
  DenseIdMap ids_;
  std::vector<uint32_t> group_;
  std::vector<int64_t> value_;
};

}  // namespace tracedoc
