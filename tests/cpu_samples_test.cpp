// CPU samples with call stacks (nsys --sample=cpu): the stacks as read, and cpu_sample_sum's self and
// total samples per function, each equal to a direct SQL over COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS of the real exports.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "analysis/cpu_samples.h"
#include "analysis/steps.h"
#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

struct Counts {
  int64_t self = 0, total = 0;
  bool operator==(const Counts&) const = default;
};
using ByFunction = std::map<std::pair<std::string, std::string>, Counts>;

// Self: the samples whose depth-0 frame is the function; total: the samples with the function
// anywhere on their stack, once each. Optionally one thread's samples.
ByFunction expected_from_sql(const std::string& path, int64_t tid = -1) {
  ByFunction out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(("file:" + path + "?mode=ro&immutable=1").c_str(), &db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
            SQLITE_OK);
  const std::string where =
      tid < 0
          ? ""
          : " AND c.id IN (SELECT id FROM COMPOSITE_EVENTS WHERE globalTid % 16777216 = " + std::to_string(tid) + ")";
  auto run = [&](const std::string& sql, bool self) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      auto text = [&](int col) {
        const unsigned char* t = sqlite3_column_text(stmt, col);
        return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
      };
      Counts& c = out[{text(0), text(1)}];
      (self ? c.self : c.total) = sqlite3_column_int64(stmt, 2);
    }
    sqlite3_finalize(stmt);
  };
  const std::string from =
      " FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module"
      " WHERE c.id IN (SELECT id FROM COMPOSITE_EVENTS)";
  run("SELECT s.value, m.value, COUNT(*)" + from + " AND c.stackDepth = 0" + where + " GROUP BY c.symbol, c.module",
      true);
  run("SELECT s.value, m.value, COUNT(DISTINCT c.id)" + from + where + " GROUP BY c.symbol, c.module", false);
  sqlite3_close(db);
  return out;
}

ByFunction counted(const Trace& trace, int64_t tid = -1) {
  ByFunction out;
  for (const FunctionSamples& f : count_cpu_samples(trace, {tid}).functions)
    out[{std::string(trace.str(f.symbol)), std::string(trace.str(f.module))}] = {f.self, f.total};
  return out;
}

TRACEDOC_TEST_LABELS(CpuSamples, corpus);

TEST(CpuSamples, PerFunctionCountsEqualADirectSqlOverTheCallchains) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  for (const char* name :
       {"ai-profiler/baseline_nvtx.sqlite", "cs336/jsun012_result.sqlite", "test-cuda/report1.sqlite",
        "cuda-thinkering/output.sqlite", "cuda-perf-sandbox/report1.sqlite"}) {
    SCOPED_TRACE(name);
    const std::string path = (nsys_traces_dir() / name).string();
    const Trace& t = load_nsys(path);
    const ByFunction expected = expected_from_sql(path);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(counted(t), expected);
  }
}

