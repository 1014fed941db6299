// FLOPs and bytes per operator (analysis/pytorch/op_flops.h) on hand-worked shapes, the GPU peak
// table's matching (analysis/gpu_peaks.h), and the reports on a real H100 trace: op_flops_sum's
// rows and step_mfu_sum's MFU against the hand computation in docs/flops.md. tests/flops_check.py
// checks every shared trace with shapes against an independent Python computation.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "analysis/gpu_peaks.h"
#include "analysis/pytorch/flops_reports.h"
#include "analysis/pytorch/op_flops.h"
#include "ingest/open_trace.h"
#include "test_support.h"

namespace tracedoc {
namespace {

using pytorch::Dtype;
using pytorch::FlopKind;
using pytorch::op_cost;

TRACEDOC_TEST_LABELS(OpFlops, corpus);

TEST(OpFlops, MatrixMultipliesCountTwoFlopsPerMultiplyAdd) {
  const auto mm = op_cost("aten::mm", "[[64, 128], [128, 256]]", R"(["float", "float"])", "");
  EXPECT_EQ(mm.kind, FlopKind::kMatmul);
  ASSERT_TRUE(mm.known);
  EXPECT_EQ(mm.flops, 2 * 64 * 128 * 256);
  EXPECT_EQ(mm.bytes, (64 * 128 + 128 * 256 + 64 * 256) * 4);
  EXPECT_EQ(mm.dtype, Dtype::kFp32);
  // addmm: the bias is read, not counted as FLOPs (flop_counter's convention).
  const auto addmm = op_cost("aten::addmm", "[[1000], [32, 2048], [2048, 1000], [], []]",
                             R"(["float", "float", "float", "Scalar", "Scalar"])", "");
  EXPECT_EQ(addmm.flops, 2 * 32 * 2048 * 1000);
  EXPECT_EQ(addmm.bytes, (32 * 2048 + 2048 * 1000 + 32 * 1000 + 1000) * 4);
  // linear in bf16 over a 3-D input: the leading dims are the batch.
  const auto linear = op_cost("aten::linear", "[[1, 141, 512], [2048, 512], [2048]]",
                              R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])", "");
  EXPECT_EQ(linear.flops, int64_t{2} * 141 * 512 * 2048);
  EXPECT_EQ(linear.bytes, (141 * 512 + 2048 * 512 + 141 * 2048 + 2048) * 2);
  EXPECT_EQ(linear.dtype, Dtype::kBf16);
  // bmm and a broadcast matmul.
  EXPECT_EQ(op_cost("aten::bmm", "[[8, 16, 32], [8, 32, 4]]", "", "").flops, 2 * 8 * 16 * 32 * 4);
  EXPECT_EQ(op_cost("aten::matmul", "[[3, 8, 16, 32], [32, 4]]", "", "").flops, 2 * 3 * 8 * 16 * 32 * 4);
  // Shapes that do not multiply: not counted.
  EXPECT_FALSE(op_cost("aten::mm", "[[64, 128], [64, 256]]", "", "").known);
  // Not an operator with a formula.
  EXPECT_EQ(op_cost("aten::view", "[[64, 128], []]", "", "").kind, FlopKind::kNone);
}

TEST(OpFlops, ConvolutionsTakeTheirOutputFromStridePaddingAndDilation) {
  // ResNet's 3x3 stride-2 convolution: 14x14 -> 7x7.
  const auto conv =
      op_cost("aten::conv2d", "[[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], []]",
              R"(["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"])",
              R"(["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "1"])");
  ASSERT_TRUE(conv.known);
  EXPECT_EQ(conv.flops, int64_t{2} * 10 * 512 * 256 * 3 * 3 * 7 * 7);
  EXPECT_EQ(conv.bytes, (int64_t{10} * 256 * 14 * 14 + 512 * 256 * 9 + 10 * 512 * 7 * 7) * 2);
  // cudnn_convolution takes padding before stride.
  const auto cudnn = op_cost("aten::cudnn_convolution", "[[10, 256, 14, 14], [512, 256, 3, 3], [], [], [], []]", "",
                             R"(["", "", "[1, 1]", "[2, 2]", "[1, 1]", "1"])");
  EXPECT_EQ(cudnn.flops, conv.flops);
  // Without Concrete Inputs (2021 traces) the stride is unknown: not counted here.
  EXPECT_FALSE(op_cost("aten::cudnn_convolution", "[[32, 3, 224, 224], [64, 3, 7, 7], [], [], [], []]", "", "").known);
  // Backward: grad_input and grad_weight each as the forward; the mask decides which.
  const std::string dims = "[[10, 512, 7, 7], [10, 256, 14, 14], [512, 256, 3, 3], [], [], [], [], [], [], [], []]";
  const auto both =
      op_cost("aten::convolution_backward", dims, "",
              R"(["", "", "", "[0]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"])");
  EXPECT_EQ(both.flops, 2 * conv.flops);
  const auto weight_only =
      op_cost("aten::convolution_backward", dims, "",
              R"(["", "", "", "[0]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, True]"])");
  EXPECT_EQ(weight_only.flops, conv.flops);
}

