// Tests of Python function time (python_function events, src/analysis/pytorch/python_functions.h):
// hand-written traces whose every cell is worked out in the comments; the opt-in (a plain read
// stores no Python calls, a read for the report stores them all and changes nothing else); rank
// directories; the CLI; and real traces against the table that tests/kineto/python_functions_reference.py
// computes from the raw JSON (tests/golden/pytorch/python_func_sum.tsv).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analysis/pytorch/python_functions.h"
#include "ingest/kineto_reader.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

static_assert((kLoadAll & kLoadPythonFunctions) == 0, "Python calls are opt-in: never part of kLoadAll");

KinetoReadOptions with_python() {
  KinetoReadOptions o;
  o.python_functions = true;
  return o;
}

Trace read_json(const std::string& json, const KinetoReadOptions& options = with_python()) {
  auto t = read_kineto_bytes(json, "test.json", options);
  if (!t.ok()) throw std::runtime_error(t.status().message());
  return std::move(t).value();
}

std::string call(const std::string& name, int tid, int ts_us, int dur_us, int id, const std::string& parent) {
  return "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"" + name +
         "\", \"pid\": 100, \"tid\": " + std::to_string(tid) + ", \"ts\": " + std::to_string(ts_us) +
         ".000, \"dur\": " + std::to_string(dur_us) + ".000, \"args\": {\"Python parent id\": " + parent +
         ", \"Python id\": " + std::to_string(id) + ", \"Ev Idx\": " + std::to_string(id) + "}}";
}

std::string trace_of(const std::vector<std::string>& events) {
  std::string json = "{\"traceEvents\": [";
  for (size_t i = 0; i < events.size(); ++i) json += (i ? ",\n" : "\n") + events[i];
  return json + "\n]}";
}

const char* const kHeader = "Self Time (%),Self Time (ns),Total Time (ns),Calls,Avg (ns),Max (ns),Threads,Function\n";

// Calls by Python id (µs): main [0, 100] on thread 101 calls f [10, 60], which calls itself
// [20, 40], which calls g [25, 30]; main's caller id also names g [90, 120] on the autograd thread
// 102, which outlasts it. h's caller (99) is not in the trace: h is outermost. k [300, 310] has a
// callee x [305, 325] on thread 102 that outlasts it by 15 µs: k's self time stops at 0.
//   self: main 100 - 50 - 30 = 20; f 50 - 20 = 30 and 20 - 5 = 15; g 5 and 30; h 10; k 0; x 20.
//   f: self 45, total 50 (the inner f is inside the outer), 2 calls, avg 25, max 50, 1 thread.
//   g: self 35, total 35, 2 calls, avg 17.5, max 30, 2 threads.
//   Of the 130 µs of self time: f 34.6%, g 26.9%, main and x 15.4% (main first by name), h 7.7%.
const std::string kById = trace_of({
    call("a.py(1): main", 101, 0, 100, 1, "null"),
    call("b.py(2): f", 101, 10, 50, 2, "1"),
    call("b.py(2): f", 101, 20, 20, 3, "2"),
    call("c.py(3): g", 101, 25, 5, 4, "3"),
    call("c.py(3): g", 102, 90, 30, 5, "1"),
    call("d.py(4): h", 101, 200, 10, 6, "99"),
    call("e.py(5): k", 101, 300, 10, 7, "null"),
    call("e.py(6): x", 102, 305, 20, 8, "7"),
});

TRACEDOC_TEST_LABELS(PythonFuncSum, golden);

