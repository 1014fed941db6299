// The GPU time breakdowns (src/analysis/pytorch/gpu_work.h, gpu_breakdowns.h, launch_stats.h and
// their reports) on small hand-built traces whose every number is worked out in the comments.
// tests/hta_breakdowns_test.cpp compares the same code with HTA on real traces.
#include <gtest/gtest.h>

#include <cmath>

#include "analysis/pytorch/gpu_breakdowns.h"
#include "analysis/pytorch/launch_stats.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

using namespace tracedoc::pytorch;

constexpr int64_t kPid = int64_t{42} << 24;
constexpr int64_t kTid = kPid | 7;

// A PyTorch-like trace built row by row; every column of a table gets a value.
struct Builder {
  Trace t;
  int64_t next_correlation = 1;
  Builder() {
    t.source.format = "kineto-json";
    t.source.path = "synthetic.json";
    t.pytorch.rank = 0;
  }
  int64_t api(std::string_view name, TimeNs start, TimeNs end, int64_t tid = kTid) {
    auto& a = t.api;
    const int64_t c = next_correlation++;
    a.start.push_back(start), a.end.push_back(end), a.global_tid.push_back(tid), a.correlation.push_back(c);
    a.return_value.push_back(0), a.name.push_back(t.strings.intern(name));
    a.api_class.push_back(static_cast<uint8_t>(ApiClass::kCudaRuntime));
    return c;
  }
  void kernel(std::string_view name, TimeNs start, TimeNs end, int32_t stream, int64_t correlation = kNoValue,
              int32_t device = 0, int64_t global_pid = kPid) {
    auto& k = t.kernels;
    const StrId n = t.strings.intern(name);
    k.start.push_back(start), k.end.push_back(end), k.global_pid.push_back(global_pid),
        k.correlation.push_back(correlation);
    k.device.push_back(device), k.context.push_back(1), k.green_context.push_back(kNoGreen), k.stream.push_back(stream);
    k.name.push_back(n), k.short_name.push_back(n), k.mangled_name.push_back(n);
    for (auto* c : {&k.grid_x, &k.grid_y, &k.grid_z, &k.block_x, &k.block_y, &k.block_z, &k.registers_per_thread,
                    &k.static_smem, &k.dynamic_smem}) {
      c->push_back(1);
    }
    k.graph_node_id.push_back(kNoValue);
  }
  // A kernel launched by a call [call_start, call_end) named `launcher`.
  void launched(std::string_view launcher, TimeNs call_start, TimeNs call_end, std::string_view name, TimeNs start,
                TimeNs end, int32_t stream) {
    kernel(name, start, end, stream, api(launcher, call_start, call_end));
  }
  void memcpy(TimeNs start, TimeNs end, int32_t stream, int64_t correlation = kNoValue) {
    auto& m = t.memcpys;
    m.start.push_back(start), m.end.push_back(end), m.global_pid.push_back(kPid), m.correlation.push_back(correlation);
    m.bytes.push_back(1024), m.device.push_back(0), m.context.push_back(1), m.green_context.push_back(kNoGreen);
    m.stream.push_back(stream), m.src_device.push_back(0), m.dst_device.push_back(0);
    m.copy_kind.push_back(static_cast<uint8_t>(CopyKind::kDtoD));
    m.src_kind.push_back(static_cast<uint8_t>(MemKind::kDevice)),
        m.dst_kind.push_back(static_cast<uint8_t>(MemKind::kDevice));
  }
  void step(std::string_view name, TimeNs start, TimeNs end) {
    auto& r = t.ranges;
    r.start.push_back(start), r.end.push_back(end), r.global_tid.push_back(kTid), r.end_global_tid.push_back(kNoValue);
    r.kind.push_back(static_cast<uint16_t>(RangeKind::kNvtxPushPop)), r.text.push_back(t.strings.intern(name));
    r.domain_id.push_back(kNoValue), r.range_id.push_back(kNoValue),
        r.row_id.push_back(static_cast<int64_t>(r.start.size()));
    t.pytorch.steps.push_back(static_cast<uint32_t>(r.start.size() - 1));
  }
  void sync(int32_t type, TimeNs start, TimeNs end, int32_t stream) {
    auto& s = t.syncs;
    s.start.push_back(start), s.end.push_back(end), s.global_pid.push_back(kPid), s.correlation.push_back(kNoValue);
    s.event_id.push_back(kNoValue), s.device.push_back(0), s.context.push_back(1), s.stream.push_back(stream);
    s.sync_type.push_back(type);
  }
};

