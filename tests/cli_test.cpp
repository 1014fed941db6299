// End-to-end tests of the `tracedoc` binary: exact output on stdout and in files, exit codes,
// one-line errors for bad input, no partial output files, inputs left untouched.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kSource(TRACEDOC_SOURCE_DIR);
const fs::path kExample = kSource / "examples" / "toy_training.sqlite";
const fs::path kGolden = kSource / "tests" / "golden" / "toy_training";

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

TRACEDOC_TEST_LABELS(Cli, corpus golden);

TEST(Cli, CsvOnStdoutIsExactlyTheNsysReport) {
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_api_sum", "nvtx_sum", "cuda_gpu_trace", "osrt_sum"}) {
    CliRun r = tracedoc({"stats", "-r", report, "-f", "csv", "-o", "-", kExample.string()});
    EXPECT_EQ(r.exit_code, 0) << report << ": " << r.err;
    EXPECT_EQ(r.out, read_file(kGolden / (std::string("stats_") + report + ".csv"))) << report;
    EXPECT_EQ(r.err, "") << report;
  }
}

TEST(Cli, TimeUnitsConvertAsNsysDoes) {
  int compared = 0;
  for (const auto& f : fs::directory_iterator(kGolden / "timeunit")) {
    const std::string name = f.path().stem().string();  // <unit>_<report>
    const std::string unit = name.substr(0, name.find('_'));
    const std::string report = name.substr(name.find('_') + 1);
    CliRun r =
        tracedoc({"stats", "-r", report, "-f", "csv", "--timeunit", unit == "sec" ? "s" : unit, kExample.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, read_file(f.path())) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 12);
}

TEST(Cli, OutputFilesAreWrittenWholeWithNsysNames) {
  ScratchDir dir;
  const std::string base = (dir.path() / "run").string();
  CliRun r = tracedoc({"stats", "-r", "cuda_api_sum,cuda_gpu_mem_size_sum,nvtx_startend_sum", "-f", "csv", "-o", base,
                       kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(base + "_cuda_api_sum.csv"), read_file(kGolden / "stats_cuda_api_sum.csv"));
  EXPECT_EQ(read_file(base + "_cuda_gpu_mem_size_sum.csv"), read_file(kGolden / "stats_cuda_gpu_mem_size_sum.csv"));
  // No start/end ranges: nsys writes an empty file, so does tracedoc.
  EXPECT_TRUE(fs::exists(base + "_nvtx_startend_sum.csv"));
  EXPECT_EQ(fs::file_size(base + "_nvtx_startend_sum.csv"), 0u);
  size_t files = 0;
  for (const auto& f : fs::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(f.path().string().find(".tmp-"), std::string::npos) << "temporary file left: " << f.path();
  }
  EXPECT_EQ(files, 3u);
}

TEST(Cli, JsonCarriesSchemaVersion) {
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "json", kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"schema_version\": 1"), std::string::npos);
  EXPECT_NE(r.out.find("\"Total Time (ns)\": 8943132"), std::string::npos) << r.out.substr(0, 600);
}

TEST(Cli, DefaultReportsAndColumnFormat) {
  CliRun r = tracedoc({"stats", "-f", "column", kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):"), std::string::npos);
  EXPECT_NE(r.out.find("ampere_sgemm_64x64_nn"), std::string::npos);
}

TEST(Cli, InputIsNeverModified) {
  ScratchDir dir;
  const fs::path copy = dir.path() / "input.sqlite";
  fs::copy_file(kExample, copy);
  const auto before_time = fs::last_write_time(copy);
  const std::string before = read_file(copy);
  for (const auto* def : {"cuda_gpu_trace", "cuda_api_sum,nvtx_sum", "cuda_gpu_kern_sum:base"}) {
    CliRun r = tracedoc({"stats", "-r", def, "-f", "csv", "-o", (dir.path() / "out").string(), copy.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(read_file(copy), before);
  EXPECT_EQ(fs::last_write_time(copy), before_time);
  EXPECT_FALSE(fs::exists(copy.string() + "-journal"));
}

// Every bad input: exit code 2, one line on stderr naming the file, nothing on stdout, no file.
void expect_rejected(const fs::path& input, const std::string& what, const std::string& path_env = "") {
  ScratchDir out;
  CliRun r = tracedoc({"stats", "-f", "csv", "-o", (out.path() / "base").string(), input.string()}, path_env);
  EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << what << ": " << r.err;
  EXPECT_NE(r.err.find(input.string()), std::string::npos) << what << ": error does not name the file: " << r.err;
  EXPECT_EQ(r.out, "") << what;
  EXPECT_TRUE(fs::is_empty(out.path())) << what << ": output file left behind";
}

TEST(Cli, BadInputsAreRejectedCleanly) {
  ScratchDir dir;
  expect_rejected(dir.path() / "missing.sqlite", "missing file");
  expect_rejected(dir.path(), "a directory");
  expect_rejected(dir.write("empty.sqlite", ""), "zero-length file");
  expect_rejected(dir.write("notes.sqlite", "this is not a database\n"), "text file");
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919 + 13) & 0xFF);
  expect_rejected(dir.write("garbage.bin", garbage), "binary garbage");
  const std::string example = read_file(kExample);
  expect_rejected(dir.write("truncated.sqlite", example.substr(0, 16384)), "truncated export");
  expect_rejected(dir.write("header_only.sqlite", example.substr(0, 100)), "SQLite header only");
  // A sound SQLite file that is not an nsys export.
  const fs::path plain = dir.path() / "plain.sqlite";
  sqlite3* db = nullptr;
  sqlite3_open(plain.c_str(), &db);
  sqlite3_exec(db, "CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  expect_rejected(plain, "SQLite without nsys tables");
  // An export that another program is writing (its hot journal exists).
  const fs::path busy = dir.path() / "busy.sqlite";
  fs::copy_file(kExample, busy);
  dir.write("busy.sqlite-journal", std::string(512, 'j'));
  expect_rejected(busy, "export being written");
  // A .nsys-rep with no nsys to export it.
  expect_rejected(dir.write("report.nsys-rep", garbage), ".nsys-rep without nsys", "/nonexistent-dir");
}

std::string gzip_bytes(const std::string& text) {
  ScratchDir dir;
  const fs::path p = dir.path() / "x.gz";
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return read_file(p);
}

const char* kTinyKineto = R"J({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1.000, "dur": 10.000, "args": {}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 2.000, "dur": 3.000,
   "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 6.500, "dur": 2.250,
   "args": {"correlation": 5, "stream": 7, "device": 0}}
], "baseTimeNanoseconds": 1000000000})J";

