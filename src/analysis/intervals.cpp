#include "analysis/intervals.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "analysis/checked_math.h"

namespace tracedoc {

namespace {

// Appends intervals sorted by start to `out`, merging overlapping and touching ones.
void append_merged(std::vector<Interval>& out, const std::vector<Interval>& sorted) {
  for (const Interval& i : sorted) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
}

}  // namespace

IntervalSet IntervalSet::busy_union(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // GPU operations usually arrive in start order already: skip the sort then.
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start))
    std::sort(intervals.begin(), intervals.end(), by_start);
  IntervalSet out;
  append_merged(out.items_, intervals);
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
  if (window.end <= window.start) return 0;  // a reversed window would give a negative sum
  // First interval that ends after the window starts.
  auto it = std::upper_bound(items_.begin(), items_.end(), window.start,
                             [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t sum = 0;
  for (; it != items_.end() && it->start < window.end; ++it) {
    sum = sat_add(sum, sat_sub(std::min(it->end, window.end), std::max(it->start, window.start)));
  }
  return sum;
}

int64_t IntervalSet::covered_within(std::span<const Interval> windows) const {
  int64_t sum = 0;
  for (const Interval& w : windows) sum = sat_add(sum, covered_within(w));
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
  append_merged(out.items_, merged);
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
  if (window.end <= window.start) return out;
  // From the first interval that ends after the window starts (binary search: clipping a long set
  // to each of many steps stays O(log n + k) per step).
  auto it = std::upper_bound(items_.begin(), items_.end(), window.start,
                             [](int64_t t, const Interval& i) { return t < i.end; });
  for (; it != items_.end() && it->start < window.end; ++it) {
    const int64_t lo = std::max(it->start, window.start);
    const int64_t hi = std::min(it->end, window.end);
    if (lo < hi) out.items_.push_back({lo, hi});
  }
  return out;
}

namespace {

// origin + k * width, clamped to the int64 range. In 128 bits: saturating the product before adding a
// negative origin (sat_add(origin, sat_mul(k, width))) would misplace every bin past INT64_MAX / k.
int64_t bin_start(int64_t origin, int64_t width, size_t k) {
  const __int128 v = static_cast<__int128>(origin) + static_cast<__int128>(k) * width;
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

int64_t bin_end(int64_t origin, int64_t width, size_t k, int64_t limit) {
  return std::min(bin_start(origin, width, k + 1), limit);
}

// The bin holding `t` (>= origin): (t - origin) / width without overflowing the difference.
size_t bin_of(int64_t t, int64_t origin, int64_t width) {
  return static_cast<size_t>((static_cast<__int128>(t) - origin) / width);
}

// Adds the overlap of [lo, hi) with bins first.. to `bins`.
void add_to_bins(std::vector<int64_t>& bins, int64_t lo, int64_t hi, int64_t origin, int64_t width, int64_t limit) {
  for (size_t k = bin_of(lo, origin, width); k < bins.size(); ++k) {
    const int64_t b_start = bin_start(origin, width, k);
    if (b_start >= hi) break;
    const int64_t part = sat_sub(std::min(hi, bin_end(origin, width, k, limit)), std::max(lo, b_start));
    if (part > 0) bins[k] = sat_add(bins[k], part);
  }
}

}  // namespace

std::vector<int64_t> binned_coverage(const IntervalSet& set, int64_t origin, int64_t width, size_t count,
                                     int64_t limit) {
  std::vector<int64_t> bins(count, 0);
  if (width <= 0 || count == 0) return bins;
  for (const Interval& i : set.intervals()) {
    if (i.end <= origin || i.start >= limit) continue;
    add_to_bins(bins, std::max(i.start, origin), std::min(i.end, limit), origin, width, limit);
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
    add_to_bins(bins, std::max(i.start, origin), std::min(i.end, limit), origin, width, limit);
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
    const int64_t before = depth;
    for (; k < edges.size() && edges[k].first == t; ++k) depth += edges[k].second;
    // Only changes: an empty interval, or one ending where another starts, leaves the depth as it was.
    if (depth != before) out.push_back({t, depth});
  }
  return out;
}

std::vector<Interval> idle_within(const IntervalSet& busy, const std::vector<Interval>& windows) {
  std::vector<Interval> out;
  for (const Interval& w : windows) {
    const IntervalSet idle = busy.clip(w).complement_within(w);
    for (const Interval& g : idle.intervals()) out.push_back(g);
  }
  return out;
}

}  // namespace tracedoc