TEST(OpFlops, AttentionForwardAndBackward) {
  // [batch, heads, seq, dim]
  const auto fwd = op_cost("aten::_scaled_dot_product_flash_attention",
                           "[[2, 8, 128, 64], [2, 8, 256, 64], [2, 8, 256, 32], [], []]",
                           R"(["c10::Half", "c10::Half", "c10::Half", "Scalar", "Scalar"])", "");
  EXPECT_EQ(fwd.kind, FlopKind::kAttention);
  EXPECT_EQ(fwd.flops, int64_t{2} * 2 * 8 * 128 * 256 * (64 + 32));
  const auto bwd = op_cost("aten::_scaled_dot_product_flash_attention_backward",
                           "[[2, 8, 128, 32], [2, 8, 128, 64], [2, 8, 256, 64], [2, 8, 256, 32]]", "", "");
  EXPECT_EQ(bwd.flops, int64_t{2} * 2 * 8 * 128 * 256 * (3 * 64 + 2 * 32));
  // flash_attention_forward's layout is [batch, seq, heads, dim].
  const auto flash =
      op_cost("aten::_flash_attention_forward", "[[2, 128, 8, 64], [2, 256, 8, 64], [2, 256, 8, 32]]", "", "");
  EXPECT_EQ(flash.flops, fwd.flops);
}

TEST(OpFlops, MemoryBoundOperatorsAndTypes) {
  const auto ln = op_cost("aten::layer_norm", "[[1, 141, 512], [], [512], [512], [], []]",
                          R"(["c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])", "");
  EXPECT_EQ(ln.kind, FlopKind::kNorm);
  EXPECT_EQ(ln.flops, 5 * 141 * 512);
  EXPECT_EQ(ln.bytes, (141 * 512 + 512 + 512 + 141 * 512) * 2);
  const auto add = op_cost("aten::add", "[[4, 1, 8], [1, 3, 8], []]", R"(["float", "float", "Scalar"])", "");
  EXPECT_EQ(add.flops, 4 * 3 * 8);  // the broadcast result
  EXPECT_EQ(pytorch::dtype_of("c10::Float8_e4m3fn"), Dtype::kFp8);
  EXPECT_EQ(pytorch::dtype_of("c10::Half"), Dtype::kFp16);
  EXPECT_EQ(pytorch::element_bytes("long int"), 8);
  EXPECT_EQ(pytorch::element_bytes("Scalar"), 0);
}

TRACEDOC_TEST_LABELS(GpuPeaks, corpus);

