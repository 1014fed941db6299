// Tests of the PyTorch operator links (analysis/pytorch/op_links) and the op_sum / step_sum reports:
// unit tests on small hand-built traces with exact expected values, then golden CSVs of real traces
// (tests/golden/pytorch, rewritten by regenerate.sh) whose cells were checked independently.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/pytorch/dispatch_overhead.h"
#include "analysis/pytorch/op_links.h"
#include "analysis/pytorch/pytorch_reports.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using pytorch::GpuKind;
using pytorch::kNoRow;

constexpr int64_t kPid = 100;
int64_t tid(int64_t t, int64_t pid = kPid) { return make_global_tid(0, pid, t); }

// Builds small traces row by row.
struct TraceBuilder {
  Trace trace;
  explicit TraceBuilder(int era = 5) {
    trace.source.path = "test.json";
    trace.source.format = "kineto-json";
    trace.pytorch.era = era;
  }
  uint32_t op(const std::string& name, TimeNs start, TimeNs end, int64_t gtid = tid(1), const std::string& dims = "") {
    auto& o = trace.pytorch.ops;
    o.start.push_back(start);
    o.end.push_back(end);
    o.global_tid.push_back(gtid);
    o.name.push_back(trace.strings.intern(name));
    o.external_id.push_back(kNoValue);
    o.sequence_number.push_back(kNoValue);
    o.fwd_thread_id.push_back(kNoValue);
    o.input_dims.push_back(dims.empty() ? kNoStr : trace.strings.intern(dims));
    o.input_types.push_back(kNoStr), o.concrete_inputs.push_back(kNoStr), o.flops.push_back(kNoValue);
    return static_cast<uint32_t>(o.size() - 1);
  }
  uint32_t call(TimeNs start, TimeNs end, int64_t correlation, int64_t gtid = tid(1),
                const std::string& name = "cudaLaunchKernel") {
    auto& a = trace.api;
    a.start.push_back(start);
    a.end.push_back(end);
    a.global_tid.push_back(gtid);
    a.correlation.push_back(correlation);
    a.return_value.push_back(0);
    a.name.push_back(trace.strings.intern(name));
    a.api_class.push_back(static_cast<uint8_t>(ApiClass::kCudaRuntime));
    return static_cast<uint32_t>(a.size() - 1);
  }
  uint32_t kernel(TimeNs start, TimeNs end, int64_t correlation, int64_t pid = kPid) {
    auto& k = trace.kernels;
    k.start.push_back(start);
    k.end.push_back(end);
    k.global_pid.push_back(make_global_tid(0, pid, 0));
    k.correlation.push_back(correlation);
    for (auto* c : {&k.device, &k.context, &k.stream, &k.grid_x, &k.grid_y, &k.grid_z, &k.block_x, &k.block_y,
                    &k.block_z, &k.registers_per_thread, &k.static_smem, &k.dynamic_smem}) {
      c->push_back(0);
    }
    k.green_context.push_back(kNoGreen);
    for (auto* c : {&k.name, &k.short_name, &k.mangled_name}) c->push_back(trace.strings.intern("k"));
    k.graph_node_id.push_back(kNoValue);
    return static_cast<uint32_t>(k.size() - 1);
  }
  uint32_t memcpy(TimeNs start, TimeNs end, int64_t correlation) {
    auto& m = trace.memcpys;
    m.start.push_back(start);
    m.end.push_back(end);
    m.global_pid.push_back(make_global_tid(0, kPid, 0));
    m.correlation.push_back(correlation);
    m.bytes.push_back(8);
    for (auto* c : {&m.device, &m.context, &m.green_context, &m.stream, &m.src_device, &m.dst_device}) c->push_back(0);
    for (auto* c : {&m.copy_kind, &m.src_kind, &m.dst_kind}) c->push_back(1);
    return static_cast<uint32_t>(m.size() - 1);
  }
  // A user_annotation range; ProfilerStep#N ones are also listed as steps (the reader does both).
  uint32_t range(const std::string& text, TimeNs start, TimeNs end, int64_t gtid = tid(1)) {
    auto& r = trace.ranges;
    r.start.push_back(start);
    r.end.push_back(end);
    r.global_tid.push_back(gtid);
    r.end_global_tid.push_back(kNoValue);
    r.kind.push_back(static_cast<uint16_t>(RangeKind::kNvtxPushPop));
    r.text.push_back(trace.strings.intern(text));
    r.domain_id.push_back(kNoValue);
    r.range_id.push_back(kNoValue);
    r.row_id.push_back(static_cast<int64_t>(r.size()));
    const auto row = static_cast<uint32_t>(r.size() - 1);
    if (text.rfind("ProfilerStep#", 0) == 0) trace.pytorch.steps.push_back(row);
    return row;
  }
};

