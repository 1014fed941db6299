// Faults and hostile input through the `tracedoc` binary: each case once crashed, lost output or
// printed garbage with exit 0. Each asserts the exit code, the one-line message naming the file,
// and that no output file (or temporary) is left behind. The expensive cases (a file truncated
// while being read, inputs of gigabytes against the memory limit) are in tests/slow/.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/utf8.h"
#include "ingest/kineto_reader.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/sqlite_fast_scan.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";

size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// Runs SQL on a database file (the test's own copies of exports).
void sql(const fs::path& db_path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &err);
  const std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

fs::path copy_of_example(const ScratchDir& dir, const std::string& name) {
  const fs::path p = dir.path() / name;
  fs::copy_file(kExample, p);
  return p;
}

// A run that must fail cleanly: exit 2, one line on stderr naming `input` and saying `what`, no
// file (and no temporary) in `out`.
void expect_clean_failure(const CliRun& r, const fs::path& input, const std::string& what, const fs::path& out) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(input.string()), std::string::npos) << "the message does not name the file: " << r.err;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(out)) << "output left behind";
}

TRACEDOC_TEST_LABELS(Faults, unit sanitize);

// 1. Steps in one process, copies in another: copy_step_shares read the prefix sums of an empty
// placeholder (SIGSEGV). Now the step's window has no copies of its own process, and the copying
// process gets its whole-trace row; the same through the nsys export of the trace.
TEST(Faults, CopyStepSharesWithStepsAndCopiesInOtherProcesses) {
  ScratchDir dir;
  const fs::path trace = dir.write("split.json", R"J({"traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 50},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 2, "tid": 2, "ts": 105, "dur": 3, "args": {"correlation": 1}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 2, "tid": 7, "ts": 110, "dur": 10,
 "args": {"stream": 7, "correlation": 1, "bytes": 4096, "device": 0}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 2, "tid": 7, "ts": 130, "dur": 10, "args": {"stream": 7, "correlation": 2, "device": 0}}
]})J");
  const fs::path exported = dir.path() / "split.sqlite";
  ASSERT_EQ(tracedoc({"export", "--to", "sqlite", "-o", exported.string(), trace.string()}).exit_code, 0);
  for (const fs::path& input : {trace, exported}) {
    CliRun r = tracedoc({"stats", "-r", "gpu_copy_step_sum", "-f", "csv", input.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out,
              "Rank,PID,Step,Start (ns),Duration (ns),Copies,Bytes (MB),Copy Time (ns),Copy (%),HtoD Time (ns),"
              "DtoH Time (ns),DtoD Time (ns),Other Time (ns),Name\n"
              ",1,1,100000,50000,0,0.000,0,0.0,0,0,0,0,ProfilerStep#1\n"
              ",2,,110000,10000,1,0.004,10000,100.0,10000,0,0,0,(whole trace)\n")
        << input;
  }
}

// A PyTorch trace with one kernel whose name is `length` bytes: `k...k` then `x`.
fs::path long_name_trace(const ScratchDir& dir, size_t length) {
  std::string doc = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 1, "dur": 5, )"
                    R"("args": {"stream": 7, "correlation": 1}, "name": ")";
  doc.append(length - 1, 'k');
  doc += "x\"}]}";
  return dir.write("long_name.json", doc);
}

