// The TensorBoard-plugin Overview (src/analysis/pytorch/tb_overview.h) on small hand-written Kineto
// traces: the step stretching and trailing-step rules, the plugin's re-opened step time, the GPU
// metrics' arithmetic, and the two reports' shape. tests/tb_plugin_test.cpp compares the same code
// with the plugin itself on the shared traces.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <unistd.h>

#include "analysis/pytorch/tb_overview.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using namespace tracedoc::pytorch;

// A 2022-style trace (integer µs) from event lines; one GPU with 100 SMs.
Trace kineto_trace(const std::string& name, const std::vector<std::string>& events) {
  std::string json =
      R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Test GPU", "numSms": 100}], "traceEvents": [)";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? ",\n" : "\n") + events[i];
  json += "]}";
  const fs::path path =
      fs::temp_directory_path() / ("tracedoc-tb-" + name + "-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << json;
  auto trace = read_kineto_trace(path.string());
  fs::remove(path);
  if (!trace.ok()) throw std::runtime_error(trace.status().message());
  return std::move(trace).value();
}

std::string step(int n, int ts, int dur) {
  return "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#" + std::to_string(n) +
         "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}";
}
std::string op(const char* name, int ts, int dur) {
  return std::string("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"") + name +
         "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}";
}
std::string launch(int correlation, int ts, int dur) {
  return "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1, \"ts\": " +
         std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
         ", \"args\": {\"correlation\": " + std::to_string(correlation) + "}}";
}
std::string kernel(int correlation, int ts, int dur, int blocks = 50, int occupancy = 50, const char* name = "k") {
  return std::string("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"") + name +
         "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
         ", \"args\": {\"correlation\": " + std::to_string(correlation) +
         ", \"device\": 0, \"stream\": 7, \"grid\": [" + std::to_string(blocks) +
         ", 1, 1], \"block\": [128, 1, 1], \"est. achieved occupancy %\": " + std::to_string(occupancy) + "}}";
}
std::string memcpy_op(int correlation, int ts, int dur) {
  return "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable -> Device)\", \"pid\": 0, "
         "\"tid\": 7, \"ts\": " +
         std::to_string(ts) + ", \"dur\": " + std::to_string(dur) +
         ", \"args\": {\"correlation\": " + std::to_string(correlation) + ", \"device\": 0, \"stream\": 7}}";
}

constexpr int kNs = 1000;  // the traces are in µs
int64_t role(const TbStep& s, TbRole r) { return s.role[static_cast<int>(r)]; }

TRACEDOC_TEST_LABELS(TbOverview, unit);

TEST(TbOverview, StepsStretchToTheirGpuWorkAndShortTrailingStepsAreDropped) {
  const Trace t = kineto_trace(
      "stretch",
      {
          launch(9, 950, 2), kernel(9, 960, 70),  // launched before step 1, ends at 1030: step 1 starts after it
          step(1, 1000, 100), launch(1, 1010, 2), kernel(1, 1040, 110), launch(2, 1020, 2), kernel(2, 1150, 10),
          step(2, 1100, 100), launch(3, 1110, 2), kernel(3, 1160, 90), launch(4, 1120, 2), kernel(4, 1250, 5),
          launch(5, 1190, 20), kernel(5, 1300, 1),  // runs past step 2's CPU window: belongs to no step
          step(3, 1200, 100), launch(6, 1210, 2), kernel(6, 1260, 10),  // 1 GPU op < 0.8 x 2: cut short
          step(4, 1300, 100),                                           // launches nothing
      });
  const auto o = tb_overview(t);
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->units.size(), 1u);
  const TbUnit& u = o->units[0];
  EXPECT_EQ(u.dropped_steps, 2);
  ASSERT_EQ(u.steps.size(), 2u);
  EXPECT_EQ(u.steps[0].number, 1);
  EXPECT_EQ(u.steps[0].start, 1030 * kNs);  // after the leftover kernel, not at the CPU start 1000
  EXPECT_EQ(u.steps[0].end, 1160 * kNs);    // its last kernel's end
  EXPECT_EQ(u.steps[1].start, 1160 * kNs);  // where step 1 ended (its CPU start 1100 is earlier)
  EXPECT_EQ(u.steps[1].end, 1255 * kNs);
  EXPECT_EQ(u.steps[0].gpu_ops, 2);
  EXPECT_EQ(u.steps[1].gpu_ops, 2);
  // Step 1, [1030, 1160): kernels [1040, 1160), no launch call inside (they start before 1030).
  EXPECT_EQ(role(u.steps[0], TbRole::kKernel), 120 * kNs);
  EXPECT_EQ(role(u.steps[0], TbRole::kRuntime), 0);
  EXPECT_EQ(role(u.steps[0], TbRole::kOther), 10 * kNs);
  // Step 2, [1160, 1255): kernels all along; nothing else shows.
  EXPECT_EQ(role(u.steps[1], TbRole::kKernel), 95 * kNs);
  EXPECT_EQ(role(u.steps[1], TbRole::kOther), 0);

  // GPU metrics over [1030, 1255): kernels busy 120 + 95 µs (1 µs of kernel 9 and kernel 5 outside).
  ASSERT_EQ(o->gpus.size(), 1u);
  const TbGpuMetrics& g = o->gpus[0];
  EXPECT_EQ(g.window_start, 1030 * kNs);
  EXPECT_EQ(g.window_end, 1255 * kNs);
  EXPECT_EQ(g.busy, 215 * kNs);
  EXPECT_DOUBLE_EQ(g.utilization, 215.0 / 225.0);
  EXPECT_DOUBLE_EQ(g.sm_efficiency, 0.5 * 215.0 / 225.0);  // 50 blocks on 100 SMs, one kernel at a time
  EXPECT_DOUBLE_EQ(g.occupancy, 50.0);
  EXPECT_EQ(g.kernels, 7);
  EXPECT_DOUBLE_EQ(g.tensor_cores, 0.0);
}

TEST(TbOverview, ConcurrentKernelsFillTheSmsAtMostOnce) {
  // Two kernels of 80 blocks at once on 100 SMs: 100%, not 160%, while both run.
  const Trace t = kineto_trace("concurrent", {
                                                 step(1, 0, 100),
                                                 launch(1, 10, 1),
                                                 kernel(1, 20, 40, 80, 30, "volta_h884gemm_64x64"),
                                                 launch(2, 12, 1),
                                                 kernel(2, 40, 40, 80, 60),
                                             });
  const auto o = tb_overview(t);
  ASSERT_TRUE(o.ok());
  ASSERT_EQ(o->gpus.size(), 1u);
  const TbGpuMetrics& g = o->gpus[0];
  // Window [0, 100): [20, 40) 0.8, [40, 60) min(1.6, 1), [60, 80) 0.8.
  EXPECT_DOUBLE_EQ(g.sm_efficiency, (0.8 * 20 + 1.0 * 20 + 0.8 * 20) / 100.0);
  EXPECT_DOUBLE_EQ(g.utilization, 0.6);
  EXPECT_DOUBLE_EQ(g.occupancy, 45.0);    // equal times: the plain mean of 30 and 60
  EXPECT_DOUBLE_EQ(g.tensor_cores, 0.5);  // h884: a tensor-core GEMM
}

TEST(TbOverview, ReopenedStepTimeCountsTwice) {
  // A kernel covers all of the step: nothing is left for the other roles. The plugin's role algebra
  // then opens the whole step again for the next role (Memcpy), and its roles add up to twice the step.
  const Trace t = kineto_trace("reopen", {
                                             step(1, 10, 90),
                                             op("aten::foo", 15, 75),
                                             launch(1, 20, 2),
                                             kernel(1, 5, 195),
                                             launch(2, 30, 2),
                                             memcpy_op(2, 50, 10),
                                         });
  const auto mine = tb_overview(t);
  TbOptions plugin;
  plugin.reopen_claimed_time = true;
  const auto theirs = tb_overview(t, plugin);
  ASSERT_TRUE(mine.ok() && theirs.ok());
  const TbStep& a = mine->units[0].steps[0];
  const TbStep& b = theirs->units[0].steps[0];
  EXPECT_EQ(a.start, 10 * kNs);
  EXPECT_EQ(a.end, 200 * kNs);
  EXPECT_EQ(role(a, TbRole::kKernel), 190 * kNs);
  for (TbRole r : {TbRole::kMemcpy, TbRole::kRuntime, TbRole::kCpuExec, TbRole::kOther}) EXPECT_EQ(role(a, r), 0);
  EXPECT_EQ(role(b, TbRole::kKernel), 190 * kNs);
  EXPECT_EQ(role(b, TbRole::kMemcpy), 10 * kNs);
  EXPECT_EQ(role(b, TbRole::kRuntime), 4 * kNs);
  EXPECT_EQ(role(b, TbRole::kCpuExec), 61 * kNs);  // [15, 90) less the copy and the two calls
  EXPECT_EQ(role(b, TbRole::kOther), 115 * kNs);
}

TEST(TbOverview, WithoutProfilerStepsOneStepSpansTheCpuEvents) {
  const Trace t = kineto_trace("whole", {
                                            op("aten::mm", 100, 50),
                                            op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 200, 30),
                                            launch(1, 110, 5),
                                            kernel(1, 120, 200),
                                        });
  const auto o = tb_overview(t);
  ASSERT_TRUE(o.ok());
  const TbUnit& u = o->units[0];
  EXPECT_TRUE(u.whole_trace);
  ASSERT_EQ(u.steps.size(), 1u);
  EXPECT_EQ(u.steps[0].start, 100 * kNs);
  EXPECT_EQ(u.steps[0].end, 320 * kNs);  // stretched to the kernel
  EXPECT_EQ(role(u.steps[0], TbRole::kKernel), 200 * kNs);
  EXPECT_EQ(role(u.steps[0], TbRole::kRuntime), 5 * kNs);   // before the kernel starts
  EXPECT_EQ(role(u.steps[0], TbRole::kDataLoader), 0);      // all under the kernel
  EXPECT_EQ(role(u.steps[0], TbRole::kCpuExec), 15 * kNs);  // aten::mm around the call, before the kernel
  EXPECT_EQ(role(u.steps[0], TbRole::kOther), 0);
}