TEST(CpuSamples, StacksAreStoredOnceAndTheReportReadsThem) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const Trace& t = load_nsys(path);
  // 16,150 samples of a PyTorch training loop on an A100, every one with a stack; 4,096 distinct
  // stacks of 180,740 frames in all (the OS calls' stacks add 35 more to the same store).
  ASSERT_EQ(t.cpu_samples.size(), 16150u);
  EXPECT_EQ(std::set<int32_t>(t.cpu_samples.stack.begin(), t.cpu_samples.stack.end()).size(), 4096u);
  EXPECT_EQ(t.stacks.stack_count(), 4131u);
  int64_t frames = 0;
  for (size_t i = 0; i < t.cpu_samples.size(); ++i) {
    ASSERT_GE(t.cpu_samples.stack[i], 0);
    frames += static_cast<int64_t>(t.stacks.stack(t.cpu_samples.stack[i]).size());
  }
  EXPECT_EQ(frames, 180740);
  // A stack runs from the sampled function to the thread's root.
  const auto deepest = t.stacks.stack(t.cpu_samples.stack[0]);
  EXPECT_EQ(t.str(t.stacks.frame(deepest.front()).module), "/usr/lib/x86_64-linux-gnu/libc-2.31.so");
  EXPECT_TRUE(t.stacks.frame(deepest.front()).unresolved());

  const CliRun run = tracedoc({"stats", "-r", "cpu_sample_sum", path, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_GT(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"Self (%)", "Self", "Total (%)", "Total", "Function", "Module"}));
  // The interpreter loop: 1,239 samples executing it, 4,469 with it on the stack (of 16,150).
  EXPECT_EQ(rows[1], (std::vector<std::string>{"7.7", "1239", "27.7", "4469", "_PyEval_EvalFrameDefault",
                                               "/opt/conda/bin/python3.8"}));
  EXPECT_EQ(rows[2][4], "thread_main");

  // In SQL: each sample's stack id and the stacks' frames.
  const CliRun sql = tracedoc({"sql", path,
                               "SELECT f.symbol, count(*) AS n FROM cpu_samples c JOIN stack_frames f ON f.stack = "
                               "c.stack AND f.depth = 0 GROUP BY 1 ORDER BY n DESC LIMIT 1",
                               "-f", "csv"});
  ASSERT_EQ(sql.exit_code, 0) << sql.err;
  EXPECT_EQ(sql.out, "symbol,n\n_PyEval_EvalFrameDefault,1239\n");

  // One thread: the counts of its samples alone.
  std::map<int64_t, int64_t> per_thread;
  for (size_t i = 0; i < t.cpu_samples.size(); ++i) ++per_thread[tid_of(t.cpu_samples.global_tid[i])];
  const int64_t busiest = std::max_element(per_thread.begin(), per_thread.end(), [](auto& a, auto& b) {
                            return a.second < b.second;
                          })->first;
  EXPECT_EQ(counted(t, busiest), expected_from_sql(path, busiest));
  const CliRun one = tracedoc({"stats", "-r", "cpu_sample_sum:thread=" + std::to_string(busiest), path, "-f", "csv"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const CliRun bad = tracedoc({"stats", "-r", "cpu_sample_sum:thraed=1", path, "-f", "csv"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("cpu_sample_sum: unknown argument 'thraed=1'"), std::string::npos) << bad.err;
  // An export without samples is skipped, as nsys skips a report it has no data for.
  const std::string none = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun skipped = tracedoc({"stats", "-r", "cpu_sample_sum", none, "-f", "csv"});
  EXPECT_EQ(skipped.exit_code, 0);
  EXPECT_EQ(skipped.err, "SKIPPED: " + none + " does not contain CPU samples (nsys profile --sample=cpu).\n");
}

TEST(CpuSamples, FramesAreClassedByWhatAPyTorchUserNeedsToKnow) {
  const auto cls = [](std::string_view symbol, std::string_view module, bool kernel = false, bool unresolved = false) {
    return std::string(sample_class_name(classify_frame(symbol, module, kernel, unresolved)));
  };
  EXPECT_EQ(cls("_PyEval_EvalFrameDefault", "/opt/conda/bin/python3.8"), "Python interpreter");
  EXPECT_EQ(cls("take_gil", "/opt/conda/bin/python3.8"), "GIL");
  EXPECT_EQ(cls("at::native::add_kernel", "/x/torch/lib/libtorch_cpu.so"), "PyTorch");
  EXPECT_EQ(cls("c10::impl::OperatorEntry::lookup", "/x/torch/lib/libc10.so"), "PyTorch");
  EXPECT_EQ(cls("cuLaunchKernel", "/usr/lib/wsl/drivers/x/libcuda.so.1.1"), "CUDA");
  EXPECT_EQ(cls("_int_malloc", "/usr/lib/x86_64-linux-gnu/libc-2.31.so"), "memory allocation");
  EXPECT_EQ(cls("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", "/x/libc10_cuda.so"),
            "memory allocation");
  EXPECT_EQ(cls("gomp_barrier_wait_end", "/x/torch/lib/libgomp-a34b3233.so.1"), "NumPy/BLAS/OpenMP");
  EXPECT_EQ(cls("ImagingResample", "/x/PIL/_imaging.cpython-38-x86_64-linux-gnu.so"), "data decoding");
  EXPECT_EQ(cls("NvtxInjection", "/opt/nvidia/nsight-systems/libToolsInjection64.so"), "profiler");
  EXPECT_EQ(cls("do_syscall_64", "[kernel.kallsyms]"), "OS kernel");
  EXPECT_EQ(cls("0x7ffa0091a666", "/usr/lib/libc-2.31.so", false, true), "unresolved");
  EXPECT_EQ(cls("[Broken backtraces]", "[Broken backtraces]"), "unresolved");
  EXPECT_EQ(cls("memcpy", "/usr/lib/x86_64-linux-gnu/libc-2.31.so"), "other");
}

TEST(CpuSamples, ClassesPerThreadAddUpToItsSamples) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const CliRun run = tracedoc({"stats", "-r", "cpu_sample_class_sum", path, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"PID", "TID", "Thread", "Class", "Samples", "Share (%)"}));
  // The training thread: PyTorch's own work first, then the interpreter, then allocation.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"751197", "751197", "", "PyTorch", "5676", "44.6"}));
  EXPECT_EQ(rows[2][3], "Python interpreter");
  EXPECT_EQ(rows[2][4], "4499");
  // Each thread's classes add up to its samples.
  std::map<int64_t, int64_t> by_thread;
  for (size_t r = 1; r < rows.size(); ++r) by_thread[std::stoll(rows[r][1])] += std::stoll(rows[r][4]);
  std::map<int64_t, int64_t> expected;
  const Trace& t = load_nsys(path);
  for (size_t i = 0; i < t.cpu_samples.size(); ++i) ++expected[tid_of(t.cpu_samples.global_tid[i])];
  EXPECT_EQ(by_thread, expected);
  int64_t all = 0;
  for (const auto& [tid, n] : by_thread) all += n;
  EXPECT_EQ(all, 16150);
}

