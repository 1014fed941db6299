// One median everywhere (analysis/statistics.h): the statistics themselves, and the median step that
// summary, diagnose, check and diff print for the same trace with an even number of steps, where
// the old conventions (upper middle, lower middle, nearest rank) each gave another figure.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analysis/statistics.h"
#include "common/human_units.h"
#include "model/step_names.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

TRACEDOC_TEST_LABELS(MedianRule, unit);

TEST(MedianRule, MedianIsTheMeanOfTheTwoMiddleValues) {
  EXPECT_EQ(median_ns({}), 0);
  EXPECT_EQ(median_ns({7}), 7);
  EXPECT_EQ(median_ns({9, 1, 5}), 5);
  EXPECT_EQ(median_ns({10, 1, 4, 2}), 3);                       // (2 + 4) / 2
  EXPECT_EQ(median_ns({1, 2}), 2);                              // 1.5 ns, half up
  EXPECT_EQ(median_ns({-3, -2}), -2);                           // -2.5 ns, half up
  EXPECT_EQ(median_ns({INT64_MAX, INT64_MAX - 1}), INT64_MAX);  // no overflow
  std::vector<int64_t> v = {10, 1, 4, 2};
  EXPECT_DOUBLE_EQ(median(std::span<int64_t>(v)), 3.0);
  std::vector<double> d = {0.5, 0.1, 0.2, 0.9};
  EXPECT_DOUBLE_EQ(median(std::span<double>(d)), 0.35);
  // nsys's median() agrees on any input (its distinct-value rule comes to the same).
  std::vector<int64_t> ties = {5, 5, 5, 1, 9, 9};
  std::vector<int64_t> sorted = ties;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(median(std::span<int64_t>(ties)), nsys_quantile(sorted, 0.5));
}

TEST(MedianRule, PercentilesInterpolateAndP50IsTheMedian) {
  const std::vector<int64_t> v = {40, 10, 30, 20};  // sorted 10 20 30 40
  EXPECT_EQ(percentile_ns(v, 0), 10);
  EXPECT_EQ(percentile_ns(v, 100), 40);
  EXPECT_EQ(percentile_ns(v, 50), median_ns(v));
  EXPECT_EQ(percentile_ns(v, 50), 25);
  EXPECT_EQ(percentile_ns(v, 95), 39);  // at rank 2.85: 30 + 0.85 * 10 = 38.5, half up
  EXPECT_EQ(percentile_ns({1, 2}, 50), 2);
  const std::vector<int64_t> sorted = {10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.25), 17.5);  // numpy's default
  EXPECT_DOUBLE_EQ(quantile_of_sorted(sorted, 0.5), 25.0);
}

TRACEDOC_TEST_LABELS(StepNames, unit);

TEST(StepNames, OneMatcherForProfilerStep) {
  EXPECT_EQ(profiler_step_number("ProfilerStep#12"), 12);
  EXPECT_EQ(profiler_step_number("ProfilerStep #3"), 3);
  EXPECT_EQ(profiler_step_number("ProfilerStep# 4"), 4);
  EXPECT_EQ(profiler_step_number("ProfilerStep\t#\t5"), 5);
  EXPECT_FALSE(is_profiler_step("ProfilerStep#"));
  EXPECT_EQ(profiler_step_number("ProfilerStep # 6 "), 6);  // the TensorBoard plugin allows blanks after N
  EXPECT_FALSE(is_profiler_step("ProfilerStep#1a"));
  EXPECT_FALSE(is_profiler_step("ProfilerStep"));
  EXPECT_FALSE(is_profiler_step("profilerstep#1"));
  EXPECT_FALSE(is_profiler_step("ProfilerStep#99999999999999999999"));
}

// Finds `needle` in `text` or fails with the text.
void expect_has(const std::string& text, const std::string& needle) {
  EXPECT_NE(text.find(needle), std::string::npos) << "no '" << needle << "' in:\n" << text;
}

TRACEDOC_TEST_LABELS(MedianConvention, corpus);

