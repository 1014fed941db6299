// Interval algebra on int64 ns: the vocabulary every timeline analysis is written in (GPU busy time,
// idle gaps, overlap of compute and communication, utilization over time).
//
// An IntervalSet is a sorted list of disjoint, non-empty half-open intervals [start, end). Sets are
// built once from raw intervals in O(n log n) (busy_union) and then combined in linear time.
// Touching intervals ([1,5) and [5,9)) are merged: a timeline has no gap between them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/checked_math.h"

namespace tracedoc {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;                                        // exclusive
  int64_t length() const { return sat_sub(end, start); }  // saturating: hostile times span past int64
  friend bool operator==(const Interval&, const Interval&) = default;
};

class IntervalSet {
 public:
  IntervalSet() = default;

  // The union of arbitrary intervals (any order, overlapping, empty or reversed ones ignored).
  static IntervalSet busy_union(std::vector<Interval> intervals);
  // Wraps intervals already sorted, disjoint and non-touching (checked in debug builds only).
  static IntervalSet from_sorted_disjoint(std::vector<Interval> intervals);

  // A view into the set: only of a set that outlives it (a view of a temporary would dangle in
  // `for (auto& i : a.clip(w).intervals())`, so that does not compile).
  std::span<const Interval> intervals() const& { return items_; }
  std::span<const Interval> intervals() const&& = delete;
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const Interval& operator[](size_t i) const { return items_[i]; }

  // Total covered length (saturating at INT64_MAX).
  int64_t total() const;
  // Covered length inside [window.start, window.end).
  int64_t covered_within(Interval window) const;
  // Summed over windows that do not overlap one another (step windows).
  int64_t covered_within(std::span<const Interval> windows) const;
  // [first start, last end); {0, 0} for an empty set.
  Interval span() const;

  IntervalSet unite(const IntervalSet& other) const;
  IntervalSet intersect(const IntervalSet& other) const;
  IntervalSet subtract(const IntervalSet& other) const;
  // The uncovered stretches inside `window` (window.start..first interval, between intervals, ...).
  IntervalSet complement_within(Interval window) const;
  // The holes between consecutive intervals strictly longer than `min_length`; leading and trailing
  // idle time is not a gap.
  std::vector<Interval> gaps(int64_t min_length = 0) const;
  // Keeps the parts inside `window` (O(log n) plus the intervals kept).
  IntervalSet clip(Interval window) const;

  friend bool operator==(const IntervalSet&, const IntervalSet&) = default;

 private:
  std::vector<Interval> items_;
};

// The uncovered stretches of `busy` inside each window, window by window (in time order for
// windows in time order): a GPU's idle time inside its steps.
std::vector<Interval> idle_within(const IntervalSet& busy, const std::vector<Interval>& windows);

// Covered time per bin: bins [origin + i*width, origin + (i+1)*width) for i in [0, count), the last
// one ending at `limit` if that comes first. Linear in set size + count.
std::vector<int64_t> binned_coverage(const IntervalSet& set, int64_t origin, int64_t width, size_t count,
                                     int64_t limit);

// Sum over intervals of their overlap with each bin, overlapping intervals counted once each (so a
// bin can hold more than its width: two streams busy at once count twice, as nsys's gpu_time_util
// counts them). Intervals need not be sorted; each one walks only the bins it touches.
std::vector<int64_t> binned_load(std::vector<Interval> intervals, int64_t origin, int64_t width, size_t count,
                                 int64_t limit);

// The number of intervals in progress, as a step function: a (time, depth) pair at each time the
// depth changes, in time order; the depth holds until the next pair. Boundaries at the same time are
// applied together, so an interval ending where another starts, or an empty interval, is no change.
// Reversed intervals are ignored. Used for queue length and concurrency over time.
struct DepthChange {
  int64_t time;
  int64_t depth;
  friend bool operator==(const DepthChange&, const DepthChange&) = default;
};
std::vector<DepthChange> depth_over_time(std::span<const Interval> intervals);

}  // namespace tracedoc