TEST(PythonFuncSum, ByParentIdsEveryCell) {
  const Trace t = read_json(kById);
  ASSERT_EQ(t.pytorch.python_functions.size(), 8u);
  EXPECT_TRUE(pytorch::python_call_tree(t).by_parent_id);
  EXPECT_EQ(report_csv(t, "python_func_sum"), std::string(kHeader) +
                                                  "34.6,45000,50000,2,25000.0,50000,1,b.py(2): f\n"
                                                  "26.9,35000,35000,2,17500.0,30000,2,c.py(3): g\n"
                                                  "15.4,20000,100000,1,100000.0,100000,1,a.py(1): main\n"
                                                  "15.4,20000,20000,1,20000.0,20000,1,e.py(6): x\n"
                                                  "7.7,10000,10000,1,10000.0,10000,1,d.py(4): h\n"
                                                  "0.0,0,10000,1,10000.0,10000,1,e.py(5): k\n");
}

TEST(PythonFuncSum, NameFilterTakesPercentagesOfTheRowsKept) {
  const Trace t = read_json(kById);
  ReportArgs args;
  args.name_filter = *NamePattern::compile("^[bc]\\.py");
  TableSink table;
  ASSERT_TRUE(find_report("python_func_sum")->run(t, args, table).ok());
  ASSERT_EQ(table.row_count(), 2u);
  EXPECT_DOUBLE_EQ(table.row_at(0)[0].d, 56.3);  // 45 of 80
  EXPECT_DOUBLE_EQ(table.row_at(1)[0].d, 43.8);
}

// Without parent ids the calls nest by time on their own thread (µs): a [0, 100] holds b [10, 40],
// which holds b [15, 25], and c [50, 70]; c [5, 205] on thread 102 overlaps a but is not inside it.
//   self: a 100 - 30 - 20 = 50; b 20 and 10; c 20 and 200.  Of 300: c 73.3%, a 16.7%, b 10.0%.
TEST(PythonFuncSum, WithoutParentIdsNestsByTimePerThread) {
  auto plain = [](const std::string& name, int tid, int ts, int dur) {
    return "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"" + name +
           "\", \"pid\": 100, \"tid\": " + std::to_string(tid) + ", \"ts\": " + std::to_string(ts) +
           ".000, \"dur\": " + std::to_string(dur) + ".000}";
  };
  const Trace t = read_json(trace_of({plain("a", 101, 0, 100), plain("b", 101, 10, 30), plain("b", 101, 15, 10),
                                      plain("c", 101, 50, 20), plain("c", 102, 5, 200)}));
  EXPECT_FALSE(pytorch::python_call_tree(t).by_parent_id);
  EXPECT_EQ(report_csv(t, "python_func_sum"), std::string(kHeader) +
                                                  "73.3,220000,220000,2,110000.0,200000,2,c\n"
                                                  "16.7,50000,100000,1,100000.0,100000,1,a\n"
                                                  "10.0,30000,30000,2,15000.0,30000,1,b\n");
}

// Parent ids that form a cycle (no profiler writes one) must still give a tree: the cycle is cut
// at one row, every row is walked once.
TEST(PythonFuncSum, ParentIdCycleIsCut) {
  const Trace t =
      read_json(trace_of({call("a", 101, 0, 10, 1, "2"), call("b", 101, 1, 5, 2, "1"), call("c", 101, 2, 1, 3, "2")}));
  const pytorch::PythonCallTree tree = pytorch::python_call_tree(t);
  ASSERT_EQ(tree.preorder.size(), 3u);
  EXPECT_EQ(std::set<uint32_t>(tree.preorder.begin(), tree.preorder.end()).size(), 3u);
  EXPECT_EQ(std::count(tree.parent.begin(), tree.parent.end(), -1), 1);
  EXPECT_TRUE(report_csv(t, "python_func_sum").has_value());
}

TEST(PythonFuncSum, NoDataWithoutPythonCalls) {
  const std::string no_python =
      trace_of({"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 100, \"tid\": 101, \"ts\": "
                "1.000, \"dur\": 2.000}"});
  const Trace t = read_json(no_python);
  TableSink table;
  const Status st = find_report("python_func_sum")->run(t, {}, table);
  EXPECT_EQ(st.code(), ErrorCode::kNoData);
  EXPECT_NE(st.message().find("with_stack=True"), std::string::npos) << st.message();

  // Python calls counted but not stored (a plain read): NoData that names the missing opt-in.
  const Trace unread = read_json(kById, KinetoReadOptions{});
  EXPECT_EQ(unread.pytorch.python_function_count, 8);
  const Status st2 = find_report("python_func_sum")->run(unread, {}, table);
  EXPECT_EQ(st2.code(), ErrorCode::kNoData);
  EXPECT_NE(st2.message().find("kLoadPythonFunctions"), std::string::npos) << st2.message();
}