// 2. libstdc++'s std::regex recursed once per character: `.*` overflowed the stack on a name of
// 30,000 characters, `(k|x)+$` on one of 100,000. RE2 matches them in linear time.
TEST(Faults, RegularExpressionsOnLongNames) {
  ScratchDir dir, out;
  const fs::path trace = long_name_trace(dir, 100000);
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", "--filter-name", ".*", "-o",
                       (out.path() / "base").string(), trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(out.path())) files.push_back(e.path().filename().string());
  ASSERT_EQ(files, std::vector<std::string>{"base_cuda_gpu_kern_sum.csv"});  // and no .tmp-* file
  EXPECT_EQ(parse_csv(read_file(out.path() / files[0])).size(), 2u);

  for (const char* pattern : {".*", "(k|x)+$", "^k+x$"}) {
    const fs::path budget =
        dir.write("budget.toml", std::string("[[kernel]]\nname = \"") + pattern + "\"\ncount_max = 0\n");
    CliRun c = tracedoc({"check", "--budget", budget.string(), trace.string()});
    EXPECT_EQ(c.exit_code, 1) << pattern << ": " << c.err << c.out;  // the kernel matches, and count_max 0 is exceeded
  }
  // What needs backtracking is refused by name, never matched differently.
  CliRun bad = tracedoc({"stats", "--filter-name", "(k)\\1", trace.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad regular expression '(k)\\1'"), std::string::npos) << bad.err;
}

// 3 (the deterministic part; tests/slow truncates a file while the CLI reads it). The page scanner
// reads with pread: a file truncated after it was opened is an error naming it, not SIGBUS.
TEST(Faults, ExportTruncatedAfterOpenIsAnError) {
  ScratchDir dir;
  const fs::path p = copy_of_example(dir, "shrinking.sqlite");
  auto file = SqlitePageFile::open(p.string());
  ASSERT_TRUE(file.ok()) << file.status().message();
  fs::resize_file(p, 4096);
  size_t rows = 0;
  const Status st = (*file)->scan(
      2, {0}, -1, [&](std::span<const SqlValue>) { ++rows; }, [](size_t) {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find(p.string() + ": the file shrank while being read"), std::string::npos) << st.message();
}

// 5. Output that cannot be written is an error (exit 2), for every command that prints; a closed
// pipe still ends quietly.
TEST(Faults, FullStandardOutputIsAnError) {
  ScratchDir dir;
  const fs::path budget = dir.write("budget.toml", "[steps]\np50_max_ms = 1000\n");
  const std::vector<std::vector<std::string>> commands = {
      {"stats", "-f", "csv", kExample.string()},
      {"analyze", "-f", "csv", kExample.string()},
      {"summary", kExample.string()},
      {"diagnose", kExample.string()},
      {"diff", kExample.string(), kExample.string()},
      {"check", "--budget", budget.string(), kExample.string()},
      {"sql", kExample.string(), "SELECT * FROM kernels"},
      {"--help"},
  };
  for (const auto& args : commands) {
    CliRun r = tracedoc(args, "", "/dev/full");
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("tracedoc: cannot write to standard output: No space left on device"), std::string::npos)
        << args[0] << ": " << r.err;
  }
  // `| head -1`: SIGPIPE or a clean exit, and nothing on stderr.
  const std::string cmd = "set -o pipefail; '" + std::string(TRACEDOC_BINARY_DIR) +
                          "/tracedoc' stats -f csv -r cuda_api_gpu_sum '" + kExample.string() + "' 2> '" +
                          (dir.path() / "err").string() + "' | head -1 > /dev/null";
  const int status = std::system(("bash -c \"" + cmd + "\"").c_str());
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(read_file(dir.path() / "err"), "");
}

// 6. A damaged schema: a required column that is missing is an error naming the table and the
// column, for every command that reads the table.
TEST(Faults, MissingRequiredColumnIsAnError) {
  ScratchDir dir, out;
  const std::vector<std::pair<std::string, std::string>> damages = {
      {"ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN end",
       "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'end'"},
      {"ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN start TO begin",
       "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'start'"},
      {"ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN shortName TO name",
       "table CUPTI_ACTIVITY_KIND_KERNEL has no column 'shortName'"},
      {"ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME DROP COLUMN end",
       "table CUPTI_ACTIVITY_KIND_RUNTIME has no column 'end'"},
  };
  int n = 0;
  for (const auto& [statement, message] : damages) {
    const fs::path p = copy_of_example(dir, "damaged" + std::to_string(n++) + ".sqlite");
    sql(p, statement);
    expect_clean_failure(tracedoc({"stats", "-f", "csv", "-o", (out.path() / "base").string(), p.string()}), p, message,
                         out.path());
    expect_clean_failure(tracedoc({"summary", "-o", (out.path() / "summary.txt").string(), p.string()}), p, message,
                         out.path());
  }
}

// Wrong values are per-row problems: counted in the warning line, the rows read as absent (a row
// without a usable time is dropped), and the totals stay sound. Both table readers agree.
TEST(Faults, WrongTypesAndUnknownStringIdsAreCounted) {
  ScratchDir dir;
  const fs::path p = copy_of_example(dir, "values.sqlite");
  sql(p,
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid IN (1, 2);"
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = X'00' WHERE rowid = 3;"
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'wide' WHERE rowid = 4;"
      "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = 987654321 WHERE rowid = 5;");
  // The grid sizes and short names are read (and their problems counted) by a report that uses them.
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_gb_sum:base", "-f", "csv", p.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "tracedoc: warning: " + p.string() +
                       ": events 3 without a usable timestamp (skipped); "
                       "1 with a value of the wrong type (read as absent); 1 naming a string id the export does not "
                       "have (read as unnamed)\n");
  // cuda_gpu_kern_sum reads the demangled names alone: the other columns' values are not looked at.
  r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", p.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "tracedoc: warning: " + p.string() + ": events 3 without a usable timestamp (skipped)\n");
  const auto rows = parse_csv(r.out);
  int64_t instances = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    instances += std::stoll(rows[i][2]);
    EXPECT_GE(std::stoll(rows[i][1]), 0) << "total time of " << rows[i].back();
  }
  EXPECT_EQ(instances, 68 - 3);
  for (const bool fast : {true, false}) {
    NsysReadOptions options;
    options.fast_scan = fast;
    auto t = read_nsys_sqlite(p.string(), options);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->kernels.size(), 65u) << fast;
    EXPECT_EQ(t->warnings.missing_times, 3) << fast;
    EXPECT_EQ(t->warnings.bad_values, 1) << fast;
    EXPECT_EQ(t->warnings.unknown_string_ids, 1) << fast;
  }
}

