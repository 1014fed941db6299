// Nsight Compute reports (ingest/ncu_report_reader.h, analysis/ncu_answers.h, `tracedoc ncu`) on
// the real reports of ../shared/traces/ncu: every report read, values exact as ncu stored them
// (kinds, per-instance lists, rule messages), the derived figures against the numbers ncu's own
// rules stored when it profiled (UncoalescedGlobalAccess's excessive sectors, CPIStall's cycles,
// SOLFPRoofline's share of peak), zstd reports, and bad input refused with one line.
#include <gtest/gtest.h>
#include <zstd.h>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "analysis/ncu_answers.h"
#include "analysis/ncu_join.h"
#include "ingest/ncu_csv_reader.h"
#include "ingest/ncu_report_reader.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

fs::path ncu_dir() { return shared_dir().empty() ? fs::path() : shared_dir() / "traces/ncu"; }

#define REQUIRE_NCU_REPORTS() \
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: the Nsight Compute reports are skipped"

NcuReport read(const std::string& relative) {
  auto report = read_ncu_report((ncu_dir() / relative).string());
  EXPECT_TRUE(report.ok()) << report.status().message();
  return report.ok() ? std::move(report).value() : NcuReport{};
}

const NcuRuleResult* rule(const NcuResult& r, std::string_view identifier) {
  for (const NcuRuleResult& x : r.rules) {
    if (x.identifier == identifier) return &x;
  }
  return nullptr;
}

// The numbers in a rule message, in order ("2616000 excessive sectors (87% of the total 3000000").
std::vector<double> numbers_in(const std::string& text) {
  std::vector<double> out;
  for (size_t i = 0; i < text.size();) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[end])) ||
            (text[end] == '.' && end + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[end + 1])))))
      ++end;
    out.push_back(std::stod(text.substr(i, end - i)));
    i = end;
  }
  return out;
}

TRACEDOC_TEST_LABELS(NcuReport, corpus);

TEST(NcuReport, EveryRealReportIsRead) {
  REQUIRE_NCU_REPORTS();
  // (report, launches, metrics of the first, rules of the first, metric names): counted by field in
  // the files (ProfileResult field 13 and 19; the string table).
  const struct {
    const char* path;
    size_t results, metrics, rules, names;
    const char* kernel;
  } cases[] = {
      {"armleth/report.ncu-rep", 1, 1135, 21, 1164, "matrix_addition2D(float *, float *, float *, int, int)"},
      {"armleth/report_v4_8_per_thread.ncu-rep", 1, 1135, 21, 1164,
       "matrix_addition2D(float *, float *, float *, int, int)"},
      {"cs599k/rms_norm_vector_v1.ncu-rep", 4, 2133, 22, 2206,
       "rms_norm_vector_kernel_float4(float *, float *, float *, int, float)"},
      {"cs599k/rms-norm-pytorch.ncu-rep", 1, 557, 7, 564, nullptr},
      {"cs599k/silu-pytorch.ncu-rep", 1, 557, 7, 564, nullptr},
      {"extrap/ex-gpu.s10.ncu-rep", 6, 213, 0, 213, "init_array(double*, unsigned long)"},
      {"extrap/ex-gpu.s100.ncu-rep", 6, 213, 0, 213, "init_array(double*, unsigned long)"},
      {"lakshya/naive.ncu-rep", 2, 1117, 21, 1146,
       "naive_gemm(const float *, const float *, float *, int, int, int, float, float)"},
      {"lakshya/global_mem_coalesce.ncu-rep", 2, 1117, 21, 1146, nullptr},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.path);
    const NcuReport report = read(c.path);
    EXPECT_EQ(report.version, 7u);
    ASSERT_EQ(report.results.size(), c.results);
    EXPECT_EQ(report.results[0].metrics.size(), c.metrics);
    EXPECT_EQ(report.results[0].rules.size(), c.rules);
    EXPECT_EQ(report.metric_names.size(), c.names);
    if (c.kernel) {
      EXPECT_EQ(report.results[0].name(), c.kernel);
    }
    // Field 25 of every result: in every report, named by no public schema, skipped and counted.
    EXPECT_GE(report.skipped_fields, static_cast<int64_t>(c.results));
    EXPECT_EQ(report.devices.size(), 1u);
  }
}