// The report's CSV (as `tracedoc stats -f csv` prints it), "SKIPPED" when it reports NoData.
std::string csv(const Trace& trace, const std::string& report) { return report_csv(trace, report).value_or("SKIPPED"); }

std::string lines(std::initializer_list<const char*> rows) {
  std::string out;
  for (const char* r : rows) out += std::string(r) + "\n";
  return out;
}

// ---- Links -----------------------------------------------------------------------------------------

// Thread 1: a [0,100] holds b [10,40] and c [50,90], c holds d [60,70]; e [100,120] starts where a
// ends (a sibling, not a child). Thread 2: f [20,30].
TraceBuilder nested_trace() {
  TraceBuilder b;
  b.op("aten::a", 0, 100);
  b.op("aten::b", 10, 40);
  b.op("aten::c", 50, 90);
  b.op("aten::d", 60, 70);
  b.op("aten::e", 100, 120);
  b.op("aten::f", 20, 30, tid(2));
  return b;
}

TRACEDOC_TEST_LABELS(PyTorchLinks, unit);

TEST(PyTorchLinks, NestsByContainmentPerThread) {
  const TraceBuilder b = nested_trace();
  const auto links = pytorch::link_ops(b.trace);
  EXPECT_EQ(links.parent, (std::vector<int32_t>{kNoRow, 0, 0, 2, kNoRow, kNoRow}));
  // a: 100 - (30 + 40); c: 40 - 10.
  EXPECT_EQ(links.cpu_self, (std::vector<int64_t>{30, 30, 30, 10, 20, 10}));
}

TEST(PyTorchLinks, MicrosecondEraToleratesChildEndingOneMicrosecondLate) {
  for (int era : {2, 5}) {
    TraceBuilder b(era);
    b.op("p", 1000, 5000);
    b.op("q", 2000, 6000);  // ends 1000 ns after p
    b.op("r", 1500, 1900);  // a second child of p: p's children now last longer than p
    b.op("v", 6000, 7000);  // starts where q ends: never nested
    b.op("x", 10000, 20000);
    b.op("y", 12000, 21001);  // ends 1001 ns after x: too late even for truncated µs
    const auto links = pytorch::link_ops(b.trace);
    SCOPED_TRACE("era " + std::to_string(era));
    if (era == 2) {
      EXPECT_EQ(links.parent, (std::vector<int32_t>{kNoRow, 0, 0, kNoRow, kNoRow, kNoRow}));
      EXPECT_EQ(links.cpu_self[0], 0);  // 4000 - (4000 + 400), clamped
    } else {
      EXPECT_EQ(links.parent, (std::vector<int32_t>{kNoRow, kNoRow, 0, kNoRow, kNoRow, kNoRow}));
      EXPECT_EQ(links.cpu_self[0], 3600);
    }
  }
}

TEST(PyTorchLinks, ApiCallsGoToTheInnermostOpHoldingTheirStart) {
  TraceBuilder b = nested_trace();
  b.call(15, 18, 10);          // in b
  b.call(45, 48, 11);          // in a, between b and c
  b.call(65, 66, 12);          // in d
  b.call(95, 96, 13);          // in a, after c
  b.call(0, 1, 14);            // at a's start
  b.call(150, 151, 15);        // after everything
  b.call(25, 26, 16, tid(2));  // in f
  b.call(25, 26, 17, tid(3));  // a thread without ops
  b.call(100, 101, 18);        // a's end is e's start: e is the latest to begin
  const auto links = pytorch::link_ops(b.trace);
  EXPECT_EQ(links.api_op, (std::vector<int32_t>{1, 0, 3, 0, 0, kNoRow, 5, kNoRow, 4}));
}

