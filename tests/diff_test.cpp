// `tracedoc diff`: the rank test against SciPy's numbers, and the comparison on real traces: a real
// export against itself and against a copy with planted changes, HTA's own trace_diff pair against
// HTA's TraceDiff summary, and a PyTorch trace against its own nsys export (mixed formats).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>

#include "analysis/rank_test.h"
#include "analysis/summary.h"
#include "compare/trace_diff.h"
#include "ingest/open_trace.h"
#include "ingest/nsys_sqlite_reader.h"
#include "report/diff_writer.h"
#include "report/nsys_sqlite_writer.h"
#include "report/writers.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using compare::ItemDiff;
using compare::ItemKind;
using compare::TraceDiff;
using compare::Verdict;

// ---- The rank test: every expected value is what scipy.stats.mannwhitneyu(x, y,
// alternative="two-sided") printed (SciPy 1.17.1, default method "auto", continuity correction).

struct ScipyCase {
  const char* name;
  std::vector<int64_t> x, y;
  double u1, p;
  bool exact;
};

TRACEDOC_TEST_LABELS(RankTest, unit);

TEST(RankTest, EqualsScipyMannWhitneyU) {
  const std::vector<ScipyCase> cases = {
      {"separated", {1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0, 0.007936507936507936, true},
      {"ties_small", {3, 1, 4}, {1, 5, 9, 2, 6}, 4.5, 0.4533555045977864, false},
      {"interleaved", {1, 4, 5, 8, 9}, {2, 3, 6, 7, 10}, 12, 1.0, true},
      {"equal", {7, 7, 7}, {7, 7}, 3, 1.0, false},
      {"twelve_vs_fifteen",
       {751438, 404531, 930129, 701133, 363861, 23658, 986341, 484122, 372731, 176211, 640595, 122783},
       {667674, 211818, 378807, 955550, 451394, 285623, 924230, 409642, 567225, 559940, 1111351, 1063752, 670625,
        234495, 324447},
       76,
       0.5100675275575344,
       false},
  };
  for (const ScipyCase& c : cases) {
    const RankTest r = mann_whitney_u(c.x, c.y);
    EXPECT_DOUBLE_EQ(r.u1, c.u1) << c.name;
    EXPECT_NEAR(r.p_value, c.p, 1e-12 * std::max(1.0, c.p)) << c.name;
    EXPECT_EQ(r.exact, c.exact) << c.name;
  }
  // One value against 1..30: tied with 15, so the normal approximation (p 1); 15.5 is exact.
  std::vector<int64_t> y(30);
  std::iota(y.begin(), y.end(), 1);
  EXPECT_DOUBLE_EQ(mann_whitney_u(std::vector<int64_t>{15}, y).p_value, 1.0);
  // Eight against thirty, no ties: exact (p 0.7923333164020273; the approximation says 0.7883).
  std::vector<int64_t> eight = {5, 17, 29, 41, 53, 65, 77, 89}, thirty;
  for (int i = 0; i < 30; ++i) thirty.push_back(i * 3 + 1);
  const RankTest e = mann_whitney_u(eight, thirty);
  EXPECT_TRUE(e.exact);
  EXPECT_DOUBLE_EQ(e.u1, 128);
  EXPECT_NEAR(e.p_value, 0.7923333164020273, 1e-12);
}

TEST(RankTest, ExactOnLargeSamplesAndTiesOnLargeSamples) {
  // 1, 2, 3 against 4..50003: every ordering equally likely, U = 0 has probability 1/C(50003, 3).
  std::vector<int64_t> small = {1, 2, 3}, big(50000);
  std::iota(big.begin(), big.end(), 4);
  const RankTest r = mann_whitney_u(small, big);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 9.598848095993088e-14, 1e-24);
  // 10, 20, 30, 40 against 40,000 odd numbers from 3: U1 46, p 2.276055936225442e-13.
  std::vector<int64_t> four = {10, 20, 30, 40}, odd;
  for (int64_t v = 3; odd.size() < 40000; v += 2) odd.push_back(v);
  const RankTest f = mann_whitney_u(four, odd);
  EXPECT_TRUE(f.exact);
  EXPECT_DOUBLE_EQ(f.u1, 46);
  EXPECT_NEAR(f.p_value, 2.276055936225442e-13, 1e-23);
  // 60 against 50 values with many ties: the tie-corrected approximation, p 9.840822292363402e-06.
  const std::vector<int64_t> a = {1020, 1009, 1025, 1003, 1004, 1034, 1006, 1023, 1037, 1003, 1032, 1013,
                                  1002, 1005, 1027, 1026, 1004, 1015, 1005, 1035, 1027, 1003, 1036, 1007,
                                  1014, 1040, 1040, 1037, 1003, 1036, 1037, 1025, 1003, 1014, 1002, 1035,
                                  1008, 1018, 1026, 1009, 1034, 1007, 1036, 1019, 1035, 1011, 1006, 1037,
                                  1036, 1040, 1012, 1023, 1006, 1035, 1004, 1036, 1003, 1039, 1013, 1031};
  const std::vector<int64_t> b = {1044, 1037, 1030, 1039, 1047, 1039, 1033, 1029, 1025, 1021, 1025, 1015, 1046,
                                  1029, 1043, 1041, 1031, 1038, 1028, 1048, 1014, 1017, 1042, 1036, 1020, 1031,
                                  1019, 1041, 1036, 1012, 1014, 1045, 1046, 1030, 1031, 1032, 1048, 1041, 1047,
                                  1039, 1014, 1015, 1027, 1040, 1014, 1013, 1029, 1046, 1038, 1028};
  const RankTest t = mann_whitney_u(a, b);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.u1, 763.5);
  EXPECT_NEAR(t.p_value, 9.840822292363402e-06, 1e-17);
  // Nothing to compare.
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, b).p_value, 1.0);
}