const GpuUnit& only_unit(const GpuWork& w) {
  EXPECT_EQ(w.units.size(), 1u);
  return w.units.at(0);
}

TRACEDOC_TEST_LABELS(GpuBreakdowns, unit);

TEST(GpuBreakdowns, TemporalSplitsTheSpanIntoIdleComputeAndTheRest) {
  Builder b;
  b.kernel("gemm", 0, 10, 1);
  b.kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 5, 20, 2);  // 10 ns of it hidden by the gemm: 5..10
  b.memcpy(25, 30, 1);
  b.kernel("relu", 40, 50, 1);
  const GpuWork w = collect_gpu_work(b.t);
  const TemporalBreakdown t = temporal_breakdown(only_unit(w));
  // Span 0..50; busy [0,20) [25,30) [40,50) = 35; compute [0,10) [40,50) = 20.
  EXPECT_EQ(t.span(), 50);
  EXPECT_EQ(t.busy, 35);
  EXPECT_EQ(t.idle, 15);
  EXPECT_EQ(t.compute, 20);
  EXPECT_EQ(t.non_compute, 15);  // the AllReduce's 10 not under the gemm, and the copy's 5
  EXPECT_EQ(temporal_breakdown(GpuUnit{}).span(), 0);
}

TEST(GpuBreakdowns, IdleGapsAreHostKernelOrOtherWait) {
  Builder b;
  b.launched("cudaLaunchKernel", -5, -3, "a", 0, 10, 1);
  b.launched("cudaLaunchKernel", 11, 12, "b", 12, 20, 1);  // called after a ended: host wait 2
  b.launched("cudaLaunchKernel", 0, 1, "c", 25, 30, 1);    // queued in time: gap 5 < 30 -> kernel wait
  b.launched("cudaLaunchKernel", 1, 2, "d", 100, 110, 1);  // gap 70 >= 30 -> other
  b.kernel("unlaunched", 140, 150, 1);                     // no call: gap 30, not < 30 -> other
  b.launched("cudaLaunchKernel", 0, 1, "e", 0, 5, 2);      // another stream
  const GpuUnit u = only_unit(collect_gpu_work(b.t));
  const auto streams = idle_time_breakdown(u, 30);
  ASSERT_EQ(streams.size(), 2u);
  const StreamIdle& s = streams[0];
  EXPECT_EQ(s.stream, 1);
  EXPECT_EQ(s.operations, 5);
  EXPECT_EQ(s.busy, 10 + 8 + 5 + 10 + 10);
  EXPECT_EQ(s.gaps[0], 2);
  EXPECT_EQ(s.gaps[1], 5);
  EXPECT_EQ(s.gaps[2], 70 + 30);
  EXPECT_EQ(s.idle(), 107);
  EXPECT_EQ(streams[1].idle(), 0);
  // The delay is a strict bound: with 5, the gap of 5 is other wait.
  const auto strict = idle_time_breakdown(u, 5);
  EXPECT_EQ(strict[0].gaps[1], 0);
  EXPECT_EQ(strict[0].gaps[2], 105);
}

TEST(GpuBreakdowns, IdleGapsStartAtTheLatestEndAndZeroLengthOperationsSplitThem) {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 1, "long", 0, 100, 1);
  b.launched("cudaLaunchKernel", 0, 1, "inside", 10, 20, 1);   // overlaps (PDL): no gap, and no negative one
  b.launched("cudaLaunchKernel", 0, 1, "next", 110, 120, 1);   // gap from 100 (not from 20): 10
  b.launched("cudaLaunchKernel", 0, 1, "empty", 150, 150, 1);  // 0 ns, still an operation: gap 30
  b.launched("cudaLaunchKernel", 0, 1, "last", 160, 170, 1);   // gap 10 after the empty one
  const auto streams = idle_time_breakdown(only_unit(collect_gpu_work(b.t)), 30);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].gaps[1], 10 + 10);
  EXPECT_EQ(streams[0].gaps[2], 30);
  EXPECT_EQ(streams[0].gap_count[1], 2);
  EXPECT_EQ(streams[0].busy, 100 + 10 + 10);
}

