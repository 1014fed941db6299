// Tests of the operator -> kernel report (src/analysis/pytorch/op_kernel_sum.h): hand-built traces
// whose every cell is worked out in the comments, then real traces against the table that
// tests/kineto/op_kernel_reference.py computes from the raw JSON (tests/golden/pytorch/op_kernel_sum.tsv).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/pytorch/op_kernel_sum.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kPid = 100;
int64_t tid(int64_t t) { return make_global_tid(0, kPid, t); }

struct Builder {
  Trace trace;
  Builder() {
    trace.source.path = "test.json";
    trace.source.format = "kineto-json";
    trace.pytorch.era = 5;
  }
  void thread(int64_t gtid, const std::string& name = "") {
    trace.threads.push_back({gtid, name.empty() ? kNoStr : trace.strings.intern(name), 0});
  }
  void op(const std::string& name, TimeNs start, TimeNs end, int64_t gtid = tid(1), int64_t fwd_thread = kNoValue) {
    auto& o = trace.pytorch.ops;
    o.start.push_back(start), o.end.push_back(end), o.global_tid.push_back(gtid);
    o.name.push_back(trace.strings.intern(name));
    o.external_id.push_back(kNoValue), o.sequence_number.push_back(kNoValue), o.fwd_thread_id.push_back(fwd_thread);
    o.input_dims.push_back(kNoStr), o.input_types.push_back(kNoStr), o.concrete_inputs.push_back(kNoStr);
    o.flops.push_back(kNoValue);
  }
  void call(TimeNs start, TimeNs end, int64_t correlation, int64_t gtid = tid(1)) {
    auto& a = trace.api;
    a.start.push_back(start), a.end.push_back(end), a.global_tid.push_back(gtid), a.correlation.push_back(correlation);
    a.return_value.push_back(0), a.name.push_back(trace.strings.intern("cudaLaunchKernel"));
    a.api_class.push_back(static_cast<uint8_t>(ApiClass::kCudaRuntime));
  }
  void kernel(const std::string& name, TimeNs start, TimeNs end, int64_t correlation) {
    auto& k = trace.kernels;
    const StrId n = trace.strings.intern(name);
    k.start.push_back(start), k.end.push_back(end), k.global_pid.push_back(make_global_tid(0, kPid, 0));
    k.correlation.push_back(correlation);
    for (auto* c : {&k.device, &k.context, &k.stream, &k.grid_x, &k.grid_y, &k.grid_z, &k.block_x, &k.block_y,
                    &k.block_z, &k.registers_per_thread, &k.static_smem, &k.dynamic_smem}) {
      c->push_back(0);
    }
    k.green_context.push_back(kNoGreen);
    k.name.push_back(n), k.short_name.push_back(n), k.mangled_name.push_back(n);
    k.graph_node_id.push_back(kNoValue);
  }
};

std::string csv(const Trace& trace, const std::string& report) { return report_csv(trace, report).value_or("SKIPPED"); }

const char* const kHeader =
    "Time (%),Kernel Total (ns),Count,Kernel Avg (ns),Op To Launch Avg (ns),Op To Launch Min (ns),Op To Launch Max "
    "(ns),"
    "Launch To Kernel Avg (ns),Launch To Kernel Med (ns),Launch To Kernel Min (ns),Launch To Kernel Max (ns),Threads,"
    "Operator,Kernel\n";

// Thread 1: nn.Module [0,1000] > aten::linear [100,900] > aten::addmm [200,800] > custom [300,700].
// Call 1 [400,450] runs inside custom; its kernel starts at 500 (queue 50) and runs 100 ns.
// Call 2 [750,760] runs in aten::addmm after custom ended; its kernel started at 740, before the
// call returned: queue 0 (clipped), 50 ns long.
Builder nested() {
  Builder b;
  b.thread(tid(1), "thread 1 (python3)");
  b.op("nn.Module: Linear", 0, 1000);
  b.op("aten::linear", 100, 900);
  b.op("aten::addmm", 200, 800);
  b.op("custom::gemm", 300, 700);
  b.call(400, 450, 1);
  b.kernel("gemm", 500, 600, 1);
  b.call(750, 760, 2);
  b.kernel("gemm", 740, 790, 2);
  return b;
}

TRACEDOC_TEST_LABELS(OpKernelSum, golden);

TEST(OpKernelSum, InnermostOperatorLaunchedIt) {
  // Innermost: custom::gemm (op delay 400-300 = 100) and aten::addmm (750-200 = 550), one row each.
  EXPECT_EQ(csv(nested().trace, "op_kernel_sum"),
            std::string(kHeader) +
                "66.7,100,1,100.0,100.0,100,100,50.0,50.0,50,50,thread 1 (python3),custom::gemm,gemm\n"
                "33.3,50,1,50.0,550.0,550,550,0.0,0.0,0,0,thread 1 (python3),aten::addmm,gemm\n");
}