TEST(NcuReport, ValuesAreExactlyAsStored) {
  REQUIRE_NCU_REPORTS();
  const NcuReport h100 = read("cs599k/rms_norm_vector_v1.ncu-rep");
  ASSERT_EQ(h100.results.size(), 4u);
  const NcuResult& r = h100.results[0];
  EXPECT_EQ(r.mangled_name, "_Z29rms_norm_vector_kernel_float4PfS_S_if");
  EXPECT_EQ(r.function_name, "rms_norm_vector_kernel_float4");
  EXPECT_EQ(r.grid, (std::array<uint64_t, 3>{1024, 1, 1}));
  EXPECT_EQ(r.block, (std::array<uint64_t, 3>{256, 1, 1}));
  EXPECT_EQ(h100.devices[0].name, "NVIDIA H100 PCIe");
  EXPECT_EQ(h100.tool_version.substr(0, 10), "2025.1.0.0");
  EXPECT_TRUE(r.nvtx_domains.empty());  // profiled without --nvtx: no NVTX state stored
  // With NVTX state (extrap, ncu --nvtx): the default domain on the launching thread, no range open.
  const NcuReport a100 = read("extrap/ex-gpu.s10.ncu-rep");
  for (const NcuResult& x : a100.results) {
    ASSERT_EQ(x.nvtx_domains.size(), 1u);
    EXPECT_EQ(x.nvtx_domains[0], (std::pair<uint64_t, std::string>{0, "<default domain>"}));
    EXPECT_EQ(x.nvtx_thread, 872075u);
    EXPECT_EQ(x.nvtx_open_entries, 0);
  }
  EXPECT_EQ(a100.skipped_fields, 6);  // the unnamed result field 25, once per launch: the NVTX state reads whole
  // A PC-sampling counter: a uint64 and its list of per-instance values.
  const NcuMetric* samples = h100.metric(r, "smsp__pcsamp_sample_count");
  ASSERT_NE(samples, nullptr);
  EXPECT_EQ(samples->value.kind, NcuValue::Kind::kUint64);
  EXPECT_EQ(samples->value.integer, 429u);
  EXPECT_EQ(samples->instances.size(), 92u);
  EXPECT_EQ(h100.number(r, "smsp__pcsamp_warps_issue_stalled_barrier"), 58);
  EXPECT_EQ(h100.number(r, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), 56);
  EXPECT_EQ(h100.number(r, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), 33848);
  const NcuMetric* device = h100.metric(r, "device__attribute_display_name");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->value.kind, NcuValue::Kind::kString);
  EXPECT_EQ(device->value.text, "NVIDIA H100 PCIe");
  EXPECT_TRUE(std::isnan(h100.number(r, "no_such_metric")));

  const NcuReport t4 = read("armleth/report_v4_8_per_thread.ncu-rep");
  const NcuResult& m = t4.results[0];
  EXPECT_EQ(t4.metric(m, "gpu__time_duration.sum")->value.kind, NcuValue::Kind::kDouble);
  EXPECT_EQ(t4.number(m, "gpu__time_duration.sum"), 151328.0);
  EXPECT_EQ(t4.number(m, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 1998423.0);
  EXPECT_EQ(t4.number(m, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 64000.0);
  EXPECT_EQ(t4.number(m, "memory_l2_theoretical_sectors_global"), 3000000);
  EXPECT_EQ(t4.metric(m, "memory_l2_theoretical_sectors_global")->instances.size(), 24u);
  const NcuRuleResult* uncoalesced = rule(m, "UncoalescedGlobalAccess");
  ASSERT_NE(uncoalesced, nullptr);
  EXPECT_EQ(uncoalesced->section, "SourceCounters");
  ASSERT_EQ(uncoalesced->messages.size(), 1u);
  EXPECT_EQ(uncoalesced->messages[0].type, 4u);  // an optimization
  EXPECT_EQ(uncoalesced->messages[0].text.substr(0, 93),
            "This kernel has uncoalesced global accesses resulting in a total of 2616000 excessive sectors");

  // extrap: 6 launches of 3 kernels in program order (the nsys export of the same run has them so).
  const NcuReport small = read("extrap/ex-gpu.s10.ncu-rep");
  std::vector<std::string> names;
  for (const NcuResult& x : small.results) names.push_back(x.function_name);
  EXPECT_EQ(names, (std::vector<std::string>{"init_array", "init_array", "vector_add", "vector_add1", "vector_mul",
                                             "vector_dot"}));
  EXPECT_EQ(small.number(small.results[0], "gpu__time_duration.sum"), 4064);
}

TEST(NcuReport, DerivedFiguresAgreeWithNcusOwnRules) {
  REQUIRE_NCU_REPORTS();
  // Uncoalesced loads: 31 sectors per request where 4 would do, and the excessive sectors ncu's
  // UncoalescedGlobalAccess rule counted when it profiled the kernel (2616000, 87% of 3000000).
  const NcuReport bad = read("armleth/report_v4_8_per_thread.ncu-rep");
  const NcuAnswers a = ncu_answers(bad, bad.results[0]);
  EXPECT_NEAR(a.load_sectors_per_request, 31.2253, 1e-4);
  const std::vector<double> said = numbers_in(rule(bad.results[0], "UncoalescedGlobalAccess")->messages[0].text);
  ASSERT_GE(said.size(), 3u);
  EXPECT_EQ(a.excessive_sectors, said[0]);
  EXPECT_EQ(std::round(a.excessive_sectors_pct), said[1]);
  // CPIStall: "each warp ... spends 275.0 cycles being stalled waiting for the L1 instruction queue
  // for local and global (LG) memory": the first stall reason, lg_throttle, per issued instruction.
  ASSERT_FALSE(a.stalls.empty());
  EXPECT_EQ(a.stalls[0].reason, "lg_throttle");
  EXPECT_EQ(std::round(a.stalls[0].per_issue * 10) / 10,
            numbers_in(rule(bad.results[0], "CPIStall")->messages[0].text)[0]);
  EXPECT_EQ(a.occupancy_limiters, std::vector<std::string>{"warps"});

  // The coalesced version: 3.9 sectors per request, and no UncoalescedGlobalAccess message.
  const NcuReport good = read("armleth/report.ncu-rep");
  const NcuAnswers g = ncu_answers(good, good.results[0]);
  EXPECT_NEAR(g.load_sectors_per_request, 3.94, 0.01);
  EXPECT_EQ(g.excessive_sectors, 0);
  const NcuRuleResult* none = rule(good.results[0], "UncoalescedGlobalAccess");
  EXPECT_TRUE(none == nullptr || none->messages.empty());

  // Barrier stalls second after long scoreboard, 13.5% of the PC samples (58 of 429); bank
  // conflicts on 56 of 33,848 shared-load wavefronts.
  const NcuReport rms = read("cs599k/rms_norm_vector_v1.ncu-rep");
  const NcuAnswers s = ncu_answers(rms, rms.results[0]);
  ASSERT_GE(s.stalls.size(), 2u);
  EXPECT_EQ(s.stalls[0].reason, "long_scoreboard");
  EXPECT_EQ(s.stalls[1].reason, "barrier");
  EXPECT_DOUBLE_EQ(s.stalls[1].sample_pct, 100.0 * 58 / 429);
  EXPECT_DOUBLE_EQ(s.shared_load_conflict_pct, 100.0 * 56 / 33848);
  EXPECT_EQ(s.occupancy_limiters, (std::vector<std::string>{"registers", "warps"}));

  // SOLFPRoofline: "The kernel achieved 10% of this device's fp32 peak performance".
  const NcuReport gemm = read("lakshya/naive.ncu-rep");
  const NcuAnswers n = ncu_answers(gemm, gemm.results[0]);
  const std::string& roofline = rule(gemm.results[0], "SOLFPRoofline")->messages[0].text;
  ASSERT_NE(roofline.find("achieved 10% of this device's fp32 peak"), std::string::npos) << roofline;
  EXPECT_EQ(std::round(100 * n.flop_per_s / n.peak_flop_per_s), 10);
  EXPECT_EQ(n.bound, "compute");
  EXPECT_EQ(n.occupancy_limiters, (std::vector<std::string>{"registers", "warps"}));
}

TEST(NcuReport, ZstdReportsReadAsTheirContent) {
  REQUIRE_NCU_REPORTS();
  const std::string plain = read_file(ncu_dir() / "extrap/ex-gpu.s10.ncu-rep");
  std::string packed(ZSTD_compressBound(plain.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
  auto a = read_ncu_report_bytes(plain, "plain");
  auto b = read_ncu_report_bytes(packed, "packed.ncu-repz");
  ASSERT_TRUE(a.ok() && b.ok()) << b.status().message();
  ASSERT_EQ(a->results.size(), b->results.size());
  EXPECT_EQ(a->results[5].demangled_name, b->results[5].demangled_name);
  EXPECT_EQ(a->number(a->results[5], "gpu__time_duration.sum"), b->number(b->results[5], "gpu__time_duration.sum"));
  // Cut anywhere, the zstd stream is refused with the file's name.
  auto cut = read_ncu_report_bytes(std::string_view(packed).substr(0, packed.size() / 2), "cut.ncu-repz");
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(), "cut.ncu-repz: zstd stream cut short");
}

TEST(NcuReport, BadInputIsOneLineNamingTheFile) {
  REQUIRE_NCU_REPORTS();
  EXPECT_EQ(read_ncu_report_bytes("{\"traceEvents\": []}", "x.json").status().message(),
            "x.json: not an Nsight Compute report (no NVR header)");
  const std::string bytes = read_file(ncu_dir() / "armleth/report.ncu-rep");
  std::string v8 = bytes;
  v8[9] = 8;  // the FileHeader's version varint: magic, u32 length, key byte, value
  EXPECT_EQ(read_ncu_report_bytes(v8, "v8.ncu-rep").status().message(),
            "v8.ncu-rep: Nsight Compute report format version 8 (this tracedoc reads version 7)");
  // Cut at any of these offsets: refused, never read past the end.
  for (size_t cut = 5; cut < bytes.size(); cut += 997) {
    auto r = read_ncu_report_bytes(std::string_view(bytes).substr(0, cut), "cut.ncu-rep");
    ASSERT_FALSE(r.ok()) << cut;
    EXPECT_EQ(r.status().message().rfind("cut.ncu-rep: ", 0), 0u) << r.status().message();
  }
  // Bytes flipped: either still a report or refused, never a crash (the fuzzer goes further).
  for (size_t at = 4; at < bytes.size(); at += 1013) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5A);
    (void)read_ncu_report_bytes(flipped, "flipped.ncu-rep");
  }
}