TEST(GpuBreakdowns, KernelTypesAreTheExactCombinationsRunning) {
  Builder b;
  b.kernel("gemm", 0, 10, 1);
  b.kernel("ncclDevKernel_Generic", 5, 15, 2);
  b.memcpy(8, 20, 3);
  const GpuUnit u = only_unit(collect_gpu_work(b.t));
  const auto types = kernel_type_breakdown(u);
  // COMP only [0,5); COMP+COMM [5,8); all three [8,10); COMM+MEM [10,15); MEM only [15,20).
  ASSERT_EQ(types.size(), 5u);
  std::map<std::string, int64_t> by_label;
  for (const auto& k : types) by_label[k.label] = k.time;
  EXPECT_EQ(by_label["COMPUTATION"], 5);
  EXPECT_EQ(by_label["COMPUTATION overlapping COMMUNICATION"], 3);
  EXPECT_EQ(by_label["COMPUTATION overlapping COMMUNICATION overlapping MEMORY"], 2);
  EXPECT_EQ(by_label["COMMUNICATION overlapping MEMORY"], 5);
  EXPECT_EQ(by_label["MEMORY"], 5);
  EXPECT_EQ(types[0].time, 5);  // longest first, ties by label
  EXPECT_EQ(types[0].label, "COMMUNICATION overlapping MEMORY");
  // Without memory: COMP only [0,5); COMP+COMM [5,10); COMM only [10,15).
  const auto no_memory = kernel_type_breakdown(u, false);
  ASSERT_EQ(no_memory.size(), 3u);
  for (const auto& k : no_memory) EXPECT_EQ(k.time, 5) << k.label;

  const CommCompOverlap o = comm_comp_overlap(u);
  EXPECT_EQ(o.communication, 10);
  EXPECT_EQ(o.computation, 10);
  EXPECT_EQ(o.overlap, 5);
  EXPECT_DOUBLE_EQ(o.ratio(), 0.5);
  EXPECT_LT(CommCompOverlap{}.ratio(), 0);
}

TEST(GpuBreakdowns, ClassifiersFollowTracedocOrHta) {
  EXPECT_EQ(classify_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", Classifier::kHta050),
            WorkClass::kCommunication);
  EXPECT_EQ(classify_kernel_name("rcclGenericKernel", Classifier::kTracedoc), WorkClass::kCommunication);
  EXPECT_EQ(classify_kernel_name("rcclGenericKernel", Classifier::kHta050), WorkClass::kComputation);
  // HTA 0.5.0 leaves kernels named *Sync* / *Memcpy* out of compute; tracedoc does not.
  EXPECT_EQ(classify_kernel_name("void batch_norm_SyncBN_kernel", Classifier::kHta050), WorkClass::kOther);
  EXPECT_EQ(classify_kernel_name("void batch_norm_SyncBN_kernel", Classifier::kTracedoc), WorkClass::kComputation);
  EXPECT_EQ(classify_kernel_name("Memcpy DtoD (Device -> Device)", Classifier::kHta050), WorkClass::kMemory);
  // Only the first line of a name counts for HTA (Python's re.match and `.`).
  EXPECT_EQ(classify_kernel_name("gemm\nSync", Classifier::kHta050), WorkClass::kComputation);
  EXPECT_EQ(classify_kernel_name(sync_name(2), Classifier::kHta050), WorkClass::kComputation);  // "Stream Wait Event"
  EXPECT_EQ(classify_kernel_name(sync_name(3), Classifier::kHta050), WorkClass::kOther);
  EXPECT_STREQ(work_class_name(WorkClass::kMemory), "MEMORY");

  // Collective arguments make a kernel communication whatever its name (tracedoc's classes only).
  Builder b;
  b.kernel("custom_allreduce_kernel", 0, 10, 1);
  b.t.pytorch.collectives.kernel.push_back(0);
  EXPECT_EQ(only_unit(collect_gpu_work(b.t)).items[0].cls, WorkClass::kCommunication);
  GpuWorkOptions hta;
  hta.classifier = Classifier::kHta050;
  EXPECT_EQ(only_unit(collect_gpu_work(b.t, hta)).items[0].cls, WorkClass::kComputation);
}

