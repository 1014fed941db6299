// One-pass grouping for summary reports: each row is tagged with a dense group id, values are then
// bucketed per group with a stable counting sort (so each group keeps row order, which the sample
// standard deviation depends on), and the nsys statistics are computed per bucket.
// No per-group allocations: millions of distinct NVTX ranges group as fast as a few kernels.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"
#include "common/flat_hash.h"
#include "common/huge_pages.h"
#include "model/columns.h"

namespace tracedoc {

class GroupedValues {
 public:
  // The group of a row that is in none (tag only).
  static constexpr uint32_t kLeftOut = std::numeric_limits<uint32_t>::max();

  uint32_t group_of(uint64_t key) { return ids_.id(key); }
  // Room for `rows` rows. The group table grows on demand: sized for the worst case (a group per
  // row) it would no longer fit in cache when, as usual, names repeat.
  void reserve(size_t rows) {
    reserve_on_huge_pages(group_, rows);
    if (!durations_) reserve_on_huge_pages(value_, rows);
  }

  // Rows come one of two ways. Each with its value:
  void add(uint32_t group, int64_t value) {
    group_.push_back(group);
    value_.push_back(value);
  }
  // Or every row of a table in order, tagged with its group (kLeftOut: in none), the values being
  // the rows' durations, read back from the table when summarized instead of kept here: 8 bytes a
  // row of fresh memory less, which a read of millions of rows pays for in page faults. A row
  // without an end (kNoTime) lasts until `open_end`. Call before reserve and tag.
  void durations_from(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end, TimeNs open_end = kNoTime) {
    durations_ = {&start, &end, open_end};
  }
  void tag(uint32_t group) { group_.push_back(group); }

  size_t group_count() const { return ids_.size(); }
  uint64_t key(uint32_t group) const { return ids_.key(group); }

  // Statistics per group id.
  std::vector<SummaryStats> summarize_all();

 private:
  struct Durations {
    const std::vector<TimeNs>* start = nullptr;
    const std::vector<TimeNs>* end = nullptr;
    TimeNs open_end = 0;
    explicit operator bool() const { return start != nullptr; }
    int64_t of(size_t row) const { return duration_until((*start)[row], (*end)[row], open_end); }
  };
  DenseIdMap ids_;
  std::vector<uint32_t> group_;
  std::vector<int64_t> value_;  // add's values
  Durations durations_;         // durations_from's table
};

}  // namespace tracedoc