// ---- Real traces ------------------------------------------------------------------------------------

struct RefRow {
  std::string function;
  int64_t self = 0, total = 0, calls = 0, max = 0, threads = 0;
};
struct RefTrace {
  std::string path;
  std::vector<RefRow> rows;
};

std::map<std::string, RefTrace> load_reference() {
  std::map<std::string, RefTrace> out;
  const fs::path file = fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "pytorch" / "python_func_sum.tsv";
  bool header = true;
  for (const std::string& line : split(read_file(file), '\n')) {
    if (line.empty()) continue;
    if (line[0] == '#') {  // "# name = path" lines name the traces
      const size_t eq = line.find(" = ");
      if (eq != std::string::npos) out[line.substr(2, eq - 2)].path = line.substr(eq + 3);
      continue;
    }
    if (header) {
      header = false;
      continue;
    }
    const std::vector<std::string> c = split(line, '\t');
    if (c.size() != 7) throw std::runtime_error("python_func_sum.tsv: bad line " + line);
    out[c[0]].rows.push_back(
        {c[1], std::stoll(c[2]), std::stoll(c[3]), std::stoll(c[4]), std::stoll(c[5]), std::stoll(c[6])});
  }
  return out;
}

// The real traces, read once for the report (every python_function stored).
const Trace& load_with_python(const std::string& path) {
  static std::map<std::string, std::unique_ptr<Trace>> cache;
  auto& slot = cache[path];
  if (!slot) {
    auto t = read_kineto_trace(path, with_python());
    if (!t.ok()) throw std::runtime_error(t.status().message());
    slot = std::make_unique<Trace>(std::move(t).value());
  }
  return *slot;
}

// A percentage or average cell (rounded to 0.1 by the report) against the exact quotient.
void expect_rounded(const Cell& c, double exact, const std::string& what) {
  ASSERT_EQ(c.type, Cell::Type::kReal) << what;
  EXPECT_LE(std::fabs(c.d - exact), 0.05 + 1e-9 * std::fabs(exact)) << what << ": " << c.d << " vs " << exact;
}

TRACEDOC_TEST_LABELS(PythonFuncSumGolden, corpus golden);

TEST(PythonFuncSumGolden, MatchesIndependentReference) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const auto reference = load_reference();
  ASSERT_GE(reference.size(), 5u)
      << "tests/golden/pytorch/python_func_sum.tsv: run tests/kineto/python_functions_reference.py";
  const auto* def = find_report("python_func_sum");
  ASSERT_NE(def, nullptr);
  size_t rows_matched = 0;
  for (const auto& [name, ref] : reference) {
    SCOPED_TRACE(name);
    const fs::path input = shared / "traces" / ref.path;
    if (!fs::exists(input)) {
      ADD_FAILURE() << "missing trace " << input;
      continue;
    }
    const Trace& trace = load_with_python(input.string());
    EXPECT_EQ(static_cast<int64_t>(trace.pytorch.python_functions.size()), trace.pytorch.python_function_count);
    TableSink table;
    ASSERT_TRUE(def->run(trace, {}, table).ok());
    ASSERT_EQ(table.row_count(), ref.rows.size());
    int64_t grand = 0;
    for (const RefRow& r : ref.rows) grand += r.self;
    for (size_t i = 0; i < ref.rows.size(); ++i) {
      const RefRow& r = ref.rows[i];
      const auto c = table.row_at(i);  // same order: self time descending, then name
      ASSERT_EQ(std::string(c[7].s), r.function) << "row " << i;
      expect_rounded(c[0], static_cast<double>(r.self) * 100.0 / static_cast<double>(grand),
                     r.function + " Self Time (%)");
      EXPECT_EQ(c[1].i, r.self) << r.function;
      EXPECT_EQ(c[2].i, r.total) << r.function;
      EXPECT_EQ(c[3].i, r.calls) << r.function;
      expect_rounded(c[4], static_cast<double>(r.total) / static_cast<double>(r.calls), r.function + " Avg");
      EXPECT_EQ(c[5].i, r.max) << r.function;
      EXPECT_EQ(c[6].i, r.threads) << r.function;
      ++rows_matched;
    }
  }
  std::printf("python_func_sum: %zu rows of %zu traces match the reference\n", rows_matched, reference.size());
}

