// Nsight Compute on the timeline: a report read as its own timeline, the diagnosis rules on what ncu
// measured (uncoalesced_access, bank_conflicts, barrier_stalls, occupancy_limited, memory_bound,
// compute_bound) on real kernels, and --ncu on summary, diagnose, sql and view. The reports are
// ../shared/traces/ncu's; the tests skip without them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "analysis/context.h"
#include "analysis/summary.h"
#include "diagnose/engine.h"
#include "diagnose/rules.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

fs::path ncu_dir() { return shared_dir().empty() ? fs::path() : shared_dir() / "traces/ncu"; }
std::string ncu(const std::string& relative) { return (ncu_dir() / relative).string(); }

#define REQUIRE_NCU_REPORTS() \
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: the Nsight Compute reports are skipped"

Trace open(const std::string& path) {
  auto t = open_trace(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? std::move(t).value() : Trace{};
}

diagnose::Diagnosis diagnose_with(const Trace& trace, const std::string& rule = "", const std::string& param = "",
                                  double value = 0) {
  diagnose::DiagnoseOptions options;
  if (!rule.empty()) {
    options.settings[rule].params[param] = value;
    options.min_savings_share = 0;  // a threshold lowered to see a small effect: keep what it finds
  }
  return diagnose::diagnose(trace, options);
}

TRACEDOC_TEST_LABELS(NcuTimeline, corpus);

TEST(NcuTimeline, AReportIsATimelineOfItsLaunchesBackToBack) {
  REQUIRE_NCU_REPORTS();
  const Trace t = open(ncu("cs599k/rms_norm_vector_v1.ncu-rep"));
  EXPECT_EQ(t.source.format, "ncu-report");
  ASSERT_EQ(t.kernels.size(), 4u);
  // gpu__time_duration.sum of the four launches, in the order ncu profiled them, back to back.
  const std::vector<int64_t> durations = {10816, 11040, 11168, 10880};
  TimeNs at = 0;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.kernels.start[i], at) << i;
    EXPECT_EQ(t.kernels.end[i] - t.kernels.start[i], durations[i]) << i;
    at = t.kernels.end[i];
    EXPECT_EQ(t.str(t.kernels.name[i]), "rms_norm_vector_kernel_float4(float *, float *, float *, int, float)");
    EXPECT_EQ(t.str(t.kernels.short_name[i]), "rms_norm_vector_kernel_float4");
    EXPECT_EQ(t.kernels.grid_x[i], 1024);
    EXPECT_EQ(t.kernels.block_x[i], 256);
    EXPECT_EQ(t.kernels.registers_per_thread[i], 32);
  }
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.str(t.devices[0].name), "NVIDIA H100 PCIe");
  EXPECT_EQ(t.devices[0].sm_count, 114);
  EXPECT_EQ(t.devices[0].compute_major, 9);
  // The report rides along and joins its own rows one to one.
  ASSERT_EQ(t.ncu_reports.size(), 1u);
  const NcuJoin join = join_ncu(t);
  EXPECT_EQ(join.matched, 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(join.answered_by[i].result, static_cast<int32_t>(i));

  // The CSV details page reads the same way; stats runs on it.
  const Trace csv = open(ncu("llm-perf-opt/k0001.ncu.details.csv"));
  ASSERT_EQ(csv.kernels.size(), 1u);
  EXPECT_EQ(csv.kernels.end[0] - csv.kernels.start[0], 6750);
  const CliRun stats = tracedoc({"stats", "-r", "cuda_gpu_kern_sum", ncu("armleth/report.ncu-rep"), "-f", "csv"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const auto rows = parse_csv(stats.out);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1][1], "52576");
}

TRACEDOC_TEST_LABELS(NcuDiagnose, corpus);

