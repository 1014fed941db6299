// The Kineto JSON writer: exact times, valid JSON for hostile names, and read -> write -> read of
// real PyTorch traces of every era and vendor giving the same reports, cell for cell.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "ingest/kineto_reader.h"
#include "report/kineto_json_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  // One folder per test process, removed at exit (ctest runs test processes in parallel).
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("tracedoc-kineto-writer-test-" + std::to_string(::getpid()));
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

TRACEDOC_TEST_LABELS(KinetoWriter, corpus);

TEST(KinetoWriter, TimesAreExactDecimalMicroseconds) {
  EXPECT_EQ(kineto_time(0), "0.000");
  EXPECT_EQ(kineto_time(999), "0.999");
  EXPECT_EQ(kineto_time(1000), "1.000");
  EXPECT_EQ(kineto_time(1419247333291708), "1419247333291.708");
  EXPECT_EQ(kineto_time(-1500), "-1.500");
  EXPECT_EQ(kineto_time(INT64_MAX), "9223372036854775.807");
  EXPECT_EQ(kineto_time(INT64_MIN), "-9223372036854775.808");
}

// A small trace with every table the writer handles, and names that need escaping.
Trace small_trace() {
  Trace t;
  t.source.format = "kineto-json";
  t.pytorch.base_time_ns = 1735689600000000000;
  t.pytorch.rank = 1;
  t.pytorch.world_size = 2;
  t.pytorch.backend = "nccl";
  const int64_t tid = make_global_tid(0, 77, 78);
  t.devices.push_back({0, t.strings.intern("NVIDIA A100-SXM4-80GB"), 108, 85899345920, 8, 0});
  t.processes.push_back({make_global_tid(0, 77, 0), 77, t.strings.intern("python3")});
  t.threads.push_back({tid, t.strings.intern("thread 78 (pt_main_thread)"), 0});
  auto& o = t.pytorch.ops;
  o.start = {1000000};
  o.end = {1050001};
  o.global_tid = {tid};
  o.name = {t.strings.intern("aten::\"weird\"\\name\n")};
  o.external_id = {5};
  o.sequence_number = {kNoValue};
  o.fwd_thread_id = {kNoValue};
  o.input_dims = {t.strings.intern("[[2, 3], []]")};
  o.input_types = {t.strings.intern("[\"float\", \"Scalar\"]")};
  o.concrete_inputs = {t.strings.intern("[\"\", \"2\"]")};
  o.flops = {24};
  auto& a = t.api;
  a.start = {1010000};
  a.end = {1015123};
  a.global_tid = {tid};
  a.correlation = {42};
  a.return_value = {0};
  a.name = {t.strings.intern("cudaLaunchKernel")};
  a.api_class = {0};
  auto& k = t.kernels;
  k.start = {1020000};
  k.end = {1020001};
  k.global_pid = {make_global_tid(0, 77, 0)};
  k.correlation = {42};
  k.device = {0};
  k.context = {1};
  k.green_context = {kNoGreen};
  k.stream = {7};
  k.name = k.mangled_name = {t.strings.intern("void k<4>(int)")};
  k.short_name = {t.strings.intern("k")};
  k.grid_x = {216};
  k.grid_y = {1};
  k.grid_z = {1};
  k.block_x = {96};
  k.block_y = {1};
  k.block_z = {1};
  k.registers_per_thread = {40};
  k.static_smem = {1024};
  k.dynamic_smem = {0};
  k.graph_node_id = {kNoValue};
  k.est_occupancy = {9.375};
  t.pytorch.allocator.time = {1016000};
  t.pytorch.allocator.global_tid = {tid};
  t.pytorch.allocator.address = {123456};
  t.pytorch.allocator.bytes = {512};
  t.pytorch.allocator.total_allocated = {1024};
  t.pytorch.allocator.total_reserved = {2097152};
  t.pytorch.allocator.device_type = {1};
  t.pytorch.allocator.device_id = {0};
  return t;
}

