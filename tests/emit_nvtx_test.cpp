// PyTorch operators recorded by emit_nvtx(record_shapes=True) in an Nsight Systems export: the range
// names' parser (model/emit_nvtx_names.h), the operators the nsys reader makes of them
// (ingest/emit_nvtx_ops.h) and the steps their ProfilerStep#N ranges mark. The export is a real
// recording of tests/data/pytorch-cpu (tools/record_cpu_pytorch.py: nsys 2023.4.4, PyTorch 2.15,
// three training steps of a small model on the CPU); tests/pytorch_own_flops_test.py checks its
// FLOPs against the PyTorch profiler trace of the same loop. The ranges that became operators are
// drawn, compared and exported once, as operators.
#include <gtest/gtest.h>

#include <filesystem>

#include "analysis/steps.h"
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/open_trace.h"
#include "model/emit_nvtx_names.h"
#include "model/step_names.h"
#include "test_support.h"
#include "view/color_scheme.h"
#include "view/timeline.h"

namespace tracedoc::testing {
namespace {

const std::string kExport =
    (std::filesystem::path(TRACEDOC_SOURCE_DIR) / "tests/data/pytorch-cpu/cpu_train_emit_nvtx.sqlite").string();

TRACEDOC_TEST_LABELS(EmitNvtxNames, unit);

TEST(EmitNvtxNames, ParsesWhatPyTorchWrites) {
  // Names exactly as they are in the export.
  auto e = parse_emit_nvtx_name(
      "aten::embedding, seq = 0, op_id = 3, sizes = [[512, 64], [4, 32], [], [], []], input_op_ids = [(0,-1), "
      "(0,-1), (0,-1), (0,-1), (0,-1)]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "aten::embedding");
  EXPECT_EQ(e->seq, 0);
  EXPECT_EQ(e->op_id, 3);
  EXPECT_EQ(e->sizes, "[[512, 64], [4, 32], [], [], []]");

  e = parse_emit_nvtx_name("aten::view, op_id = 5, sizes = [[4, 32], []], input_op_ids = [(0,-1), (0,-1)]");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "aten::view");
  EXPECT_EQ(e->seq, -1);
  EXPECT_EQ(e->op_id, 5);
  EXPECT_EQ(e->sizes, "[[4, 32], []]");

  e = parse_emit_nvtx_name("ProfilerStep#0, op_id = 1");  // a record_function scope: no inputs
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "ProfilerStep#0");
  EXPECT_EQ(e->op_id, 1);
  EXPECT_TRUE(e->sizes.empty());

  // Without record_shapes (the nsys-ai exports): ids only.
  e = parse_emit_nvtx_name("aten::mm, seq = 12, op_id = 4242");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->name, "aten::mm");
  EXPECT_EQ(e->seq, 12);
  EXPECT_TRUE(e->sizes.empty());

  EXPECT_FALSE(parse_emit_nvtx_name("forward"));
  EXPECT_FALSE(parse_emit_nvtx_name("a, b"));
  EXPECT_FALSE(parse_emit_nvtx_name(", seq = 1"));            // no name before the attributes
  e = parse_emit_nvtx_name("aten::mm, sizes = [[2, 3], [3");  // cut: no list
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->sizes.empty());

  EXPECT_EQ(without_emit_nvtx_attributes("aten::mm, seq = 12, op_id = 7"), "aten::mm");
  EXPECT_EQ(without_emit_nvtx_attributes("train step, epoch 1"), "train step, epoch 1");
  EXPECT_EQ(profiler_step_number("ProfilerStep#2, op_id = 40"), 2);
  EXPECT_EQ(profiler_step_number("ProfilerStep#2, op"), std::nullopt);
}

TRACEDOC_TEST_LABELS(EmitNvtxOperators, unit);

