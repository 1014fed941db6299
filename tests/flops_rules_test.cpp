// The model FLOPs where users meet them: the summary's MFU (merged from rank parts as from one
// trace) and the rules low_mfu and gemm_shape, on TraceLens's real H100 traces (docs/flops.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/report_registry.h"
#include "analysis/summary.h"
#include "diagnose/engine.h"
#include "test_support.h"

namespace tracedoc {
namespace {

std::string h100_trace(const char* name) {
  return (testing::shared_dir() / "traces/kineto/TraceLens/tests/traces/h100" / name).string();
}

#define SKIP_WITHOUT(path) \
  if (testing::shared_dir().empty() || !std::filesystem::exists(path)) GTEST_SKIP() << "../shared is absent: " << path

TRACEDOC_TEST_LABELS(FlopsSummary, corpus);

// Qwen1.5-0.5B-Chat (one profiled step of 47.15 ms): 168 linears and 24 attentions carry the model
// FLOPs, the summary's MFU is step_mfu_sum's, and low_mfu says where the rest of the step goes.
TEST(FlopsSummary, QwenStepMfuAndTheOperatorsCarryingIt) {
  const std::string path = h100_trace("Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
  SKIP_WITHOUT(path);
  const Trace& t = testing::load_kineto(path);
  const TraceSummary s = summarize(t);
  ASSERT_TRUE(s.mfu.has_value());
  const MfuSummary& m = *s.mfu;
  EXPECT_EQ(m.steps, 1);
  EXPECT_TRUE(m.peaks_known);
  EXPECT_EQ(m.gpus, "H100 SXM5 80GB");
  // step_mfu_sum's row: 6,006,026,832,832 model FLOPs in 47,151,395 ns at 989.4 TFLOP/s (bf16).
  EXPECT_NEAR(m.median_tflops_per_s, 6006026832832.0 / 47151395 / 1e3, 1e-9);
  EXPECT_NEAR(m.median_mfu_pct, 6006026832832.0 / (47151395e-9 * 989.4e12) * 100, 1e-5);
  ASSERT_GE(m.top_ops.size(), 2u);
  EXPECT_EQ(m.top_ops[0].name, "aten::linear");
  EXPECT_EQ(m.top_ops[0].calls, 168);
  EXPECT_EQ(m.top_ops[1].name, "aten::scaled_dot_product_attention");
  EXPECT_EQ(m.top_ops[1].calls, 24);
  EXPECT_EQ(m.model_flops, 6006026832832);  // every model FLOP of the trace is in its one step
  EXPECT_NEAR(static_cast<double>(m.top_ops[0].flops) / static_cast<double>(m.model_flops), 0.918, 0.001);

  // A part sent across machines and merged gives the same figures.
  const auto bytes = encode_summary_part(summary_part(t));
  auto decoded = decode_summary_part(bytes);
  ASSERT_TRUE(decoded.ok());
  std::vector<SummaryPart> parts;
  parts.push_back(std::move(*decoded));
  const TraceSummary merged = merge_summary_parts(std::move(parts), {});
  ASSERT_TRUE(merged.mfu.has_value());
  EXPECT_EQ(merged.mfu->median_mfu_pct, m.median_mfu_pct);
  EXPECT_EQ(merged.mfu->model_flops, m.model_flops);

  const diagnose::Diagnosis d = diagnose::diagnose(t, {});
  const diagnose::Finding* f = testing::finding(d, "low_mfu");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(testing::figure(*f, "mfu_pct"), m.median_mfu_pct, 1e-9);  // one step: its MFU
  EXPECT_EQ(testing::figure(*f, "model_flops"), 6006026832832.0);
  EXPECT_EQ(testing::figure(*f, "wall_ns"), 47151395.0);
  // The parts of the step add up to it; the GEMMs run at half the peak while they run.
  double parts_sum = 0;
  for (const char* k :
       {"model_flop_kernels_share", "memory_bound_operators_share", "operators_without_a_flop_formula_share",
        "gpu_idle_share", "communication_share", "copies_share"})
    parts_sum += testing::figure(*f, k);
  EXPECT_NEAR(parts_sum, 1.0, 0.01);
  EXPECT_NEAR(testing::figure(*f, "model_kernel_peak_share"), 0.524, 0.001);
  EXPECT_NE(f->title.find("MFU 12.87%"), std::string::npos) << f->title;
  EXPECT_EQ(testing::finding(d, "gemm_shape"), nullptr);  // Qwen's sizes are multiples of 8
}

TRACEDOC_TEST_LABELS(FlopsRules, corpus);

// OWLv2 (5,184 image patches and a class token): the attention's batched GEMMs over a sequence of
// 5,185 are not multiples of 8 and run at a tenth of the aligned GEMMs' rate.
TEST(FlopsRules, GemmShapeNamesTheUnalignedSequence) {
  const std::string path = h100_trace("google_owlv2-large-patch14-ensemble__1016001.json.gz");
  SKIP_WITHOUT(path);
  const Trace& t = testing::load_kineto(path);
  const diagnose::Diagnosis d = diagnose::diagnose(t, {});
  const diagnose::Finding* f = testing::finding(d, "gemm_shape");
  ASSERT_NE(f, nullptr);
  ASSERT_GE(f->offenders.size(), 2u);
  EXPECT_EQ(f->offenders[0].name, "aten::bmm 5185×5185×64 bf16 (batch 16)");
  EXPECT_EQ(f->offenders[0].detail, "pad n 5185 → 5192");
  EXPECT_EQ(f->offenders[0].count, 120);
  EXPECT_EQ(f->offenders[1].name, "aten::bmm 5185×64×5185 bf16 (batch 16)");
  EXPECT_EQ(f->offenders[1].detail, "pad k 5185 → 5192");
  EXPECT_NEAR(testing::figure(*f, "misaligned_gemm_ns") / testing::figure(*f, "gemm_ns"), 0.892, 0.001);
  EXPECT_LT(testing::figure(*f, "misaligned_tflops_per_s") * 5, testing::figure(*f, "aligned_tflops_per_s"));
  EXPECT_NE(testing::finding(d, "low_mfu"), nullptr);
}

// A trace without shapes has no model FLOPs: no section, no finding.
TEST(FlopsSummary, ATraceWithoutShapesHasNoModelFlops) {
  const std::string path = (testing::shared_dir() /
                            "traces/kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/"
                            "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz")
                               .string();
  SKIP_WITHOUT(path);
  const Trace& t = testing::load_kineto(path);
  EXPECT_FALSE(summarize(t).mfu.has_value());
  const diagnose::Diagnosis d = diagnose::diagnose(t, {});
  EXPECT_EQ(testing::finding(d, "low_mfu"), nullptr);
  EXPECT_EQ(testing::finding(d, "gemm_shape"), nullptr);
}

// TraceLens's MI300X OWLv2 trace lists its GPU as device 0 while its kernels run on device 2: the
// trace's one kind of GPU stands for it. A peak file or --peak-tflops replaces the table's.
TEST(FlopsSummary, UserPeaksComeBeforeTheTable) {
  const std::string path =
      (testing::shared_dir() /
       "traces/kineto/TraceLens/tests/traces/mi300/google_owlv2-large-patch14-ensemble__1016001.json.gz")
          .string();
  SKIP_WITHOUT(path);
  const testing::CliRun table = testing::tracedoc({"stats", "-r", "step_mfu_sum", "-f", "csv", path});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out,
            "Rank,Step,Wall (ns),Model FLOPs,TFLOP/s,MFU (%),GPU\n,6,1096360466,29166401318400,26.603,2.03,"
            "Instinct MI300X\n");
  const testing::CliRun uniform =
      testing::tracedoc({"stats", "-r", "step_mfu_sum", "-f", "csv", "--peak-tflops", "100", path});
  ASSERT_EQ(uniform.exit_code, 0) << uniform.err;
  EXPECT_NE(uniform.out.find(",26.603,26.6,--peak-tflops"), std::string::npos) << uniform.out;

  testing::ScratchDir dir;
  const std::string file =
      dir.write("peaks.toml", "[[gpu]]\nmatch = \"MI300X\"\nname = \"MI300X at 500\"\nbf16 = 500\n").string();
  const testing::CliRun user = testing::tracedoc({"summary", "--gpu-peaks", file, path});
  ASSERT_EQ(user.exit_code, 0) << user.err;
  EXPECT_NE(user.out.find("median step 26.6 TFLOP/s, MFU 5.32% of MI300X at 500 (1 step)"), std::string::npos)
      << user.out;

  const std::string bad = dir.write("bad.toml", "[[gpu]]\nmatch = \"MI300X\"\nbf16 = \"fast\"\n").string();
  const testing::CliRun refused = testing::tracedoc({"summary", "--gpu-peaks", bad, path});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_EQ(refused.err,
            "tracedoc: " + bad + ": gpu 1: bf16 must be a positive number (TFLOP/s, or GB/s for bandwidth)\n");
  EXPECT_EQ(refused.out, "");
}

TRACEDOC_TEST_LABELS(FlopsReports, corpus);

// An nsys export of a PyTorch run holds its operators as emit_nvtx ranges ("aten::mul, op_id =
// 322567"): without shapes the reports say so, naming how many, instead of "no PyTorch data".
TEST(FlopsReports, NsysExportsSayTheirOperatorsHaveNoShapes) {
  const std::string path = (testing::shared_dir() / "traces/nsys/nsys-ai/h100_2gpu_1s.sqlite").string();
  SKIP_WITHOUT(path);
  const Trace& t = testing::load_nsys(path);
  for (const char* report : {"op_flops_sum", "step_mfu_sum"}) {
    const auto* def = find_report(report);
    ASSERT_NE(def, nullptr);
    TableSink sink;
    const Status st = def->run(t, {}, sink);
    EXPECT_EQ(st.code(), ErrorCode::kNoData);
    EXPECT_EQ(st.message(), path +
                                " records 16542 PyTorch operators as NVTX ranges (emit_nvtx), without their "
                                "shapes: for their FLOPs, record with emit_nvtx(record_shapes=True) or profile "
                                "with the PyTorch profiler (record_shapes=True)");
  }
}

}  // namespace
}  // namespace tracedoc