TEST(KinetoWriter, SmallTraceReadsBackTheSame) {
  const Trace t = small_trace();
  const std::string path = temp_path("small.json").string();
  ASSERT_TRUE(write_kineto_json(t, path).ok());
  auto back = read_kineto_trace(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  const Trace& b = *back;
  EXPECT_EQ(b.pytorch.era, 5);
  EXPECT_EQ(b.pytorch.base_time_ns, t.pytorch.base_time_ns);
  EXPECT_EQ(b.pytorch.rank, 1);
  EXPECT_EQ(b.pytorch.world_size, 2);
  EXPECT_EQ(b.pytorch.backend, "nccl");
  ASSERT_EQ(b.pytorch.ops.size(), 1u);
  EXPECT_EQ(b.str(b.pytorch.ops.name[0]), "aten::\"weird\"\\name\n");
  EXPECT_EQ(b.pytorch.ops.end[0], 1050001);
  EXPECT_EQ(b.str(b.pytorch.ops.input_dims[0]), "[[2, 3], []]");
  EXPECT_EQ(b.str(b.pytorch.ops.input_types[0]), "[\"float\", \"Scalar\"]");
  EXPECT_EQ(b.str(b.pytorch.ops.concrete_inputs[0]), "[\"\", \"2\"]");
  EXPECT_EQ(b.pytorch.ops.flops[0], 24);
  EXPECT_EQ(b.pytorch.ops.sequence_number[0], kNoValue);
  ASSERT_EQ(b.kernels.size(), 1u);
  EXPECT_EQ(b.kernels.end[0], 1020001);
  EXPECT_EQ(b.kernels.global_pid[0], make_global_tid(0, 77, 0));
  EXPECT_EQ(b.kernels.block_x[0], 96);
  EXPECT_EQ(b.kernels.est_occupancy[0], 9.375);
  EXPECT_EQ(b.str(b.kernels.short_name[0]), "k");
  ASSERT_EQ(b.api.size(), 1u);
  EXPECT_EQ(b.api.end[0], 1015123);
  ASSERT_EQ(b.pytorch.allocator.size(), 1u);
  EXPECT_EQ(b.pytorch.allocator.total_reserved[0], 2097152);
  ASSERT_EQ(b.threads.size(), 1u);
  EXPECT_EQ(b.str(b.threads[0].name), "thread 78 (pt_main_thread)");
  ASSERT_EQ(b.processes.size(), 1u);
  EXPECT_EQ(b.str(b.processes[0].name), "python3");
  ASSERT_EQ(b.devices.size(), 1u);
  EXPECT_EQ(b.devices[0].sm_count, 108);
  // The launch got its operator's External id, as Kineto links them.
  const std::string text = kineto_json(t);
  EXPECT_NE(text.find("\"cat\": \"kernel\", \"name\": \"void k<4>(int)\", \"pid\": 0, \"tid\": 7, \"ts\": 1020.000, "
                      "\"dur\": 0.001, \"args\": {\"External id\": 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"rank\": 1"), std::string::npos);  // HTA's rank regex wants the space
}

// An nsys export written as a Kineto trace: the CUDA activity and the NVTX push/pop ranges carry
// over (operators and allocator events have no nsys source; OS runtime calls, thread switches and
// NVTX domains have no Kineto category and are left out).
TEST(KinetoWriter, NsysExportConverts) {
  const Trace& original = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite").string());
  const std::string copy = temp_path("toy_training.json").string();
  ASSERT_TRUE(write_kineto_json(original, copy).ok());
  auto back = read_kineto_trace(copy);
  ASSERT_TRUE(back.ok()) << back.status().message();
  for (const std::string report : {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
                                   "cuda_api_sum", "cuda_gpu_trace", "cuda_kern_exec_sum", "nvtx_sum"}) {
    EXPECT_EQ(report_csv(original, report), report_csv(*back, report)) << report;
  }
}

// `export --to chrome` writes the diagnosis as annotations: one row per finding in a process of its
// own, an event per evidence range; reading the file back skips them, so every report, the
// diagnosis and the summary are those of the file written without them.
TEST(KinetoWriter, FindingsAreAnnotationsThatReadersSkip) {
  const Trace& original = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite").string());
  const diagnose::Diagnosis d = diagnose::diagnose(original, {});
  ASSERT_EQ(d.findings.size(), 6u);
  size_t events = 0;
  for (const diagnose::Finding& f : d.findings) events += std::max<size_t>(1, f.ranges.size());
  const std::string with = kineto_json(original, d.findings), without = kineto_json(original);
  size_t found = 0;
  for (size_t at = 0; (at = with.find("\"cat\": \"tracedoc_finding\"", at)) != std::string::npos; ++at) ++found;
  EXPECT_EQ(found, events);
  // The lanes: "tracedoc findings" on a pid of its own (the toy's process is 4242, its GPU 0), sorted first.
  EXPECT_NE(with.find("\"name\": \"process_name\", \"pid\": 4243, \"tid\": 0"), std::string::npos);
  EXPECT_NE(with.find("{\"name\": \"tracedoc findings\"}"), std::string::npos);
  EXPECT_NE(with.find("{\"sort_index\": -1}"), std::string::npos);
  EXPECT_NE(with.find("{\"name\": \"critical comb_pattern [pid 4242 GPU 0 (NVIDIA A100-SXM4-80GB)]\"}"),
            std::string::npos);
  EXPECT_NE(
      with.find(
          "\"name\": \"comb_pattern: idle gap\", \"pid\": 4243, \"tid\": 1, \"ts\": 1270686.051, \"dur\": 20736.683"),
      std::string::npos);
  const std::string a = temp_path("with_findings.json").string(), b = temp_path("without_findings.json").string();
  ASSERT_TRUE(write_kineto_json(original, a, d.findings).ok());
  ASSERT_TRUE(write_kineto_json(original, b).ok());
  EXPECT_EQ(read_file(a), with);
  EXPECT_EQ(read_file(b), without);
  auto ta = read_kineto_trace(a), tb = read_kineto_trace(b);
  ASSERT_TRUE(ta.ok() && tb.ok());
  for (const std::string report : {"cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum", "cuda_gpu_trace", "step_sum"}) {
    EXPECT_EQ(report_csv(*ta, report), report_csv(*tb, report)) << report;
  }
  const diagnose::Diagnosis da = diagnose::diagnose(*ta, {}), db = diagnose::diagnose(*tb, {});
  ASSERT_EQ(da.findings.size(), db.findings.size());
  // The original's findings but host_waits: the Chrome format has no OS runtime calls to carry.
  std::vector<std::string> expected;
  for (const diagnose::Finding& f : d.findings) {
    if (f.id != "host_waits") expected.push_back(f.id);
  }
  ASSERT_EQ(da.findings.size(), expected.size());
  for (size_t i = 0; i < da.findings.size(); ++i) {
    EXPECT_EQ(da.findings[i].title, db.findings[i].title);
    EXPECT_EQ(da.findings[i].id, expected[i]);
  }
}

// The reports compared after a round trip: every report that reads what a PyTorch trace holds.
//
// Result on the traces below: every CSV is byte-identical, for every era. What makes that so, and
// what would otherwise differ:
//  - Era. The copy says era 5 whatever the original's era, so an integer-µs trace (E1-E3) is read
//    back without the 1 µs nesting slack op_links gives those eras, and the 2021 (E1) specifics of
//    tb_overview no longer apply. No cell of these traces depends on it: their operators nest
//    without overhang, and the plugin figures come out the same.
//  - Ties. cuda_api_sum orders calls with equal totals by name id (first-seen order). Written table
//    after table, the HTA trace_diff control trace (integer µs, many equal totals) read back with
//    `INVALID` and `cudaDeviceGetAttribute` (20000 ns each) swapped; the writer therefore writes
//    each call name's first call in name-id order (kineto_json_writer.cpp, api_write_order).
const std::vector<std::string> kReports = {"cuda_gpu_kern_sum",
                                           "cuda_api_sum",
                                           "cuda_gpu_trace",
                                           "op_sum",
                                           "step_sum",
                                           "gpu_mem_sum",
                                           "nvtx_sum",
                                           "gpu_time_breakdown",
                                           "cuda_gpu_mem_time_sum",
                                           "cuda_gpu_mem_size_sum",
                                           "cuda_gpu_kern_gb_sum",
                                           "cuda_kern_exec_sum",
                                           "cuda_api_trace",
                                           "gpu_mem_step_sum",
                                           "gpu_mem_trace",
                                           "gpu_copy_sum",
                                           "tb_step_breakdown",
                                           "tb_gpu_metrics",
                                           "kernel_launch_stats",
                                           "comm_comp_overlap",
                                           "idle_time_breakdown",
                                           "kernel_type_breakdown",
                                           "queue_length_sum",
                                           "op_kernel_sum",
                                           "op_dispatch_sum",
                                           "nvtx_kern_sum",
                                           "nvtx_gpu_proj_sum"};

struct RoundTripCase {
  std::string trace;  // under shared/traces
};

class KinetoRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TRACEDOC_TEST_LABELS(KinetoRoundTrip, corpus);

TEST_P(KinetoRoundTrip, ReportsAreIdentical) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared not found: round trips of real traces skipped";
  const fs::path source = shared_dir() / "traces" / GetParam().trace;
  if (!fs::exists(source)) GTEST_SKIP() << source << " not found";
  const Trace& original = load_kineto(source.string());
  const std::string copy = temp_path(trace_test_name(GetParam().trace) + ".json").string();
  ASSERT_TRUE(write_kineto_json(original, copy).ok());
  auto back = read_kineto_trace(copy);
  ASSERT_TRUE(back.ok()) << back.status().message();
  int with_rows = 0;
  for (const auto& report : kReports) {
    const auto a = report_csv(original, report), b = report_csv(*back, report);
    ASSERT_EQ(a.has_value(), b.has_value()) << report;
    if (!a) continue;
    with_rows += !a->empty();
    std::string why;
    EXPECT_TRUE(*a == *b) << report << " differs: " << (csv_equal(*a, *b, &why) ? "numbers print differently" : why);
  }
  EXPECT_GE(with_rows, 20);  // the comparison is not vacuous: most reports have rows on every trace
}