TEST(Cli, BadPyTorchTracesAreRejectedCleanly) {
  ScratchDir dir;
  const std::string doc = kTinyKineto;
  expect_rejected(dir.write("cut.json", doc.substr(0, doc.size() / 2)), "truncated JSON");
  const std::string gz = gzip_bytes(doc + std::string(100000, ' '));
  expect_rejected(dir.write("cut.json.gz", gz.substr(0, gz.size() - 20)), "truncated gzip");
  expect_rejected(dir.write("flipped.json.gz", gz.substr(0, 10) + std::string(64, '\x55') + gz.substr(74)),
                  "corrupt gzip");
  expect_rejected(dir.write("meta.json", R"({"schema": "1.0.1", "nodes": []})"), "JSON that is not a trace");
  expect_rejected(dir.write("list.json", R"([{"file": "bs_32_rank0.json.gz"}])"), "array that is not a trace");
  expect_rejected(dir.write("quote.json", R"([{"name": "say "hi"", "ph": "X", "ts": 1, "dur": 1}])"),
                  "unescaped quote");
  expect_rejected(dir.write("empty.json", ""), "empty JSON file");
}

TEST(Cli, PyTorchInputsAreNeverModified) {
  ScratchDir dir;
  const fs::path gz = dir.write("rank0.pt.trace.json.gz", gzip_bytes(kTinyKineto));
  const fs::path plain = dir.write("rank1.pt.trace.json", kTinyKineto);
  std::vector<std::pair<fs::path, std::string>> before;
  for (const fs::path& p : {gz, plain}) before.emplace_back(p, read_file(p));
  const auto gz_time = fs::last_write_time(gz), plain_time = fs::last_write_time(plain);
  ScratchDir out;
  for (const auto& input : {gz.string(), plain.string(), dir.path().string()}) {
    for (const auto* def : {"cuda_gpu_trace", "op_sum,step_sum", "cuda_gpu_kern_sum:base"}) {
      CliRun r = tracedoc({"stats", "-r", def, "-f", "csv", "-o", (out.path() / "out").string(), input});
      EXPECT_EQ(r.exit_code, 0) << input << " " << def << ": " << r.err;
    }
  }
  for (const auto& [p, bytes] : before) EXPECT_EQ(read_file(p), bytes) << p;
  EXPECT_EQ(fs::last_write_time(gz), gz_time);
  EXPECT_EQ(fs::last_write_time(plain), plain_time);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 2);  // nothing added
}

TEST(Cli, PyTorchTraceReports) {
  ScratchDir dir;
  const fs::path trace = dir.write("tiny.pt.trace.json.gz", gzip_bytes(kTinyKineto));
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum,op_sum", "-f", "csv", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n"
            "100.0,2250,1,2250.0,2250.0,2250,2250,0.0,gemm\n\n"
            "CPU Time (%),CPU Total (ns),CPU Self (ns),Calls,GPU Total (ns),GPU Self (ns),Kernels,Operator\n"
            "100.0,10000,10000,1,2250,2250,1,aten::mm\n");
  // A negative duration is counted in one warning line, not fatal.
  std::string negative = kTinyKineto;
  negative.replace(negative.find("\"dur\": 2.250"), 12, "\"dur\": -2.25");
  r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", dir.write("neg.json", negative).string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("events 1 ending before they start (read with duration 0)"), std::string::npos) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
}

