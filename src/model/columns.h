// Every model table declares its columns once, in a column list: name, C++ type, role, the value
// that means "absent" and a one-line description. TRACEDOC_TABLE turns the list into the table's
// std::vector members and into columns(), a tuple of Column descriptions, and everything generic
// is written once on top of that: reserve, row count, the time sort and any permutation, filtering
// (--filter-*), truncation, appending one trace's rows to another's (rank merges), bytes per row,
// and the SQL and Arrow views of a table. A column added to a list needs no other edit for them.
//
//   #define TRACEDOC_OVERHEAD_COLUMNS(X)
//     X(start, TimeNs, kTime, kNoTime, "when the overhead began")
//     X(name, StrId, kString, kNoStr, "what the profiler was doing")      (a backslash ends each line)
//   struct OverheadTable { TRACEDOC_TABLE(OverheadTable, TRACEDOC_OVERHEAD_COLUMNS) };
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/huge_pages.h"
#include "model/string_pool.h"

namespace tracedoc {

using TimeNs = int64_t;
// The absent values (SQL NULL) of the column types.
inline constexpr TimeNs kNoTime = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kNoValue = std::numeric_limits<int64_t>::min();
inline constexpr int32_t kNoInt32 = std::numeric_limits<int32_t>::min();
inline constexpr uint8_t kNoKind = 0xFF;  // an enum code not recorded

// What a column's values are, which says what generic operations do to them.
enum class ColumnRole : uint8_t {
  kTime,           // int64 ns on the trace's timebase; appended rows move to the target's clock
  kOwner,          // a global thread or process id (trace.h's scheme); a merged rank tags it
  kFileId,         // an id numbered within one file (Python call ids); a merged rank tags it too
  kString,         // a StringPool id; appended rows map it into the target's pool
  kKernelRow,      // a row of Trace::kernels; renumbered when the kernels are reordered or appended
  kValue,          // any other number or code, copied as it is
  kOptionalValue,  // a value only some sources record: the column is either empty or full
};

template <typename Table, typename T>
struct Column {
  using value_type = T;
  std::string_view name;
  std::vector<T> Table::*member;
  ColumnRole role;
  T absent;  // the sentinel that stands for SQL NULL
  std::string_view description;

  std::vector<T>& of(Table& t) const { return t.*member; }
  const std::vector<T>& of(const Table& t) const { return t.*member; }
  bool optional() const { return role == ColumnRole::kOptionalValue; }
  // Whether a value stands for SQL NULL: the declared sentinel, or NaN in a floating-point column.
  bool is_absent(T value) const {
    if constexpr (std::is_floating_point_v<T>)
      return value != value;
    else
      return value == absent;
  }
};

#define TRACEDOC_COLUMN_MEMBER(name, type, role, absent, description) std::vector<type> name;
#define TRACEDOC_COLUMN_ENTRY(name, type, role, absent, description) \
  ::tracedoc::Column<Self, type>{#name, &Self::name, ::tracedoc::ColumnRole::role, absent, description},
// The members and columns() of a table from its column list; size() is the first column's length
// (never an optional one), reserve(n) makes room for n rows in every column that every row fills.
#define TRACEDOC_TABLE(TableType, COLUMN_LIST)                                             \
  COLUMN_LIST(TRACEDOC_COLUMN_MEMBER)                                                      \
  static constexpr auto columns() {                                                        \
    using Self = TableType;                                                                \
    return std::tuple{COLUMN_LIST(TRACEDOC_COLUMN_ENTRY)};                                 \
  }                                                                                        \
  size_t size() const {                                                                    \
    /* the first column's member, found once at compile time: loops call size() per row */ \
    static constexpr auto first = std::get<0>(columns()).member;                           \
    return (this->*first).size();                                                          \
  }                                                                                        \
  void reserve(size_t n) { ::tracedoc::reserve_rows(*this, n); }

// f(column, values) for every column of a table, in declaration order (values const for a const table).
template <typename Table, typename F>
void for_each_column(Table& table, F&& f) {
  using Plain = std::remove_const_t<Table>;
  std::apply([&](const auto&... column) { (f(column, column.of(table)), ...); }, Plain::columns());
}

// f(column) for every column of a table type.
template <typename Table, typename F>
constexpr void for_each_column_of(F&& f) {
  std::apply([&](const auto&... column) { (f(column), ...); }, Table::columns());
}

template <typename Table>
constexpr size_t column_count() {
  return std::tuple_size_v<decltype(Table::columns())>;
}

// The table's first time column (its sort key), or null when it has none.
template <typename Table>
const std::vector<TimeNs>* first_time_column(const Table& table) {
  const std::vector<TimeNs>* key = nullptr;
  for_each_column(table, [&](const auto& column, const auto& values) {
    if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::vector<TimeNs>>) {
      if (!key && column.role == ColumnRole::kTime) key = &values;
    }
  });
  return key;
}

// Bytes one row takes in memory, every column counted (optional ones included).
template <typename Table>
size_t bytes_per_row() {
  size_t bytes = 0;
  for_each_column_of<Table>(
      [&](const auto& column) { bytes += sizeof(typename std::decay_t<decltype(column)>::value_type); });
  return bytes;
}

// `mask` (a bit per column in declaration order, model/column_selection.h) narrows it to the columns
// a read fills.
template <typename Table>
void reserve_rows(Table& table, size_t n, uint64_t mask = ~uint64_t{0}) {
  static_assert(column_count<Table>() <= 64, "a column mask holds 64 columns");
  size_t index = 0;
  for_each_column(table, [&](const auto& column, auto& values) {
    // An optional column: a table that never fills it keeps it empty.
    if (!column.optional() && ((mask >> index) & 1)) reserve_on_huge_pages(values, n);
    ++index;
  });
}

// n rows in column `index` (declaration order) of a table, unless it is optional (new rows hold
// zeros): for readers that write rows by index, several parts of a table at once, and size the
// columns of a large table at once on several threads.
template <typename Table>
void resize_column(Table& table, size_t index, size_t n) {
  size_t at = 0;
  for_each_column(table, [&](const auto& column, auto& values) {
    if (at++ != index || column.optional()) return;
    reserve_on_huge_pages(values, n);  // before resize's zeros touch the pages
    values.resize(n);
  });
}

// Keeps the rows marked in `keep` (one flag per row), in order.
template <typename Table>
void keep_rows(Table& table, const std::vector<uint8_t>& keep) {
  for_each_column(table, [&](const auto&, auto& values) {
    if (values.empty()) return;  // an optional column not recorded
    size_t out = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      if (keep[i]) values[out++] = std::move(values[i]);
    }
    values.resize(out);
  });
}

