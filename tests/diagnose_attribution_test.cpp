// Diagnosis on real-shaped traces: what the CPU records in a step (the caching allocator's events)
// belongs to that step's CPU window, and launch overhead is named whatever the number of kernels.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "diagnose/engine.h"
#include "ingest/kineto_reader.h"
#include "model/step_names.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;
using diagnose::Diagnosis;
using diagnose::Finding;

constexpr int64_t kMiB = int64_t{1} << 20, kGiB = int64_t{1} << 30;

// A time in ns as Kineto's microseconds with three decimals (exact).
std::string micros(int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

// HTA's A100 training loop (rank 0, 5 ProfilerStep#N) with caching-allocator events added as
// PyTorch writes them: `[memory]` instants on the main CPU thread, Device Type 1 (CUDA), Device Id
// 0, with the allocator's totals. Each step allocates a 2 GiB activation at 10% of the step, keeps
// `growth` bytes at 30% and frees the activation at 70%. The GPU runs behind the CPU on this trace,
// so the stretched step windows start inside the previous CPU step.
std::string planted_allocator_trace(int64_t growth) {
  const fs::path src =
      shared_dir() / "traces/kineto/HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz";
  std::string json = gunzip(src);
  const Trace& t = load_kineto(src.string());
  std::vector<std::pair<TimeNs, TimeNs>> steps;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    if (is_profiler_step(t.str(t.ranges.text[i]))) steps.push_back({t.ranges.start[i], t.ranges.end[i]});
  }
  std::sort(steps.begin(), steps.end());
  EXPECT_EQ(steps.size(), 5u);
  std::string events;
  int64_t total = 10 * kGiB, addr = 0x7f0000000000;
  auto add = [&](TimeNs at, int64_t bytes) {
    total += bytes, addr += 4096;
    events += fmt::format(
        ",\n  {{\"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 4515, "
        "\"tid\": 4515, \"ts\": {}, \"args\": {{\"Total Reserved\": {}, \"Total Allocated\": {}, \"Bytes\": {}, "
        "\"Addr\": {}, \"Device Id\": 0, \"Device Type\": 1}}}}",
        micros(at), total + kGiB, total, bytes, addr);
  };
  for (const auto& [start, end] : steps) {
    const int64_t len = end - start;
    add(start + len / 10, 2 * kGiB);
    if (growth) add(start + len * 3 / 10, growth);
    add(start + len * 7 / 10, -2 * kGiB);
  }
  // The events go at the end of traceEvents, the document's last array.
  const size_t close = json.rfind(']');
  EXPECT_NE(close, std::string::npos);
  const size_t last = json.find_last_not_of(" \n\r\t", close - 1);
  json.insert(last + 1, events);
  return json;
}

TRACEDOC_TEST_LABELS(DiagnoseAttribution, corpus);

TEST(DiagnoseAttribution, StaircaseMemoryFromAllocatorEventsOnTheMainThread) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: HTA's negative_queue_length_values_check skipped";
  ScratchDir dir;
  const fs::path grow = dir.write("grow.json", planted_allocator_trace(300 * kMiB));
  const fs::path flat = dir.write("flat.json", planted_allocator_trace(0));
  auto grown = read_kineto_trace(grow.string());
  ASSERT_TRUE(grown.ok()) << grown.status().message();
  const Diagnosis d = diagnose::diagnose(*grown, {});
  const Finding* f = finding(d, "staircase_memory");
  ASSERT_NE(f, nullptr) << "staircase_memory did not fire";
  EXPECT_EQ(f->scope, "rank 0 GPU 0");
  EXPECT_EQ(f->severity, diagnose::Severity::kCritical);  // the device fills within oom_steps steps
  // Memory findings rate themselves, not by a time share: a later device-full warning stays one.
  diagnose::DiagnoseOptions patient;
  patient.settings["staircase_memory"].params["oom_steps"] = 0;
  const Diagnosis later_d = diagnose::diagnose(*grown, patient);
  const Finding* later = finding(later_d, "staircase_memory");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->severity, diagnose::Severity::kWarning);
  EXPECT_EQ(figure(*f, "steps"), 5);
  // Each step's peak: 10 GiB, the growth kept by the steps before, 2 GiB of activations and its own
  // growth; 300 MiB more per step, in every step.
  EXPECT_EQ(figure(*f, "first_step_peak_bytes"), 10 * kGiB + 2 * kGiB + 300 * kMiB);
  EXPECT_EQ(figure(*f, "last_step_peak_bytes"), 10 * kGiB + 2 * kGiB + 5 * 300 * kMiB);
  EXPECT_EQ(figure(*f, "growth_per_step_bytes"), 300 * kMiB);
  EXPECT_EQ(figure(*f, "rising_share"), 1.0);
  auto flat_trace = read_kineto_trace(flat.string());
  ASSERT_TRUE(flat_trace.ok());
  EXPECT_EQ(finding(diagnose::diagnose(*flat_trace, {}), "staircase_memory"), nullptr)
      << "the sawtooth alone is not growth";
}

// TraceLens' BERT-small inference (H100 and MI300X): 60 kernels of ~5 µs, each launched just in
// time; the GPU waits for the launches through the whole step, and its synchronizations (the
// benchmark's, 6-33 µs each) find it idle. Launch overhead, not a sync stall.
TEST(DiagnoseAttribution, SmallEagerBlockIsLaunchBoundNotASyncStall) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: TraceLens' traces skipped";
  for (const char* gpu : {"h100", "mi300"}) {
    SCOPED_TRACE(gpu);
    const Trace& t = load_kineto(
        (shared_dir() /
         fmt::format("traces/kineto/TraceLens/tests/traces/{}/gaunernst_bert-small-uncased__1016001.json.gz", gpu))
            .string());
    const Diagnosis d = diagnose::diagnose(t, {});
    const Finding* f = finding(d, "launch_bound");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(figure(*f, "kernels"), 60);
    EXPECT_GT(figure(*f, "launch_bubble_share"), 0.4);
    EXPECT_EQ(finding(d, "sync_stall"), nullptr);
  }
}

}  // namespace
}  // namespace tracedoc::testing
