#include "ingest/nsys_sqlite_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>

#include "common/flat_hash.h"
#include "common/input_file.h"
#include "common/memory_budget.h"
#include "common/task_pool.h"
#include "ingest/emit_nvtx_ops.h"
#include "ingest/sqlite_db.h"
#include "ingest/sqlite_fast_scan.h"
#include "model/column_selection.h"
#include "model/emit_nvtx_names.h"

namespace tracedoc {

namespace {

constexpr int64_t kNone = kNoValue;

int32_t to_i32(int64_t v) { return v == kNone ? kNoGreen : static_cast<int32_t>(v); }
uint8_t to_kind(int64_t v) { return v == kNone || v < 0 || v > 254 ? kNoKind : static_cast<uint8_t>(v); }

// Maps nsys StringIds ids to pool ids. Sliced exports keep sparse ids (a few hundred strings with
// ids in the millions), so a flat hash map is the fallback to the dense table.
class StringIdMap {
 public:
  void add(int64_t nsys_id, StrId id) { pending_.emplace_back(nsys_id, id); }
  void finish() {
    int64_t max_id = -1;
    for (auto& [k, v] : pending_) max_id = std::max(max_id, k);
    if (max_id >= 0 && max_id < static_cast<int64_t>(pending_.size()) * 4 + 4096) {
      dense_.assign(static_cast<size_t>(max_id) + 1, kNoStr);
      for (auto& [k, v] : pending_)
        if (k >= 0) dense_[static_cast<size_t>(k)] = v;
    } else {
      for (auto& [k, v] : pending_) {
        const uint32_t slot = sparse_ids_.id(static_cast<uint64_t>(k));
        if (slot == sparse_values_.size()) sparse_values_.push_back(v);
      }
      sparse_ = true;
    }
    pending_.clear();
  }
  StrId map(int64_t nsys_id) const {
    if (nsys_id == kNone) return kNoStr;
    if (!sparse_) {
      return nsys_id >= 0 && nsys_id < static_cast<int64_t>(dense_.size()) ? dense_[static_cast<size_t>(nsys_id)]
                                                                           : kNoStr;
    }
    const uint32_t slot = sparse_ids_.find(static_cast<uint64_t>(nsys_id));
    return slot == DenseIdMap::kEmpty ? kNoStr : sparse_values_[slot];
  }
  // Columns are first filled with raw nsys ids (as StrId-sized ints, kNoStr for NULL). Returns how
  // many ids had no string (a damaged export): they read as unnamed.
  int64_t remap(std::vector<StrId>& col) const {
    int64_t unknown = 0;
    for (auto& v : col) {
      if (v == kNoStr) continue;
      v = map(static_cast<int64_t>(v));
      unknown += v == kNoStr;
    }
    return unknown;
  }

