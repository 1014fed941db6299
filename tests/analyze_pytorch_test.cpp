// `tracedoc analyze` on PyTorch profiler traces against the real `nsys analyze` 2023.4.4.
//
// nsys cannot read a PyTorch trace, so the oracle reads its conversion: the trace written as an
// Nsight Systems export by write_nsys_sqlite (`tracedoc export --to sqlite`).
// tests/golden/analyze_pytorch/regen.sh converted each trace of cases.txt and recorded what nsys
// printed for each rule (expected/<case>/), with the export's timebase (timebase.txt). Per case and
// rule this test checks:
//  1. tracedoc on the same conversion prints exactly nsys's CSV, byte for byte;
//  2. tracedoc on the original trace prints the same CSV once its Start column is moved onto the
//     export's timebase (Start − shift, nsys_sqlite_writer.h: the session start is the last whole
//     second before the first event). No other column differs: durations, PIDs, TIDs, device,
//     context and stream ids, byte counts, memory kinds and API names are the trace's own in both,
//     and so is the order of the rows (the shift changes no comparison).
// Before comparing, the conversion's timebase must equal the one nsys was run on.
//
// What the oracle found and what was fixed (each would fail here again):
//  * the Kineto reader gave every copy its own device as source and destination device; nsys (CUPTI)
//    leaves them NULL except for peer-to-peer copies, and cuda_memcpy_sync drops copies whose two
//    devices are equal, so no synchronous copy of a PyTorch trace was ever listed (copies, mi300bert);
//  * the writer created every table, empty ones too, so nsys ran rules that tracedoc (rightly, from
//    the trace) skipped for missing data (vllmgraph, mi300bert: no memsets).
//
// Differences, each checked exactly (README, analyze):
//  * AMD traces: tracedoc matches the HIP calls (hipMemcpyWithStream, hipDeviceSynchronize, ...),
//    nsys's rules only the CUDA names. nsys's CSV is tracedoc's without the rows whose API Name
//    starts with "hip" (HipCallsAreTheOnlyDifferenceOnAmd counts them on the MI300X trace).
//  * gpu_time_util with more low-use ranges than rows=: nsys limits before it sorts and lists the
//    first N ranges in time order, tracedoc the N least used. Every row nsys printed is one of
//    tracedoc's (rows=-1), cell for cell but Row#, and tracedoc's N rows are its N least used.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "analysis/nsys_analyze/rules.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/open_trace.h"
#include "report/nsys_sqlite_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "analyze_pytorch";

struct PyTorchCase {
  std::string name;      // cases.txt name
  std::string trace;     // under ../shared/traces/kineto (a file or a rank directory), or repo:FILE
  std::string rule;      // with options
  std::string expected;  // analyze_<rule>.csv or .skipped
  bool skipped = false;  // nsys printed SKIPPED
};

// gtest prints a parameter in failure messages and test lists: case and rule, not bytes.
void PrintTo(const PyTorchCase& c, std::ostream* os) { *os << c.name << " " << c.rule; }

// Where a case's trace is; empty when ../shared is absent.
fs::path trace_path(const std::string& source) {
  if (source.rfind("repo:", 0) == 0) return fs::path(TRACEDOC_SOURCE_DIR) / source.substr(5);
  return shared_dir().empty() ? fs::path() : shared_dir() / "traces" / "kineto" / source;
}

std::vector<PyTorchCase> discover() {
  std::vector<PyTorchCase> cases;
  for (const auto& f : read_case_lines(kGoldenDir / "cases.txt")) {  // name trace rule,rule,...
    if (f.size() < 3) continue;
    for (const auto& rule : split(f[2], ',')) {
      const RecordedRule r = recorded_rule(kGoldenDir, f[0], rule);
      cases.push_back({f[0], f[1], rule, r.path, r.skipped});
    }
  }
  return cases;
}

// A trace and its conversion, made once per case for all of its rules.
struct Converted {
  Trace original;
  Trace exported;
  ExportTimebase timebase;
};