// A planted comb pattern with 8 steps whose GPU work ends inside each step (loss.item()), so the
// CPU windows summary reads and the stretched windows diagnose and check read are the same.
TEST(MedianConvention, EvenStepCountGivesOneMedianStepEverywhere) {
  ScratchDir dir;
  const fs::path spec = dir.write("comb.toml",
                                  "gpu = \"NVIDIA A100-SXM4-80GB\"\nsteps = 8\nseed = 3\n"
                                  "[plant.comb_pattern]\nstrength = 0.5\n");
  const std::string base = (dir.path() / "comb").string();
  const CliRun synth = tracedoc({"synth", spec.string(), "-o", base});
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const fs::path budget = dir.write("budget.toml", "[steps]\np50_max_ms = 1\n");
  for (const std::string& input : {base + ".json", base + ".sqlite"}) {
    SCOPED_TRACE(input);
    // The steps, independently: the ProfilerStep#N ranges' CPU durations.
    const Trace& t = input.ends_with(".json") ? load_kineto(input) : load_nsys(input);
    std::vector<int64_t> steps;
    for (size_t i = 0; i < t.ranges.size(); ++i) {
      if (is_profiler_step(t.str(t.ranges.text[i]))) steps.push_back(t.ranges.end[i] - t.ranges.start[i]);
    }
    ASSERT_EQ(steps.size(), 8u);
    std::sort(steps.begin(), steps.end());
    ASSERT_NE(steps[3], steps[4]) << "the two middle steps must differ for the test to tell conventions apart";
    const int64_t sum = steps[3] + steps[4];
    const int64_t expected = (sum + 1) / 2;  // whole nanoseconds, half up
    const std::string human = human_duration(expected);

    const CliRun summary = tracedoc({"summary", input, "-f", "json"});
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    expect_has(summary.out, fmt::format("\"median_cpu_ns\": {},", expected));
    expect_has(tracedoc({"summary", input}).out, fmt::format("Steps: 8 (ProfilerStep); median {} on the CPU", human));

    const CliRun diagnose = tracedoc({"diagnose", input, "-f", "json"});
    ASSERT_EQ(diagnose.exit_code, 0) << diagnose.err;
    expect_has(diagnose.out, fmt::format("\"median_step_ns\": {},", expected));
    expect_has(tracedoc({"diagnose", input}).out, fmt::format("(every {})", human));

    const CliRun check = tracedoc({"check", input, "--budget", budget.string(), "-f", "json"});
    expect_has(check.out, fmt::format("\"figure\": {},", expected));
    expect_has(tracedoc({"check", input, "--budget", budget.string()}).out,
               fmt::format("steps.p50_max_ms  {:.3f} ms", static_cast<double>(expected) / 1e6));

    // diff's step median is the exact mean (a real in JSON), the same figure before rounding.
    const CliRun diff = tracedoc({"diff", input, input, "-f", "json"});
    ASSERT_EQ(diff.exit_code, 0) << diff.err;
    expect_has(diff.out, fmt::format("\"median_ns\": {:.4f}", static_cast<double>(sum) / 2));
    expect_has(tracedoc({"diff", input, input}).out, fmt::format("Step time: median {} -> {}", human, human));
  }
}

// A figure a side cannot give is absent everywhere: on the 2×H100 export with a step marker only
// process 145 records, process 144 has no step median in summary or diff (it was "0 ns" in diff).
TEST(MedianConvention, AbsentStepMedianIsAbsentInSummaryAndDiff) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: the 2xH100 export skipped";
  const std::string input = (shared_dir() / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite").string();
  const std::string marker = "AllToAll4D, seq = 45440, op_id = 990760";
  const CliRun summary = tracedoc({"summary", input, "--step-marker", marker});
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  expect_has(summary.out, "  pid 144 GPU 0                                        -    254 ms");
  const CliRun diff = tracedoc({"diff", input, input, "--step-marker", marker});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  expect_has(diff.out,
             "  pid 144 GPU 0                                               - -> -      254 ms -> 254 ms               "
             " - -> -    - -> -\n");
  // No collective is matched on this export: skew, waited and started-last are absent too.
  expect_has(diff.out, "collective skew p50 - -> - (0 -> 0 collectives matched)");
  const CliRun csv = tracedoc({"diff", input, input, "--step-marker", marker, "-f", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto rows = parse_csv(csv.out);
  ASSERT_FALSE(rows.empty());
  const auto& head = rows[0];
  const size_t name = std::find(head.begin(), head.end(), "Name") - head.begin();
  const size_t base_median = std::find(head.begin(), head.end(), "Base Median (ns)") - head.begin();
  ASSERT_LT(base_median, head.size());
  int seen = 0;
  for (const auto& r : rows) {
    if (r.size() <= base_median || r[0] != "rank") continue;
    ++seen;
    if (r[name].starts_with("pid 144")) {
      EXPECT_EQ(r[base_median], "");
    } else if (r[name].starts_with("pid 145")) {
      EXPECT_NE(r[base_median], "");
    }
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace tracedoc::testing