TEST(NcuDiagnose, UncoalescedAccessFiresOnTheStridedKernelOnly) {
  REQUIRE_NCU_REPORTS();
  const diagnose::Diagnosis strided = diagnose_with(open(ncu("armleth/report_v4_8_per_thread.ncu-rep")));
  const diagnose::Finding* f = finding(strided, "uncoalesced_access");
  ASSERT_NE(f, nullptr);
  // 31 sectors per request where 4 would do; ncu's own rule stored "2616000 excessive sectors (87% of
  // the total 3000000 sectors)".
  EXPECT_NEAR(figure(*f, "load_sectors_per_request"), 31.23, 0.01);
  EXPECT_EQ(figure(*f, "excessive_sectors"), 2616000);
  EXPECT_NEAR(figure(*f, "excessive_sectors_share"), 0.872, 0.001);
  EXPECT_EQ(f->savings_ns, static_cast<int64_t>(151328 * 0.872));
  EXPECT_EQ(f->severity, diagnose::Severity::kCritical);
  ASSERT_EQ(f->offenders.size(), 1u);
  EXPECT_EQ(f->offenders[0].name, "matrix_addition2D(float *, float *, float *, int, int)");
  EXPECT_NE(f->remedy.find("threadIdx.x"), std::string::npos);
  // The coalesced version of the same kernel: 3.9 sectors per request, no excess.
  const diagnose::Diagnosis coalesced = diagnose_with(open(ncu("armleth/report.ncu-rep")));
  EXPECT_EQ(finding(coalesced, "uncoalesced_access"), nullptr);
  // It runs at 88% of its memory roof instead: only fewer bytes would help.
  const diagnose::Finding* memory = finding(coalesced, "memory_bound");
  ASSERT_NE(memory, nullptr);
  EXPECT_NEAR(figure(*memory, "roof_share"), 0.884, 0.001);
  EXPECT_EQ(finding(coalesced, "compute_bound"), nullptr);
}

TEST(NcuDiagnose, BarrierStallsAreSecondAndBankConflictsStayQuiet) {
  REQUIRE_NCU_REPORTS();
  const Trace t = open(ncu("cs599k/rms_norm_vector_v1.ncu-rep"));
  const diagnose::Diagnosis d = diagnose_with(t);
  const diagnose::Finding* barrier = finding(d, "barrier_stalls");
  ASSERT_NE(barrier, nullptr);
  EXPECT_EQ(figure(*barrier, "barrier_rank"), 2);  // after long scoreboard
  // The first launch's PC samples: 13.5% found a warp waiting at a barrier (4.08 per issue).
  EXPECT_NEAR(figure(*barrier, "barrier_share"), 0.135, 0.001);
  EXPECT_NEAR(figure(*barrier, "barrier_per_issue"), 4.08, 0.005);
  ASSERT_EQ(barrier->offenders.size(), 1u);  // the four launches are one kernel
  EXPECT_EQ(barrier->offenders[0].count, 4);
  EXPECT_EQ(barrier->offenders[0].total_ns, 43904);
  EXPECT_NE(barrier->offenders[0].detail.find("after long_scoreboard"), std::string::npos);
  // Each launch rates its own instance: the sum of its barrier share times its time.
  EXPECT_GT(barrier->savings_share, 0.12);
  EXPECT_LT(barrier->savings_share, 0.16);
  // 56 conflicts in 33,848 shared-load wavefronts: quiet at the default threshold ...
  EXPECT_EQ(finding(d, "bank_conflicts"), nullptr);
  // ... and named, with ncu's count, when the threshold is below it.
  const diagnose::Diagnosis low = diagnose_with(t, "bank_conflicts", "min_conflict_share", 0.001);
  const diagnose::Finding* conflicts = finding(low, "bank_conflicts");
  ASSERT_NE(conflicts, nullptr);
  EXPECT_EQ(figure(*conflicts, "shared_load_conflicts"), 56);
  EXPECT_NEAR(figure(*conflicts, "conflict_share"), 56.0 / 33848, 1e-6);
  // The report alone is microseconds long: its findings are kept by share, not by a floor in ns.
  EXPECT_LT(barrier->savings_ns, 10000);
}