const char* const kBert = "kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";
const char* const kCheckpoint = "kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz";

template <typename T>
void expect_same_column(const char* what, const std::vector<T>& a, const std::vector<T>& b) {
  EXPECT_TRUE(a == b) << what << " differs";
}

// The strings behind a column of ids (the opt-in interns the Python names too, which moves the ids).
std::vector<std::string_view> texts(const Trace& t, const std::vector<StrId>& ids) {
  std::vector<std::string_view> out;
  for (StrId id : ids) out.push_back(t.str(id));
  return out;
}

TRACEDOC_TEST_LABELS(PythonFunctionOptIn, corpus);

TEST(PythonFunctionOptIn, PlainReadsStoreNothingAndTheReportsReadChangesNothingElse) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const std::string path = (shared / "traces" / kCheckpoint).string();

  // Every plain way in: the reader's defaults, open_trace's defaults, and kLoadAll.
  auto plain = read_kineto_trace(path);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->pytorch.python_functions.size(), 0u);
  EXPECT_EQ(plain->pytorch.python_function_count, 34405);
  auto opened = open_trace(path);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->pytorch.python_functions.size(), 0u);
  OpenOptions all;
  all.nsys.tables = kLoadAll;
  EXPECT_EQ(open_trace(path, all)->pytorch.python_functions.size(), 0u);

  // What the CLI does for the report: its bit, and every row stored.
  OpenOptions for_report;
  for_report.nsys.tables = find_report("python_func_sum")->tables;
  auto with = open_trace(path, for_report);
  ASSERT_TRUE(with.ok());
  const PythonFunctionTable& py = with->pytorch.python_functions;
  EXPECT_EQ(static_cast<int64_t>(py.size()), with->pytorch.python_function_count);
  EXPECT_TRUE(std::is_sorted(py.start.begin(), py.start.end()));
  EXPECT_EQ(std::set<int64_t>(py.python_id.begin(), py.python_id.end()).size(), py.size());
  // The autograd thread is there: two threads.
  EXPECT_EQ(std::set<int64_t>(py.global_tid.begin(), py.global_tid.end()).size(), 2u);

  // Nothing else moves: times, thread ids and names of the other tables, threads and processes.
  const Trace& x = *plain;
  const Trace& y = *with;
  expect_same_column("kernels.start", x.kernels.start, y.kernels.start);
  expect_same_column("kernels.global_pid", x.kernels.global_pid, y.kernels.global_pid);
  expect_same_column("api.start", x.api.start, y.api.start);
  expect_same_column("api.global_tid", x.api.global_tid, y.api.global_tid);
  expect_same_column("ops.start", x.pytorch.ops.start, y.pytorch.ops.start);
  expect_same_column("ops.global_tid", x.pytorch.ops.global_tid, y.pytorch.ops.global_tid);
  expect_same_column("ranges.global_tid", x.ranges.global_tid, y.ranges.global_tid);
  EXPECT_EQ(texts(x, x.kernels.name), texts(y, y.kernels.name));
  EXPECT_EQ(texts(x, x.pytorch.ops.name), texts(y, y.pytorch.ops.name));
  ASSERT_EQ(x.threads.size(), y.threads.size());
  for (size_t i = 0; i < x.threads.size(); ++i) EXPECT_EQ(x.threads[i].global_tid, y.threads[i].global_tid);
  EXPECT_EQ(x.processes.size(), y.processes.size());
  EXPECT_EQ(x.pytorch.steps, y.pytorch.steps);
}