TEST(PyTorchLinks, GpuTimeAddsUpTheTree) {
  TraceBuilder b = nested_trace();
  b.call(15, 18, 10);
  b.call(45, 48, 11);
  b.call(65, 66, 12);
  b.kernel(1000, 1100, 10);  // b
  b.kernel(1200, 1250, 12);  // d
  b.memcpy(1300, 1310, 12);  // d (same call: a copy and a kernel)
  b.kernel(1400, 1430, 11);  // a
  b.kernel(1500, 1600, 99);  // no call with this correlation
  const auto links = pytorch::link_ops(b.trace);
  EXPECT_EQ(links.launches.of(GpuKind::kKernel, 3), kNoRow);
  EXPECT_EQ(links.launching_op(GpuKind::kMemcpy, 0), 3);
  EXPECT_EQ(links.gpu_self, (std::vector<int64_t>{30, 100, 0, 60, 0, 0}));
  EXPECT_EQ(links.gpu_total, (std::vector<int64_t>{190, 100, 60, 60, 0, 0}));
  EXPECT_EQ(links.kernels_self, (std::vector<int64_t>{1, 1, 0, 1, 0, 0}));

  // Self shares: 30/130 = 23.08 %, 20/130 = 15.38 %, 10/130 = 7.69 %; ties in self time by name.
  EXPECT_EQ(csv(b.trace, "op_sum"),
            lines({"CPU Time (%),CPU Total (ns),CPU Self (ns),Calls,GPU Total (ns),GPU Self (ns),Kernels,Operator",
                   "23.1,100,30,1,190,30,1,aten::a", "23.1,30,30,1,100,100,1,aten::b", "23.1,40,30,1,60,0,0,aten::c",
                   "15.4,20,20,1,0,0,0,aten::e", "7.7,10,10,1,60,60,1,aten::d", "7.7,10,10,1,0,0,0,aten::f"}));
}

TEST(PyTorchLinks, GraphLaunchFeedsManyKernelsToOneOp) {
  TraceBuilder b;
  b.op("aten::replay", 0, 100);
  b.call(10, 20, 7, tid(1), "cudaGraphLaunch");
  b.kernel(200, 210, 7);
  b.kernel(205, 230, 7);
  b.kernel(240, 250, 7);
  const auto links = pytorch::link_ops(b.trace);
  EXPECT_EQ(links.kernels_self[0], 3);
  EXPECT_EQ(links.gpu_self[0], 45);  // durations add up even where kernels overlap
}

