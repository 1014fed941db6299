// Where a thread's time went (analysis/thread_schedule.h) on the real exports: running from the
// thread switches against SQL over SCHED_EVENTS, the split of the time off the CPU into blocked
// (inside a traced wait) and the rest, the same during the GPU's idle time, and the rule
// oversubscribed_cpu.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/thread_schedule.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

TRACEDOC_TEST_LABELS(ThreadSchedule, corpus);

TEST(ThreadSchedule, RunningBlockedAndTheRestAddUp) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const Trace& t = load_nsys(path);
  const std::vector<ThreadSchedule> threads = thread_schedules(t);
  ASSERT_FALSE(threads.empty());
  for (const ThreadSchedule& s : threads) {
    SCOPED_TRACE(tid_of(s.global_tid));
    // Running: from each switch in to the next switch out, in SQL.
    const std::string tid = std::to_string(s.global_tid);
    EXPECT_EQ(s.running.total(),
              sql_int(path,
                      "SELECT coalesce(sum(nxt - start), 0) FROM (SELECT start, isSchedIn, LEAD(start) OVER "
                      "(ORDER BY start) nxt, LEAD(isSchedIn) OVER (ORDER BY start) nin FROM SCHED_EVENTS "
                      "WHERE globalTid = " +
                          tid + ") WHERE isSchedIn = 1 AND nin = 0"));
    EXPECT_EQ(s.span.length(),
              sql_int(path, "SELECT max(start) - min(start) FROM SCHED_EVENTS WHERE globalTid = " + tid));
    // The three parts split the span.
    EXPECT_EQ(s.running.total() + s.blocked.total() + s.other_off_cpu().total(), s.span.length());
    EXPECT_EQ(s.running.intersect(s.blocked).total(), 0);
  }
  // The training thread: on a CPU 3.5% of its 15.3 s, blocked in polls and condition waits 94.8%;
  // through the GPU's 12.0 s of idle time in the steps, blocked 97.1% and running 1.9%.
  const CliRun run = tracedoc({"stats", "-r", "cpu_thread_sched_sum:thread=750478", path, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out,
            "PID,TID,Thread,Launches GPU Work,Span (ns),Running (%),Blocked (%),Other Off-CPU (%),Preempted (%),GPU "
            "Idle (ns),Running in GPU Idle (%),Blocked in GPU Idle (%),Other Off-CPU in GPU Idle (%)\n"
            "750478,750478,python3,yes,15327038629,3.5,94.8,1.6,,12025195225,1.9,97.1,0.9\n");
  // cs336 traced no OS calls: everything off the CPU is "other", and its idle time is the one
  // cpu_bound_during_idle reports (681,575,984 ns), the main thread running through 67.3% of it.
  const std::string cs336 = (nsys_traces_dir() / "cs336/jsun012_result.sqlite").string();
  const CliRun other = tracedoc({"stats", "-r", "cpu_thread_sched_sum:thread=55072", cs336, "-f", "csv"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("55072,55072,python,yes,5771356259,82.4,0.0,17.6,,681575984,67.3,0.0,32.7\n"),
            std::string::npos)
      << other.out;
  // The summary says it under each launching thread.
  const CliRun summary = tracedoc({"summary", cs336});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("    while its GPUs idled (682 ms): running 67.3%, blocked in waits 0.0%, off the CPU "
                             "otherwise 32.7%\n"),
            std::string::npos)
      << summary.out;
  const CliRun json = tracedoc({"summary", "-f", "json", path});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"idle_ns\": 12025195225,"), std::string::npos);
  const std::string none = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun skipped = tracedoc({"stats", "-r", "cpu_thread_sched_sum", none, "-f", "csv"});
  EXPECT_EQ(skipped.exit_code, 0);
  EXPECT_NE(skipped.err.find("does not contain thread scheduling data"), std::string::npos) << skipped.err;
}

TEST(ThreadSchedule, OversubscriptionNeedsTracedWaits) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const fs::path config = fs::temp_directory_path() / ("tracedoc-oversub-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(config);
    out << "[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.oversubscribed_cpu]\nmin_share = 0\n";
  }
  // ai-profiler traced the OS calls: its launching threads were off their CPU outside any wait for
  // 112 ms of the GPU's 12.0 s idle time (0.9%): a finding only with the thresholds lowered.
  const std::string path = (nsys_traces_dir() / "ai-profiler/baseline_nvtx.sqlite").string();
  const CliRun run =
      tracedoc({"diagnose", "--rules", "oversubscribed_cpu", "--config", config.string(), path, "-f", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"off_cpu_during_idle_ns\": 111929724"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"confidence\": 0.4"), std::string::npos) << run.out;
  const CliRun quiet = tracedoc({"diagnose", "--rules", "oversubscribed_cpu", path});
  EXPECT_NE(quiet.out.find("0 findings"), std::string::npos) << quiet.out;
  // cs336 traced no OS calls: time off the CPU says nothing about waiting for one.
  const CliRun untraced = tracedoc({"diagnose", "--rules", "oversubscribed_cpu", "--config", config.string(),
                                    (nsys_traces_dir() / "cs336/jsun012_result.sqlite").string()});
  fs::remove(config);
  EXPECT_NE(untraced.out.find("0 findings"), std::string::npos) << untraced.out;
}

}  // namespace
}  // namespace tracedoc::testing
