// `tracedoc check` (src/budget): budget files (every key, and the errors that name the file and the
// key), the figures of a trace cross-checked against the reports that compute the same things
// (step_sum, cuda_gpu_kern_sum, the diagnosis, the summary), pass and fail per check type, forbidden
// findings, baseline comparison, and the three output formats. The exit codes are in cli_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "analysis/cross_rank.h"
#include "analysis/host_link.h"
#include "analysis/intervals.h"
#include "analysis/summary.h"
#include "budget/budget.h"
#include "budget/evaluate.h"
#include "budget/measures.h"
#include "diagnose/engine.h"
#include "ingest/open_trace.h"
#include "report/check_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using budget::Budget;
using budget::CheckReport;
using budget::CheckResult;
using budget::Measures;

const fs::path kExample = fs::path(TRACEDOC_SOURCE_DIR) / "examples" / "toy_training.sqlite";
const char* const kResnetSlow =
    "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz";
const char* const kResnetFast =
    "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623212756351.pt.trace.json.gz";

Budget load(const tracedoc::testing::ScratchDir& dir, const std::string& text) {
  auto b = budget::load_budget(dir.write("budget.toml", text));
  EXPECT_TRUE(b.ok()) << b.status().message();
  return b.ok() ? std::move(*b) : Budget{};
}

CheckReport check(const Trace& t, const Budget& b, const Trace* baseline = nullptr) {
  const Measures m = budget::measure(t, b);
  if (!baseline) return budget::evaluate(b, m, nullptr);
  const Measures base = budget::measure(*baseline, b, budget::MeasureScope::kBaseline);
  return budget::evaluate(b, m, &base);
}

const CheckResult& result(const CheckReport& r, const std::string& check, const std::string& scope = "") {
  for (const CheckResult& x : r.results) {
    if (x.check == check && (scope.empty() || x.scope == scope)) return x;
  }
  ADD_FAILURE() << "no result " << check << " " << scope;
  static const CheckResult kNone;
  return kNone;
}

// Columns of a report by header name.
size_t column(const std::vector<std::vector<std::string>>& rows, const std::string& name) {
  const auto& h = rows.at(0);
  return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin());
}

// The step windows as the diagnosis stretches them, recomputed from step_sum's rows (one process),
// in time order: from the CPU start, no earlier than the previous window's end, to the later of the
// CPU end and the end of the step's GPU work.
std::vector<Interval> stretched_windows(const Trace& t) {
  const auto rows = parse_csv(report_csv(t, "step_sum").value());
  const size_t cpu_start = column(rows, "CPU Start (ns)"), cpu_dur = column(rows, "CPU Duration (ns)"),
               gpu_end = column(rows, "GPU End (ns)");
  std::vector<Interval> out;
  int64_t prev_end = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const int64_t start = std::stoll(rows[i][cpu_start]);
    int64_t end = start + std::stoll(rows[i][cpu_dur]);
    if (!rows[i][gpu_end].empty()) end = std::max<int64_t>(end, std::stoll(rows[i][gpu_end]));
    out.push_back({std::max(start, prev_end), end});
    prev_end = end;
  }
  return out;
}

std::vector<int64_t> stretched_steps(const Trace& t) {
  std::vector<int64_t> out;
  for (const Interval& w : stretched_windows(t)) out.push_back(w.length());
  std::sort(out.begin(), out.end());
  return out;
}

// cuda_gpu_kern_sum's instances and total time of the kernels whose name the regex finds.
std::pair<int64_t, int64_t> kern_sum(const Trace& t, const std::string& regex) {
  const auto rows = parse_csv(report_csv(t, "cuda_gpu_kern_sum").value());
  const size_t total = column(rows, "Total Time (ns)"), instances = column(rows, "Instances"),
               name = column(rows, "Name");
  std::pair<int64_t, int64_t> out{0, 0};
  for (size_t i = 1; i < rows.size(); ++i) {
    if (!std::regex_search(rows[i][name], std::regex(regex))) continue;
    out.first += std::stoll(rows[i][instances]);
    out.second += std::stoll(rows[i][total]);
  }
  return out;
}

TRACEDOC_TEST_LABELS(CheckBudget, unit);

