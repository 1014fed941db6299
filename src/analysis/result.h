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
  bool stable = false;  // text that outlives the report (the trace's string pool): never copied

  static Cell null() { return {}; }
  static Cell integer(int64_t v) {
    Cell c;
    c.type = Type::kInt;
    c.i = v;
    return c;
  }
  static Cell real(double v) {
    Cell c;
    c.type = Type::kReal;
    c.d = v;
    return c;
  }
  static Cell text(std::string_view v) {
    Cell c;
    c.type = Type::kText;
    c.s = v;
    return c;
  }
  static Cell pooled(std::string_view v) {
    Cell c = text(v);
    c.stable = true;
    return c;
  }
  bool is_null() const { return type == Type::kNull; }
};

class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void begin(const std::vector<ColumnSpec>& columns) = 0;
  // After begin(): how many rows will follow, when the report knows (a sink that keeps the rows
  // makes room for them once).
  virtual void expect_rows(size_t /*rows*/) {}
  // Cells are only valid during the call.
  virtual void row(std::span<const Cell> cells) = 0;
  virtual void end() = 0;
};

// Collects a whole report (tests, reports computed ahead on another thread). Cells are stored
// flat, row after row; text that is not `stable` is copied into the sink's own storage.
class TableSink : public RowSink {
 public:
  void begin(const std::vector<ColumnSpec>& columns) override {
    columns_ = columns;
    cells_.clear();
  }
  // A large report's rows at once: growing by doubling would fault in about twice the memory.
  void expect_rows(size_t rows) override { cells_.reserve(cells_.size() + rows * columns_.size()); }
  void row(std::span<const Cell> cells) override {
    for (Cell c : cells) {
      if (c.type == Cell::Type::kText && !c.stable) c.s = strings_.emplace_back(c.s);
      cells_.push_back(c);
    }
  }
  void end() override {}

  const std::vector<ColumnSpec>& columns() const { return columns_; }
  size_t row_count() const { return columns_.empty() ? 0 : cells_.size() / columns_.size(); }
  std::span<const Cell> row_at(size_t r) const { return {cells_.data() + r * columns_.size(), columns_.size()}; }
  std::vector<std::span<const Cell>> rows() const {
    std::vector<std::span<const Cell>> out;
    for (size_t r = 0; r < row_count(); ++r) out.push_back(row_at(r));
    return out;
  }

 private:
  std::vector<ColumnSpec> columns_;
  std::vector<Cell> cells_;
  std::deque<std::string> strings_;
};

}  // namespace tracedoc