TEST(PyTorchLinks, SharedCorrelationPrefersTheKernelsProcess) {
  TraceBuilder b;
  b.op("a", 0, 100, tid(1, 100));
  b.op("b", 0, 100, tid(1, 200));
  b.call(10, 20, 5, tid(1, 100));
  b.call(10, 20, 5, tid(1, 200));
  b.kernel(300, 310, 5, 200);
  b.kernel(300, 310, 5, 100);
  b.kernel(300, 310, 5, 300);  // no call in its process: the first call with the id
  const auto links = pytorch::link_ops(b.trace);
  EXPECT_EQ(links.launches.api[0], (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(links.launching_op(GpuKind::kKernel, 0), 1);
}

// ---- op_sum ----------------------------------------------------------------------------------------

// aten::x [0,100] holds aten::x [10,60] which holds aten::y [20,30]; another aten::x at [200,250].
TraceBuilder recursive_trace() {
  TraceBuilder b;
  b.op("aten::x", 0, 100, tid(1), "[[1]]");
  b.op("aten::x", 10, 60, tid(1), "[[2]]");
  b.op("aten::y", 20, 30, tid(1));
  b.op("aten::x", 200, 250, tid(1), "[[1]]");
  b.call(25, 26, 1);  // in y
  b.call(50, 51, 2);  // in the inner x
  b.call(210, 211, 3);
  b.kernel(1000, 1040, 1);
  b.kernel(1100, 1105, 2);
  b.kernel(1200, 1207, 3);
  return b;
}

TRACEDOC_TEST_LABELS(PyTorchOpSum, unit);

TEST(PyTorchOpSum, RecursiveOpCountsItsTotalsOnce) {
  const TraceBuilder b = recursive_trace();
  // aten::x: CPU total 100 + 50 (the inner call is inside the outer), self (100-50) + (50-10) + 50,
  // GPU total 45 (outer: 40 + 5) + 7, GPU self 5 + 7, two kernels of its own.
  EXPECT_EQ(csv(b.trace, "op_sum"),
            lines({"CPU Time (%),CPU Total (ns),CPU Self (ns),Calls,GPU Total (ns),GPU Self (ns),Kernels,Operator",
                   "93.3,150,140,3,52,12,2,aten::x", "6.7,10,10,1,40,40,1,aten::y"}));
}

TEST(PyTorchOpSum, ShapesSplitRowsByInputDims) {
  const TraceBuilder b = recursive_trace();
  // (x, [[2]]) is not inside another (x, [[2]]), so both rows count it in full.
  EXPECT_EQ(
      csv(b.trace, "op_sum:shapes"),
      lines({"CPU Time (%),CPU Total (ns),CPU Self (ns),Calls,GPU Total (ns),GPU Self (ns),Kernels,Input Dims,Operator",
             "66.7,150,100,2,52,7,1,[[1]],aten::x", "26.7,50,40,1,45,5,1,[[2]],aten::x",
             "6.7,10,10,1,40,40,1,,aten::y"}));
}

TEST(PyTorchOpSum, FilterNameKeepsMatchingRows) {
  const TraceBuilder b = recursive_trace();
  ReportArgs args;
  args.name_filter = *NamePattern::compile("y$");
  TableSink table;
  ASSERT_TRUE(pytorch::op_sum(b.trace, args, table).ok());
  ASSERT_EQ(table.row_count(), 1u);
  EXPECT_EQ(table.row_at(0)[0].d, 100.0);  // the share among the rows kept
}

TRACEDOC_TEST_LABELS(PyTorchReports, unit);

TEST(PyTorchReports, NoDataWithoutOpsOrSteps) {
  TraceBuilder b;
  ReportArgs args;
  TableSink table;
  Status st = pytorch::op_sum(b.trace, args, table);
  EXPECT_EQ(st.code(), ErrorCode::kNoData);
  EXPECT_EQ(st.message(), "test.json does not contain PyTorch operator data.");
  st = pytorch::step_sum(b.trace, args, table);
  EXPECT_EQ(st.code(), ErrorCode::kNoData);
  EXPECT_EQ(st.message(),
            "test.json does not contain ProfilerStep ranges, and no repeating kernel sequence was found.");
}

// ---- op_dispatch_sum -------------------------------------------------------------------------------

TRACEDOC_TEST_LABELS(PyTorchDispatch, corpus golden);

TEST(PyTorchDispatch, FrameworkTimeIsSelfTimeOutsideCudaCalls) {
  TraceBuilder b;
  // aten::linear [0,100] holds aten::addmm [20,80]. addmm makes a runtime call [30,50] with a
  // driver call [35,45] inside it (counted once) and a call [70,90] that runs past its end (clipped
  // to 80); linear makes a call [90,95] itself.
  b.op("aten::linear", 0, 100);
  b.op("aten::addmm", 20, 80);
  b.call(30, 50, 1);
  b.call(35, 45, 2, tid(1), "cuLaunchKernel");
  b.call(70, 90, 3);
  b.call(90, 95, 4);
  b.kernel(100, 160, 1);
  b.kernel(170, 180, 3);
  b.memcpy(200, 204, 4);
  // addmm: self 60, API 20 + 10 = 30, framework 30, GPU 60 + 10, 2 kernels.
  // linear: self 100 - 60 = 40, API 5, framework 35, GPU 4 (a copy), no kernel.
  EXPECT_EQ(csv(b.trace, "op_dispatch_sum"),
            lines({"Framework Time (%),Framework Time (ns),Calls,CPU Self (ns),CUDA API (ns),GPU Self (ns),Kernels,"
                   "Framework/Kernel (ns),Operator",
                   "53.8,35,1,40,5,4,0,,aten::linear", "46.2,30,1,60,30,70,2,15.0,aten::addmm"}));
  const pytorch::DispatchOverhead d = pytorch::dispatch_overhead(b.trace, pytorch::link_ops(b.trace));
  EXPECT_EQ(d.framework, 65);
  EXPECT_EQ(d.api, 35);
  EXPECT_EQ(d.gpu_self, 74);
  EXPECT_EQ(d.kernels, 2);
  EXPECT_EQ(d.launching_framework, 65);  // both launched something
  EXPECT_EQ(d.launching_gpu, 74);
  TraceBuilder empty;
  EXPECT_EQ(csv(empty.trace, "op_dispatch_sum"), "SKIPPED");
}

// Every row of op_dispatch_sum on five traces (two eras, NVIDIA and AMD, a CUDA graph) against
// tests/kineto/dispatch_reference.py (tests/golden/pytorch/op_dispatch_sum.tsv).
TEST(PyTorchDispatch, MatchesIndependentReference) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const ReferenceTable ref =
      read_reference_tsv(fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "pytorch" / "op_dispatch_sum.tsv");
  ASSERT_EQ(ref.traces.size(), 5u) << "run tests/kineto/dispatch_reference.py";
  size_t compared = 0;
  for (const auto& [name, path] : ref.traces) {
    SCOPED_TRACE(name);
    const Trace& trace = load_kineto((shared / "traces" / path).string());
    std::map<std::string, std::vector<std::string>> mine;  // operator -> the report's cells
    for (const auto& row : parse_csv(report_csv(trace, "op_dispatch_sum").value())) mine[row.back()] = row;
    size_t rows = 0;
    for (const ReferenceRow& r : ref.rows) {
      if (r.at("trace") != name) continue;
      ++rows;
      const auto it = mine.find(r.at("operator"));
      ASSERT_NE(it, mine.end()) << r.at("operator");
      const std::vector<std::string>& c = it->second;
      EXPECT_EQ(c[1], r.at("framework_ns")) << r.at("operator");
      EXPECT_EQ(c[2], r.at("calls")) << r.at("operator");
      EXPECT_EQ(c[3], r.at("cpu_self_ns")) << r.at("operator");
      EXPECT_EQ(c[4], r.at("cuda_api_ns")) << r.at("operator");
      EXPECT_EQ(c[5], r.at("gpu_self_ns")) << r.at("operator");
      EXPECT_EQ(c[6], r.at("kernels")) << r.at("operator");
    }
    EXPECT_EQ(rows + 1, mine.size());  // + the header
    compared += rows;
  }
  EXPECT_EQ(compared, 245u);
}

// ---- step_sum --------------------------------------------------------------------------------------

TRACEDOC_TEST_LABELS(PyTorchStepSum, golden);

TEST(PyTorchStepSum, SpanAndBusyOfWhatEachStepLaunched) {
  TraceBuilder b;
  b.range("ProfilerStep#3", 0, 1000);
  b.range("forward", 100, 200);  // not a step
  b.range("ProfilerStep#4", 1000, 2000);
  b.range("ProfilerStep#5", 2000, 2500);
  b.call(100, 110, 1);               // step 3
  b.call(500, 510, 2, tid(2));       // step 3, another thread of the process
  b.call(600, 610, 3);               // step 3
  b.call(200, 210, 4, tid(1, 200));  // another process: no steps there
  b.call(1000, 1010, 5);             // on the boundary: the step that starts there
  b.call(1999, 2000, 6);             // step 4, its kernel runs after the step
  b.call(3000, 3010, 7);             // after every step
  b.kernel(300, 400, 1);
  b.kernel(350, 450, 2);  // overlaps the first: busy counts the union
  b.memcpy(600, 650, 3);
  b.kernel(100, 5000, 4, 200);
  b.kernel(1500, 1600, 5);
  b.kernel(2600, 2700, 6);
  b.kernel(3100, 3200, 7);
  b.trace.pytorch.rank = 2;  // a single file's rank (distributedInfo)
  EXPECT_EQ(csv(b.trace, "step_sum"),
            lines({"Rank,Step,CPU Start (ns),CPU Duration (ns),GPU Start (ns),GPU End (ns),GPU Span (ns),GPU Busy "
                   "(ns),Kernels,Name",
                   "2,3,0,1000,300,650,350,200,2,ProfilerStep#3", "2,4,1000,1000,1500,2700,1200,200,2,ProfilerStep#4",
                   "2,5,2000,500,,,,,0,ProfilerStep#5"}));
}

// ---- Golden CSVs of real traces --------------------------------------------------------------------

struct GoldenCase {
  const char* name;  // tests/golden/pytorch/<name>.<report>.csv
  const char* path;  // under ../shared/traces
};

// regenerate.sh lists the same files.
const GoldenCase kGoldenCases[] = {
    {"resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"},
    {"bert_small_h100", "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"},
    {"cnn_fastdata", "torch113-cpu/cnn_fastdata.json"},
};
const char* const kGoldenReports[] = {"op_sum", "op_sum:shapes", "step_sum"};

fs::path golden_file(const GoldenCase& c, const std::string& report) {
  std::string stem = report;
  std::replace(stem.begin(), stem.end(), ':', '_');
  return fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "pytorch" / (std::string(c.name) + "." + stem + ".csv");
}

TRACEDOC_TEST_LABELS(PyTorchGolden, corpus golden);

// Cells checked outside tracedoc, by a Python script over the raw JSON (json.load with Decimal floats,
// ts/dur * 1000 -> ns exactly; ops = cat Operator (E1) / cpu_op (E5) / every X event (legacy), the
// ProfilerStep#N events apart; nesting re-done per (pid, tid) with the 1 µs slack for integer-µs
// files, self time = duration - direct children found by pairwise containment; each GPU event joined
// to the runtime call with its args.correlation and that call to the latest-starting op holding its
// ts on its thread; step GPU cells from the runtime calls of the step's pid with ts in the step).
// All of them equal the goldens:
//   resnet50_e1 op_sum   aten::conv2d  Calls 318, CPU Total 77781000, CPU Self 7387000,
//                                      GPU Total 126619000, GPU Self 0, Kernels 0
//                        aten::cudnn_convolution  CPU Total 56998000, CPU Self 40119000,
//                                      GPU Self 126619000, Kernels 606
//                        aten::add_    Calls 2994, CPU Total 78125000, GPU Total 24098000, Kernels 2994
//   resnet50_e1 step_sum all six steps: CPU Start, CPU Duration, GPU Start, GPU End, Kernels (1462 each);
//                        ProfilerStep#5 GPU Busy 100629000 (interval union)
//   bert_small_h100 op_sum  aten::linear  Calls 26, CPU Total 1155770, CPU Self 178393, GPU Total 197598
//                           aten::addmm   CPU Self 753813, GPU Self 197598, Kernels 26
//   bert_small_h100 step_sum ProfilerStep#6: CPU Start 1419247332972313, CPU Duration 4426114,
//                           GPU Start 1419247333430849, GPU End 1419247337338674, Busy 309437, Kernels 60
//   cnn_fastdata op_sum  aten::conv2d  Calls 9, CPU Total 6237000, CPU Self 23000 (this file needs
//                        the 1 µs slack 13 times); aten::mm Calls 6, CPU Total 43000;
//                        aten::add_ Calls 93, CPU Total 143000
//   cnn_fastdata step_sum the three steps' CPU Start / Duration, no GPU cells (a CPU-only trace)
// Also: the GPU Self column sums to all GPU time of the trace on resnet50_e1 and bert_small_h100
// (every kernel, copy and memset is attributed to an op).
TEST(PyTorchGolden, MatchesCheckedOutput) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  for (const GoldenCase& c : kGoldenCases) {
    const fs::path input = shared / "traces" / c.path;
    if (!fs::exists(input)) {
      ADD_FAILURE() << "missing trace " << input;
      continue;
    }
    const Trace& trace = load_kineto(input.string());
    for (const char* report : kGoldenReports) {
      SCOPED_TRACE(std::string(c.name) + " " + report);
      const fs::path golden = golden_file(c, report);
      ASSERT_TRUE(fs::exists(golden)) << golden << " (run tests/golden/pytorch/regenerate.sh)";
      const std::string expected = read_file(golden);
      const auto actual = report_csv(trace, report);
      // An empty golden: the CLI printed nothing (NoData, SKIPPED on stderr).
      if (expected.empty()) {
        EXPECT_FALSE(actual.has_value() && !actual->empty()) << *actual;
        continue;
      }
      ASSERT_TRUE(actual.has_value()) << "NoData";
      std::string why;
      EXPECT_TRUE(csv_equal(expected, *actual, &why)) << why;
    }
  }
}

}  // namespace
}  // namespace tracedoc::testing