TEST(RankTest, BenjaminiHochbergEqualsScipy) {
  // scipy.stats.false_discovery_control([0.01, 0.04, 0.03, 0.005, 0.5, 0.2])
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005, 0.5, 0.2};
  const std::vector<double> want = {0.03, 0.06, 0.06, 0.03, 0.5, 0.24};
  const std::vector<double> q = benjamini_hochberg(p);
  ASSERT_EQ(q.size(), want.size());
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(q[i], want[i], 1e-15) << i;
  EXPECT_TRUE(benjamini_hochberg({}).empty());
}

// ---- Real traces.

fs::path mfu_export() { return shared_dir() / "traces/nsys/nsys-ai/mfu_2gpu_before.sqlite"; }

#define SKIP_WITHOUT_SHARED() \
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: no real traces to diff"

const ItemDiff* item(const TraceDiff& d, ItemKind kind, const std::string& name) {
  for (const ItemDiff& i : d.items) {
    if (i.kind == kind && i.name == name) return &i;
  }
  return nullptr;
}

// The parts of the step time add up to the step time, on both sides.
void expect_parts_add_up(const TraceDiff& d) {
  double base = 0, next = 0;
  for (const compare::TimePart& p : d.parts) base += p.base_mean_ns, next += p.new_mean_ns;
  EXPECT_NEAR(base, d.base_time_mean_ns, 1e-6 * d.base_time_mean_ns);
  EXPECT_NEAR(next, d.new_time_mean_ns, 1e-6 * d.new_time_mean_ns);
}

TRACEDOC_TEST_LABELS(Diff, corpus golden);

