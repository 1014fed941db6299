// tracedoc view's data: the GPU critical path, the timeline's tracks and nesting, the levels of
// detail, the page's data document and the SVG, on real traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <map>
#include <set>

#include "analysis/critical_path.h"
#include "analysis/context.h"
#include "analysis/cpu_samples.h"
#include "ingest/kineto_reader.h"
#include "report/html_view_writer.h"
#include "report/svg_timeline_writer.h"
#include "test_support.h"
#include "view/view_model.h"

namespace tracedoc {
namespace {

using testing::shared_dir;

const char* kResnet =
    "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";
const char* kMfu = "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite";

#define REQUIRE_SHARED(rel)                                                     \
  if (shared_dir().empty() || !std::filesystem::exists(shared_dir() / (rel))) { \
    GTEST_SKIP() << "../shared is absent: " << (rel) << " not found";           \
  }

TRACEDOC_TEST_LABELS(CriticalPath, corpus);

TEST(CriticalPath, SingleStreamStepsAreOneChain) {
  REQUIRE_SHARED(kResnet);
  const Trace& t = testing::load_kineto((shared_dir() / kResnet).string());
  AnalysisContext ctx(t, {});
  const pytorch::GpuWork& work = ctx.gpu_work();
  ASSERT_EQ(work.units.size(), 1u);
  std::vector<std::vector<Interval>> windows{ctx.windows_of(work.units[0].owner)};
  ASSERT_EQ(windows[0].size(), 6u);
  const CriticalPath path = critical_path(work, windows, t.kernels.size(), t.memcpys.size(), t.memsets.size());
  // One stream: no work hides under other work, so every operation that ends inside a step's
  // window is on that step's path.
  int64_t inside = 0, off = 0;
  for (const pytorch::GpuWorkItem& item : work.units[0].items) {
    bool in = false;
    for (const Interval& w : windows[0]) in = in || (item.end > w.start && item.end <= w.end);
    if (!in) continue;
    ++inside;
    if (!path.on_path(item.kind, item.row)) ++off;
  }
  int64_t flagged = 0;
  for (uint8_t f : path.kernel) flagged += f;
  for (uint8_t f : path.memcpy) flagged += f;
  for (uint8_t f : path.memset) flagged += f;
  std::set<std::pair<int, uint32_t>> distinct;
  for (const pytorch::GpuWorkItem& item : work.units[0].items) distinct.insert({static_cast<int>(item.kind), item.row});
  EXPECT_EQ(distinct.size(), work.units[0].items.size());
  EXPECT_EQ(flagged, inside);
  EXPECT_EQ(off, 0) << "of " << inside;
  EXPECT_EQ(path.operations, inside);
}

view::ViewOptions critical_options() {
  view::ViewOptions o;
  o.colors = view::ColorScheme::critical_preset();
  return o;
}

// Several streams (HTA's trace_diff control trace: compute, NCCL and copy streams): the path of a
// step is a chain back from the step's last operation, each link ending (within the slack) before
// the next starts, and it includes the operation that ends the step.
TEST(CriticalPath, MultiStreamPathIsAChainEndingTheStep) {
  const char* kControl = "traces/kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz";
  REQUIRE_SHARED(kControl);
  const Trace& t = testing::load_kineto((shared_dir() / kControl).string());
  AnalysisContext ctx(t, {});
  const pytorch::GpuWork& work = ctx.gpu_work();
  ASSERT_EQ(work.units.size(), 1u);
  const pytorch::GpuUnit& unit = work.units[0];
  std::set<int32_t> streams;
  for (const auto& item : unit.items) streams.insert(item.stream);
  EXPECT_GE(streams.size(), 3u);
  const std::vector<Interval>& windows = ctx.windows_of(unit.owner);
  ASSERT_FALSE(windows.empty());
  const CriticalPath path = critical_path(work, {windows}, t.kernels.size(), t.memcpys.size(), t.memsets.size());
  int64_t on = 0, hidden = 0;
  for (const Interval& w : windows) {
    std::vector<const pytorch::GpuWorkItem*> chain;
    TimeNs last_end = kNoTime;
    for (const auto& item : unit.items) {
      if (item.end <= w.start || item.end > w.end) continue;
      last_end = std::max(last_end, item.end);
      if (path.on_path(item.kind, item.row)) chain.push_back(&item);
    }
    if (chain.empty()) continue;
    EXPECT_TRUE(
        std::any_of(chain.begin(), chain.end(), [&](const pytorch::GpuWorkItem* c) { return c->end == last_end; }));
    for (size_t i = 1; i < chain.size(); ++i) {
      EXPECT_LT(chain[i - 1]->start, chain[i]->start);
      EXPECT_LE(chain[i - 1]->end, chain[i]->start + 1000);
    }
    on += static_cast<int64_t>(chain.size());
  }
  for (const auto& item : unit.items) hidden += path.on_path(item.kind, item.row) ? 0 : 1;
  EXPECT_EQ(on, path.operations);
  EXPECT_GT(hidden, 0);  // work overlapped by longer work on other streams is off the path
}

// The events a timeline must hold: every usable GPU operation, API call, closed range and OS call.
int64_t expected_events(const Trace& t) {
  int64_t n =
      static_cast<int64_t>(t.kernels.size() + t.memcpys.size() + t.memsets.size() + t.syncs.size() + t.api.size() +
                           t.os_calls.size() + t.pytorch.ops.size() + t.pytorch.gpu_annotations.size());
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const auto kind = static_cast<RangeKind>(t.ranges.kind[i]);
    if (kind == RangeKind::kNvtxDomainCreate) continue;
    if (t.ranges.end[i] == kNoTime && kind != RangeKind::kNvtxMark) continue;
    ++n;
  }
  return n;
}

TRACEDOC_TEST_LABELS(ViewTimeline, corpus);

TEST(ViewTimeline, TwoGpuExportTracksAndNesting) {
  REQUIRE_SHARED(kMfu);
  const Trace& t = testing::load_nsys((shared_dir() / kMfu).string());
  const view::ViewModel vm = view::build_view(t, critical_options());
  const view::Timeline& tl = vm.timeline;
  EXPECT_EQ(tl.events, 32249);
  EXPECT_EQ(tl.events, expected_events(t));
  ASSERT_EQ(tl.groups.size(), 2u);
  EXPECT_EQ(tl.groups[0].label, "pid 144 python3");
  std::vector<std::string> labels;
  for (const view::Track& track : tl.tracks) labels.push_back(track.label);
  // The main thread first, then the other threads, then the streams; the second process's syncs,
  // recorded with device 0, sit on its GPU 1 streams.
  const std::vector<std::string> expected = {"thread 144 (python3)",
                                             "thread 245 (pt_nccl_watchdg)",
                                             "GPU 0 context",
                                             "GPU 0 stream 7",
                                             "GPU 0 stream 24",
                                             "GPU 0 stream 28",
                                             "GPU 0 stream 153",
                                             "thread 145 (python3)",
                                             "thread 242 (pt_nccl_watchdg)",
                                             "GPU 1 context",
                                             "GPU 1 stream 15",
                                             "GPU 1 stream 32",
                                             "GPU 1 stream 36",
                                             "GPU 1 stream 161"};
  EXPECT_EQ(labels, expected);
  // Nesting: an item at depth d > 0 starts inside an item of depth d - 1 that is still open.
  for (const view::Track& track : tl.tracks) {
    std::vector<const view::TrackItem*> open(view::kMaxTrackRows, nullptr);
    for (const view::TrackItem& item : track.items) {
      if (item.depth > 0) {
        const view::TrackItem* parent = open[item.depth - 1];
        ASSERT_NE(parent, nullptr) << track.label;
        EXPECT_LE(parent->start, item.start);
        EXPECT_GT(parent->end, item.start) << track.label;
      }
      open[item.depth] = &item;
    }
  }
  // The critical path: per GPU, the path operations never overlap one another.
  EXPECT_TRUE(vm.critical_computed);
  EXPECT_GT(vm.critical.operations, 0);
}

// BERT-small on an H100 (op_flops_sum's first row, tests/op_flops_test.cpp): the vocabulary
// projection's 4.41 GFLOP and 40.1 MB in 41.28 µs take the memory 11.96 µs at 3,350 GB/s, 29.0% of
// its time: "fair" under the peak preset, as the kernel it launched.
TEST(ViewTimeline, OperatorsShowTheirFlopsAndThePeakPresetColoursThem) {
  const char* kBert = "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";
  REQUIRE_SHARED(kBert);
  const Trace& t = testing::load_kineto((shared_dir() / kBert).string());
  const view::ItemFigures figures(t);
  const view::OpPeaks& peaks = figures.peaks;
  ASSERT_TRUE(peaks.any());
  const Result<view::ColorScheme> colors = view::ColorScheme::load("peak");
  ASSERT_TRUE(colors.ok());
  const view::Timeline tl = view::build_timeline(t, *colors, nullptr, figures);
  const std::string dims = "[[1, 141, 512], [30522, 512], [30522]]";
  bool found_op = false, found_kernel = false;
  for (const view::Track& track : tl.tracks) {
    for (const view::TrackItem& item : track.items) {
      if (item.category == view::Category::kOp && t.str(t.pytorch.ops.input_dims[item.row]) == dims &&
          t.str(t.pytorch.ops.name[item.row]) == "aten::linear") {
        found_op = true;
        EXPECT_EQ(
            view::item_detail(t, item, nullptr, nullptr, &peaks),
            "input dims " + dims +
                " · 4.41 GFLOP, 40.1 MB · 107 TFLOP/s (10.8% of the bf16 peak) · memory-bound: 29.0% of its roof");
        EXPECT_EQ(colors->palette().at(item.color).label, "10-30% of its roof");
      }
      if (item.category == view::Category::kKernel &&
          peaks.kernel_line(item.row).starts_with("under aten::linear: 4.41 GFLOP")) {
        found_kernel = true;
        EXPECT_EQ(colors->palette().at(item.color).label, "10-30% of its roof");
      }
    }
  }
  EXPECT_TRUE(found_op);
  EXPECT_TRUE(found_kernel);
}

TRACEDOC_TEST_LABELS(ViewLod, corpus);

TEST(ViewLod, BucketsCountEveryEventAndLanesMatchTheUnion) {
  REQUIRE_SHARED(kResnet);
  const Trace& t = testing::load_kineto((shared_dir() / kResnet).string());
  view::ViewOptions o;
  const view::ViewModel vm = view::build_view(t, o);
  const view::Lod& lod = vm.lod;
  EXPECT_EQ(lod.buckets, 8192u);
  std::map<std::pair<uint32_t, uint8_t>, int64_t> per_row;
  for (const view::Track& track : vm.timeline.tracks) {
    for (const view::TrackItem& item : track.items)
      per_row[{static_cast<uint32_t>(&track - vm.timeline.tracks.data()), item.depth}] += 1;
  }
  int64_t counted = 0;
  for (const view::LodRow& row : lod.rows) {
    int64_t n = 0;
    for (uint32_t c : row.count) n += c;
    EXPECT_EQ(n, (per_row[{row.track, row.row}])) << "track " << row.track << " row " << int(row.row);
    EXPECT_TRUE(std::is_sorted(row.bucket.begin(), row.bucket.end()));
    counted += n;
  }
  EXPECT_EQ(counted, vm.timeline.events);
  EXPECT_EQ(counted, 44665);
  // The utilization lane integrates to the GPU's busy union (within rounding of 16-bit shares).
  ASSERT_EQ(lod.utilization.size(), 1u);
  AnalysisContext ctx(t, {});
  const double busy = static_cast<double>(ctx.gpu_work().units[0].busy().total());
  double lane = 0;
  for (uint16_t b : lod.utilization[0].busy) lane += b / 65535.0 * lod.bucket_ns;
  EXPECT_NEAR(lane, busy, busy * 1e-3);
  EXPECT_NEAR(lod.utilization[0].busy_share * static_cast<double>(lod.end - lod.start), busy, 1.0);
  // Memory: the lane's highest bucket is the series' peak.
  ASSERT_EQ(lod.memory.size(), 1u);
  EXPECT_EQ(*std::max_element(lod.memory[0].peak.begin(), lod.memory[0].peak.end()),
            static_cast<double>(lod.memory[0].max_bytes));
  EXPECT_TRUE(lod.raw.complete);
  EXPECT_EQ(lod.raw.events, 44665);
}

TEST(ViewLod, RawBudgetEndsTheWindowWhereTheBudgetRunsOut) {
  REQUIRE_SHARED(kResnet);
  const Trace& t = testing::load_kineto((shared_dir() / kResnet).string());
  view::ViewOptions o;
  o.lod.max_events = 5000;
  o.lod.window_start = 200'000'000;  // 200 ms after the first event
  const view::ViewModel vm = view::build_view(t, o);
  const view::RawSelection& raw = vm.lod.raw;
  EXPECT_FALSE(raw.complete);
  EXPECT_EQ(raw.start, vm.timeline.start + 200'000'000);
  EXPECT_GT(raw.end, raw.start);
  int64_t open = 0, inside = 0;
  for (size_t k = 0; k < vm.timeline.tracks.size(); ++k) {
    const auto& items = vm.timeline.tracks[k].items;
    std::set<uint32_t> kept(raw.items[k].begin(), raw.items[k].end());
    for (uint32_t i = 0; i < items.size(); ++i) {
      const bool starts_inside = items[i].start >= raw.start && items[i].start < raw.end;
      const bool open_at_start = items[i].start < raw.start && items[i].end > raw.start;
      EXPECT_EQ(kept.count(i) == 1, starts_inside || open_at_start);
      open += open_at_start, inside += starts_inside;
    }
  }
  EXPECT_EQ(raw.events, open + inside);
  EXPECT_EQ(inside, 5000 - open);  // the window ends at the first event past the budget
}

TRACEDOC_TEST_LABELS(ViewSamples, corpus);

// CPU samples on the page: every sample in its thread's lane (each sampled thread has a track), the
// embedded ones in time order with their stacks equal to the model's, their GPU-idle flags those of
// gpu_idle_samples; a budget keeps the first samples and ends the window there.
TEST(ViewSamples, LanesCountEverySampleAndStacksMatchTheModel) {
  const char* kSampled = "traces/nsys/ai-profiler/baseline_nvtx.sqlite";
  REQUIRE_SHARED(kSampled);
  const Trace& t = testing::load_nsys((shared_dir() / kSampled).string());
  view::ViewOptions o;
  o.findings = false;
  const view::ViewModel vm = view::build_view(t, o);
  const view::SampleView& s = vm.samples;
  ASSERT_EQ(s.total, static_cast<int64_t>(t.cpu_samples.size()));
  EXPECT_EQ(s.total, 16150);
  std::set<int64_t> sampled(t.cpu_samples.global_tid.begin(), t.cpu_samples.global_tid.end());
  EXPECT_EQ(s.lanes.size(), sampled.size());
  int64_t in_lanes = 0;
  for (const view::SampleLane& lane : s.lanes) {
    EXPECT_EQ(vm.timeline.tracks[lane.track].kind, view::TrackKind::kCpuThread);
    int64_t n = 0;
    for (uint32_t c : lane.count) n += c;
    EXPECT_EQ(n, lane.samples);
    EXPECT_TRUE(std::is_sorted(lane.bucket.begin(), lane.bucket.end()));
    in_lanes += n;
  }
  EXPECT_EQ(in_lanes, s.total);
  ASSERT_TRUE(s.complete);
  ASSERT_EQ(static_cast<int64_t>(s.time.size()), s.total);
  EXPECT_TRUE(std::is_sorted(s.time.begin(), s.time.end()));
  // Each embedded stack names the model's functions, innermost first (samples are in time order,
  // as the model's are).
  const std::vector<uint8_t> idle = gpu_idle_samples(t);
  int64_t idle_count = 0;
  for (size_t i = 0; i < s.time.size(); ++i) {
    ASSERT_EQ(s.time[i], t.cpu_samples.time[i]);
    idle_count += s.gpu_idle[i];
    EXPECT_EQ(s.gpu_idle[i], idle[i]);
    const auto frames = t.stacks.stack(t.cpu_samples.stack[i]);
    if (frames.empty()) {
      EXPECT_EQ(s.stack[i], view::SampleView::kNoEmbeddedStack);
      continue;
    }
    const uint32_t st = s.stack[i];
    ASSERT_EQ(s.stack_offsets[st + 1] - s.stack_offsets[st], frames.size());
    for (size_t k = 0; k < frames.size(); ++k) {
      const uint32_t fn = s.stack_functions[s.stack_offsets[st] + k];
      EXPECT_EQ(s.strings[s.function_name[fn]], t.str(t.stacks.frame(frames[k]).symbol));
    }
  }
  EXPECT_EQ(idle_count, 154);  // cpu_sample_class_sum:during=gpu-idle
  o.lod.max_samples = 1000;
  const view::ViewModel few = view::build_view(t, o);
  EXPECT_FALSE(few.samples.complete);
  ASSERT_EQ(few.samples.time.size(), 1000u);
  EXPECT_EQ(few.samples.end, few.samples.time.back());
  EXPECT_EQ(few.samples.total, 16150);
}

TRACEDOC_TEST_LABELS(ViewWriters, corpus);

// Names from a trace are untrusted: in the page they are JSON text that cannot close the script
// element; in the SVG they are escaped XML text.
TEST(ViewWriters, HostileNamesStayText) {
  auto t = read_kineto_bytes(R"J({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 100, "dur": 5, "args": {"correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "</script><img src=x onerror=alert(2)>", "pid": 0, "tid": 7, "ts": 110, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10, "ts": 140, "dur": 5, "args": {"correlation": 2}},
    {"ph": "X", "cat": "kernel", "name": "\"quoted' & <b>bold</b> \u2028", "pid": 0, "tid": 7, "ts": 150, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 2}}
  ]})J",
                             "hostile.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  const view::ViewModel vm = view::build_view(*t, view::ViewOptions{});
  const std::string html = render_view_html(*t, vm);
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);  // the data element and the viewer, nothing from the trace
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_NE(html.find(R"(\u003c/script\u003e\u003cimg src=x onerror=alert(2)\u003e)"), std::string::npos);
  EXPECT_NE(html.find(R"(\"quoted' \u0026 \u003cb\u003ebold\u003c/b\u003e \u2028)"), std::string::npos);
  const std::string svg = render_timeline_svg(vm, SvgOptions{});
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  EXPECT_EQ(svg.find("</script>"), std::string::npos);
}

