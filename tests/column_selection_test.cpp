// Reads narrowed to the columns the reports declare (ReportDef::columns, model/column_selection.h):
// every report that declares its columns prints, on every real export, exactly what it prints from
// a read of every column; the columns a read fills equal a full read's and the others stay empty.
#include <gtest/gtest.h>

#include "analysis/report_registry.h"
#include "analysis/report_runs.h"
#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

// The bits and time columns are declaration positions (trace.h's column lists).
static_assert(column_bit(&KernelTable::start) == 1);
static_assert(column_bit(&KernelTable::name) == uint64_t{1} << 8);
static_assert(time_columns<KernelTable>() == 0b11);
static_assert(time_columns<RangeTable>() == 0b11);

// Every report that declares its columns, with the arguments that change what it reads.
std::vector<std::string> narrowed_requests() {
  std::vector<std::string> items;
  for (const ReportDef& def : all_reports()) {
    if (!def.columns) continue;
    items.push_back(def.name);
    const std::string name = def.name;
    if (name.starts_with("cuda_gpu_kern") || name == "cuda_gpu_sum" || name == "cuda_api_gpu_sum") {
      items.push_back(name + ":base");
      items.push_back(name + ":mangled");
    }
  }
  return items;
}

Result<Trace> read_for(const std::string& path, const std::vector<ReportRequest>& requests) {
  NsysReadOptions options;
  options.tables = tables_read(requests);
  options.columns = columns_read(requests);
  return read_nsys_sqlite(path, options);
}

TRACEDOC_TEST_LABELS(ColumnSelection, corpus);

TEST(ColumnSelection, ReportsPrintTheSameFromTheColumnsTheyDeclare) {
  const auto exports = shared_nsys_exports();
  if (exports.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  const std::vector<std::string> items = narrowed_requests();
  ASSERT_GE(items.size(), 20u);  // the default reports and their kin
  size_t compared = 0;
  for (const auto& [name, path] : exports) {
    SCOPED_TRACE(name);
    const Trace& full = load_nsys(path);
    for (const std::string& item : items) {
      SCOPED_TRACE(item);
      auto requests = report_requests({item}, std::nullopt);
      ASSERT_TRUE(requests.ok()) << requests.status().message();
      ASSERT_FALSE(columns_read(*requests).whole());
      auto narrow = read_for(path, *requests);
      ASSERT_TRUE(narrow.ok()) << narrow.status().message();
      const auto expected = report_csv(full, item), actual = report_csv(*narrow, item);
      ASSERT_EQ(expected.has_value(), actual.has_value());
      if (!expected) continue;
      EXPECT_EQ(*expected, *actual);
      ++compared;
    }
    // The default set, read once for all of them (as `tracedoc stats` does).
    auto defaults = report_requests(default_reports(), std::nullopt);
    ASSERT_TRUE(defaults.ok());
    auto narrow = read_for(path, *defaults);
    ASSERT_TRUE(narrow.ok()) << narrow.status().message();
    for (const std::string& item : default_reports())
      EXPECT_EQ(report_csv(full, item), report_csv(*narrow, item)) << item;
  }
  // 16 exports; most hold kernels, API calls and ranges.
  EXPECT_GE(compared, 150u);
}

TEST(ColumnSelection, ReadFillsTheSelectedColumnsAsAFullReadAndNoOthers) {
  const auto exports = shared_nsys_exports();
  const auto it = exports.find("nsys-ai_mfu_2gpu_before");
  if (it == exports.end()) GTEST_SKIP() << "../shared/traces/nsys not found";
  const Trace& full = load_nsys(it->second);
  NsysReadOptions options;
  options.columns = ColumnSelection::time_only()
                        .select<KernelTable>(&KernelTable::name, &KernelTable::grid_x)
                        .select<ApiTable>(&ApiTable::correlation);
  auto narrow = read_nsys_sqlite(it->second, options);
  ASSERT_TRUE(narrow.ok()) << narrow.status().message();
  const KernelTable& k = narrow->kernels;
  ASSERT_EQ(k.size(), 4010u);
  EXPECT_EQ(k.start, full.kernels.start);
  EXPECT_EQ(k.end, full.kernels.end);
  EXPECT_EQ(k.grid_x, full.kernels.grid_x);
  ASSERT_EQ(k.name.size(), k.size());
  for (size_t i = 0; i < k.size(); ++i) ASSERT_EQ(narrow->str(k.name[i]), full.str(full.kernels.name[i])) << i;
  EXPECT_TRUE(k.correlation.empty());
  EXPECT_TRUE(k.short_name.empty());
  EXPECT_TRUE(k.block_x.empty());
  EXPECT_EQ(narrow->api.correlation, full.api.correlation);
  EXPECT_TRUE(narrow->api.name.empty());
  EXPECT_TRUE(narrow->api.global_tid.empty());
  // A table the selection does not add to keeps its times; one it cannot narrow is read whole; the
  // ranges keep what the emit_nvtx operators are made from.
  EXPECT_EQ(narrow->memcpys.start, full.memcpys.start);
  EXPECT_TRUE(narrow->memcpys.bytes.empty());
  ASSERT_EQ(narrow->syncs.size(), 366u);
  EXPECT_EQ(narrow->syncs.correlation, full.syncs.correlation);
  EXPECT_EQ(narrow->ranges.global_tid, full.ranges.global_tid);
  EXPECT_EQ(narrow->ranges.kind, full.ranges.kind);
  EXPECT_EQ(narrow->ranges.text.size(), full.ranges.size());
  EXPECT_TRUE(narrow->ranges.range_id.empty());
  EXPECT_TRUE(narrow->ranges.row_id.empty());
}

}  // namespace
}  // namespace tracedoc::testing
