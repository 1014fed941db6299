// Golden tests for um_sum and openmp_sum. None of the real exports in ../shared holds Unified
// Memory or OpenMP data, so tests/golden/um_openmp builds small exports from SQL (cases.txt lists
// them) and keeps what the real nsys 2023.4.4 printed for each report (regen.sh wrote expected/):
// tracedoc's CSV must equal nsys's, and where nsys printed SKIPPED, tracedoc must report NoData with
// the same reason.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

fs::path golden_dir() { return fs::path(TRACEDOC_SOURCE_DIR) / "tests" / "golden" / "um_openmp"; }

struct ExportCase {
  std::string name;
  std::vector<std::string> sql_files;
  std::vector<std::string> reports;
};

std::vector<ExportCase> read_cases() {
  std::vector<ExportCase> cases;
  for (const auto& f : read_case_lines(golden_dir() / "cases.txt")) {  // name sql+sql reports
    cases.push_back({f[0], split(f.size() > 1 ? f[1] : "", '+'), split(f.size() > 2 ? f[2] : "", ',')});
  }
  return cases;
}

// Writes the case's export to a fresh SQLite file.
std::string build_export(const ExportCase& c) {
  std::vector<fs::path> scripts;
  for (const auto& file : c.sql_files) scripts.push_back(golden_dir() / file);
  auto path = write_sql_export(scripts, "um_openmp_" + c.name);
  EXPECT_TRUE(path.ok()) << path.status().message();
  return path.ok() ? *path : std::string();
}

// nsys names the output of `-r um_sum:rows=20` stats_um_sum_rows=20.csv.
std::string expected_stem(const std::string& report) {
  std::string stem = "stats_" + report;
  std::replace(stem.begin(), stem.end(), ':', '_');
  return stem;
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

class UmOpenMpGolden : public ::testing::TestWithParam<ReportCase> {};

TRACEDOC_TEST_LABELS(UmOpenMpGolden, golden);

TEST_P(UmOpenMpGolden, MatchesNsys) {
  const ReportCase& rc = GetParam();
  const std::string report_name = split(rc.report, ':').at(0);
  const auto* def = find_report(report_name);
  ASSERT_NE(def, nullptr) << report_name;
  const fs::path expected_dir = golden_dir() / "expected" / rc.export_case.name;
  const fs::path expected_csv = expected_dir / (expected_stem(rc.report) + ".csv");
  const fs::path expected_skip = expected_dir / (expected_stem(rc.report) + ".skipped");
  ASSERT_TRUE(fs::exists(expected_csv) != fs::exists(expected_skip)) << "no nsys output for " << rc.report;

  const std::string path = build_export(rc.export_case);
  // As the CLI loads (only the report's tables, fast scanner) and everything through SQLite.
  NsysReadOptions as_cli;
  as_cli.tables = def->tables;
  NsysReadOptions through_sqlite;
  through_sqlite.fast_scan = false;
  through_sqlite.parallel = false;
  for (const NsysReadOptions& options : {as_cli, through_sqlite}) {
    auto trace = read_nsys_sqlite(path, options);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    if (fs::exists(expected_skip)) {
      std::string reason = read_file(expected_skip);
      while (!reason.empty() && (reason.back() == '\n' || reason.back() == '\r')) reason.pop_back();
      ReportArgs args;
      const auto parts = split(rc.report, ':');
      args.args.assign(parts.begin() + 1, parts.end());
      TableSink sink;
      const Status st = def->run(*trace, args, sink);
      EXPECT_EQ(st.code(), ErrorCode::kNoData);
      EXPECT_EQ(st.message(), path + " " + reason);  // nsys: "SKIPPED: <file> <reason>"
    } else {
      auto got = report_csv(*trace, rc.report);
      ASSERT_TRUE(got.has_value()) << rc.report << " reported no data";
      std::string why;
      EXPECT_TRUE(csv_equal(read_file(expected_csv), *got, &why))
          << rc.export_case.name << " " << rc.report << ": " << why;
    }
  }
  fs::remove(path);
}

std::string case_name(const ::testing::TestParamInfo<ReportCase>& info) {
  std::string n = info.param.export_case.name + "_" + info.param.report;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(SyntheticExports, UmOpenMpGolden, ::testing::ValuesIn(report_cases()), case_name);

TRACEDOC_TEST_LABELS(UmOpenMpGoldenData, golden);

// The goldens cover the cases they were made for (a change to the SQL that drops them shows here).
TEST(UmOpenMpGoldenData, ExpectedOutputsHaveTheirRows) {
  auto rows = [](const std::string& rel) { return parse_csv(read_file(golden_dir() / "expected" / rel)).size(); };
  EXPECT_EQ(rows("um_openmp/stats_um_sum.csv"), 1 + 10u);          // the default limit
  EXPECT_EQ(rows("um_openmp/stats_um_sum_rows=20.csv"), 1 + 16u);  // every address
  EXPECT_EQ(rows("um_openmp/stats_openmp_sum.csv"), 1 + 12u);
  EXPECT_EQ(rows("um_edge_values/stats_um_sum_rows=30.csv"), 1 + 22u);
}

TRACEDOC_TEST_LABELS(UmOpenMpReader, unit);

// What the reader puts in the model: UVM rows only (not the ordinary copies), every fault, every
// OpenMP table with its rows.
TEST(UmOpenMpReader, LoadsUnifiedMemoryAndOpenMpTables) {
  ExportCase full;
  for (const auto& c : read_cases()) {
    if (c.name == "um_openmp") full = c;
  }
  ASSERT_FALSE(full.name.empty());
  const std::string path = build_export(full);
  auto trace = read_nsys_sqlite(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const auto& um = trace->unified_memory;
  EXPECT_EQ(um.migrations.size(), 22u);
  EXPECT_EQ(um.cpu_faults.size(), 12u);
  EXPECT_EQ(um.gpu_faults.size(), 11u);
  EXPECT_EQ(trace->memcpys.size(), 24u);  // the memcpy table keeps every copy
  for (size_t i = 0; i < um.migrations.size(); ++i) {
    EXPECT_GE(um.migrations.copy_kind[i], static_cast<uint8_t>(CopyKind::kUvmHtoD));
    EXPECT_LE(um.migrations.copy_kind[i], static_cast<uint8_t>(CopyKind::kUvmDtoD));
    EXPECT_NE(um.migrations.virtual_address[i], kNoValue);
  }
  const auto& omp = trace->openmp;
  EXPECT_EQ(omp.source_tables.size(), 7u);
  EXPECT_EQ(omp.size(), 61u);
  size_t parallel_rows = 0;
  for (size_t i = 0; i < omp.size(); ++i) {
    if (omp.source_tables[omp.source[i]] != "OPENMP_EVENT_KIND_PARALLEL") continue;
    ++parallel_rows;
    EXPECT_EQ(trace->str(omp.name[i]), "ompt_parallel");
    EXPECT_EQ(omp.event_kind[i], 28);
  }
  EXPECT_EQ(parallel_rows, 3u);
  fs::remove(path);
}

TRACEDOC_TEST_LABELS(UmSumArgs, unit);

TEST(UmSumArgs, RowsMustBeAnInteger) {
  Trace trace;
  trace.source.tables = {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUDA_UM_CPU_PAGE_FAULT_EVENTS",
                         "CUDA_UM_GPU_PAGE_FAULT_EVENTS"};
  ReportArgs args;
  args.args = {"rows=ten"};
  TableSink sink;
  EXPECT_EQ(find_report("um_sum")->run(trace, args, sink).code(), ErrorCode::kUsage);
}

}  // namespace
}  // namespace tracedoc::testing