TEST(Diff, RealExportAgainstItselfChangesNothing) {
  SKIP_WITHOUT_SHARED();
  const Trace& t = load_nsys(mfu_export().string());
  const TraceDiff d = compare::diff_traces(t, t);
  ASSERT_TRUE(d.steps);
  EXPECT_EQ(d.steps->base.count, 32);  // detected in each of the two processes, 16 apiece
  EXPECT_EQ(d.steps->verdict, Verdict::kUnchanged);
  EXPECT_DOUBLE_EQ(d.steps->p_value, 1.0);
  EXPECT_EQ(d.count(ItemKind::kKernel, Verdict::kUnchanged), 27u);
  // emit_nvtx ranges ("aten::mm, seq = 12, op_id = 4242, ...") group by operator name: 93, not 18,499.
  EXPECT_EQ(d.count(ItemKind::kRange, Verdict::kUnchanged), 93u);
  for (const ItemDiff& i : d.items) {
    EXPECT_EQ(i.verdict, Verdict::kUnchanged) << i.name;
    EXPECT_EQ(i.delta_total_ns(), 0) << i.name;
    EXPECT_DOUBLE_EQ(i.p_value, 1.0) << i.name;
  }
  for (const compare::TimePart& p : d.parts) EXPECT_EQ(p.base_ns, p.new_ns) << p.name;
  expect_parts_add_up(d);
  ASSERT_TRUE(d.findings_compared);
  EXPECT_FALSE(d.findings.empty());
  for (const compare::FindingChange& f : d.findings)
    EXPECT_EQ(f.status, compare::FindingStatus::kPersisted) << f.id << " " << f.scope;
}

// A copy of the real export with changes planted through SQL: one GEMM 25% slower, one removed, one
// renamed (a new kernel takes its place), half the calls of the NCCL kernel gone.
fs::path planted_copy() {
  const fs::path out = fs::temp_directory_path() / ("tracedoc-diff-" + std::to_string(getpid()) + ".sqlite");
  fs::copy_file(mfu_export(), out, fs::copy_options::overwrite_existing);
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(out.c_str(), &db), SQLITE_OK);
  const char* sql = R"sql(
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (end - start) * 5 / 4
      WHERE demangledName = (SELECT id FROM StringIds WHERE value = 'nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN');
    DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL
      WHERE demangledName = (SELECT id FROM StringIds WHERE value = 'nvjet_tst_96x64_64x10_1x2_h_bz_bias_TNN');
    INSERT INTO StringIds (id, value) VALUES ((SELECT max(id) + 1 FROM StringIds), 'nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT_tuned');
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = (SELECT max(id) FROM StringIds), shortName = (SELECT max(id) FROM StringIds)
      WHERE demangledName = (SELECT id FROM StringIds WHERE value = 'nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT');
    DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid IN (
      SELECT rowid FROM (SELECT rowid, row_number() OVER (ORDER BY start) AS n FROM CUPTI_ACTIVITY_KIND_KERNEL
                         WHERE demangledName = (SELECT id FROM StringIds WHERE value LIKE 'ncclDevKernel_SendRecv%'))
      WHERE n % 2 = 0);
  )sql";
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return out;
}