TEST(GpuBreakdowns, SyncRecordsCountOnlyWhenAsked) {
  Builder b;
  b.kernel("gemm", 0, 10, 1);
  b.sync(2, 10, 30, 1);  // Stream Wait Event: the host waiting, HTA's COMPUTATION
  EXPECT_EQ(temporal_breakdown(only_unit(collect_gpu_work(b.t))).span(), 10);
  GpuWorkOptions o;
  o.include_syncs = true;
  const GpuUnit with = only_unit(collect_gpu_work(b.t, o));
  EXPECT_EQ(temporal_breakdown(with).span(), 30);
  EXPECT_EQ(temporal_breakdown(with).compute, 10);  // tracedoc's classes: a sync record is OTHER
  o.classifier = Classifier::kHta050;
  EXPECT_EQ(temporal_breakdown(only_unit(collect_gpu_work(b.t, o))).compute, 30);
  EXPECT_EQ(idle_time_breakdown(with, 30)[0].operations, 1);  // not an operation of the stream
}

TEST(GpuBreakdowns, DropLastStepMirrorsHta) {
  Builder b;
  b.step("ProfilerStep#1", 0, 100);
  b.step("ProfilerStep#2", 100, 200);
  b.launched("cudaLaunchKernel", 50, 51, "in_step_1", 60, 70, 1);
  b.launched("cudaLaunchKernel", 150, 151, "in_step_2", 160, 170, 1);
  b.kernel("unlaunched", 80, 90, 1);
  EXPECT_EQ(only_unit(collect_gpu_work(b.t)).items.size(), 3u);
  GpuWorkOptions o;
  o.drop_last_step = true;
  const GpuUnit u = only_unit(collect_gpu_work(b.t, o));
  ASSERT_EQ(u.items.size(), 1u);  // launched before the last step's start; unlaunched work goes too
  EXPECT_EQ(u.items[0].start, 60);
  // One step name: HTA keeps everything.
  Builder one;
  one.step("ProfilerStep#1", 0, 100);
  one.launched("cudaLaunchKernel", 150, 151, "after", 160, 170, 1);
  EXPECT_EQ(only_unit(collect_gpu_work(one.t, o)).items.size(), 1u);
}

TEST(GpuBreakdowns, UnitsArePerRankAndDevice) {
  Builder b;
  b.kernel("gemm", 0, 10, 1, kNoValue, 0);
  b.kernel("gemm", 0, 10, 1, kNoValue, 1);
  b.kernel("gemm", 0, 10, 1, kNoValue, 0, (int64_t{3} << 48) | kPid);  // rank 2 of a merged directory
  const GpuWork w = collect_gpu_work(b.t);
  ASSERT_TRUE(w.pytorch);
  ASSERT_EQ(w.units.size(), 3u);
  EXPECT_EQ(w.units[0].rank, 0);
  EXPECT_EQ(w.units[0].device, 0);
  EXPECT_EQ(w.units[1].device, 1);
  EXPECT_EQ(w.units[2].rank, 2);
  b.t.source.format = "nsys-sqlite";
  const GpuWork n = collect_gpu_work(b.t);
  EXPECT_FALSE(n.pytorch);
  EXPECT_EQ(n.units[0].pid, 42);
  EXPECT_EQ(n.units[0].rank, -1);
}

TRACEDOC_TEST_LABELS(LaunchStats, unit);

