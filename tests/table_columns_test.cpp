// Property test of the column declarations (model/columns.h): for every table of the model, random
// rows go through the generic operations (permute, keep, truncate, append, the time sort, the time
// filter) and every column must stay aligned with its row. The tables come from for_each_trace_table
// and their columns from their declarations, so a new table or column is covered without an edit.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "analysis/trace_filter.h"
#include "model/column_selection.h"
#include "model/table_sort.h"
#include "model/trace.h"
#include "test_support.h"

namespace tracedoc {
namespace {

constexpr size_t kRows = 301;
constexpr size_t kStrings = 40;

template <typename T>
bool same(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::bit_cast<uint64_t>(static_cast<double>(a)) == std::bit_cast<uint64_t>(static_cast<double>(b));
  else
    return a == b;
}

// A random value for a column: small times (so that equal times test the sort's stability), ids
// with a rank-free upper half, valid string ids and kernel rows, the absent value now and then.
template <typename Table, typename T>
T random_value(const Column<Table, T>& column, std::mt19937_64& rng, size_t kernel_rows) {
  if (rng() % 12 == 0 && column.role != ColumnRole::kKernelRow) return column.absent;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(rng() % 10000) / 100;
  } else {
    switch (column.role) {
      case ColumnRole::kTime: return static_cast<T>(rng() % 500);
      case ColumnRole::kOwner:
      case ColumnRole::kFileId: return static_cast<T>(make_global_tid(0, 100 + rng() % 4, 100 + rng() % 8));
      case ColumnRole::kString: return static_cast<T>(rng() % kStrings);
      case ColumnRole::kKernelRow: return static_cast<T>(rng() % kernel_rows);
      default: {
        const T v = static_cast<T>(rng());
        return same(v, column.absent) ? T{} : v;
      }
    }
  }
}

// Fills `rows` random rows; optional columns only when `with_optional`.
template <typename Table>
void fill(Table& table, size_t rows, std::mt19937_64& rng, bool with_optional, size_t kernel_rows = kRows) {
  for_each_column(table, [&](const auto& column, auto& values) {
    if (column.optional() && !with_optional) return;
    for (size_t i = 0; i < rows; ++i) values.push_back(random_value(column, rng, kernel_rows));
  });
}

// Every column of `result` row j equals `original` row expected[j] (each value passed through `map`).
template <typename Table, typename Map>
void expect_rows(const Table& original, const Table& result, const std::vector<size_t>& expected,
                 const std::string& what, Map map) {
  ASSERT_EQ(result.size(), expected.size()) << what;
  for_each_column(result, [&](const auto& column, const auto& values) {
    const auto& before = column.of(original);
    if (before.empty()) {  // not recorded: still not recorded, or absent in every row (appended to one that was)
      for (const auto& v : values) ASSERT_TRUE(same(v, column.absent)) << what << ": " << column.name;
      EXPECT_TRUE(values.empty() || values.size() == expected.size()) << what << ": " << column.name;
      return;
    }
    ASSERT_EQ(values.size(), expected.size()) << what << ": " << column.name;
    for (size_t j = 0; j < expected.size(); ++j) {
      if (!same(values[j], map(column, before[expected[j]]))) {
        ADD_FAILURE() << what << ": column " << column.name << " row " << j << " is not row " << expected[j];
        return;
      }
    }
  });
}
template <typename Table>
void expect_rows(const Table& original, const Table& result, const std::vector<size_t>& expected,
                 const std::string& what) {
  expect_rows(original, result, expected, what, [](const auto&, auto v) { return v; });
}

std::vector<size_t> iota_rows(size_t n) {
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), size_t{0});
  return rows;
}

TRACEDOC_TEST_LABELS(TableColumns, unit sanitize);

TEST(TableColumns, DeclarationsAreWellFormed) {
  std::set<std::string> table_names;
  for_each_trace_table([&](const TableInfo& info, auto get) {
    EXPECT_TRUE(table_names.insert(std::string(info.name)).second) << "table name twice: " << info.name;
    using Table = std::decay_t<decltype(get(std::declval<Trace&>()))>;
    std::set<std::string> names;
    bool first = true;
    for_each_column_of<Table>([&](const auto& column) {
      EXPECT_TRUE(names.insert(std::string(column.name)).second) << info.name << "." << column.name << " twice";
      EXPECT_FALSE(column.description.empty()) << info.name << "." << column.name;
      if (first) {
        EXPECT_FALSE(column.optional()) << info.name << ": the first column sizes the table";
      }
      first = false;
    });
    if (info.order == TableOrder::kByTime) {
      Table t;
      EXPECT_NE(first_time_column(t), nullptr) << info.name << " is sorted by time but has no time column";
    }
  });
  EXPECT_EQ(table_names.size(), 24u);
  // Bytes per row come from the declarations: kernels are 2 times, 3 int64, 13 int32, 3 string ids, 1 double.
  EXPECT_EQ(bytes_per_row<KernelTable>(), 112u);
  EXPECT_EQ(column_count<KernelTable>(), 22u);
  EXPECT_EQ(bytes_per_row<CudaEventTable>(), 52u);
}