TRACEDOC_TEST_LABELS(NcuCsv, corpus);

// ncu's CSV export (llm-perf-opt/: `ncu --csv --page details` of a cuBLAS GEMV on an RTX 5090, ncu
// 2025.1.1): the same answers from display names, auto-scaled units and thousands separators.
TEST(NcuCsv, DetailsPageGivesTheSameAnswers) {
  REQUIRE_NCU_REPORTS();
  const std::string path = (ncu_dir() / "llm-perf-opt/k0001.ncu.details.csv").string();
  auto report = read_ncu_input(path);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->results.size(), 1u);
  const NcuResult& r = report->results[0];
  EXPECT_EQ(r.demangled_name.substr(0, 38), "enable_if<!T7, void>::type kernel<int,");
  EXPECT_EQ(r.grid, (std::array<uint64_t, 3>{224, 1, 1}));
  EXPECT_EQ(r.block, (std::array<uint64_t, 3>{32, 4, 1}));
  EXPECT_EQ(r.stream, 7u);
  EXPECT_EQ(report->number(r, "Elapsed Cycles"), 13485);                                 // printed "13,485"
  EXPECT_EQ(report->metric(r, "flop_count_sp.sum")->value.kind, NcuValue::Kind::kNone);  // printed "n/a"
  EXPECT_EQ(report->metric(r, "gpu__time_duration.sum")->unit, "us");
  const NcuAnswers a = ncu_answers(*report, r);
  EXPECT_EQ(std::llround(a.duration_ns), 6750);  // 6.75 us
  EXPECT_DOUBLE_EQ(a.achieved_occupancy_pct, 11.32);
  EXPECT_DOUBLE_EQ(a.theoretical_occupancy_pct, 16.67);
  EXPECT_EQ(std::llround(a.dram_bytes), 2'330'000);  // 2.33 Mbyte read, 0 written
  EXPECT_DOUBLE_EQ(a.sm_throughput_pct, 9.15);
  EXPECT_DOUBLE_EQ(a.memory_throughput_pct, 19.66);
  // ncu's TheoreticalOccupancy rule: "limited by the number of required registers" (2 blocks).
  EXPECT_EQ(a.occupancy_limiters, std::vector<std::string>{"registers"});
  ASSERT_EQ(r.rules.size(), 4u);
  EXPECT_EQ(r.rules[3].identifier, "TheoreticalOccupancy");
  EXPECT_EQ(r.rules[3].section, "Occupancy");
  EXPECT_EQ(r.rules[3].messages[0].type, 4u);
  EXPECT_NE(r.rules[3].messages[0].text.find("limited by the number of required registers"), std::string::npos);
  EXPECT_EQ(r.rules[1].messages[0].type, 1u);  // SOLFPRoofline, INF

  // ==PROF== lines mixed in change nothing; the other two exports read too.
  const std::string text = read_file(path);
  auto with_prof = read_ncu_csv_text("==PROF== Connected to process 1740670\n" + text, "p.csv");
  ASSERT_TRUE(with_prof.ok());
  EXPECT_EQ(with_prof->results[0].metrics.size(), r.metrics.size());
  for (const char* other : {"llm-perf-opt/k0001.ncu.metrics.csv", "llm-perf-opt/k0001.ncu.section_Occupancy.csv"}) {
    auto o = read_ncu_input((ncu_dir() / other).string());
    ASSERT_TRUE(o.ok()) << o.status().message();
    EXPECT_EQ(o->results.size(), 1u);
  }
}

