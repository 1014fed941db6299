// Figures across ranks: the collective skew of a merged rank directory, recomputed from each rank's
// own file, and the summary's per-rank rows against the device rows and the straggler finding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "analysis/cross_rank.h"
#include "analysis/summary.h"
#include "diagnose/engine.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

// The all-reduce kernels' starts of one rank file, in start order.
std::vector<TimeNs> allreduce_starts(const fs::path& file) {
  auto t = open_trace(file.string());
  EXPECT_TRUE(t.ok());
  std::vector<TimeNs> starts;
  for (size_t i = 0; i < t->kernels.size(); ++i) {
    if (t->str(t->kernels.name[i]).find("AllReduce") != std::string_view::npos) starts.push_back(t->kernels.start[i]);
  }
  std::sort(starts.begin(), starts.end());
  return starts;
}

TRACEDOC_TEST_LABELS(CrossRank, corpus);

TEST(CrossRank, CollectiveSkewEqualsTheRankFilesStartByStart) {
  const fs::path dir = synth_rank_directory("straggler");
  auto merged = open_trace(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const pytorch::GpuWork work = pytorch::collect_gpu_work(*merged);
  ASSERT_EQ(work.units.size(), 2u);
  const CrossRankSkew skew = collective_skew(*merged, work);

  // Independently: the k-th all-reduce of each rank's own file (same clock: baseTimeNanoseconds).
  const std::vector<TimeNs> r0 = allreduce_starts(dir / "rank0.json"), r1 = allreduce_starts(dir / "rank1.json");
  ASSERT_EQ(r0.size(), r1.size());
  ASSERT_EQ(r0.size(), 36u);  // 12 steps, 3 buckets
  int64_t wait0 = 0, wait1 = 0, last1 = 0, max_skew = 0;
  std::vector<int64_t> skews;
  for (size_t k = 0; k < r0.size(); ++k) {
    skews.push_back(std::abs(r1[k] - r0[k]));
    max_skew = std::max(max_skew, skews.back());
    wait0 += std::max<int64_t>(0, r1[k] - r0[k]);
    wait1 += std::max<int64_t>(0, r0[k] - r1[k]);
    last1 += r1[k] > r0[k];
  }
  std::sort(skews.begin(), skews.end());
  ASSERT_EQ(skew.collectives.size(), 1u);
  const CollectiveSkew& c = skew.collectives[0];
  EXPECT_EQ(c.participants, 2);
  EXPECT_EQ(c.matched, 36);
  // 36 skews: the mean of the 18th and 19th smallest, half a nanosecond up.
  EXPECT_EQ(c.median_skew_ns, (skews[17] + skews[18] + 1) / 2);
  EXPECT_EQ(c.max_skew_ns, max_skew);
  EXPECT_EQ(c.wait_ns, wait0 + wait1);
  EXPECT_EQ(skew.matched, 36);
  EXPECT_EQ(skew.unmatched_names, 0);
  // The straggler (rank 1) starts every all-reduce last; rank 0 does the waiting.
  EXPECT_EQ(last1, 36);
  EXPECT_EQ(skew.participants[1].last, 36);
  EXPECT_EQ(skew.participants[0].last, 0);
  EXPECT_EQ(skew.participants[0].wait_ns, wait0);
  EXPECT_EQ(skew.participants[1].wait_ns, 0);
  EXPECT_EQ(skew.participants[1].late_ns, wait0);

  // The summary's rows: the devices' figures, the straggler rule's ratio, the skew above.
  const TraceSummary s = summarize(*merged);
  ASSERT_TRUE(s.ranks);
  const RanksSummary& r = *s.ranks;
  ASSERT_EQ(r.rows.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.rows[i].rank, static_cast<int64_t>(i));
    EXPECT_EQ(r.rows[i].compute_ns, s.devices[i].compute_ns);
    EXPECT_EQ(r.rows[i].exposed_comm_ns, s.devices[i].communication_ns - s.devices[i].comm_overlap_ns);
    EXPECT_EQ(r.rows[i].steps, 12);
  }
  EXPECT_EQ(r.slowest, 1u);
  EXPECT_EQ(r.most_often_last, 1);
  const diagnose::Diagnosis d = diagnose::diagnose(*merged, {});
  const diagnose::Finding* straggler = finding(d, "straggler");
  ASSERT_NE(straggler, nullptr);
  EXPECT_NEAR(r.slowest_ratio, figure(*straggler, "ratio"), 1e-12);
  // Rank 1 computes 1.5x as long as rank 0; the median of two GPUs is their mean, 1.25x rank 0's.
  EXPECT_NEAR(r.slowest_ratio, 1.5 / 1.25, 0.01);
}

TEST(CrossRank, WhatIsAndIsNotMatched) {
  EXPECT_TRUE(is_group_collective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  EXPECT_TRUE(is_group_collective("ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_TRUE(is_group_collective("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"));
  EXPECT_TRUE(is_group_collective("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)"));
  EXPECT_FALSE(
      is_group_collective("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"));
  EXPECT_FALSE(is_group_collective("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)"));
  EXPECT_FALSE(is_group_collective("ampere_sgemm_128x64_tn"));

  // One GPU: nothing across ranks.
  const Trace& toy = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  EXPECT_FALSE(summarize(toy).ranks);
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  // HTA's two sampled ranks of a 128-rank job: only SendRecv kernels, without collective arguments.
  auto sampled = open_trace((shared_dir() / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_filter").string());
  ASSERT_TRUE(sampled.ok());
  const CrossRankSkew none = collective_skew(*sampled, pytorch::collect_gpu_work(*sampled));
  EXPECT_EQ(none.matched, 0);
  EXPECT_TRUE(none.collectives.empty());
  // The 2×H100 export: two processes, NCCL SendRecv only; the rows carry each process's figures.
  const Trace& mfu = load_nsys((shared_dir() / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite").string());
  const TraceSummary s = summarize(mfu);
  ASSERT_TRUE(s.ranks);
  ASSERT_EQ(s.ranks->rows.size(), 2u);
  EXPECT_EQ(s.ranks->rows[0].pid, 144);
  EXPECT_EQ(s.ranks->rows[1].pid, 145);
  // Each process runs the same loop: steps are detected in each, 16 apiece.
  EXPECT_EQ(s.ranks->rows[0].steps, 16);
  EXPECT_EQ(s.ranks->rows[1].steps, 16);
  EXPECT_EQ(s.ranks->matched, 0);
}

}  // namespace
}  // namespace tracedoc::testing