TEST(NcuDiagnose, OccupancyLimitedNamesItsLimiter) {
  REQUIRE_NCU_REPORTS();
  // The cuBLAS GEMV of the CSV export: 16.67% theoretical occupancy, limited by registers (ncu's
  // TheoreticalOccupancy rule says the same).
  const diagnose::Diagnosis d = diagnose_with(open(ncu("llm-perf-opt/k0001.ncu.details.csv")));
  const diagnose::Finding* f = finding(d, "occupancy_limited");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(figure(*f, "theoretical_occupancy_pct"), 16.67, 0.01);
  EXPECT_NEAR(figure(*f, "achieved_occupancy_pct"), 11.32, 0.01);
  EXPECT_NE(f->offenders[0].detail.find("limited by registers"), std::string::npos);
  EXPECT_NE(f->remedy.find("__launch_bounds__"), std::string::npos);
  // Full theoretical occupancy (armleth, cs599k, lakshya): quiet.
  for (const char* report : {"armleth/report.ncu-rep", "cs599k/rms_norm_vector_v1.ncu-rep", "lakshya/naive.ncu-rep"})
    EXPECT_EQ(finding(diagnose_with(open(ncu(report))), "occupancy_limited"), nullptr) << report;
}

TEST(NcuDiagnose, TheNaiveGemmIsFarBelowItsRoofAndHasNoTensorCores) {
  REQUIRE_NCU_REPORTS();
  // Above the ridge (14 FLOP per byte) but at a tenth of the FP32 peak: not near the compute roof.
  // A GTX 1660 SUPER is Turing without tensor cores: tensor_cores_unused must not fire.
  const diagnose::Diagnosis d = diagnose_with(open(ncu("lakshya/naive.ncu-rep")));
  EXPECT_EQ(finding(d, "compute_bound"), nullptr);
  EXPECT_EQ(finding(d, "memory_bound"), nullptr);
  EXPECT_EQ(finding(d, "tensor_cores_unused"), nullptr);
  // The RNG kernel PyTorch ran before the RMS norm: 70% of its compute roof.
  const diagnose::Diagnosis rng = diagnose_with(open(ncu("cs599k/rms-norm-pytorch.ncu-rep")));
  const diagnose::Finding* compute = finding(rng, "compute_bound");
  ASSERT_NE(compute, nullptr);
  EXPECT_GT(figure(*compute, "roof_share"), 0.6);
}

TEST(NcuDiagnose, JoinedToAnExportTheRulesWeighByTheTimeline) {
  REQUIRE_NCU_REPORTS();
  const std::string sqlite = ncu("extrap/ex-gpu.s10.sqlite"), report = ncu("extrap/ex-gpu.s10.ncu-rep");
  const CliRun run = tracedoc({"diagnose", "--ncu", report, sqlite, "-f", "json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"ncu\": {\n"), std::string::npos);
  EXPECT_NE(run.out.find("\"launches\": 6,"), std::string::npos);
  EXPECT_NE(run.out.find("\"matched\": 6,"), std::string::npos);
  EXPECT_NE(run.out.find("\"unmatched\": []"), std::string::npos);
  // kernel_config's launch heuristics fire on the 10-thread blocks; without ncu data they say a
  // report would confirm them, with it they need not.
  const CliRun plain = tracedoc({"diagnose", sqlite});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("An Nsight Compute report of these kernels would confirm it"), std::string::npos);
  const CliRun text = tracedoc({"diagnose", "--ncu", report, sqlite});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("  ncu: 6 of 6 profiled launches matched kernels of the timeline\n"), std::string::npos);
  EXPECT_EQ(text.out.find("would confirm it"), std::string::npos);
  // Another program's report: every launch listed as unmatched.
  const CliRun other = tracedoc({"diagnose", "--ncu", ncu("armleth/report.ncu-rep"), sqlite});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("  ncu: 0 of 1 profiled launch matched kernels of the timeline\n    unmatched: " +
                           ncu("armleth/report.ncu-rep") +
                           " launch 0: matrix_addition2D(float *, float *, float *, int, int)\n"),
            std::string::npos);
}

TEST(NcuDiagnose, EveryRuleIdIsInTheSchemas) {
  std::set<std::string> ids;
  for (const diagnose::RuleDef& r : diagnose::all_rules()) ids.insert(r.id);
  for (const char* schema : {"docs/schemas/diagnose.schema.json", "docs/schemas/check.schema.json"}) {
    const std::string text = read_file(fs::path(TRACEDOC_SOURCE_DIR) / schema);
    const size_t at = text.find("\"rule_id\": {");
    ASSERT_NE(at, std::string::npos) << schema;
    const size_t open = text.find('[', at), close = text.find(']', at);
    const std::string list = text.substr(open, close - open);
    std::set<std::string> listed;
    const std::regex quoted("\"([a-z_]+)\"");
    for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it)
      listed.insert((*it)[1].str());
    EXPECT_EQ(listed, ids) << schema;
  }
}

