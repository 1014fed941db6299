// The rank-directory merge on real traces. The merge runs on several threads (string mapping per
// rank, one job per merged column, the time sort per table and column), so its result must not
// depend on the thread count: every table, string id and metadata row is compared between one and
// more threads. And every rank's rows must come through as the rank's own file reads them, but for
// the clock shift and the rank tag, in the rank's own order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/memory_budget.h"
#include "common/task_pool.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc {
namespace {

namespace fs = std::filesystem;

#undef EXPECT_SAME_COLUMN

// A directory of five ranks of different jobs, eras and clock bases, made of links to real traces
// (nothing is copied): rank 0 the NCCL trace with collectives (distributedInfo rank 0), rank 1 HTA's
// sampled rank 1 (integer-µs era, no clock base), ranks 2-4 TraceLens traces without distributedInfo
// (rank from the file name), two of them with a baseTimeNanoseconds 15 months after rank 0's.
// Removed when the test process exits.
struct MixedRankDirectory {
  fs::path path = fs::temp_directory_path() / ("tracedoc-ranks-test-" + std::to_string(::getpid()));
  explicit MixedRankDirectory(const fs::path& shared) {
    const fs::path kineto = shared / "traces/kineto";
    const std::pair<const char*, fs::path> links[] = {
        {"rank-0.json.gz", kineto / "HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"},
        {"rank-1.json.gz", kineto / "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"},
        {"rank-2.json.gz", kineto / "TraceLens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz"},
        {"rank-3.json.gz", kineto / "TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"},
        {"rank-4.json.gz", kineto / "TraceLens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"},
    };
    fs::remove_all(path);
    fs::create_directories(path);
    for (const auto& [name, target] : links) fs::create_symlink(target, path / name);
  }
  MixedRankDirectory(const MixedRankDirectory&) = delete;
  ~MixedRankDirectory() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
fs::path mixed_rank_directory(const fs::path& shared) {
  static const MixedRankDirectory dir(shared);
  return dir.path;
}

TRACEDOC_TEST_LABELS(KinetoDirectory, corpus threads);

TEST(KinetoDirectory, SameTablesOnOneOrMoreThreads) {
  const fs::path shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path kineto = shared / "traces/kineto";
  const std::vector<fs::path> dirs = {
      mixed_rank_directory(shared),
      kineto / "HolisticTraceAnalysis/tests/data/trace_filter",  // two ranks of one 128-rank job
      kineto / "TraceLens/tests/traces/mi300",  // six files: ranks by file order, and one more rank 0 (distributedInfo)
  };
  for (const auto& dir : dirs) {
    SCOPED_TRACE(dir.string());
    const int before = thread_count();
    set_thread_count(1);
    auto one = read_kineto_directory(dir.string(), -1);
    ASSERT_TRUE(one.ok()) << one.status().message();
    ASSERT_GT(one->kernels.size(), 0u);
    for (int threads : testing::kSanitized ? std::vector<int>{3} : std::vector<int>{2, 3, 7}) {
      SCOPED_TRACE(threads);
      set_thread_count(threads);
      auto many = read_kineto_directory(dir.string(), -1);
      ASSERT_TRUE(many.ok()) << many.status().message();
      testing::expect_same_trace(*one, *many, dir.string());
    }
    set_thread_count(before);
  }
}

// Each rank's kernels, API calls and operators appear in the merged tables in the rank's own order,
// with its names, its times moved by its clock base, and its CPU ids tagged with rank + 1.
TEST(KinetoDirectory, RanksKeepTheirRows) {
  const fs::path shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path dir = mixed_rank_directory(shared);
  auto merged = read_kineto_directory(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const auto files = kineto_files_in(dir.string());
  ASSERT_EQ(files.size(), 5u);

  std::vector<Trace> ranks;
  int64_t base = INT64_MAX;
  for (const auto& f : files) {
    auto t = read_kineto_trace(f);
    ASSERT_TRUE(t.ok()) << t.status().message();
    if (t->pytorch.base_time_ns > 0) base = std::min(base, t->pytorch.base_time_ns);
    ranks.push_back(std::move(t).value());
  }
  EXPECT_EQ(merged->pytorch.base_time_ns, base);
  size_t kernels = 0, api = 0, ops = 0, collectives = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const Trace& t = ranks[r];
    SCOPED_TRACE(files[r]);
    ASSERT_EQ(t.pytorch.rank, static_cast<int64_t>(r));
    const int64_t tag = static_cast<int64_t>(r + 1);
    const TimeNs shift = t.pytorch.base_time_ns > 0 ? t.pytorch.base_time_ns - base : 0;
    kernels += t.kernels.size(), api += t.api.size(), ops += t.pytorch.ops.size(),
        collectives += t.pytorch.collectives.size();

    std::vector<std::string> own, seen;
    std::vector<TimeNs> own_start, seen_start;
    for (size_t i = 0; i < t.kernels.size(); ++i)
      own.emplace_back(t.str(t.kernels.name[i])), own_start.push_back(t.kernels.start[i] + shift);
    const auto& mk = merged->kernels;
    for (size_t i = 0; i < mk.size(); ++i) {
      if ((mk.global_pid[i] >> 48) == tag)
        seen.emplace_back(merged->str(mk.name[i])), seen_start.push_back(mk.start[i]);
    }
    EXPECT_EQ(own, seen);
    EXPECT_EQ(own_start, seen_start);

    own.clear(), seen.clear(), own_start.clear(), seen_start.clear();
    for (size_t i = 0; i < t.api.size(); ++i)
      own.emplace_back(t.str(t.api.name[i])), own_start.push_back(t.api.start[i] + shift);
    for (size_t i = 0; i < merged->api.size(); ++i) {
      if ((merged->api.global_tid[i] >> 48) == tag)
        seen.emplace_back(merged->str(merged->api.name[i])), seen_start.push_back(merged->api.start[i]);
    }
    EXPECT_EQ(own, seen);
    EXPECT_EQ(own_start, seen_start);

    own.clear(), seen.clear();
    const auto& o = t.pytorch.ops;
    const auto& mo = merged->pytorch.ops;
    for (size_t i = 0; i < o.size(); ++i)
      own.push_back(std::string(t.str(o.name[i])) + " " + std::string(t.str(o.input_dims[i])));
    for (size_t i = 0; i < mo.size(); ++i) {
      if ((mo.global_tid[i] >> 48) == tag)
        seen.push_back(std::string(merged->str(mo.name[i])) + " " + std::string(merged->str(mo.input_dims[i])));
    }
    EXPECT_EQ(own, seen);
  }
  EXPECT_EQ(merged->kernels.size(), kernels);
  EXPECT_EQ(merged->api.size(), api);
  EXPECT_EQ(merged->pytorch.ops.size(), ops);
  ASSERT_EQ(merged->pytorch.collectives.size(), collectives);
  ASSERT_GT(collectives, 0u);
  for (uint32_t row : merged->pytorch.collectives.kernel) {
    EXPECT_EQ(merged->str(merged->kernels.name[row]).rfind("ncclKernel_", 0), 0u);  // still point at their kernels
  }
  EXPECT_TRUE(std::is_sorted(merged->kernels.start.begin(), merged->kernels.start.end()));
  EXPECT_TRUE(std::is_sorted(merged->pytorch.ops.start.begin(), merged->pytorch.ops.start.end()));
}

// --max-memory bounds how many files are read at once: the largest file's estimated model must fit
// in what the limit leaves, as many times as files are read at once (the reads themselves are the
// same however many run at once: SameTablesOnOneOrMoreThreads).
TEST(KinetoDirectory, FilesReadAtOnceFitTheMemoryLimit) {
  const fs::path shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  const fs::path dir = shared / "traces/kineto/TraceLens/tests/traces/mi300";
  const std::vector<std::string> files = kineto_files_in(dir.string());
  ASSERT_EQ(files.size(), 6u);
  uint64_t largest = 0;
  for (const std::string& f : files) largest = std::max(largest, kineto_model_estimate(f));
  // A gzip file's estimate is a fifth of its JSON, the size its trailer records.
  const std::string first = files.front();
  ASSERT_TRUE(first.ends_with(".gz"));
  EXPECT_EQ(kineto_model_estimate(first),
            std::max<uint64_t>(testing::gunzip(first).size(), 8 * fs::file_size(first)) / 5);
  const uint64_t before = MemoryBudget::limit();
  MemoryBudget::set_limit(0);
  EXPECT_EQ(kineto_files_at_once(files), 6u);
  MemoryBudget::set_limit(MemoryBudget::resident_bytes() + largest / 2);
  EXPECT_EQ(kineto_files_at_once(files), 1u);
  MemoryBudget::set_limit(MemoryBudget::resident_bytes() + 100 * largest);
  EXPECT_EQ(kineto_files_at_once(files), 6u);
  MemoryBudget::set_limit(MemoryBudget::resident_bytes() + 3 * largest + largest / 2);
  const size_t room_for_three = kineto_files_at_once(files);
  MemoryBudget::set_limit(before);
  EXPECT_GE(room_for_three, 2u);
  EXPECT_LE(room_for_three, 3u);
}

}  // namespace
}  // namespace tracedoc
