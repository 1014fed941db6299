// The Kineto reader's pipeline (ingest/kineto_event_pipeline.h) reads every trace exactly as the
// sequential reader does: the same tables, strings, warnings and errors, on every real trace of
// ../shared with runs small enough to cut each trace into hundreds of windows, and on inputs made
// to defeat its guesses (event boundaries inside strings, events larger than a window, errors and
// truncations at any offset).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/task_pool.h"
#include "ingest/kineto_event_parser.h"
#include "ingest/kineto_event_pipeline.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

// Sets the pool's size for one scope.
class Threads {
 public:
  explicit Threads(int n) : before_(thread_count()) { set_thread_count(n); }
  ~Threads() { set_thread_count(before_); }

 private:
  int before_;
};

// One read of `bytes`, sequential (run_bytes 0) or through the pipeline on `threads` threads.
Result<Trace> read(const std::string& bytes, size_t run_bytes, int threads = 3) {
  Threads pool(threads);
  KinetoReadOptions options;
  options.python_functions = true;
  options.parallel_run_bytes = run_bytes;
  return read_kineto_bytes(bytes, "trace.json", options);
}

// The same input read sequentially and through the pipeline with small runs gives the same trace,
// or the same error.
void expect_pipeline_reads_as_sequential(const std::string& bytes, const std::string& what) {
  const auto sequential = read(bytes, 0, 1);
  const std::vector<size_t> run_sizes = kSanitized ? std::vector<size_t>{4096} : std::vector<size_t>{700, 4096, 65536};
  for (size_t run_bytes : run_sizes) {
    const auto piped = read(bytes, run_bytes);
    const std::string label = what + " in runs of " + std::to_string(run_bytes) + " bytes";
    ASSERT_EQ(sequential.ok(), piped.ok())
        << label << ": " << (sequential.ok() ? piped : sequential).status().message();
    if (!sequential.ok()) {
      EXPECT_EQ(sequential.status().message(), piped.status().message()) << label;
      continue;
    }
    expect_same_trace(*sequential, *piped, label);
  }
}

std::vector<fs::path> real_kineto_files() {
  std::vector<fs::path> found;
  const fs::path traces = shared_dir() / "traces";
  for (const char* dir : {"kineto", "torch113-cpu"}) {
    if (!fs::is_directory(traces / dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(traces / dir)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || name.ends_with("_et.json.gz") || name == "execution_details.json") continue;
      if ((name.ends_with(".json") || name.ends_with(".json.gz")) && looks_like_kineto(e.path().string()))
        found.push_back(e.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string contents(const fs::path& p) { return p.extension() == ".gz" ? gunzip(p) : read_file(p); }

TRACEDOC_TEST_LABELS(KinetoPipeline, corpus threads);

TEST(KinetoPipeline, EveryRealTraceReadsAsSequentially) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found: pipeline test on real traces skipped";
  const std::vector<fs::path> files = real_kineto_files();
  ASSERT_GE(files.size(), 50u);
  size_t read_ok = 0;
  const size_t every = kSanitized ? 10 : 1;  // a spread of eras and vendors under a sanitizer
  for (size_t i = 0; i < files.size(); i += every) {
    const std::string bytes = contents(files[i]);
    expect_pipeline_reads_as_sequential(bytes, files[i].filename().string());
    read_ok += read(bytes, 0, 1).ok();
  }
  EXPECT_GE(read_ok, 50u / every);
}

// A real trace whose event names hold "},\n  {": every run guessed there starts inside a string.
TEST(KinetoPipeline, BoundariesInsideStringsAreCaught) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const fs::path p = shared_dir() /
                     "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/"
                     "worker0.1623143089861.pt.trace.json.gz";
  std::string bytes = contents(p);
  ASSERT_FALSE(bytes.empty());
  std::string planted;
  size_t names = 0;
  for (size_t at = 0;;) {
    const size_t next = bytes.find("\"name\": \"", at);
    if (next == std::string::npos) {
      planted += bytes.substr(at);
      break;
    }
    planted += bytes.substr(at, next + 9 - at);
    planted += "},\n  {\\\"ph\\\": \\\"X\\\"}, {";  // a boundary as a writer lays it out, inside the name
    at = next + 9;
    ++names;
  }
  ASSERT_GT(names, 1000u);
  expect_pipeline_reads_as_sequential(planted, "names with boundaries");
  auto t = read(planted, 700);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->str(t->pytorch.ops.name[0]).starts_with("},\n  {\"ph\""));
}

// Events larger than a window (megabytes of args) go back to the sequential reader and on.
TEST(KinetoPipeline, EventsLargerThanAWindow) {
  std::string doc = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int i = 0; i < 400; ++i) {
    doc += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i) + R"(", "pid": 0, "tid": 7, "ts": )" +
           std::to_string(10 * i) + R"(, "dur": 3, "args": {"stream": 7, "note": ")";
    doc += std::string(i % 50 == 0 ? 300000 : 40, i % 2 ? 'x' : '{');
    doc += "\"}},\n  ";
  }
  doc +=
      R"({"ph": "i", "name": "last", "pid": 0, "tid": 7, "ts": 5000}], "deviceProperties": [{"id": 0, "name": "GPU"}]})";
  expect_pipeline_reads_as_sequential(doc, "large events");
  auto t = read(doc, 700);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->kernels.size(), 400u);
  EXPECT_EQ(t->devices.size(), 1u);
}