const Converted& converted(const std::string& name, const fs::path& trace_path) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Converted>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[name];
  if (slot) return *slot;
  auto original = open_trace(trace_path.string());
  if (!original.ok()) throw std::runtime_error(original.status().message());
  const fs::path db =
      fs::temp_directory_path() / ("tracedoc-analyze-pytorch-" + std::to_string(getpid()) + "-" + name + ".sqlite");
  Status st = write_nsys_sqlite(*original, db.string());
  if (!st.ok()) throw std::runtime_error(st.message());
  auto exported = read_nsys_sqlite(db.string());
  fs::remove(db);
  if (!exported.ok()) throw std::runtime_error(exported.status().message());
  const ExportTimebase timebase = export_timebase(*original);
  slot = std::make_unique<Converted>(Converted{std::move(*original), std::move(*exported), timebase});
  return *slot;
}

std::string join_csv(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + row[c];
    out += '\n';
  }
  return out;
}

// The CSV with its Start column moved onto the export's timebase. Analyze CSVs quote nothing (no
// cell holds a comma or a quote), so parsing and joining gives the bytes back.
std::string shift_starts(const std::string& csv, int64_t shift) {
  if (csv.empty()) return csv;
  EXPECT_EQ(csv.find('"'), std::string::npos) << "a quoted cell: compare by parsing instead";
  auto rows = parse_csv(csv);
  const auto start = std::find(rows[0].begin(), rows[0].end(), "Start (ns)");
  EXPECT_NE(start, rows[0].end()) << "no Start column";
  if (start == rows[0].end()) return csv;
  const size_t col = static_cast<size_t>(start - rows[0].begin());
  for (size_t r = 1; r < rows.size(); ++r) rows[r][col] = std::to_string(std::stoll(rows[r][col]) - shift);
  return join_csv(rows);
}

// tracedoc's CSV without the rows of HIP calls (first difference of the file comment); `dropped`
// counts them.
std::string without_hip_rows(const std::string& csv, size_t* dropped) {
  *dropped = 0;
  if (csv.empty()) return csv;
  auto rows = parse_csv(csv);
  const auto api = std::find(rows[0].begin(), rows[0].end(), "API Name");
  if (api == rows[0].end()) return csv;
  const size_t col = static_cast<size_t>(api - rows[0].begin());
  std::vector<std::vector<std::string>> kept = {rows[0]};
  for (size_t r = 1; r < rows.size(); ++r) {
    if (rows[r][col].rfind("hip", 0) == 0)
      ++*dropped;
    else
      kept.push_back(rows[r]);
  }
  return kept.size() == 1 ? std::string() : join_csv(kept);
}

int64_t rows_option(const std::string& rule) {
  auto parts = split(rule, ':');
  auto args = nsys_analyze::parse_rule_args(parts[0], {parts.begin() + 1, parts.end()});
  return args.ok() ? args->rows : 50;
}