TEST(OpKernelSum, AtenViewTakesTheDeepestAtenOperator) {
  // Both launches belong to aten::addmm: op delays 200 and 550; queue 50 and 0 (median of two: 25).
  EXPECT_EQ(
      csv(nested().trace, "op_kernel_sum:aten"),
      std::string(kHeader) + "100.0,150,2,75.0,375.0,200,550,25.0,25.0,0,50,thread 1 (python3),aten::addmm,gemm\n");
}

TEST(OpKernelSum, TopViewTakesTheOutermostOperator) {
  EXPECT_EQ(csv(nested().trace, "op_kernel_sum:top"),
            std::string(kHeader) +
                "100.0,150,2,75.0,575.0,400,750,25.0,25.0,0,50,thread 1 (python3),nn.Module: Linear,gemm\n");
}

TEST(OpKernelSum, OperatorMustBeOnTheCallersThread) {
  // The autograd thread launches while the main thread's aten::mm is running: HTA would charge
  // aten::mm (it checks time only); here the call has no operator on its own thread.
  Builder b;
  b.thread(tid(1), "thread 1 (python3)");
  b.thread(tid(2), "thread 2 (pt_autograd_0)");
  b.op("aten::mm", 0, 1000, tid(1));
  b.call(100, 110, 7, tid(2));
  b.kernel("k", 200, 300, 7);
  EXPECT_EQ(csv(b.trace, "op_kernel_sum:aten"),
            std::string(kHeader) + "100.0,100,1,100.0,,,,90.0,90.0,90,90,thread 2 (pt_autograd_0) [autograd],,k\n");
}

TEST(OpKernelSum, AutogradThreadsByNameOrByBackwardRoots) {
  Builder b;
  b.thread(tid(1), "thread 1 (python)");
  b.thread(tid(2), "thread 2 (python)");
  b.thread(tid(3));
  // Thread 1 runs forward roots (Fwd thread id 0), thread 2 backward ones (> 0), thread 3 one of
  // each: only thread 2 is the autograd thread (a tie is not a majority).
  b.op("aten::add", 0, 100, tid(1), 0);
  b.op("AddBackward0", 0, 100, tid(2), 1);
  b.op("aten::mul", 0, 100, tid(3), 0);
  b.op("MulBackward0", 200, 300, tid(3), 1);
  b.call(10, 20, 1, tid(1));
  b.kernel("k", 30, 40, 1);
  b.call(10, 20, 2, tid(2));
  b.kernel("k", 30, 40, 2);
  b.call(210, 220, 3, tid(3));
  b.kernel("k", 230, 240, 3);
  const pytorch::OpLinks links = pytorch::link_ops(b.trace);
  EXPECT_EQ(pytorch::autograd_threads(b.trace, links), (std::vector<uint8_t>{0, 1, 0}));
  const std::string out = csv(b.trace, "op_kernel_sum");
  EXPECT_NE(out.find(",thread 2 (python) [autograd],AddBackward0,k\n"), std::string::npos) << out;
  EXPECT_NE(out.find(",tid 3,MulBackward0,k\n"), std::string::npos) << out;
}

TEST(OpKernelSum, GraphLaunchCountsEveryKernelAndMedianOfFour) {
  // One call [0,10] in aten::graph_replay [0,100] runs four kernels: queue 0 (clipped), 10, 30, 90.
  Builder b;
  b.thread(tid(1));
  b.op("aten::graph_replay", 0, 100);
  b.call(0, 10, 5);
  for (TimeNs s : {5, 20, 40, 100}) b.kernel("k", s, s + 10, 5);
  b.kernel("orphan", 500, 600, 99);  // no call with this id: left out
  EXPECT_EQ(csv(b.trace, "op_kernel_sum"),
            std::string(kHeader) + "100.0,40,4,10.0,0.0,0,0,32.5,20.0,0,90,tid 1,aten::graph_replay,k\n");
}

TEST(OpKernelSum, TiesSortByOperatorThenKernelAndFilterKeepsEitherName) {
  Builder b;
  b.thread(tid(1));
  b.op("aten::b", 0, 100);
  b.op("aten::a", 200, 300);
  b.call(10, 11, 1);
  b.kernel("y", 20, 30, 1);
  b.call(12, 13, 2);
  b.kernel("x", 40, 50, 2);
  b.call(210, 211, 3);
  b.kernel("z", 220, 230, 3);
  const auto rows = parse_csv(csv(b.trace, "op_kernel_sum"));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[1][12] + "/" + rows[1][13], "aten::a/z");
  EXPECT_EQ(rows[2][12] + "/" + rows[2][13], "aten::b/x");
  EXPECT_EQ(rows[3][12] + "/" + rows[3][13], "aten::b/y");

  const auto* def = find_report("op_kernel_sum");
  ASSERT_NE(def, nullptr);
  ReportArgs args;
  args.name_filter = *NamePattern::compile("^(x|aten::a)$");
  TableSink table;
  ASSERT_TRUE(def->run(b.trace, args, table).ok());
  ASSERT_EQ(table.row_count(), 2u);  // aten::a/z by its operator, aten::b/x by its kernel
  EXPECT_EQ(table.row_at(0)[0].d, 50.0);
}