 private:
  std::vector<std::pair<int64_t, StrId>> pending_;
  std::vector<StrId> dense_;
  bool sparse_ = false;
  DenseIdMap sparse_ids_;
  std::vector<StrId> sparse_values_;
};

// The columns without which a table's rows mean nothing (every export from schema 2.9.1 on has
// them): times, and the names of kernels and calls.
const std::map<std::string, std::vector<const char*>, std::less<>> kRequiredColumns = {
    {"CUPTI_ACTIVITY_KIND_KERNEL", {"start", "end", "deviceId", "streamId", "shortName"}},
    {"CUPTI_ACTIVITY_KIND_MEMCPY", {"start", "end", "deviceId", "streamId", "bytes", "copyKind"}},
    {"CUPTI_ACTIVITY_KIND_MEMSET", {"start", "end", "deviceId", "streamId", "bytes"}},
    {"CUPTI_ACTIVITY_KIND_RUNTIME", {"start", "end", "globalTid", "nameId"}},
    {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", {"start", "end"}},
    {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE", {"start", "end"}},
    {"OSRT_API", {"start", "end", "globalTid", "nameId"}},
    {"NVTX_EVENTS", {"start", "eventType"}},
    {"PROFILER_OVERHEAD", {"start", "end"}},
    {"SCHED_EVENTS", {"start", "globalTid"}},
    {"COMPOSITE_EVENTS", {"start", "globalTid"}},
    {"SAMPLING_CALLCHAINS", {"id", "symbol", "module", "stackDepth"}},
    {"OSRT_CALLCHAINS", {"id", "symbol", "module", "stackDepth"}},
    {"CUDA_CALLCHAINS", {"id", "symbol", "module", "stackDepth"}},
    {"GPU_METRICS", {"timestamp", "typeId", "metricId", "value"}},
    {"TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName"}},
    {"StringIds", {"id", "value"}},
    {"OPENMP_EVENT_KIND_", {"start", "end"}},  // every OPENMP_EVENT_KIND_<kind> table
};

// A callchain id kept in a stack column until its chains are read (Loader::load_callchains).
StackId chain_id(int64_t v) {
  return v == kNone || v < 0 || v > std::numeric_limits<StackId>::max() ? kNoStack : static_cast<StackId>(v);
}

StrId raw_id(int64_t v) {
  return v == kNone || v < 0 || v >= static_cast<int64_t>(kNoStr) ? kNoStr : static_cast<StrId>(v);
}

// A column of the table a scan reads, bound by name (Fields); row functions read values through it.
struct Field {
  int index = -1;  // -1: not bound (a column the read does not fill)
  explicit operator bool() const { return index >= 0; }
};

// The columns one scan reads. in("start") binds the table's `start` column and returns its Field,
// so each column is named once, beside what the row function does with it, and the SELECT list is
// made from the bindings (never a list of names matched to positions by hand).
class Fields {
 public:
  Field operator()(std::string name) {
    names_.push_back(std::move(name));
    return Field{static_cast<int>(names_.size()) - 1};
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

// A SqliteStatement row read through Fields (the statement selects the bound columns in order).
struct StatementRow {
  SqliteStatement& stmt;
  bool is_null(Field col) const { return stmt.is_null(col.index); }
  bool is_number(Field col) const { return stmt.is_number(col.index); }
  int64_t int64(Field col) const { return stmt.int64(col.index); }
  int64_t int64_or(Field col, int64_t fallback) const { return stmt.int64_or(col.index, fallback); }
  std::string_view text(Field col) const { return stmt.text(col.index); }
};

class Loader {
 public:
  Loader(const SqliteDb& db, Trace& trace) : db_(db), trace_(trace) {}

  // Calls row(r) for each row of `SELECT <the bound columns> FROM table`; r offers is_null(f),
  // is_number(f), int64(f), int64_or(f, fallback) and text(f) for each bound Field f. Uses the
  // direct b-tree scanner when the file allows it and SQLite otherwise. prepare(n) empties the
  // destination and makes room for n rows; it runs before the rows arrive, and again (n = 0) if a
  // fast scan has to be redone by SQLite.
  template <typename RowFn, typename PrepareFn>
  Status scan(const std::string& table, const Fields& fields, RowFn&& row, PrepareFn&& prepare) {
    if (!trace_.source.has_table(table)) return Status::Ok();
    const std::vector<std::string>& wanted = fields.names();
    TRACEDOC_ASSIGN_OR_RETURN(auto cols, db_.column_names(table));
    TRACEDOC_RETURN_IF_ERROR(check_required_columns(table, cols));
    if (fast_) {
      const int64_t wrong_type_before = wrong_type_, untimed_before = untimed_;
      Status st = fast_scan(table, wanted, row, prepare);
      // An I/O error (the file shrank under the reader) is final: SQLite would read the same bytes.
      if (st.ok() || st.code() == ErrorCode::kIo) return st;
      wrong_type_ = wrong_type_before;  // SQLite reads the table again: count its rows once
      untimed_ = untimed_before;
    }
    prepare(0);
    TRACEDOC_ASSIGN_OR_RETURN(auto stmt, db_.prepare(select_columns_sql(table, cols, wanted)));
    while (stmt.step()) row(StatementRow{stmt});
    wrong_type_ += stmt.wrong_type();
    if (!stmt.status().ok()) {
      return BadInput(fmt::format("{}: table {}: {}", db_.path(), table, stmt.status().message()));
    }
    return Status::Ok();
  }
  template <typename RowFn>
  Status scan(const std::string& table, const Fields& fields, RowFn&& row) {
    return scan(table, fields, row, [](size_t) {});
  }

  void use_fast_scanner(const SqlitePageFile* fast) { fast_ = fast; }
  // The columns the loads fill (model/column_selection.h); the others stay empty.
  // The thread, type and text of every NVTX range are read in any case: the emit_nvtx operators
  // are made from them after the read (add_emit_nvtx_operators).
  void select_columns(const ColumnSelection& columns) {
    columns_ = columns;
    columns_.select<RangeTable>(&RangeTable::global_tid, &RangeTable::kind, &RangeTable::text);
  }
  // Large tables are read in this many parts at once (1: one scan each).
  void split_scans(size_t parts) { split_parts_ = std::max<size_t>(parts, 1); }
  // Values of the wrong type read so far (text in an integer column), read as absent.
  int64_t wrong_type() const { return wrong_type_; }
  // Rows dropped for want of a start or end (see timed).
  int64_t untimed() const { return untimed_; }
  // Whether a string or range text read may carry emit_nvtx's sizes (may_carry_sizes, checked once
  // per distinct text as it is interned).
  bool texts_may_carry_sizes() const { return texts_may_carry_sizes_; }

 private:
  // A table without one of its required columns (kRequiredColumns) is not read as if the column
  // were NULL: that gave every kernel of an export whose `end` column was lost a duration of
  // -2^63 ns and "kernels 0" in the summary, with exit 0.
  Status check_required_columns(const std::string& table, const std::set<std::string>& columns) const {
    const auto it = kRequiredColumns.find(table.starts_with("OPENMP_EVENT_KIND_") ? "OPENMP_EVENT_KIND_" : table);
    if (it == kRequiredColumns.end()) return Status::Ok();
    for (const char* column : it->second) {
      if (!columns.count(column)) {
        return BadInput(fmt::format("{}: table {} has no column '{}' (a damaged export, or not one nsys wrote)",
                                    db_.path(), table, column));
      }
    }
    return Status::Ok();
  }
  // Where the fast scanner finds a table's columns: its root page, its rowid-alias column, the
  // record positions it decodes and, for each wanted column, the index of its decoded value.
  struct FastLayout {
    uint32_t root = 0;
    int rowid_column = -1;
    std::vector<int> record_columns;  // ascending, unique
    std::vector<int> value_index;     // wanted column -> decoded value (absent columns: the trailing NULL)
  };
  Result<FastLayout> fast_layout(const std::string& table, const std::vector<std::string>& wanted) const {
    auto stmt = db_.prepare(
        fmt::format("SELECT (SELECT rootpage FROM sqlite_master WHERE type='table' AND name='{}'), cid, name, "
                    "upper(type), pk FROM pragma_table_info('{}')",
                    table, table));
    if (!stmt.ok()) return stmt.status();
    int64_t root = 0;
    int pk_count = 0, pk_position = -1;
    bool pk_integer = false;
    std::vector<std::pair<std::string, int>> positions;
    while (stmt->step()) {
      root = stmt->int64(0);
      const int cid = static_cast<int>(stmt->int64(1));
      positions.emplace_back(std::string(stmt->text(2)), cid);
      if (stmt->int64(4) > 0) {
        ++pk_count;
        pk_position = cid;
        pk_integer = stmt->text(3) == "INTEGER";
      }
    }
    if (root <= 0 || positions.empty()) return BadInput("no table");
    FastLayout layout;
    layout.root = static_cast<uint32_t>(root);
    layout.rowid_column = pk_count == 1 && pk_integer ? pk_position : -1;
    std::vector<int> wanted_position(wanted.size(), -1);
    for (size_t w = 0; w < wanted.size(); ++w) {
      for (const auto& [name, cid] : positions) {
        if (name == wanted[w]) wanted_position[w] = cid;
      }
      if (wanted_position[w] >= 0) layout.record_columns.push_back(wanted_position[w]);
    }
    auto& columns = layout.record_columns;
    std::sort(columns.begin(), columns.end());
    columns.erase(std::unique(columns.begin(), columns.end()), columns.end());
    layout.value_index.assign(wanted.size(), static_cast<int>(columns.size()));
    for (size_t w = 0; w < wanted.size(); ++w) {
      if (wanted_position[w] < 0) continue;
      layout.value_index[w] =
          static_cast<int>(std::lower_bound(columns.begin(), columns.end(), wanted_position[w]) - columns.begin());
    }
    return layout;
  }
  // The table's rows through the fast scanner: all of them (prepare(n) first), or only those of
  // `leaves` (a run of its leaf pages, no prepare); values of the wrong type are counted in
  // `wrong_type` (by default the loader's count).
  template <typename RowFn, typename PrepareFn>
  Status fast_scan(const FastLayout& layout, RowFn& row, PrepareFn& prepare,
                   std::optional<std::span<const uint32_t>> leaves = std::nullopt, int64_t* wrong_type = nullptr) {
    if (!wrong_type) wrong_type = &wrong_type_;
    auto fast_row = [&](std::span<const SqlValue> values) { row(FastRow{values, layout.value_index, wrong_type}); };
    if (leaves) return fast_->scan_leaves(*leaves, layout.record_columns, layout.rowid_column, fast_row);
    return fast_->scan(layout.root, layout.record_columns, layout.rowid_column, fast_row, prepare);
  }
  template <typename RowFn, typename PrepareFn>
  Status fast_scan(const std::string& table, const std::vector<std::string>& wanted, RowFn& row, PrepareFn& prepare) {
    TRACEDOC_ASSIGN_OR_RETURN(const FastLayout layout, fast_layout(table, wanted));
    return fast_scan(layout, row, prepare);
  }

  // The fast scanner's row, with the accessors of SqliteStatement.
  struct FastRow {
    std::span<const SqlValue> values;
    const std::vector<int>& index;
    int64_t* wrong_type;
    const SqlValue& at(Field col) const { return values[static_cast<size_t>(index[static_cast<size_t>(col.index)])]; }
    bool is_null(Field col) const { return at(col).is_null(); }
    bool is_number(Field col) const {
      return at(col).type == SqlValue::Type::kInt || at(col).type == SqlValue::Type::kReal;
    }
    // As SqliteStatement::int64 and int64_or: text and blobs read as 0 / `fallback`, counted.
    int64_t int64(Field col) const {
      const SqlValue& v = at(col);
      if (v.type == SqlValue::Type::kText || v.type == SqlValue::Type::kBlob) ++*wrong_type;
      return v.i;  // 0 for text and blobs
    }
    int64_t int64_or(Field col, int64_t fallback) const {
      const SqlValue& v = at(col);
      if (v.is_null()) return fallback;
      if (v.type == SqlValue::Type::kText || v.type == SqlValue::Type::kBlob) {
        ++*wrong_type;
        return fallback;
      }
      return v.i;
    }
    std::string_view text(Field col) const {
      const SqlValue& v = at(col);
      return v.type == SqlValue::Type::kText || v.type == SqlValue::Type::kBlob ? v.s : std::string_view{};
    }
  };

 public:
  Status load_kernels() {
    using T = KernelTable;
    auto& k = trace_.kernels;
    Fields in;
    const Field start = in("start"), end = in("end"), global_pid = bind(in, "globalPid", &T::global_pid),
                correlation_id = bind(in, "correlationId", &T::correlation),
                device_id = bind(in, "deviceId", &T::device), context_id = bind(in, "contextId", &T::context),
                green_context_id = bind(in, "greenContextId", &T::green_context),
                stream_id = bind(in, "streamId", &T::stream), demangled_name = bind(in, "demangledName", &T::name),
                short_name = bind(in, "shortName", &T::short_name),
                mangled_name = bind(in, "mangledName", &T::mangled_name), grid_x = bind(in, "gridX", &T::grid_x),
                grid_y = bind(in, "gridY", &T::grid_y), grid_z = bind(in, "gridZ", &T::grid_z),
                block_x = bind(in, "blockX", &T::block_x), block_y = bind(in, "blockY", &T::block_y),
                block_z = bind(in, "blockZ", &T::block_z),
                registers_per_thread = bind(in, "registersPerThread", &T::registers_per_thread),
                static_shared_memory = bind(in, "staticSharedMemory", &T::static_smem),
                dynamic_shared_memory = bind(in, "dynamicSharedMemory", &T::dynamic_smem),
                graph_node_id = bind(in, "graphNodeId", &T::graph_node_id);
    return scan(
        "CUPTI_ACTIVITY_KIND_KERNEL", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          k.start.push_back(s.int64_or(start, kNoTime));
          k.end.push_back(s.int64_or(end, kNoTime));
          if (global_pid) k.global_pid.push_back(s.int64_or(global_pid, 0));
          if (correlation_id) k.correlation.push_back(s.int64_or(correlation_id, kNone));
          if (device_id) k.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
          if (context_id) k.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
          if (green_context_id) k.green_context.push_back(to_i32(s.int64_or(green_context_id, kNone)));
          if (stream_id) k.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          if (demangled_name) k.name.push_back(raw_id(s.int64_or(demangled_name, kNone)));
          if (short_name) k.short_name.push_back(raw_id(s.int64_or(short_name, kNone)));
          if (mangled_name) k.mangled_name.push_back(raw_id(s.int64_or(mangled_name, kNone)));
          if (grid_x) k.grid_x.push_back(static_cast<int32_t>(s.int64(grid_x)));
          if (grid_y) k.grid_y.push_back(static_cast<int32_t>(s.int64(grid_y)));
          if (grid_z) k.grid_z.push_back(static_cast<int32_t>(s.int64(grid_z)));
          if (block_x) k.block_x.push_back(static_cast<int32_t>(s.int64(block_x)));
          if (block_y) k.block_y.push_back(static_cast<int32_t>(s.int64(block_y)));
          if (block_z) k.block_z.push_back(static_cast<int32_t>(s.int64(block_z)));
          if (registers_per_thread)
            k.registers_per_thread.push_back(static_cast<int32_t>(s.int64(registers_per_thread)));
          if (static_shared_memory) k.static_smem.push_back(static_cast<int32_t>(s.int64(static_shared_memory)));
          if (dynamic_shared_memory) k.dynamic_smem.push_back(static_cast<int32_t>(s.int64(dynamic_shared_memory)));
          if (graph_node_id) k.graph_node_id.push_back(s.int64_or(graph_node_id, kNone));
        },
        [&](size_t n) { prepare_table(k, n); });
  }

  Status load_memcpy() {
    using T = MemcpyTable;
    auto& m = trace_.memcpys;
    Fields in;
    const Field start = in("start"), end = in("end"), global_pid = bind(in, "globalPid", &T::global_pid),
                correlation_id = bind(in, "correlationId", &T::correlation), bytes = bind(in, "bytes", &T::bytes),
                device_id = bind(in, "deviceId", &T::device), context_id = bind(in, "contextId", &T::context),
                green_context_id = bind(in, "greenContextId", &T::green_context),
                stream_id = bind(in, "streamId", &T::stream), src_device_id = bind(in, "srcDeviceId", &T::src_device),
                dst_device_id = bind(in, "dstDeviceId", &T::dst_device),
                copy_kind = bind(in, "copyKind", &T::copy_kind), src_kind = bind(in, "srcKind", &T::src_kind),
                dst_kind = bind(in, "dstKind", &T::dst_kind);
    return scan(
        "CUPTI_ACTIVITY_KIND_MEMCPY", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          m.start.push_back(s.int64_or(start, kNoTime));
          m.end.push_back(s.int64_or(end, kNoTime));
          if (global_pid) m.global_pid.push_back(s.int64_or(global_pid, 0));
          if (correlation_id) m.correlation.push_back(s.int64_or(correlation_id, kNone));
          if (bytes) m.bytes.push_back(s.int64_or(bytes, 0));
          if (device_id) m.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
          if (context_id) m.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
          if (green_context_id) m.green_context.push_back(to_i32(s.int64_or(green_context_id, kNone)));
          if (stream_id) m.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          if (src_device_id) m.src_device.push_back(to_i32(s.int64_or(src_device_id, kNone)));
          if (dst_device_id) m.dst_device.push_back(to_i32(s.int64_or(dst_device_id, kNone)));
          if (copy_kind) m.copy_kind.push_back(to_kind(s.int64_or(copy_kind, kNone)));
          if (src_kind) m.src_kind.push_back(to_kind(s.int64_or(src_kind, kNone)));
          if (dst_kind) m.dst_kind.push_back(to_kind(s.int64_or(dst_kind, kNone)));
        },
        [&](size_t n) { prepare_table(m, n); });
  }

  Status load_memset() {
    using T = MemsetTable;
    auto& m = trace_.memsets;
    Fields in;
    const Field start = in("start"), end = in("end"), global_pid = bind(in, "globalPid", &T::global_pid),
                correlation_id = bind(in, "correlationId", &T::correlation), bytes = bind(in, "bytes", &T::bytes),
                value = bind(in, "value", &T::value), device_id = bind(in, "deviceId", &T::device),
                context_id = bind(in, "contextId", &T::context),
                green_context_id = bind(in, "greenContextId", &T::green_context),
                stream_id = bind(in, "streamId", &T::stream), mem_kind = bind(in, "memKind", &T::mem_kind);
    return scan(
        "CUPTI_ACTIVITY_KIND_MEMSET", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          m.start.push_back(s.int64_or(start, kNoTime));
          m.end.push_back(s.int64_or(end, kNoTime));
          if (global_pid) m.global_pid.push_back(s.int64_or(global_pid, 0));
          if (correlation_id) m.correlation.push_back(s.int64_or(correlation_id, kNone));
          if (bytes) m.bytes.push_back(s.int64_or(bytes, 0));
          if (value) m.value.push_back(s.int64_or(value, 0));
          if (device_id) m.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
          if (context_id) m.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
          if (green_context_id) m.green_context.push_back(to_i32(s.int64_or(green_context_id, kNone)));
          if (stream_id) m.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          if (mem_kind) m.mem_kind.push_back(to_kind(s.int64_or(mem_kind, kNone)));
        },
        [&](size_t n) { prepare_table(m, n); });
  }

  Status load_api() {
    using T = ApiTable;
    auto& a = trace_.api;
    Fields in;
    const Field start = in("start"), end = in("end"), global_tid = bind(in, "globalTid", &T::global_tid),
                correlation_id = bind(in, "correlationId", &T::correlation), name_id = bind(in, "nameId", &T::name),
                return_value = bind(in, "returnValue", &T::return_value),
                event_class = bind(in, "eventClass", &T::api_class), callchain_id = bind(in, "callchainId", &T::stack);
    return scan(
        "CUPTI_ACTIVITY_KIND_RUNTIME", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          a.start.push_back(s.int64_or(start, kNoTime));
          a.end.push_back(s.int64_or(end, kNoTime));
          if (global_tid) a.global_tid.push_back(s.int64_or(global_tid, 0));
          if (correlation_id) a.correlation.push_back(s.int64_or(correlation_id, kNone));
          if (name_id) a.name.push_back(raw_id(s.int64_or(name_id, kNone)));
          if (return_value) a.return_value.push_back(s.int64_or(return_value, kNone));
          if (event_class) {
            const int64_t cls = s.int64_or(event_class, 0);
            a.api_class.push_back(cls == 0 ? 0 : cls == 1 ? 1 : 2);
          }
          if (callchain_id) a.stack.push_back(chain_id(s.int64_or(callchain_id, kNone)));
        },
        [&](size_t n) { prepare_table(a, n); });
  }