// Compares tracedoc's CSV of `rule` (`run`: the rule on one of the two traces, Start already on the
// export's timebase) with nsys's; `what` says which trace.
void expect_nsys_csv(const PyTorchCase& c, const std::string& what,
                     const std::function<std::optional<std::string>(const std::string&)>& run) {
  SCOPED_TRACE(c.name + " " + c.rule + " on the " + what);
  auto got = run(c.rule);
  if (c.skipped) {
    EXPECT_FALSE(got.has_value()) << "nsys skipped it: " << read_file(c.expected);
    return;
  }
  ASSERT_TRUE(got.has_value()) << "tracedoc skipped a rule nsys ran";
  const std::string expected = read_file(c.expected);
  size_t hip_rows = 0;
  const std::string actual = without_hip_rows(*got, &hip_rows);
  if (actual == expected) return;
  const auto expected_rows = parse_csv(expected);
  const int64_t limit = rows_option(c.rule);
  const bool nsys_truncated =
      c.rule.rfind("gpu_time_util", 0) == 0 && limit > 0 && expected_rows.size() == static_cast<size_t>(limit) + 1;
  ASSERT_TRUE(nsys_truncated) << "expected:\n" << expected << "tracedoc:\n" << actual;
  // The second difference of the file comment.
  auto all = run(c.rule + ":rows=-1");
  ASSERT_TRUE(all.has_value());
  const auto all_rows = parse_csv(*all);
  ASSERT_GT(all_rows.size(), expected_rows.size()) << "nsys truncated, so there must be more ranges";
  std::set<std::vector<std::string>> ours;  // without Row#
  for (size_t r = 1; r < all_rows.size(); ++r) ours.insert({all_rows[r].begin() + 1, all_rows[r].end()});
  for (size_t r = 1; r < expected_rows.size(); ++r) {
    EXPECT_TRUE(ours.count({expected_rows[r].begin() + 1, expected_rows[r].end()})) << "nsys row " << r << " not found";
  }
  const auto limited = parse_csv(actual);
  ASSERT_EQ(limited.size(), static_cast<size_t>(limit) + 1);
  for (size_t r = 0; r < limited.size(); ++r) EXPECT_EQ(limited[r], all_rows[r]) << "row " << r;
}

class AnalyzePyTorchOracle : public ::testing::TestWithParam<PyTorchCase> {};

TRACEDOC_TEST_LABELS(AnalyzePyTorchOracle, corpus golden);

TEST_P(AnalyzePyTorchOracle, CsvEqualsNsysOnTheExport) {
  const PyTorchCase& c = GetParam();
  const fs::path trace = trace_path(c.trace);
  if (trace.empty()) GTEST_SKIP() << "../shared not found: PyTorch analyze oracles skipped";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " not found";
  const Converted& t = converted(c.name, trace);

  // The conversion is the one nsys read.
  const std::string timebase = read_file(kGoldenDir / "expected" / c.name / "timebase.txt");
  ASSERT_EQ(timebase, "session_start_utc_ns=" + std::to_string(t.timebase.session_start_utc_ns) +
                          "\nshift_ns=" + std::to_string(t.timebase.shift_ns) + "\n");

  expect_nsys_csv(c, "converted export", [&](const std::string& rule) { return rule_csv(t.exported, rule); });
  expect_nsys_csv(c, "original trace", [&](const std::string& rule) -> std::optional<std::string> {
    auto csv = rule_csv(t.original, rule);
    if (csv) csv = shift_starts(*csv, t.timebase.shift_ns);
    return csv;
  });
}