TEST(Cli, MaxMemoryStopsReadingCleanly) {
  ScratchDir dir;
  std::string doc = "{\"traceEvents\": [\n";
  for (int i = 0; i < 300000; ++i) {
    doc += "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" + std::to_string(i % 50) +
           "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(1000 + i) +
           ", \"dur\": 1, \"args\": {\"stream\": 7, \"correlation\": " + std::to_string(i) + "}},\n";
  }
  doc += "{}]}";
  const fs::path trace = dir.write("big.json", doc);
  // 24 MiB: the 16 MiB read window plus the process itself already come close; 300,000 kernels do not fit.
  ScratchDir out;
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", "-o", (out.path() / "base").string(),
                       "--max-memory", "24M", trace.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("needs more memory than the limit of 24 MiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(trace.string()), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out.path()));
  // With room enough it reads.
  r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", "--max-memory", "1G", trace.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(tracedoc({"stats", "--max-memory", "lots", trace.string()}).exit_code, 2);
}

TEST(Cli, NsysRepWithoutNsysSaysHowToExport) {
  ScratchDir dir;
  CliRun r = tracedoc({"stats", dir.write("r.nsys-rep", "x").string()}, "/nonexistent-dir");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nsys export --type sqlite"), std::string::npos) << r.err;
}

TEST(Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(tracedoc({"stats", "-r", "no_such_report", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"stats", "-f", "xml", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"stats", "--timeunit", "fortnights", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"stats", "--filter-name", "([", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"stats"}).exit_code, 2);
  EXPECT_EQ(tracedoc({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(tracedoc({"--help"}).exit_code, 0);
}

TEST(Cli, FilterNameKeepsMatchingRows) {
  CliRun r =
      tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", "--filter-name", "^ampere_", kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = parse_csv(r.out);
  ASSERT_EQ(rows.size(), 3u);  // header + the two sgemm kernels
  EXPECT_EQ(rows[1][8], "ampere_sgemm_64x64_nn");
  EXPECT_EQ(rows[1][0], "64.6");  // percentages are of the rows kept
  EXPECT_EQ(rows[2][8], "ampere_sgemm_128x64_tn");
}

}  // namespace
}  // namespace tracedoc::testing

namespace tracedoc::testing {
namespace {

// A .nsys-rep goes through the real `nsys export` when one is installed (install-nsys.sh's prefix
// or PATH); the result must equal the oracle of the same recording's SQLite export.
TEST(Cli, NsysRepIsExportedThroughNsys) {
  const fs::path traces = nsys_traces_dir();
  if (traces.empty()) GTEST_SKIP() << "../shared/traces/nsys not found";
  std::string path_env = std::getenv("PATH") ? std::getenv("PATH") : "";
  bool have_nsys = std::system("command -v nsys > /dev/null 2>&1") == 0;
  if (const char* home = std::getenv("HOME"); !have_nsys && home) {
    const fs::path prefix = fs::path(home) / ".cache" / "nsys-debian";
    if (fs::exists(prefix / "nsys")) {
      path_env = prefix.string() + ":" + path_env;
      have_nsys = true;
    }
  }
  if (!have_nsys) GTEST_SKIP() << "no nsys installed (shared/tools/install-nsys.sh installs one)";
  // nsys 2023.4 reads reports of its own era; report3 was recorded by nsys 2023.3.
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv",
                       (traces / "SC23_OpenMP_Tutorial" / "report3.nsys-rep").string()},
                      path_env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(traces / "oracles" / "SC23_OpenMP_Tutorial_report3" / "stats_cuda_gpu_kern_sum.csv"));
}

// `tracedoc analyze`: the nsys analyze rules on the bundled example (expected output recorded from
// the real nsys, tests/golden/analyze/expected/toy).
const fs::path kAnalyzeGolden = kSource / "tests" / "golden" / "analyze" / "expected" / "toy";

TRACEDOC_TEST_LABELS(CliAnalyze, golden);

TEST(CliAnalyze, CsvOnStdoutIsExactlyTheNsysRule) {
  for (const char* rule : {"cuda_api_sync", "cuda_memcpy_sync", "gpu_time_util", "gpu_gaps:gap=0"}) {
    CliRun r = tracedoc({"analyze", "-r", rule, "-f", "csv", kExample.string()});
    EXPECT_EQ(r.exit_code, 0) << rule << ": " << r.err;
    std::string stem = std::string("analyze_") + rule;
    std::replace(stem.begin(), stem.end(), ':', '_');
    EXPECT_EQ(r.out, read_file(kAnalyzeGolden / (stem + ".csv"))) << rule;
    EXPECT_EQ(r.err, "") << rule;
  }
}

TEST(CliAnalyze, OutputFilesCarryRuleOptionsAsNsysNamesThem) {
  ScratchDir dir;
  const std::string base = (dir.path() / "run").string();
  CliRun r = tracedoc(
      {"analyze", "-r", "gpu_gaps:gap=1:rows=3,cuda_memset_sync,gpu_gaps", "-f", "csv", "-o", base, kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(base + "_gpu_gaps_gap=1_rows=3.csv"),
            read_file(kAnalyzeGolden / "analyze_gpu_gaps_gap=1_rows=3.csv"));
  // Nothing found: an empty file, as nsys writes.
  EXPECT_EQ(fs::file_size(base + "_gpu_gaps.csv"), 0u);
  EXPECT_EQ(fs::file_size(base + "_cuda_memset_sync.csv"), 0u);
}

TEST(CliAnalyze, ColumnOutputExplainsEachRule) {
  CliRun r = tracedoc({"analyze", "-f", "column", kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" ** CUDA Synchronous Memcpy (cuda_memcpy_sync):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Suggestion: use cudaMemcpyAsync"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" ** GPU Gaps (gpu_gaps):\n\nThe GPU was never idle for more than 500 ms."), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("cudaStreamSynchronize_v3020"), std::string::npos);
}

TEST(CliAnalyze, ExitOnFindingsGatesCi) {
  EXPECT_EQ(tracedoc({"analyze", "-r", "gpu_gaps", "--exit-on-findings", "-f", "csv", kExample.string()}).exit_code, 0);
  CliRun r = tracedoc({"analyze", "-r", "gpu_gaps:gap=1", "--exit-on-findings", "-f", "csv", kExample.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(line_count(r.out), 5u);  // the findings are still printed
  EXPECT_EQ(tracedoc({"analyze", "-r", "gpu_gaps:gap=1", "-f", "csv", kExample.string()}).exit_code, 0);
}

TEST(CliAnalyze, RuleWindowEqualsFilterTime) {
  // start=/end= on one rule restrict that rule only, like --filter-time on the whole run.
  CliRun own =
      tracedoc({"analyze", "-r", "gpu_gaps:gap=0:start=1220000000:end=1260000000", "-f", "csv", kExample.string()});
  CliRun global = tracedoc(
      {"analyze", "-r", "gpu_gaps:gap=0", "--filter-time", "1220000000/1260000000", "-f", "csv", kExample.string()});
  ASSERT_EQ(own.exit_code, 0) << own.err;
  ASSERT_EQ(global.exit_code, 0) << global.err;
  EXPECT_EQ(own.out, global.out);
  EXPECT_EQ(line_count(own.out), 2u) << own.out;  // the one gap with GPU work on both sides inside the window
}

TEST(CliAnalyze, UsageAndInputErrorsExitWithTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"analyze", "-r", "no_such_rule", kExample.string()},
           {"analyze", "-r", "gpu_gaps:gap=x", kExample.string()},
           {"analyze", "-r", "gpu_time_util:chunks=0", kExample.string()},
           {"analyze", "-r", "gpu_gaps:start=5/", kExample.string()},
           {"analyze"},
       }) {
    CliRun r = tracedoc(args);
    EXPECT_EQ(r.exit_code, 2) << args[args.size() - 1] << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_EQ(r.out, "");
  }
  ScratchDir dir;
  const fs::path bad = dir.write("bad.sqlite", "not a database");
  CliRun r = tracedoc({"analyze", "-f", "csv", "-o", (dir.path() / "out").string(), bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out_gpu_gaps.csv"));
}

TEST(CliAnalyze, InputIsNeverModified) {
  ScratchDir dir;
  const fs::path copy = dir.path() / "input.sqlite";
  fs::copy_file(kExample, copy);
  const auto before_time = fs::last_write_time(copy);
  const std::string before = read_file(copy);
  CliRun r = tracedoc({"analyze", "-f", "csv", "-o", (dir.path() / "out").string(), copy.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(copy), before);
  EXPECT_EQ(fs::last_write_time(copy), before_time);
}

TRACEDOC_TEST_LABELS(CliSummary, unit);

// `tracedoc summary`: text for people, JSON for scripts, several inputs, clean failures.
TEST(CliSummary, TextAndJson) {
  CliRun text = tracedoc({"summary", kExample.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* part :
       {"Nsight Systems 2024.5.1.113", "25.2%", "Top kernels (of 15.3 ms kernel time)", "ampere_sgemm_64x64_nn",
        "Host-to-Device (Pageable)", "Steps: 3 (detected)", "5 synchronous copies (4.62 ms)"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
  }
  CliRun json = tracedoc({"summary", "-f", "json", "--top", "2", kExample.string(), kExample.string()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\n  \"schema_version\": 1,", 0), 0u);
  size_t inputs = 0;
  for (size_t at = 0; (at = json.out.find("\"input\": ", at)) != std::string::npos; ++at) ++inputs;
  EXPECT_EQ(inputs, 2u);
}

TEST(CliSummary, StepMarkerAndOutputFile) {
  ScratchDir dir;
  const fs::path out = dir.path() / "summary.json";
  CliRun r = tracedoc({"summary", "-f", "json", "--step-marker", "train_step*", "-o", out.string(), kExample.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string json = read_file(out);
  EXPECT_NE(json.find("\"source\": \"marker\""), std::string::npos);
  EXPECT_NE(json.find("\"count\": 4"), std::string::npos);
}

TEST(CliSummary, BadInputAndUsage) {
  ScratchDir dir;
  const fs::path bad = dir.write("bad.json", "{\"traceEvents\": [");
  const fs::path out = dir.path() / "s.txt";
  CliRun r = tracedoc({"summary", "-o", out.string(), kExample.string(), bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out)) << "no partial output";
  EXPECT_EQ(tracedoc({"summary"}).exit_code, 2);
  EXPECT_EQ(tracedoc({"summary", "-f", "xml", kExample.string()}).exit_code, 2);
}

TRACEDOC_TEST_LABELS(CliExport, unit);

// `tracedoc export --to sqlite`: what it writes reads back as the same reports, for a PyTorch trace,
// an nsys export and (with ../shared) a real A100 trace; bad input and usage leave no file.
TEST(CliExport, ExportReadsBackAsTheSameReports) {
  ScratchDir dir;
  std::vector<fs::path> inputs = {dir.write("tiny.pt.trace.json.gz", gzip_bytes(kTinyKineto)), kExample};
  if (!shared_dir().empty()) {
    inputs.push_back(shared_dir() /
                     "traces/kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
                     "benchmark_result_2869224_1695835535_trace.json.gz");
  }
  for (const fs::path& input : inputs) {
    const fs::path out = dir.path() / (input.filename().string() + ".sqlite");
    CliRun r = tracedoc({"export", input.string(), "--to", "sqlite", "-o", out.string()});
    ASSERT_EQ(r.exit_code, 0) << input << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    CliRun original =
        tracedoc({"stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum", "-f", "csv", "-o", "-", input.string()});
    CliRun exported = tracedoc({"stats", "-r", "cuda_gpu_kern_sum,cuda_api_sum", "-f", "csv", "-o", "-", out.string()});
    ASSERT_EQ(original.exit_code, 0) << original.err;
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    EXPECT_NE(original.out, "");
    EXPECT_EQ(exported.out, original.out) << input;
  }
  for (const auto& f : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(f.path().string().find(".tmp-"), std::string::npos) << "temporary file left: " << f.path();
  }
  // --to chrome carries the findings as annotations unless --no-findings; they set up nothing for sqlite.
  const fs::path chrome = dir.path() / "toy.json", bare = dir.path() / "bare.json";
  ASSERT_EQ(tracedoc({"export", kExample.string(), "--to", "chrome", "-o", chrome.string()}).exit_code, 0);
  ASSERT_EQ(tracedoc({"export", kExample.string(), "--to", "chrome", "--no-findings", "-o", bare.string()}).exit_code,
            0);
  EXPECT_NE(read_file(chrome).find("\"cat\": \"tracedoc_finding\", \"name\": \"comb_pattern: idle gap\""),
            std::string::npos);
  EXPECT_EQ(read_file(bare).find("tracedoc_finding"), std::string::npos);
  CliRun annotated = tracedoc({"diagnose", "-f", "json", chrome.string()}),
         plain = tracedoc({"diagnose", "-f", "json", bare.string()});
  EXPECT_EQ(annotated.out.substr(annotated.out.find("\"basis_ns\"")), plain.out.substr(plain.out.find("\"basis_ns\"")));
  EXPECT_EQ(tracedoc({"export", kExample.string(), "--to", "sqlite", "--step-marker", "x", "-o",
                      (dir.path() / "m.sqlite").string()})
                .exit_code,
            2);
  // Exporting again replaces the file whole.
  const fs::path again = dir.path() / "toy_training.sqlite.sqlite";
  EXPECT_EQ(tracedoc({"export", kExample.string(), "--to", "sqlite", "-o", again.string()}).exit_code, 0);
}

TEST(CliExport, BadInputAndUsageLeaveNoFile) {
  ScratchDir dir, out;
  const fs::path target = out.path() / "out.sqlite";
  const std::string doc = kTinyKineto;
  for (const fs::path& bad : {dir.path() / "missing.json", dir.write("cut.json", doc.substr(0, doc.size() / 2)),
                              dir.write("notes.sqlite", "this is not a database\n")}) {
    CliRun r = tracedoc({"export", bad.string(), "--to", "sqlite", "-o", target.string()});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(bad.string()), std::string::npos) << "the message names the file: " << r.err;
    EXPECT_TRUE(fs::is_empty(out.path())) << bad << ": output file left behind";
  }
  const fs::path good = dir.write("tiny.json", doc);
  CliRun xml = tracedoc({"export", good.string(), "--to", "xml", "-o", target.string()});
  EXPECT_EQ(xml.exit_code, 2);
  EXPECT_NE(xml.err.find("sqlite or chrome"), std::string::npos) << xml.err;
  EXPECT_EQ(tracedoc({"export", good.string(), "-o", target.string()}).exit_code, 2);        // no --to
  EXPECT_EQ(tracedoc({"export", good.string(), "--to", "sqlite"}).exit_code, 2);             // no -o
  EXPECT_EQ(tracedoc({"export", good.string(), "--to", "sqlite", "-o", "-"}).exit_code, 2);  // not to stdout
  EXPECT_EQ(tracedoc({"export", "--to", "sqlite", "-o", target.string()}).exit_code, 2);     // no INPUT
  EXPECT_EQ(tracedoc({"export", good.string(), "--to", "sqlite", "-o", (out.path() / "no/such/dir.sqlite").string()})
                .exit_code,
            2);
  EXPECT_TRUE(fs::is_empty(out.path()));
  // The input is never the output.
  const fs::path example = dir.path() / "example.sqlite";
  fs::copy_file(kExample, example);
  const std::string before = read_file(example);
  EXPECT_EQ(tracedoc({"export", example.string(), "--to", "sqlite", "-o", example.string()}).exit_code, 2);
  EXPECT_EQ(read_file(example), before);
}

}  // namespace
}  // namespace tracedoc::testing

// `tracedoc diagnose`: formats, --fail-on exit codes, rule selection, configuration errors.
namespace tracedoc::testing {
namespace {

TRACEDOC_TEST_LABELS(CliDiagnose, unit);

TEST(CliDiagnose, FormatsAndFailOn) {
  CliRun text = tracedoc({"diagnose", kExample.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("CRITICAL comb_pattern"), std::string::npos) << text.out;
  CliRun json = tracedoc({"diagnose", "-f", "json", "--rules", "sync_stall,pageable_memcpy", kExample.string()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.rfind("{\n  \"schema_version\": 1,", 0), 0u);
  EXPECT_NE(json.out.find("\"rules_run\": [\"pageable_memcpy\", \"sync_stall\"]"), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("comb_pattern"), std::string::npos);
  CliRun md = tracedoc({"diagnose", "-f", "markdown", kExample.string()});
  EXPECT_NE(md.out.find("| Severity | Rule |"), std::string::npos);
  EXPECT_EQ(tracedoc({"diagnose", "--fail-on", "critical", kExample.string()}).exit_code, 1);
  // Only warnings among these two rules: warning fails, critical does not.
  EXPECT_EQ(tracedoc({"diagnose", "--rules", "sync_stall", "--fail-on", "warning", kExample.string()}).exit_code, 1);
  EXPECT_EQ(tracedoc({"diagnose", "--rules", "sync_stall", "--fail-on", "critical", kExample.string()}).exit_code, 0);
  CliRun list = tracedoc({"diagnose", "--list-rules"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("min_gap_share = 0.15"), std::string::npos) << list.out;
}

TEST(CliDiagnose, BadInputConfigAndUsage) {
  ScratchDir dir;
  const fs::path out = dir.path() / "d.json";
  const fs::path bad = dir.write("bad.json", "{\"traceEvents\": [");
  CliRun r = tracedoc({"diagnose", "-o", out.string(), bad.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(out));
  const fs::path config = dir.write("c.toml", "[rules.gpu_idle]\nmin_idel = 0.2\n");
  r = tracedoc({"diagnose", "--config", config.string(), kExample.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("c.toml: rule gpu_idle has no parameter 'min_idel'"), std::string::npos) << r.err;
  EXPECT_EQ(tracedoc({"diagnose", "--rules", "no_such_rule", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"diagnose", "--fail-on", "sometimes", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"diagnose", "-f", "xml", kExample.string()}).exit_code, 2);
  EXPECT_EQ(tracedoc({"diagnose"}).exit_code, 2);
  const fs::path ok = dir.write("ok.toml",
                                "[rules.comb_pattern]\nenabled = false\n[rules.gpu_idle]\nenabled = "
                                "false\n[rules.host_waits]\nenabled = false\n");
  r = tracedoc({"diagnose", "--config", ok.string(), "--fail-on", "critical", kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out;  // the three critical findings are switched off
}

}  // namespace
}  // namespace tracedoc::testing

// `tracedoc check`: exit codes 0 / 1 / 2, the formats, baselines, and budgets that are refused
// (one line naming the file and the key, no output file).
namespace tracedoc::testing {
namespace {

TRACEDOC_TEST_LABELS(CliCheck, unit);

TEST(CliCheck, ExitCodesFormatsAndBaseline) {
  ScratchDir dir;
  const fs::path pass = dir.write(
      "pass.toml", "[steps]\np50_max_ms = 30\n[gpu]\nbusy_min_pct = 20\n[findings]\nforbid = [\"straggler\"]\n");
  CliRun r = tracedoc({"check", kExample.string(), "--budget", pass.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(kExample.string() + ": all 3 checks passed (" + pass.string() + ")\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("PASS  steps.p50_max_ms  25.149 ms  <= 30 ms"), std::string::npos) << r.out;

  const fs::path failing =
      dir.write("fail.toml", "[steps]\np50_max_ms = 20\n[findings]\nforbid = [\"comb_pattern\"]\n");
  const fs::path out = dir.path() / "check.json";
  r = tracedoc({"check", kExample.string(), "--budget", failing.string(), "-f", "json", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  const std::string json = read_file(out);
  EXPECT_EQ(json.rfind("{\n  \"schema_version\": 1,", 0), 0u) << json;
  EXPECT_NE(json.find("\"passed\": false,\n  \"checked\": 2,\n  \"failed\": 2,"), std::string::npos) << json;
  r = tracedoc({"check", kExample.string(), "--budget", failing.string(), "-f", "markdown"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("| **FAIL** | `findings.forbid` | comb_pattern | 1 | ≤ 0 |"), std::string::npos) << r.out;
  // A marker no range has: the steps cannot be measured, which fails the check.
  r = tracedoc({"check", kExample.string(), "--budget", pass.string(), "--step-marker", "no_such_range"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL  steps.p50_max_ms"), std::string::npos) << r.out;

  // A budget that checks nothing is an error, so that a typo never passes a CI gate; so is a folder.
  const fs::path empty = dir.write("empty.toml", "");
  r = tracedoc({"check", kExample.string(), "--budget", empty.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(empty.string() + ": the budget sets no limits, so it would check nothing"), std::string::npos)
      << r.err;
  r = tracedoc({"check", kExample.string(), "--budget", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "tracedoc: " + dir.path().string() + ": is a directory, not a file\n");

  // The baseline, relative to the budget file: the same trace regresses by 0%.
  fs::copy_file(kExample, dir.path() / "baseline.sqlite");
  const fs::path base = dir.write(
      "base.toml", "[baseline]\npath = \"baseline.sqlite\"\nstep_p50_regression_max_pct = 0\nbusy_drop_max_pct = 0\n");
  r = tracedoc({"check", kExample.string(), "--budget", base.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("PASS  baseline.step_p50_regression_max_pct    0.00%  <= 0%"), std::string::npos) << r.out;
  // --baseline overrides the budget's path.
  const fs::path no_path = dir.write("nopath.toml", "[baseline]\nstep_p95_regression_max_pct = 0\n");
  r = tracedoc({"check", kExample.string(), "--budget", no_path.string(), "--baseline", kExample.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
}

TEST(CliCheck, RefusedBudgetsAndUsage) {
  ScratchDir dir;
  const fs::path out = dir.path() / "check.txt";
  const std::vector<std::pair<std::string, std::string>> budgets = {
      {"[gpu]\nbusy_min = 80\n", "budget.toml: gpu.busy_min: unknown key"},
      {"[[kernel]]\nname = \"(sgemm\"\ntotal_max_ms = 1\n",
       "budget.toml: kernel[0].name: bad regular expression '(sgemm'"},
      {"[findings]\nforbid = [\"no_such_rule\"]\n", "budget.toml: findings.forbid: unknown rule 'no_such_rule'"},
      {"[baseline]\npath = \"missing.json.gz\"\nbusy_drop_max_pct = 5\n",
       "budget.toml: baseline.path: no such file or directory: " + (dir.path() / "missing.json.gz").string()},
      {"[baseline]\nbusy_drop_max_pct = 5\n", "budget.toml: baseline: the [baseline] limits need a baseline trace"},
  };
  for (const auto& [text, message] : budgets) {
    const fs::path budget = dir.write("budget.toml", text);
    CliRun r = tracedoc({"check", kExample.string(), "--budget", budget.string(), "-o", out.string()});
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << text << " -> " << r.err;
    EXPECT_FALSE(fs::exists(out)) << text << ": output file written";
  }
  const fs::path ok = dir.write("ok.toml", "[steps]\np50_max_ms = 30\n");
  const fs::path bad = dir.write("bad.json", "{\"traceEvents\": [");
  CliRun r = tracedoc({"check", bad.string(), "--budget", ok.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(out));
  r = tracedoc({"check", kExample.string(), "--budget", (dir.path() / "none.toml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.toml"), std::string::npos) << r.err;
  r = tracedoc({"check", kExample.string(), "--budget", ok.string(), "--baseline", kExample.string()});
  EXPECT_EQ(r.exit_code, 2);  // no [baseline] limit to compare
  EXPECT_NE(r.err.find("sets no [baseline] limit"), std::string::npos) << r.err;
  EXPECT_EQ(tracedoc({"check", kExample.string()}).exit_code, 2);        // no --budget
  EXPECT_EQ(tracedoc({"check", "--budget", ok.string()}).exit_code, 2);  // no INPUT
  EXPECT_EQ(tracedoc({"check", kExample.string(), "--budget", ok.string(), "-f", "xml"}).exit_code, 2);
}

}  // namespace
}  // namespace tracedoc::testing

// `tracedoc export --to chrome`: an nsys export as a PyTorch profiler trace reads back with the same
// kernel and API reports.
namespace tracedoc::testing {
namespace {

TEST(CliExport, ChromeTraceReadsBackAsTheSameReports) {
  ScratchDir dir;
  const fs::path json = dir.path() / "toy.json";
  CliRun r = tracedoc({"export", kExample.string(), "--to", "chrome", "-o", json.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_size_sum"}) {
    CliRun a = tracedoc({"stats", "-r", report, "-f", "csv", kExample.string()});
    CliRun b = tracedoc({"stats", "-r", report, "-f", "csv", json.string()});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(a.out, b.out) << report;
  }
  EXPECT_EQ(tracedoc({"export", kExample.string(), "--to", "chrome", "-o", "-"}).exit_code, 2);
}

}  // namespace
}  // namespace tracedoc::testing

// `tracedoc sql`: one SELECT over the model's tables; anything else is a usage error with no output.
namespace tracedoc::testing {
namespace {

TRACEDOC_TEST_LABELS(CliSql, unit);

TEST(CliSql, QueryFormatsAndErrors) {
  CliRun r = tracedoc({"sql", kExample.string(), "SELECT count(*) AS kernels FROM kernels", "-f", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "kernels\n68\n");
  CliRun json = tracedoc(
      {"sql", kExample.string(), "SELECT id FROM findings WHERE severity = 'critical' ORDER BY id", "-f", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"comb_pattern\""), std::string::npos) << json.out;
  ScratchDir dir;
  const std::string base = (dir.path() / "q").string();
  for (const char* bad : {"DELETE FROM kernels", "SELEC 1", "SELECT 1; SELECT 2", "SELECT * FROM no_such_table",
                          "SELECT 1 AS a, 2 AS a"}) {
    CliRun b = tracedoc({"sql", kExample.string(), bad, "-o", base});
    EXPECT_EQ(b.exit_code, 2) << bad;
    EXPECT_EQ(line_count(b.err), 1u) << b.err;
    EXPECT_TRUE(fs::is_empty(dir.path())) << bad;
  }
  EXPECT_EQ(tracedoc({"sql", kExample.string()}).exit_code, 2);
}

}  // namespace
}  // namespace tracedoc::testing

// `tracedoc diff`: before/after on the planted training loops (both formats, mixed), formats, the
// regression gate's exit codes, and bad input leaving no file.
namespace tracedoc::testing {
namespace {

// The clean loop and the same loop with its DataLoader 15x slower, as PyTorch traces and exports.
struct SynthPair {
  ScratchDir dir;
  fs::path clean_json, clean_sqlite, slow_json;
  SynthPair() {
    const fs::path specs = kSource / "examples" / "synth";
    EXPECT_EQ(tracedoc({"synth", (specs / "clean.toml").string(), "-o", (dir.path() / "clean").string()}).exit_code, 0);
    EXPECT_EQ(tracedoc({"synth", (specs / "dataloader_bound.toml").string(), "-o", (dir.path() / "slow").string(),
                        "--format", "kineto"})
                  .exit_code,
              0);
    clean_json = dir.path() / "clean.json", clean_sqlite = dir.path() / "clean.sqlite",
    slow_json = dir.path() / "slow.json";
  }
};

TRACEDOC_TEST_LABELS(CliDiff, unit);

TEST(CliDiff, BeforeAfterFormatsAndRegressionGate) {
  SynthPair p;
  // The same loop as an nsys export and as a PyTorch trace: nothing changed.
  CliRun same = tracedoc({"diff", p.clean_sqlite.string(), p.clean_json.string()});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(
      same.out.find("Step time: median 10.0 ms -> 10.0 ms (+0.0%), unchanged (p 1.000; 12 -> 12 steps, ProfilerStep)"),
      std::string::npos)
      << same.out;
  EXPECT_NE(same.out.find("\nKernels (per step): 30 unchanged\n"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("Note: operators: not compared, BASE records none"), std::string::npos) << same.out;

  // The slow DataLoader: the steps are slower by the loading time, which is all idle GPU time.
  CliRun slow = tracedoc({"diff", p.clean_json.string(), p.slow_json.string()});
  ASSERT_EQ(slow.exit_code, 0) << slow.err;
  EXPECT_NE(slow.out.find("Step time: median 10.0 ms -> 14.7 ms (+45.9%), slower"), std::string::npos) << slow.out;
  EXPECT_NE(slow.out.find("  idle               336 µs    4.90 ms    +4.57 ms\n"), std::string::npos) << slow.out;
  EXPECT_NE(slow.out.find("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), std::string::npos)
      << slow.out;
  EXPECT_NE(slow.out.find("appeared    critical            dataloader_bound"), std::string::npos) << slow.out;

  CliRun json = tracedoc({"diff", p.clean_json.string(), p.slow_json.string(), "-f", "json"});
  ASSERT_EQ(json.exit_code, 0);
  EXPECT_EQ(json.out.rfind("{\n  \"schema_version\": 1,\n  \"base\": {", 0), 0u) << json.out.substr(0, 80);
  EXPECT_NE(json.out.find("\"verdict\": \"slower\""), std::string::npos);
  CliRun csv = tracedoc({"diff", p.clean_json.string(), p.slow_json.string(), "-f", "csv", "--no-findings"});
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.rfind("Kind,Name,Verdict,Timing,Calls,Base Count,New Count,Base Total (ns),", 0), 0u)
      << csv.out.substr(0, 200);
  EXPECT_EQ(csv.out.find("\nfinding,"), std::string::npos) << "--no-findings";
  const fs::path md = p.dir.path() / "diff.md";
  CliRun markdown =
      tracedoc({"diff", p.clean_json.string(), p.slow_json.string(), "-f", "markdown", "-o", md.string()});
  ASSERT_EQ(markdown.exit_code, 0);
  EXPECT_TRUE(markdown.out.empty());
  EXPECT_EQ(read_file(md).rfind("### tracedoc diff: `", 0), 0u);

  // The gate: 45.9% slower fails a 5% allowance, passes a 50% one, and the way back passes.
  CliRun gate = tracedoc({"diff", p.clean_json.string(), p.slow_json.string(), "--fail-on-regression", "5"});
  EXPECT_EQ(gate.exit_code, 1);
  EXPECT_EQ(gate.err, "tracedoc: diff: regression: median step time +45.9%, more than the 5% allowed\n");
  EXPECT_EQ(tracedoc({"diff", p.clean_json.string(), p.slow_json.string(), "--fail-on-regression", "50"}).exit_code, 0);
  EXPECT_EQ(tracedoc({"diff", p.slow_json.string(), p.clean_json.string(), "--fail-on-regression", "0"}).exit_code, 0);
}

TEST(CliDiff, BadInputAndUsageLeaveNoFile) {
  SynthPair p;
  ScratchDir out;
  const fs::path target = out.path() / "diff.txt";
  const fs::path broken = p.dir.write("broken.json", "{\"traceEvents\": [");
  for (const fs::path& bad : {p.dir.path() / "missing.json", broken}) {
    for (const auto& order : {std::vector<fs::path>{bad, p.clean_json}, std::vector<fs::path>{p.clean_json, bad}}) {
      CliRun r = tracedoc({"diff", order[0].string(), order[1].string(), "-o", target.string()});
      EXPECT_EQ(r.exit_code, 2) << bad;
      EXPECT_EQ(line_count(r.err), 1u) << r.err;
      EXPECT_NE(r.err.find(bad.string()), std::string::npos) << "the message names the file: " << r.err;
      EXPECT_TRUE(fs::is_empty(out.path())) << bad << ": output file left behind";
    }
  }
  const std::string a = p.clean_json.string(), b = p.slow_json.string();
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"diff", a},
                                             {"diff", a, b, "-f", "xml"},
                                             {"diff", a, b, "--alpha", "0"},
                                             {"diff", a, b, "--min-change", "-1"},
                                             {"diff", a, b, "--fail-on-regression", "-5"},
                                             {"diff", a, b, "--config", (p.dir.path() / "none.toml").string()}}) {
    CliRun r = tracedoc(args);
    EXPECT_EQ(r.exit_code, 2) << args.back();
    EXPECT_EQ(line_count(r.err) >= 1, true);
    EXPECT_TRUE(r.out.empty()) << args.back();
  }
}

TRACEDOC_TEST_LABELS(CliView, unit);

TEST(CliView, PageSvgAndColourSchemes) {
  ScratchDir out;
  const std::string example = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const fs::path page = out.path() / "toy.html";
  CliRun r = tracedoc({"view", example, "-o", page.string(), "--colors", "critical"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string html = read_file(page);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // An ordinary file (0666 less the umask), to be attached and shared, not a private temporary.
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(static_cast<unsigned>(fs::status(page).permissions() & fs::perms::all),
            0666u & ~static_cast<unsigned>(mask));
  EXPECT_NE(html.find("\"tool\":\"tracedoc view\""), std::string::npos);
  EXPECT_NE(html.find("\"colors\":\"critical\""), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos) << "self-contained: nothing to fetch";
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  // A budget smaller than the trace: the page says what is exact, stderr says it once.
  CliRun small = tracedoc({"view", example, "-o", (out.path() / "small.html").string(), "--max-events", "10"});
  ASSERT_EQ(small.exit_code, 0) << small.err;
  EXPECT_NE(small.err.find("events embedded exactly (--max-events 10)"), std::string::npos) << small.err;
  // --window: the page opens there and embeds the window's events exactly.
  const fs::path windowed = out.path() / "window.html";
  CliRun w = tracedoc({"view", example, "-o", windowed.string(), "--window", "1ms/2ms", "--max-events", "50"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const std::string wpage = read_file(windowed);
  EXPECT_NE(wpage.find("\"view\":{\"start\":1000000,\"end\":2000000}"), std::string::npos);
  EXPECT_NE(wpage.find("\"raw\":{\"start\":1000000,"), std::string::npos);
  // A TOML scheme and an SVG of a window.
  const fs::path scheme = out.write(
      "scheme.toml",
      "[[rule]]\ncategory = \"kernel\"\nname = \"gemm\"\nignore_case = true\ncolor = \"#00ff00\"\nlabel = \"GEMM\"\n");
  const fs::path svg = out.path() / "toy.svg";
  CliRun s = tracedoc({"view", example, "--svg", "-o", svg.string(), "--colors", scheme.string(), "--window", "0/2ms",
                       "--width", "900"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const std::string picture = read_file(svg);
  EXPECT_EQ(picture.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\"", 0), 0u) << picture.substr(0, 120);
  EXPECT_NE(picture.find("0 ns – 2.00 ms"), std::string::npos) << picture.substr(0, 400);
}

TEST(CliView, BadInputAndUsageLeaveNoFile) {
  ScratchDir out;
  const std::string example = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const fs::path target = out.path() / "view.html";
  const fs::path broken = out.write("broken.json", "{\"traceEvents\": [");
  const fs::path bad_scheme = out.write("bad.toml", "[[rule]]\ncolor = \"#12345\"\n");
  const fs::path bad_xml = out.write("bad.xml", "<ColorPreferences><Rule color=\"#ff0000\"</ColorPreferences>");
  struct Case {
    std::vector<std::string> args;
    std::string names;  // what the one-line message must mention
  };
  const std::vector<Case> cases = {
      {{"view", (out.path() / "missing.json").string(), "-o", target.string()}, "missing.json"},
      {{"view", broken.string(), "-o", target.string()}, "broken.json"},
      {{"view", example, "-o", target.string(), "--colors", bad_scheme.string()}, "bad.toml"},
      {{"view", example, "-o", target.string(), "--colors", bad_xml.string()}, "bad.xml"},
      {{"view", example, "-o", target.string(), "--colors", (out.path() / "nope.toml").string()}, "nope.toml"},
      {{"view", example, "-o", target.string(), "--window", "5ms/1ms"}, "--window"},
      {{"view", example, "-o", target.string(), "-f", "png"}, "png"},
      {{"view", example, "-o", "-"}, "-o"},
      {{"view", example, "-o", example}, "replace the input"},
  };
  for (const Case& c : cases) {
    CliRun r = tracedoc(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.names << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(target)) << c.names << ": output left behind";
  }
  // Removed files stay: only the bad ones and the schemes are in the folder.
  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(out.path())) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"bad.toml", "bad.xml", "broken.json"}));
}

}  // namespace
}  // namespace tracedoc::testing