TEST(CheckBudget, ReadsEveryKeyAndResolvesPathsAgainstItsFolder) {
  tracedoc::testing::ScratchDir dir;
  dir.write("diagnose.toml", "[rules.comb_pattern]\nmin_gap_share = 0.25\n");
  const Budget b = load(dir, R"([steps]
p50_max_ms = 120
p95_max_ms = 150.5
marker = "train_step*"
[gpu]
busy_min_pct = 80
idle_max_pct = 20
[copies]
share_max_pct = 5
[memory]
peak_max_gb = 70
[[kernel]]
name = "sgemm"
total_max_ms = 10
share_max_pct = 50
[[kernel]]
name = "^nccl"
count_max = 3
avg_max_us = 12.5
[findings]
forbid = ["comb_pattern", "sync_stall", "comb_pattern"]
min_severity = "warning"
config = "diagnose.toml"
[baseline]
path = "base/line.json.gz"
step_p50_regression_max_pct = 5
step_p95_regression_max_pct = 10
busy_drop_max_pct = 5
)");
  EXPECT_EQ(b.step_p50_max_ms, 120);
  EXPECT_EQ(b.step_p95_max_ms, 150.5);
  EXPECT_EQ(b.step_marker, "train_step*");
  EXPECT_EQ(b.busy_min_pct, 80);
  EXPECT_EQ(b.idle_max_pct, 20);
  EXPECT_EQ(b.copy_share_max_pct, 5);
  EXPECT_EQ(b.memory_peak_max_gb, 70);
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_EQ(b.kernels[0].name, "sgemm");
  EXPECT_EQ(b.kernels[0].total_max_ms, 10);
  EXPECT_EQ(b.kernels[0].share_max_pct, 50);
  EXPECT_FALSE(b.kernels[0].count_max);
  EXPECT_EQ(b.kernels[1].count_max, 3);
  EXPECT_EQ(b.kernels[1].avg_max_us, 12.5);
  EXPECT_EQ(b.forbid, (std::vector<std::string>{"comb_pattern", "sync_stall"}));  // duplicates once
  EXPECT_EQ(b.forbid_min_severity, diagnose::Severity::kWarning);
  EXPECT_EQ(b.diagnose_options.settings.at("comb_pattern").params.at("min_gap_share"), 0.25);
  EXPECT_EQ(b.baseline_path, (dir.path() / "base/line.json.gz").string());
  EXPECT_EQ(b.step_p50_regression_max_pct, 5);
  EXPECT_EQ(b.step_p95_regression_max_pct, 10);
  EXPECT_EQ(b.busy_drop_max_pct, 5);
  EXPECT_FALSE(b.empty());
  EXPECT_TRUE(b.compares_baseline());
}

TEST(CheckBudget, ABudgetThatChecksNothingIsAnError) {
  // A gate that passes whatever the trace holds is a typo, not a budget: an empty file, comments
  // only, or a baseline without a limit.
  tracedoc::testing::ScratchDir dir;
  for (const char* text : {"", "# no limits yet\n", "[steps]\nmarker = \"train_step\"\n"}) {
    const fs::path path = dir.write("empty.toml", text);
    const auto b = budget::load_budget(path.string());
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_EQ(b.status().message(),
              path.string() +
                  ": the budget sets no limits, so it would check nothing (set one in [steps], [gpu], [copies], "
                  "[memory], [ranks], [[kernel]], [findings] or [baseline]; docs/check.md)");
  }
  // A folder given for the file.
  const auto folder = budget::load_budget(dir.path().string());
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().message(), dir.path().string() + ": is a directory, not a file");
  // A check report without results still says so (a merged report of no ranks).
  const CheckReport r;
  EXPECT_NE(check_text(r).find("nothing checked: the budget"), std::string::npos) << check_text(r);
}