TEST(Diff, PlantedChangesInARealExportAreFoundAndNothingElse) {
  SKIP_WITHOUT_SHARED();
  const Trace& base = load_nsys(mfu_export().string());
  const fs::path copy = planted_copy();
  auto next = read_nsys_sqlite(copy.string());
  ASSERT_TRUE(next.ok()) << next.status().message();
  const TraceDiff d = compare::diff_traces(base, *next);
  fs::remove(copy);

  const ItemDiff* slower = item(d, ItemKind::kKernel, "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN");
  ASSERT_NE(slower, nullptr);
  EXPECT_EQ(slower->verdict, Verdict::kSlower);
  EXPECT_EQ(slower->base.count, 235);
  EXPECT_EQ(slower->next.count, 235);
  EXPECT_EQ(slower->base.total_ns, 38226009);                // cuda_gpu_kern_sum's total
  EXPECT_NEAR(slower->next.total_ns, 38226009 * 1.25, 235);  // each duration * 5 / 4, rounded down
  EXPECT_NEAR(slower->median_change_pct(), 25.0, 0.01);
  EXPECT_LT(slower->q_value, 1e-6);

  const ItemDiff* removed = item(d, ItemKind::kKernel, "nvjet_tst_96x64_64x10_1x2_h_bz_bias_TNN");
  ASSERT_NE(removed, nullptr);
  EXPECT_EQ(removed->verdict, Verdict::kRemoved);
  EXPECT_EQ(removed->base.count, 68);
  EXPECT_EQ(removed->next.count, 0);
  EXPECT_EQ(removed->base.total_ns, 571136);

  const ItemDiff* renamed = item(d, ItemKind::kKernel, "nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT");
  const ItemDiff* added = item(d, ItemKind::kKernel, "nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT_tuned");
  ASSERT_NE(renamed, nullptr);
  ASSERT_NE(added, nullptr);
  EXPECT_EQ(renamed->verdict, Verdict::kRemoved);
  EXPECT_EQ(added->verdict, Verdict::kAdded);
  EXPECT_EQ(added->next.count, 34);
  EXPECT_EQ(added->next.total_ns, renamed->base.total_ns);
  EXPECT_EQ(added->next.total_ns, 19002431);

  const ItemDiff* nccl =
      item(d, ItemKind::kKernel, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->verdict, Verdict::kFewerCalls);
  EXPECT_EQ(nccl->base.count, 66);
  EXPECT_EQ(nccl->next.count, 33);

  // The 23 other kernels and every range: unchanged, to the ns.
  EXPECT_EQ(d.count(ItemKind::kKernel, Verdict::kUnchanged), 23u);
  for (const ItemDiff& i : d.items) {
    if (i.verdict != Verdict::kUnchanged) continue;
    EXPECT_EQ(i.delta_total_ns(), 0) << i.name;
  }
  EXPECT_EQ(d.count(ItemKind::kRange, Verdict::kUnchanged), 93u);
  expect_parts_add_up(d);
  // Less communication per step (half the NCCL calls); the step windows themselves did not move.
  ASSERT_TRUE(d.steps);
  EXPECT_EQ(d.steps->verdict, Verdict::kUnchanged);
  EXPECT_LT(d.parts[1].new_mean_ns, d.parts[1].base_mean_ns);
}

