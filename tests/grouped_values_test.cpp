// GroupedValues: rows given with their values and rows tagged with durations read back from a
// table group alike; left-out rows stay out; the buckets, filled in slices on the task pool, keep
// each group's rows in order (the sample standard deviation depends on it) on any thread count.
#include "analysis/grouped_values.h"

#include <gtest/gtest.h>

#include <limits>

#include "common/task_pool.h"
#include "test_support.h"

namespace tracedoc {
namespace {

constexpr int64_t kOpen = std::numeric_limits<int64_t>::min();  // a row without an end

struct Rows {
  std::vector<int64_t> start, end;
  std::vector<uint64_t> key;  // 0: left out
};

// Many rows over few groups (several slices), with left-out rows and rows without an end.
Rows make_rows(size_t n) {
  Rows r;
  uint64_t state = 7;
  for (size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int64_t start = static_cast<int64_t>(i) * 100;
    r.start.push_back(start);
    r.end.push_back(i % 97 == 0 ? kOpen : start + static_cast<int64_t>((state >> 33) % 5000));
    r.key.push_back(i % 11 == 0 ? 0 : 1 + (state >> 40) % 37);
  }
  return r;
}

std::vector<SummaryStats> by_durations(const Rows& r, int64_t open_end) {
  GroupedValues g;
  g.durations_from(r.start, r.end, open_end);
  g.reserve(r.start.size());
  for (uint64_t k : r.key) g.tag(k == 0 ? GroupedValues::kLeftOut : g.group_of(k));
  return g.summarize_all();
}

std::vector<SummaryStats> by_values(const Rows& r, int64_t open_end) {
  GroupedValues g;
  g.reserve(r.start.size());
  for (size_t i = 0; i < r.key.size(); ++i) {
    if (r.key[i] != 0) g.add(g.group_of(r.key[i]), (r.end[i] == kOpen ? open_end : r.end[i]) - r.start[i]);
  }
  return g.summarize_all();
}

void expect_same(const std::vector<SummaryStats>& a, const std::vector<SummaryStats>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t g = 0; g < a.size(); ++g) {
    EXPECT_EQ(a[g].count, b[g].count) << g;
    EXPECT_EQ(a[g].total, b[g].total) << g;
    EXPECT_EQ(a[g].min, b[g].min) << g;
    EXPECT_EQ(a[g].max, b[g].max) << g;
    EXPECT_EQ(a[g].median, b[g].median) << g;
    EXPECT_EQ(a[g].q1, b[g].q1) << g;
    EXPECT_EQ(a[g].q3, b[g].q3) << g;
    EXPECT_EQ(a[g].stdev, b[g].stdev) << g;  // bit for bit: the same values in the same order
  }
}

TRACEDOC_TEST_LABELS(GroupedValues, unit threads);

TEST(GroupedValues, DurationsReadBackMatchValuesGivenOnAnyThreadCount) {
  const Rows r = make_rows(600'000);
  const int64_t open_end = 600'000 * 100;
  set_thread_count(1);
  const auto reference = by_values(r, open_end);
  ASSERT_EQ(reference.size(), 37u);
  int64_t rows = 0;
  for (const SummaryStats& s : reference) rows += s.count;
  EXPECT_EQ(rows, 600'000 - (600'000 + 10) / 11);  // every row but the left-out ones
  for (int threads : {1, 2, 7}) {
    set_thread_count(threads);
    expect_same(by_durations(r, open_end), reference);
    expect_same(by_values(r, open_end), reference);
  }
  set_thread_count(usable_cores());
}

TEST(GroupedValues, AGroupPerRow) {
  Rows r;
  for (int64_t i = 0; i < 100'000; ++i) {
    r.start.push_back(i), r.end.push_back(3 * i), r.key.push_back(static_cast<uint64_t>(i) + 1);
  }
  set_thread_count(7);
  const auto stats = by_durations(r, 0);
  set_thread_count(usable_cores());
  ASSERT_EQ(stats.size(), 100'000u);
  EXPECT_EQ(stats[99'999].total, 2 * 99'999);
  EXPECT_EQ(stats[5].count, 1);
}

}  // namespace
}  // namespace tracedoc
