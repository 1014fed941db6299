// A read-only scanner of SQLite table b-trees that decodes records straight from the file's pages
// (https://www.sqlite.org/fileformat2.html), bypassing SQLite's virtual machine. Table scans of
// nsys exports are the whole cost of `tracedoc stats`, and this is several times faster than
// sqlite3_step + sqlite3_column_*. Anything unusual (WAL mode, a damaged page, a non-UTF-8
// database) makes it return BadInput, and the reader falls back to the SQLite library.
//
// Pages are read with pread, never memory-mapped: a mapped file that another process truncates
// kills the reader with SIGBUS on the first page past the new end. A short read instead is an
// IoError naming the file ("it shrank while being read"), which the reader does not retry. The
// page count is taken at open, so a file that grows is read at the size it had then.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tracedoc {

// One decoded column value. Text and blobs point into the scanner's page buffer, or into its
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

// The error of a file that another program truncated while it was read (-1: its size now is unknown).
Status file_shrank(const std::string& path, uint64_t bytes_at_open, int64_t bytes_now);

class SqlitePageFile {
 public:
  ~SqlitePageFile();
  SqlitePageFile(const SqlitePageFile&) = delete;
  SqlitePageFile& operator=(const SqlitePageFile&) = delete;
  static Result<std::unique_ptr<SqlitePageFile>> open(const std::string& path);

  // Decodes every row of the table rooted at `root_page`, in rowid order. `columns` are record
  // positions (table_info cid order); `rowid_column` is the position of an INTEGER PRIMARY KEY
  // column (stored as the rowid), or -1. Calls on_count(total rows), then row(values) with one
  // SqlValue per requested column, plus one last value that is always NULL (for absent columns).
  // Threads may scan at once (each scan has its own buffers). With `parts` > 1 the scan reads only
  // part `part` of the table's leaf pages, split in equal counts in rowid order: the parts of one
  // table, scanned at once and joined in order, are its rows.
  // `count_first` false: on_count is not called (a caller that counted with count_rows saves a
  // read of every page).
  template <typename RowFn, typename CountFn>
  Status scan(uint32_t root_page, const std::vector<int>& columns, int rowid_column, RowFn&& row, CountFn&& on_count,
              size_t part = 0, size_t parts = 1, bool count_first = true) const;
  // The rows scan(root_page, ..., part, parts) gives, from the leaves' headers alone.
  Result<size_t> count_rows(uint32_t root_page, size_t part = 0, size_t parts = 1) const;

 private:
  SqlitePageFile() = default;
  // Reads pages [first, first + count) into `buffer` (resized to fit). A short read means the file
  // shrank under the reader: an IoError naming it.
  Status read_pages(uint32_t first, uint32_t count, std::vector<uint8_t>& buffer) const;
  Status leaf_pages(uint32_t root_page, std::vector<uint32_t>& out) const;
  // The leaves of part `part` of `parts` (all by default), and their runs of consecutive pages (a
  // table's leaves are mostly consecutive in an export, so this is a few large reads rather than
  // one per page).
  Status part_leaves(uint32_t root_page, size_t part, size_t parts, std::vector<uint32_t>& leaves,
                     std::vector<std::pair<size_t, size_t>>& runs) const;
  // The rows of the leaves (their type and cell count checked: leaf_pages took them unread).
  Status count_leaf_rows(const std::vector<uint32_t>& leaves, const std::vector<std::pair<size_t, size_t>>& runs,
                         std::vector<uint8_t>& buffer, size_t& total) const;
  // The most bytes one read of a run of leaves takes.
  static constexpr uint32_t kMaxRunBytes = 1u << 20;
  // Decodes one cell; fills `values` for the requested columns. Returns false on corruption.
  // `overflow_left`: overflow pages the rest of the scan may still follow. In a sound file each
  // belongs to one cell, so a table's scan follows at most page_count_ of them; a damaged file
  // whose cells share (or loop through) a chain would otherwise copy file-size payloads per cell
  // (quadratic time; with a chain that loops, unbounded memory: overflow_chain_loop.sqlite in
  // fuzz/regressions/fuzz_nsys_sqlite). `overflow` is the buffer overflow pages are read into;
  // a read error is returned through `io`.
  bool decode_cell(const uint8_t* page, uint16_t cell_offset, const std::vector<int>& columns, int rowid_column,
                   std::vector<SqlValue>& values, std::string& scratch, uint32_t& overflow_left,
                   std::vector<uint8_t>& overflow, Status& io) const;

  int fd_ = -1;
  std::string path_;
  size_t size_ = 0;
  uint32_t page_size_ = 0;
  uint32_t usable_ = 0;
  uint32_t page_count_ = 0;
};

template <typename RowFn, typename CountFn>
Status SqlitePageFile::scan(uint32_t root_page, const std::vector<int>& columns, int rowid_column, RowFn&& row,
                            CountFn&& on_count, size_t part, size_t parts, bool count_first) const {
  std::vector<uint32_t> leaves;
  std::vector<std::pair<size_t, size_t>> runs;  // [begin, end) into `leaves`
  TRACEDOC_RETURN_IF_ERROR(part_leaves(root_page, part, parts, leaves, runs));
  std::vector<uint8_t> buffer, overflow;
  // The row count (from each leaf's header) comes first, so that the caller reserves its columns
  // once: a first pass over the runs (the second reads them from the page cache).
  if (count_first) {
    size_t total = 0;
    TRACEDOC_RETURN_IF_ERROR(count_leaf_rows(leaves, runs, buffer, total));
    on_count(total);
  }
  std::vector<SqlValue> values(columns.size() + 1);  // the extra one stays NULL
  std::string scratch;
  uint32_t overflow_left = page_count_;  // see decode_cell
  Status io;
  for (const auto& [begin, end] : runs) {
    TRACEDOC_RETURN_IF_ERROR(read_pages(leaves[begin], static_cast<uint32_t>(end - begin), buffer));
    for (size_t l = begin; l < end; ++l) {
      const uint32_t number = leaves[l];
      const uint8_t* p = buffer.data() + (l - begin) * page_size_;
      const size_t header = number == 1 ? 100 : 0;
      const uint16_t cells = static_cast<uint16_t>((p[header + 3] << 8) | p[header + 4]);
      if (p[header] != 0x0D || header + 8u + 2u * cells > usable_) {  // (changed since it was counted)
        return BadInput("damaged SQLite table page " + std::to_string(number));
      }
      const uint8_t* pointers = p + header + 8;
      for (uint16_t c = 0; c < cells; ++c) {
        const uint16_t offset = static_cast<uint16_t>((pointers[2 * c] << 8) | pointers[2 * c + 1]);
        if (!decode_cell(p, offset, columns, rowid_column, values, scratch, overflow_left, overflow, io)) {
          if (!io.ok()) return io;
          return BadInput("damaged SQLite table page " + std::to_string(number));
        }
        row(std::span<const SqlValue>(values));
      }
    }
  }
  return Status::Ok();
}

}  // namespace tracedoc