  Status load_os_calls() {
    using T = OsCallTable;
    auto& o = trace_.os_calls;
    Fields in;
    const Field start = in("start"), end = in("end"), global_tid = bind(in, "globalTid", &T::global_tid),
                name_id = bind(in, "nameId", &T::name), return_value = bind(in, "returnValue", &T::return_value),
                event_class = bind(in, "eventClass", &T::event_class),
                nesting_level = bind(in, "nestingLevel", &T::nesting_level),
                callchain_id = bind(in, "callchainId", &T::stack);
    return scan(
        "OSRT_API", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          o.start.push_back(s.int64_or(start, kNoTime));
          o.end.push_back(s.int64_or(end, kNoTime));
          if (global_tid) o.global_tid.push_back(s.int64_or(global_tid, 0));
          if (name_id) o.name.push_back(raw_id(s.int64_or(name_id, kNone)));
          if (return_value) o.return_value.push_back(s.int64_or(return_value, kNone));
          if (event_class) o.event_class.push_back(static_cast<int32_t>(s.int64_or(event_class, 27)));
          if (nesting_level) o.nesting_level.push_back(static_cast<int32_t>(s.int64_or(nesting_level, 0)));
          if (callchain_id) o.stack.push_back(chain_id(s.int64_or(callchain_id, kNone)));
        },
        [&](size_t n) { prepare_table(o, n); });
  }