TEST(CheckBudget, ErrorsNameTheFileAndTheKey) {
  tracedoc::testing::ScratchDir dir;
  dir.write("bad_diagnose.toml", "[rules.gpu_idle]\nmin_idel = 0.2\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[stepz]\np50_max_ms = 1\n", "stepz: unknown section"},
      {"[steps]\np50_max = 1\n", "steps.p50_max: unknown key (expected p50_max_ms, p95_max_ms, marker)"},
      {"[steps]\np50_max_ms = \"fast\"\n", "steps.p50_max_ms: must be a number"},
      {"[gpu]\nbusy_min_pct = 120\n", "gpu.busy_min_pct: must be a number from 0 to 100"},
      {"[copies]\nshare_max_pct = -1\n", "copies.share_max_pct: must be a number from 0 to 100"},
      {"[memory]\npeak_max_gb = true\n", "memory.peak_max_gb: must be a number"},
      {"gpu = 3\n", "gpu: expected a section [gpu]"},
      {"[[kernel]]\nname = \"sgemm(\"\ntotal_max_ms = 1\n", "kernel[0].name: bad regular expression 'sgemm('"},
      {"[[kernel]]\ntotal_max_ms = 1\n", "kernel[0].name: missing"},
      {"[[kernel]]\nname = \"a\"\ncount_max = 1\n[[kernel]]\nname = \"b\"\n", "kernel[1]: sets no limit"},
      {"[[kernel]]\nname = \"a\"\ncount_max = 1.5\n", "kernel[0].count_max: must be a whole number"},
      {"[[kernel]]\nname = \"a\"\ntotal_ms = 1\n", "kernel[0].total_ms: unknown key"},
      {"[kernel]\nname = \"a\"\n", "kernel: must be an array of tables"},
      {"[findings]\nforbid = [\"comb\"]\n", "findings.forbid: unknown rule 'comb'"},
      {"[findings]\nforbid = \"comb_pattern\"\n", "findings.forbid: must be a list of rule ids"},
      {"[findings]\nmin_severity = \"high\"\n", "findings.min_severity: must be info, warning or critical"},
      {"[findings]\nconfig = \"bad_diagnose.toml\"\n",
       "findings.config: " + (dir.path() / "bad_diagnose.toml").string() +
           ": rule gpu_idle has no parameter 'min_idel'"},
      {"[baseline]\npath = \"b.json\"\n", "baseline.path: no baseline limit to compare with"},
      {"[baseline]\nbusy_drop = 5\n", "baseline.busy_drop: unknown key"},
      {"[steps]\np50_max_ms = \n", "budget.toml:2:14: invalid TOML"},  // TOML syntax: the line and column
  };
  for (const auto& [text, message] : cases) {
    const std::string path = dir.write("budget.toml", text);
    auto b = budget::load_budget(path);
    ASSERT_FALSE(b.ok()) << text;
    EXPECT_EQ(b.status().message().rfind(path, 0), 0u) << "names the budget file first: " << b.status().message();
    EXPECT_NE(b.status().message().find(message), std::string::npos) << text << "\n -> " << b.status().message();
    EXPECT_EQ(b.status().message().find('\n'), std::string::npos) << "one line";
  }
  EXPECT_FALSE(budget::load_budget((dir.path() / "missing.toml").string()).ok());
}

TRACEDOC_TEST_LABELS(CheckMeasures, corpus);

