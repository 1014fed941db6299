#include "analysis/intervals.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "analysis/checked_math.h"

namespace tracedoc {

IntervalSet IntervalSet::busy_union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet out;
  for (const Interval& i : intervals) {
    if (!out.items_.empty() && i.start <= out.items_.back().end) {
      out.items_.back().end = std::max(out.items_.back().end, i.end);
    } else {
      out.items_.push_back(i);
    }
  }
  return out;
}

IntervalSet IntervalSet::from_sorted_disjoint(std::vector<Interval> intervals) {
#ifndef NDEBUG
  for (size_t k = 0; k < intervals.size(); ++k) {
    assert(intervals[k].start < intervals[k].end);
    assert(k == 0 || intervals[k - 1].end < intervals[k].start);
  }
#endif
  IntervalSet out;
  out.items_ = std::move(intervals);
  return out;
}

int64_t IntervalSet::total() const {
  int64_t sum = 0;
  for (const Interval& i : items_) sum = sat_add(sum, sat_sub(i.end, i.start));
  return sum;
}

int64_t IntervalSet::covered_within(Interval window) const {
  // First interval that ends after the window starts.
  auto it = std::upper_bound(items_.begin(), items_.end(), window.start,
                             [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t sum = 0;
  for (; it != items_.end() && it->start < window.end; ++it) {
    sum = sat_add(sum, sat_sub(std::min(it->end, window.end), std::max(it->start, window.start)));
  }
  return sum;
}

Interval IntervalSet::span() const {
  if (items_.empty()) return {0, 0};
  return {items_.front().start, items_.back().end};
}

IntervalSet IntervalSet::unite(const IntervalSet& other) const {
  std::vector<Interval> merged;
  merged.reserve(items_.size() + other.items_.size());
  std::merge(items_.begin(), items_.end(), other.items_.begin(), other.items_.end(), std::back_inserter(merged),
             [](const Interval& a, const Interval& b) { return a.start < b.start; });
  IntervalSet out;
  for (const Interval& i : merged) {
    if (!out.items_.empty() && i.start <= out.items_.back().end) {
      out.items_.back().end = std::max(out.items_.back().end, i.end);
    } else {
      out.items_.push_back(i);
    }
  }
  return out;
}

IntervalSet IntervalSet::intersect(const IntervalSet& other) const {
  IntervalSet out;
  size_t a = 0, b = 0;
  while (a < items_.size() && b < other.items_.size()) {
    const Interval& x = items_[a];
    const Interval& y = other.items_[b];
    const int64_t lo = std::max(x.start, y.start);
    const int64_t hi = std::min(x.end, y.end);
    // Pieces of two disjoint sets can touch ([1,3)∩[1,5) then [3,4)∩... never: inputs are disjoint
    // and non-touching on each side, so consecutive pieces are separated too).
    if (lo < hi) out.items_.push_back({lo, hi});
    if (x.end < y.end) {
      ++a;
    } else {
      ++b;
    }
  }
  return out;
}

IntervalSet IntervalSet::subtract(const IntervalSet& other) const {
  IntervalSet out;
  size_t b = 0;
  for (const Interval& x : items_) {
    int64_t cursor = x.start;
    while (b < other.items_.size() && other.items_[b].end <= cursor) ++b;
    size_t k = b;
    while (k < other.items_.size() && other.items_[k].start < x.end) {
      if (other.items_[k].start > cursor) out.items_.push_back({cursor, other.items_[k].start});
      cursor = std::max(cursor, other.items_[k].end);
      if (other.items_[k].end >= x.end) break;
      ++k;
    }
    if (cursor < x.end) out.items_.push_back({cursor, x.end});
  }
  return out;
}

IntervalSet IntervalSet::complement_within(Interval window) const {
  if (window.end <= window.start) return {};
  return IntervalSet::from_sorted_disjoint({window}).subtract(*this);
}

std::vector<Interval> IntervalSet::gaps(int64_t min_length) const {
  std::vector<Interval> out;
  for (size_t k = 1; k < items_.size(); ++k) {
    const Interval gap{items_[k - 1].end, items_[k].start};
    if (sat_sub(gap.end, gap.start) > min_length) out.push_back(gap);
  }
  return out;
}

IntervalSet IntervalSet::clip(Interval window) const {
  IntervalSet out;
  for (const Interval& i : items_) {
    const int64_t lo = std::max(i.start, window.start);
    const int64_t hi = std::min(i.end, window.end);
    if (lo < hi) out.items_.push_back({lo, hi});
  }
  return out;
}

namespace {

int64_t bin_end(int64_t origin, int64_t width, size_t k, int64_t limit) {
  return std::min(sat_add(origin, sat_mul(static_cast<int64_t>(k + 1), width)), limit);
}

}  // namespace

std::vector<int64_t> binned_coverage(const IntervalSet& set, int64_t origin, int64_t width, size_t count,
                                     int64_t limit) {
  std::vector<int64_t> bins(count, 0);
  if (width <= 0 || count == 0) return bins;
  for (const Interval& i : set.intervals()) {
    if (i.end <= origin || i.start >= limit) continue;
    const int64_t lo = std::max(i.start, origin);
    const int64_t hi = std::min(i.end, limit);
    size_t k = static_cast<size_t>((lo - origin) / width);
    for (; k < count; ++k) {
      const int64_t b_start = sat_add(origin, sat_mul(static_cast<int64_t>(k), width));
      if (b_start >= hi) break;
      const int64_t b_end = bin_end(origin, width, k, limit);
      bins[k] += std::min(hi, b_end) - std::max(lo, b_start);
    }
  }
  return bins;
}

std::vector<int64_t> binned_load(std::vector<Interval> intervals, int64_t origin, int64_t width, size_t count,
                                 int64_t limit) {
  std::vector<int64_t> bins(count, 0);
  if (width <= 0 || count == 0) return bins;
  // Each interval walks only the bins it touches: total work is n + the bins covered, which is
  // linear for the short GPU operations this is used on; long ones cost their bin count once.
  for (const Interval& i : intervals) {
    if (i.end <= i.start || i.end <= origin || i.start >= limit) continue;
    const int64_t lo = std::max(i.start, origin);
    const int64_t hi = std::min(i.end, limit);
    for (size_t k = static_cast<size_t>((lo - origin) / width); k < count; ++k) {
      const int64_t b_start = sat_add(origin, sat_mul(static_cast<int64_t>(k), width));
      if (b_start >= hi) break;
      const int64_t b_end = bin_end(origin, width, k, limit);
      if (b_end > b_start) bins[k] += std::min(hi, b_end) - std::max(lo, b_start);
    }
  }
  return bins;
}

std::vector<DepthChange> depth_over_time(std::span<const Interval> intervals) {
  std::vector<std::pair<int64_t, int>> edges;
  edges.reserve(intervals.size() * 2);
  for (const Interval& i : intervals) {
    if (i.end < i.start) continue;
    edges.push_back({i.start, +1});
    edges.push_back({i.end, -1});
  }
  std::sort(edges.begin(), edges.end());
  std::vector<DepthChange> out;
  int64_t depth = 0;
  for (size_t k = 0; k < edges.size();) {
    const int64_t t = edges[k].first;
    for (; k < edges.size() && edges[k].first == t; ++k) depth += edges[k].second;
    if (out.empty() || out.back().depth != depth) out.push_back({t, depth});
  }
  return out;
}

}  // namespace tracedoc