TEST(OpKernelSum, NoDataAndBadArguments) {
  Builder empty;
  EXPECT_EQ(csv(empty.trace, "op_kernel_sum"), "SKIPPED");
  Builder b = nested();
  EXPECT_THROW(csv(b.trace, "op_kernel_sum:deepest"), std::runtime_error);
  EXPECT_THROW(csv(b.trace, "op_kernel_sum:aten:top"), std::runtime_error);
}

// ---- Real traces against tests/kineto/op_kernel_reference.py ----------------------------------------

using RefRow = ReferenceRow;

// trace name -> (path under shared/traces, rows per view in the script's order)
struct RefTrace {
  std::string path;
  std::map<std::string, std::vector<RefRow>> views;
};

std::map<std::string, RefTrace> load_reference() {
  const ReferenceTable table =
      read_reference_tsv(fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "pytorch" / "op_kernel_sum.tsv");
  std::map<std::string, RefTrace> out;
  for (const auto& [name, path] : table.traces) out[name].path = path;
  for (const RefRow& r : table.rows) out[r.at("trace")].views[r.at("view")].push_back(r);
  return out;
}

// An average or percentage cell (rounded to 0.1 by the report) against the exact quotient.
void expect_rounded(const Cell& c, double exact, const std::string& what) {
  ASSERT_EQ(c.type, Cell::Type::kReal) << what;
  EXPECT_LE(std::fabs(c.d - exact), 0.05 + 1e-9 * std::fabs(exact)) << what << ": " << c.d << " vs " << exact;
}

TRACEDOC_TEST_LABELS(OpKernelSumGolden, corpus golden);

TEST(OpKernelSumGolden, MatchesIndependentReference) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const auto reference = load_reference();
  ASSERT_GE(reference.size(), 5u) << "tests/golden/pytorch/op_kernel_sum.tsv: run tests/kineto/op_kernel_reference.py";
  const auto* def = find_report("op_kernel_sum");
  ASSERT_NE(def, nullptr);
  for (const auto& [name, ref] : reference) {
    const fs::path input = shared / "traces" / ref.path;
    if (!fs::exists(input)) {
      ADD_FAILURE() << "missing trace " << input;
      continue;
    }
    const Trace& trace = load_kineto(input.string());
    ASSERT_EQ(ref.views.size(), 3u) << name;
    for (const auto& [view, rows] : ref.views) {
      SCOPED_TRACE(name + " " + view);
      ReportArgs args;
      if (view != "innermost") args.args.push_back(view);
      TableSink table;
      ASSERT_TRUE(def->run(trace, args, table).ok());
      ASSERT_EQ(table.row_count(), rows.size());
      int64_t grand = 0;
      for (const RefRow& r : rows) grand += r.num("kernel_total_ns");
      for (size_t i = 0; i < rows.size(); ++i) {
        const RefRow& r = rows[i];
        const auto c = table.row_at(i);  // same order: kernel time descending, then names
        const std::string what = r.at("operator") + " / " + r.at("kernel");
        const bool no_op = r.at("operator") == "\\N";
        EXPECT_EQ(c[12].is_null() ? "\\N" : std::string(c[12].s), r.at("operator")) << i;
        EXPECT_EQ(std::string(c[13].s), r.at("kernel")) << i;
        const int64_t count = r.num("count"), total = r.num("kernel_total_ns");
        expect_rounded(c[0], static_cast<double>(total) * 100.0 / static_cast<double>(grand), what + " Time (%)");
        EXPECT_EQ(c[1].i, total) << what;
        EXPECT_EQ(c[2].i, count) << what;
        expect_rounded(c[3], static_cast<double>(total) / static_cast<double>(count), what + " Kernel Avg");
        if (no_op) {
          EXPECT_TRUE(c[4].is_null() && c[5].is_null() && c[6].is_null()) << what;
        } else {
          ASSERT_EQ(r.num("op_delays"), count) << what;
          expect_rounded(c[4], static_cast<double>(r.num("op_delay_sum_ns")) / static_cast<double>(count),
                         what + " Op To Launch Avg");
          EXPECT_EQ(c[5].i, r.num("op_delay_min_ns")) << what;
          EXPECT_EQ(c[6].i, r.num("op_delay_max_ns")) << what;
        }
        expect_rounded(c[7], static_cast<double>(r.num("queue_sum_ns")) / static_cast<double>(count),
                       what + " Launch To Kernel Avg");
        EXPECT_EQ(c[8].d, std::stod(r.at("queue_med_ns"))) << what;  // n or n.5: exact in a double
        EXPECT_EQ(c[9].i, r.num("queue_min_ns")) << what;
        EXPECT_EQ(c[10].i, r.num("queue_max_ns")) << what;
        EXPECT_EQ(std::string(c[11].s), r.at("threads")) << what;
      }
    }
  }
}

