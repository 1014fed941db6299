// The --max-memory guard: size parsing, and the check against the process's resident memory.
#include <gtest/gtest.h>

#include "common/memory_budget.h"
#include "test_support.h"

namespace tracedoc {
namespace {

TRACEDOC_TEST_LABELS(MemoryBudget, unit sanitize threads);

TEST(MemoryBudget, ParsesSizes) {
  EXPECT_EQ(*parse_memory_size("512M"), 512ull << 20);
  EXPECT_EQ(*parse_memory_size("4G"), 4ull << 30);
  EXPECT_EQ(*parse_memory_size("1.5GiB"), 3ull << 29);
  EXPECT_EQ(*parse_memory_size("2kb"), 2048u);
  EXPECT_EQ(*parse_memory_size("1000000"), 1000000u);
  EXPECT_FALSE(parse_memory_size("lots").ok());
  EXPECT_FALSE(parse_memory_size("12Q").ok());
  EXPECT_FALSE(parse_memory_size("-1G").ok());
  EXPECT_EQ(format_memory_size(4ull << 30), "4.0 GiB");
  EXPECT_EQ(format_memory_size(512ull << 20), "512 MiB");
}

TEST(MemoryBudget, ChecksResidentMemory) {
  const uint64_t before = MemoryBudget::limit();
  EXPECT_GT(MemoryBudget::resident_bytes(), 0u);
  EXPECT_GT(MemoryBudget::default_limit(), 0u);
  MemoryBudget::set_limit(0);
  EXPECT_TRUE(MemoryBudget::check("x").ok());  // no limit
  MemoryBudget::set_limit(1 << 20);            // 1 MiB: below any process's footprint
  const Status st = MemoryBudget::check("trace.json");
  EXPECT_EQ(st.code(), ErrorCode::kBadInput);
  EXPECT_NE(st.message().find("trace.json: needs more memory than the limit of 1 MiB"), std::string::npos)
      << st.message();
  MemoryBudget::set_limit(uint64_t{1} << 50);
  EXPECT_TRUE(MemoryBudget::check("x", 1 << 20).ok());
  EXPECT_FALSE(MemoryBudget::check("x", uint64_t{1} << 51).ok());  // the allocation about to happen counts
  MemoryBudget::set_limit(before);
}

}  // namespace
}  // namespace tracedoc