// Permutes, filters and truncates copies of `original` (kRows rows) and checks every column of each.
template <typename Table>
void expect_reorders_keep_rows_aligned(const Table& original, std::mt19937_64& rng, const std::string& what) {
  std::vector<uint32_t> order(kRows);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  Table permuted = original;
  permute_rows(permuted, order);
  expect_rows(original, permuted, std::vector<size_t>(order.begin(), order.end()), what + ": permute");

  std::vector<uint8_t> keep(kRows);
  std::vector<size_t> kept;
  for (size_t i = 0; i < kRows; ++i) {
    keep[i] = rng() % 3 != 0;
    if (keep[i]) kept.push_back(i);
  }
  Table filtered = original;
  keep_rows(filtered, keep);
  expect_rows(original, filtered, kept, what + ": keep");

  Table truncated = original;
  truncate_rows(truncated, 100);
  expect_rows(original, truncated, iota_rows(100), what + ": truncate");
}

TEST(TableColumns, PermuteKeepTruncateKeepRowsAligned) {
  std::mt19937_64 rng(19);
  for (bool with_optional : {false, true}) {
    for_each_trace_table([&](const TableInfo& info, auto get) {
      using Table = std::decay_t<decltype(get(std::declval<Trace&>()))>;
      const std::string what = std::string(info.name) + (with_optional ? " (optional columns filled)" : "");
      Table original;
      fill(original, kRows, rng, with_optional);
      ASSERT_EQ(original.size(), kRows) << what;
      expect_reorders_keep_rows_aligned(original, rng, what);

      Table reserved;
      reserved.reserve(kRows);
      EXPECT_EQ(reserved.size(), 0u) << what;
    });
  }
}

// A read narrowed to some columns (model/column_selection.h) leaves the others empty: every
// operation passes them by and keeps the columns read aligned, for random selections of every
// table a selection can narrow.
template <typename Table>
void check_unread_columns(std::mt19937_64& rng) {
  for (int round = 0; round < 8; ++round) {
    const uint64_t mask = rng() | time_columns<Table>();
    Table original;
    fill(original, kRows, rng, true);
    size_t index = 0;
    for_each_column(original, [&](const auto&, auto& values) {
      if (!((mask >> index++) & 1)) values.clear();
    });
    const std::string what = std::string(typeid(Table).name()) + " mask " + std::to_string(mask);
    ASSERT_EQ(original.size(), kRows) << what;
    expect_reorders_keep_rows_aligned(original, rng, what);

    // Two reads with one selection (the files of a rank directory) append column by column.
    Table appended = original;
    append_rows(appended, original);
    std::vector<size_t> twice = iota_rows(kRows);
    twice.insert(twice.end(), twice.begin(), twice.end());
    expect_rows(original, appended, twice, what + ": append");
  }
}

TEST(TableColumns, ColumnsLeftUnreadStayEmptyThroughEveryOperation) {
  std::mt19937_64 rng(23);
  std::apply([&](const auto&... table) { (check_unread_columns<std::decay_t<decltype(table)>>(rng), ...); },
             SelectableTables{});
}

