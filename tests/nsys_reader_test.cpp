// The nsys SQLite reader on every real export: what it loads, that the direct page scanner reads
// exactly what SQLite reads, and the schema differences it absorbs.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "common/task_pool.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/sqlite_fast_scan.h"
#include "view/timeline.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> all_exports() {
  std::vector<fs::path> out;
  const fs::path root = nsys_traces_dir();
  if (root.empty()) return out;
  for (const auto& d : fs::directory_iterator(root)) {
    if (!d.is_directory() || d.path().filename() == "oracles") continue;
    for (const auto& f : fs::directory_iterator(d.path())) {
      if (f.path().extension() == ".sqlite") out.push_back(f.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename T>
void expect_same_column(const std::vector<T>& a, const std::vector<T>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      ADD_FAILURE() << what << " differs at row " << i;
      return;
    }
  }
}

// String ids may differ between two loads only if interning order differed; compare the text.
void expect_same_strings(const Trace& a, const std::vector<StrId>& ca, const Trace& b, const std::vector<StrId>& cb,
                         const std::string& what) {
  ASSERT_EQ(ca.size(), cb.size()) << what;
  for (size_t i = 0; i < ca.size(); ++i) {
    if ((ca[i] == kNoStr) != (cb[i] == kNoStr) || a.str(ca[i]) != b.str(cb[i])) {
      ADD_FAILURE() << what << " differs at row " << i;
      return;
    }
  }
}

TRACEDOC_TEST_LABELS(NsysReader, corpus threads);

TEST(NsysReader, DirectPageScanReadsWhatSqliteReads) {
  auto exports = all_exports();
  if (exports.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  for (const auto& path : exports) {
    SCOPED_TRACE(path.filename().string());
    NsysReadOptions fast, slow;
    slow.fast_scan = false;
    auto a = read_nsys_sqlite(path.string(), fast);
    auto b = read_nsys_sqlite(path.string(), slow);
    ASSERT_TRUE(a.ok()) << a.status().message();
    ASSERT_TRUE(b.ok()) << b.status().message();
    const Trace& x = *a;
    const Trace& y = *b;
    expect_same_column(x.kernels.start, y.kernels.start, "kernel start");
    expect_same_column(x.kernels.end, y.kernels.end, "kernel end");
    expect_same_column(x.kernels.correlation, y.kernels.correlation, "kernel correlation");
    expect_same_column(x.kernels.grid_x, y.kernels.grid_x, "kernel gridX");
    expect_same_column(x.kernels.green_context, y.kernels.green_context, "kernel greenContextId");
    expect_same_strings(x, x.kernels.name, y, y.kernels.name, "kernel name");
    expect_same_column(x.memcpys.bytes, y.memcpys.bytes, "memcpy bytes");
    expect_same_column(x.memcpys.copy_kind, y.memcpys.copy_kind, "memcpy kind");
    expect_same_column(x.memcpys.src_device, y.memcpys.src_device, "memcpy srcDeviceId");
    expect_same_column(x.memsets.bytes, y.memsets.bytes, "memset bytes");
    expect_same_column(x.api.start, y.api.start, "api start");
    expect_same_column(x.api.global_tid, y.api.global_tid, "api globalTid");
    expect_same_column(x.api.return_value, y.api.return_value, "api returnValue");
    expect_same_strings(x, x.api.name, y, y.api.name, "api name");
    expect_same_column(x.ranges.end, y.ranges.end, "nvtx end");
    expect_same_column(x.ranges.end_global_tid, y.ranges.end_global_tid, "nvtx endGlobalTid");
    expect_same_strings(x, x.ranges.text, y, y.ranges.text, "nvtx text");
    expect_same_column(x.os_calls.start, y.os_calls.start, "osrt start");
    expect_same_strings(x, x.os_calls.name, y, y.os_calls.name, "osrt name");
    expect_same_column(x.syncs.sync_type, y.syncs.sync_type, "sync type");
    expect_same_column(x.cuda_events.event_id, y.cuda_events.event_id, "cuda event eventId");
    expect_same_column(x.cuda_events.stream, y.cuda_events.stream, "cuda event streamId");
    expect_same_column(x.cuda_events.sync_id, y.cuda_events.sync_id, "cuda event eventSyncId");
    EXPECT_EQ(x.threads.size(), y.threads.size());
    EXPECT_EQ(x.devices.size(), y.devices.size());
  }
}

// NVTX_EVENTS read in parts at once (several threads) gives the model one scan gives (one
// thread): the same rows in the same order, row ids, and the inline texts interned in row order.
TEST(NsysReader, TablesReadInPartsMatchOneScan) {
  auto exports = all_exports();
  if (exports.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  const int before = thread_count();
  for (const auto& path : exports) {
    set_thread_count(1);
    auto one = read_nsys_sqlite(path.string());
    set_thread_count(3);  // 12 parts
    auto parts = read_nsys_sqlite(path.string());
    ASSERT_TRUE(one.ok()) << one.status().message();
    ASSERT_TRUE(parts.ok()) << parts.status().message();
    expect_same_trace(*one, *parts, path.filename().string());
  }
  set_thread_count(before);
}

// The tables of an SQLite file and their root pages, with each one's row count and whether its
// rowids run without gaps.
struct TableRoot {
  std::string name;
  uint32_t root = 0;
  size_t rows = 0;
  bool dense = false;
};
std::vector<TableRoot> table_roots(const fs::path& path) {
  std::vector<TableRoot> out;
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT name, rootpage FROM sqlite_master WHERE type = 'table' AND rootpage > 0", -1, &st,
                     nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.push_back({reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                   static_cast<uint32_t>(sqlite3_column_int64(st, 1)), 0});
  }
  sqlite3_finalize(st);
  for (TableRoot& t : out) {
    sqlite3_prepare_v2(db, ("SELECT count(*), max(rowid) - min(rowid) + 1 FROM \"" + t.name + "\"").c_str(), -1, &st,
                       nullptr);
    if (sqlite3_step(st) == SQLITE_ROW) {
      t.rows = static_cast<size_t>(sqlite3_column_int64(st, 0));
      t.dense = t.rows == static_cast<size_t>(sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

// A copy of `source` with `sql` applied.
fs::path modified_copy(const ScratchDir& dir, const fs::path& source, const std::string& name, const std::string& sql) {
  const fs::path copy = dir.path() / name;
  fs::copy_file(source, copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  sqlite3* db = nullptr;
  sqlite3_open(copy.c_str(), &db);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return copy;
}

// What the interior pages' keys say a run of leaves holds, against the rows counted in them, for
// every table of `path`, whole and in 12 parts: exact for the tables without rowid gaps, never
// fewer rows than there are for the others.
struct KeyedCounts {
  size_t runs = 0, exact = 0, over = 0, unknown = 0;
  size_t dense_runs = 0, dense_exact = 0;
  std::vector<std::string> with_gaps;  // the tables whose rowids have gaps
};
KeyedCounts keyed_counts(const fs::path& path, const std::string& only_table = "") {
  KeyedCounts out;
  auto file = SqlitePageFile::open(path.string());
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return out;
  for (const TableRoot& t : table_roots(path)) {
    if (!only_table.empty() && t.name != only_table) continue;
    if (!t.dense) out.with_gaps.push_back(t.name);
    SqlitePageFile::TableLeaves leaves;
    const Status st = (*file)->leaf_pages(t.root, leaves);
    EXPECT_TRUE(st.ok()) << t.name << ": " << st.message();
    if (!st.ok()) continue;
    const size_t n = leaves.pages.size(), parts = std::min<size_t>(12, n);
    std::vector<std::pair<size_t, size_t>> runs = {{0, n}};
    for (size_t i = 0; i < parts; ++i) runs.emplace_back(n * i / parts, n * (i + 1) / parts);
    for (const auto& [from, to] : runs) {
      auto counted = (*file)->count_rows(std::span<const uint32_t>(leaves.pages).subspan(from, to - from));
      EXPECT_TRUE(counted.ok()) << t.name;
      if (from == 0 && to == n) {
        EXPECT_EQ(*counted, t.rows) << t.name;
      }
      const std::optional<size_t> keyed = leaves.rows_at_most(from, to);
      ++out.runs;
      out.dense_runs += t.dense;
      out.dense_exact += t.dense && keyed == *counted;
      if (!keyed) {
        ++out.unknown;
      } else if (*keyed == *counted) {
        ++out.exact;
      } else {
        EXPECT_GT(*keyed, *counted) << t.name << " leaves " << from << ".." << to;
        ++out.over;
      }
    }
  }
  return out;
}

// The event tables of every real export were only appended to: their rowids run without gaps, and
// the keys of their interior pages give the rows of any run of their leaves exactly, so a table is
// read without counting its rows first. Only small tables keyed by their values (StringIds from 0,
// the ENUM tables) have gaps, and the keys never tell fewer rows than they hold.
TEST(NsysReader, InteriorKeysGiveEveryTablesRowCounts) {
  auto exports = all_exports();
  if (exports.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  KeyedCounts all;
  for (const auto& path : exports) {
    SCOPED_TRACE(path.filename().string());
    const KeyedCounts c = keyed_counts(path);
    EXPECT_EQ(c.dense_exact, c.dense_runs);
    for (const std::string& table : c.with_gaps)
      EXPECT_TRUE(table.starts_with("ENUM_") || table == "StringIds") << table;
    all.runs += c.runs, all.dense_runs += c.dense_runs;
  }
  EXPECT_GT(all.dense_runs, 1000u);
}

// A table rows were deleted from (its rowids have gaps) and one whose rowids lie far apart: the
// keys tell more rows than there are, or nothing, and the parts are counted and read again. The
// model is still the one a single scan reads, and so is what SQLite reads.
TEST(NsysReader, RangesWithRowidGapsReadInPartsMatchOneScan) {
  const fs::path root = nsys_traces_dir();
  if (root.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  const fs::path source = root / "nsys-ai/mfu_2gpu_before.sqlite";
  ScratchDir dir;
  const fs::path gaps = modified_copy(dir, source, "gaps.sqlite",
                                      "DELETE FROM NVTX_EVENTS WHERE rowid % 7 = 3 OR rowid BETWEEN 5000 AND 6200");
  const fs::path apart = modified_copy(dir, source, "apart.sqlite",
                                       "UPDATE NVTX_EVENTS SET rowid = rowid + 4000000000000000000 "
                                       "WHERE rowid > 15000");
  const KeyedCounts g = keyed_counts(gaps, "NVTX_EVENTS"), a = keyed_counts(apart, "NVTX_EVENTS");
  EXPECT_GT(g.over, 0u);
  EXPECT_GT(a.unknown, 0u);
  const int before = thread_count();
  for (const fs::path& path : {gaps, apart}) {
    SCOPED_TRACE(path.filename().string());
    set_thread_count(1);
    auto one = read_nsys_sqlite(path.string());
    set_thread_count(3);  // 12 parts
    auto parts = read_nsys_sqlite(path.string());
    NsysReadOptions slow;
    slow.fast_scan = false;
    auto sqlite = read_nsys_sqlite(path.string(), slow);
    ASSERT_TRUE(one.ok()) << one.status().message();
    ASSERT_TRUE(parts.ok()) << parts.status().message();
    ASSERT_TRUE(sqlite.ok()) << sqlite.status().message();
    EXPECT_EQ(parts->ranges.size(), path == gaps ? 19118u - 3760u : 19118u);
    expect_same_trace(*one, *parts, path.filename().string());
    expect_same_column(parts->ranges.start, sqlite->ranges.start, "nvtx start");
    expect_same_strings(*parts, parts->ranges.text, *sqlite, sqlite->ranges.text, "nvtx text");
  }
  set_thread_count(before);
}

TEST(NsysReader, ReadsEverySchemaWithRealCounts) {
  const fs::path root = nsys_traces_dir();
  if (root.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  struct Expect {
    const char* file;
    size_t kernels, memcpy, memset, api, nvtx;
    const char* schema;
  };
  const Expect cases[] = {
      {"DLProf/nsys_profile.sqlite", 46, 12, 4, 279, 82, "2.9.1"},
      {"SC23_OpenMP_Tutorial/report3.sqlite", 50, 200, 0, 312, 0, "3.4.0"},
      {"qcu/log_ZhangXin8069_495969.nvvp.sqlite", 0, 0, 0, 33681, 0, "3.4.0"},
      {"cuda-thinkering/output.sqlite", 1, 3, 0, 12, 0, "3.13.2"},
      {"test-cuda/report1.sqlite", 4, 12, 0, 44, 0, "3.24.14"},
      {"nsys-ai/mfu_2gpu_before.sqlite", 4010, 1020, 269, 7466, 19118, "3.25.0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto t = read_nsys_sqlite((root / c.file).string());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->kernels.size(), c.kernels);
    EXPECT_EQ(t->memcpys.size(), c.memcpy);
    EXPECT_EQ(t->memsets.size(), c.memset);
    EXPECT_EQ(t->api.size(), c.api);
    EXPECT_EQ(t->ranges.size(), c.nvtx);
    EXPECT_EQ(t->source.schema_version, c.schema);
  }
  // Old exports: no greenContextId column, no ENUM tables (2.9.1) -> built-in labels.
  auto old = read_nsys_sqlite((root / "DLProf/nsys_profile.sqlite").string());
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->source.has_green_context);
  EXPECT_FALSE(old->source.has_enum_tables);
  EXPECT_EQ(old->copy_label(1), "Host-to-Device");
  EXPECT_TRUE(old->source.has_table("EXPORT_META_DATA"));
}

// CUDA event records (CUPTI_ACTIVITY_KIND_CUDA_EVENT) from old (no timestamp, no eventSyncId) and
// new exports, and what they tell: the stream whose event a stream wait waited for.
TEST(NsysReader, ReadsCudaEventRecords) {
  const fs::path root = nsys_traces_dir();
  if (root.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  auto qcu = read_nsys_sqlite((root / "qcu/log_ZhangXin8069_495969.nvvp.sqlite").string());
  ASSERT_TRUE(qcu.ok()) << qcu.status().message();
  const CudaEventTable& e = qcu->cuda_events;
  ASSERT_EQ(e.size(), 4963u);
  EXPECT_EQ(e.stream[0], 21);
  EXPECT_EQ(e.correlation[0], 2054);
  EXPECT_EQ(e.event_id[0], 41);
  EXPECT_EQ(e.time[0], kNoTime);      // the 3.4.0 table has no timestamp column
  EXPECT_EQ(e.sync_id[0], kNoValue);  // nor eventSyncId
  const view::EventRecords records(*qcu);
  // The first stream wait (syncType 2) of the export waits for event 42, recorded on stream 21.
  const SyncTable& y = qcu->syncs;
  size_t wait = y.size();
  for (size_t i = 0; i < y.size() && wait == y.size(); ++i) wait = y.sync_type[i] == 2 ? i : wait;
  ASSERT_LT(wait, y.size());
  view::TrackItem item;
  item.category = view::Category::kSync, item.row = static_cast<uint32_t>(wait);
  EXPECT_EQ(view::item_detail(*qcu, item, &records), "event 42, recorded on GPU 0 stream 21");

  auto recent = read_nsys_sqlite((root / "test-cuda/report1.sqlite").string());
  ASSERT_TRUE(recent.ok()) << recent.status().message();
  ASSERT_EQ(recent->cuda_events.size(), 2u);
  EXPECT_EQ(recent->cuda_events.time[0], kNoTime);  // timestamp 0: not collected
  EXPECT_EQ(recent->cuda_events.sync_id[0], 1);
  EXPECT_EQ(recent->cuda_events.sync_id[1], 2);
  EXPECT_EQ(recent->cuda_events.stream[1], 7);
}

TEST(NsysReader, DecodesSerializedThreadIds) {
  const fs::path root = nsys_traces_dir();
  if (root.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  auto t = read_nsys_sqlite((root / "nsys-ai/mfu_2gpu_before.sqlite").string());
  ASSERT_TRUE(t.ok());
  std::set<int64_t> pids;
  for (int64_t g : t->api.global_tid) pids.insert(pid_of(g));
  EXPECT_EQ(pids, (std::set<int64_t>{144, 145}));  // two ranks, one process each
  const int64_t g = make_global_tid(1, 145, 145);
  EXPECT_EQ(g, 0x1000091000091LL);
  EXPECT_EQ(pid_of(g), 145);
  EXPECT_EQ(tid_of(g), 145);
  EXPECT_EQ(global_pid_of(g), 0x1000091000000LL);
}

}  // namespace
}  // namespace tracedoc::testing