// The bundled example: every figure equals what the reports and the diagnosis say.
TEST(CheckMeasures, BundledExampleMatchesTheReports) {
  const Trace& t = load_nsys(kExample.string());
  tracedoc::testing::ScratchDir dir;
  const Budget b = load(dir, R"([memory]
peak_max_gb = 1
[[kernel]]
name = "sgemm"
total_max_ms = 1
[[kernel]]
name = "^no such kernel$"
count_max = 0
[findings]
forbid = ["comb_pattern", "straggler"]
)");
  const Measures m = budget::measure(t, b);
  // Steps: the three detected steps of step_sum, stretched as the diagnosis stretches them; their
  // sum is the diagnosis's time basis.
  EXPECT_EQ(m.step_source, "detected");
  EXPECT_EQ(m.step_ns, stretched_steps(t));
  EXPECT_EQ(m.step_ns, (std::vector<int64_t>{21586213, 25148544, 25699790}));
  EXPECT_EQ(m.step_percentile(50), 25148544);  // the middle one: comb_pattern's median step (25.1 ms)
  // p95 lies 0.9 of the way from the 2nd to the 3rd: 25148544 + 0.9 * 551246 = 25644665.4.
  EXPECT_EQ(m.step_percentile(95), 25644665);
  const diagnose::Diagnosis all = diagnose::diagnose(t, {});
  EXPECT_EQ(m.step_ns[0] + m.step_ns[1] + m.step_ns[2], all.basis_ns);
  // GPU busy time inside the steps: gpu_idle's figures over the same windows.
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].label, "pid 4242 GPU 0 (NVIDIA A100-SXM4-80GB)");
  const diagnose::Finding* idle = finding(all, "gpu_idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(m.gpus[0].window_ns, static_cast<int64_t>(figure(*idle, "window_ns")));
  EXPECT_EQ(m.gpus[0].busy_ns, static_cast<int64_t>(figure(*idle, "busy_ns")));
  EXPECT_EQ(m.gpus[0].busy_ns, 17139212);
  // Host<->device copies inside the steps, recomputed: the example copies on one stream, one at a
  // time, so the union is the sum of each copy's part inside the windows.
  const std::vector<Interval> windows = stretched_windows(t);
  int64_t copies = 0;
  std::vector<Interval> copy_intervals;
  for (size_t i = 0; i < t.memcpys.size(); ++i) {
    if (!crosses_host_link(t.memcpys.copy_kind[i])) continue;
    copy_intervals.push_back({t.memcpys.start[i], t.memcpys.end[i]});
    for (const Interval& w : windows)
      copies += std::max<int64_t>(0, std::min(w.end, t.memcpys.end[i]) - std::max(w.start, t.memcpys.start[i]));
  }
  int64_t summed = 0;
  for (const Interval& c : copy_intervals) summed += c.length();
  ASSERT_EQ(IntervalSet::busy_union(copy_intervals).total(), summed) << "copies do not overlap";
  EXPECT_EQ(m.gpus[0].copy_ns, copies);
  EXPECT_EQ(m.gpus[0].copy_ns, 4327191);
  // No GPU memory events in the example.
  EXPECT_FALSE(m.memory_recorded);
  // Kernels: cuda_gpu_kern_sum's rows whose name the regex finds; every kernel for the share.
  const auto [count, total] = kern_sum(t, "sgemm");
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0].count, count);
  EXPECT_EQ(m.kernels[0].total_ns, total);
  EXPECT_EQ(m.kernels[0].count, 36);
  EXPECT_EQ(m.kernels[0].total_ns, 13842842);  // the two ampere_sgemm kernels, 8943132 + 4899710
  EXPECT_EQ(m.kernels[1].count, 0);
  EXPECT_EQ(m.kernel_total_ns, kern_sum(t, "").second);
  EXPECT_EQ(m.kernel_total_ns, summarize(t).kernel_total_ns);
  // Findings: only the forbidden rules ran.
  ASSERT_TRUE(m.diagnosis.has_value());
  EXPECT_EQ(m.diagnosis->rules_run, (std::vector<std::string>{"comb_pattern", "straggler"}));
  ASSERT_NE(finding(*m.diagnosis, "comb_pattern"), nullptr);
  EXPECT_EQ(finding(*m.diagnosis, "comb_pattern")->savings_ns, finding(all, "comb_pattern")->savings_ns);
}

TRACEDOC_TEST_LABELS(CheckEvaluate, corpus);