TRACEDOC_TEST_LABELS(NcuSummary, corpus);

TEST(NcuSummary, TopKernelsCarryTheirAnswers) {
  REQUIRE_NCU_REPORTS();
  Trace t = open(ncu("extrap/ex-gpu.s10.sqlite"));
  auto report = open_trace(ncu("cs599k/rms_norm_vector_v1.ncu-rep"));  // a report alone: its own answers
  ASSERT_TRUE(report.ok());
  const TraceSummary alone = summarize(*report);
  ASSERT_TRUE(alone.ncu.has_value());
  EXPECT_EQ(alone.ncu->matched, 4);
  ASSERT_EQ(alone.ncu->kernels.size(), 1u);
  EXPECT_EQ(alone.ncu->kernels[0].answers.bound, "memory");
  EXPECT_EQ(alone.producer, "Nsight Compute (its profiled launches laid back to back)");
  const CliRun run = tracedoc({"summary", "--ncu", ncu("extrap/ex-gpu.s10.ncu-rep"), ncu("extrap/ex-gpu.s10.sqlite")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("Nsight Compute (6 of 6 profiled launches matched kernels of the timeline)\n"
                         "  init_array(double*, unsigned long)\n"
                         "    theoretical occupancy 50.0% (limited by blocks)\n"),
            std::string::npos);
  const CliRun json =
      tracedoc({"summary", "-f", "json", "--ncu", ncu("extrap/ex-gpu.s10.ncu-rep"), ncu("extrap/ex-gpu.s10.sqlite")});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"occupancy_limiter\": \"blocks\""), std::string::npos);
}

TRACEDOC_TEST_LABELS(NcuSql, corpus);

TEST(NcuSql, LaunchesJoinTheKernelsTable) {
  REQUIRE_NCU_REPORTS();
  const CliRun run = tracedoc({"sql", "--ncu", ncu("extrap/ex-gpu.s10.ncu-rep"), ncu("extrap/ex-gpu.s10.sqlite"),
                               "SELECT l.launch, l.kernel_rowid, k.name = l.name AS same_name, l.duration_ns, "
                               "l.occupancy_limiter FROM ncu_launches l JOIN kernels k ON k.rowid = l.kernel_rowid "
                               "ORDER BY l.launch",
                               "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_EQ(rows.size(), 7u);
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][0], std::to_string(i - 1));
    EXPECT_EQ(rows[i][1], std::to_string(i));  // the k-th launch is the k-th kernel of the export
    EXPECT_EQ(rows[i][2], "1");
    EXPECT_EQ(rows[i][4], "blocks");
  }
  EXPECT_EQ(rows[1][3], "4064");
  // Without --ncu the table is there, empty.
  const CliRun none =
      tracedoc({"sql", ncu("extrap/ex-gpu.s10.sqlite"), "SELECT count(*) AS n FROM ncu_launches", "-f", "csv"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out, "n\n0\n");
}

TRACEDOC_TEST_LABELS(NcuView, corpus);

TEST(NcuView, HoverShowsTheAnswersAndTheRooflinePresetColoursByBound) {
  REQUIRE_NCU_REPORTS();
  const fs::path out = fs::temp_directory_path() / ("tracedoc_ncu_view_" + std::to_string(getpid()) + ".html");
  const CliRun run = tracedoc({"view", "--colors", "roofline", ncu("armleth/report.ncu-rep"), "-o", out.string()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string page = read_file(out);
  EXPECT_NE(page.find("ncu: memory bound, 88% of the roof; occupancy 79.4% (theoretical 100.0%, limited by warps); "
                      "3.9 sectors per global load (0% excess); stalls long_scoreboard, wait, drain"),
            std::string::npos);
  EXPECT_NE(page.find("memory-bound kernel (ncu)"), std::string::npos);
  fs::remove(out);
}

}  // namespace
}  // namespace tracedoc::testing