TEST(LaunchStats, NamesDecideWhatIsALaunch) {
  EXPECT_EQ(api_base_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_base_name("cudaMemcpyAsync_ptsz"), "cudaMemcpyAsync_ptsz");
  EXPECT_EQ(api_base_name("foo_v"), "foo_v");
  EXPECT_EQ(api_base_name("foo_v12a"), "foo_v12a");
  for (const char* n : {"cudaLaunchKernel", "cudaLaunchKernelExC_v11060", "cuLaunchKernel", "cuLaunchKernelEx",
                        "cudaLaunchCooperativeKernel", "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel",
                        "hipExtModuleLaunchKernel", "cudaLaunchKernel_ptsz"}) {
    EXPECT_TRUE(is_launch_call(n, LaunchNames::kTracedoc, false)) << n;
  }
  for (const char* n : {"cudaGraphLaunch", "cudaMemcpy", "cudaStreamSynchronize", "cudaLaunchHostFunc"}) {
    EXPECT_FALSE(is_launch_call(n, LaunchNames::kTracedoc, true)) << n;
  }
  EXPECT_TRUE(is_launch_call("cuMemcpyHtoDAsync_v2", LaunchNames::kTracedoc, true));
  EXPECT_TRUE(is_launch_call("hipMemcpyWithStream", LaunchNames::kTracedoc, true));
  EXPECT_FALSE(is_launch_call("cudaMemsetAsync", LaunchNames::kTracedoc, false));
  // HTA 0.5.0's lists: no driver API, no HIP in the launch statistics.
  EXPECT_TRUE(is_launch_call("cudaLaunchKernelExC", LaunchNames::kHta050, false));
  EXPECT_TRUE(is_launch_call("cudaMemcpyAsync", LaunchNames::kHta050, true));
  for (const char* n : {"cuLaunchKernel", "hipLaunchKernel", "cudaMemcpy2DAsync"})
    EXPECT_FALSE(is_launch_call(n, LaunchNames::kHta050, true)) << n;
  EXPECT_TRUE(is_queue_call("cuLaunchKernel", LaunchNames::kHta050));
  EXPECT_TRUE(is_queue_call("hipLaunchKernel", LaunchNames::kHta050));
  EXPECT_FALSE(is_queue_call("cuLaunchKernelEx", LaunchNames::kHta050));
  EXPECT_FALSE(is_queue_call("hipExtLaunchKernel", LaunchNames::kHta050));
  EXPECT_TRUE(is_queue_call("cudaGraphLaunch", LaunchNames::kTracedoc));
}

TEST(LaunchStats, DelaysShortKernelsAndOutliers) {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 4, "short", 10, 12, 1);              // cpu 4, gpu 2, delay 6: short
  b.launched("cuLaunchKernel", 20, 80, "triton", 70, 200, 1);            // cpu 60 > 50: runtime outlier; delay < 0 -> 0
  b.kernel("copy_kernel", 300, 301, 1, b.api("cudaMemcpyAsync", 0, 1));  // cpu 1, gpu 1 (not < 1), delay 299 > 100
  b.launched("cudaGraphLaunch", 0, 1, "graph_node", 400, 410, 1);        // not a per-kernel launch
  const GpuUnit u = only_unit(collect_gpu_work(b.t));
  LaunchStatsOptions o;
  o.runtime_cutoff_ns = 50;  // HTA's 50 and 100 µs, here in ns
  o.launch_delay_cutoff_ns = 100;
  const LaunchStats s = kernel_launch_stats(b.t, u, o);
  EXPECT_EQ(s.launches, 3);
  EXPECT_EQ(s.cpu_total, 4 + 60 + 1);
  EXPECT_EQ(s.gpu_total, 2 + 130 + 1);
  EXPECT_EQ(s.delay_total, 6 + 0 + 299);
  EXPECT_EQ(s.delay.min, 0);
  EXPECT_EQ(s.delay.max, 299);
  EXPECT_DOUBLE_EQ(s.delay.median, 6);
  EXPECT_EQ(s.short_kernels, 1);
  EXPECT_EQ(s.runtime_outliers, 1);
  EXPECT_EQ(s.delay_outliers, 1);
  o.names = LaunchNames::kHta050;  // cuLaunchKernel is not in HTA's list
  EXPECT_EQ(kernel_launch_stats(b.t, u, o).launches, 2);
  o.include_memory = false;
  EXPECT_EQ(kernel_launch_stats(b.t, u, o).launches, 1);
}