// ---- HTA's get_aten_op_kernels_and_delay (tests/kineto/hta_op_kernels_reference.py) -----------------

// HTA's kernels per (aten op, kernel) and, per trace, whether HTA produced a table at all.
struct HtaReference {
  std::map<std::string, std::string> path;  // trace name -> path under shared/traces
  std::map<std::string, std::map<std::pair<std::string, std::string>, int64_t>> counts;
  std::set<std::string> failed;
};

HtaReference load_hta_reference() {
  HtaReference out;
  const fs::path file = fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "hta" / "aten_op_kernels.tsv";
  bool header = false;
  for (const std::string& line : split(read_file(file), '\n')) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (const size_t eq = line.find(" = "); eq != std::string::npos)
        out.path[line.substr(2, eq - 2)] = line.substr(eq + 3);
      if (const size_t f = line.find(": HTA fails"); f != std::string::npos) out.failed.insert(line.substr(2, f - 2));
      continue;
    }
    if (!header) {
      header = true;
      continue;
    }
    const std::vector<std::string> c = split(line, '\t');
    out.counts[c.at(0)][{c.at(1), c.at(2)}] = std::stoll(c.at(3));
  }
  return out;
}

// The `:aten` attribution restricted to what HTA looks at: calls named like its launch pattern,
// launched before the last ProfilerStep when there are two or more (HTA drops that step).
std::map<std::pair<std::string, std::string>, int64_t> aten_counts_on_htas_inputs(const Trace& trace) {
  const pytorch::OpLinks links = pytorch::link_ops(trace);
  const std::vector<int32_t> aten = pytorch::charged_operator(trace, links, pytorch::OpView::kAten);
  TimeNs last_step = kNoTime;
  if (trace.pytorch.steps.size() >= 2) {
    for (uint32_t s : trace.pytorch.steps) last_step = std::max(last_step, trace.ranges.start[s]);
  }
  const std::regex launch("^(cuda.*LaunchKernel|cuLaunchKernel|runFunction)");
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (size_t k = 0; k < trace.kernels.size(); ++k) {
    const int32_t a = links.launches.of(pytorch::GpuKind::kKernel, k);
    if (a == pytorch::kNoRow || links.api_op[a] == pytorch::kNoRow) continue;
    if (last_step != kNoTime && trace.api.start[a] >= last_step) continue;
    const std::string call(trace.str(trace.api.name[a]));
    if (!std::regex_search(call, launch)) continue;
    const int32_t op = aten[links.api_op[a]];
    if (op == pytorch::kNoRow) continue;
    ++counts[{std::string(trace.str(trace.pytorch.ops.name[op])), std::string(trace.str(trace.kernels.name[k]))}];
  }
  return counts;
}

TRACEDOC_TEST_LABELS(OpKernelSumHta, corpus golden);

TEST(OpKernelSumHta, AtenCountsEqualHtasOnItsInputs) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const HtaReference ref = load_hta_reference();
  ASSERT_GE(ref.counts.size(), 3u)
      << "tests/golden/hta/aten_op_kernels.tsv: run tests/kineto/hta_op_kernels_reference.py";
  for (const auto& [name, path] : ref.path) {
    SCOPED_TRACE(name);
    const fs::path input = shared / "traces" / path;
    if (!fs::exists(input)) {
      ADD_FAILURE() << "missing trace " << input;
      continue;
    }
    const Trace& trace = load_kineto(input.string());
    const auto ours = aten_counts_on_htas_inputs(trace);
    if (ref.failed.count(name)) {
      // HTA found no launch of its kinds with an aten op and raised; the report still has rows.
      EXPECT_TRUE(ours.empty());
      EXPECT_TRUE(report_csv(trace, "op_kernel_sum:aten").has_value());
      continue;
    }
    const auto it = ref.counts.find(name);
    ASSERT_NE(it, ref.counts.end());
    EXPECT_EQ(ours.size(), it->second.size());
    for (const auto& [key, n] : it->second) {
      const auto mine = ours.find(key);
      EXPECT_EQ(mine == ours.end() ? 0 : mine->second, n) << key.first << " / " << key.second;
    }
  }
}

}  // namespace
}  // namespace tracedoc::testing