  // Thread switches and CPU samples: the running / waiting state of CPU threads.
  Status load_cpu_sched() {
    auto& d = trace_.sched;
    {
      Fields in;
      const Field start = in("start"), global_tid = in("globalTid"), cpu = in("cpu"), is_sched_in = in("isSchedIn"),
                  thread_state = in("threadState");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "SCHED_EVENTS", in,
          [&](const auto& s) {
            d.time.push_back(s.int64_or(start, kNoTime));
            d.global_tid.push_back(s.int64_or(global_tid, 0));
            d.cpu.push_back(static_cast<int32_t>(s.int64_or(cpu, -1)));
            d.sched_in.push_back(s.int64_or(is_sched_in, 0) != 0);
            d.state.push_back(to_kind(s.int64_or(thread_state, kNone)));
          },
          [&](size_t n) {
            d = SchedTable{};
            d.reserve(n);
          }));
    }
    auto& c = trace_.cpu_samples;
    std::vector<int64_t> sample_ids;  // COMPOSITE_EVENTS.id, which SAMPLING_CALLCHAINS refers to
    {
      Fields in;
      const Field id = in("id"), start = in("start"), global_tid = in("globalTid"), thread_state = in("threadState");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "COMPOSITE_EVENTS", in,
          [&](const auto& s) {
            sample_ids.push_back(s.int64_or(id, kNone));
            c.time.push_back(s.int64_or(start, kNoTime));
            c.global_tid.push_back(s.int64_or(global_tid, 0));
            c.state.push_back(to_kind(s.int64_or(thread_state, kNone)));
          },
          [&](size_t n) {
            c = CpuSampleTable{};
            c.reserve(n);
            sample_ids.clear();
            sample_ids.reserve(n);
          }));
    }
    // Their call stacks.
    TRACEDOC_ASSIGN_OR_RETURN(const auto built, read_callchains("SAMPLING_CALLCHAINS"));
    c.stack.resize(c.time.size(), kNoStack);
    if (!built.empty()) {
      for (size_t i = 0; i < sample_ids.size(); ++i) c.stack[i] = stack_of(built, sample_ids[i]);
    }
    return Status::Ok();
  }

  // A *_CALLCHAINS table's stacks into Trace::stacks, by the id its events refer to: one row per
  // frame, depth 0 the leaf; names stay raw StringIds ids until remapped. Runs on one thread at a
  // time (the stacks are shared).
  Result<std::vector<std::pair<int64_t, StackId>>> read_callchains(const std::string& table) {
    StackRows rows(trace_.stacks);
    Fields in;
    const Field id = in("id"), symbol = in("symbol"), module = in("module"), kernel_mode = in("kernelMode"),
                unresolved = in("unresolved"), depth = in("stackDepth");
    TRACEDOC_RETURN_IF_ERROR(scan(table, in, [&](const auto& s) {
      StackFrame f;
      f.symbol = raw_id(s.int64_or(symbol, kNone));
      f.module = raw_id(s.int64_or(module, kNone));
      f.flags = static_cast<uint8_t>((s.int64_or(kernel_mode, 0) > 0 ? StackFrame::kKernelMode : 0) |
                                     (s.int64_or(unresolved, 0) > 0 ? StackFrame::kUnresolved : 0));
      rows.add(s.int64_or(id, kNone), s.int64_or(depth, 0), f);
    }));
    return rows.build();
  }

  // The stacks of the OS runtime calls (OSRT_CALLCHAINS) or CUDA API calls (CUDA_CALLCHAINS):
  // `column` holds each call's callchain id until then, and is emptied (the column is optional)
  // when the export has no such table or no call has a chain.
  Status load_callchains(const std::string& table, std::vector<StackId>& column) {
    const bool any = std::any_of(column.begin(), column.end(), [](StackId s) { return s != kNoStack; });
    if (!trace_.source.has_table(table) || !any) {
      column.clear();
      column.shrink_to_fit();
      return Status::Ok();
    }
    TRACEDOC_ASSIGN_OR_RETURN(const auto built, read_callchains(table));
    for (StackId& s : column) s = s == kNoStack ? kNoStack : stack_of(built, s);
    return Status::Ok();
  }

  Status load_syncs() {
    auto& y = trace_.syncs;
    Fields in;
    const Field start = in("start"), end = in("end"), global_pid = in("globalPid"),
                correlation_id = in("correlationId"), event_id = in("eventId"), device_id = in("deviceId"),
                context_id = in("contextId"), stream_id = in("streamId"), sync_type = in("syncType");
    return scan(
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          y.start.push_back(s.int64_or(start, kNoTime));
          y.end.push_back(s.int64_or(end, kNoTime));
          y.global_pid.push_back(s.int64_or(global_pid, 0));
          y.correlation.push_back(s.int64_or(correlation_id, kNone));
          y.event_id.push_back(s.int64_or(event_id, kNone));
          y.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
          y.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
          y.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          y.sync_type.push_back(static_cast<int32_t>(s.int64_or(sync_type, 0)));
        },
        [&](size_t n) {
          y = SyncTable{};
          y.reserve(n);
        });
  }

  // Graph-level GPU blocks and CUDA event records. Old exports' CUDA_EVENT tables have neither
  // timestamp nor eventSyncId: absent columns read as NULL.
  Status load_graphs_and_events() {
    auto& g = trace_.graph_traces;
    {
      Fields in;
      const Field start = in("start"), end = in("end"), global_pid = in("globalPid"),
                  correlation_id = in("correlationId"), graph_id = in("graphId"), graph_exec_id = in("graphExecId"),
                  device_id = in("deviceId"), context_id = in("contextId"), stream_id = in("streamId");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", in,
          [&](const auto& s) {
            if (!timed(s, start, end)) return;
            g.start.push_back(s.int64_or(start, kNoTime));
            g.end.push_back(s.int64_or(end, kNoTime));
            g.global_pid.push_back(s.int64_or(global_pid, 0));
            g.correlation.push_back(s.int64_or(correlation_id, kNone));
            g.graph_id.push_back(s.int64_or(graph_id, kNone));
            g.graph_exec_id.push_back(s.int64_or(graph_exec_id, kNone));
            g.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
            g.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
            g.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          },
          [&](size_t n) {
            g = GraphTraceTable{};
            g.reserve(n);
          }));
    }
    auto& e = trace_.cuda_events;
    {
      Fields in;
      const Field timestamp = in("timestamp"), global_pid = in("globalPid"), correlation_id = in("correlationId"),
                  event_id = in("eventId"), event_sync_id = in("eventSyncId"), device_id = in("deviceId"),
                  context_id = in("contextId"), stream_id = in("streamId");
      return scan(
          "CUPTI_ACTIVITY_KIND_CUDA_EVENT", in,
          [&](const auto& s) {
            const int64_t t = s.int64_or(timestamp, 0);
            e.time.push_back(t != 0 ? t : kNoTime);  // 0: not collected
            e.global_pid.push_back(s.int64_or(global_pid, 0));
            e.correlation.push_back(s.int64_or(correlation_id, kNone));
            e.event_id.push_back(s.int64_or(event_id, kNone));
            e.sync_id.push_back(s.int64_or(event_sync_id, kNone));
            e.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
            e.context.push_back(static_cast<int32_t>(s.int64_or(context_id, 0)));
            e.stream.push_back(static_cast<int32_t>(s.int64_or(stream_id, 0)));
          },
          [&](size_t n) {
            e = CudaEventTable{};
            e.reserve(n);
          });
    }
  }

  Status load_memory() {
    auto& m = trace_.memory;
    Fields in;
    const Field start = in("start"), global_pid = in("globalPid"), address = in("address"), bytes = in("bytes"),
                correlation_id = in("correlationId"), device_id = in("deviceId"), mem_kind = in("memKind"),
                memory_operation_type = in("memoryOperationType");
    return scan(
        "CUDA_GPU_MEMORY_USAGE_EVENTS", in,
        [&](const auto& s) {
          m.time.push_back(s.int64_or(start, kNoTime));
          m.global_pid.push_back(s.int64_or(global_pid, 0));
          m.address.push_back(s.int64_or(address, 0));
          m.bytes.push_back(s.int64_or(bytes, 0));
          m.correlation.push_back(s.int64_or(correlation_id, kNone));
          m.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
          m.mem_kind.push_back(static_cast<int32_t>(s.int64_or(mem_kind, 0)));
          m.operation.push_back(static_cast<int32_t>(s.int64_or(memory_operation_type, 0)));
        },
        [&](size_t n) {
          m = MemoryEventTable{};
          m.reserve(n);
        });
  }

  Status load_overhead() {
    auto& o = trace_.overhead;
    Fields in;
    const Field start = in("start"), end = in("end"), global_tid = in("globalTid"), name_id = in("nameId");
    return scan(
        "PROFILER_OVERHEAD", in,
        [&](const auto& s) {
          if (!timed(s, start, end)) return;
          o.start.push_back(s.int64_or(start, kNoTime));
          o.end.push_back(s.int64_or(end, kNoTime));
          o.global_tid.push_back(s.int64_or(global_tid, 0));
          o.name.push_back(raw_id(s.int64_or(name_id, kNone)));
        },
        [&](size_t n) {
          o = OverheadTable{};
          o.reserve(n);
        });
  }

  // Unified Memory: the UVM migrations (memcpy rows with a Unified copy kind; ordinary copies are
  // skipped, the memcpy table holds them) and the CPU and GPU page faults.
  Status load_unified_memory() {
    auto& um = trace_.unified_memory;
    auto& m = um.migrations;
    {
      Fields in;
      const Field start = in("start"), end = in("end"), global_pid = in("globalPid"), bytes = in("bytes"),
                  device_id = in("deviceId"), copy_kind = in("copyKind"), migration_cause = in("migrationCause"),
                  virtual_address = in("virtualAddress");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "CUPTI_ACTIVITY_KIND_MEMCPY", in,
          [&](const auto& s) {
            const uint8_t kind = to_kind(s.int64_or(copy_kind, kNone));
            if (kind < static_cast<uint8_t>(CopyKind::kUvmHtoD) || kind > static_cast<uint8_t>(CopyKind::kUvmDtoD)) {
              return;
            }
            m.start.push_back(s.int64_or(start, kNoTime));
            m.end.push_back(s.int64_or(end, kNoTime));
            m.global_pid.push_back(s.int64_or(global_pid, 0));
            m.bytes.push_back(s.int64_or(bytes, 0));
            m.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
            m.copy_kind.push_back(kind);
            m.migration_cause.push_back(to_kind(s.int64_or(migration_cause, kNone)));
            m.virtual_address.push_back(s.int64_or(virtual_address, kNone));
          },
          [&](size_t) { m = UmMigrationTable{}; }));
    }
    auto& c = um.cpu_faults;
    {
      Fields in;
      const Field start = in("start"), global_pid = in("globalPid"), address = in("address");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "CUDA_UM_CPU_PAGE_FAULT_EVENTS", in,
          [&](const auto& s) {
            c.time.push_back(s.int64_or(start, kNoTime));
            c.global_pid.push_back(s.int64_or(global_pid, 0));
            c.address.push_back(s.int64_or(address, kNone));
          },
          [&](size_t) { c = UmCpuPageFaultTable{}; }));
    }
    auto& g = um.gpu_faults;
    {
      Fields in;
      const Field start = in("start"), end = in("end"), global_pid = in("globalPid"), device_id = in("deviceId"),
                  address = in("address"), number_of_page_faults = in("numberOfPageFaults"),
                  fault_access_type = in("faultAccessType");
      return scan(
          "CUDA_UM_GPU_PAGE_FAULT_EVENTS", in,
          [&](const auto& s) {
            g.start.push_back(s.int64_or(start, kNoTime));
            g.end.push_back(s.int64_or(end, kNoTime));
            g.global_pid.push_back(s.int64_or(global_pid, 0));
            g.device.push_back(static_cast<int32_t>(s.int64_or(device_id, 0)));
            g.address.push_back(s.int64_or(address, kNone));
            g.fault_count.push_back(s.int64_or(number_of_page_faults, kNone));
            g.access_type.push_back(to_kind(s.int64_or(fault_access_type, kNone)));
          },
          [&](size_t) { g = UmGpuPageFaultTable{}; });
    }
  }

  // nsys writes one OPENMP_EVENT_KIND_<kind> table per OpenMP event kind, and its reports take every
  // table whose name matches that pattern; so does this. Names stay raw StringIds ids until remapped.
  Status load_openmp() {
    static constexpr std::string_view kPrefix = "OPENMP_EVENT_KIND_";
    auto& o = trace_.openmp;
    for (const std::string& table : trace_.source.tables) {
      if (table.size() <= kPrefix.size() || table.compare(0, kPrefix.size(), kPrefix) != 0) continue;
      const auto source = static_cast<uint16_t>(o.source_tables.size());
      o.source_tables.push_back(table);
      const size_t first_row = o.size();
      Fields in;
      const Field start = in("start"), end = in("end"), global_tid = in("globalTid"), name_id = in("nameId"),
                  event_kind = in("eventKind");
      TRACEDOC_RETURN_IF_ERROR(scan(
          table, in,
          [&](const auto& s) {
            o.start.push_back(s.int64_or(start, kNoTime));
            o.end.push_back(s.int64_or(end, kNoTime));
            o.global_tid.push_back(s.int64_or(global_tid, 0));
            o.name.push_back(raw_id(s.int64_or(name_id, kNone)));
            o.event_kind.push_back(to_kind(s.int64_or(event_kind, kNone)));
            o.source.push_back(source);
          },
          [&](size_t) { truncate_rows(o, first_row); }));
    }
    return Status::Ok();
  }

  // GPU hardware metrics. The string pool is the host chain's while the tables load, so the
  // metric names are collected here and interned after (gpu_metric_names): until then `metric`
  // holds an index into them. A sample's GPU is the low byte of its typeId, as nsys's own recipes
  // read it.
  Status load_gpu_metrics() {
    // Each (typeId, metricId)'s name, sorted: a table of the export's size (a hostile one cannot
    // make it larger than its rows).
    struct MetricName {
      int64_t type, metric;
      StrId name;  // index into gpu_metric_names_
      auto key() const { return std::pair(type, metric); }
    };
    std::vector<MetricName> names;
    {
      Fields in;
      const Field type_id = in("typeId"), metric_id = in("metricId"), metric_name = in("metricName");
      TRACEDOC_RETURN_IF_ERROR(scan("TARGET_INFO_GPU_METRICS", in, [&](const auto& s) {
        if (s.is_null(metric_name)) return;
        const std::string_view name = s.text(metric_name);
        auto it = std::find(gpu_metric_names_.begin(), gpu_metric_names_.end(), name);
        if (it == gpu_metric_names_.end()) it = gpu_metric_names_.insert(it, std::string(name));
        names.push_back({s.int64_or(type_id, kNone), s.int64_or(metric_id, kNone),
                         static_cast<StrId>(it - gpu_metric_names_.begin())});
      }));
    }
    std::stable_sort(names.begin(), names.end(),
                     [](const MetricName& a, const MetricName& b) { return a.key() < b.key(); });
    // Rows come a sample at a time, metric after metric: the next name is usually the one after the last.
    size_t hint = 0;
    const auto name_of = [&](int64_t type, int64_t metric) -> StrId {
      for (size_t at : {hint, hint + 1}) {
        if (at < names.size() && names[at].type == type && names[at].metric == metric) return names[hint = at].name;
      }
      const auto it =
          std::lower_bound(names.begin(), names.end(), std::pair(type, metric),
                           [](const MetricName& n, const std::pair<int64_t, int64_t>& k) { return n.key() < k; });
      if (it == names.end() || it->key() != std::pair(type, metric)) return kNoStr;
      hint = static_cast<size_t>(it - names.begin());
      return it->name;
    };
    auto& g = trace_.gpu_metrics;
    Fields in;
    const Field timestamp = in("timestamp"), type_id = in("typeId"), metric_id = in("metricId"), value = in("value");
    return scan(
        "GPU_METRICS", in,
        [&](const auto& s) {
          if (!s.is_number(timestamp)) {
            ++untimed_;
            return;
          }
          const int64_t type = s.int64_or(type_id, kNone);
          const StrId name = name_of(type, s.int64_or(metric_id, kNone));
          if (name == kNoStr) {
            ++unnamed_metrics_;
            return;
          }
          g.time.push_back(s.int64(timestamp));
          g.device.push_back(static_cast<int32_t>(type & 0xFF));
          g.metric.push_back(name);
          g.value.push_back(s.int64_or(value, kNone));
        },
        [&](size_t n) {
          g = GpuMetricTable{};
          g.reserve(n);
          unnamed_metrics_ = 0;
        });
  }
  const std::vector<std::string>& gpu_metric_names() const { return gpu_metric_names_; }
  int64_t unnamed_metrics() const { return unnamed_metrics_; }

  // NVTX rows need the string table (inline texts are interned), so they load after StringIds.
  // NVTX_EVENTS, the largest host table of most exports. With split_scans, its leaf pages are read
  // in parts at once on the task pool, each part writing its rows where they go in the table (the
  // parts' row counts come first). Each part interns the texts without a string id into a pool of
  // its own; then each part's strings are added to the trace's pool in the part's first-seen
  // order, part after part, which is the order one scan adds them in.
  Status load_ranges(const StringIdMap& ids) {
    const std::string table = "NVTX_EVENTS";
    using T = RangeTable;
    auto& r = trace_.ranges;
    Fields in;
    // (The thread, type and text of every range are always read: see select_columns.)
    const Field start = in("start"), end = in("end"), global_tid = in("globalTid"),
                end_global_tid = bind(in, "endGlobalTid", &T::end_global_tid), event_type = in("eventType"),
                text_id = in("textId"), text_column = in("text"), domain_id = bind(in, "domainId", &T::domain_id),
                range_id = bind(in, "rangeId", &T::range_id);
    const bool row_ids = columns_.has(&T::row_id);
    // Row `at` of the table, appended (one scan) or written in place (the parts, into a table sized
    // first); a text without a string id goes through intern(text).
    auto set_row = [&](size_t at, const auto& s, auto&& intern) {
      auto put = [at](auto& column, auto value) {
        if (at < column.size())
          column[at] = value;
        else
          column.push_back(value);
      };
      put(r.start, s.int64_or(start, kNoTime));
      put(r.end, s.int64_or(end, kNoTime));
      put(r.global_tid, s.int64_or(global_tid, 0));
      if (end_global_tid) put(r.end_global_tid, s.int64_or(end_global_tid, kNone));
      put(r.kind, static_cast<uint16_t>(s.int64_or(event_type, 0xFFFF)));
      StrId text = kNoStr;
      if (!s.is_null(text_id)) text = ids.map(s.int64(text_id));
      if (text == kNoStr && !s.is_null(text_column)) text = intern(s.text(text_column));
      put(r.text, text);
      if (domain_id) put(r.domain_id, s.int64_or(domain_id, kNone));
      if (range_id) put(r.range_id, s.int64_or(range_id, kNone));
      if (row_ids) put(r.row_id, static_cast<int64_t>(at) + 1);
    };
    if (split_parts_ > 1 && fast_ && trace_.source.has_table(table)) {
      TRACEDOC_ASSIGN_OR_RETURN(auto cols, db_.column_names(table));
      TRACEDOC_RETURN_IF_ERROR(check_required_columns(table, cols));
      Status st = load_ranges_in_parts(table, in, set_row);
      // An I/O error (the file shrank) is final; anything else is read again by one scan below.
      if (st.ok() || st.code() == ErrorCode::kIo) return st;
    }
    return scan(
        table, in,
        [&](const auto& s) {
          set_row(r.size(), s, [&](std::string_view text) {
            const StrId id = trace_.strings.intern(text);
            if (id + 1 == trace_.strings.size()) texts_may_carry_sizes_ |= may_carry_sizes(text);  // a new text
            return id;
          });
        },
        [&](size_t n) { prepare_table(r, n); });
  }

  template <typename SetRow>
  Status load_ranges_in_parts(const std::string& table, const Fields& in, SetRow& set_row) {
    TRACEDOC_ASSIGN_OR_RETURN(const FastLayout layout, fast_layout(table, in.names()));
    const size_t parts = split_parts_;
    SqlitePageFile::TableLeaves leaves;
    TRACEDOC_RETURN_IF_ERROR(fast_->leaf_pages(layout.root, leaves));
    auto bounds_of = [&](size_t i) {  // part i's share of the leaves, in equal counts: [from, to)
      return std::pair<size_t, size_t>{leaves.pages.size() * i / parts, leaves.pages.size() * (i + 1) / parts};
    };
    auto leaves_of = [&](size_t i) {
      const auto [from, to] = bounds_of(i);
      return std::span<const uint32_t>(leaves.pages).subspan(from, to - from);
    };
    // Where each part's rows go. The interior pages' keys tell how many rows each part holds when
    // the rowids have no gaps, as in every export (its rows are only appended); a part that holds
    // fewer (a table rows were deleted from) has the parts counted and read again.
    std::vector<size_t> first_row(parts + 1, 0);
    bool from_keys = true;
    for (size_t i = 0; i < parts && from_keys; ++i) {
      const auto [from, to] = bounds_of(i);
      const std::optional<size_t> rows = leaves.rows_at_most(from, to);
      from_keys = rows.has_value();
      if (rows) first_row[i + 1] = first_row[i] + *rows;
    }
    auto count_parts = [&]() -> Status {
      std::vector<Result<size_t>> counts(parts, size_t{0});
      parallel_for(parts, [&](size_t i) { counts[i] = fast_->count_rows(leaves_of(i)); });
      for (size_t i = 0; i < parts; ++i) {
        if (!counts[i].ok()) return counts[i].status();
        first_row[i + 1] = first_row[i] + *counts[i];
      }
      return Status::Ok();
    };
    if (!from_keys) TRACEDOC_RETURN_IF_ERROR(count_parts());
    bool miscounted = false;
    TRACEDOC_RETURN_IF_ERROR(read_parts(layout, parts, first_row, leaves_of, set_row, miscounted));
    if (miscounted && from_keys) {
      TRACEDOC_RETURN_IF_ERROR(count_parts());
      TRACEDOC_RETURN_IF_ERROR(read_parts(layout, parts, first_row, leaves_of, set_row, miscounted));
    }
    // Counted, and still another count: the file changed under the reader.
    if (miscounted) return BadInput("the table changed while it was read");
    return Status::Ok();
  }

  // The parts' rows into the range table, sized first: part i's go to rows [first_row[i],
  // first_row[i + 1]). `miscounted`: a part held another number of rows (nothing is kept then).
  template <typename LeavesOf, typename SetRow>
  Status read_parts(const FastLayout& layout, size_t parts, const std::vector<size_t>& first_row,
                    const LeavesOf& leaves_of, SetRow& set_row, bool& miscounted) {
    auto& r = trace_.ranges;
    r = RangeTable{};
    const uint64_t filled = columns_.mask<RangeTable>();
    parallel_for(column_count<RangeTable>(), [&](size_t c) {
      if ((filled >> c) & 1) resize_column(r, c, first_row[parts]);
    });
    // Texts without a string id join the trace's pool in the order one scan meets them. A part
    // that starts when every part before it has joined the pool, and no other thread is writing
    // it, interns its texts there itself: on two threads, the parts one thread reads while the
    // other reads the GPU-side tables. Any other part interns into a pool of its own, marking
    // those ids with kPartText (trace ids stay below the mark: 2^31 strings would not fit in
    // memory; a pool that large is read by one scan instead); its pool joins the trace's, and its
    // rows take the trace's ids, as soon as the parts before it have joined, on the thread that
    // finishes last of them.
    constexpr StrId kPartText = StrId{1} << 31;
    if (trace_.strings.size() >= kPartText) return BadInput("too many strings to read in parts");
    const size_t strings_before = trace_.strings.size();
    // What each part writes as it reads, on cache lines of its own: parts next to each other in
    // one array had both threads writing the same line on every row (a quarter of the parts' time).
    struct alignas(64) Part {
      StringPool pool;
      Status status;
      int64_t wrong_type = 0;
      bool miscounted = false, sized = false;
    };
    std::vector<Part> part(parts);
    std::mutex joining;                   // guards the three below
    size_t joined = 0;                    // the parts whose texts are in the trace's pool
    bool pool_busy = false;               // a thread is writing the trace's pool
    std::vector<uint8_t> done(parts, 0);  // read, and sound
    // Joins the parts that are done, in order, while no other thread writes the pool; called
    // with `joining` held.
    auto join_done_parts = [&](std::unique_lock<std::mutex>& lock) {
      while (!pool_busy && joined < parts && done[joined]) {
        const size_t k = joined;
        pool_busy = true;
        lock.unlock();
        std::vector<StrId> to_trace;
        for (StrId id = 0; id < part[k].pool.size(); ++id)
          to_trace.push_back(trace_.strings.intern(part[k].pool.get(id)));
        for (size_t at = first_row[k]; at < first_row[k + 1]; ++at) {
          StrId& text = r.text[at];
          if (text != kNoStr && (text & kPartText)) text = to_trace[text & ~kPartText];
        }
        part[k].pool = StringPool{};
        lock.lock();
        pool_busy = false;
        joined = k + 1;
      }
    };
    parallel_for(parts, [&](size_t i) {
      Part& mine = part[i];
      bool direct = false;
      {
        std::lock_guard lock(joining);
        direct = joined == i && !pool_busy;
        if (direct) pool_busy = true;
      }
      size_t next = first_row[i];
      bool extra = false;  // more rows than expected: never past the part's rows
      auto read = [&](auto&& intern) {
        auto row = [&](const auto& s) {
          if (next == first_row[i + 1]) {
            extra = true;
            return;
          }
          set_row(next++, s, intern);
        };
        auto no_prepare = [](size_t) {};
        mine.status = fast_scan(layout, row, no_prepare, leaves_of(i), &mine.wrong_type);
      };
      if (direct) {
        read([&](std::string_view text) {
          const StrId id = trace_.strings.intern(text);
          if (id + 1 == trace_.strings.size()) mine.sized |= may_carry_sizes(text);  // a new text
          return id;
        });
      } else {
        read([&](std::string_view text) {
          const StrId id = mine.pool.intern(text);
          if (id + 1 == mine.pool.size()) mine.sized |= may_carry_sizes(text);  // a new text of the part
          return id | kPartText;
        });
      }
      mine.miscounted = extra || next != first_row[i + 1];
      std::unique_lock lock(joining);
      done[i] = mine.status.ok() && !mine.miscounted;  // a part after an unsound one never joins
      if (direct) {
        pool_busy = false;
        if (done[i]) joined = i + 1;
      }
      join_done_parts(lock);
    });
    Status failed = Status::Ok();
    for (const Part& p : part) {
      if (!p.status.ok() && failed.ok()) failed = p.status;
    }
    miscounted = std::any_of(part.begin(), part.end(), [](const Part& p) { return p.miscounted; });
    if (!failed.ok() || miscounted) {
      trace_.strings.truncate(strings_before);  // read again, or by one scan: as if never read
      return failed;
    }
    for (const Part& p : part) wrong_type_ += p.wrong_type, texts_may_carry_sizes_ |= p.sized;
    return Status::Ok();
  }

  Status load_strings(StringIdMap& ids) {
    Fields in;
    const Field id = in("id"), value = in("value");
    Status st = scan(
        "StringIds", in,
        [&](const auto& s) {
          texts_may_carry_sizes_ |= may_carry_sizes(s.text(value));
          ids.add(s.int64(id), trace_.strings.intern(s.text(value)));
        },
        [&](size_t) { ids = StringIdMap{}; });
    ids.finish();
    return st;
  }

  Status load_small_tables(const StringIdMap& ids) {
    {
      Fields in;
      const Field global_tid = in("globalTid"), name_id = in("nameId"), priority = in("priority");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "ThreadNames", in,
          [&](const auto& s) {
            trace_.threads.push_back({s.int64_or(global_tid, 0), ids.map(s.int64_or(name_id, kNone)),
                                      static_cast<int32_t>(s.int64_or(priority, 0))});
          },
          [&](size_t) { trace_.threads.clear(); }));
    }
    {
      Fields in;
      const Field global_pid = in("globalPid"), pid = in("pid"), name = in("name");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "PROCESSES", in,
          [&](const auto& s) {
            trace_.processes.push_back({s.int64_or(global_pid, 0), s.int64_or(pid, 0),
                                        s.is_null(name) ? kNoStr : trace_.strings.intern(s.text(name))});
          },
          [&](size_t) { trace_.processes.clear(); }));
    }
    {
      Fields in;
      const Field id = in("id"), name = in("name"), sm_count = in("smCount"), total_memory = in("totalMemory"),
                  compute_major = in("computeMajor"), compute_minor = in("computeMinor"), clock = in("clockRate"),
                  bandwidth = in("memoryBandwidth");
      TRACEDOC_RETURN_IF_ERROR(scan(
          "TARGET_INFO_GPU", in,
          [&](const auto& s) {
            trace_.devices.push_back(
                {static_cast<int32_t>(s.int64_or(id, 0)),
                 s.is_null(name) ? kNoStr : trace_.strings.intern(s.text(name)),
                 static_cast<int32_t>(s.int64_or(sm_count, 0)), s.int64_or(total_memory, 0),
                 static_cast<int32_t>(s.int64_or(compute_major, 0)), static_cast<int32_t>(s.int64_or(compute_minor, 0)),
                 std::max<int64_t>(0, s.int64_or(clock, 0)), std::max<int64_t>(0, s.int64_or(bandwidth, 0))});
          },
          [&](size_t) { trace_.devices.clear(); }));
    }
    auto load_enum = [&](const std::string& table, std::vector<std::string>& labels) {
      {
        Fields in;
        const Field id_column = in("id"), label = in("label");
        return scan(
            table, in,
            [&](const auto& s) {
              int64_t id = s.int64_or(id_column, -1);
              if (id < 0 || id > 255) return;
              if (labels.size() <= static_cast<size_t>(id)) labels.resize(static_cast<size_t>(id) + 1);
              labels[static_cast<size_t>(id)] = std::string(s.text(label));
            },
            [&](size_t) { labels.clear(); });
      }
    };
    TRACEDOC_RETURN_IF_ERROR(load_enum("ENUM_CUDA_MEMCPY_OPER", trace_.copy_kind_labels));
    TRACEDOC_RETURN_IF_ERROR(load_enum("ENUM_CUDA_MEM_KIND", trace_.mem_kind_labels));
    return Status::Ok();
  }

  Status load_metadata() {
    auto& src = trace_.source;
    const std::string meta = src.has_table("META_DATA_EXPORT") ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
    {
      Fields in;
      const Field name_column = in("name"), value = in("value");
      TRACEDOC_RETURN_IF_ERROR(scan(meta, in, [&](const auto& s) {
        std::string_view name = s.text(name_column);
        if (name == "EXPORT_PRODUCT_VERSION") src.product_version = std::string(s.text(value));
        if (name == "EXPORT_SCHEMA_VERSION") src.schema_version = std::string(s.text(value));
      }));
    }
    {
      Fields in;
      const Field utc_epoch_ns = in("utcEpochNs");
      return scan("TARGET_INFO_SESSION_START_TIME", in,
                  [&](const auto& s) { src.session_start_utc_ns = s.int64_or(utc_epoch_ns, 0); });
    }
  }

 private:
  const SqliteDb& db_;
  Trace& trace_;
  const SqlitePageFile* fast_ = nullptr;
  ColumnSelection columns_;
  size_t split_parts_ = 1;
  int64_t wrong_type_ = 0;
  bool texts_may_carry_sizes_ = false;
  int64_t untimed_ = 0;
  int64_t unnamed_metrics_ = 0;
  std::vector<std::string> gpu_metric_names_;  // load_gpu_metrics: the names `metric` indexes

  // in(name) when the read fills `member`'s column, else an unbound Field: the scan decodes only
  // the columns some row function stores.
  template <typename Table, typename T>
  Field bind(Fields& in, std::string name, std::vector<T> Table::*member) const {
    return columns_.has(member) ? in(std::move(name)) : Field{};
  }
  // Empties a table and makes room for n rows in the columns the read fills.
  template <typename Table>
  void prepare_table(Table& table, size_t n) const {
    table = Table{};
    reserve_rows(table, n, columns_.mask<Table>());
  }

  // Whether an interval row has both times. nsys declares them NOT NULL; a row without them (NULL,
  // or text: a damaged file) is dropped and counted, as JSON events without a usable timestamp
  // are, so that no report sums durations of -2^63 ns.
  template <typename Row>
  bool timed(const Row& s, Field start, Field end) {
    if (s.is_number(start) && s.is_number(end)) return true;
    ++untimed_;
    return false;
  }
};