TEST(LaunchStats, DescribeIsPandas) {
  const Describe d = describe({1, 2, 3, 2, 1, 0});
  EXPECT_EQ(d.count, 6);
  EXPECT_DOUBLE_EQ(d.mean, 1.5);
  EXPECT_DOUBLE_EQ(d.std, std::sqrt(5.5 / 5));
  EXPECT_EQ(d.min, 0);
  EXPECT_DOUBLE_EQ(d.q1, 1);  // sorted 0 1 1 2 2 3: position 1.25
  EXPECT_DOUBLE_EQ(d.median, 1.5);
  EXPECT_DOUBLE_EQ(d.q3, 2);
  EXPECT_EQ(d.max, 3);
  const Describe one = describe({5});
  EXPECT_TRUE(std::isnan(one.std));
  EXPECT_DOUBLE_EQ(one.q3, 5);
  EXPECT_EQ(describe({}).count, 0);
  EXPECT_DOUBLE_EQ(describe({0, 10}).q1, 2.5);
}

TRACEDOC_TEST_LABELS(QueueLength, unit);

TEST(QueueLength, SamplesTimeWeightedMeanAndBlockedTime) {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 1, "a", 5, 6, 1);
  b.launched("cudaLaunchKernel", 1, 2, "b", 6, 7, 1);
  b.launched("cudaLaunchKernel", 2, 3, "c", 7, 8, 1);
  b.launched("cudaLaunchKernel", 7, 8, "d", 6, 9, 2);  // starts before its call (clock skew): length 1, 0 at 7
  const GpuUnit u = only_unit(collect_gpu_work(b.t));
  QueueOptions o;
  o.max_queue_length = 3;
  const auto q = queue_length_summary(b.t, u, o);
  ASSERT_EQ(q.size(), 2u);
  // Stream 1: +1 at 0, 1, 2; -1 at 5, 6, 7 -> samples 1 2 3 2 1 0.
  EXPECT_EQ(q[0].samples.count, 6);
  EXPECT_DOUBLE_EQ(q[0].samples.mean, 1.5);
  EXPECT_EQ(q[0].samples.max, 3);
  // Depth 1 on [0,1), 2 on [1,2), 3 on [2,5), 2 on [5,6), 1 on [6,7): 15 / 7; at 3 for 3 ns.
  EXPECT_DOUBLE_EQ(q[0].time_weighted_mean, 15.0 / 7.0);
  EXPECT_EQ(q[0].blocked, 3);
  EXPECT_EQ(q[0].first, 0);
  EXPECT_EQ(q[0].last, 7);
  EXPECT_EQ(q[1].samples.count, 2);
  EXPECT_EQ(q[1].samples.min, 0);
  EXPECT_EQ(q[1].samples.max, 1);
  EXPECT_EQ(q[1].blocked, 0);
}

TEST(QueueLength, LaunchesCountBeforeStartsAtEqualTimes) {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 1, "a", 5, 6, 1);
  b.launched("cudaLaunchKernel", 5, 6, "b", 8, 9, 1);  // launched when a starts: samples 1, 2, 1, 0
  const auto q = queue_length_summary(b.t, only_unit(collect_gpu_work(b.t)));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].samples.max, 2);
  EXPECT_DOUBLE_EQ(q[0].samples.mean, 1.0);
}

TEST(QueueLength, SeriesIsTheStepFunction) {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 1, "a", 5, 6, 1);
  b.launched("cudaLaunchKernel", 5, 6, "b", 8, 9, 1);  // launched when a starts: no change at 5
  b.launched("cudaLaunchKernel", 2, 3, "c", 4, 5, 3);
  const auto series = queue_length_series(b.t, only_unit(collect_gpu_work(b.t)));
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].stream, 1);
  EXPECT_EQ(series[0].changes, (std::vector<DepthChange>{{0, 1}, {8, 0}}));
  EXPECT_EQ(series[1].stream, 3);
  EXPECT_EQ(series[1].changes, (std::vector<DepthChange>{{2, 1}, {4, 0}}));
}