TEST(GpuPeaks, DeviceNamesMatchTheMostSpecificEntry) {
  const auto name_of = [](std::string_view device, int64_t memory_gb) {
    const auto p = gpu_peaks(device, memory_gb << 30);
    return p ? std::string(p->name) : std::string("none");
  };
  EXPECT_EQ(name_of("NVIDIA H100 80GB HBM3", 80), "H100 SXM5 80GB");
  EXPECT_EQ(name_of("NVIDIA H100 PCIe", 80), "H100 PCIe 80GB");
  EXPECT_EQ(name_of("NVIDIA A100-SXM4-80GB", 79), "A100 SXM4 80GB");
  EXPECT_EQ(name_of("NVIDIA A100-PG509-200", 39), "A100 SXM4 40GB");
  EXPECT_EQ(name_of("Tesla V100-DGXS-32GB", 32), "V100 SXM2");
  EXPECT_EQ(name_of("Tesla V100-PCIE-16GB", 16), "V100 PCIe");
  EXPECT_EQ(name_of("AMD Instinct MI300X VF", 192), "Instinct MI300X");
  EXPECT_EQ(name_of("NVIDIA L40S", 48), "L40S");
  EXPECT_EQ(name_of("NVIDIA L4", 24), "L4");
  EXPECT_EQ(name_of("NVIDIA B200", 178), "B200 (HGX, per GPU)");
  EXPECT_EQ(name_of("NVIDIA GeForce RTX 3060", 12), "none");
  const GpuPeaks h100 = *gpu_peaks("NVIDIA H100 80GB HBM3");
  EXPECT_DOUBLE_EQ(h100.peak_tflops(Dtype::kBf16), 989.4);
  EXPECT_DOUBLE_EQ(h100.peak_tflops(Dtype::kFp32), 66.9);
  EXPECT_DOUBLE_EQ(h100.bandwidth_gbps, 3350);
  // A type without its own units runs on the next wider one: V100's bf16 and T4's fp8 as fp16.
  EXPECT_DOUBLE_EQ(gpu_peaks("Tesla V100-SXM2-16GB")->peak_tflops(Dtype::kBf16), 125);
  EXPECT_DOUBLE_EQ(gpu_peaks("Tesla T4")->peak_tflops(Dtype::kFp8), 65);
  EXPECT_DOUBLE_EQ(gpu_peaks("Tesla T4")->peak_tflops(Dtype::kTf32), 8.1);
}

// Peaks from the clock and SMs an export recorded: for the GPUs the table has, within 1% of the
// datasheets' numbers for every type both give (so the per-SM rates are the whitepapers'); for the
// GPUs it lacks, SMs x clock x rate.
TEST(GpuPeaks, FromTheClockTheExportsRecorded) {
  std::set<std::string> compared;
  for (const auto& [name, path] : testing::shared_nsys_exports()) {
    const Trace& t = testing::load_nsys(path);
    for (const DeviceInfo& d : t.devices) {
      const std::string_view device = t.str(d.name);
      const auto derived =
          gpu_peaks_from_clock(device, d.compute_major, d.compute_minor, d.sm_count, d.clock_hz, d.memory_bandwidth);
      const auto table = gpu_peaks(device, d.total_memory);
      if (!derived || !table) continue;
      EXPECT_TRUE(derived->from_clock);
      for (size_t type = 1; type < pytorch::kDtypeCount; ++type) {
        if (derived->tflops[type] <= 0 || table->tflops[type] <= 0) continue;
        EXPECT_NEAR(derived->tflops[type] / table->tflops[type], 1.0, 0.01)
            << device << " " << pytorch::dtype_name(static_cast<Dtype>(type));
      }
      EXPECT_NEAR(derived->bandwidth_gbps / table->bandwidth_gbps, 1.0, 0.01) << device;
      compared.insert(std::string(table->name));
    }
  }
  if (compared.empty()) GTEST_SKIP() << "../shared/traces not found";
  EXPECT_EQ(compared, (std::set<std::string>{"A100 SXM4 80GB", "GeForce RTX 3080", "T4"}));
}

