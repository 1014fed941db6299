// CPU samples with call stacks (nsys --sample=cpu): the stacks as read, and cpu_sample_sum's self and
// total samples per function, each equal to a direct SQL over COMPOSITE_EVENTS and
// SAMPLING_CALLCHAINS of the real exports.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "analysis/cpu_samples.h"
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
  // stacks of 180,740 frames in all.
  ASSERT_EQ(t.cpu_samples.size(), 16150u);
  EXPECT_EQ(t.stacks.stack_count(), 4096u);
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
  const CliRun bad = tracedoc({"stats", "-r", "cpu_sample_sum:during=steps", cs336, "-f", "csv"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("cpu_sample_sum: during must be gpu-idle, got 'steps'"), std::string::npos) << bad.err;
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

}  // namespace
}  // namespace tracedoc::testing
