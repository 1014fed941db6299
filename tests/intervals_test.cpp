// The interval algebra (src/analysis/intervals.h) on hand-worked cases, edges first: empty and
// reversed inputs, touching intervals, windows that cut intervals, bins cut by a limit, values at the
// ends of the int64 range (damaged inputs must give a defined answer, never undefined behaviour).
#include <gtest/gtest.h>

#include <limits>

#include "analysis/intervals.h"
#include "test_support.h"

namespace tracedoc {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

IntervalSet set_of(std::vector<Interval> v) { return IntervalSet::busy_union(std::move(v)); }
std::vector<Interval> items(const IntervalSet& s) { return {s.intervals().begin(), s.intervals().end()}; }
using V = std::vector<Interval>;

TRACEDOC_TEST_LABELS(Intervals, unit);

TEST(Intervals, BusyUnionSortsMergesAndDropsEmptyOrReversed) {
  EXPECT_TRUE(set_of({}).empty());
  EXPECT_TRUE(set_of({{5, 5}, {9, 3}}).empty());
  EXPECT_EQ(items(set_of({{10, 20}, {0, 5}, {3, 8}, {15, 16}})), (V{{0, 8}, {10, 20}}));
  // Touching intervals merge: no gap between them.
  EXPECT_EQ(items(set_of({{5, 9}, {1, 5}})), (V{{1, 9}}));
  // Duplicates, nesting, negative times.
  EXPECT_EQ(items(set_of({{-7, -2}, {-7, -2}, {-6, -3}, {-2, -1}})), (V{{-7, -1}}));
  // An empty interval inside a gap does not bridge it.
  EXPECT_EQ(items(set_of({{0, 2}, {4, 4}, {6, 8}})), (V{{0, 2}, {6, 8}}));
}

TEST(Intervals, TotalSpanAndLengthSaturate) {
  EXPECT_EQ(set_of({{0, 8}, {10, 20}}).total(), 18);
  EXPECT_EQ(IntervalSet().total(), 0);
  EXPECT_EQ(IntervalSet().span(), (Interval{0, 0}));
  EXPECT_EQ(set_of({{3, 4}, {10, 20}}).span(), (Interval{3, 20}));
  // A damaged export's extreme times: the total saturates instead of overflowing.
  EXPECT_EQ(set_of({{kMin, 0}, {1, kMax}}).total(), kMax);
  EXPECT_EQ(set_of({{kMin, kMax}}).total(), kMax);
}

TEST(Intervals, CoveredWithinCountsOnlyTheWindow) {
  const IntervalSet s = set_of({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(s.covered_within({5, 45}), 5 + 10 + 5);
  EXPECT_EQ(s.covered_within({10, 20}), 0);  // exactly a gap
  EXPECT_EQ(s.covered_within({-100, 100}), 30);
  EXPECT_EQ(s.covered_within({60, 70}), 0);
  EXPECT_EQ(s.covered_within({25, 25}), 0);  // empty window
  EXPECT_EQ(s.covered_within({45, 5}), 0);   // reversed window: nothing, never negative
  EXPECT_EQ(IntervalSet().covered_within({0, 10}), 0);
}

TEST(Intervals, UniteMergesAcrossSets) {
  const IntervalSet a = set_of({{0, 5}, {10, 15}});
  EXPECT_EQ(items(a.unite(set_of({{5, 10}}))), (V{{0, 15}}));  // touching across the sets
  EXPECT_EQ(items(a.unite(set_of({{20, 30}, {-5, -1}}))), (V{{-5, -1}, {0, 5}, {10, 15}, {20, 30}}));
  EXPECT_EQ(items(a.unite(IntervalSet())), items(a));
  EXPECT_EQ(items(IntervalSet().unite(a)), items(a));
  EXPECT_EQ(items(a.unite(set_of({{1, 12}}))), (V{{0, 15}}));
}

TEST(Intervals, IntersectKeepsOnlyCommonTime) {
  const IntervalSet a = set_of({{0, 10}, {20, 30}});
  EXPECT_EQ(items(a.intersect(set_of({{5, 25}}))), (V{{5, 10}, {20, 25}}));
  EXPECT_TRUE(a.intersect(set_of({{10, 20}})).empty());  // touching only
  EXPECT_TRUE(a.intersect(IntervalSet()).empty());
  EXPECT_EQ(items(a.intersect(a)), items(a));
  // One interval of one side spanning several of the other, and equal ends.
  EXPECT_EQ(items(set_of({{0, 100}}).intersect(set_of({{1, 2}, {3, 4}, {90, 100}}))), (V{{1, 2}, {3, 4}, {90, 100}}));
  EXPECT_EQ(items(set_of({{0, 10}, {12, 20}}).intersect(set_of({{5, 10}, {11, 15}}))), (V{{5, 10}, {12, 15}}));
}

TEST(Intervals, SubtractPunchesHoles) {
  const IntervalSet a = set_of({{0, 10}, {20, 30}});
  EXPECT_EQ(items(a.subtract(set_of({{2, 4}, {6, 8}}))), (V{{0, 2}, {4, 6}, {8, 10}, {20, 30}}));
  EXPECT_EQ(items(a.subtract(set_of({{5, 25}}))), (V{{0, 5}, {25, 30}}));
  EXPECT_TRUE(a.subtract(set_of({{-1, 31}})).empty());
  EXPECT_EQ(items(a.subtract(set_of({{10, 20}}))), items(a));  // touching only
  EXPECT_EQ(items(a.subtract(IntervalSet())), items(a));
  EXPECT_TRUE(IntervalSet().subtract(a).empty());
  // A subtrahend interval that covers the end of one interval and the start of the next.
  EXPECT_EQ(items(set_of({{0, 10}, {12, 20}, {22, 30}}).subtract(set_of({{8, 14}, {16, 24}}))),
            (V{{0, 8}, {14, 16}, {24, 30}}));
  // a - b and a ∩ b partition a.
  const IntervalSet b = set_of({{3, 21}, {29, 40}});
  EXPECT_EQ(a.subtract(b).total() + a.intersect(b).total(), a.total());
}

TEST(Intervals, ComplementWithinAndClip) {
  const IntervalSet a = set_of({{10, 20}, {30, 40}});
  EXPECT_EQ(items(a.complement_within({0, 50})), (V{{0, 10}, {20, 30}, {40, 50}}));
  EXPECT_EQ(items(a.complement_within({15, 35})), (V{{20, 30}}));
  EXPECT_TRUE(a.complement_within({12, 18}).empty());
  EXPECT_TRUE(a.complement_within({50, 0}).empty());  // reversed window
  EXPECT_EQ(items(IntervalSet().complement_within({1, 2})), (V{{1, 2}}));
  EXPECT_EQ(items(a.clip({15, 35})), (V{{15, 20}, {30, 35}}));
  EXPECT_TRUE(a.clip({20, 30}).empty());
  EXPECT_TRUE(a.clip({35, 15}).empty());
}

TEST(Intervals, GapsAreStrictlyLongerThanTheMinimum) {
  const IntervalSet a = set_of({{0, 10}, {12, 20}, {25, 30}});
  EXPECT_EQ(a.gaps(), (V{{10, 12}, {20, 25}}));
  EXPECT_EQ(a.gaps(2), (V{{20, 25}}));  // a gap of exactly 2 is not longer than 2
  EXPECT_TRUE(a.gaps(5).empty());
  EXPECT_TRUE(set_of({{0, 10}}).gaps().empty());  // leading / trailing idle time is no gap
  EXPECT_TRUE(IntervalSet().gaps().empty());
  EXPECT_EQ(set_of({{kMin, kMin + 1}, {kMax - 1, kMax}}).gaps(kMax - 1).size(), 1u);  // saturated length
}

TEST(Intervals, BinnedCoverageSplitsAtBinEdgesAndLimit) {
  const IntervalSet a = set_of({{5, 25}, {28, 29}});
  // Bins [0,10) [10,20) [20,30), the last cut at 27.
  EXPECT_EQ(binned_coverage(a, 0, 10, 3, 27), (std::vector<int64_t>{5, 10, 5}));
  EXPECT_EQ(binned_coverage(a, 0, 10, 3, 100), (std::vector<int64_t>{5, 10, 6}));
  // Origin inside an interval; intervals before the origin and after the bins ignored.
  EXPECT_EQ(binned_coverage(a, 7, 5, 2, 100), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(binned_coverage(a, 30, 10, 2, 100), (std::vector<int64_t>{0, 0}));
  // Degenerate requests: no bins, non-positive width, a limit before the origin.
  EXPECT_TRUE(binned_coverage(a, 0, 10, 0, 100).empty());
  EXPECT_EQ(binned_coverage(a, 0, 0, 2, 100), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(binned_coverage(a, 10, 10, 2, 5), (std::vector<int64_t>{0, 0}));
  // Bins over the whole int64 range (a damaged export's INT64_MIN start as the origin): neither the
  // bin index (t - origin) nor the bin edges (origin + k * width) may overflow.
  constexpr int64_t kQuarter = int64_t{1} << 62;
  EXPECT_EQ(binned_coverage(set_of({{100, 110}}), kMin, kQuarter, 4, kMax), (std::vector<int64_t>{0, 0, 10, 0}));
  EXPECT_EQ(binned_coverage(set_of({{kMin, kMax}}), kMin, kQuarter, 4, kMax),
            (std::vector<int64_t>{kQuarter, kQuarter, kQuarter, kQuarter - 1}));
}

TEST(Intervals, BinnedLoadCountsOverlapsTwice) {
  const std::vector<Interval> v = {{0, 10}, {5, 15}, {12, 12}, {30, 20}};  // an empty and a reversed one
  EXPECT_EQ(binned_load(v, 0, 10, 2, 100), (std::vector<int64_t>{15, 5}));
  EXPECT_EQ(binned_load(v, 0, 10, 2, 12), (std::vector<int64_t>{15, 2}));  // the second bin ends at 12
  EXPECT_EQ(binned_load({}, 0, 10, 2, 100), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(binned_load(v, 0, -1, 2, 100), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(binned_load({{100, 110}, {105, 120}}, kMin, int64_t{1} << 62, 4, kMax),
            (std::vector<int64_t>{0, 0, 25, 0}));
}

TEST(Intervals, DepthOverTimeIsTheStepFunction) {
  using D = std::vector<DepthChange>;
  EXPECT_TRUE(depth_over_time({}).empty());
  const std::vector<Interval> v = {{0, 10}, {5, 15}, {10, 20}, {30, 40}};
  // At 10 one ends and one starts: the depth stays 2, no point.
  EXPECT_EQ(depth_over_time(v), (D{{0, 1}, {5, 2}, {15, 1}, {20, 0}, {30, 1}, {40, 0}}));
  // Touching intervals: one stretch of depth 1.
  EXPECT_EQ(depth_over_time(std::vector<Interval>{{0, 5}, {5, 9}}), (D{{0, 1}, {9, 0}}));
  // Equal intervals stack; an empty interval changes nothing, not even as the first event.
  EXPECT_EQ(depth_over_time(std::vector<Interval>{{3, 3}, {4, 6}, {4, 6}}), (D{{4, 2}, {6, 0}}));
  EXPECT_TRUE(depth_over_time(std::vector<Interval>{{3, 3}}).empty());
  // Reversed intervals are ignored.
  EXPECT_EQ(depth_over_time(std::vector<Interval>{{9, 1}, {2, 4}}), (D{{2, 1}, {4, 0}}));
}

TEST(Intervals, SetsCompareByValue) {
  EXPECT_EQ(set_of({{0, 1}, {1, 2}}), set_of({{0, 2}}));
  EXPECT_NE(set_of({{0, 1}}), set_of({{0, 2}}));
  EXPECT_EQ(IntervalSet::from_sorted_disjoint({{0, 1}, {2, 3}}), set_of({{2, 3}, {0, 1}}));
}

}  // namespace
}  // namespace tracedoc