// gpu_idle_samples against a brute-force walk: a sample is kept exactly when its thread made CUDA
// calls, and no kernel, copy or memset of its process covers its time, between the process's first
// and last GPU work.
TEST(CpuSamples, DuringGpuIdleKeepsTheLaunchingThreadsSamplesInTheGaps) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  for (const char* name : {"ai-profiler/baseline_nvtx.sqlite", "cs336/jsun012_result.sqlite"}) {
    SCOPED_TRACE(name);
    const std::string path = (nsys_traces_dir() / name).string();
    const Trace& t = load_nsys(path);
    const std::vector<uint8_t> kept = gpu_idle_samples(t);
    std::set<int64_t> launching(t.api.global_tid.begin(), t.api.global_tid.end());
    std::map<int64_t, std::vector<std::pair<TimeNs, TimeNs>>> work;  // per process
    auto add = [&](const auto& table) {
      for (size_t i = 0; i < table.size(); ++i) work[table.global_pid[i]].push_back({table.start[i], table.end[i]});
    };
    add(t.kernels), add(t.memcpys), add(t.memsets);
    int64_t n = 0;
    for (size_t i = 0; i < t.cpu_samples.size(); ++i) {
      const int64_t g = t.cpu_samples.global_tid[i];
      const TimeNs at = t.cpu_samples.time[i];
      bool expect = false;
      const auto w = work.find(global_pid_of(g));
      if (launching.count(g) && w != work.end()) {
        TimeNs first = INT64_MAX, last = INT64_MIN;
        bool covered = false;
        for (const auto& [a, b] : w->second) {
          first = std::min(first, a), last = std::max(last, b);
          covered = covered || (a <= at && at < b);
        }
        expect = at >= first && at < last && !covered;
      }
      EXPECT_EQ(kept[i] != 0, expect) << "sample " << i;
      n += kept[i];
    }
    EXPECT_GT(n, 0);
  }
  // The count the report prints for the cs336 training thread while its GPU waited.
  const std::string cs336 = (nsys_traces_dir() / "cs336/jsun012_result.sqlite").string();
  const CliRun run = tracedoc({"stats", "-r", "cpu_sample_class_sum:during=gpu-idle", cs336, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"55072", "55072", "python", "Python interpreter", "67", "44.1"}));
  EXPECT_EQ(rows[2][3], "CUDA");
  const CliRun bad = tracedoc({"stats", "-r", "cpu_sample_sum:during=step#x", cs336, "-f", "csv"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("cpu_sample_sum: during=step#N needs a step number, got 'step#x'"), std::string::npos)
      << bad.err;
}

