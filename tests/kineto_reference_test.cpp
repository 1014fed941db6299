// Exactness test of the Kineto (PyTorch profiler JSON) reader against an independent reference.
//
// tests/golden/kineto/reference.tsv is written by tests/kineto/reference.py: Python's json module with
// exact decimals, sharing no code with tracedoc. For every trace in shared/traces/kineto/** and
// shared/traces/torch113-cpu the reader's tables must give the same counts, the same summed kernel
// time in ns and the same summed copy/set bytes, so a tokenizer slip, a fixed-point error or a wrong
// category mapping fails here, file by file. The spot checks at the end pin single events to values
// read off the raw text by hand, chosen where a double-based conversion gives a different answer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const char* const kReferencePath = TRACEDOC_SOURCE_DIR "/tests/golden/kineto/reference.tsv";

struct RefRow {
  std::string file;  // relative to shared/traces, '/'-separated
  std::map<std::string, std::string> cols;
  bool invalid() const { return cols.count("events") && cols.at("events") == "invalid"; }
  int64_t num(const std::string& col) const { return std::stoll(cols.at(col)); }
};

// Every column reference.py writes; a missing one means the script and this test drifted apart.
const std::vector<std::string> kColumns = {"file",
                                           "events",
                                           "kernels",
                                           "kernel_total_ns",
                                           "memcpys",
                                           "memcpy_bytes",
                                           "memsets",
                                           "memset_bytes",
                                           "api_calls",
                                           "cpu_ops",
                                           "user_annotations",
                                           "gpu_user_annotations",
                                           "memory_events",
                                           "python_functions",
                                           "steps",
                                           "rank",
                                           "base_time_ns"};

std::vector<RefRow> load_reference() {
  std::vector<RefRow> rows;
  if (!fs::exists(kReferencePath)) return rows;
  std::vector<std::string> header;
  for (const std::string& line : split(read_file(kReferencePath), '\n')) {
    if (line.empty() || line[0] == '#') continue;  // the generated-by comment
    std::vector<std::string> cells = split(line, '\t');
    if (header.empty()) {
      header = cells;
      continue;
    }
    RefRow r;
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) r.cols[header[i]] = cells[i];
    r.file = r.cols["file"];
    rows.push_back(std::move(r));
  }
  return rows;
}

// gtest parameter names allow [A-Za-z0-9_] only; the common "kineto/" prefix and the extension are
// dropped to keep them readable, and a counter keeps them unique if two paths collapse alike.
std::vector<std::string> case_names(const std::vector<RefRow>& rows) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const RefRow& r : rows) {
    std::string f = r.file;
    if (f.rfind("kineto/", 0) == 0) f = f.substr(7);
    for (const char* ext : {".pt.trace.json.gz", ".json.gz", ".json"}) {
      const std::string e(ext);
      if (f.size() > e.size() && f.compare(f.size() - e.size(), e.size(), e) == 0) {
        f.resize(f.size() - e.size());
        break;
      }
    }
    std::string n;
    for (char c : f) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    std::string unique = n;
    for (int k = 2; seen.count(unique); ++k) unique = n + "_" + std::to_string(k);
    seen.insert(unique);
    names.push_back(unique);
  }
  return names;
}

const std::vector<RefRow>& reference_rows() {
  static const std::vector<RefRow> rows = load_reference();
  return rows;
}

