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
#include <optional>
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
  // Threads may scan at once (each scan has its own buffers).
  template <typename RowFn, typename CountFn>
  Status scan(uint32_t root_page, const std::vector<int>& columns, int rowid_column, RowFn&& row,
              CountFn&& on_count) const;

  // A table's leaf pages in rowid order, and what its interior pages' keys say of the rowids each
  // holds: no rowid of leaf i is above upper[i], nor at or below upper[i - 1]. The first leaf's
  // first rowid and the last leaf's last are read from those two leaves.
  struct TableLeaves {
    std::vector<uint32_t> pages;
    std::vector<int64_t> upper;
    int64_t first_rowid = 1;
    // The most rows leaves [begin, end) can hold: one per rowid their keys leave room for. That
    // is their row count when the rowids have no gaps, as in a table rows were only appended to
    // (an export's); nullopt when the keys allow more rows than the pages could hold (rowids
    // far apart), which only counting the rows tells.
    std::optional<size_t> rows_at_most(size_t begin, size_t end) const;
    size_t cells_per_page_at_most = 0;
  };

  // The same in parts, for threads that read one table at once: its leaf pages (the interior pages
  // read; the leaves are checked when read), the rows a run of them holds, and the rows of a run of
  // them (without on_count). Consecutive runs, scanned at once and joined in order, are the
  // table's rows.
  Status leaf_pages(uint32_t root_page, TableLeaves& out) const;
  Result<size_t> count_rows(std::span<const uint32_t> leaves) const;
  template <typename RowFn>
  Status scan_leaves(std::span<const uint32_t> leaves, const std::vector<int>& columns, int rowid_column,
                     RowFn&& row) const;

 private:
  SqlitePageFile() = default;
  // Reads pages [first, first + count) into `buffer` (resized to fit). A short read means the file
  // shrank under the reader: an IoError naming it.
  Status read_pages(uint32_t first, uint32_t count, std::vector<uint8_t>& buffer) const;
  // Runs of consecutive page numbers in `leaves`, [begin, end) indices (a table's leaves are mostly
  // consecutive in an export, so this is a few large reads rather than one per page).
  std::vector<std::pair<size_t, size_t>> runs_of(std::span<const uint32_t> leaves) const;
  // The cells of leaf page `number` (its bytes at `page`), or nullopt when it is no table leaf or
  // its cell pointers do not fit in it: leaf_pages takes the leaves unread, so each is checked here.
  std::optional<uint16_t> leaf_cells(const uint8_t* page, uint32_t number) const;
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
                            CountFn&& on_count) const {
  TableLeaves leaves;
  TRACEDOC_RETURN_IF_ERROR(leaf_pages(root_page, leaves));
  // The most rows the table can hold comes first, so that the caller reserves its columns once:
  // from the interior pages' keys, without reading the leaves twice; counted from each leaf's
  // header only when the keys leave room for far more rows than the pages could hold.
  std::optional<size_t> total = leaves.rows_at_most(0, leaves.pages.size());
  if (!total) {
    TRACEDOC_ASSIGN_OR_RETURN(total, count_rows(leaves.pages));
  }
  on_count(*total);
  return scan_leaves(leaves.pages, columns, rowid_column, row);
}

template <typename RowFn>
Status SqlitePageFile::scan_leaves(std::span<const uint32_t> leaves, const std::vector<int>& columns, int rowid_column,
                                   RowFn&& row) const {
  std::vector<uint8_t> buffer, overflow;
  std::vector<SqlValue> values(columns.size() + 1);  // the extra one stays NULL
  std::string scratch;
  uint32_t overflow_left = page_count_;  // see decode_cell
  Status io;
  for (const auto& [begin, end] : runs_of(leaves)) {
    TRACEDOC_RETURN_IF_ERROR(read_pages(leaves[begin], static_cast<uint32_t>(end - begin), buffer));
    for (size_t l = begin; l < end; ++l) {
      const uint32_t number = leaves[l];
      const uint8_t* p = buffer.data() + (l - begin) * page_size_;
      const std::optional<uint16_t> cells = leaf_cells(p, number);
      if (!cells) return BadInput("damaged SQLite table page " + std::to_string(number));
      const uint8_t* pointers = p + (number == 1 ? 100 : 0) + 8;
      for (uint16_t c = 0; c < *cells; ++c) {
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