// Each check type passes at its limit and fails just past it.
TEST(CheckEvaluate, PassAndFailPerCheckType) {
  const Trace& t = load_nsys(kExample.string());
  tracedoc::testing::ScratchDir dir;
  // Limits at the example's own figures (exact in decimal): every check passes.
  const Budget at = load(dir, R"([steps]
p50_max_ms = 25.148544
p95_max_ms = 25.644665
[gpu]
busy_min_pct = 23
idle_max_pct = 77
[copies]
share_max_pct = 6
[[kernel]]
name = "sgemm"
total_max_ms = 13.842842
count_max = 36
avg_max_us = 385
share_max_pct = 91
[[kernel]]
name = "^no such kernel$"
avg_max_us = 0
[findings]
forbid = ["straggler", "staircase_memory"]
)");
  const CheckReport pass = check(t, at);
  EXPECT_EQ(pass.results.size(), 12u);
  for (const CheckResult& r : pass.results) EXPECT_TRUE(r.pass) << r.check << " " << r.actual << " vs " << r.limit;
  EXPECT_EQ(result(pass, "steps.p50_max_ms").figure, 25148544);
  EXPECT_DOUBLE_EQ(result(pass, "steps.p50_max_ms").actual, 25.148544);
  EXPECT_DOUBLE_EQ(result(pass, "gpu.busy_min_pct").actual, 100.0 * 17139212 / 72434547);
  EXPECT_EQ(result(pass, "gpu.idle_max_pct").figure, 72434547 - 17139212);
  EXPECT_DOUBLE_EQ(result(pass, "copies.share_max_pct").actual, 100.0 * 4327191 / 72434547);
  EXPECT_EQ(result(pass, "kernel[0].count_max").actual, 36);
  EXPECT_DOUBLE_EQ(result(pass, "kernel[0].avg_max_us").actual, 13842842.0 / 36 / 1e3);
  EXPECT_EQ(result(pass, "kernel[1].avg_max_us").detail, "no kernel matches");
  EXPECT_EQ(result(pass, "findings.forbid", "straggler").actual, 0);

  const Budget past = load(dir, R"([steps]
p50_max_ms = 25.148
p95_max_ms = 25.644
[gpu]
busy_min_pct = 24
idle_max_pct = 76
[copies]
share_max_pct = 5
[memory]
peak_max_gb = 80
[[kernel]]
name = "sgemm"
total_max_ms = 13.84
count_max = 35
avg_max_us = 384
share_max_pct = 90
[findings]
forbid = ["comb_pattern", "sync_stall", "tensor_cores_unused"]
min_severity = "critical"
)");
  const CheckReport fail = check(t, past);
  for (const CheckResult& r : fail.results) {
    // Among the findings only comb_pattern is critical: the warnings do not count at this severity.
    const bool expect_pass = r.check == "findings.forbid" && r.scope != "comb_pattern";
    EXPECT_EQ(r.pass, expect_pass) << r.check << " " << r.scope << " " << r.actual << " vs " << r.limit;
  }
  EXPECT_EQ(fail.failed(), fail.results.size() - 2);
  // A figure the trace cannot give fails, with the reason.
  const CheckResult& memory = result(fail, "memory.peak_max_gb");
  EXPECT_TRUE(std::isnan(memory.actual));
  EXPECT_NE(memory.detail.find("no GPU memory events"), std::string::npos);
  EXPECT_NE(result(fail, "findings.forbid", "comb_pattern").detail.find("critical: comb pattern"), std::string::npos);
  EXPECT_EQ(result(fail, "findings.forbid", "sync_stall").detail, "not found at critical or above");
}

TEST(CheckEvaluate, BaselineComparison) {
  const Trace& t = load_nsys(kExample.string());
  tracedoc::testing::ScratchDir dir;
  const Budget b = load(
      dir, "[baseline]\nstep_p50_regression_max_pct = 0\nstep_p95_regression_max_pct = 0\nbusy_drop_max_pct = 0\n");
  // The trace against itself: 0% regression, 0 points drop, at the tightest limits.
  const CheckReport same = check(t, b, &t);
  ASSERT_EQ(same.results.size(), 3u);
  for (const CheckResult& r : same.results) {
    EXPECT_TRUE(r.pass) << r.check;
    EXPECT_EQ(r.actual, 0) << r.check;
  }
  EXPECT_EQ(result(same, "baseline.step_p50_regression_max_pct").basis, 25148544);
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const Trace& slow = load_kineto((shared_dir() / kResnetSlow).string());
  const Trace& fast = load_kineto((shared_dir() / kResnetFast).string());
  const Budget loose = load(dir, "[baseline]\nstep_p50_regression_max_pct = 50\nbusy_drop_max_pct = 20\n");
  const Budget tight = load(dir, "[baseline]\nstep_p50_regression_max_pct = 30\nbusy_drop_max_pct = 10\n");
  // num_workers=0 against the num_workers=4 run: the steps got slower and the GPU less busy.
  const Measures fm = budget::measure(fast, loose, budget::MeasureScope::kBaseline);
  const Measures sm = budget::measure(slow, loose);
  const CheckReport regressed = budget::evaluate(loose, sm, &fm);
  const CheckResult& p50 = result(regressed, "baseline.step_p50_regression_max_pct");
  EXPECT_EQ(p50.figure, sm.step_percentile(50));
  EXPECT_EQ(p50.basis, fm.step_percentile(50));
  EXPECT_DOUBLE_EQ(p50.actual, 100.0 * static_cast<double>(p50.figure - p50.basis) / static_cast<double>(p50.basis));
  EXPECT_GT(p50.actual, 30);
  EXPECT_LT(p50.actual, 50);
  EXPECT_TRUE(p50.pass);
  const CheckResult& drop = result(regressed, "baseline.busy_drop_max_pct");
  EXPECT_DOUBLE_EQ(drop.actual, fm.overall_busy_pct() - sm.overall_busy_pct());
  EXPECT_GT(drop.actual, 10);
  EXPECT_TRUE(drop.pass);
  const CheckReport strict = budget::evaluate(tight, sm, &fm);
  EXPECT_EQ(strict.failed(), 2u);
  // The other way round it is an improvement: negative figures pass any limit.
  const CheckReport improved = budget::evaluate(tight, budget::measure(fast, tight), &sm);
  EXPECT_EQ(improved.failed(), 0u);
  EXPECT_LT(result(improved, "baseline.step_p50_regression_max_pct").actual, 0);
}