TEST(TableColumns, AppendMovesEveryColumnByItsRole) {
  std::mt19937_64 rng(20);
  std::vector<StrId> remap(kStrings);
  for (size_t i = 0; i < kStrings; ++i) remap[i] = static_cast<StrId>(kStrings - 1 - i + 7);
  const RowMove move{1'000'000, int64_t{3} << 48, &remap, 5000};
  for (int case_ = 0; case_ < 4; ++case_) {
    const bool target_optional = case_ & 1, source_optional = case_ & 2;
    for_each_trace_table([&](const TableInfo& info, auto get) {
      using Table = std::decay_t<decltype(get(std::declval<Trace&>()))>;
      const std::string what = std::string(info.name) + " append, case " + std::to_string(case_);
      Table target, source;
      fill(target, 50, rng, target_optional);
      fill(source, kRows, rng, source_optional);
      const Table target_before = target;
      append_rows(target, source, move);
      ASSERT_EQ(target.size(), 50 + kRows) << what;
      Table head = target, tail = target;
      truncate_rows(head, 50);
      std::vector<uint8_t> keep(50 + kRows, 0);
      std::fill(keep.begin() + 50, keep.end(), 1);
      keep_rows(tail, keep);
      expect_rows(target_before, head, iota_rows(50), what + ": target rows");
      expect_rows(source, tail, iota_rows(kRows), what + ": appended rows",
                  [&](const auto& column, auto v) { return moved_value(column, v, move); });
    });
  }
  // The roles' moves themselves.
  const Column<KernelTable, TimeNs> start = std::get<0>(KernelTable::columns());
  EXPECT_EQ(moved_value(start, TimeNs{5}, move), 1'000'005);
  EXPECT_EQ(moved_value(start, kNoTime, move), kNoTime);
  const auto name = std::get<8>(KernelTable::columns());
  EXPECT_EQ(name.name, "name");
  EXPECT_EQ(moved_value(name, StrId{0}, move), kStrings - 1 + 7);
  EXPECT_EQ(moved_value(name, kNoStr, move), kNoStr);
  const auto pid = std::get<2>(KernelTable::columns());
  EXPECT_EQ(moved_value(pid, make_global_tid(0, 7, 0), move), make_global_tid(3, 7, 0));
  const auto kernel = std::get<0>(CollectiveTable::columns());
  EXPECT_EQ(moved_value(kernel, uint32_t{4}, move), 5004u);
}

// A trace with every table filled at random (Traces do not copy: one seed makes the same one twice).
Trace random_trace(uint64_t seed) {
  std::mt19937_64 rng(seed);
  Trace t;
  for (size_t i = 0; i < kStrings; ++i) t.strings.intern("s" + std::to_string(i));
  for_each_table(t, [&](const TableInfo&, auto& table) { fill(table, kRows, rng, true); });
  return t;
}

TEST(TableColumns, TimeSortKeepsRowsAlignedAndCollectivesOnTheirKernels) {
  Trace trace = random_trace(21);
  const Trace original = random_trace(21);
  sort_by_time(trace);
  for_each_trace_table([&](const TableInfo& info, auto get) {
    const auto& before = get(original);
    const auto& after = get(trace);
    std::vector<size_t> expected = iota_rows(before.size());
    if (info.order == TableOrder::kByTime) {
      const auto order = stable_time_order(*first_time_column(before));
      expected.assign(order.begin(), order.end());
      const auto& key = *first_time_column(after);
      EXPECT_TRUE(std::is_sorted(key.begin(), key.end())) << info.name;
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(before)>, CollectiveTable>) {
      // Collectives keep their rows; each one still names the kernel it named before the sort.
      for (size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(trace.kernels.start[after.kernel[i]], original.kernels.start[before.kernel[i]]);
        EXPECT_EQ(trace.kernels.name[after.kernel[i]], original.kernels.name[before.kernel[i]]);
      }
      return;
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(before)>, RangeTable>) {
      // Row ids number the sorted rows; every other column follows its row.
      for (size_t i = 0; i < after.size(); ++i) ASSERT_EQ(after.row_id[i], static_cast<int64_t>(i) + 1);
      auto renumbered = before;
      for (size_t i = 0; i < expected.size(); ++i) renumbered.row_id[expected[i]] = static_cast<int64_t>(i) + 1;
      expect_rows(renumbered, after, expected, std::string(info.name) + ": sort");
      return;
    }
    expect_rows(before, after, expected, std::string(info.name) + ": sort");
  });
}

TEST(TableColumns, TimeFilterKeepsWholeRows) {
  Trace trace = random_trace(22);
  trace.source.format = "kineto-json";
  const Trace original = random_trace(22);
  TraceFilter filter;
  filter.window = TimeWindow{100, 300};
  ASSERT_TRUE(apply_filter(trace, filter).ok());
  size_t filtered_tables = 0;
  for_each_trace_table([&](const TableInfo& info, auto get) {
    const auto& before = get(original);
    const auto& after = get(trace);
    filtered_tables += after.size() < before.size();
    // The kept rows are whole rows of the original, in order: match each to the next equal row.
    std::vector<size_t> expected;
    size_t next = 0;
    for (size_t j = 0; j < after.size(); ++j) {
      for (; next < before.size(); ++next) {
        bool equal = true;
        for_each_column(after, [&](const auto& column, const auto& values) {
          const auto& b = column.of(before);
          if (!b.empty()) equal = equal && same(values[j], b[next]);
        });
        if (equal) break;
      }
      ASSERT_LT(next, before.size()) << info.name << ": row " << j << " is no row of the original";
      expected.push_back(next++);
    }
    expect_rows(before, after, expected, std::string(info.name) + ": filter");
  });
  EXPECT_GE(filtered_tables, 12u);  // every table with a start, an end and an owner
}

}  // namespace
}  // namespace tracedoc