TEST(NcuCsv, WideFormAndMissingColumns) {
  // One row per launch, a column per metric, the units in the row under the header.
  auto wide = read_ncu_csv_text(
      "\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n"
      "\"\",\"\",\"\",\"\",\"usecond\",\"Mbyte\"\n"
      "\"0\",\"k(int)\",\"(2, 1, 1)\",\"(64, 1, 1)\",\"1.5\",\"1,024\"\n"
      "\"1\",\"k(int)\",\"(2, 1, 1)\",\"(64, 1, 1)\",\"n/a\",\"8\"\n",
      "wide.csv");
  ASSERT_TRUE(wide.ok()) << wide.status().message();
  ASSERT_EQ(wide->results.size(), 2u);
  EXPECT_EQ(wide->number(wide->results[0], "gpu__time_duration.sum"), 1500);
  EXPECT_EQ(wide->number(wide->results[0], "dram__bytes.sum"), 1.024e9);
  EXPECT_TRUE(std::isnan(wide->number(wide->results[1], "gpu__time_duration.sum")));
  EXPECT_EQ(wide->results[1].block, (std::array<uint64_t, 3>{64, 1, 1}));
  EXPECT_EQ(
      read_ncu_csv_text("\"ID\",\"Kernel Name\",\"Metric Name\"\n\"0\",\"k\",\"x\"\n", "m.csv").status().message(),
      "m.csv: an ncu CSV export with \"Metric Name\" but no \"Metric Value\" column");
  EXPECT_EQ(read_ncu_csv_text("\"ID\",\"Metric Name\"\n", "k.csv").status().message(),
            "k.csv: an ncu CSV export without a \"Kernel Name\" column");
  EXPECT_EQ(read_ncu_csv_text("a,b\n1,2\n", "x.csv").status().message(),
            "x.csv: not an Nsight Compute CSV export (no header starting with \"ID\")");
}

