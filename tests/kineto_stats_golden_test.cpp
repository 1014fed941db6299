// Golden tests of the nsys-compatible reports on PyTorch (Kineto) traces: for six real traces and
// ten reports, the CSV that tracedoc computes must equal tests/golden/kineto_stats/<name>.<report>.csv
// (same header, row order and cells; numbers equal after parsing, as the nsys oracle tests compare).
//
// The goldens were written by the built tracedoc (tests/golden/kineto_stats/regenerate.sh) and then
// checked independently of it: verify.py in that directory recomputes their cells from the raw JSON
// with Python's standard library and exact Decimal arithmetic. What it checks (30,757 cells, all
// equal, no rounding ties met):
//   cuda_gpu_kern_sum, cuda_gpu_kern_gb_sum  per kernel name (and grid/block): Instances, Total, Min,
//                                            Max, Med, Avg, StdDev (sample), Time (%); the row set
//   cuda_gpu_mem_time_sum / _size_sum        per memcpy direction and memset: the same cells, in ns
//                                            and in MB (10^6 B, 3 decimals)
//   cuda_api_sum                             per API name: the same cells
//   cuda_gpu_trace                           each row is one kernel/memcpy/memset (start, correlation,
//                                            name), in start order, with its duration, stream,
//                                            grid/block, bytes and nsys's integer throughput
//   cuda_kern_exec_sum                       per (API name, kernel name), kernels joined to their
//                                            launching call by correlation: Count, QCount, K/A Min/Max
//   nvtx_sum                                 per user_annotation name: the summary cells
//   nvtx_kern_sum, nvtx_gpu_proj_sum         nsys's join of kernels to the ranges holding their
//                                            launching call: instance counts, totals, projections
// Re-run `python3 tests/golden/kineto_stats/verify.py` after regenerating.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

struct TraceCase {
  const char* name;  // golden file prefix
  const char* path;  // under ../shared/traces
};

// One trace per format era and vendor (eras as in docs/kineto-trace-format.md §1.8); the same list
// as regenerate.sh and verify.py.
const TraceCase kCases[] = {
    // E1 (2021): capitalized categories, string tids, ProfilerStep#N as '#' Operator events.
    {"resnet50_e1", "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"},
    // E2 (2021-22): integer µs, DtoD / pinned / pageable copies, cudaGraphLaunch, 288 ranges.
    {"hta_diff_e2", "kineto/HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz"},
    // E3 (2023): ac2g flows, cuda_sync events (not in these reports), nested same-name ranges.
    {"alexnet_e3",
     "kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"},
    // E5 (2024+): fractional ns timestamps relative to baseTimeNanoseconds, NCCL kernels, _v2 API names.
    {"nccl_e5", "kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"},
    // AMD MI300 (ROCm): hip* API names, kernels with few args.
    {"bert_mi300", "kineto/TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"},
    // ROCm graph replay: one hipGraphLaunch correlation shared by 421 kernels without grid/block.
    {"vllm_graph", "kineto/TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz"},
};

const char* const kReports[] = {
    "cuda_gpu_kern_sum", "cuda_gpu_kern_gb_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum",
    "cuda_api_sum",      "cuda_gpu_trace",       "cuda_kern_exec_sum",    "nvtx_sum",
    "nvtx_gpu_proj_sum", "nvtx_kern_sum"};

struct GoldenCase {
  std::string name, path, report;
};

std::vector<GoldenCase> all_cases() {
  std::vector<GoldenCase> out;
  for (const TraceCase& c : kCases) {
    for (const char* r : kReports) out.push_back({c.name, c.path, r});
  }
  return out;
}

fs::path golden_dir() { return fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "kineto_stats"; }

// Goldens over ~300 KB hold only their header and first rows; truncated.list (written by
// regenerate.sh) gives "<name> <report> <full row count>" for each of them.
const std::map<std::pair<std::string, std::string>, size_t>& truncated() {
  static const auto* list = [] {
    auto* m = new std::map<std::pair<std::string, std::string>, size_t>;
    std::istringstream in(read_file(golden_dir() / "truncated.list"));
    std::string name, report;
    size_t rows = 0;
    while (in >> name >> report >> rows) (*m)[{name, report}] = rows;
    return m;
  }();
  return *list;
}

// The first `rows` CSV records of `text` (a record ends at a newline outside quotes).
std::string first_records(const std::string& text, size_t rows) {
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"')
      quoted = !quoted;
    else if (text[i] == '\n' && !quoted && --rows == 0)
      return text.substr(0, i + 1);
  }
  return text;
}

class KinetoStatsGolden : public ::testing::TestWithParam<GoldenCase> {};

TRACEDOC_TEST_LABELS(KinetoStatsGolden, corpus golden);

TEST_P(KinetoStatsGolden, CsvEqualsGolden) {
  const GoldenCase& c = GetParam();
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent: Kineto report goldens skipped";
  const fs::path input = shared / "traces" / c.path;
  ASSERT_TRUE(fs::exists(input)) << "missing trace " << input;
  const fs::path golden = golden_dir() / (c.name + "." + c.report + ".csv");
  ASSERT_TRUE(fs::exists(golden)) << golden << " (run tests/golden/kineto_stats/regenerate.sh)";

  const std::string expected = read_file(golden);
  const auto got = report_csv(load_kineto(input.string()), c.report);
  // An empty golden: the CLI printed nothing (SKIPPED, or an empty result).
  if (expected.empty()) {
    EXPECT_TRUE(!got.has_value() || got->empty()) << got.value_or("");
    return;
  }
  ASSERT_TRUE(got.has_value()) << "the report said NoData (SKIPPED)";
  std::string actual = *got;

  const auto cut = truncated().find({c.name, c.report});
  if (cut != truncated().end()) {
    // Same full size, and the kept rows (with the header) equal.
    EXPECT_EQ(parse_csv(actual).size(), cut->second + 1) << "data rows of the full report";
    actual = first_records(actual, parse_csv(expected).size());
  }
  std::string why;
  EXPECT_TRUE(csv_equal(expected, actual, &why)) << c.name << " " << c.report << ": " << why;
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string n = info.param.name + "_" + info.param.report;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(RealTraces, KinetoStatsGolden, ::testing::ValuesIn(all_cases()), case_name);

TRACEDOC_TEST_LABELS(KinetoStatsGoldenFiles, golden);

// The goldens and truncated.list belong to the checkout: they are consistent with the case list
// even where the traces are absent.
TEST(KinetoStatsGoldenFiles, EveryCaseHasAGoldenAndTruncationsAreKnownCases) {
  for (const GoldenCase& c : all_cases()) {
    EXPECT_TRUE(fs::exists(golden_dir() / (c.name + "." + c.report + ".csv"))) << c.name << "." << c.report;
  }
  for (const auto& [key, rows] : truncated()) {
    bool known = false;
    for (const GoldenCase& c : all_cases()) known = known || (c.name == key.first && c.report == key.second);
    EXPECT_TRUE(known) << key.first << " " << key.second;
    // The kept part: the header and the first 200 rows, fewer than the full report.
    const auto kept = parse_csv(read_file(golden_dir() / (key.first + "." + key.second + ".csv")));
    EXPECT_EQ(kept.size(), 201u) << key.first << " " << key.second;
    EXPECT_GT(rows, 200u) << key.first << " " << key.second;
  }
}

}  // namespace
}  // namespace tracedoc::testing
