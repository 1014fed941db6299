// --filter-time / --filter-nvtx / --all-ranks: the parsers against what nsys 2023.4.4's CLI reads
// (values probed with the real nsys), and filter + report against the CSVs the real nsys printed
// with the same filter (tests/golden/filters, listed with their commands in manifest.tsv).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "analysis/trace_filter.h"
#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

const fs::path kFilterGoldens = fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "filters";

// ---------------------------------------------------------------------------------------------
// --filter-time parser

struct TimeCase {
  const char* text;
  int64_t start, end;
};

TRACEDOC_TEST_LABELS(ParseTimeWindow, unit);

TEST(ParseTimeWindow, ReadsValuesAsNsysDoes) {
  // Expected values are what nsys 2023.4.4 passed to its report scripts for the same argument.
  const TimeCase cases[] = {
      {"60.2s/60.3s", 60'200'000'000, 60'300'000'000},
      {"1s2ms3us4ns/", 1'002'003'004, kMax},  // summable terms; omitted end
      {"/5", kMin, 5},                        // omitted start
      {"5ns/5", 5, 5},
      {"1e3/1e3", 1000, 1000},
      {"-1s/1.5ms", -1'000'000'000, 1'500'000},
      {"1h/", 3'600'000'000'000, kMax},
      {"1hour/", 3'600'000'000'000, kMax},
      {"1m/", 60'000'000'000, kMax},  // m is minutes
      {"1min/", 60'000'000'000, kMax},
      {"2.5m/", 150'000'000'000, kMax},
      {"1sec/", 1'000'000'000, kMax},
      {"1nsec/", 1, kMax},
      {"1usec/", 1000, kMax},
      {"1msec5/", 1'000'005, kMax},  // a unitless term is ns
      {"1ms500/", 1'000'500, kMax},
      {"5ns5/", 10, kMax},
      {"1s1s/", 2'000'000'000, kMax},    // units may repeat
      {"1s-500ms/", 500'000'000, kMax},  // signed terms
      {"1s+5/", 1'000'000'005, kMax},
      {"1s 2/", 1'000'000'002, kMax},  // blanks before a number are skipped
      {"0.1ns/0.9ns", 0, 0},           // fractions truncate toward zero...
      {"1.9/", 1, kMax},
      {"-1.9/", -1, kMax},
      {"-0.9ns/", 0, kMax},
      {"0.5ns0.5ns/", 0, kMax},  // ...term by term
      {"1.005us/", 1004, kMax},  // double arithmetic: 1.005 * 1000 < 1005
      {"1.13us/", 1130, kMax},
      {"4.35s/", 4'350'000'000, kMax},
      {"0.000001s/", 1000, kMax},
      {"1e-9s/", 1, kMax},
      {"1.5e3us/", 1'500'000, kMax},
      {"1e+3/", 1000, kMax},
      {"1.s/", 1'000'000'000, kMax},
      {"+5/", 5, kMax},
      {"010/", 10, kMax},   // decimal, not octal
      {"0x10/", 16, kMax},  // hexadecimal goes through strtod
      {"0x10s/", 16'000'000'000, kMax},
      {"0x1p4/", 16, kMax},
      {"9223372036854775807/", kMax, kMax},
      {"-9223372036854775808/", kMin, kMax},
      {"9223372036854775807ns1ns/", kMin, kMax},        // integer sums wrap
      {"3000000h/", -7'646'744'073'709'551'616, kMax},  // integer products wrap
      {"1e19/", kMin, kMax},                            // out-of-range doubles become INT64_MIN
      {"1e308s/", kMin, kMax},
      {"0xffffffffffffffff/", kMin, kMax},
      {"/-5", kMin, -5},
      {"5/ 6", 5, 6},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto w = parse_time_window(c.text);
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(w->start, c.start);
    EXPECT_EQ(w->end, c.end);
  }
}

TEST(ParseTimeWindow, RejectsWhatNsysRejects) {
  const char* bad[] = {
      "5",                      // no slash
      "/",                      // no value
      "",                       //
      "abc/",                   // not a number
      ".5s/",                   // nsys needs a digit (or sign and digit) first
      "-/",                     //
      "+-1/",                   //
      "nan/",                   //
      "inf/",                   //
      "1S/2s",                  // units are lower case
      "1d/",                    // unknown unit
      "1 s/",                   // a blank between number and unit
      "5 3/",                   //
      "5-3/",                   // a sign right after a number without unit
      "1mss/",                  // "ms" then "s" without a number
      "1sx/",                   //
      "1mins/",                 //
      "1ns-/",                  //
      "1e/",                    //
      "1.2.3/",                 //
      "1e3e3/",                 //
      "1s /",                   // trailing blank
      " /5",                    // a blank is not an omitted side
      "1//2",                   // the end side is "/2"
      "1/2/3",                  //
      "9223372036854775808/",   // integer overflow
      "-9223372036854775809/",  //
      "1e400/",                 // double overflow
      "1e-400/",                // and underflow
      "5/3",                    // start after end
      "2ns5us2/5",              // 5004 > 5
      "1e-3s/2",                //
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    auto w = parse_time_window(text);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), ErrorCode::kUsage);
    EXPECT_NE(w.status().message().find("--filter-time"), std::string::npos) << w.status().message();
  }
}

// ---------------------------------------------------------------------------------------------
// --filter-nvtx parser

TRACEDOC_TEST_LABELS(ParseNvtxFilter, golden);

TEST(ParseNvtxFilter, SplitsTheIndexOnlyWhenItIsANonNegativeInteger) {
  struct Case {
    const char* text;
    const char* name;
    int64_t index;
  };
  const Case cases[] = {
      {"step", "step", 0},
      {"step/3", "step", 3},
      {"step@Train/3", "step@Train", 3},  // the domain stays part of the compared name
      {"a/b/2", "a/b", 2},                // the last slash
      {"fwd/bwd", "fwd/bwd", 0},          // not a number: part of the name
      {"x/-1", "x/-1", 0},                // negative: part of the name
      {"x/-0", "x", 0},                   // Python's int("-0") is 0
      {"x/+2", "x", 2},
      {"x/ 2 ", "x", 2},   // int() strips blanks
      {"x/1_0", "x", 10},  // and accepts digit separators
      {"x/1__0", "x/1__0", 0},
      {"x/_1", "x/_1", 0},
      {"x/1_", "x/1_", 0},
      {"x/", "x/", 0},
      {"x/0x10", "x/0x10", 0},
      {"x/1.0", "x/1.0", 0},
      {"/5", "", 5},
      {" ncclSend / 3", " ncclSend ", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto spec = parse_nvtx_filter(c.text);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_EQ(spec->name, c.name);
    EXPECT_EQ(spec->index, c.index);
    EXPECT_EQ(spec->argument, c.text);
  }
  EXPECT_FALSE(parse_nvtx_filter("").ok());
}

// ---------------------------------------------------------------------------------------------
// Inputs

// Builds an export from SQL scripts (run in order) in a temporary file, and reads it.
Result<Trace> load_sql_export(const std::vector<fs::path>& scripts) {
  auto path = write_sql_export(scripts, "filter_test");
  if (!path.ok()) return path.status();
  auto trace = read_nsys_sqlite(*path);
  fs::remove(*path);
  return trace;
}

// "shared:PATH", "source:PATH" or "sql:PATH[+PATH...]" of the manifest. Sets `skip` (and fails) when
// the shared traces are absent.
Result<Trace> load_input(const std::string& input, std::string* skip) {
  const size_t colon = input.find(':');
  const std::string kind = input.substr(0, colon), path = input.substr(colon + 1);
  if (kind == "shared") {
    const fs::path root = nsys_traces_dir();
    if (root.empty() || !fs::exists(root / path)) {
      *skip = "../shared/traces/nsys/" + path + " not found: filter golden test on a real export skipped";
      return UsageError(*skip);
    }
    return read_nsys_sqlite((root / path).string());
  }
  if (kind == "source") return read_nsys_sqlite((fs::path(TRACEDOC_SOURCE_DIR) / path).string());
  if (kind == "sql") {
    std::vector<fs::path> scripts;
    for (const auto& p : split(path, '+')) scripts.push_back(fs::path(TRACEDOC_SOURCE_DIR) / p);
    return load_sql_export(scripts);
  }
  return UsageError("unknown input kind in manifest: " + input);
}

Trace load_edge_cases() {
  auto trace = load_sql_export({kFilterGoldens / "edge_cases.sql"});
  if (!trace.ok()) throw std::runtime_error(trace.status().message());
  return std::move(trace).value();
}

// ---------------------------------------------------------------------------------------------
// Goldens

struct GoldenCase {
  std::string name, input, filter, value, nsys_window;
  std::vector<std::string> reports;
  std::string pending;  // why tracedoc does not match nsys yet; empty when it must
};

// Names the case in gtest's failure messages instead of dumping its bytes.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::vector<GoldenCase> read_manifest() {
  std::vector<GoldenCase> cases;
  std::ifstream in(kFilterGoldens / "manifest.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto fields = split(line, '\t');
    fields.resize(7);
    cases.push_back({fields[0], fields[1], fields[3], fields[4], fields[5], split(fields[2], ','), fields[6]});
  }
  return cases;
}

TraceFilter filter_of(const GoldenCase& c) {
  TraceFilter filter;
  if (c.filter == "time") {
    auto w = parse_time_window(c.value);
    if (!w.ok()) throw std::runtime_error(w.status().message());
    filter.window = *w;
  } else {
    auto spec = parse_nvtx_filter(c.value);
    if (!spec.ok()) throw std::runtime_error(spec.status().message());
    filter.nvtx = *spec;
    filter.all_ranks = c.filter == "nvtx+all-ranks";
  }
  return filter;
}

class FilterGolden : public ::testing::TestWithParam<GoldenCase> {};

TRACEDOC_TEST_LABELS(FilterGolden, corpus golden);

TEST_P(FilterGolden, ReportsEqualNsys) {
  const GoldenCase& c = GetParam();
  std::string skip;
  auto trace = load_input(c.input, &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Status st = apply_filter(*trace, filter_of(c));
  ASSERT_TRUE(st.ok()) << st.message();
  std::string first_mismatch;
  for (const auto& report : c.reports) {
    SCOPED_TRACE(report);
    std::string file = report;
    std::replace(file.begin(), file.end(), ':', '_');
    const fs::path golden = kFilterGoldens / c.name / (file + ".csv");
    ASSERT_TRUE(fs::exists(golden)) << golden << " missing: run regenerate.sh";
    const auto csv = report_csv(*trace, report);
    std::string why = "tracedoc skipped the report, nsys did not";
    const bool equal = csv.has_value() && csv_equal(read_file(golden), *csv, &why);
    if (c.pending.empty()) {
      EXPECT_TRUE(equal) << why;
    } else if (!equal && first_mismatch.empty()) {
      first_mismatch = report + ": " + why;
    }
  }
  if (!c.pending.empty()) {
    if (!first_mismatch.empty()) GTEST_SKIP() << c.pending << " [" << first_mismatch << "]";
    FAIL() << "matches nsys now: remove the pending note of " << c.name << " in manifest.tsv";
  }
}

std::string golden_test_name(const ::testing::TestParamInfo<GoldenCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Manifest, FilterGolden, ::testing::ValuesIn(read_manifest()), golden_test_name);

TRACEDOC_TEST_LABELS(FilterGoldenManifest, golden);

TEST(FilterGoldenManifest, ListsEveryGoldenDirectory) {
  std::set<std::string> listed;
  for (const auto& c : read_manifest()) {
    EXPECT_TRUE(listed.insert(c.name).second) << "duplicate case " << c.name;
    EXPECT_FALSE(c.reports.empty()) << c.name;
    if (c.filter == "nvtx+all-ranks") {
      EXPECT_FALSE(c.nsys_window.empty()) << c.name;
    }
  }
  EXPECT_GE(listed.size(), 20u);
  for (const auto& d : fs::directory_iterator(kFilterGoldens)) {
    if (d.is_directory()) {
      EXPECT_TRUE(listed.count(d.path().filename().string())) << d.path() << " not in manifest.tsv";
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Behaviour on the hand-written export (always available)

constexpr int64_t kMainThread = (int64_t{100} << 24) | 100;
constexpr int64_t kWorkerThread = (int64_t{100} << 24) | 101;
constexpr int64_t kOtherProcessThread = (int64_t{200} << 24) | 200;
constexpr int64_t kOtherProcess = int64_t{200} << 24;

NvtxFilterSpec nvtx_spec(const std::string& text) { return parse_nvtx_filter(text).value(); }

size_t count_of(const std::vector<int64_t>& ids, int64_t id) { return std::count(ids.begin(), ids.end(), id); }

TRACEDOC_TEST_LABELS(ApplyFilter, corpus);

TEST(ApplyFilter, AllRanksKeepsTheOtherProcesses) {
  Trace restricted = load_edge_cases(), all_ranks = load_edge_cases();
  TraceFilter filter;
  filter.nvtx = nvtx_spec("step@Train");  // push/pop on the worker thread, [1000, 2000)
  ASSERT_TRUE(apply_filter(restricted, filter).ok());
  filter.all_ranks = true;
  ASSERT_TRUE(apply_filter(all_ranks, filter).ok());

  // Restricted: the worker thread only, for tables with thread ids; process 100 for kernels.
  for (int64_t tid : restricted.api.global_tid) EXPECT_EQ(tid, kWorkerThread);
  for (int64_t tid : restricted.os_calls.global_tid) EXPECT_EQ(tid, kWorkerThread);
  for (int64_t pid : restricted.kernels.global_pid) EXPECT_EQ(pid, int64_t{100} << 24);
  EXPECT_EQ(restricted.api.size(), 2u);

  // All ranks: the same window, every thread and process.
  EXPECT_EQ(count_of(all_ranks.api.global_tid, kOtherProcessThread), 2u);
  EXPECT_EQ(count_of(all_ranks.api.global_tid, kMainThread), 4u);
  EXPECT_EQ(count_of(all_ranks.api.global_tid, kWorkerThread), 2u);
  EXPECT_EQ(count_of(all_ranks.kernels.global_pid, kOtherProcess), 2u);
  EXPECT_EQ(count_of(all_ranks.os_calls.global_tid, kOtherProcessThread), 1u);

  // Equal to the plain time filter over the range's bounds.
  Trace by_time = load_edge_cases();
  TraceFilter time_filter;
  time_filter.window = TimeWindow{1000, 2000};
  ASSERT_TRUE(apply_filter(by_time, time_filter).ok());
  EXPECT_EQ(by_time.api.start, all_ranks.api.start);
  EXPECT_EQ(by_time.kernels.start, all_ranks.kernels.start);
  EXPECT_EQ(by_time.ranges.start, all_ranks.ranges.start);
}

TEST(ApplyFilter, NvtxOverridesTheTimeWindow) {
  Trace trace = load_edge_cases();
  TraceFilter filter;
  filter.window = TimeWindow{0, 1};
  filter.nvtx = nvtx_spec("epoch");  // start/end on the main thread: the whole process
  ASSERT_TRUE(apply_filter(trace, filter).ok());
  EXPECT_EQ(count_of(trace.api.global_tid, kWorkerThread), 3u);
  EXPECT_EQ(count_of(trace.api.global_tid, kOtherProcessThread), 0u);
}

TEST(ApplyFilter, KeepsOverlappingEventsWholeAndColumnsAligned) {
  Trace trace = load_edge_cases();
  TraceFilter filter;
  filter.window = TimeWindow{1000, 2000};
  ASSERT_TRUE(apply_filter(trace, filter).ok());
  const auto& a = trace.api;
  // Not clipped: the call spanning the window keeps its own bounds.
  bool spanning = false;
  for (size_t i = 0; i < a.size(); ++i) spanning |= a.start[i] == 500 && a.end[i] == 2500;
  EXPECT_TRUE(spanning);
  // Starting at the window end, or empty at it: out; ending at the window start: in.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT(a.start[i], 2000);
  EXPECT_EQ(std::count(a.end.begin(), a.end.end(), 1000), 2);
  for (auto* column : {&a.end, &a.global_tid, &a.correlation, &a.return_value}) EXPECT_EQ(column->size(), a.size());
  EXPECT_EQ(a.name.size(), a.size());
  EXPECT_EQ(a.api_class.size(), a.size());
  const auto& k = trace.kernels;
  EXPECT_EQ(k.grid_x.size(), k.size());
  EXPECT_EQ(k.graph_node_id.size(), k.size());
  EXPECT_EQ(trace.ranges.range_id.size(), trace.ranges.size());
}

TEST(ApplyFilter, LeavesTablesWithoutEndAlone) {
  Trace trace = load_edge_cases();
  for (TimeNs t : {0, 1500, 5000}) {
    trace.memory.time.push_back(t);
    trace.memory.global_pid.push_back(kOtherProcess);
    trace.memory.address.push_back(0);
    trace.memory.bytes.push_back(1);
    trace.memory.correlation.push_back(0);
    trace.memory.device.push_back(0);
    trace.memory.mem_kind.push_back(0);
    trace.memory.operation.push_back(0);
  }
  TraceFilter filter;
  filter.nvtx = nvtx_spec("step@Train");
  ASSERT_TRUE(apply_filter(trace, filter).ok());
  EXPECT_EQ(trace.memory.size(), 3u);  // nsys has no view for CUDA_GPU_MEMORY_USAGE_EVENTS
}

TEST(ApplyFilter, NoFilterChangesNothing) {
  Trace trace = load_edge_cases();
  const size_t api = trace.api.size(), ranges = trace.ranges.size();
  ASSERT_TRUE(apply_filter(trace, TraceFilter{}).ok());
  EXPECT_EQ(trace.api.size(), api);
  EXPECT_EQ(trace.ranges.size(), ranges);
}

TEST(ApplyFilter, UnknownRangeIsAUsageErrorNamingIt) {
  for (const char* missing : {"nosuch", "step", "step@Train/2", "layer/2", "fwd/3", "mark_inside"}) {
    SCOPED_TRACE(missing);
    Trace trace = load_edge_cases();
    TraceFilter filter;
    filter.nvtx = nvtx_spec(missing);
    const Status st = apply_filter(trace, filter);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.code(), ErrorCode::kUsage);
    EXPECT_NE(st.message().find(std::string("NVTX range '") + missing + "' could not be found"), std::string::npos)
        << st.message();
  }
}

TEST(ApplyFilter, NeverClosedRangeIsAnError) {
  // nsys 2023.4.4 fails with a Python TypeError here; tracedoc says why.
  Trace trace = load_edge_cases();
  TraceFilter filter;
  filter.nvtx = nvtx_spec("never_closed");
  const Status st = apply_filter(trace, filter);
  EXPECT_EQ(st.code(), ErrorCode::kUsage);
  EXPECT_NE(st.message().find("never closed"), std::string::npos) << st.message();
}

TEST(ApplyFilter, AllRanksOnARealTwoProcessExport) {
  const fs::path root = nsys_traces_dir();
  const fs::path path = root.empty() ? fs::path() : root / "nsys-ai" / "mfu_2gpu_before.sqlite";
  if (path.empty() || !fs::exists(path)) GTEST_SKIP() << "../shared/traces/nsys not found: skipped";
  auto restricted = read_nsys_sqlite(path.string());
  auto all_ranks = read_nsys_sqlite(path.string());
  ASSERT_TRUE(restricted.ok() && all_ranks.ok());
  TraceFilter filter;
  filter.nvtx = nvtx_spec("AllToAll4D, seq = 46286, op_id = 994090");  // a range of pid 145
  ASSERT_TRUE(apply_filter(*restricted, filter).ok());
  filter.all_ranks = true;
  ASSERT_TRUE(apply_filter(*all_ranks, filter).ok());
  auto pids = [](const std::vector<int64_t>& ids) {
    std::set<int64_t> out;
    for (int64_t id : ids) out.insert(pid_of(id));
    return out;
  };
  EXPECT_EQ(pids(restricted->kernels.global_pid), std::set<int64_t>({145}));
  EXPECT_EQ(pids(restricted->api.global_tid), std::set<int64_t>({145}));
  EXPECT_EQ(pids(all_ranks->kernels.global_pid), std::set<int64_t>({144, 145}));
  EXPECT_EQ(pids(all_ranks->api.global_tid), std::set<int64_t>({144, 145}));
}

TRACEDOC_TEST_LABELS(StatsCli, unit);

// The CLI maps filter errors to exit status 2 (bad input / usage).
TEST(StatsCli, FilterErrorsExitWithStatus2) {
  const fs::path tracedoc = fs::path(TRACEDOC_BINARY_DIR) / "tracedoc";
  const fs::path example = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";
  if (!fs::exists(tracedoc) || !fs::exists(example)) GTEST_SKIP() << "tracedoc binary or example export not built";
  auto run = [&](const std::string& args) {
    const std::string cmd = fmt::format("'{}' stats -r nvtx_sum -f csv {} '{}' > /dev/null 2>&1", tracedoc.string(),
                                        args, example.string());
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run("--filter-nvtx nosuch_range"), 2);
  EXPECT_EQ(run("--filter-time 5/3"), 2);
  EXPECT_EQ(run("--filter-time 1x/"), 2);
  EXPECT_EQ(run("--filter-nvtx 'train_step 1'"), 0);
  EXPECT_EQ(run("--filter-time 1.2s/"), 0);
}

}  // namespace
}  // namespace tracedoc::testing