TRACEDOC_TEST_LABELS(NcuJoin, corpus golden);

// extrap/: an ncu report and the nsys export of the same program: its 6 launches match the export's 6
// kernels, in order (the export has no mangled names: the demangled ones, spacing normalised).
TEST(NcuJoin, LaunchesMatchTheTimelinesKernelsOfTheSameProgram) {
  REQUIRE_NCU_REPORTS();
  auto read_export = [] {
    auto t = open_trace((ncu_dir() / "extrap/ex-gpu.s10.sqlite").string());
    EXPECT_TRUE(t.ok()) << t.status().message();
    return std::move(t).value();
  };
  Trace trace = read_export();
  trace.ncu_reports.push_back(std::make_shared<const NcuReport>(read("extrap/ex-gpu.s10.ncu-rep")));
  const NcuJoin join = join_ncu(trace);
  EXPECT_EQ(join.launches, 6u);
  EXPECT_EQ(join.matched, 6u);
  ASSERT_EQ(join.kernel_of.size(), 1u);
  TimeNs previous = std::numeric_limits<TimeNs>::min();
  for (size_t i = 0; i < 6; ++i) {
    const int64_t row = join.kernel_of[0][i];
    ASSERT_GE(row, 0) << i;
    const NcuResult& r = trace.ncu_reports[0]->results[i];
    EXPECT_EQ(trace.str(trace.kernels.name[row]), r.demangled_name);
    EXPECT_EQ(trace.kernels.block_x[row], 10);
    EXPECT_GT(trace.kernels.start[row], previous);  // the k-th launch is the k-th kernel in time
    previous = trace.kernels.start[row];
    EXPECT_EQ(join.launch_of[row].result, static_cast<int32_t>(i));
  }
  // Another program's report: nothing matches, and nothing is dropped.
  Trace other = read_export();
  other.ncu_reports.push_back(std::make_shared<const NcuReport>(read("armleth/report.ncu-rep")));
  const NcuJoin none = join_ncu(other);
  EXPECT_EQ(none.launches, 1u);
  EXPECT_EQ(none.matched, 0u);
  EXPECT_EQ(normalised_kernel_name("f(double const *, int)"), "f(doubleconst*,int)");
}