TEST(GpuPeaks, GpusTheTableLacksTakeTheirPeaksFromTheirClock) {
  struct Case {
    const char* file;
    double fp32, fp16, bf16, fp8, bandwidth;
  };
  // SMs x clock (GHz) x FLOPs per SM per clock, GeForce rates (FP32 accumulation at half rate).
  const Case cases[] = {
      {"cuda-perf-sandbox/report1.sqlite", 28 * 1.792 * 256e-3, 28 * 1.792 * 512e-3, 28 * 1.792 * 512e-3,
       28 * 1.792 * 512e-3, 360.048},  // RTX 3060: fp8 runs as fp16
      {"DLProf/nsys_profile.sqlite", 40 * 1.785 * 128e-3, 40 * 1.785 * 512e-3, 40 * 1.785 * 512e-3, 40 * 1.785 * 512e-3,
       448.064},  // RTX 2070 SUPER (Turing)
      {"test-cuda/report1.sqlite", 34 * 2.565 * 256e-3, 34 * 2.565 * 512e-3, 34 * 2.565 * 512e-3, 34 * 2.565 * 1024e-3,
       288.032},  // RTX 4060 Ti (Ada: fp8)
      {"cuda-thinkering/output.sqlite", 6 * 1.4175 * 256e-3, 6 * 1.4175 * 4e-3, 6 * 1.4175 * 4e-3, 6 * 1.4175 * 4e-3,
       112.128},  // GTX 1050 Ti: FP16 at 1/64
  };
  for (const Case& c : cases) {
    const std::string path = (testing::nsys_traces_dir() / c.file).string();
    if (testing::shared_dir().empty() || !std::filesystem::exists(path)) GTEST_SKIP() << "../shared is absent";
    const Trace& t = testing::load_nsys(path);
    const auto peaks = pytorch::device_peaks(t);
    ASSERT_EQ(peaks.size(), 1u) << c.file;
    const GpuPeaks& p = peaks.begin()->second;
    EXPECT_TRUE(p.from_clock) << c.file;
    EXPECT_EQ(p.name, t.str(t.devices[0].name));
    EXPECT_NEAR(p.peak_tflops(Dtype::kFp32), c.fp32, 1e-9) << c.file;
    EXPECT_NEAR(p.peak_tflops(Dtype::kFp16), c.fp16, 1e-9) << c.file;
    EXPECT_NEAR(p.peak_tflops(Dtype::kBf16), c.bf16, 1e-9) << c.file;
    EXPECT_NEAR(p.peak_tflops(Dtype::kFp8), c.fp8, 1e-9) << c.file;
    EXPECT_NEAR(p.bandwidth_gbps, c.bandwidth, 1e-9) << c.file;
  }
  // An Nsight Compute report as a timeline: ncu's device attributes (GeForce GTX 1660 SUPER, 22 SMs
  // at 1,815 MHz, Turing without tensor cores: FP16 at twice the FP32 rate).
  const std::string ncu = (testing::shared_dir() / "traces/ncu/lakshya/naive.ncu-rep").string();
  if (std::filesystem::exists(ncu)) {
    auto t = open_trace(ncu);
    ASSERT_TRUE(t.ok()) << t.status().message();
    ASSERT_EQ(t->devices.size(), 1u);
    EXPECT_EQ(t->devices[0].clock_hz, 1815000000);
    const auto peaks = pytorch::device_peaks(*t);
    ASSERT_EQ(peaks.size(), 1u);
    EXPECT_NEAR(peaks.begin()->second.peak_tflops(Dtype::kFp32), 22 * 1.815 * 128e-3, 1e-9);
    EXPECT_NEAR(peaks.begin()->second.peak_tflops(Dtype::kFp16), 22 * 1.815 * 256e-3, 1e-9);
  }
  // Nothing to go on: no clock, or an architecture without published rates.
  EXPECT_FALSE(gpu_peaks_from_clock("Tesla V100-SXM2-16GB", 7, 0, 80, 0, 0));
  EXPECT_FALSE(gpu_peaks_from_clock("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980000000, 0));
  EXPECT_DOUBLE_EQ(
      gpu_peaks_from_clock("NVIDIA GeForce RTX 5090", 12, 0, 170, 2407000000, 0)->peak_tflops(Dtype::kBf16), 0);
}

// ResNet-50 of 2021 (no Concrete Inputs): the forward convolutions cannot be counted, and each is
// one unknown operator per chain (conv2d > convolution > _convolution > cudnn_convolution): 53 a
// step, 6 steps; the backward convolutions are counted.
TEST(OpFlops, ForwardConvolutionsWithoutStridesAreLeftOutAndCounted) {
  const std::string path =
      (testing::shared_dir() /
       "traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz")
          .string();
  if (testing::shared_dir().empty() || !std::filesystem::exists(path)) GTEST_SKIP() << "../shared is absent";
  const Trace& t = testing::load_kineto(path);
  const pytorch::OpCosts costs = pytorch::op_costs(t, pytorch::link_ops(t));
  EXPECT_EQ(costs.unknown, 53 * 6);
  int64_t backward = 0;
  for (size_t i = 0; i < t.pytorch.ops.size(); ++i) {
    if (costs.counted_by[i] == static_cast<int32_t>(i) &&
        t.str(t.pytorch.ops.name[i]) == "aten::cudnn_convolution_backward")
      ++backward;
  }
  EXPECT_EQ(backward, 53 * 6);
}

// BERT-small on an H100 (TraceLens's test trace): the vocabulary projection is the largest matrix
// multiply; step 6 holds 8,192,059,392 model FLOPs in 4.426 ms: 1.851 TFLOP/s, and at the H100's
// 989.4 TFLOP/s BF16 peak an MFU of 8.192e9 / (4.426114e-3 s × 989.4e12) = 0.19% (docs/flops.md).
TEST(OpFlops, ReportsOnARealH100Trace) {
  const std::string path = (testing::shared_dir() /
                            "traces/kineto/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
                               .string();
  if (testing::shared_dir().empty() || !std::filesystem::exists(path)) GTEST_SKIP() << "../shared is absent";
  const Trace& t = testing::load_kineto(path);
  const auto flops = testing::report_csv(t, "op_flops_sum");
  ASSERT_TRUE(flops.has_value());
  const auto rows = testing::parse_csv(*flops);
  ASSERT_GE(rows.size(), 6u);
  EXPECT_EQ(rows[0][0], "Kind");
  EXPECT_EQ(rows[1], (std::vector<std::string>{"matmul", "1", "4406888448", "40067160", "41280", "106.756", "970.6",
                                               "109.99", "10.8", "29.0", "memory", "bf16",
                                               "[[1, 141, 512], [30522, 512], [30522]]", "aten::linear"}));
  const auto mfu = testing::report_csv(t, "step_mfu_sum");
  ASSERT_TRUE(mfu.has_value());
  const auto steps = testing::parse_csv(*mfu);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1], (std::vector<std::string>{"", "6", "4426114", "8192059392", "1.851", "0.19", "H100 SXM5 80GB"}));
  // A peak given by hand replaces the table's: at 100 TFLOP/s the same step is at 1.85%.
  const auto forced = testing::report_csv(t, "step_mfu_sum:peak=100");
  ASSERT_TRUE(forced.has_value());
  EXPECT_EQ(testing::parse_csv(*forced)[1][5], "1.85");
  try {
    testing::report_csv(t, "op_flops_sum:peak=fast");
    ADD_FAILURE() << "a peak that is not a number is a usage error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "op_flops_sum: peak must be a positive number, got 'fast'");
  }
}

}  // namespace
}  // namespace tracedoc
