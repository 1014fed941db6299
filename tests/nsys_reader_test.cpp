// The nsys SQLite reader on every real export: what it loads, that the direct page scanner reads
// exactly what SQLite reads, and the schema differences it absorbs.
#include <gtest/gtest.h>

#include "common/task_pool.h"
#include "ingest/nsys_sqlite_reader.h"
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
