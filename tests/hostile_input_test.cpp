// Hostile and broken inputs, for both readers: whatever the bytes, a reader returns a trace or a
// clear error, never crashes (the sanitizer build runs these too), and per-event problems are
// counted instead of failing the whole file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <zlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "../fuzz/fuzz_targets.h"
#include "analysis/nsys_analyze/rules.h"
#include "diagnose/engine.h"
#include "report/diagnose_writer.h"
#include "report/diff_writer.h"
#include "report/html_view_writer.h"
#include "compare/trace_diff.h"
#include "analysis/summary.h"
#include "report/summary_writer.h"
#include "view/view_model.h"
#include "analysis/report_registry.h"
#include "ingest/kineto_reader.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/open_trace.h"
#include "report/writers.h"
#include "test_support.h"

namespace tracedoc {
namespace {

namespace fs = std::filesystem;

fs::path temp_file(const std::string& name) {
  // One folder per test process, removed at exit: ctest runs the tests (and another build's suite,
  // e.g. build-asan's) in parallel, and tests write files of the same names.
  static const struct Dir {
    fs::path path = fs::temp_directory_path() / ("tracedoc-hostile-test-" + std::to_string(::getpid()));
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } dir;
  fs::create_directories(dir.path);
  return dir.path / name;
}

std::string gzip(const std::string& text) {
  const fs::path p = temp_file("gzip.tmp");
  gzFile f = gzopen(p.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  return testing::read_file(p);
}

// Every report, every analyze rule, and what the other commands compute (summary, diagnosis, diff,
// view) on a trace: whatever it holds, each prints or says it has no data.
void run_every_report(const Trace& trace) {
  for (const auto& def : all_reports()) {
    SCOPED_TRACE(def.name);
    (void)testing::report_csv(trace, def.name);
  }
  for (const auto& rule : nsys_analyze::all_rules()) {
    SCOPED_TRACE(rule.name);
    (void)testing::rule_csv(trace, std::string(rule.name) + ":rows=-1:gap=0");
    (void)testing::rule_csv(trace, std::string(rule.name) + ":threshold=101:chunks=1000");
  }
  fuzz::run_analyses(trace);
  // The viewer on an empty trace too: no tracks, no buckets, no lanes.
  view::ViewOptions critical;
  critical.colors = view::ColorScheme::critical_preset();
  (void)render_view_html(Trace{}, view::build_view(Trace{}, critical));
}

std::string small_real_trace() {
  const auto shared = testing::shared_dir();
  if (shared.empty()) return {};
  return testing::gunzip(shared /
                         "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
}

TRACEDOC_TEST_LABELS(HostileJson, corpus sanitize);

TEST(HostileJson, TruncatedAnywhereIsAnErrorNamingTheByte) {
  const std::string doc = small_real_trace();
  if (doc.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  std::mt19937_64 rng(42);
  const std::string gz = gzip(doc);
  for (int i = 0; i < 60; ++i) {
    const size_t cut = rng() % (doc.size() - 64);  // the last bytes are the closing brace and spaces
    auto t = read_kineto_bytes(std::string_view(doc).substr(0, cut), "cut.json");
    ASSERT_FALSE(t.ok()) << "cut at " << cut;
    EXPECT_NE(t.status().message().find("cut.json: invalid JSON at byte"), std::string::npos) << t.status().message();
    const size_t gz_cut = rng() % (gz.size() - 8);
    auto g = read_kineto_bytes(std::string_view(gz).substr(0, gz_cut), "cut.json.gz");
    ASSERT_FALSE(g.ok()) << "gzip cut at " << gz_cut;
  }
}

TEST(HostileJson, GarbageAndEmptyInputs) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 50; ++i) {
    std::string junk(1 + rng() % 5000, '\0');
    for (auto& c : junk) c = static_cast<char>(rng());
    if (i % 2) junk[0] = '{';
    EXPECT_FALSE(read_kineto_bytes(junk, "junk.json").ok());
    EXPECT_FALSE(read_kineto_bytes("\x1f\x8b" + junk, "junk.json.gz").ok());  // gzip magic, then junk
  }
  EXPECT_FALSE(read_kineto_bytes("", "empty.json").ok());
  EXPECT_FALSE(read_kineto_bytes("   \n", "blank.json").ok());
  EXPECT_FALSE(read_kineto_bytes("\x1f\x8b", "magic.json.gz").ok());
  for (const std::string& deep : {std::string(200000, '['), "{\"traceEvents\": [" + std::string(200000, '{')}) {
    auto t = read_kineto_bytes(deep, "deep.json");
    ASSERT_FALSE(t.ok());
  }
}

TEST(HostileJson, HundredMegabyteStringAndInvalidUtf8) {
  std::string doc =
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 1, "
      "\"args\": {\"stream\": 7}, \"name\": \"";
  doc.append(100u << 20, 'k');
  doc +=
      "\"}, {\"ph\": \"X\", \"cat\": \"kernel\", \"pid\": 0, \"tid\": 7, \"ts\": 2, \"dur\": 1, \"args\": {\"stream\": "
      "7}, "
      "\"name\": \"bad \xff\xfe utf8 \xc3\x28 \xed\xa0\x80\"}]}";
  auto t = read_kineto_bytes(doc, "huge.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->kernels.size(), 2u);
  EXPECT_EQ(t->str(t->kernels.name[0]).size(), 100u << 20);
  // Bytes are kept as they are; JSON output replaces invalid UTF-8 with U+FFFD.
  char* buffer = nullptr;
  size_t length = 0;
  FILE* memory = open_memstream(&buffer, &length);
  {
    TextOut sink(memory);
    WriterOptions wo;
    wo.format = OutputFormat::kJson;
    auto writer = make_writer(wo, sink);
    ASSERT_TRUE(find_report("cuda_gpu_kern_sum")->run(*t, {}, *writer).ok());
  }
  std::fclose(memory);
  const std::string out(buffer, length);
  std::free(buffer);
  EXPECT_NE(out.find("bad \xef\xbf\xbd\xef\xbf\xbd utf8 \xef\xbf\xbd( \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
            std::string::npos);
}

TEST(HostileJson, OddEventsAreCountedOrKept) {
  auto t = read_kineto_bytes(R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "late", "pid": 0, "tid": 7, "ts": 30, "dur": 1, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "dup", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "dup", "pid": 0, "tid": 7, "ts": 10, "dur": 1, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "negative ts", "pid": 0, "tid": 7, "ts": -5, "dur": 0, "args": {"stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "ts past int64", "pid": 0, "tid": 7, "ts": 9223372036854775807, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "ts 1e30", "pid": 0, "tid": 7, "ts": 1e30, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "end past int64", "pid": 0, "tid": 7, "ts": 9223372036854775.000, "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "dur past int64", "pid": 0, "tid": 7, "ts": 1, "dur": 99999999999999999999},
    {"ph": "X", "cat": "kernel", "name": "dur N/A", "pid": 0, "tid": 7, "ts": 40, "dur": N/A, "args": {"correlation": 99}},
    {"ph": "X", "cat": "kernel", "name": "end before start", "pid": 0, "tid": 7, "ts": 50, "dur": -3},
    {"ph": "Q", "name": "unknown phase"}, {"cat": "kernel"}, 17, "text", null
  ]})J",
                             "odd.json");
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> names;
  for (StrId id : t->kernels.name) names.emplace_back(t->str(id));
  // Time order; duplicates kept (the file said so); the unusable ones dropped and counted.
  EXPECT_EQ(names, (std::vector<std::string>{"negative ts", "dup", "dup", "late", "dur N/A", "end before start"}));
  EXPECT_EQ(t->kernels.start[0], -5000);
  EXPECT_EQ(t->warnings.missing_times, 2);     // ts past int64 (as ns), 1e30
  EXPECT_EQ(t->warnings.unknown_events, 5);    // phase Q, no phase, and 17, "text", null in the list
  EXPECT_EQ(t->warnings.absurd_durations, 2);  // end past int64, dur past int64
  EXPECT_EQ(t->warnings.negative_durations, 1);
  run_every_report(*t);  // the kernel whose correlation points nowhere, included
}

// The bundled example with SQL applied to a copy.
std::string modified_example(const std::string& name, const std::string& sql) {
  const fs::path copy = temp_file(name);
  fs::copy_file(fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite", copy,
                fs::copy_options::overwrite_existing);
  sqlite3* db = nullptr;
  sqlite3_open(copy.c_str(), &db);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return copy.string();
}

TRACEDOC_TEST_LABELS(HostileSqlite, unit sanitize);

TEST(HostileSqlite, TruncatedAnywhereIsAnErrorOrATrace) {
  const std::string bytes = testing::read_file(fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 40; ++i) {
    const size_t cut = rng() % bytes.size();
    const fs::path p = temp_file("cut.sqlite");
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes.substr(0, cut);
    auto t = open_trace(p.string());
    if (t.ok())
      run_every_report(*t);  // a cut past every page read can still be a whole database
    else
      EXPECT_NE(t.status().message().find(p.string()), std::string::npos) << t.status().message();
  }
}

TEST(HostileSqlite, BrokenRowsAreReadAndReported) {
  const std::string path = modified_example("broken_rows.sqlite", R"SQL(
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 100 WHERE rowid = 1;           -- ends before it starts
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 987654 WHERE rowid = 2;      -- launched by nothing
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET globalPid = 12345 WHERE rowid = 3;           -- wrong process
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 99999, shortName = 99998 WHERE rowid = 4;  -- no such string
    UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 77, srcKind = 99, dstKind = 250 WHERE rowid = 1; -- unknown enums
    UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -5, end = 9223372036854775807 WHERE rowid = 1;    -- extreme times
  )SQL");
  auto t = read_nsys_sqlite(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kernels.size(), 68u);
  EXPECT_EQ(t->warnings.negative_durations, 1);
  run_every_report(*t);
}

TEST(HostileSqlite, ExportFromAFutureSchemaStillReads) {
  // A newer nsys adds tables and columns and bumps the version: what tracedoc knows still reads, and
  // the reports are the same as on the original.
  const std::string path = modified_example("future.sqlite", R"SQL(
    UPDATE META_DATA_EXPORT SET value = '9.1.0' WHERE name = 'EXPORT_SCHEMA_VERSION';
    UPDATE META_DATA_EXPORT SET value = '9' WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR';
    CREATE TABLE CUPTI_ACTIVITY_KIND_QUANTUM (start INTEGER, end INTEGER, qubits INTEGER);
    ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN futureColumn TEXT;
    ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME ADD COLUMN anotherOne INTEGER DEFAULT 7;
  )SQL");
  auto future = read_nsys_sqlite(path);
  ASSERT_TRUE(future.ok()) << future.status().message();
  auto original = read_nsys_sqlite((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  ASSERT_TRUE(original.ok());
  for (const char* report : {"cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_trace", "nvtx_sum"}) {
    EXPECT_EQ(testing::report_csv(*future, report), testing::report_csv(*original, report)) << report;
  }
}

}  // namespace
}  // namespace tracedoc