TEST(CpuSamples, TheSummaryGivesEachThreadsClasses) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "cs336/jsun012_result.sqlite").string();
  const CliRun run = tracedoc({"summary", path});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("  python [main] (pid 55072 tid 55072): running 82.4%, lock waits 0 (0 ns), CUDA calls 1.31 s "
                         "of which synchronizing 819 ms\n"
                         "    CPU samples (1811): Python interpreter 38.0%, CUDA 30.0%, PyTorch 22.3%\n"),
            std::string::npos)
      << run.out;
  const CliRun json = tracedoc({"summary", "-f", "json", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"cpu_samples\": {\n            \"Python interpreter\": 688,"), std::string::npos);
}

TEST(CpuSamples, TheCallTreeEqualsADirectSqlOverTheCallchains) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  // Top-down, its roots: each sample's outermost frame (the deepest stackDepth), counted in SQL.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(("file:" + path + "?mode=ro&immutable=1").c_str(), &db,
                            SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
            SQLITE_OK);
  std::map<std::pair<std::string, std::string>, int64_t> roots;
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT s.value, m.value, count(*) FROM SAMPLING_CALLCHAINS c"
                               " JOIN (SELECT id, max(stackDepth) AS d FROM SAMPLING_CALLCHAINS GROUP BY id) o"
                               " ON o.id = c.id AND o.d = c.stackDepth"
                               " JOIN StringIds s ON s.id = c.symbol JOIN StringIds m ON m.id = c.module"
                               " WHERE c.id IN (SELECT id FROM COMPOSITE_EVENTS) GROUP BY c.symbol, c.module",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    roots[{reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
           reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1))}] = sqlite3_column_int64(stmt, 2);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  const CliRun top = tracedoc({"stats", "-r", "cpu_sample_tree:min=0:depth=1", path, "-f", "csv"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  auto rows = parse_csv(top.out);
  ASSERT_EQ(rows[0], (std::vector<std::string>{"Depth", "Total (%)", "Total", "Self", "Function", "Module"}));
  std::map<std::pair<std::string, std::string>, int64_t> ours;
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][0], "0");
    ours[{rows[i][4], rows[i][5]}] += std::stoll(rows[i][2]);
  }
  EXPECT_EQ(ours, roots);
  // The largest root: stacks nsys could not unwind.
  EXPECT_EQ(rows[1],
            (std::vector<std::string>{"0", "22.6", "3651", "0", "[Broken backtraces]", "[Broken backtraces]"}));

  // Bottom-up, its roots are the sampled functions: cpu_sample_sum's self counts.
  const Trace& t = load_nsys(path);
  std::map<std::pair<std::string, std::string>, int64_t> self;
  for (const FunctionSamples& f : count_cpu_samples(t).functions)
    if (f.self > 0) self[{std::string(t.str(f.symbol)), std::string(t.str(f.module))}] = f.self;
  const CliRun bottom = tracedoc({"stats", "-r", "cpu_sample_tree:bottom-up:min=0:depth=1", path, "-f", "csv"});
  ASSERT_EQ(bottom.exit_code, 0) << bottom.err;
  rows = parse_csv(bottom.out);
  std::map<std::pair<std::string, std::string>, int64_t> leaves;
  for (size_t i = 1; i < rows.size(); ++i) leaves[{rows[i][4], rows[i][5]}] = std::stoll(rows[i][2]);
  EXPECT_EQ(leaves, self);

  // Rooted at the interpreter loop: its total is cpu_sample_sum's (4,469 samples), and its children
  // add up to what it did not run itself.
  const CliRun rooted =
      tracedoc({"stats", "-r", "cpu_sample_tree:root=^_PyEval_EvalFrameDefault$:min=0:depth=2", path, "-f", "csv"});
  ASSERT_EQ(rooted.exit_code, 0) << rooted.err;
  rows = parse_csv(rooted.out);
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows[1], (std::vector<std::string>{"0", "27.7", "4469", "903", "_PyEval_EvalFrameDefault",
                                               "/opt/conda/bin/python3.8"}));
  int64_t children = 0;
  for (size_t i = 2; i < rows.size(); ++i) children += rows[i][0] == "1" ? std::stoll(rows[i][2]) : 0;
  EXPECT_EQ(children, 4469 - 903);

  const CliRun both = tracedoc({"stats", "-r", "cpu_sample_tree:bottom-up:root=x", path, "-f", "csv"});
  EXPECT_EQ(both.exit_code, 2);
  const CliRun min = tracedoc({"stats", "-r", "cpu_sample_tree:min=200", path, "-f", "csv"});
  EXPECT_EQ(min.exit_code, 2);
  EXPECT_NE(min.err.find("cpu_sample_tree: min must be a percentage from 0 to 100, got '200'"), std::string::npos);
}