TEST(PythonFunctionOptIn, RankDirectoryKeepsEachRanksCallsApart) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const fs::path source = shared / "traces" / kBert;
  const fs::path dir = fs::temp_directory_path() / ("tracedoc-python-ranks-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::copy_file(source, dir / "bert_rank-0.json.gz", fs::copy_options::overwrite_existing);
  fs::copy_file(source, dir / "bert_rank-1.json.gz", fs::copy_options::overwrite_existing);
  auto merged = read_kineto_directory(dir.string(), -1, with_python());
  auto plain = read_kineto_directory(dir.string());
  auto one = read_kineto_directory(dir.string(), 1, with_python());
  fs::remove_all(dir);
  ASSERT_TRUE(merged.ok() && plain.ok() && one.ok());
  EXPECT_EQ(plain->pytorch.python_functions.size(), 0u);
  EXPECT_EQ(plain->pytorch.python_function_count, 2 * 1385);

  const Trace& single = load_with_python(source.string());
  const PythonFunctionTable& py = merged->pytorch.python_functions;
  ASSERT_EQ(py.size(), 2 * single.pytorch.python_functions.size());
  EXPECT_TRUE(std::is_sorted(py.start.begin(), py.start.end()));
  EXPECT_EQ(std::set<int64_t>(py.python_id.begin(), py.python_id.end()).size(), py.size());  // unique per rank
  for (size_t i = 0; i < py.size(); ++i) {
    if (py.parent_id[i] == kNoValue) continue;
    EXPECT_EQ(py.parent_id[i] >> 48, py.python_id[i] >> 48) << "a caller id in another rank, row " << i;
    EXPECT_EQ(py.python_id[i] >> 48, py.global_tid[i] >> 48) << "the id's rank is its thread's, row " << i;
  }
  EXPECT_EQ(one->pytorch.python_functions.size(), single.pytorch.python_functions.size());

  // Two identical ranks: every count and time doubles, every share stays; threads double.
  TableSink a, b;
  ASSERT_TRUE(pytorch::python_func_sum(single, {}, a).ok());
  ASSERT_TRUE(pytorch::python_func_sum(*merged, {}, b).ok());
  ASSERT_EQ(a.row_count(), b.row_count());
  for (size_t i = 0; i < a.row_count(); ++i) {
    const auto x = a.row_at(i), y = b.row_at(i);
    EXPECT_EQ(std::string(x[7].s), std::string(y[7].s));
    EXPECT_EQ(x[0].d, y[0].d);
    for (int c : {1, 2, 3, 5, 6}) EXPECT_EQ(c == 5 ? x[c].i : 2 * x[c].i, y[c].i) << "column " << c << " row " << i;
  }
}

TRACEDOC_TEST_LABELS(PythonFunctionCli, corpus);

TEST(PythonFunctionCli, StatsCsv) {
  const fs::path shared = shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const std::string trace = (shared / "traces" / kBert).string();
  const std::string command =
      std::string(TRACEDOC_BINARY_DIR) + "/tracedoc stats -r python_func_sum -f csv -o - '" + trace + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  ASSERT_EQ(status, 0) << out;
  // Exactly the report the library gives on the same trace, header and rows.
  EXPECT_EQ(out, report_csv(load_with_python(trace), "python_func_sum").value());
  EXPECT_EQ(out.rfind(kHeader, 0), 0u) << out.substr(0, 200);
  EXPECT_EQ(static_cast<size_t>(std::count(out.begin(), out.end(), '\n')), 1 + 291u);
}

}  // namespace
}  // namespace tracedoc::testing