// Drops the rows from index n on.
template <typename Table>
void truncate_rows(Table& table, size_t n) {
  for_each_column(table, [&](const auto&, auto& values) {
    if (values.size() > n) values.resize(n);
  });
}

// values[i] = old values[order[i]]. `order` holds every row once.
template <typename T>
void gather_values(std::vector<T>& values, const std::vector<uint32_t>& order) {
  if (values.size() != order.size()) return;  // an optional column not recorded
  std::vector<T> out;
  out.reserve(values.size());
  for (uint32_t i : order) out.push_back(values[i]);
  values.swap(out);
}

// Puts every column of a table in `order` (row i becomes old row order[i]). Tables whose columns are
// reordered in parallel take one gather_values job per column instead (see sort_by_time).
template <typename Table>
void permute_rows(Table& table, const std::vector<uint32_t>& order) {
  for_each_column(table, [&](const auto&, auto& values) { gather_values(values, order); });
}

// Renumbers the kernel-row columns of a table after the kernels were reordered: new_row[old] = new.
template <typename Table>
void renumber_kernel_rows(Table& table, const std::vector<uint32_t>& new_row) {
  for_each_column(table, [&](const auto& column, auto& values) {
    if constexpr (std::is_same_v<std::decay_t<decltype(values)>, std::vector<uint32_t>>) {
      if (column.role != ColumnRole::kKernelRow) return;
      for (auto& row : values) row = row == column.absent ? row : new_row[row];
    }
  });
}

// How the rows of one trace change when they are appended to another's (a rank merged into the
// rank directory's trace).
struct RowMove {
  TimeNs time_shift = 0;                        // added to every time (the source's clock base less the target's)
  int64_t id_tag = 0;                           // ORed into owner ids and file ids
  const std::vector<StrId>* strings = nullptr;  // the source's string ids -> the target's; null: the same pool
  uint32_t kernel_row_base = 0;                 // where the source's kernels start in the target's table
};

// One value of a column as the target stores it.
template <typename Table, typename T>
T moved_value(const Column<Table, T>& column, T value, const RowMove& move) {
  if (value == column.absent) return value;
  if constexpr (std::is_same_v<T, int64_t>) {
    if (column.role == ColumnRole::kTime) return value + move.time_shift;
    if (column.role == ColumnRole::kOwner || column.role == ColumnRole::kFileId) return value | move.id_tag;
  }
  if constexpr (std::is_same_v<T, uint32_t>) {
    if (column.role == ColumnRole::kString) return move.strings ? (*move.strings)[value] : value;
    if (column.role == ColumnRole::kKernelRow) return value + move.kernel_row_base;
  }
  return value;
}

// Appends the source rows of one column to the target's; `source_rows` is the source table's row
// count, which fills an optional column the source did not record with its absent value.
template <typename Table, typename T>
void append_values(const Column<Table, T>& column, std::vector<T>& target, const std::vector<T>& source,
                   size_t source_rows, const RowMove& move) {
  if (column.optional() && source.empty()) {
    target.insert(target.end(), source_rows, column.absent);
    return;
  }
  const ColumnRole r = column.role;
  const bool unchanged =
      r == ColumnRole::kValue || r == ColumnRole::kOptionalValue || (r == ColumnRole::kTime && move.time_shift == 0) ||
      ((r == ColumnRole::kOwner || r == ColumnRole::kFileId) && move.id_tag == 0) ||
      (r == ColumnRole::kString && !move.strings) || (r == ColumnRole::kKernelRow && move.kernel_row_base == 0);
  if (unchanged) {
    target.insert(target.end(), source.begin(), source.end());
    return;
  }
  for (const T& v : source) target.push_back(moved_value(column, v, move));
}

// Appends every row of `source` to `target` (an optional column stays empty while neither has it).
template <typename Table>
void append_rows(Table& target, const Table& source, const RowMove& move = {}) {
  const size_t target_rows = target.size(), source_rows = source.size();
  std::apply(
      [&](const auto&... column) {
        (([&] {
           auto& to = column.of(target);
           const auto& from = column.of(source);
           if (column.optional()) {
             if (to.empty() && from.empty()) return;
             if (to.empty()) to.assign(target_rows, column.absent);
           }
           append_values(column, to, from, source_rows, move);
         }()),
         ...);
      },
      Table::columns());
}

}  // namespace tracedoc
