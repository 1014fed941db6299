// One task pool for every parallel part (common/task_pool.h): its size follows the machine and
// `--threads`, and no output depends on it. Real traces through the real binary with 1, 2 and 7
// threads give the same bytes.
#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <string>
#include <vector>

#include "analysis/report_registry.h"
#include "analysis/result.h"
#include "common/task_pool.h"
#include "ingest/open_trace.h"
#include "model/columns.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

TRACEDOC_TEST_LABELS(TaskPool, unit threads);

TEST(TaskPool, RunsEveryJobOnceAndNests) {
  const int before = thread_count();
  for (int threads : {1, 2, 7}) {
    set_thread_count(threads);
    EXPECT_EQ(thread_count(), threads);
    std::vector<std::atomic<int>> runs(1000);
    parallel_for(runs.size(), [&](size_t i) {
      // Nested parallel work runs to the end whatever the outer jobs hold.
      std::atomic<int> inner{0};
      parallel_for(3, [&](size_t) { ++inner; });
      runs[i] += inner == 3 ? 1 : 100;
    });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1);
    int a = 0, b = 0;
    parallel_invoke({[&] { a = 1; }, [&] { b = 2; }});
    EXPECT_EQ(a + b, 3);
  }
  set_thread_count(before);
}

TEST(TaskPool, AJobsExceptionReachesTheCaller) {
  const int before = thread_count();
  set_thread_count(3);
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(20,
                            [&](size_t i) {
                              ++ran;
                              if (i == 5) throw std::runtime_error("job 5");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 20);  // the others still ran
  set_thread_count(before);
}

TEST(TaskPool, UsableCoresFollowTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_GE(usable_cores(), 1);
  EXPECT_LE(usable_cores(), CPU_COUNT(&set));
  // The binary under a one-CPU mask says so in its help.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const CliRun help = tracedoc({"summary", "--help"});
  ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
  EXPECT_NE(help.out.find("default: the 1 cores this process may use"), std::string::npos) << help.out;
}

// The bytes of every command's output on `input` with `threads` threads.
std::vector<std::string> outputs(const std::string& input, int threads, bool nsys) {
  const std::string t = std::to_string(threads);
  std::vector<std::vector<std::string>> commands = {
      {"summary", input, "-f", "json"},
      {"diagnose", input, "-f", "json"},
      {"diff", input, input, "-f", "json"},
      {"stats", input, "-f", "csv"},
  };
  if (nsys) commands.push_back({"analyze", input, "-f", "csv"});
  std::vector<std::string> out;
  for (auto& args : commands) {
    args.push_back("--threads");
    args.push_back(t);
    const CliRun run = tracedoc(args);
    EXPECT_EQ(run.exit_code, 0) << args[0] << ": " << run.err;
    out.push_back(run.out);
  }
  return out;
}

TRACEDOC_TEST_LABELS(Threads, corpus threads);

TEST(Threads, OutputsAreTheSameBytesOnOneTwoAndSevenThreads) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path traces = shared_dir() / "traces";
  const std::vector<std::pair<fs::path, bool>> inputs = {
      {traces / "nsys/nsys-ai/mfu_2gpu_before.sqlite", true},  // two processes, one GPU each
      {traces / "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", false},
      {traces / "kineto/HolisticTraceAnalysis/tests/data/trace_filter", false},  // a rank directory
  };
  for (const auto& [input, nsys] : inputs) {
    SCOPED_TRACE(input.string());
    const std::vector<std::string> one = outputs(input.string(), 1, nsys);
    ASSERT_FALSE(one.empty());
    EXPECT_GT(one[0].size(), 1000u);
    for (int threads : kSanitized ? std::vector<int>{7} : std::vector<int>{2, 7}) {
      SCOPED_TRACE(threads);
      const std::vector<std::string> many = outputs(input.string(), threads, nsys);
      ASSERT_EQ(many.size(), one.size());
      for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(many[i] == one[i]) << "output " << i << " differs";
    }
  }
}

// A real export's NVTX ranges repeated 16 times (305,888 ranges): the NVTX summary reads them in
// slices on the task pool (the latest timestamp, the buckets of each range's durations), and every
// range of every copy lands in its range's group, in row order, on any number of threads.
TEST(Threads, NvtxSummaryOfManyRangesInSlices) {
  const std::string path = (shared_dir() / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite").string();
  if (shared_dir().empty() || !fs::exists(path)) GTEST_SKIP() << "../shared is absent: " << path;
  auto read = open_trace(path, {});
  ASSERT_TRUE(read.ok()) << read.status().message();
  Trace& trace = *read;
  const ReportDef* nvtx_sum = find_report("nvtx_sum");
  ASSERT_NE(nvtx_sum, nullptr);
  TableSink once;
  ASSERT_TRUE(nvtx_sum->run(trace, {}, once).ok());
  ASSERT_EQ(trace.ranges.size(), 19'118u);
  ASSERT_EQ(once.row_count(), 18'499u);
  constexpr int kCopies = 16;
  const RangeTable original = trace.ranges;
  for (int c = 1; c < kCopies; ++c) append_rows(trace.ranges, original);
  const int before = thread_count();
  for (int threads : {1, 2, 7}) {
    SCOPED_TRACE(threads);
    set_thread_count(threads);
    TableSink many;
    ASSERT_TRUE(nvtx_sum->run(trace, {}, many).ok());
    ASSERT_EQ(many.row_count(), once.row_count());
    for (size_t r = 0; r < once.row_count(); ++r) {
      const auto a = once.row_at(r), b = many.row_at(r);
      EXPECT_EQ(b[9].s, a[9].s) << r;            // the range, in the same order
      EXPECT_EQ(b[1].i, kCopies * a[1].i) << r;  // total time
      EXPECT_EQ(b[2].i, kCopies * a[2].i) << r;  // instances
      EXPECT_NEAR(b[3].d, a[3].d, 0.11) << r;    // average (a float sum, rounded to 0.1)
      EXPECT_EQ(b[4].d, a[4].d) << r;            // median: each value 16 times over
      EXPECT_EQ(b[5].i, a[5].i) << r;            // min
      EXPECT_EQ(b[6].i, a[6].i) << r;            // max
    }
  }
  set_thread_count(before);
}

TEST(Threads, BadThreadCountIsAUsageError) {
  const CliRun run = tracedoc(
      {"summary", "--threads", "0", (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--threads"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace tracedoc::testing