TEST(Diff, HtaTraceDiffPairEqualsHtaCountsAndTotals) {
  SKIP_WITHOUT_SHARED();
  const fs::path pair = shared_dir() / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_diff";
  const Trace& control = load_kineto((pair / "control/control.json.gz").string());
  const Trace& test = load_kineto((pair / "test/test.json.gz").string());
  const TraceDiff d = compare::diff_traces(control, test);

  const ReferenceTable hta = read_reference_tsv(fs::path(TRACEDOC_SOURCE_DIR) / "tests/golden/hta/trace_diff.tsv");
  const std::map<std::string, ItemKind> kinds = {
      {"kernel", ItemKind::kKernel}, {"cpu_op", ItemKind::kOperator}, {"user_annotation", ItemKind::kRange}};
  size_t compared = 0;
  for (const ReferenceRow& row : hta.rows) {
    const std::string& name = row.at("name");
    if (name.starts_with("ProfilerStep#")) continue;  // the steps, compared on their own
    const ItemDiff* i = item(d, kinds.at(row.at("cat")), name);
    ASSERT_NE(i, nullptr) << row.at("cat") << " " << name;
    EXPECT_EQ(i->base.count, row.num("control_counts")) << name;
    EXPECT_EQ(i->next.count, row.num("test_counts")) << name;
    EXPECT_EQ(i->base.total_ns, row.num("control_total_us") * 1000) << name;  // whole-µs timestamps
    EXPECT_EQ(i->next.total_ns, row.num("test_total_us") * 1000) << name;
    ++compared;
  }
  EXPECT_EQ(compared, d.items.size()) << "every item tracedoc compares is one HTA summarizes";
  EXPECT_EQ(compared, 197u + 179u + 35u);

  // Six steps each; every test step is longer than every control step: exact p = 2 / C(12, 6).
  ASSERT_TRUE(d.steps);
  EXPECT_EQ(d.steps->base.count, 6);
  EXPECT_EQ(d.steps->next.count, 6);
  EXPECT_NEAR(d.steps->p_value, 2.0 / 924.0, 1e-15);
  EXPECT_EQ(d.steps->verdict, Verdict::kSlower);
  EXPECT_DOUBLE_EQ(d.steps->base.median_ns, 76763500);
  EXPECT_DOUBLE_EQ(d.steps->next.median_ns, 116910000);
  expect_parts_add_up(d);
  // The test run computes on FP32 sgemm kernels without tensor cores: that finding appears.
  bool tensor_cores = false;
  for (const compare::FindingChange& f : d.findings) {
    tensor_cores |= f.id == "tensor_cores_unused" && f.status == compare::FindingStatus::kAppeared;
  }
  EXPECT_TRUE(tensor_cores);
  // Counts of the verdicts, as the column output prints them.
  EXPECT_EQ(d.count(ItemKind::kKernel, Verdict::kAdded), 27u);
  EXPECT_EQ(d.count(ItemKind::kKernel, Verdict::kRemoved), 66u);
  const ItemDiff* fwd = item(d, ItemKind::kRange, "## forward ##");
  ASSERT_NE(fwd, nullptr);
  EXPECT_EQ(fwd->verdict, Verdict::kSlower);
}

TEST(Diff, PyTorchTraceAgainstItsOwnNsysExport) {
  SKIP_WITHOUT_SHARED();
  const fs::path src = shared_dir() /
                       "traces/kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
                       "benchmark_result_2869224_1695835535_trace.json.gz";
  const Trace& kineto = load_kineto(src.string());
  const fs::path out = fs::temp_directory_path() / ("tracedoc-diff-export-" + std::to_string(getpid()) + ".sqlite");
  ASSERT_TRUE(write_nsys_sqlite(kineto, out.string()).ok());
  auto nsys = read_nsys_sqlite(out.string());
  fs::remove(out);
  ASSERT_TRUE(nsys.ok()) << nsys.status().message();
  const TraceDiff d = compare::diff_traces(kineto, *nsys);
  size_t kernels = 0;
  for (const ItemDiff& i : d.items) {
    EXPECT_EQ(i.verdict, Verdict::kUnchanged) << compare::item_kind_name(i.kind) << " " << i.name;
    EXPECT_EQ(i.base.count, i.next.count) << i.name;
    EXPECT_EQ(i.base.total_ns, i.next.total_ns) << i.name;
    kernels += i.kind == ItemKind::kKernel;
  }
  EXPECT_GT(kernels, 10u);
  // The nsys export has no framework operators: said, not reported as 'removed'.
  EXPECT_EQ(d.count(ItemKind::kOperator, Verdict::kRemoved), 0u);
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes.front(), "operators: not compared, NEW records none");
  for (size_t p = 0; p < d.parts.size(); ++p) EXPECT_EQ(d.parts[p].base_ns, d.parts[p].new_ns) << d.parts[p].name;
}

