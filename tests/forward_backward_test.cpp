// Forward -> backward links: the sequence-number rule (for traces without flow arrows) must give
// exactly the links Kineto drew as `fwdbwd` arrows in the traces that have them.
#include <gtest/gtest.h>

#include <string>

#include "analysis/pytorch/forward_backward.h"
#include "ingest/kineto_reader.h"
#include "test_support.h"

namespace tracedoc {
namespace {

struct Case {
  const char* path;    // under shared/traces
  int64_t flow_pairs;  // `fwdbwd` 's'/'f' pairs in the raw JSON (grep count of the category / 2)
};

const Case kFlowCases[] = {
    {"kineto/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz", 543},
    {"kineto/HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 905},
    {"kineto/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz", 213},
    {"kineto/HolisticTraceAnalysis@history/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 55},
};

TRACEDOC_TEST_LABELS(ForwardBackward, corpus);

TEST(ForwardBackward, SequenceNumbersGiveExactlyTheFlowArrows) {
  const auto shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  for (const Case& c : kFlowCases) {
    SCOPED_TRACE(c.path);
    auto trace = read_kineto_trace((shared / "traces" / c.path).string());
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    const auto flows = pytorch::link_by_flows(*trace);
    const auto seq = pytorch::link_by_sequence_number(*trace);
    EXPECT_EQ(flows.linked, c.flow_pairs);  // every arrow lands on an operator at each end
    EXPECT_EQ(seq.linked, flows.linked);
    EXPECT_EQ(seq.forward_of, flows.forward_of);
  }
}

TEST(ForwardBackward, TracesWithoutArrowsAreLinkedBySequenceNumber) {
  const auto shared = testing::shared_dir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent: the real traces are needed";
  // 2021 and 2022 traces: no fwdbwd arrows, but sequence numbers (4764 and 1068 backward-side ops,
  // half of them the evaluate_function wrappers).
  for (const char* path :
       {"kineto/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz",
        "kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"}) {
    SCOPED_TRACE(path);
    auto trace = read_kineto_trace((shared / "traces" / path).string());
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    ASSERT_EQ(trace->pytorch.forward_backward.size(), 0u);
    const auto links = pytorch::link_forward_backward(*trace);
    EXPECT_GT(links.linked, 0);
    const auto& ops = trace->pytorch.ops;
    for (size_t i = 0; i < links.forward_of.size(); ++i) {
      const int32_t f = links.forward_of[i];
      if (f == pytorch::kNoRow) continue;
      EXPECT_EQ(ops.sequence_number[f], ops.sequence_number[i]);
      EXPECT_LT(ops.start[f], ops.start[i]);  // the gradient runs after the forward op
      EXPECT_GT(ops.fwd_thread_id[i], 0);
    }
  }
}

}  // namespace
}  // namespace tracedoc
