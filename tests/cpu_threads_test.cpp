// CPU threads: running time from thread switches, CPU samples, OS runtime waits and CUDA API time per
// thread, recomputed here with SQL on every shared nsys export that records them (window functions
// pair each switch-in with the thread's next switch; sums per thread), and compared with
// cpu_thread_stats for every thread.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>

#include "analysis/cpu_threads.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

struct Expected {
  int64_t running = -1, switches = 0, samples = 0, samples_running = 0;
  int64_t lock_waits = 0, lock_ns = 0, io_ns = 0, sleep_ns = 0, os_ns = 0;
};

// Runs `sql` (rows: globalTid, value...) and hands each row to `fn`.
template <typename Fn>
void query(sqlite3* db, const std::string& sql, Fn fn) {
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db) << "\n" << sql;
  while (sqlite3_step(stmt) == SQLITE_ROW) fn(stmt);
  sqlite3_finalize(stmt);
}

bool has_table(sqlite3* db, const char* table) {
  bool found = false;
  query(db, std::string("SELECT 1 FROM sqlite_master WHERE type='table' AND name='") + table + "'",
        [&](sqlite3_stmt*) { found = true; });
  return found;
}

// The OS runtime call classes, written out as SQL.
const char* kLockSql =
    "value IN ('pthread_mutex_lock', 'pthread_mutex_timedlock', 'pthread_mutex_clocklock', 'pthread_cond_wait', "
    "'pthread_cond_timedwait', 'pthread_cond_clockwait', 'pthread_rwlock_rdlock', 'pthread_rwlock_wrlock', "
    "'pthread_rwlock_timedrdlock', 'pthread_rwlock_timedwrlock', 'pthread_join', 'pthread_timedjoin_np', "
    "'pthread_barrier_wait', 'pthread_spin_lock', 'sem_wait', 'sem_timedwait', 'sem_clockwait', 'futex')";
const char* kSleepSql = "value IN ('nanosleep', 'clock_nanosleep', 'usleep', 'sleep')";
const char* kIoSql =
    "value IN ('poll', 'ppoll', 'select', 'pselect', 'pselect6', 'epoll_wait', 'epoll_pwait', 'epoll_pwait2', "
    "'read', 'readv', 'pread', 'pread64', 'preadv', 'recv', 'recvfrom', 'recvmsg', 'recvmmsg', 'accept', 'accept4', "
    "'waitpid', 'wait4', 'waitid', 'sigtimedwait', 'sigwaitinfo', 'fread', 'fgets')";

std::map<int64_t, Expected> expected_from_sql(const std::string& path) {
  std::map<int64_t, Expected> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(("file:" + path + "?mode=ro&immutable=1").c_str(), &db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
            SQLITE_OK);
  if (has_table(db, "SCHED_EVENTS")) {
    // A switch-in followed (on the same thread) by a switch-out: one running stretch. Repeated
    // switch-ins keep the first; a switch-out without a switch-in is ignored.
    query(db,
          "WITH e AS (SELECT globalTid AS g, start, isSchedIn AS i, "
          "  LAG(isSchedIn) OVER (PARTITION BY globalTid ORDER BY start, rowid) AS prev FROM SCHED_EVENTS), "
          "ins AS (SELECT g, start, i FROM e WHERE i != 0 AND (prev IS NULL OR prev = 0) OR i = 0), "
          "pairs AS (SELECT g, start, i, LEAD(start) OVER (PARTITION BY g ORDER BY start) AS nxt, "
          "  LEAD(i) OVER (PARTITION BY g ORDER BY start) AS ni FROM ins) "
          "SELECT g, SUM(CASE WHEN i != 0 AND ni = 0 THEN nxt - start ELSE 0 END), SUM(i != 0) FROM pairs GROUP BY g",
          [&](sqlite3_stmt* s) {
            Expected& e = out[sqlite3_column_int64(s, 0)];
            e.running = sqlite3_column_int64(s, 1);
            e.switches = sqlite3_column_int64(s, 2);
          });
  }
  if (has_table(db, "COMPOSITE_EVENTS")) {
    query(db, "SELECT globalTid, COUNT(*), SUM(threadState = 1) FROM COMPOSITE_EVENTS GROUP BY 1",
          [&](sqlite3_stmt* s) {
            Expected& e = out[sqlite3_column_int64(s, 0)];
            e.samples = sqlite3_column_int64(s, 1);
            e.samples_running = sqlite3_column_int64(s, 2);
          });
  }
  if (has_table(db, "OSRT_API")) {
    const std::string sql = std::string("SELECT globalTid, SUM(end - start), SUM(") + kLockSql + "), SUM(CASE WHEN " +
                            kLockSql + " THEN end - start ELSE 0 END), SUM(CASE WHEN " + kIoSql +
                            " THEN end - start ELSE 0 END), SUM(CASE WHEN " + kSleepSql +
                            " THEN end - start ELSE 0 END) FROM OSRT_API JOIN StringIds ON id = nameId "
                            "WHERE nestingLevel = 0 GROUP BY 1";
    query(db, sql, [&](sqlite3_stmt* s) {
      Expected& e = out[sqlite3_column_int64(s, 0)];
      e.os_ns = sqlite3_column_int64(s, 1);
      e.lock_waits = sqlite3_column_int64(s, 2);
      e.lock_ns = sqlite3_column_int64(s, 3);
      e.io_ns = sqlite3_column_int64(s, 4);
      e.sleep_ns = sqlite3_column_int64(s, 5);
    });
  }
  sqlite3_close(db);
  return out;
}

