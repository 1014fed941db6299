#include "ingest/sqlite_fast_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace tracedoc {

namespace {

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// SQLite varint: 1..9 bytes, big-endian 7-bit groups, the 9th byte contributes 8 bits.
inline const uint8_t* read_varint(const uint8_t* p, const uint8_t* end, uint64_t* out) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    if (p >= end) return nullptr;
    const uint8_t b = *p++;
    v = (v << 7) | (b & 0x7F);
    if (!(b & 0x80)) {
      *out = v;
      return p;
    }
  }
  if (p >= end) return nullptr;
  *out = (v << 8) | *p++;
  return p;
}

inline size_t serial_size(uint64_t t) {
  static constexpr uint8_t kSizes[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  if (t < 12) return kSizes[t];
  return static_cast<size_t>((t - 12) / 2);
}

// Big-endian two's complement integers of 1, 2, 3, 4, 6 or 8 bytes.
inline int64_t read_int(const uint8_t* p, size_t n) {
  switch (n) {
    case 1: return static_cast<int8_t>(p[0]);
    case 2: return static_cast<int16_t>((p[0] << 8) | p[1]);
    case 4: return static_cast<int32_t>(be32(p));
    case 8: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<int64_t>(__builtin_bswap64(v));
    }
    default: {
      int64_t v = static_cast<int8_t>(p[0]);  // sign-extend from the first byte
      for (size_t i = 1; i < n; ++i) v = (v << 8) | p[i];
      return v;
    }
  }
}

}  // namespace

Status file_shrank(const std::string& path, uint64_t bytes_at_open, int64_t bytes_now) {
  return IoError(fmt::format("{}: the file shrank while being read ({} bytes when opened, {} now)", path, bytes_at_open,
                             bytes_now < 0 ? std::string("fewer") : std::to_string(bytes_now)));
}

SqlitePageFile::~SqlitePageFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<SqlitePageFile>> SqlitePageFile::open(const std::string& path) {
  std::unique_ptr<SqlitePageFile> f(new SqlitePageFile());
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f->fd_ < 0) return IoError(path + ": cannot open");
  f->path_ = path;
  struct stat st {};
  if (::fstat(f->fd_, &st) != 0 || st.st_size < 512) return BadInput(path + ": too small for an SQLite database");
  f->size_ = static_cast<size_t>(st.st_size);
  ::posix_fadvise(f->fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  uint8_t h[100];
  if (::pread(f->fd_, h, sizeof(h), 0) != static_cast<ssize_t>(sizeof(h)))
    return IoError(path + ": cannot read the header");
  if (std::memcmp(h, "SQLite format 3\0", 16) != 0) return BadInput(path + ": not an SQLite database");
  uint32_t page_size = (uint32_t{h[16]} << 8) | h[17];
  if (page_size == 1) page_size = 65536;
  if (page_size < 512 || (page_size & (page_size - 1)) != 0) return BadInput(path + ": bad page size");
  if (h[18] != 1 || h[19] != 1) return BadInput(path + ": WAL-mode database");  // let SQLite handle it
  if (be32(h + 56) != 1) return BadInput(path + ": not a UTF-8 database");
  f->page_size_ = page_size;
  f->usable_ = page_size - h[20];
  f->page_count_ = static_cast<uint32_t>(std::min<size_t>(f->size_ / page_size, UINT32_MAX));
  return f;
}