TEST(KinetoWriter, PythonFunctionsRoundTrip) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared not found";
  const fs::path source =
      shared_dir() / "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";
  if (!fs::exists(source)) GTEST_SKIP() << source << " not found";
  KinetoReadOptions with_python;
  with_python.python_functions = true;
  auto original = read_kineto_trace(source.string(), with_python);
  ASSERT_TRUE(original.ok());
  ASSERT_GT(original->pytorch.python_functions.size(), 1000u);
  const std::string copy = temp_path("python_functions.json").string();
  ASSERT_TRUE(write_kineto_json(*original, copy).ok());
  auto back = read_kineto_trace(copy, with_python);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(report_csv(*original, "python_func_sum"), report_csv(*back, "python_func_sum"));
  EXPECT_EQ(report_csv(*original, "op_sum"), report_csv(*back, "op_sum"));
}

const std::vector<RoundTripCase> kCases = {
    {"kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"},
    {"kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"},
    {"kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"},
    {"kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"},
    {"kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"},
    {"kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"},
    {"kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"},
    {"kineto/HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz"},
    {"kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz"},
    {"kineto/TraceLens/tests/traces/b200/eager_trace.json.gz"},
    {"kineto/TraceLens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"},
    {"kineto/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz"},
};

INSTANTIATE_TEST_SUITE_P(Shared, KinetoRoundTrip, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return trace_test_name(info.param.trace); });

}  // namespace
}  // namespace tracedoc::testing
