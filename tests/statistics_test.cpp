#include "analysis/statistics.h"

#include <gtest/gtest.h>

namespace tracedoc {
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
