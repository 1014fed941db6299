// `tracedoc summary`: the figures of the overview, checked against the reports that compute the same
// things another way (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_size_sum, the analyze rules),
// on the bundled export and on real traces.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/summary.h"
#include "report/summary_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";

// Rows of a report as CSV cells (header first).
std::vector<std::vector<std::string>> report_rows(const Trace& t, const std::string& report) {
  return parse_csv(report_csv(t, report).value_or(""));
}

TRACEDOC_TEST_LABELS(Summary, corpus);

TEST(Summary, BundledExportFiguresMatchTheReports) {
  const Trace& t = load_nsys(kExample.string());
  const TraceSummary s = summarize(t);
  EXPECT_EQ(s.producer, "Nsight Systems 2024.5.1.113");
  EXPECT_EQ(s.gpu_ops, 81);
  EXPECT_EQ(s.api_calls, 85);
  ASSERT_EQ(s.devices.size(), 1u);
  const DeviceSummary& d = s.devices[0];
  EXPECT_EQ(d.pid, 4242);
  EXPECT_EQ(d.kernels, 68);
  EXPECT_EQ(d.memcpys + d.memsets, 13);
  // One stream, so the busy union is the summed duration, which gpu_time_util with one chunk reports.
  const auto util = parse_csv(rule_csv(t, "gpu_time_util:chunks=1").value_or(""));
  ASSERT_EQ(util.size(), 2u);
  EXPECT_EQ(fmt::format("{:.1f}", d.busy_pct()), util[1][1]);
  EXPECT_EQ(std::to_string(d.last_end - d.first_start), util[1][2]);
  // Gaps over 1 ms: what gpu_gaps:gap=1 lists.
  const auto gaps = parse_csv(rule_csv(t, "gpu_gaps:gap=1").value_or(""));
  EXPECT_EQ(d.gaps_over_threshold, static_cast<int64_t>(gaps.size()) - 1);
  EXPECT_EQ(std::to_string(d.longest_gap_ns), gaps[1][1]);

  // Top kernels: cuda_gpu_kern_sum's first rows (Total Time, Instances, Med, Min, Max, Name), the
  // median exact (the report's Med has half nanoseconds, which the summary rounds up).
  const auto kern = report_rows(t, "cuda_gpu_kern_sum");
  ASSERT_EQ(s.top_kernels.size(), 5u);
  for (size_t k = 0; k < 5; ++k) {
    const NamedTotal& top = s.top_kernels[k];
    EXPECT_EQ(top.name, kern[k + 1][8]);
    EXPECT_EQ(std::to_string(top.total_ns), kern[k + 1][1]);
    EXPECT_EQ(std::to_string(top.count), kern[k + 1][2]);
    EXPECT_EQ(top.durations.quantile_ns(0.5), static_cast<int64_t>(std::ceil(std::stod(kern[k + 1][4]))));
    EXPECT_EQ(std::to_string(top.durations.min()), kern[k + 1][5]);
    EXPECT_EQ(std::to_string(top.durations.max()), kern[k + 1][6]);
    EXPECT_TRUE(top.durations.exact());
  }
  EXPECT_EQ(s.top_kernels[0].durations.quantile_ns(0.5), 362'602);
  EXPECT_EQ(s.top_kernels[0].durations.quantile_ns(0.95), 408'378);
  const auto api = report_rows(t, "cuda_api_sum");
  EXPECT_EQ(s.top_api[0].name, "cudaMemcpy_v3020");
  EXPECT_EQ(std::to_string(s.top_api[0].total_ns), api[1][1]);

  // Copies: Host-to-Device bytes as cuda_gpu_mem_size_sum has them (MB there).
  ASSERT_FALSE(s.copies.empty());
  EXPECT_EQ(s.copies[0].direction, "Host-to-Device");
  EXPECT_EQ(s.copies[0].host_memory, "Pageable");
  EXPECT_EQ(s.copies[0].count, 5);
  EXPECT_EQ(fmt::format("{:.3f}", static_cast<double>(s.copies[0].bytes) / 1e6), "97.518");

  // No ProfilerStep ranges: the four iterations are detected (the first period is cut).
  ASSERT_TRUE(s.steps.has_value());
  EXPECT_EQ(s.steps->source, StepSource::kDetected);
  EXPECT_EQ(s.steps->count, 3u);

  // HTA's breakdown and the CPU threads: what gpu_time_breakdown and cpu_thread_sum print.
  const auto breakdown = report_rows(t, "gpu_time_breakdown");
  ASSERT_EQ(breakdown.size(), 2u);
  EXPECT_EQ(std::to_string(d.compute_ns), breakdown[1][4]);
  EXPECT_EQ(std::to_string(d.non_compute_ns), breakdown[1][5]);
  const auto threads = report_rows(t, "cpu_thread_sum");
  ASSERT_EQ(s.threads.size(), 1u);  // the main thread; the loader thread neither waits nor calls CUDA
  EXPECT_TRUE(s.threads[0].main);
  EXPECT_EQ(s.threads[0].name, threads[1][2]);
  EXPECT_EQ(std::to_string(s.threads[0].lock_waits), threads[1][11]);
  EXPECT_EQ(std::to_string(s.threads[0].lock_wait_ns), threads[1][12]);
  EXPECT_EQ(std::to_string(s.threads[0].sync_wait_ns), threads[1][17]);

  // Host blocking: the analyze rules' row counts.
  EXPECT_EQ(s.findings.sync_calls, 4);
  EXPECT_EQ(s.findings.sync_copies, 5);
  EXPECT_EQ(s.findings.pageable_async_copies, 4);
  EXPECT_EQ(s.findings.sync_memsets, 0);
}

TEST(Summary, MarkerStepsAndTheirBusyShare) {
  const Trace& t = load_nsys(kExample.string());
  SummaryOptions o;
  o.steps.marker = "train_step*";
  const TraceSummary s = summarize(t, o);
  ASSERT_TRUE(s.steps.has_value());
  EXPECT_EQ(s.steps->source, StepSource::kMarker);
  EXPECT_EQ(s.steps->count, 4u);
  // step_sum's rows for the same marker: CPU durations 21625043, 22641394, 21689945, 25573221;
  // the median of four is the mean of the middle two, (21689945 + 22641394) / 2 = 22165669.5,
  // half a nanosecond up (analysis/statistics.h).
  EXPECT_EQ(s.steps->median_cpu_ns, 22165670);
}

TEST(Summary, PyTorchTraceWithRanks) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared not found";
  const Trace& t = load_kineto(
      (shared_dir() /
       "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
          .string());
  const TraceSummary s = summarize(t);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(s.devices[0].name, "Tesla V100-DGXS-32GB");
  EXPECT_EQ(s.devices[0].kernels, static_cast<int64_t>(t.kernels.size()));
  ASSERT_TRUE(s.steps.has_value());
  EXPECT_EQ(s.steps->source, StepSource::kProfilerStep);
  EXPECT_EQ(s.steps->count, 6u);
  EXPECT_EQ(s.cpu_ops, static_cast<int64_t>(t.pytorch.ops.size()));
  EXPECT_EQ(s.findings.pageable_async_copies, 12);

  // The launch statistics, TensorBoard figures and dispatch overhead equal the reports that print them.
  const auto launch = parse_csv(report_csv(t, "kernel_launch_stats").value());
  EXPECT_EQ(std::to_string(s.devices[0].launches), launch[1][2]);
  EXPECT_EQ(fmt::format("{:.1f}", s.devices[0].launch_delay_median_ns), launch[1][7]);
  EXPECT_EQ(std::to_string(s.devices[0].short_kernels), launch[1][11]);
  const auto tb = parse_csv(report_csv(t, "tb_gpu_metrics").value());
  EXPECT_EQ(fmt::format("{:.2f}", s.devices[0].sm_efficiency_pct), tb[1][3]);
  EXPECT_EQ(fmt::format("{:.2f}", s.devices[0].occupancy_pct), tb[1][4]);
  const auto steps = parse_csv(report_csv(t, "tb_step_breakdown").value());
  ASSERT_TRUE(s.step_roles.has_value());
  EXPECT_EQ(s.step_roles->steps, 6);
  const auto& average = steps.back();  // the Average row: mean duration, then the 8 roles
  EXPECT_EQ(average.back(), "Average");
  EXPECT_DOUBLE_EQ(s.step_roles->step_ns, std::stod(average[3]));
  for (size_t r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(s.step_roles->role_ns[r], std::stod(average[4 + r])) << r;
  EXPECT_STREQ(StepRolesSummary::role_name(5), "DataLoader");
  const auto dispatch = parse_csv(report_csv(t, "op_dispatch_sum").value());
  ASSERT_TRUE(s.dispatch.has_value());
  int64_t framework = 0;
  for (size_t i = 1; i < dispatch.size(); ++i) framework += std::stoll(dispatch[i][1]);
  EXPECT_EQ(s.dispatch->framework_ns, framework);
  ASSERT_EQ(s.dispatch->top_ops.size(), 5u);
  EXPECT_EQ(s.dispatch->top_ops[0].name, dispatch[1].back());
  EXPECT_EQ(std::to_string(s.dispatch->top_ops[0].total_ns), dispatch[1][1]);
}

TEST(Summary, JsonCarriesEveryFigure) {
  const Trace& t = load_nsys(kExample.string());
  const std::string json = summary_json({summarize(t)});
  EXPECT_EQ(json.rfind("{\n  \"schema_version\": 1,\n  \"summaries\": [", 0), 0u) << json.substr(0, 80);
  for (const char* key :
       {"\"busy_ns\": ", "\"top_kernels\": [", "\"copies\": [", "\"steps\": {", "\"host_blocking\": {",
        "\"launches\": ", "\"step_roles\": null", "\"framework_dispatch\": null", "\"sync_copies\": 5",
        "\"source\": \"detected\"", "\"kernels\": 68"}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

TEST(Summary, HumanUnits) {
  EXPECT_EQ(human_duration(812), "812 ns");
  EXPECT_EQ(human_duration(27400), "27.4 µs");
  EXPECT_EQ(human_duration(96309342), "96.3 ms");
  EXPECT_EQ(human_duration(1250000000), "1.25 s");
  EXPECT_EQ(human_bytes(512), "512 B");
  EXPECT_EQ(human_bytes(97517568), "97.5 MB");
}

}  // namespace
}  // namespace tracedoc::testing
