// Every reader over every real input once, and every report, rule and command of the engine once on
// one real trace of each format: the work the AddressSanitizer pass of CI runs (label `sanitize`),
// where a memory error or undefined behaviour aborts the process. The golden and oracle suites
// check the values; these check that nothing reads or writes where it must not, on inputs of every
// era, vendor and schema the project has, and that a file is either read or refused in one line.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "analysis/nsys_analyze/rules.h"
#include "analysis/report_registry.h"
#include "analysis/summary.h"
#include "compare/trace_diff.h"
#include "diagnose/engine.h"
#include "ingest/ncu_csv_reader.h"
#include "ingest/open_trace.h"
#include "report/diagnose_writer.h"
#include "report/diff_writer.h"
#include "report/html_view_writer.h"
#include "report/sql_model.h"
#include "report/summary_writer.h"
#include "report/writers.h"
#include "test_support.h"
#include "view/view_model.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

// The inputs of ../shared/traces by kind, in name order: nsys exports, PyTorch traces, Nsight
// Compute reports and CSV exports (the oracles' CSVs are outputs, not inputs).
struct SharedInputs {
  std::vector<fs::path> exports, kineto, ncu;
};

const SharedInputs& shared_inputs() {
  static const SharedInputs inputs = [] {
    SharedInputs in;
    const fs::path traces = shared_dir() / "traces";
    std::error_code ec;
    if (shared_dir().empty() || !fs::is_directory(traces, ec)) return in;
    for (auto it = fs::recursive_directory_iterator(traces, ec); it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      const fs::path& p = it->path();
      const std::string name = p.filename().string(), where = p.string();
      if (name.ends_with(".sqlite")) {
        in.exports.push_back(p);
      } else if (name.ends_with(".json") || name.ends_with(".json.gz")) {
        in.kineto.push_back(p);
      } else if (name.ends_with(".ncu-rep") || name.ends_with(".ncu-repz") ||
                 (name.ends_with(".csv") && where.find("/ncu/") != std::string::npos)) {
        in.ncu.push_back(p);
      }
    }
    for (auto* list : {&in.exports, &in.kineto, &in.ncu}) std::sort(list->begin(), list->end());
    return in;
  }();
  return inputs;
}

#define REQUIRE_SHARED_INPUTS()                                                       \
  if (shared_inputs().exports.empty()) {                                              \
    GTEST_SKIP() << "../shared/traces not found: every reader's real inputs skipped"; \
  }

// Read, or refused with one line naming the file (a file of ../shared that is deliberately invalid,
// a JSON file that is not a trace).
void expect_read_or_refused(const Status& st, const fs::path& p) {
  if (st.ok()) return;
  EXPECT_NE(st.message().find(p.string()), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
}

TRACEDOC_TEST_LABELS(EveryInput, corpus sanitize);

TEST(EveryInput, EveryExportIsReadWithEveryTable) {
  REQUIRE_SHARED_INPUTS();
  OpenOptions all;
  all.nsys.tables = kLoadAll;
  for (const fs::path& p : shared_inputs().exports) {
    const auto trace = open_trace(p.string(), all);
    expect_read_or_refused(trace.status(), p);
  }
}

TEST(EveryInput, EveryPyTorchTraceIsRead) {
  REQUIRE_SHARED_INPUTS();
  OpenOptions all;
  all.nsys.tables = kLoadAll | kLoadPythonFunctions;
  size_t read = 0;
  for (const fs::path& p : shared_inputs().kineto) {
    const auto trace = open_trace(p.string(), all);
    expect_read_or_refused(trace.status(), p);
    read += trace.ok();
  }
  EXPECT_GT(read, shared_inputs().kineto.size() / 2);
}

TEST(EveryInput, EveryNsightComputeReportIsRead) {
  REQUIRE_SHARED_INPUTS();
  for (const fs::path& p : shared_inputs().ncu) {
    const auto report = read_ncu_input(p.string());
    expect_read_or_refused(report.status(), p);
    const auto timeline = open_trace(p.string());
    expect_read_or_refused(timeline.status(), p);
  }
}

// Every report and rule with its default arguments, the summary, diagnosis, timeline view, the diff
// against itself and the SQL tables, on a 2-GPU nsys export and a PyTorch trace with shapes.
void run_everything(const Trace& trace) {
  SCOPED_TRACE(trace.source.path);
  for (const ReportDef& def : all_reports()) {
    TableSink rows;
    const Status st = def.run(trace, ReportArgs{}, rows);
    // Reports that need an argument (or the data) say so.
    EXPECT_TRUE(st.ok() || st.code() == ErrorCode::kNoData || st.code() == ErrorCode::kUsage)
        << def.name << ": " << st.message();
  }
  for (const nsys_analyze::RuleDef& def : nsys_analyze::all_rules()) {
    const auto args = nsys_analyze::parse_rule_args(def.name, {});
    ASSERT_TRUE(args.ok()) << args.status().message();
    TableSink rows;
    const Status st = def.run(trace, *args, rows);
    EXPECT_TRUE(st.ok() || st.code() == ErrorCode::kNoData) << def.name << ": " << st.message();
  }
  EXPECT_FALSE(summary_text(summarize(trace)).empty());
  const diagnose::Diagnosis found = diagnose::diagnose(trace, {});
  EXPECT_FALSE(diagnose_json({found}).empty());
  const auto options = view::view_options({});
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(render_view_html(trace, view::build_view(trace, *options)).empty());
  EXPECT_FALSE(diff_text(compare::diff_traces(trace, trace), {}).empty());
  TableSink rows;
  EXPECT_TRUE(run_sql_query(trace, trace.source.path, "SELECT count(*) FROM kernels", rows).ok());
}

TEST(EveryInput, EveryReportRuleAndCommandOnceOnEachFormat) {
  REQUIRE_SHARED_INPUTS();
  run_everything(load_nsys((shared_dir() / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite").string()));
  run_everything(load_kineto(
      (shared_dir() / "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
          .string()));
}

}  // namespace
}  // namespace tracedoc::testing