TEST(EmitNvtxOperators, TheExportsRangesWithShapesAreOperators) {
  const Trace& t = load_nsys(kExport);
  EXPECT_EQ(t.ranges.size(), 1878u);  // every range stays a range
  const OpTable& ops = t.pytorch.ops;
  ASSERT_EQ(ops.size(), 1869u);  // as many as the PyTorch profiler recorded in the same loop
  // The first operator: the embedding of step 0, its ids and dims from its name.
  EXPECT_EQ(t.str(ops.name[0]), "aten::embedding");
  EXPECT_EQ(ops.sequence_number[0], 0);
  EXPECT_EQ(ops.external_id[0], 3);
  EXPECT_EQ(t.str(ops.input_dims[0]), "[[512, 64], [4, 32], [], [], []]");
  EXPECT_EQ(ops.input_types[0], kNoStr);  // emit_nvtx records no dtypes
  int64_t mm = 0, with_seq = 0, engine = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string_view name = t.str(ops.name[i]);
    EXPECT_EQ(name.find(", "), std::string_view::npos) << name;
    EXPECT_LE(ops.start[i], ops.end[i]);
    if (i > 0) {
      EXPECT_LE(ops.start[i - 1], ops.start[i]);
    }
    mm += name == "aten::mm";
    with_seq += ops.sequence_number[i] != kNoValue;
    if (name.starts_with("autograd::engine::evaluate_function: ")) {
      ++engine;
      EXPECT_EQ(ops.input_dims[i], kNoStr);
    }
  }
  EXPECT_EQ(engine, 192);
  EXPECT_EQ(mm, 30);  // per step: the input and the weight gradient of each of the five linears
  EXPECT_EQ(with_seq, 348);
}

TEST(EmitNvtxOperators, ProfilerStepRangesMarkTheSteps) {
  const Trace& t = load_nsys(kExport);
  auto steps = find_steps(t);
  ASSERT_TRUE(steps.ok()) << steps.status().message();
  EXPECT_EQ(steps->source, StepSource::kProfilerStep);
  ASSERT_EQ(steps->steps.size(), 3u);
  for (size_t s = 0; s < 3; ++s) EXPECT_EQ(steps->steps[s].number, static_cast<int64_t>(s));
}

// The ranges that are operators show once, as operators: on the timeline, in a diff and in a Chrome
// trace export. The other
// nine are the scopes (three steps, three zero_grad, three optimizer steps).
TEST(EmitNvtxOperators, OperatorRangesAreDrawnComparedAndExportedOnce) {
  const Trace& t = load_nsys(kExport);
  ASSERT_TRUE(operators_are_ranges(t));
  size_t operator_ranges = 0;
  for (size_t i = 0; i < t.ranges.size(); ++i) operator_ranges += range_is_operator(t, i);
  EXPECT_EQ(operator_ranges, 1869u);

  const Result<view::ColorScheme> colors = view::ColorScheme::load("default");
  ASSERT_TRUE(colors.ok());
  const view::Timeline tl = view::build_timeline(t, *colors, nullptr, view::ItemFigures(t));
  size_t ops = 0, ranges = 0;
  for (const view::Track& track : tl.tracks) {
    for (const view::TrackItem& item : track.items) {
      ops += item.category == view::Category::kOp;
      ranges += item.category == view::Category::kRange;
    }
  }
  EXPECT_EQ(ops, 1869u);
  EXPECT_EQ(ranges, 9u);

  // diff: the operators once (109 names), the two optimizer scopes as ranges (steps are left out).
  const CliRun diff = tracedoc({"diff", kExport, kExport});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("Operators (per step): 109 unchanged"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("Ranges (per step): 2 unchanged"), std::string::npos) << diff.out;

  // Written as a PyTorch trace: the operators as cpu_op events, the scopes as user annotations.
  const std::string chrome = ::testing::TempDir() + "emit_nvtx_export.json";
  const CliRun exported = tracedoc({"export", "--to", "chrome", "-o", chrome, kExport});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  auto back = open_trace(chrome);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->pytorch.ops.size(), 1869u);
  EXPECT_EQ(back->ranges.size(), 9u);
  std::filesystem::remove(chrome);

  // A PyTorch profiler trace keeps its own operators and ranges apart.
  EXPECT_FALSE(operators_are_ranges(load_kineto(
      (std::filesystem::path(TRACEDOC_SOURCE_DIR) / "tests/data/pytorch-cpu/cpu_train_flops.json.gz").string())));
}

}  // namespace
}  // namespace tracedoc::testing