// --- the reports -----------------------------------------------------------------------------------

Builder report_trace() {
  Builder b;
  b.launched("cudaLaunchKernel", 0, 2, "gemm", 10, 30, 7);
  b.launched("cudaLaunchKernel", 3, 4, "ncclKernel_AllReduce", 20, 60, 9);
  b.launched("cudaLaunchKernel", 50, 52, "relu", 70, 80, 7);
  return b;
}

TRACEDOC_TEST_LABELS(GpuBreakdownReports, corpus);

TEST(GpuBreakdownReports, ColumnsAndRows) {
  const Builder b = report_trace();
  const auto rows = [&](const std::string& r) { return parse_csv(report_csv(b.t, r).value()); };
  const auto t = rows("gpu_time_breakdown");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0], (std::vector<std::string>{"Rank", "Device", "Span (ns)", "Idle (ns)", "Compute (ns)",
                                            "Non-Compute (ns)", "Idle (%)", "Compute (%)", "Non-Compute (%)"}));
  // Span 10..80 = 70; busy [10,60) [70,80) = 60; compute 20 + 10 = 30.
  EXPECT_EQ(t[1], (std::vector<std::string>{"0", "0", "70", "10", "30", "30", "14.29", "42.86", "42.86"}));

  const auto idle = rows("idle_time_breakdown");
  ASSERT_EQ(idle.size(), 3u);  // streams 7 and 9
  EXPECT_EQ(idle[0][2], "Stream");
  // Stream 7: gap 30..70 = 40, relu launched at 50 > 30: host wait.
  EXPECT_EQ(idle[1], (std::vector<std::string>{"0", "0", "7", "2", "30", "40", "40", "0", "0", "100.0", "0.0", "0.0"}));
  EXPECT_EQ(rows("idle_time_breakdown:delay=50")[1][6], "40");

  const auto types = rows("kernel_type_breakdown");
  ASSERT_EQ(types.size(), 4u);
  EXPECT_EQ(types[1], (std::vector<std::string>{"0", "0", "50.0", "30", "COMMUNICATION"}));

  const auto overlap = rows("comm_comp_overlap");
  EXPECT_EQ(overlap[1], (std::vector<std::string>{"0", "0", "40", "30", "10", "25.0"}));

  const auto launch = rows("kernel_launch_stats:runtime-cutoff=1:delay-cutoff=15");
  ASSERT_EQ(launch.size(), 2u);
  // Delays 8, 16, 18; CPU 2, 1, 2 (runtime outliers > 1: two); short: cpu <= 1 and gpu < cpu: none.
  EXPECT_EQ(launch[1], (std::vector<std::string>{"0", "0", "3", "5", "70", "42", "14.0", "16.0", "8", "18", "5.3", "0",
                                                 "2", "2"}));
  const auto queue = rows("queue_length_sum:max-queue=1");
  ASSERT_EQ(queue.size(), 3u);
  EXPECT_EQ(queue[0][3], "Samples");
  // Stream 7: +1 at 0, -1 at 10, +1 at 50, -1 at 70: samples 1 0 1 0; at >= 1 on [0,10) and [50,70).
  EXPECT_EQ(queue[1],
            (std::vector<std::string>{"0", "0", "7", "4", "0.5", "0.58", "0", "0.0", "0.5", "1.0", "1", "0.43", "30"}));

  const auto series = rows("queue_length_trace");
  EXPECT_EQ(series, (std::vector<std::vector<std::string>>{{"Rank", "Device", "Stream", "Start (ns)", "Queue Length"},
                                                           {"0", "0", "7", "0", "1"},
                                                           {"0", "0", "7", "10", "0"},
                                                           {"0", "0", "7", "50", "1"},
                                                           {"0", "0", "7", "70", "0"},
                                                           {"0", "0", "9", "3", "1"},
                                                           {"0", "0", "9", "20", "0"}}));
  // Bins of 25 ns from each stream's first launch. Stream 7: [0,25) holds 1 for 10 ns; [25,50) is
  // empty; [50,75) holds 1 for 20 ns. Stream 9: [3,28) holds 1 for 17 ns.
  EXPECT_EQ(rows("queue_length_trace:bin=25"),
            (std::vector<std::vector<std::string>>{{"Rank", "Device", "Stream", "Start (ns)", "Mean", "Max"},
                                                   {"0", "0", "7", "0", "0.4", "1"},
                                                   {"0", "0", "7", "50", "0.8", "1"},
                                                   {"0", "0", "9", "3", "0.68", "1"}}));
  // A wait longer than a bin: one row per bin it covers.
  // Stream 7: [0,10) covers bins 0, 4, 8; [50,70) bins 48 ... 68 (six); stream 9: [3,20) bins 3 ... 19 (five).
  const auto fine = rows("queue_length_trace:bin=4");
  ASSERT_EQ(fine.size(), 1u + 3 + 6 + 5);
  EXPECT_EQ(fine[4], (std::vector<std::string>{"0", "0", "7", "48", "0.5", "1"}));
}