std::vector<size_t> row_indices() {
  std::vector<size_t> idx(reference_rows().size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (idx.empty()) idx.push_back(SIZE_MAX);  // placeholder: reported by the test, not dropped silently
  return idx;
}

// Sums in unsigned arithmetic so a stray kNoValue cannot overflow (it then shows as a mismatch).
template <typename V>
int64_t sum_of(const V& v) {
  uint64_t s = 0;
  for (auto x : v) s += static_cast<uint64_t>(x);
  return static_cast<int64_t>(s);
}

int64_t sum_durations(const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
  uint64_t s = 0;
  for (size_t i = 0; i < start.size(); ++i) s += static_cast<uint64_t>(end[i] - start[i]);
  return static_cast<int64_t>(s);
}

class Kineto : public ::testing::TestWithParam<size_t> {};

TRACEDOC_TEST_LABELS(Kineto, corpus);

TEST_P(Kineto, MatchesPythonReference) {
  ASSERT_NE(GetParam(), SIZE_MAX) << kReferencePath << " is missing or empty: run tests/kineto/reference.py";
  const RefRow& ref = reference_rows()[GetParam()];
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces not found: Kineto reference test on real traces skipped";
  const fs::path path = shared / "traces" / ref.file;
  ASSERT_TRUE(fs::exists(path)) << ref.file << " is in reference.tsv but not in shared/traces: regenerate the table";
  for (const std::string& c : kColumns) ASSERT_TRUE(ref.cols.count(c)) << "reference.tsv lacks column " << c;

  Result<Trace> r = read_kineto_trace(path.string());
  if (ref.invalid()) {
    // Python's json rejects the file; the reader must too, saying which file and where.
    ASSERT_FALSE(r.ok()) << ref.file << " is not valid JSON but was read";
    const std::string& msg = r.status().message();
    EXPECT_NE(msg.find(path.filename().string()), std::string::npos) << "message does not name the file: " << msg;
    EXPECT_NE(msg.find("byte"), std::string::npos) << "message does not give the byte offset: " << msg;
    return;
  }
  ASSERT_TRUE(r.ok()) << ref.file << ": " << r.status().message();
  const Trace& t = r.value();
  const PyTorchInfo& pt = t.pytorch;

  // One EXPECT per column so a failing file lists every wrong column at once.
  auto check = [&](const char* col, int64_t actual) {
    EXPECT_EQ(ref.num(col), actual) << ref.file << ": column " << col;
  };
  check("events", pt.event_count);
  check("kernels", static_cast<int64_t>(t.kernels.start.size()));
  check("kernel_total_ns", sum_durations(t.kernels.start, t.kernels.end));
  check("memcpys", static_cast<int64_t>(t.memcpys.start.size()));
  check("memcpy_bytes", sum_of(t.memcpys.bytes));
  check("memsets", static_cast<int64_t>(t.memsets.start.size()));
  check("memset_bytes", sum_of(t.memsets.bytes));
  check("api_calls", static_cast<int64_t>(t.api.start.size()));
  check("cpu_ops", static_cast<int64_t>(pt.ops.size()));
  check("user_annotations", static_cast<int64_t>(t.ranges.start.size()));
  check("gpu_user_annotations", static_cast<int64_t>(pt.gpu_annotations.size()));
  check("memory_events", static_cast<int64_t>(pt.allocator.size()));
  check("python_functions", pt.python_function_count);
  check("steps", static_cast<int64_t>(pt.steps.size()));
  check("rank", pt.rank);
  check("base_time_ns", pt.base_time_ns);

  // Every step row must be a range named ProfilerStep#N (what the steps column counted).
  for (uint32_t s : pt.steps) {
    ASSERT_LT(s, t.ranges.text.size()) << ref.file;
    const std::string_view name = t.str(t.ranges.text[s]);
    EXPECT_EQ(name.rfind("ProfilerStep#", 0), 0u) << ref.file << ": step row named " << name;
  }
}

std::vector<std::string>& param_names() {
  static std::vector<std::string> names = case_names(reference_rows());
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllTraces, Kineto, ::testing::ValuesIn(row_indices()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return info.param == SIZE_MAX ? std::string("missing_reference_tsv")
                                                         : param_names()[info.param];
                         });

TRACEDOC_TEST_LABELS(KinetoReference, corpus);

// The table must cover every trace in the shared folder (same not-a-trace rules as reference.py), so a
// trace added there without regenerating the table is noticed.
TEST(KinetoReference, CoversEveryTrace) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared/traces not found";
  const fs::path traces = shared / "traces";
  std::set<std::string> listed;
  for (const RefRow& r : reference_rows()) listed.insert(r.file);
  auto is_candidate = [](const std::string& n) {
    auto ends = [&](const std::string& s) {
      return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    if (n == "execution_details.json" || n == "memory_timeline.raw.gz" || ends("_et.json.gz")) return false;
    return ends(".json") || ends(".json.gz");
  };
  std::vector<fs::path> found;
  if (fs::is_directory(traces / "kineto")) {
    for (const auto& e : fs::recursive_directory_iterator(traces / "kineto")) {
      if (e.is_regular_file() && is_candidate(e.path().filename().string())) found.push_back(e.path());
    }
  }
  if (fs::is_directory(traces / "torch113-cpu")) {
    for (const auto& e : fs::directory_iterator(traces / "torch113-cpu")) {
      if (e.is_regular_file() && e.path().extension() == ".json") found.push_back(e.path());
    }
  }
  ASSERT_FALSE(found.empty());
  for (const fs::path& p : found) {
    const std::string rel = fs::relative(p, traces).generic_string();
    EXPECT_TRUE(listed.count(rel)) << rel << " is not in reference.tsv: run tests/kineto/reference.py";
  }
  EXPECT_EQ(found.size(), listed.size()) << "reference.tsv lists files the shared folder no longer has";
}

// ---- Spot checks: single events, values worked out by hand from the file text ----

const Trace& load_kineto(const std::string& rel) {
  static std::map<std::string, std::unique_ptr<Trace>> cache;
  auto& slot = cache[rel];
  if (!slot) {
    auto r = read_kineto_trace((shared_dir() / "traces" / rel).string());
    if (!r.ok()) throw std::runtime_error(r.status().message());
    slot = std::make_unique<Trace>(std::move(r).value());
  }
  return *slot;
}

// The row of the kernel with this CUPTI correlation id (the reader may reorder rows by time).
size_t kernel_by_correlation(const Trace& t, int64_t correlation) {
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < t.kernels.correlation.size(); ++i) {
    if (t.kernels.correlation[i] == correlation) {
      EXPECT_EQ(found, SIZE_MAX) << "correlation " << correlation << " on two kernels";
      found = i;
    }
  }
  return found;
}