TEST(CpuSamples, DuringARangeOrAStepKeepsTheSamplesInside) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  // The samples of a process taken inside its ranges of a name (NVTX from PyTorch's emit_nvtx), in SQL.
  const auto in_ranges = [&](const std::string& condition) {
    return sql_int(path,
                   "WITH r AS MATERIALIZED (SELECT n.start AS s, n.end AS e, n.globalTid / 16777216 AS p FROM "
                   "NVTX_EVENTS n LEFT JOIN StringIds t ON t.id = n.textId WHERE n.end IS NOT NULL AND " +
                       condition +
                       ") SELECT count(*) FROM COMPOSITE_EVENTS c WHERE EXISTS (SELECT 1 FROM r WHERE r.s <= c.start "
                       "AND c.start < r.e AND r.p = c.globalTid / 16777216)");
  };
  const int64_t expected = in_ranges("coalesce(n.text, t.value) = 'aten::mm'");
  ASSERT_EQ(expected, 10);
  const int64_t conv = in_ranges("coalesce(n.text, t.value) LIKE 'aten::conv%'");
  const Trace& t = load_nsys(path);
  ReportArgs args;
  args.args = {"during=aten::mm"};
  auto keep = samples_during("test", t, args);
  ASSERT_TRUE(keep.ok());
  ASSERT_TRUE(keep->has_value());
  EXPECT_EQ(std::count((*keep)->begin(), (*keep)->end(), 1), expected);
  // "::" belongs to the argument; NAME* is a prefix.
  const CliRun run = tracedoc({"stats", "-r", "cpu_sample_class_sum:during=aten::mm", path, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(",CUDA,7,70.0\n"), std::string::npos) << run.out;
  args.args = {"during=aten::conv*"};
  keep = samples_during("test", t, args);
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(std::count((*keep)->begin(), (*keep)->end(), 1), conv);
  EXPECT_EQ(conv, 50);
  // One step: the samples in its CPU window.
  args.args = {"during=step#3"};
  keep = samples_during("test", t, args);
  ASSERT_TRUE(keep.ok());
  const auto steps = find_steps(t, StepOptions{});
  ASSERT_TRUE(steps.ok());
  int64_t in_step = 0;
  for (const StepWindow& w : steps->steps) {
    if (w.number != 3) continue;
    for (size_t i = 0; i < t.cpu_samples.size(); ++i) {
      in_step += global_pid_of(t.cpu_samples.global_tid[i]) == w.global_pid && t.cpu_samples.time[i] >= w.start &&
                 t.cpu_samples.time[i] < w.end;
    }
  }
  EXPECT_EQ(std::count((*keep)->begin(), (*keep)->end(), 1), in_step);
  EXPECT_GT(in_step, 0);
  const CliRun none = tracedoc({"stats", "-r", "cpu_sample_sum:during=no such range", path, "-f", "csv"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_NE(none.err.find("has no range named 'no such range'"), std::string::npos) << none.err;
}

TEST(CpuSamples, FrameNamesAreMappedThroughStringIds) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  // A string table whose ids no longer follow the pool's order (a repeated value early on): the
  // frames' names must still be the ones their ids name.
  const fs::path copy = fs::temp_directory_path() / ("tracedoc-frames-" + std::to_string(::getpid()) + ".sqlite");
  fs::copy_file(nsys_traces_dir() / "test-cuda/report1.sqlite", copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "UPDATE StringIds SET value = (SELECT value FROM StringIds WHERE id = 2) WHERE id = 0",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto trace = read_nsys_sqlite(copy.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(counted(*trace), expected_from_sql(copy.string()));
  fs::remove(copy);
}

TEST(CpuSamples, CpuBoundDuringIdleNamesWhatTheLaunchingThreadRan) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  // cs336: the training thread is on a CPU (SCHED_EVENTS) through 647 ms of the GPU's 682 ms idle.
  const std::string cs336 = (nsys_traces_dir() / "cs336/jsun012_result.sqlite").string();
  const CliRun run = tracedoc({"diagnose", "--rules", "cpu_bound_during_idle", cs336, "-f", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"severity\": \"critical\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"running_during_idle_ns\": 646563684"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"gpu_idle_ns\": 681575984"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"samples_during_idle\": 177"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"name\": \"_PyEval_EvalFrameDefault\""), std::string::npos) << run.out;
  // ai-profiler: the launching thread waits (poll, condition variables) through the GPU's idle
  // time; it runs through 272 ms of 12.0 s, 2.2%: under the 5% the rule asks for.
  const std::string waits = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const CliRun quiet = tracedoc({"diagnose", "--rules", "cpu_bound_during_idle", waits});
  EXPECT_NE(quiet.out.find("0 findings"), std::string::npos) << quiet.out;
}

TEST(CpuSamples, OsAndCudaCallsKeepTheirCallStacks) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  // Each call's stack, leaf to root, equals its callchain's rows in SQL: compared by the number of
  // calls with a stack and by every call's leaf and root frame names.
  struct Case {
    const char* file;
    const char* events;
    const char* chains;
  };
  for (const Case& c : {Case{"ai-profiler/baseline_nvtx.sqlite", "OSRT_API", "OSRT_CALLCHAINS"},
                        Case{"nestedtensor/nsight_report.sqlite", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUDA_CALLCHAINS"}}) {
    SCOPED_TRACE(c.file);
    const std::string path = (nsys_traces_dir() / c.file).string();
    const Trace& t = load_nsys(path);
    const bool os = std::string(c.events) == "OSRT_API";
    const std::vector<int32_t>& stacks = os ? t.os_calls.stack : t.api.stack;
    ASSERT_EQ(stacks.size(), os ? t.os_calls.size() : t.api.size());
    const int64_t with_stack = std::count_if(stacks.begin(), stacks.end(), [](int32_t s) { return s != kNoStack; });
    EXPECT_EQ(with_stack,
              sql_int(path, std::string("SELECT count(*) FROM ") + c.events + " e WHERE EXISTS (SELECT 1 FROM " +
                                c.chains + " k WHERE k.id = e.callchainId)"));
    EXPECT_GT(with_stack, 500);
    // Leaf and root names, summed as a checksum of string ids in SQL and here.
    int64_t leaf_chars = 0;
    for (int32_t s : stacks) {
      if (s == kNoStack) continue;
      leaf_chars += static_cast<int64_t>(t.str(t.stacks.frame(t.stacks.stack(s).front()).symbol).size());
      leaf_chars += static_cast<int64_t>(t.str(t.stacks.frame(t.stacks.stack(s).back()).symbol).size());
    }
    EXPECT_EQ(leaf_chars,
              sql_int(path, std::string("SELECT sum(length(s.value)) FROM ") + c.events + " e JOIN " + c.chains +
                                " k ON k.id = e.callchainId JOIN StringIds s ON s.id = k.symbol WHERE k.stackDepth = 0 "
                                "OR k.stackDepth = (SELECT max(stackDepth) FROM " +
                                c.chains + " m WHERE m.id = k.id)"));
  }
  // An export without call stacks leaves the columns empty (they are optional).
  const Trace& none = load_nsys((nsys_traces_dir() / "cs336/jsun012_result.sqlite").string());
  EXPECT_TRUE(none.api.stack.empty());

  // The diagnosis says where the waits and the synchronizations come from.
  const std::string waits = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const CliRun run = tracedoc({"diagnose", "--rules", "host_waits", waits});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("poll — I/O or poll; waited 14.5 s in all; from select_poll_poll "
                         "(select.cpython-38-x86_64-linux-gnu.so)"),
            std::string::npos)
      << run.out;
  const fs::path config = fs::temp_directory_path() / ("tracedoc-sync-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(config);
    out << "[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.sync_stall]\nmin_share = 0\n";
  }
  const CliRun sync = tracedoc({"diagnose", "--rules", "sync_stall", "--config", config.string(),
                                (nsys_traces_dir() / "nestedtensor/nsight_report.sqlite").string()});
  fs::remove(config);
  ASSERT_EQ(sync.exit_code, 0) << sync.err;
  EXPECT_NE(sync.out.find("63x  cuStreamSynchronize from at::native::copy_kernel_cuda(at::TensorIterator&, bool) "
                          "(libtorch_cuda_cu.so) — host blocked 1.09 ms"),
            std::string::npos)
      << sync.out;
}

TEST(CpuSamples, PerStepClassesAndTheFlameGraph) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  // Per step: each thread's samples inside the step's CPU window, by class; summed over the steps
  // they are the samples during=steps keeps.
  const CliRun per = tracedoc({"stats", "-r", "cpu_sample_class_sum:per=step", path, "-f", "csv"});
  ASSERT_EQ(per.exit_code, 0) << per.err;
  const auto rows = parse_csv(per.out);
  ASSERT_GT(rows.size(), 10u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"PID", "Step", "TID", "Thread", "Class", "Samples", "Share (%)"}));
  int64_t in_steps = 0;
  for (size_t i = 1; i < rows.size(); ++i) in_steps += std::stoll(rows[i][5]);
  const Trace& t = load_nsys(path);
  ReportArgs args;
  args.args = {"during=steps"};
  const auto keep = samples_during("test", t, args);
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(in_steps, std::count((*keep)->begin(), (*keep)->end(), 1));
  const CliRun bad = tracedoc({"stats", "-r", "cpu_sample_class_sum:per=rank", path, "-f", "csv"});
  EXPECT_EQ(bad.exit_code, 2);

  // The flame graph of the GPU-idle samples: one frame per tree node wider than half a pixel.
  const fs::path svg = fs::temp_directory_path() / ("tracedoc-flame-" + std::to_string(::getpid()) + ".svg");
  const CliRun flame = tracedoc({"view", path, "--flame", "gpu-idle", "-o", svg.string()});
  ASSERT_EQ(flame.exit_code, 0) << flame.err;
  const std::string picture = read_file(svg);
  fs::remove(svg);
  EXPECT_EQ(picture.rfind("<svg ", 0), 0u);
  EXPECT_NE(picture.find("CPU samples of baseline_nvtx.sqlite: the launching threads while their GPUs idled"),
            std::string::npos);
  EXPECT_NE(picture.find("<title>_PyEval_EvalFrameDefault (/opt/conda/bin/python3.8)"), std::string::npos);
  EXPECT_EQ(picture.find("<script"), std::string::npos);
  // A trace without samples: exit 2, nothing written.
  const std::string none = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun empty = tracedoc({"view", none, "--flame", "all", "-o", svg.string()});
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("no CPU samples to draw"), std::string::npos) << empty.err;
  EXPECT_FALSE(fs::exists(svg));
}

}  // namespace
}  // namespace tracedoc::testing
