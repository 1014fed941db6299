// StringPool: ids in first-seen order; truncate forgets the strings from an id on, as if they had
// never been interned (the NVTX parts of a read that must be read again).
#include "model/string_pool.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace tracedoc {
namespace {

TRACEDOC_TEST_LABELS(StringPool, unit sanitize threads);

TEST(StringPool, TruncateForgetsTheLaterStrings) {
  StringPool pool;
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(pool.intern("name " + std::to_string(i)), static_cast<StrId>(i));
  EXPECT_EQ(pool.intern("name 17"), 17u);
  pool.truncate(3000);
  EXPECT_EQ(pool.size(), 3000u);
  for (int i = 0; i < 3000; ++i) EXPECT_EQ(pool.intern("name " + std::to_string(i)), static_cast<StrId>(i));
  EXPECT_EQ(pool.size(), 3000u);
  // A forgotten string is new again, with the next id.
  EXPECT_EQ(pool.intern("name 4999"), 3000u);
  EXPECT_EQ(pool.get(3000), "name 4999");
  EXPECT_EQ(pool.intern("name 3000"), 3001u);
  pool.truncate(10'000);  // past the end: nothing to forget
  EXPECT_EQ(pool.size(), 3002u);
  pool.truncate(0);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_EQ(pool.intern("name 2"), 0u);
}

}  // namespace
}  // namespace tracedoc