TEST(TbOverview, ReportsHaveOneRowPerStepAndAnAverage) {
  const Trace t = kineto_trace("report", {
                                             step(1, 0, 100),
                                             launch(1, 10, 2),
                                             kernel(1, 20, 50),
                                             step(2, 100, 100),
                                             launch(2, 110, 2),
                                             kernel(2, 120, 30),
                                         });
  const auto csv = report_csv(t, "tb_step_breakdown");
  ASSERT_TRUE(csv.has_value());
  const auto rows = parse_csv(*csv);
  ASSERT_EQ(rows.size(), 4u);  // header, 2 steps, Average
  EXPECT_EQ(rows[0][0], "Rank");
  EXPECT_EQ(rows[0][4], "Kernel (ns)");
  EXPECT_EQ(rows[0][12], "Kernel (%)");
  EXPECT_EQ(rows[1][1], "1");
  EXPECT_EQ(rows[1][3], "100000");
  EXPECT_EQ(rows[1][4], "50000");
  EXPECT_EQ(rows[1][12], "50.0");
  EXPECT_EQ(rows[3].back(), "Average");
  EXPECT_EQ(rows[3][3], "100000.0");
  EXPECT_EQ(rows[3][4], "40000.0");
  EXPECT_EQ(rows[3][12], "40.0");

  const auto gpu = report_csv(t, "tb_gpu_metrics");
  ASSERT_TRUE(gpu.has_value());
  const auto g = parse_csv(*gpu);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0][2], "GPU Utilization (%)");
  EXPECT_EQ(g[1][1], "0");
  EXPECT_EQ(g[1][2], "40.0");
  EXPECT_EQ(g[1][3], "20.0");  // 50 blocks on 100 SMs for 80 of 200 µs
  EXPECT_EQ(g[1].back(), "Test GPU");
}

}  // namespace
}  // namespace tracedoc::testing