bool is_nsys_export(const std::set<std::string>& tables) {
  if (tables.count("StringIds") == 0) return false;
  return tables.count("META_DATA_EXPORT") || tables.count("EXPORT_META_DATA") ||
         tables.count("CUPTI_ACTIVITY_KIND_RUNTIME") || tables.count("NVTX_EVENTS") ||
         tables.count("TARGET_INFO_SESSION_START_TIME");
}

}  // namespace

bool looks_like_sqlite(const std::string& path) {
  const auto head = read_file_head(path, 16);
  return head.ok() && *head == std::string_view("SQLite format 3\0", 16);
}

Result<Trace> read_nsys_sqlite(const std::string& path, const NsysReadOptions& options) {
  TRACEDOC_RETURN_IF_ERROR(read_file_head(path, 0).status());  // a directory, a file that cannot be opened
  // A file another program truncates while SQLite reads it fails with whatever SQLite makes of the
  // missing pages; say what happened instead (the page scanner says it itself).
  std::error_code size_error;
  const uintmax_t size_at_open = std::filesystem::file_size(path, size_error);
  auto explain = [&](Status st) {
    std::error_code ec;
    const uintmax_t now = std::filesystem::file_size(path, ec);
    if (st.ok() || st.code() == ErrorCode::kIo || size_error || ec || now >= size_at_open) return st;
    return file_shrank(path, size_at_open, static_cast<int64_t>(now));
  };
  if (!looks_like_sqlite(path)) {
    return BadInput(fmt::format("{}: not an SQLite database (expected an Nsight Systems SQLite export)", path));
  }
  TRACEDOC_ASSIGN_OR_RETURN(auto db, SqliteDb::open_read_only(path));
  auto tables = db.table_names();
  if (!tables.ok()) {
    return BadInput(fmt::format("{}: damaged or truncated SQLite file ({})", path, tables.status().message()));
  }
  if (!is_nsys_export(*tables)) {
    return BadInput(fmt::format(
        "{}: SQLite file without Nsight Systems tables (no StringIds / META_DATA_EXPORT): not an nsys export", path));
  }

  Trace trace;
  trace.source.path = path;
  trace.source.format = "nsys-sqlite";
  trace.source.tables = *tables;
  trace.source.has_enum_tables = tables->count("ENUM_CUDA_MEMCPY_OPER") != 0;
  {
    auto cols = db.column_names("CUPTI_ACTIVITY_KIND_KERNEL");
    trace.source.has_green_context = cols.ok() && cols->count("greenContextId");
  }

  const uint32_t want = options.tables;
  // The direct b-tree scanner, when the file's format allows it (else SQLite reads everything).
  std::unique_ptr<SqlitePageFile> fast;
  if (options.fast_scan) {
    auto pages = SqlitePageFile::open(path);
    if (pages.ok()) fast = std::move(pages).value();
  }
  Loader main_loader(db, trace);
  main_loader.use_fast_scanner(fast.get());
  main_loader.select_columns(options.columns);
  StringIdMap ids;

  // The tables as jobs on the task pool (common/task_pool.h): the strings, NVTX and the other host
  // tables in one chain (the ranges need the strings), and each GPU-side table on its own, with its
  // own read-only connection. The jobs write to disjoint members of `trace`; their counters are
  // summed and the first error in job order is reported, so the result is the same on any number
  // of threads.
  struct TableJob {
    uint32_t bit;
    Status (Loader::*load)();
  };
  static constexpr TableJob kGpuSide[] = {
      {kLoadApi, &Loader::load_api},       {kLoadKernels, &Loader::load_kernels},
      {kLoadMemcpy, &Loader::load_memcpy}, {kLoadMemset, &Loader::load_memset},
      {kLoadSyncs, &Loader::load_syncs},   {kLoadGraphsAndEvents, &Loader::load_graphs_and_events},
      {kLoadMemory, &Loader::load_memory}, {kLoadUnifiedMemory, &Loader::load_unified_memory},
      {kLoadOpenMp, &Loader::load_openmp}, {kLoadGpuMetrics, &Loader::load_gpu_metrics},
  };
  constexpr size_t kJobs = 1 + std::size(kGpuSide);
  const bool parallel = options.parallel && thread_count() > 1;
  // The NVTX table alone can be half of an export's rows: in parts, it spreads over every thread
  // (and fills the gaps the other tables leave).
  // (Each part walks the table's interior pages: at most 64 parts.)
  if (parallel) main_loader.split_scans(std::min<size_t>(4 * static_cast<size_t>(thread_count()), 64));
  const auto t0 = std::chrono::steady_clock::now();
  // TRACEDOC_TIMING=1: when each job ran, on stderr after the read.
  const bool timing = std::getenv("TRACEDOC_TIMING") != nullptr;
  std::array<std::pair<double, double>, kJobs> job_times{};
  auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::array<Status, kJobs> statuses;
  std::array<int64_t, kJobs> wrong_type{}, untimed{};
  std::vector<std::string> gpu_metric_names;
  int64_t unnamed_metrics = 0;
  auto host_chain = [&] {
    job_times[0].first = since_start();
    Status st = main_loader.load_metadata();
    if (st.ok()) st = main_loader.load_strings(ids);
    if (st.ok()) st = MemoryBudget::check(path);
    if (st.ok() && (want & kLoadRanges)) st = main_loader.load_ranges(ids);
    if (st.ok() && (want & kLoadOsCalls)) st = main_loader.load_os_calls();
    if (st.ok() && (want & kLoadOverhead)) st = main_loader.load_overhead();
    if (st.ok() && (want & kLoadCpuSched)) st = main_loader.load_cpu_sched();
    if (st.ok() && (want & kLoadOsCalls)) st = main_loader.load_callchains("OSRT_CALLCHAINS", trace.os_calls.stack);
    if (st.ok()) st = main_loader.load_small_tables(ids);
    if (st.ok()) st = MemoryBudget::check(path);
    statuses[0] = st;
    wrong_type[0] = main_loader.wrong_type(), untimed[0] = main_loader.untimed();
    job_times[0].second = since_start();
  };
  auto gpu_table = [&](size_t j) {
    const TableJob& job = kGpuSide[j];
    if (!(want & job.bit)) return;
    std::optional<SqliteDb> own;
    if (parallel) {
      auto opened = SqliteDb::open_read_only(path);
      if (!opened.ok()) {
        statuses[1 + j] = opened.status();
        return;
      }
      own.emplace(std::move(opened).value());
    }
    Loader loader(own ? *own : db, trace);
    loader.use_fast_scanner(fast.get());
    loader.select_columns(options.columns);
    job_times[1 + j].first = since_start();
    Status st = (loader.*job.load)();
    if (st.ok()) st = MemoryBudget::check(path);
    statuses[1 + j] = st;
    wrong_type[1 + j] = loader.wrong_type(), untimed[1 + j] = loader.untimed();
    if (job.bit == kLoadGpuMetrics)
      gpu_metric_names = loader.gpu_metric_names(), unnamed_metrics = loader.unnamed_metrics();
    job_times[1 + j].second = since_start();
  };
  if (parallel) {
    parallel_for(kJobs, [&](size_t j) { j == 0 ? host_chain() : gpu_table(j - 1); });
  } else {
    host_chain();
    for (size_t j = 0; j < std::size(kGpuSide) && statuses[0].ok(); ++j) {
      gpu_table(j);
      if (!statuses[1 + j].ok()) break;
    }
  }
  if (timing) {
    std::fprintf(stderr, "timing: tables read in %.3f s on %d threads\n", since_start(), parallel ? thread_count() : 1);
    for (size_t j = 0; j < kJobs; ++j) {
      if (job_times[j].second > 0)
        std::fprintf(stderr, "timing:   job %zu (%s) %.3f .. %.3f s\n", j, j == 0 ? "host tables" : "GPU-side table",
                     job_times[j].first, job_times[j].second);
    }
  }
  for (const Status& st : statuses) {
    if (!st.ok()) return explain(st);
  }
  for (size_t j = 0; j < kJobs; ++j)
    trace.warnings.bad_values += wrong_type[j], trace.warnings.missing_times += untimed[j];
  // The CUDA calls' stacks, now that the host chain is done with the stacks.
  if (want & kLoadApi) {
    if (Status st = main_loader.load_callchains("CUDA_CALLCHAINS", trace.api.stack); !st.ok()) return explain(st);
  }

  // The GPU-side tables hold the export's string ids (they were read before the strings were):
  // each column takes the pool's ids at once, with the call stacks' names.
  const std::array<std::vector<StrId>*, 7> named = {
      &trace.kernels.name,  &trace.kernels.short_name, &trace.kernels.mangled_name, &trace.api.name,
      &trace.os_calls.name, &trace.overhead.name,      &trace.openmp.name};
  std::array<int64_t, named.size() + 1> unknown{};
  parallel_for(unknown.size(), [&](size_t c) {
    unknown[c] =
        c < named.size() ? ids.remap(*named[c]) : trace.stacks.map_names([&](StrId raw) { return ids.map(raw); });
  });
  for (int64_t n : unknown) trace.warnings.unknown_string_ids += n;
  // The GPU metrics' names, now that the pool is free.
  std::vector<StrId> metric_ids;
  for (const std::string& name : gpu_metric_names) metric_ids.push_back(trace.strings.intern(name));
  for (StrId& m : trace.gpu_metrics.metric) m = metric_ids[m];
  trace.warnings.unnamed_metrics += unnamed_metrics;

  count_reversed_rows(trace);
  if (want & kLoadRanges) add_emit_nvtx_operators(trace, main_loader.texts_may_carry_sizes());
  return trace;
}

void count_reversed_rows(Trace& trace) {
  const std::array<std::pair<const std::vector<TimeNs>*, const std::vector<TimeNs>*>, 6> intervals = {{
      {&trace.kernels.start, &trace.kernels.end},
      {&trace.memcpys.start, &trace.memcpys.end},
      {&trace.memsets.start, &trace.memsets.end},
      {&trace.api.start, &trace.api.end},
      {&trace.ranges.start, &trace.ranges.end},
      {&trace.os_calls.start, &trace.os_calls.end},
  }};
  std::array<int64_t, intervals.size()> reversed{};
  parallel_for(intervals.size(), [&](size_t t) {
    const auto& [start, end] = intervals[t];
    int64_t n = 0;  // counted here, not in `reversed`: its counters share a cache line
    for (size_t i = 0; i < start->size(); ++i) n += (*end)[i] != kNoTime && (*end)[i] < (*start)[i];
    reversed[t] = n;
  });
  for (int64_t n : reversed) trace.warnings.negative_durations += n;
}

}  // namespace tracedoc