TRACEDOC_TEST_LABELS(CpuThreads, corpus);

TEST(CpuThreads, EveryThreadOfEveryExportMatchesSql) {
  const auto exports = shared_nsys_exports();
  if (exports.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  size_t threads = 0, with_switches = 0, with_waits = 0;
  for (const auto& [name, path] : exports) {
    SCOPED_TRACE(name);
    const auto expected = expected_from_sql(path);
    const Trace& t = load_nsys(path);
    std::map<int64_t, CpuThreadStats> got;
    for (const auto& s : cpu_thread_stats(t)) got[s.global_tid] = s;
    for (const auto& [tid, e] : expected) {
      if ((tid & 0xFFFFFF) == 0) continue;  // process-level records: no thread
      ASSERT_TRUE(got.count(tid)) << "thread " << tid;
      const CpuThreadStats& g = got[tid];
      ++threads;
      EXPECT_EQ(g.running_ns, e.running) << tid;
      EXPECT_EQ(g.switches_in, e.switches) << tid;
      EXPECT_EQ(g.samples, e.samples) << tid;
      EXPECT_EQ(g.samples_running, e.samples_running) << tid;
      EXPECT_EQ(g.os_ns, e.os_ns) << tid;
      EXPECT_EQ(g.lock_waits, e.lock_waits) << tid;
      EXPECT_EQ(g.lock_wait_ns, e.lock_ns) << tid;
      EXPECT_EQ(g.io_wait_ns, e.io_ns) << tid;
      EXPECT_EQ(g.sleep_ns, e.sleep_ns) << tid;
      with_switches += e.running > 0;
      with_waits += e.lock_waits > 0;
    }
  }
  EXPECT_GE(threads, 50u);
  EXPECT_GE(with_switches, 30u);
  EXPECT_GE(with_waits, 3u);
}

// test-cuda/report1 (RTX 4060 Ti, a CUDA sample): its main thread, by hand from the export: 1054
// switch-ins running 1,299,824,107 ns; 161 samples, all running; 3 lock waits (292,397 ns, longest
// 160,980); I/O wait 91,549,241 = fread 90,161,784 (7 calls) + read 1,362,701 (3) + fgets 24,756 (1);
// the synchronizing CUDA calls 77,010,743 ns.
TEST(CpuThreads, MainThreadOfTestCuda) {
  const auto exports = shared_nsys_exports();
  if (!exports.count("test-cuda_report1")) GTEST_SKIP() << "../shared/traces/nsys not found";
  const Trace& t = load_nsys(exports.at("test-cuda_report1"));
  auto rows = parse_csv(report_csv(t, "cpu_thread_sum").value_or(""));
  ASSERT_GE(rows.size(), 3u);
  const std::vector<std::string> main_thread = {"17068",  "17068",  "async.out", "yes",   "1692699143", "1299824107",
                                                "76.8",   "1054",   "161",       "100.0", "896371916",  "3",
                                                "292397", "160980", "91549241",  "0",     "975158814",  "77010743"};
  EXPECT_EQ(rows[1], main_thread);
}

TEST(CpuThreads, CallClasses) {
  EXPECT_EQ(os_wait_kind("pthread_mutex_lock"), OsWait::kLock);
  EXPECT_EQ(os_wait_kind("pthread_cond_timedwait"), OsWait::kLock);
  EXPECT_EQ(os_wait_kind("sem_wait"), OsWait::kLock);
  EXPECT_EQ(os_wait_kind("poll"), OsWait::kIo);
  EXPECT_EQ(os_wait_kind("fread"), OsWait::kIo);
  EXPECT_EQ(os_wait_kind("nanosleep"), OsWait::kSleep);
  EXPECT_EQ(os_wait_kind("ioctl"), OsWait::kNone);
  EXPECT_EQ(os_wait_kind("readlink"), OsWait::kNone);
  EXPECT_EQ(os_wait_kind("pthread_rwlock_unlock"), OsWait::kNone);
  EXPECT_TRUE(is_sync_call("cudaStreamSynchronize_v3020"));
  EXPECT_TRUE(is_sync_call("cudaDeviceSynchronize"));
  EXPECT_TRUE(is_sync_call("hipStreamSynchronize"));
  EXPECT_TRUE(is_sync_call("cuCtxSynchronize"));
  EXPECT_FALSE(is_sync_call("cudaLaunchKernel_v7000"));
  EXPECT_FALSE(is_sync_call("cudaStreamSynchronizeX"));
}

}  // namespace
}  // namespace tracedoc::testing