// A syntax error or a cut anywhere gives the sequential reader's message and byte offset.
TEST(KinetoPipeline, ErrorsAndTruncationsAtAnyOffset) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared/traces not found";
  const std::string bytes = contents(shared_dir() /
                                     "traces/kineto/kineto/tb_plugin/samples/"
                                     "resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz");
  ASSERT_GT(bytes.size(), 100000u);
  for (int k = 1; k < 20; k += kSanitized ? 6 : 1) {
    const size_t at = bytes.size() * k / 20;
    SCOPED_TRACE(at);
    expect_pipeline_reads_as_sequential(bytes.substr(0, at), "cut");
    std::string broken = bytes;
    broken.insert(at, 1, '"');  // an unescaped quote somewhere
    expect_pipeline_reads_as_sequential(broken, "quote");
    broken = bytes;
    broken[at] = '}';
    expect_pipeline_reads_as_sequential(broken, "brace");
  }
}

TEST(KinetoPipeline, GuessesAnEventStartAfterABraceAndComma) {
  const std::string text = R"(x", "a": {"b": 1}, "c": [{"d": 2}, {"e": 3}]},
  {"ph": "X"})";
  const char* from = text.data();
  const char* to = text.data() + text.size();
  // The '{' of {"e": 3} follows "}, " too: a guess the pipeline checks; the event's comes after it.
  const char* first = kineto::guess_event_start(from, to);
  ASSERT_LT(first, to);
  EXPECT_EQ(std::string(first, 4), R"({"e")");
  const char* second = kineto::guess_event_start(first + 1, to);
  ASSERT_LT(second, to);
  EXPECT_EQ(std::string(second, 5), R"({"ph")");
  EXPECT_EQ(kineto::guess_event_start(second + 1, to), to);
}

TEST(KinetoPipeline, RawEventValuesAreListedInOrder) {
  kineto::RawEvent e;
  for (size_t i = 0; i < std::size(kineto::kRawEventValues); ++i) {
    kineto::Value& v = e.*kineto::kRawEventValues[i];
    EXPECT_EQ(e.index_of(v), i);
    e.set(v, kineto::Value{"x", true, true, false});
  }
  EXPECT_EQ(e.present_mask, (uint64_t{1} << std::size(kineto::kRawEventValues)) - 1);
  e.clear();
  EXPECT_EQ(e.present_mask, 0u);
  for (auto member : kineto::kRawEventValues) EXPECT_FALSE((e.*member).present);
}

}  // namespace
}  // namespace tracedoc::testing