std::string case_name(const ::testing::TestParamInfo<PyTorchCase>& info) {
  std::string n = info.param.name + "_" + info.param.rule;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(RealNsys, AnalyzePyTorchOracle, ::testing::ValuesIn(discover()), case_name);

// `nsys stats` on the same conversions (its default reports that found data, and
// cuda_gpu_kern_gb_sum): tracedoc prints the same CSV on the conversion and on the original trace.
// These reports sum durations, so the time shift changes nothing in them. What they caught:
// kernel/grid/block rows tied in total, count and name follow grid and block ascending (ranks2), and
// sizes in MB are divided by 1e6, not multiplied by 1e-6 (copies).
std::vector<std::pair<std::string, std::string>> stats_cases() {
  std::vector<std::pair<std::string, std::string>> cases;  // case name, trace
  std::set<std::string> seen;
  for (const PyTorchCase& c : discover()) {
    if (seen.insert(c.name).second) cases.emplace_back(c.name, c.trace);
  }
  return cases;
}

class StatsPyTorchOracle : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TRACEDOC_TEST_LABELS(StatsPyTorchOracle, corpus golden);

TEST_P(StatsPyTorchOracle, CsvEqualsNsysOnTheExport) {
  const auto& [name, source] = GetParam();
  const fs::path trace = trace_path(source);
  if (trace.empty()) GTEST_SKIP() << "../shared not found: PyTorch stats oracles skipped";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " not found";
  const Converted& t = converted(name, trace);
  size_t compared = 0;
  for (const auto& f : fs::directory_iterator(kGoldenDir / "expected" / name)) {
    const std::string file = f.path().filename().string();
    if (file.rfind("stats_", 0) != 0) continue;
    const std::string report = f.path().stem().string().substr(6);
    const std::string expected = read_file(f.path());
    EXPECT_EQ(report_csv(t.exported, report).value_or("SKIPPED"), expected)
        << name << " " << report << " on the export";
    EXPECT_EQ(report_csv(t.original, report).value_or("SKIPPED"), expected) << name << " " << report << " on the trace";
    ++compared;
  }
  EXPECT_GE(compared, 4u) << "nsys printed at least the API, kernel and memory summaries";
}

INSTANTIATE_TEST_SUITE_P(RealNsys, StatsPyTorchOracle, ::testing::ValuesIn(stats_cases()),
                         [](const auto& info) { return info.param.first; });

TRACEDOC_TEST_LABELS(AnalyzePyTorch, corpus);

// The HIP rows nsys does not list, counted on the MI300X trace (hipMemcpyWithStream of 1 byte, two
// hipDeviceSynchronize): on the original trace and on its conversion alike.
TEST(AnalyzePyTorch, HipCallsAreTheOnlyDifferenceOnAmd) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared not found";
  const fs::path trace =
      shared_dir() / "traces" / "kineto" / "TraceLens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz";
  if (!fs::exists(trace)) GTEST_SKIP() << trace << " not found";
  const Converted& t = converted("mi300bert", trace);
  for (const Trace* tr : {&t.original, &t.exported}) {
    size_t dropped = 0;
    EXPECT_EQ(without_hip_rows(rule_csv(*tr, "cuda_memcpy_sync").value_or(""), &dropped), "");
    EXPECT_EQ(dropped, 1u);
    EXPECT_EQ(without_hip_rows(rule_csv(*tr, "cuda_api_sync").value_or(""), &dropped), "");
    EXPECT_EQ(dropped, 2u);
  }
}

// The timebase rule of nsys_sqlite_writer.h on the shapes of trace time there are.
TEST(AnalyzePyTorch, ExportTimebase) {
  Trace t;
  t.source.format = "kineto-json";
  EXPECT_EQ(export_timebase(t).shift_ns, 0);  // no events: nothing to move
  // Absolute epoch times (integer-µs eras): the second before the first event.
  t.api.start = {1695835572958056000, 1695835542481129000};
  ExportTimebase b = export_timebase(t);
  EXPECT_EQ(b.session_start_utc_ns, 1695835542000000000);
  EXPECT_EQ(b.shift_ns, 1695835542000000000);
  // An event on a whole second still starts after the session start.
  t.api.start = {1695835542000000000};
  EXPECT_EQ(export_timebase(t).session_start_utc_ns, 1695835541000000000);
  // Relative to baseTimeNanoseconds: the session start is absolute, the shift relative to the base.
  t.pytorch.base_time_ns = 1751410836000000000;
  t.api.start = {2204338329420671};
  b = export_timebase(t);
  EXPECT_EQ(b.session_start_utc_ns, 1753615174000000000);
  EXPECT_EQ(b.shift_ns, 2204338000000000);
  // Events before the base.
  t.api.start = {-5};
  b = export_timebase(t);
  EXPECT_EQ(b.session_start_utc_ns, 1751410835000000000);
  EXPECT_EQ(b.shift_ns, -1000000000);
  // nsys exports keep their own timebase.
  Trace n;
  n.source.format = "nsys-sqlite";
  n.source.session_start_utc_ns = 1779630014975716426;
  n.api.start = {-3};
  EXPECT_EQ(export_timebase(n).session_start_utc_ns, 1779630014975716426);
  EXPECT_EQ(export_timebase(n).shift_ns, 0);
}

}  // namespace
}  // namespace tracedoc::testing