TEST(GpuBreakdownReports, ArgumentsAndMissingData) {
  const Builder b = report_trace();
  EXPECT_THROW(report_csv(b.t, "gpu_time_breakdown:bogus"), std::runtime_error);
  EXPECT_THROW(report_csv(b.t, "idle_time_breakdown:delay=abc"), std::runtime_error);
  EXPECT_THROW(report_csv(b.t, "idle_time_breakdown:delay=-5"), std::runtime_error);
  EXPECT_THROW(report_csv(b.t, "queue_length_sum:delay=5"), std::runtime_error);  // another report's argument
  EXPECT_THROW(report_csv(b.t, "queue_length_trace:bin=x"), std::runtime_error);
  for (const char* r : {"gpu_time_breakdown:hta", "kernel_type_breakdown:no-memory:syncs",
                        "kernel_launch_stats:hta-launches", "comm_comp_overlap:drop-last-step:hta-classes"}) {
    EXPECT_TRUE(report_csv(b.t, r).has_value()) << r;
  }
  Builder empty;
  for (const char* r : {"gpu_time_breakdown", "idle_time_breakdown", "kernel_type_breakdown", "comm_comp_overlap",
                        "kernel_launch_stats", "queue_length_sum", "queue_length_trace"}) {
    EXPECT_FALSE(report_csv(empty.t, r).has_value()) << r;
  }
  Builder no_comm;
  no_comm.kernel("gemm", 0, 10, 1);
  EXPECT_FALSE(report_csv(no_comm.t, "comm_comp_overlap").has_value());
  EXPECT_FALSE(report_csv(no_comm.t, "kernel_launch_stats").has_value());  // no API calls
  no_comm.t.source.format = "nsys-sqlite";
  EXPECT_EQ(parse_csv(report_csv(no_comm.t, "gpu_time_breakdown").value())[0][0], "PID");
}

// A rank directory: one row per rank, each equal to the rank's file read alone.
TEST(GpuBreakdownReports, RankDirectoryGivesEachRanksOwnNumbers) {
  const auto shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces not found";
  const auto dir = shared / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_filter";
  auto merged = read_kineto_directory(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  for (const char* report : {"gpu_time_breakdown", "idle_time_breakdown", "kernel_type_breakdown", "comm_comp_overlap",
                             "kernel_launch_stats", "queue_length_sum"}) {
    const auto all = parse_csv(report_csv(*merged, report).value());
    size_t rows = 1;
    for (int rank : {0, 1}) {
      const auto one = parse_csv(
          report_csv(load_kineto((dir / ("sampled_rank-" + std::to_string(rank) + ".json.gz")).string()), report)
              .value());
      ASSERT_GT(one.size(), 1u) << report;
      for (size_t i = 1; i < one.size(); ++i, ++rows) {
        ASSERT_LT(rows, all.size()) << report;
        auto expected = one[i];
        expected[1] = all[rows][1];  // the device: each file has its own device numbering
        EXPECT_EQ(all[rows], expected) << report << " rank " << rank;
      }
    }
    EXPECT_EQ(rows, all.size()) << report;
  }
}

}  // namespace
}  // namespace tracedoc::testing
