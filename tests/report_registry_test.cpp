// The report list (analysis/report_registry.h): one entry per report, each with its kind.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "analysis/report_registry.h"
#include "test_support.h"

namespace tracedoc {
namespace {

TRACEDOC_TEST_LABELS(ReportRegistry, unit);

TEST(ReportRegistry, EveryReportOnceWithItsKind) {
  std::set<std::string> names;
  size_t traces = 0;
  for (const ReportDef& r : all_reports()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name << " twice";
    EXPECT_EQ(find_report(r.name), &r);
    EXPECT_NE(r.run, nullptr) << r.name;
    EXPECT_NE(r.tables, 0u) << r.name;
    // nsys names its event lists *_trace; the kind says it, the CLI never reads the name for it.
    EXPECT_EQ(r.kind == ReportKind::kTrace, std::string(r.name).ends_with("_trace")) << r.name;
    traces += r.kind == ReportKind::kTrace;
  }
  EXPECT_EQ(traces, 6u);  // cuda_api, cuda_gpu, cuda_kern_exec, gpu_mem, nvtx_gpu_proj, queue_length
  for (const std::string& name : default_reports()) EXPECT_EQ(find_report(name)->kind, ReportKind::kSummary) << name;
  EXPECT_EQ(find_report("no_such_report"), nullptr);
}

}  // namespace
}  // namespace tracedoc
