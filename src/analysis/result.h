// Reports are data before they are text: a report emits typed rows to a RowSink, and a writer in
// report/ (or a test) turns them into CSV, columns, JSON, ... Rows are streamed so that trace
// reports over millions of events never need to be held in memory.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tracedoc {

// What a numeric column measures; writers convert units (ns -> ms, B -> MB) from this.
enum class Unit : uint8_t { kNone, kDurNs, kTsNs, kMemB, kThruB, kRatioPct };

struct ColumnSpec {
  std::string name;
  Unit unit = Unit::kNone;
};

struct Cell {
  enum class Type : uint8_t { kNull, kInt, kReal, kText };
  Type type = Type::kNull;
  int64_t i = 0;
  double d = 0;
  std::string_view s;

  static Cell null() { return {}; }
  static Cell integer(int64_t v) { Cell c; c.type = Type::kInt; c.i = v; return c; }
  static Cell real(double v) { Cell c; c.type = Type::kReal; c.d = v; return c; }
  static Cell text(std::string_view v) { Cell c; c.type = Type::kText; c.s = v; return c; }
  bool is_null() const { return type == Type::kNull; }
};

class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void begin(const std::vector<ColumnSpec>& columns) = 0;
  // Cells are only valid during the call.
  virtual void row(std::span<const Cell> cells) = 0;
  virtual void end() = 0;
};

// Collects a whole report (tests, small reports that need a second pass).
class TableSink : public RowSink {
 public:
  void begin(const std::vector<ColumnSpec>& columns) override { columns_ = columns; }
  void row(std::span<const Cell> cells) override {
    std::vector<Cell> copy(cells.begin(), cells.end());
    for (auto& c : copy) {
      if (c.type == Cell::Type::kText) c.s = strings_.emplace_back(c.s);
    }
    rows_.push_back(std::move(copy));
  }
  void end() override {}

  const std::vector<ColumnSpec>& columns() const { return columns_; }
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }

 private:
  std::vector<ColumnSpec> columns_;
  std::vector<std::vector<Cell>> rows_;
  std::deque<std::string> strings_;
};

}  // namespace tracedoc