// Rank directories: the clean two-rank loop against the same loop with rank 1 computing 1.5x as long.
TEST(Diff, RanksBeforeAndAfter) {
  auto clean = open_trace(synth_rank_directory("clean_2ranks").string());
  auto slow = open_trace(synth_rank_directory("straggler").string());
  ASSERT_TRUE(clean.ok() && slow.ok());
  const TraceDiff d = compare::diff_traces(*clean, *slow);
  ASSERT_TRUE(d.ranks);
  const compare::RanksDiff& r = *d.ranks;
  ASSERT_EQ(r.gpus.size(), 2u);
  const TraceSummary before = summarize(*clean), after = summarize(*slow);
  ASSERT_TRUE(before.ranks && after.ranks);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(r.gpus[i].in_base && r.gpus[i].in_new);
    EXPECT_EQ(r.gpus[i].base_compute_ns, before.ranks->rows[i].compute_ns);
    EXPECT_EQ(r.gpus[i].new_compute_ns, after.ranks->rows[i].compute_ns);
    EXPECT_EQ(r.gpus[i].new_wait_ns, after.ranks->rows[i].wait_ns);
    EXPECT_EQ(r.gpus[i].new_last, after.ranks->rows[i].last);
  }
  EXPECT_EQ(r.gpus[0].base_compute_ns, r.gpus[0].new_compute_ns);  // rank 0 computes as before
  EXPECT_NEAR(static_cast<double>(r.gpus[1].new_compute_ns) / static_cast<double>(r.gpus[1].base_compute_ns), 1.5,
              0.01);
  EXPECT_NEAR(r.new_imbalance, after.ranks->slowest_ratio, 1e-12);
  EXPECT_NEAR(r.base_imbalance, before.ranks->slowest_ratio, 1e-12);
  EXPECT_EQ(r.gpus[1].new_last, 36);                              // rank 1 starts every all-reduce last
  EXPECT_GT(r.gpus[0].new_wait_ns, 50 * r.gpus[0].base_wait_ns);  // and rank 0 waits for it
  EXPECT_GT(r.new_skew_p50_ns, 50 * r.base_skew_p50_ns);
  // The straggler finding appears.
  bool straggler = false;
  for (const compare::FindingChange& f : d.findings)
    straggler |= f.id == "straggler" && f.status == compare::FindingStatus::kAppeared;
  EXPECT_TRUE(straggler);
}

TEST(Diff, WritersCarryEveryFigure) {
  SKIP_WITHOUT_SHARED();
  const fs::path pair = shared_dir() / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_diff";
  const TraceDiff d = compare::diff_traces(load_kineto((pair / "control/control.json.gz").string()),
                                           load_kineto((pair / "test/test.json.gz").string()));
  const std::string csv = render_rows(WriterOptions{}, [&](RowSink& s) { diff_rows(d, s); });
  const auto rows = parse_csv(csv);
  ASSERT_GT(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], "Kind");
  EXPECT_EQ(rows[1][0], "step");
  EXPECT_EQ(rows[1][5], "6");
  EXPECT_EQ(rows[1][6], "6");
  ASSERT_EQ(rows[1].size(), 18u);
  EXPECT_EQ(rows[1].at(16), "0.0021645");  // p-value
  EXPECT_EQ(rows[2][0], "time");
  EXPECT_EQ(rows[2][1], "compute");
  // One row per item and per finding, after the step row and the six time rows.
  EXPECT_EQ(rows.size(), 1 + 1 + 6 + d.items.size() + d.findings.size());
  const std::string json = diff_json(d);
  EXPECT_EQ(json.rfind("{\n  \"schema_version\": 1,\n  \"base\": {", 0), 0u) << json.substr(0, 80);
  EXPECT_NE(json.find("\"p_value\": 0.0021645021645021645"), std::string::npos);
  EXPECT_NE(json.find("\"verdict\": \"slower\""), std::string::npos);
  const std::string text = diff_text(d, {});
  EXPECT_NE(text.find("Step time: median 76.8 ms -> 117 ms (+52.3%), slower"), std::string::npos) << text;
  const std::string md = diff_markdown(d, {});
  EXPECT_EQ(md.rfind("### tracedoc diff: `", 0), 0u);
  EXPECT_NE(md.find("| compute | 46.9 ms | 91.4 ms | +44.5 ms |"), std::string::npos) << md;
}

}  // namespace
}  // namespace tracedoc::testing
