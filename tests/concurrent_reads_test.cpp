// Several reads at once, as Python threads and Dask workers run them in one process: each thread
// reads another trace (an nsys export, a PyTorch trace, a rank directory) through the one task pool,
// while the pool's own jobs (the NVTX parts, the Kineto pipeline's windows, a directory's files) run
// beside them; and the command line with its memory watchdog sampling while the work runs. The
// ThreadSanitizer pass of CI (label `threads`) runs these, where a data race aborts the process;
// here each concurrent read must also equal the same read made alone.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/task_pool.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs() {
  const fs::path traces = shared_dir() / "traces";
  return {traces / "nsys/nsys-ai/mfu_2gpu_before.sqlite", traces / "nsys/cuda-thinkering/output.sqlite",
          traces / "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
          traces / "kineto/kineto/tb_plugin/samples/resnet50_num_workers_4"};
}

#define REQUIRE_INPUTS()                                                      \
  for (const fs::path& p : inputs()) {                                        \
    if (shared_dir().empty() || !fs::exists(p)) {                             \
      GTEST_SKIP() << "../shared/traces (or " << p << ") not found: skipped"; \
    }                                                                         \
  }

TRACEDOC_TEST_LABELS(ConcurrentReads, corpus threads);

TEST(ConcurrentReads, ThreadsReadingAtOnceReadWhatOneReadsAlone) {
  REQUIRE_INPUTS();
  const std::vector<fs::path> paths = inputs();
  OpenOptions all;
  all.nsys.tables = kLoadAll;
  std::vector<Trace> alone;
  for (const fs::path& p : paths) {
    auto t = open_trace(p.string(), all);
    ASSERT_TRUE(t.ok()) << t.status().message();
    alone.push_back(std::move(*t));
  }
  // Two rounds of every input, each read on a thread of its own.
  std::vector<std::optional<Result<Trace>>> together(2 * paths.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < together.size(); ++i)
    threads.emplace_back([&, i] { together[i].emplace(open_trace(paths[i % paths.size()].string(), all)); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < together.size(); ++i) {
    ASSERT_TRUE(together[i]->ok()) << together[i]->status().message();
    expect_same_trace(alone[i % paths.size()], **together[i], paths[i % paths.size()].string());
  }
}

TEST(ConcurrentReads, TheCommandLineWithItsWatchdog) {
  REQUIRE_INPUTS();
  // The watchdog thread samples the memory every 5 ms while the readers' and the analyses' threads
  // work; a race among them is a sanitizer report, which ends the process with another exit code.
  for (const fs::path& p : inputs()) {
    const CliRun r = tracedoc({"summary", "-f", "json", "--threads", "2", "--max-memory", "8G", p.string()});
    EXPECT_EQ(r.exit_code, 0) << p << ": " << r.err;
  }
}

}  // namespace
}  // namespace tracedoc::testing
