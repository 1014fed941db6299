// Golden tests for the `nvtx-name` report argument (kernel names prefixed with the innermost NVTX
// range around their launch) of cuda_gpu_kern_sum, cuda_gpu_kern_gb_sum, cuda_gpu_sum,
// cuda_api_gpu_sum, cuda_gpu_trace, cuda_kern_exec_sum and cuda_kern_exec_trace. The oracles in
// ../shared have no nvtx-name output, so tests/golden/nvtx_name keeps what the real nsys 2023.4.4
// printed (regen.sh wrote expected/): on synthetic exports built from SQL (edge cases), on the bundled
// example and on real exports of ../shared (big outputs sampled). cases.txt lists them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "nvtx_name"; }

struct ExportCase {
  std::string name;
  std::string source;  // sql:A.sql+B.sql, example:F, shared:D/F, reexport:D/F (see cases.txt)
  std::vector<std::string> reports;
};

std::vector<ExportCase> read_cases() {
  std::vector<ExportCase> cases;
  for (const auto& f : read_case_lines(golden_dir() / "cases.txt")) {  // name source kept reports
    cases.push_back({f[0], f.size() > 1 ? f[1] : "", split(f.size() > 3 ? f[3] : "", ',')});
  }
  return cases;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Writes a synthetic export to a fresh SQLite file.
std::string build_export(const ExportCase& c) {
  std::vector<fs::path> scripts;
  for (const auto& file : split(c.source.substr(4), '+')) scripts.push_back(golden_dir() / file);
  auto path = write_sql_export(scripts, "nvtx_name_" + c.name);
  EXPECT_TRUE(path.ok()) << path.status().message();
  return path.ok() ? *path : std::string();
}

// The export tracedoc reads for a case; empty when it needs ../shared and that is absent.
std::string input_path(const ExportCase& c) {
  if (starts_with(c.source, "example:"))
    return (fs::path(TRACEDOC_SOURCE_DIR) / "examples" / c.source.substr(8)).string();
  const fs::path traces = nsys_traces_dir();
  if (traces.empty()) return {};
  if (starts_with(c.source, "shared:")) return (traces / c.source.substr(7)).string();
  // The original old-schema file: tracedoc must give on it what nsys gives on its re-export.
  if (starts_with(c.source, "reexport:")) return (traces / (c.source.substr(9) + ".sqlite")).string();
  return {};
}

std::string expected_stem(const std::string& report) {
  std::string stem = "stats_" + report;
  std::replace(stem.begin(), stem.end(), ':', '_');
  return stem;
}

// A sampled golden: each row is "nsys line" + nsys's row at that line (0 = header); the last line of
// nsys's output is always there, so it also fixes the row count.
bool sampled_equal(const std::string& sampled, const std::string& actual, std::string* why) {
  const auto expected_rows = parse_csv(sampled);
  const auto actual_rows = parse_csv(actual);
  size_t last_line = 0;
  for (const auto& row : expected_rows) {
    const size_t line = row.at(0) == "nsys line" ? 0 : std::stoul(row.at(0));
    last_line = std::max(last_line, line);
    if (line >= actual_rows.size()) {
      *why = "line " + std::to_string(line) + " missing";
      return false;
    }
    const std::vector<std::string> want(row.begin() + 1, row.end());
    const auto& got = actual_rows[line];
    if (want.size() != got.size()) {
      *why = "column count on line " + std::to_string(line);
      return false;
    }
    for (size_t c = 0; c < want.size(); ++c) {
      if (cell_equal(want[c], got[c])) continue;
      *why = "line " + std::to_string(line) + " column " + std::to_string(c + 1) + ": expected '" + want[c] +
             "', got '" + got[c] + "'";
      return false;
    }
  }
  if (actual_rows.size() != last_line + 1) {
    *why = "row count: expected " + std::to_string(last_line + 1) + ", got " + std::to_string(actual_rows.size());
    return false;
  }
  return true;
}

struct ReportCase {
  ExportCase export_case;
  std::string report;  // with arguments, as `-r` takes it
};

std::vector<ReportCase> report_cases() {
  std::vector<ReportCase> out;
  for (const auto& c : read_cases()) {
    for (const auto& r : c.reports) out.push_back({c, r});
  }
  return out;
}

// Runs the report on `trace` and compares with what nsys printed (CSV, sample, or SKIPPED reason).
void expect_like_nsys(const Trace& trace, const std::string& path, const ReportCase& rc) {
  const fs::path dir = golden_dir() / "expected" / rc.export_case.name;
  const std::string stem = expected_stem(rc.report);
  const fs::path csv = dir / (stem + ".csv"), sampled = dir / (stem + ".sampled.csv"),
                 skipped = dir / (stem + ".skipped");
  ASSERT_EQ(fs::exists(csv) + fs::exists(sampled) + fs::exists(skipped), 1) << "no nsys output for " << rc.report;
  if (fs::exists(skipped)) {
    std::string reason = read_file(skipped);
    while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r')) reason.pop_back();
    const auto parts = split(rc.report, ':');
    ReportArgs args;
    args.args.assign(parts.begin() + 1, parts.end());
    TableSink sink;
    const Status st = find_report(parts[0])->run(trace, args, sink);
    EXPECT_EQ(st.code(), ErrorCode::kNoData);
    EXPECT_EQ(st.message(), path + " " + reason);  // nsys: "SKIPPED: <file> <reason>"
    return;
  }
  auto got = report_csv(trace, rc.report);
  ASSERT_TRUE(got.has_value()) << rc.report << " reported no data";
  std::string why;
  if (fs::exists(csv)) {
    EXPECT_TRUE(csv_equal(read_file(csv), *got, &why)) << rc.export_case.name << " " << rc.report << ": " << why;
  } else {
    EXPECT_TRUE(sampled_equal(read_file(sampled), *got, &why))
        << rc.export_case.name << " " << rc.report << ": " << why;
  }
}

class NvtxNameGolden : public ::testing::TestWithParam<ReportCase> {};

TRACEDOC_TEST_LABELS(NvtxNameGolden, corpus golden);

TEST_P(NvtxNameGolden, MatchesNsys) {
  const ReportCase& rc = GetParam();
  const auto parts = split(rc.report, ':');
  const auto* def = find_report(parts.at(0));
  ASSERT_NE(def, nullptr) << parts[0];
  const ExportCase& ec = rc.export_case;
  if (!starts_with(ec.source, "sql:")) {
    const std::string path = input_path(ec);
    if (path.empty()) GTEST_SKIP() << "../shared/traces/nsys not found: nvtx-name goldens on real exports skipped";
    expect_like_nsys(load_nsys(path), path, rc);
    return;
  }
  const std::string path = build_export(ec);
  ReportArgs args;
  args.args.assign(parts.begin() + 1, parts.end());
  // As the CLI loads (the report's tables and what its arguments add, fast scanner) and everything
  // through SQLite.
  NsysReadOptions as_cli;
  as_cli.tables = def->tables | nsys_stats::kernel_name_tables(args);
  NsysReadOptions through_sqlite;
  through_sqlite.fast_scan = false;
  through_sqlite.parallel = false;
  for (const NsysReadOptions& options : {as_cli, through_sqlite}) {
    auto trace = read_nsys_sqlite(path, options);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    expect_like_nsys(*trace, path, rc);
  }
  fs::remove(path);
}

std::string case_name(const ::testing::TestParamInfo<ReportCase>& info) {
  std::string n = info.param.export_case.name + "_" + info.param.report;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Exports, NvtxNameGolden, ::testing::ValuesIn(report_cases()), case_name);

TRACEDOC_TEST_LABELS(NvtxNameGoldenData, golden);

// nsys's output for the edge-case export names each launch as nvtx_ranges.sql says it should (a
// change to the SQL that loses a case shows here): correlation id -> kernel name in cuda_gpu_trace.
TEST(NvtxNameGoldenData, EdgeCasesNameEachLaunchAsDocumented) {
  const auto rows = parse_csv(read_file(golden_dir() / "expected" / "edge" / "stats_cuda_gpu_trace_nvtx-name.csv"));
  ASSERT_GT(rows.size(), 1u);
  std::map<std::string, std::string> name_of;  // CorrId -> Name (graph launch 17: both kernels agree)
  for (size_t r = 1; r < rows.size(); ++r) name_of[rows[r].at(2)] = rows[r].back();
  const std::string a = "void kernA<int>(int *)", b = "kernB(float)";
  const std::map<std::string, std::string> documented = {{"1", "inner/" + a},
                                                         {"3", "outer/" + a},
                                                         {"4", b},
                                                         {"5", "se1/" + a},
                                                         {"6", "se2/" + b},
                                                         {"7", "outer2/" + b},
                                                         {"8", b},
                                                         {"9", "open/" + a},
                                                         {"10", a},
                                                         {"11", "in domain/" + b},
                                                         {"12", "registered range/" + b},
                                                         {"13", "tieA/" + a},
                                                         {"14", "x/y/z"},
                                                         {"15", "x/y/z"},
                                                         {"16", "exact/" + a},
                                                         {"17", "outer2/" + b},
                                                         {"18", "outer/" + b},
                                                         {"19", "outer2/" + b},
                                                         {"50", a},
                                                         {"77", b},
                                                         {"99", b}};
  EXPECT_EQ(name_of, documented);
  // With the two names swapped, the lower row still wins: the name follows the row.
  const auto swapped =
      read_file(golden_dir() / "expected" / "edge_tie_swapped" / "stats_cuda_kern_exec_trace_nvtx-name.csv");
  EXPECT_NE(swapped.find("tieB/" + a), std::string::npos);
  EXPECT_EQ(swapped.find("tieA/" + a), std::string::npos);
}

TRACEDOC_TEST_LABELS(NvtxNameArgs, unit);

TEST(NvtxNameArgs, KernelNameTablesAddNvtxAndApiOnlyForNvtxName) {
  ReportArgs plain, nvtx;
  plain.args = {"base"};
  nvtx.args = {"nvtx-name", "base"};
  EXPECT_EQ(nsys_stats::kernel_name_tables(plain), 0u);
  EXPECT_EQ(nsys_stats::kernel_name_tables(nvtx), uint32_t{kLoadRanges | kLoadApi});
}

}  // namespace
}  // namespace tracedoc::testing