TEST(ViewWriters, Base64) {
  EXPECT_EQ(base64_encode("", 0), "");
  EXPECT_EQ(base64_encode("f", 1), "Zg==");
  EXPECT_EQ(base64_encode("fo", 2), "Zm8=");
  EXPECT_EQ(base64_encode("foo", 3), "Zm9v");
  EXPECT_EQ(base64_encode("foobar", 6), "Zm9vYmFy");
}

// The SVG of a window draws the same rows as the page, one rectangle per event wider than a pixel
// and one per run of narrower ones.
TEST(ViewWriters, SvgOfAWindow) {
  REQUIRE_SHARED(kMfu);
  const Trace& t = testing::load_nsys((shared_dir() / kMfu).string());
  const view::ViewModel vm = view::build_view(t, critical_options());
  SvgOptions o;
  o.start = vm.timeline.start + 100'000'000;
  o.end = vm.timeline.start + 110'000'000;
  const std::string svg = render_timeline_svg(vm, o);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1600\"", 0), 0u);
  EXPECT_NE(svg.find("100 ms"), std::string::npos);
  EXPECT_NE(svg.find("kernel on the critical path"), std::string::npos);
  EXPECT_NE(svg.find(">GPU 1 stream 15<"), std::string::npos);
  size_t rects = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++rects;
  EXPECT_GT(rects, 100u);
  EXPECT_LT(rects, 20000u);
}

}  // namespace
}  // namespace tracedoc