// A real PyTorch trace: ProfilerStep windows, memory, kernels, findings against the reports.
TEST(CheckMeasures, PyTorchTraceMatchesTheReports) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared (the real traces) is absent";
  const Trace& t = load_kineto((shared_dir() / kResnetSlow).string());
  tracedoc::testing::ScratchDir dir;
  const Budget b = load(dir, R"([steps]
p50_max_ms = 180
p95_max_ms = 180
[gpu]
busy_min_pct = 50
[memory]
peak_max_gb = 2.5
[[kernel]]
name = "sgemm"
share_max_pct = 25
[findings]
forbid = ["dataloader_bound", "straggler"]
)");
  const Measures m = budget::measure(t, b);
  EXPECT_EQ(m.step_source, "ProfilerStep");
  EXPECT_EQ(m.step_ns, stretched_steps(t));
  ASSERT_EQ(m.step_ns.size(), 6u);
  int64_t sum = 0;
  for (int64_t s : m.step_ns) sum += s;
  EXPECT_EQ(sum, 1065553000);  // diagnose's basis (tests/diagnose_test.cpp): the six steps stretched
  // Six steps: p50 is the mean of the 3rd and 4th (half a nanosecond up), p95 lies 0.75 of the way
  // from the 5th to the 6th (at 5 * 0.95 = 4.75 ranks).
  std::vector<int64_t> sorted = m.step_ns;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(m.step_percentile(50), (sorted[2] + sorted[3] + 1) / 2);
  EXPECT_EQ(m.step_percentile(95), sorted[4] + std::llround(0.75 * static_cast<double>(sorted[5] - sorted[4])));
  // Busy share over the steps: gpu_idle's figures.
  const diagnose::Diagnosis all = diagnose::diagnose(t, {});
  const diagnose::Finding* idle = finding(all, "gpu_idle");
  ASSERT_NE(idle, nullptr);
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].label, "GPU 0 (Tesla V100-DGXS-32GB)");
  EXPECT_EQ(m.gpus[0].window_ns, 1065553000);
  EXPECT_EQ(m.gpus[0].busy_ns, static_cast<int64_t>(figure(*idle, "busy_ns")));
  // Memory: the summary's peak of allocated memory (the allocator's recorded totals).
  const TraceSummary s = summarize(t);
  ASSERT_TRUE(m.memory_recorded);
  ASSERT_EQ(m.memory.size(), 1u);
  ASSERT_EQ(s.devices.size(), 1u);
  EXPECT_EQ(m.memory[0].peak_bytes, s.devices[0].peak_allocated);
  // Kernels: cuda_gpu_kern_sum.
  const auto [count, total] = kern_sum(t, "sgemm");
  EXPECT_GT(count, 0);
  EXPECT_EQ(m.kernels.at(0).count, count);
  EXPECT_EQ(m.kernels.at(0).total_ns, total);
  EXPECT_EQ(m.kernel_total_ns, s.kernel_total_ns);

  const CheckReport r = budget::evaluate(b, m, nullptr);
  EXPECT_TRUE(result(r, "steps.p50_max_ms").pass);   // 175 ms
  EXPECT_FALSE(result(r, "steps.p95_max_ms").pass);  // 188 ms
  EXPECT_TRUE(result(r, "gpu.busy_min_pct").pass);   // 56.6%
  const CheckResult& memory = result(r, "memory.peak_max_gb");
  EXPECT_EQ(memory.figure, s.devices[0].peak_allocated);
  EXPECT_FALSE(memory.pass);  // 2.79 GB
  EXPECT_DOUBLE_EQ(result(r, "kernel[0].share_max_pct").actual,
                   100.0 * static_cast<double>(total) / static_cast<double>(s.kernel_total_ns));
  EXPECT_FALSE(result(r, "findings.forbid", "dataloader_bound").pass);
  EXPECT_TRUE(result(r, "findings.forbid", "straggler").pass);
  EXPECT_EQ(r.failed(), 3u);
}

TRACEDOC_TEST_LABELS(CheckWriter, unit);

