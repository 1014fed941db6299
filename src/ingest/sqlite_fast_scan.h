// A read-only scanner of SQLite table b-trees that decodes records straight from the memory-mapped
// file (https://www.sqlite.org/fileformat2.html), bypassing SQLite's virtual machine. Table scans of
// nsys exports are the whole cost of `tracedoc stats`, and this is several times faster than
// sqlite3_step + sqlite3_column_*. Anything unusual (WAL mode, a damaged page, a non-UTF-8
// database) makes it return an error, and the reader falls back to the SQLite library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tracedoc {

// One decoded column value. Text and blobs point into the mapped file, or into the scanner's
// scratch buffer for values that spill onto overflow pages (valid until the next row). `i` holds
// the value as an integer whatever the type (reals truncated, 0 for NULL, text and blobs), so that
// integer columns, nearly all of an export, read without branching on the type.
struct SqlValue {
  enum class Type : uint8_t { kNull, kInt, kReal, kText, kBlob };
  Type type = Type::kNull;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  bool is_null() const { return type == Type::kNull; }
};

class MappedSqliteFile {
 public:
  ~MappedSqliteFile();
  static Result<std::unique_ptr<MappedSqliteFile>> open(const std::string& path);

  // Decodes every row of the table rooted at `root_page`, in rowid order. `columns` are record
  // positions (table_info cid order); `rowid_column` is the position of an INTEGER PRIMARY KEY
  // column (stored as the rowid), or -1. Calls on_count(total rows), then row(values) with one
  // SqlValue per requested column, plus one last value that is always NULL (for absent columns).
  template <typename RowFn, typename CountFn>
  Status scan(uint32_t root_page, const std::vector<int>& columns, int rowid_column, RowFn&& row,
              CountFn&& on_count) const;

 private:
  MappedSqliteFile() = default;
  Status leaf_pages(uint32_t root_page, std::vector<uint32_t>& out) const;
  // Drops decoded pages from this process's resident memory (they stay in the page cache), so a
  // multi-GB export does not count against the process; a page touched again is simply re-read.
  static constexpr size_t kReleaseBatch = 2048;
  void release_pages(uint32_t first, uint32_t last) const;
  // Decodes one cell; fills `values` for the requested columns. Returns false on corruption.
  // `overflow_left`: overflow pages the rest of the scan may still follow. In a sound file each
  // belongs to one cell, so a table's scan follows at most page_count_ of them; a damaged file
  // whose cells share (or loop through) a chain would otherwise copy file-size payloads per cell
  // (quadratic time; with a chain that loops, unbounded memory: overflow_chain_loop.sqlite in
  // fuzz/regressions/fuzz_nsys_sqlite).
  bool decode_cell(const uint8_t* page, uint16_t cell_offset, const std::vector<int>& columns, int rowid_column,
                   std::vector<SqlValue>& values, std::string& scratch, uint32_t& overflow_left) const;
  const uint8_t* page(uint32_t number) const {
    return data_ + static_cast<size_t>(number - 1) * page_size_;
  }

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint32_t page_size_ = 0;
  uint32_t usable_ = 0;
  uint32_t page_count_ = 0;
};

template <typename RowFn, typename CountFn>
Status MappedSqliteFile::scan(uint32_t root_page, const std::vector<int>& columns, int rowid_column,
                              RowFn&& row, CountFn&& on_count) const {
  std::vector<uint32_t> leaves;
  TRACEDOC_RETURN_IF_ERROR(leaf_pages(root_page, leaves));
  size_t total = 0;
  for (uint32_t number : leaves) {
    const uint8_t* p = page(number);
    const size_t header = number == 1 ? 100 : 0;
    total += static_cast<size_t>((p[header + 3] << 8) | p[header + 4]);
  }
  on_count(total);
  std::vector<SqlValue> values(columns.size() + 1);  // the extra one stays NULL
  std::string scratch;
  uint32_t overflow_left = page_count_;  // see decode_cell
  uint32_t batch_low = UINT32_MAX, batch_high = 0;
  size_t in_batch = 0;
  for (uint32_t number : leaves) {
    batch_low = std::min(batch_low, number);
    batch_high = std::max(batch_high, number);
    if (++in_batch == kReleaseBatch) {
      release_pages(batch_low, batch_high);
      batch_low = UINT32_MAX, batch_high = 0, in_batch = 0;
    }
    const uint8_t* p = page(number);
    const size_t header = number == 1 ? 100 : 0;
    const uint16_t cells = static_cast<uint16_t>((p[header + 3] << 8) | p[header + 4]);
    const uint8_t* pointers = p + header + 8;
    for (uint16_t c = 0; c < cells; ++c) {
      const uint16_t offset = static_cast<uint16_t>((pointers[2 * c] << 8) | pointers[2 * c + 1]);
      if (!decode_cell(p, offset, columns, rowid_column, values, scratch, overflow_left)) {
        return BadInput("damaged SQLite table page " + std::to_string(number));
      }
      row(std::span<const SqlValue>(values));
    }
  }
  if (in_batch) release_pages(batch_low, batch_high);
  return Status::Ok();
}

}  // namespace tracedoc