TRACEDOC_TEST_LABELS(KinetoSpot, corpus);

// E5 (HTA nccl_data, 2024): the file's first kernel reads
//   "ts": 4458676983543.183, "dur": 41.407, ... "correlation": 57541
// Exact: 4458676983543183 ns, end 4458676983584590. Through a double, 4458676983543.183 * 1000 gives
// 4458676983543182 (truncated or rounded), so this catches any non-fixed-point conversion. The value
// stays relative to baseTimeNanoseconds (1711964646000000000).
TEST(KinetoSpot, E5NcclDataFirstKernelIsExactNs) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const Trace& t = load_kineto("kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz");
  size_t k = kernel_by_correlation(t, 57541);
  ASSERT_NE(k, SIZE_MAX);
  EXPECT_EQ(t.kernels.start[k], 4458676983543183);
  EXPECT_EQ(t.kernels.end[k], 4458676983584590);
  EXPECT_EQ(t.kernels.stream[k], 7);
  EXPECT_EQ(t.str(t.kernels.name[k]).rfind("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>", 0),
            0u);
  EXPECT_EQ(t.pytorch.base_time_ns, 1711964646000000000);
}

// E5 (TraceLens H100 bert-small, 2025, re-serialized one key per line): first kernel
//   "ts": 1419247333430.849, "dur": 3.136, correlation 8218 -> [1419247333430849, 1419247333433985).
TEST(KinetoSpot, E5H100FirstKernelIsExactNs) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const Trace& t = load_kineto("kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
  size_t k = kernel_by_correlation(t, 8218);
  ASSERT_NE(k, SIZE_MAX);
  EXPECT_EQ(t.kernels.start[k], 1419247333430849);
  EXPECT_EQ(t.kernels.end[k], 1419247333433985);
  EXPECT_EQ(t.pytorch.base_time_ns, 1751410836000000000);
}

// E1 (TensorBoard plugin sample, 2021, cat "Kernel", tid "stream 7"): first kernel
//   "ts": 1623142623531625, "dur": 2, ... "correlation": 34441
// Integer absolute epoch µs * 1000 = 1623142623531625000 ns; as a double it would be ...624960.
TEST(KinetoSpot, E1KernelIsIntegerMicrosecondsTimes1000) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const Trace& t =
      load_kineto("kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz");
  size_t k = kernel_by_correlation(t, 34441);
  ASSERT_NE(k, SIZE_MAX);
  EXPECT_EQ(t.kernels.start[k], 1623142623531625000);
  EXPECT_EQ(t.kernels.end[k], 1623142623531627000);
  EXPECT_EQ(t.str(t.kernels.name[k]), "cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)");
  EXPECT_EQ(t.pytorch.base_time_ns, 0);
}

// Legacy bare array (PyTorch 1.13 without Kineto, no cat): the file starts with
//   {"name": "aten::zeros", "ph": "X", "ts": 187, "dur": 33, ...}   -> an op [187000, 220000)
//   {"name": "ProfilerStep#1", "ph": "X", "ts": 242, "dur": 9549, ...} -> a range and step [242000, 9791000)
TEST(KinetoSpot, LegacyArrayOpsAndStep) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const Trace& t = load_kineto("torch113-cpu/cnn_fastdata.json");
  bool op_found = false;
  for (size_t i = 0; i < t.pytorch.ops.size(); ++i) {
    if (t.pytorch.ops.start[i] == 187000 && t.str(t.pytorch.ops.name[i]) == "aten::zeros") {
      EXPECT_EQ(t.pytorch.ops.end[i], 220000);
      op_found = true;
    }
  }
  EXPECT_TRUE(op_found) << "aten::zeros at ts 187 µs not among the ops";
  bool step_found = false;
  for (uint32_t s : t.pytorch.steps) {
    if (t.str(t.ranges.text[s]) == "ProfilerStep#1") {
      EXPECT_EQ(t.ranges.start[s], 242000);
      EXPECT_EQ(t.ranges.end[s], 9791000);
      step_found = true;
    }
  }
  EXPECT_TRUE(step_found) << "ProfilerStep#1 not among the steps";
}

// The legacy exporter wrote `"name": "load "batch" from C:\data..."` unescaped. The string ends at
// the second quote, so the first byte that cannot continue the document is the `b` of `batch`:
// offset 845, where Python's json also stops ("Expecting ',' delimiter: ... (char 845)"; all bytes
// before it are ASCII, so char == byte).
TEST(KinetoSpot, BadEscapeNamesTheByteOffset) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  auto r = read_kineto_trace((shared_dir() / "traces" / "torch113-cpu" / "bad_escape.json").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kBadInput);
  EXPECT_NE(r.status().message().find("byte 845"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace tracedoc::testing