TEST(CheckWriter, ColumnJsonMarkdown) {
  const Trace& t = load_nsys(kExample.string());
  tracedoc::testing::ScratchDir dir;
  const Budget b =
      load(dir, "[steps]\np50_max_ms = 20\n[gpu]\nbusy_min_pct = 20\n[findings]\nforbid = [\"straggler\"]\n");
  const CheckReport r = check(t, b);
  const std::string text = check_text(r);
  EXPECT_EQ(text.rfind(kExample.string() + ": 1 of 3 checks failed (" + b.path + ")\n\n", 0), 0u) << text;
  EXPECT_NE(
      text.find(
          "FAIL  steps.p50_max_ms  25.149 ms  <= 20 ms  steps: p50 of 3 steps (detected), from 21.6 ms to 25.7 ms\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("PASS  gpu.busy_min_pct     23.66%  >= 20%    pid 4242 GPU 0 (NVIDIA A100-SXM4-80GB): busy 17.1 "
                      "ms of 72.4 ms in 3 steps (detected)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("PASS  findings.forbid           0  <= 0      straggler: not found\n"), std::string::npos)
      << text;
  const std::string json = check_json(r);
  EXPECT_EQ(json.rfind("{\n  \"schema_version\": 1,\n  \"input\": ", 0), 0u) << json;
  for (const char* key :
       {"\"passed\": false", "\"checked\": 3", "\"failed\": 1", "\"check\": \"steps.p50_max_ms\"",
        "\"status\": \"fail\"", "\"actual\": 25.148544", "\"limit\": 20,", "\"bound\": \"max\"", "\"figure\": 25148544",
        "\"basis\": 72434547", "\"figure_unit\": \"ns\"", "\"bound\": \"min\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
  const std::string md = check_markdown(r);
  EXPECT_NE(md.find("| Result | Check | Scope | Actual | Limit | Detail |"), std::string::npos) << md;
  EXPECT_NE(md.find("| **FAIL** | `steps.p50_max_ms` | steps | 25.149 ms | ≤ 20 ms |"), std::string::npos) << md;
}

// [ranks]: the straggler loop's rank 1 computes 1.5x as long as rank 0 (1.2x the median of the two,
// their mean) and starts every all-reduce last; the clean two-rank loop is balanced. One GPU cannot be measured, which
// fails the check.
TEST(CheckEvaluate, RanksImbalanceAndCollectiveSkew) {
  tracedoc::testing::ScratchDir dir;
  const Budget b = load(dir, "[ranks]\ncompute_imbalance_max = 1.1\nskew_p50_max_ms = 1\n");
  auto straggler = open_trace(synth_rank_directory("straggler").string());
  auto clean = open_trace(synth_rank_directory("clean_2ranks").string());
  ASSERT_TRUE(straggler.ok() && clean.ok());
  const CheckReport slow = check(*straggler, b);
  ASSERT_EQ(slow.results.size(), 2u);
  const CheckResult& imbalance = result(slow, "ranks.compute_imbalance_max");
  EXPECT_FALSE(imbalance.pass);
  EXPECT_NEAR(imbalance.actual, 1.5 / 1.25, 0.01);
  // The figure is summary's: the Ranks section's longest-computing GPU over the median GPU.
  const TraceSummary s = summarize(*straggler);
  ASSERT_TRUE(s.ranks);
  EXPECT_EQ(imbalance.figure, s.ranks->rows[s.ranks->slowest].compute_ns);
  EXPECT_NEAR(imbalance.actual, s.ranks->slowest_ratio, 1e-12);
  const CheckResult& skew = result(slow, "ranks.skew_p50_max_ms");
  EXPECT_FALSE(skew.pass);
  EXPECT_EQ(skew.figure, collective_skew(*straggler, pytorch::collect_gpu_work(*straggler)).median_skew_ns);
  EXPECT_GT(skew.actual, 1.0);
  for (const CheckResult& r : check(*clean, b).results) EXPECT_TRUE(r.pass) << r.check << " " << r.actual;
  const CheckReport one = check(load_nsys(kExample.string()), b);
  for (const CheckResult& r : one.results) {
    EXPECT_FALSE(r.pass);
    EXPECT_TRUE(std::isnan(r.actual));
    EXPECT_EQ(r.detail, "fewer than two GPUs: nothing across ranks");
  }
}

}  // namespace
}  // namespace tracedoc::testing