TEST(NcuJoin, StatsPutsTheAnswersBesideTheKernelSummary) {
  REQUIRE_NCU_REPORTS();
  const std::string sqlite = (ncu_dir() / "extrap/ex-gpu.s10.sqlite").string();
  const CliRun run = tracedoc({"stats", "-r", "ncu_kern_sum", "--ncu",
                               (ncu_dir() / "extrap/ex-gpu.s10.ncu-rep").string(), sqlite, "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_EQ(rows.size(), 6u);                           // the header and the 5 kernel names; every launch matched
  for (const auto& r : rows) ASSERT_EQ(r.size(), 20u);  // cuda_gpu_kern_sum's 9 columns and 11 of ncu's
  EXPECT_EQ(rows[0][8], "Name");
  EXPECT_EQ(rows[0][9], "ncu Report");
  EXPECT_EQ(rows[0][11], "ncu Duration (ns)");
  // init_array: 2 instances on the timeline (11808 ns), its first ncu launch 4064 ns, 50% theoretical
  // occupancy limited by blocks (the basic set has no achieved occupancy).
  EXPECT_EQ(rows[1][1], "11808");
  EXPECT_EQ(rows[1][8], "init_array(double*, unsigned long)");
  EXPECT_EQ(rows[1][10], "0");
  EXPECT_EQ(rows[1][11], "4064");
  EXPECT_EQ(rows[1][13], "blocks");
  EXPECT_EQ(rows[2][8], "vector_dot(double const*, double const*, unsigned long, double*)");
  EXPECT_EQ(rows[2][10], "5");
  EXPECT_EQ(rows[2][11], "4512");
  // A report of another program: the kernels keep empty ncu columns, its launch is a row of its own.
  const CliRun other = tracedoc(
      {"stats", "-r", "ncu_kern_sum", "--ncu", (ncu_dir() / "armleth/report.ncu-rep").string(), sqlite, "-f", "csv"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  const auto unmatched = parse_csv(other.out);
  ASSERT_EQ(unmatched.size(), 7u);
  for (const auto& r : unmatched) ASSERT_EQ(r.size(), 20u);
  EXPECT_EQ(unmatched[1][9], "");
  EXPECT_EQ(unmatched[6][1], "");
  EXPECT_EQ(unmatched[6][8], "matrix_addition2D(float *, float *, float *, int, int)");
  EXPECT_EQ(unmatched[6][14], "3.94");
  EXPECT_EQ(unmatched[6][19], "memory");
  // Without --ncu the report is skipped as nsys skips a report the input has no data for.
  const CliRun skipped = tracedoc({"stats", "-r", "ncu_kern_sum", sqlite, "-f", "csv"});
  EXPECT_EQ(skipped.exit_code, 0);
  EXPECT_EQ(skipped.err, "SKIPPED: " + sqlite + " was given no Nsight Compute report (--ncu REPORT).\n");
  // A bad report: one line, exit 2.
  const CliRun bad = tracedoc({"stats", "-r", "ncu_kern_sum", "--ncu", sqlite, sqlite, "-f", "csv"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "tracedoc: " + sqlite + ": not an Nsight Compute report (no NVR header) nor an ncu CSV export\n");
}

TRACEDOC_TEST_LABELS(NcuCommand, corpus golden);

// `tracedoc ncu REPORT -f csv`'s launch table, cell for cell against tests/golden/ncu (regen.sh).
TEST(NcuCommand, LaunchTablesMatchTheGoldenFiles) {
  REQUIRE_NCU_REPORTS();
  const fs::path golden = fs::path(TRACEDOC_SOURCE_DIR) / "tests/golden/ncu";
  const fs::path out = fs::temp_directory_path() / ("tracedoc_ncu_golden_" + std::to_string(getpid()));
  fs::create_directories(out);
  for (const char* report :
       {"armleth/report_v4_8_per_thread", "cs599k/rms_norm_vector_v1", "extrap/ex-gpu.s10", "lakshya/naive"}) {
    SCOPED_TRACE(report);
    std::string stem = report;
    std::replace(stem.begin(), stem.end(), '/', '_');
    const CliRun run = tracedoc(
        {"ncu", (ncu_dir() / (std::string(report) + ".ncu-rep")).string(), "-f", "csv", "-o", (out / stem).string()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::string why;
    EXPECT_TRUE(
        csv_equal(read_file(golden / (stem + "_ncu_kernels.csv")), read_file(out / (stem + "_ncu_kernels.csv")), &why))
        << why;
    EXPECT_TRUE(fs::exists(out / (stem + "_ncu_rules.csv")));
  }
  // The rule messages as ncu stored them: the uncoalesced kernel's UncoalescedGlobalAccess row.
  const std::string rules = read_file(out / "armleth_report_v4_8_per_thread_ncu_rules.csv");
  EXPECT_NE(rules.find("UncoalescedGlobalAccess,SourceCounters,optimization,This kernel has uncoalesced global "
                       "accesses resulting in a total of 2616000 excessive sectors (87% of the total 3000000 sectors)"),
            std::string::npos);
  fs::remove_all(out);
}

TEST(NcuCommand, MetricsAsStoredAndBadInput) {
  REQUIRE_NCU_REPORTS();
  const std::string report = (ncu_dir() / "cs599k/rms_norm_vector_v1.ncu-rep").string();
  const CliRun run = tracedoc({"ncu", report, "-f", "csv", "--kernel", "rms_norm", "--metrics",
                               "smsp__pcsamp_sample_count,device__attribute_display_name"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\nLaunch,Kernel,Metric,Kind,Value,Instances\n"), std::string::npos);
  EXPECT_NE(
      run.out.find("0,\"rms_norm_vector_kernel_float4(float *, float *, float *, int, float)\",smsp__pcsamp_sample_"
                   "count,uint64,429,92\n"),
      std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find(",device__attribute_display_name,string,NVIDIA H100 PCIe,0\n"), std::string::npos);
  // Every metric of every launch: 4 launches of 2,133 metrics, a header.
  const CliRun all = tracedoc({"ncu", report, "-f", "csv", "--all", "-o", "-"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::string metrics = all.out.substr(all.out.find("Launch,Kernel,Metric"));
  EXPECT_EQ(std::count(metrics.begin(), metrics.end(), '\n'), 1 + 4 * 2133 + 0);

  // A metric no launch has, a file that is not a report: one line, exit 2, no output file.
  const CliRun unknown = tracedoc({"ncu", report, "--metrics", "no_such_metric"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "tracedoc: " + report + ": no launch has a metric named no_such_metric\n");
  const fs::path base = fs::temp_directory_path() / ("tracedoc_ncu_bad_" + std::to_string(getpid()));
  const std::string not_report = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun bad = tracedoc({"ncu", not_report, "-f", "csv", "-o", base.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "tracedoc: " + not_report + ": not an Nsight Compute report (no NVR header) nor an ncu CSV export\n");
  EXPECT_FALSE(fs::exists(base.string() + "_ncu_kernels.csv"));
}

}  // namespace
}  // namespace tracedoc::testing
