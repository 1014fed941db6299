#include "analysis/statistics.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tracedoc {
TRACEDOC_TEST_LABELS(Statistics, unit);

TEST(Statistics, MedianAndQuartilesFollowTheSqliteExtension) {
  std::vector<int64_t> v = {10, 1, 3, 2};
  SummaryStats s = summarize(v);
  EXPECT_EQ(s.total, 16);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.q1, 1.5);
  EXPECT_DOUBLE_EQ(s.q3, 6.5);
  EXPECT_NEAR(s.stdev, 4.0825, 1e-4);
}
}  // namespace tracedoc

namespace tracedoc {
// Large groups take the selection path; it must agree with the extension's rule on sorted data.
TEST(Statistics, SelectionAgreesWithTheExtensionRule) {
  uint64_t state = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 64 + static_cast<size_t>(trial) * 7;
    std::vector<int64_t> v(n);
    for (auto& x : v) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<int64_t>((state >> 33) % (trial % 3 == 0 ? 5 : 100000));  // many ties, or few
    }
    std::vector<int64_t> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    SummaryStats s = summarize(v);
    EXPECT_EQ(s.median, nsys_quantile(sorted, 0.5)) << "n=" << n;
    EXPECT_EQ(s.q1, nsys_quantile(sorted, 0.25)) << "n=" << n;
    EXPECT_EQ(s.q3, nsys_quantile(sorted, 0.75)) << "n=" << n;
  }
}

TEST(Statistics, SqliteRoundIsHalfAwayFromZero) {
  EXPECT_EQ(sqlite_round(12.25, 1), 12.3);
  EXPECT_EQ(sqlite_round(-12.25, 1), -12.3);
  EXPECT_EQ(sqlite_round(134135.5, 1), 134135.5);
  EXPECT_EQ(sqlite_round(0.05, 1), 0.1);
}
}  // namespace tracedoc
