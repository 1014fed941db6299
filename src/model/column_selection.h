// Which columns of the large event tables a read fills. A report that sums kernel times by name
// reads three of the kernel table's 22 columns; on a 3-million-row export the other columns are
// most of the read's work and of its memory. Reports declare the columns they read
// (ReportDef::columns), a read fills those and leaves the others empty, and the generic operations
// of columns.h treat an empty column as not read (sort, filter, truncate and append pass it by).
//
// A selection is a bit per column, in the order of the table's column list (columns.h), for the
// tables below; every other table is always read whole. The default selection is every column.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

#include "model/trace.h"

namespace tracedoc {

// The tables a selection can narrow, in one list: the largest ones of an nsys export.
using SelectableTables = std::tuple<KernelTable, MemcpyTable, MemsetTable, ApiTable, RangeTable, OsCallTable>;

namespace column_selection_detail {
template <typename Table, size_t I = 0>
constexpr size_t slot() {
  if constexpr (I == std::tuple_size_v<SelectableTables>) {
    return I;  // not selectable: read whole
  } else if constexpr (std::is_same_v<Table, std::tuple_element_t<I, SelectableTables>>) {
    return I;
  } else {
    return slot<Table, I + 1>();
  }
}
}  // namespace column_selection_detail

// The bit of one column of a table (its position in the table's column list).
template <typename Table, typename T>
constexpr uint64_t column_bit(std::vector<T> Table::*member) {
  static_assert(column_count<Table>() <= 64, "a column mask holds 64 columns");
  uint64_t bit = 0;
  size_t index = 0;
  std::apply(
      [&](const auto&... column) {
        (([&] {
           if constexpr (std::is_same_v<std::decay_t<decltype(column.member)>, std::vector<T> Table::*>) {
             if (column.member == member) bit = uint64_t{1} << index;
           }
           ++index;
         }()),
         ...);
      },
      Table::columns());
  return bit;
}

// The time columns of a table: always read, as the rows' order and every time filter need them.
template <typename Table>
constexpr uint64_t time_columns() {
  uint64_t bits = 1;  // the first column: the table's row count (columns.h)
  size_t index = 0;
  for_each_column_of<Table>([&](const auto& column) {
    if (column.role == ColumnRole::kTime) bits |= uint64_t{1} << index;
    ++index;
  });
  return bits;
}

class ColumnSelection {
 public:
  // Every column of every table.
  ColumnSelection() { masks_.fill(~uint64_t{0}); }
  // Only the time columns of the selectable tables, to add to.
  static ColumnSelection time_only() {
    ColumnSelection s;
    s.masks_.fill(0);
    return s;
  }

  // Adds columns of one table: select<KernelTable>(&KernelTable::name, &KernelTable::short_name).
  template <typename Table, typename... Members>
  ColumnSelection& select(Members... members) {
    if constexpr (constexpr size_t s = column_selection_detail::slot<Table>(); s < kSlots) {
      masks_[s] |= (uint64_t{0} | ... | column_bit<Table>(members));
    }
    return *this;
  }
  // Adds every column of one table.
  template <typename Table>
  ColumnSelection& select_all() {
    if constexpr (constexpr size_t s = column_selection_detail::slot<Table>(); s < kSlots) masks_[s] = ~uint64_t{0};
    return *this;
  }
  ColumnSelection& operator|=(const ColumnSelection& other) {
    for (size_t s = 0; s < kSlots; ++s) masks_[s] |= other.masks_[s];
    return *this;
  }

  // The columns of Table a read fills: those selected and the time columns.
  template <typename Table>
  uint64_t mask() const {
    constexpr size_t s = column_selection_detail::slot<Table>();
    if constexpr (s < kSlots) {
      constexpr uint64_t times = time_columns<Table>();
      return masks_[s] | times;
    } else {
      return ~uint64_t{0};
    }
  }
  template <typename Table, typename T>
  bool has(std::vector<T> Table::*member) const {
    return (mask<Table>() & column_bit<Table>(member)) != 0;
  }
  // Whether every column of every table is read (nothing left empty).
  bool whole() const {
    for (uint64_t m : masks_)
      if (m != ~uint64_t{0}) return false;
    return true;
  }

 private:
  static constexpr size_t kSlots = std::tuple_size_v<SelectableTables>;
  std::array<uint64_t, kSlots> masks_{};
};

}  // namespace tracedoc