// NaN and Infinity durations (Python's json writes them) drop the event, with a warning.
TEST(Faults, InfinityDurationsAreCounted) {
  ScratchDir dir;
  const fs::path trace = dir.write("inf.json", R"({"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": Infinity, "args": {"stream": 7, "correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": NaN, "args": {"stream": 7, "correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 3, "dur": 4, "args": {"stream": 7, "correlation": 3}}
]})");
  CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", "csv", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "tracedoc: warning: " + trace.string() +
                       ": events 2 with a duration that is not a number (NaN, Infinity; skipped)\n");
  EXPECT_EQ(parse_csv(r.out).at(1).at(2), "1");
}

// A -wal or -journal file: "locked" only while a program holds SQLite's locks on the export.
TEST(Faults, LeftoverJournalIsNotCalledAWriter) {
  ScratchDir dir;
  const fs::path p = copy_of_example(dir, "left.sqlite");
  dir.write("left.sqlite-wal", std::string(4096, 'w'));
  CliRun r = tracedoc({"summary", p.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a -wal file exists beside it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no program is writing"), std::string::npos) << r.err;
  fs::remove(dir.path() / "left.sqlite-wal");

  // A live writer: this process, in the middle of a transaction.
  const fs::path q = copy_of_example(dir, "busy.sqlite");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(q.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA cache_size = 1; BEGIN IMMEDIATE; DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL;", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  ASSERT_TRUE(fs::exists(q.string() + "-journal"));
  CliRun busy = tracedoc({"summary", q.string()});
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_NE(busy.err.find("locked: another program is writing it"), std::string::npos) << busy.err;
}

// Names with invalid UTF-8: CSV, tables and text reports write U+FFFD, as JSON and HTML do.
TEST(Faults, TextOutputIsValidUtf8) {
  ScratchDir dir;
  const fs::path trace = dir.write("bytes.json",
                                   "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 7, "
                                   "\"ts\": 1, \"dur\": 5, \"args\": {\"stream\": 7, \"correlation\": 1}, "
                                   "\"name\": \"gemm \xff\xfe \xc3\x28 end\"}]}");
  for (const char* format : {"csv", "tsv", "column", "table"}) {
    CliRun r = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", "-f", format, trace.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(is_valid_utf8(r.out)) << format;
    EXPECT_NE(r.out.find("gemm \xef\xbf\xbd\xef\xbf\xbd \xef\xbf\xbd( end"), std::string::npos)
        << format << ": " << r.out;
  }
  for (const char* command : {"summary", "diagnose"}) {
    CliRun r = tracedoc({command, trace.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(is_valid_utf8(r.out)) << command;
  }
}

// 4. A saving is at most the time the run takes: 100 FP32 GEMMs side by side on 100 streams sum to
// 100x the span, and tensor_cores_unused once printed a share of thousands of percent.
TEST(Faults, SavingsNeverExceedTheRun) {
  ScratchDir dir;
  std::string doc = R"({"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, )"
                    R"("computeMinor": 0, "numSms": 108, "totalGlobalMem": 85899345920}], "traceEvents": [)";
  for (int s = 0; s < 100; ++s) {
    doc += std::string(s ? "," : "") +
           R"({"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": )" +
           std::to_string(s + 7) + R"(, "ts": 10, "dur": 1000, "args": {"stream": )" + std::to_string(s + 7) +
           R"(, "correlation": )" + std::to_string(s + 1) + R"(, "device": 0}})";
  }
  doc += "]}";
  CliRun r = tracedoc({"diagnose", "-f", "json", dir.write("wide.json", doc).string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t findings = 0;
  for (size_t at = r.out.find("\"savings_share\": "); at != std::string::npos;
       at = r.out.find("\"savings_share\": ", at + 1)) {
    ++findings;
    EXPECT_LE(std::stod(r.out.substr(at + 17)), 1.0) << r.out;
  }
  EXPECT_GT(findings, 0u) << r.out;
  // 100 ms of FP32 GEMMs in a span of 1 ms: the saving is the whole span, not 75 ms.
  EXPECT_NE(r.out.find("\"savings_ns\": 1000000,"), std::string::npos) << r.out;
}

// 4 (the fast part). An event larger than the reader's bound is skipped without being buffered,
// counted, and the events around it are read.
TEST(Faults, OversizedEventIsSkippedUnread) {
  std::string doc =
      R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "before", "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"stream": 7}},)";
  doc += R"({"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"stream": 7, "note": ")";
  for (int i = 0; i < 300000; ++i) doc += "ab\\\"{[,]}";          // escapes and brackets inside the string: 3 MB
  doc += R"("}, "name": "huge"},)" + std::string(3u << 20, ' ');  // and 3 MB of blanks after it
  doc +=
      R"({"ph": "X", "cat": "kernel", "name": "after", "pid": 0, "tid": 7, "ts": 3, "dur": 1, "args": {"stream": 7}}]})";
  KinetoReadOptions options;
  options.max_unit_bytes = 1u << 20;
  auto t = read_kineto_bytes(doc, "oversized.json", options);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->warnings.oversized_events, 1);
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->str(t->kernels.name[0]), "before");
  EXPECT_EQ(t->str(t->kernels.name[1]), "after");
  // A string of 4 MB of escaped backslashes (and no quote) is skipped in one pass.
  std::string slashes = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": ")";
  slashes.append(4u << 20, '\\');
  slashes += R"(", "pid": 0, "tid": 7, "ts": 2, "dur": 1}]})";
  auto s = read_kineto_bytes(slashes, "slashes.json", options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->warnings.oversized_events, 1);
  EXPECT_EQ(s->kernels.size(), 0u);
  // An oversized event cut short by the end of the file is still a truncation.
  auto cut = read_kineto_bytes(doc.substr(0, doc.size() / 2), "cut.json", options);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos) << cut.status().message();
}

}  // namespace
}  // namespace tracedoc::testing