Status SqlitePageFile::read_pages(uint32_t first, uint32_t count, std::vector<uint8_t>& buffer) const {
  const size_t bytes = static_cast<size_t>(count) * page_size_;
  buffer.resize(bytes);
  const off_t offset = static_cast<off_t>(first - 1) * page_size_;
  size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, buffer.data() + done, bytes - done, offset + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
    if (n == 0) {
      struct stat st {};
      return file_shrank(path_, size_, ::fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : -1);
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::optional<size_t> SqlitePageFile::TableLeaves::rows_at_most(size_t begin, size_t end) const {
  if (begin >= end) return size_t{0};
  if (begin == 0 && first_rowid == INT64_MIN) return std::nullopt;  // no rowid below the first
  const int64_t top = upper[end - 1], below = begin == 0 ? first_rowid - 1 : upper[begin - 1];
  if (top < below) return std::nullopt;  // keys out of order: a damaged tree
  // Modular arithmetic gives the true difference: below <= top, and both are int64.
  const uint64_t rows = static_cast<uint64_t>(top) - static_cast<uint64_t>(below);
  if (rows > (end - begin) * cells_per_page_at_most) return std::nullopt;
  return static_cast<size_t>(rows);
}

Status SqlitePageFile::leaf_pages(uint32_t root_page, TableLeaves& out) const {
  // Depth-first, left to right: leaves come out in rowid order. A table b-tree keeps every leaf at
  // one depth, so once the leftmost leaf has shown that depth, the pages there are taken as leaves
  // unread: a table's scan then reads its interior pages alone here (and the last leaf, for its
  // last rowid), not every leaf twice. The scan checks each leaf's type as it reads it (a damaged
  // tree is not taken on trust).
  out = TableLeaves{};
  // A cell is at least 4 bytes (SQLite pads smaller ones), plus its 2-byte pointer.
  out.cells_per_page_at_most = (usable_ - 8) / 6 + 1;
  struct Visit {
    uint32_t page, depth;
    int64_t upper;  // the key of the cell that points here: no rowid below is larger
  };
  std::vector<Visit> stack = {{root_page, 0, INT64_MAX}};
  std::vector<uint8_t> buffer;
  size_t guard = 0;
  int64_t leaf_depth = -1;
  // The rowid of cell `index` of the leaf page in `buffer`, when it has one.
  auto rowid_of_cell = [&](uint32_t number, uint16_t cells, uint16_t index) -> std::optional<int64_t> {
    const size_t header = number == 1 ? 100 : 0;
    if (index >= cells) return std::nullopt;
    const uint8_t* p = buffer.data() + header + 8 + 2 * index;
    const uint16_t offset = static_cast<uint16_t>((p[0] << 8) | p[1]);
    const uint8_t* end = buffer.data() + usable_;
    uint64_t payload = 0, rowid = 0;
    const uint8_t* c = offset < usable_ ? read_varint(buffer.data() + offset, end, &payload) : nullptr;
    if (!c || !read_varint(c, end, &rowid)) return std::nullopt;
    return static_cast<int64_t>(rowid);
  };
  while (!stack.empty()) {
    const Visit visit = stack.back();
    stack.pop_back();
    const uint32_t number = visit.page;
    if (number == 0 || number > page_count_ || ++guard > page_count_ + 1) return BadInput("damaged SQLite b-tree");
    if (static_cast<int64_t>(visit.depth) == leaf_depth) {
      out.pages.push_back(number);
      out.upper.push_back(visit.upper);
      continue;
    }
    TRACEDOC_RETURN_IF_ERROR(read_pages(number, 1, buffer));
    const uint8_t* p = buffer.data();
    const size_t header = number == 1 ? 100 : 0;
    const uint8_t type = p[header];
    const uint16_t cells = static_cast<uint16_t>((p[header + 3] << 8) | p[header + 4]);
    // The cell pointer array must fit in the page: a damaged count would have the scan read
    // pointers past the end of the page
    // (fuzz/regressions/fuzz_nsys_sqlite/cell_count_past_mapping.sqlite).
    if (header + (type == 0x0D ? 8u : 12u) + 2u * cells > usable_) return BadInput("damaged SQLite b-tree page");
    if (type == 0x0D) {
      if (leaf_depth < 0) leaf_depth = visit.depth;
      if (static_cast<int64_t>(visit.depth) != leaf_depth)
        return BadInput("damaged SQLite b-tree: leaves at two depths");
      out.first_rowid = rowid_of_cell(number, cells, 0).value_or(1);
      out.pages.push_back(number);
      out.upper.push_back(visit.upper);
      continue;
    }
    if (type != 0x05) return BadInput("unexpected SQLite page type");
    if (leaf_depth >= 0 && static_cast<int64_t>(visit.depth) >= leaf_depth)
      return BadInput("damaged SQLite b-tree depth");
    const uint8_t* pointers = p + header + 12;
    stack.push_back({be32(p + header + 8), visit.depth + 1, visit.upper});  // right-most child, visited last
    for (int c = cells - 1; c >= 0; --c) {
      const uint16_t offset = static_cast<uint16_t>((pointers[2 * c] << 8) | pointers[2 * c + 1]);
      if (offset + 4u > page_size_) return BadInput("damaged SQLite b-tree cell");
      uint64_t key = 0;
      if (!read_varint(p + offset + 4, p + usable_, &key)) return BadInput("damaged SQLite b-tree cell");
      stack.push_back({be32(p + offset), visit.depth + 1, static_cast<int64_t>(key)});
    }
  }
  // The last leaf's last rowid bounds it (its key is the root's: none). An empty table is a root
  // leaf without cells: no rowids at all.
  const uint32_t last = out.pages.back();
  TRACEDOC_RETURN_IF_ERROR(read_pages(last, 1, buffer));
  const std::optional<uint16_t> cells = leaf_cells(buffer.data(), last);
  if (!cells) return BadInput("damaged SQLite table page " + std::to_string(last));
  if (*cells == 0 && out.pages.size() == 1) {
    out.upper.back() = out.first_rowid - 1;
  } else if (std::optional<int64_t> rowid = rowid_of_cell(last, *cells, static_cast<uint16_t>(*cells - 1))) {
    out.upper.back() = std::min(out.upper.back(), *rowid);
  }
  return Status::Ok();
}

std::vector<std::pair<size_t, size_t>> SqlitePageFile::runs_of(std::span<const uint32_t> leaves) const {
  std::vector<std::pair<size_t, size_t>> runs;
  const uint32_t max_run = std::max<uint32_t>(1, kMaxRunBytes / page_size_);
  for (size_t i = 0; i < leaves.size();) {
    size_t j = i + 1;
    while (j < leaves.size() && j - i < max_run && leaves[j] == leaves[j - 1] + 1) ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  return runs;
}

std::optional<uint16_t> SqlitePageFile::leaf_cells(const uint8_t* page, uint32_t number) const {
  const size_t header = number == 1 ? 100 : 0;
  const uint8_t* p = page + header;
  const uint16_t cells = static_cast<uint16_t>((p[3] << 8) | p[4]);
  if (p[0] != 0x0D || header + 8u + 2u * cells > usable_) return std::nullopt;
  return cells;
}

Result<size_t> SqlitePageFile::count_rows(std::span<const uint32_t> leaves) const {
  std::vector<uint8_t> buffer;
  size_t total = 0;
  for (const auto& [begin, end] : runs_of(leaves)) {
    TRACEDOC_RETURN_IF_ERROR(read_pages(leaves[begin], static_cast<uint32_t>(end - begin), buffer));
    for (size_t l = begin; l < end; ++l) {
      const std::optional<uint16_t> cells = leaf_cells(buffer.data() + (l - begin) * page_size_, leaves[l]);
      if (!cells) return BadInput("damaged SQLite table page " + std::to_string(leaves[l]));
      total += *cells;
    }
  }
  return total;
}

bool SqlitePageFile::decode_cell(const uint8_t* p, uint16_t cell_offset, const std::vector<int>& columns,
                                 int rowid_column, std::vector<SqlValue>& values, std::string& scratch,
                                 uint32_t& overflow_left, std::vector<uint8_t>& overflow, Status& io) const {
  const uint8_t* page_end = p + usable_;
  const uint8_t* c = p + cell_offset;
  uint64_t payload_size = 0, rowid = 0;
  if (!(c = read_varint(c, page_end, &payload_size))) return false;
  if (!(c = read_varint(c, page_end, &rowid))) return false;

  // Local part of the payload; the rest lives on a chain of overflow pages.
  const uint64_t u = usable_;
  const uint64_t x = u - 35;
  const uint8_t* payload = c;
  if (payload_size > x) {
    const uint64_t m = ((u - 12) * 32 / 255) - 23;
    uint64_t local = m + ((payload_size - m) % (u - 4));
    if (local > x) local = m;
    if (c + local + 4 > page_end) return false;
    scratch.assign(reinterpret_cast<const char*>(c), local);
    uint32_t next = be32(c + local);
    while (scratch.size() < payload_size) {
      if (next == 0 || next > page_count_ || overflow_left == 0) return false;  // overflow_left: see the header
      --overflow_left;
      io = read_pages(next, 1, overflow);
      if (!io.ok()) return false;
      const uint8_t* op = overflow.data();
      const size_t take = std::min<uint64_t>(u - 4, payload_size - scratch.size());
      scratch.append(reinterpret_cast<const char*>(op + 4), take);
      next = be32(op);
    }
    payload = reinterpret_cast<const uint8_t*>(scratch.data());
  } else if (c + payload_size > page_end) {
    return false;
  }
  const uint8_t* end = payload + payload_size;

  uint64_t header_size = 0;
  const uint8_t* h = read_varint(payload, end, &header_size);
  if (!h || header_size > payload_size) return false;
  const uint8_t* header_end = payload + header_size;
  const uint8_t* body = header_end;

  size_t want = 0;  // index into `columns` (ascending record positions)
  int position = 0;
  while (h < header_end && want < columns.size()) {
    uint64_t type = *h;
    if (type < 0x80) {
      ++h;  // one-byte serial type: every column but long texts and blobs
    } else if (!(h = read_varint(h, header_end, &type))) {
      return false;
    }
    const size_t size = serial_size(type);
    if (body + size > end) return false;
    if (position == columns[want]) {
      SqlValue& v = values[want];
      if (type == 0) {
        v.type = SqlValue::Type::kNull;
        v.i = 0;
        if (position == rowid_column) {
          v.type = SqlValue::Type::kInt;
          v.i = static_cast<int64_t>(rowid);
        }
      } else if (type <= 6) {
        v.type = SqlValue::Type::kInt;
        v.i = read_int(body, size);
      } else if (type == 7) {
        uint64_t bits = static_cast<uint64_t>(read_int(body, 8));
        v.type = SqlValue::Type::kReal;
        std::memcpy(&v.d, &bits, 8);
        // As sqlite3_column_int64: clamped to the int64 range, NaN as 0 (a plain cast of an
        // out-of-range double is undefined behaviour; damaged pages hold any bits).
        v.i = !(v.d == v.d)                   ? 0
              : v.d >= 9223372036854775807.0  ? INT64_MAX
              : v.d <= -9223372036854775808.0 ? INT64_MIN
                                              : static_cast<int64_t>(v.d);
      } else if (type == 8 || type == 9) {
        v.type = SqlValue::Type::kInt;
        v.i = type == 9;
      } else if (type >= 12) {
        v.type = (type & 1) ? SqlValue::Type::kText : SqlValue::Type::kBlob;
        v.i = 0;
        v.s = std::string_view(reinterpret_cast<const char*>(body), size);
      } else {
        return false;  // serial types 10, 11 are reserved
      }
      ++want;
    }
    body += size;
    ++position;
  }
  // Columns added by ALTER TABLE after the row was written are absent from its record: NULL.
  for (; want < columns.size(); ++want) {
    values[want].type = SqlValue::Type::kNull;
    values[want].i = 0;
  }
  return true;
}

}  // namespace tracedoc
