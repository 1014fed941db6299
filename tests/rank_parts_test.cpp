// A job's figures from its ranks' parts: each rank file read alone, its part sent as bytes and merged,
// gives what the command computes over the merged rank directory, byte for byte: the summary
// (analysis/summary.h; `tracedoc summary DIR`, JSON and text), the budget's measures
// (budget/measures.h; `tracedoc check DIR`'s report), the diagnosis (diagnose/parts.h; `tracedoc
// diagnose DIR`) and the comparison of two jobs (compare/diff_parts.h; `tracedoc diff BASE NEW`).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <type_traits>

#include "analysis/statistics.h"
#include "analysis/summary.h"
#include "budget/evaluate.h"
#include "budget/measures.h"
#include "compare/diff_parts.h"
#include "diagnose/parts.h"
#include "ingest/kineto_reader.h"
#include "ingest/open_trace.h"
#include "report/check_writer.h"
#include "report/diagnose_writer.h"
#include "report/diff_writer.h"
#include "report/summary_writer.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

// The parts of a directory's rank files, each through bytes, as tracedoc.distributed gathers them:
// `part_bytes(trace)` is a rank's part as bytes, `decode` reads them back.
// `part_bytes(trace, index)` may also take the trace's place among the directory's traces.
template <typename Part, typename PartBytes>
std::vector<Part> rank_parts(const fs::path& dir, PartBytes part_bytes, Result<Part> (*decode)(std::string_view)) {
  std::vector<Part> parts;
  const std::vector<std::string> files = kineto_files_in(dir.string());
  for (size_t index = 0; index < files.size(); ++index) {
    auto trace = open_trace(files[index]);
    if (!trace.ok()) {
      EXPECT_NE(trace.status().message().find("not a PyTorch profiler trace"), std::string::npos)
          << trace.status().message();
      continue;
    }
    auto part = [&] {
      if constexpr (std::is_invocable_v<PartBytes, Trace&, int64_t>) {
        return decode(part_bytes(*trace, static_cast<int64_t>(parts.size())));
      } else {
        return decode(part_bytes(*trace));
      }
    }();
    EXPECT_TRUE(part.ok()) << part.status().message();
    if (part.ok()) parts.push_back(std::move(part).value());
  }
  return parts;
}

std::vector<SummaryPart> summary_parts(const fs::path& dir, const SummaryOptions& options) {
  return rank_parts(
      dir, [&](const Trace& t) { return encode_summary_part(summary_part(t, options)); }, decode_summary_part);
}

void expect_check_merge_equals_directory(const fs::path& dir, const budget::Budget& b) {
  SCOPED_TRACE(dir.string());
  auto merged = open_trace(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const budget::Measures whole = budget::measure(*merged, b);
  // A file without a rank takes its place among the traces (the forbidden rules' findings name it).
  auto parts = rank_parts(
      dir,
      [&](Trace& t, int64_t index) {
        diagnose::assume_rank(t, index);
        return budget::encode_measure_part(budget::measure_part(t, b, budget::MeasureScope::kAll, true));
      },
      budget::decode_measure_part);
  auto from_parts = budget::merge_measure_parts(std::move(parts), b, dir.string());
  ASSERT_TRUE(from_parts.ok()) << from_parts.status().message();
  EXPECT_EQ(check_json(budget::evaluate(b, *from_parts, nullptr)), check_json(budget::evaluate(b, whole, nullptr)));
  EXPECT_EQ(from_parts->step_ns, whole.step_ns);
  EXPECT_EQ(from_parts->ranks.collectives, whole.ranks.collectives);
}

void expect_merge_equals_directory(const fs::path& dir, const SummaryOptions& options = {}) {
  SCOPED_TRACE(dir.string());
  auto merged = open_trace(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const TraceSummary whole = summarize(*merged, options);
  const TraceSummary from_parts = merge_summary_parts(summary_parts(dir, options), options, dir.string());
  EXPECT_EQ(summary_json({from_parts}), summary_json({whole}));
  EXPECT_EQ(summary_text(from_parts), summary_text(whole));
}

TRACEDOC_TEST_LABELS(SummaryParts, corpus sanitize);

TEST(SummaryParts, SyntheticRankDirectoriesMergeExactly) {
  // Two ranks with all-reduces a straggler delays (the Ranks section's skew), exposed communication,
  // and a clean pair.
  for (const char* spec : {"straggler", "exposed_comm", "clean_2ranks"})
    expect_merge_equals_directory(synth_rank_directory(spec));
  SummaryOptions wide;
  wide.top = 50;
  wide.gap_threshold_ns = 10'000;
  expect_merge_equals_directory(synth_rank_directory("straggler"), wide);
}

// The real rank directories of ../shared/traces/kineto. h100: five runs without a rank (numbered in
// file order), long tails across them, a straggler. (TraceLens's mi300 folder is not one job: two of
// its files from different runs both claim rank 0.)
constexpr const char* kRealRankDirectories[] = {
    "HolisticTraceAnalysis/tests/data/trace_filter", "TraceLens/tests/traces/h100",
    "kineto/tb_plugin/samples/resnet50_num_workers_0", "kineto/tb_plugin/samples/resnet50_num_workers_4",
    "TraceLens/tests/traces/inference/sglang_decode/capture_traces"};

TEST(SummaryParts, RealRankDirectoriesMergeExactly) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  for (const char* dir : kRealRankDirectories) expect_merge_equals_directory(shared_dir() / "traces/kineto" / dir);
}

// With a sketch capacity (as tracedoc.distributed sends its parts) every figure but the kernels'
// median and p95 still equals the directory's; those two are each within the rank error the merged
// sketch reports, against every instance's duration in the merged trace.
TEST(SummaryParts, SketchQuantilesStayWithinTheirRankError) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  const fs::path dir = shared_dir() / "traces/kineto/TraceLens/tests/traces/h100";
  auto merged = open_trace(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  SummaryOptions exact, sketched;
  exact.top = sketched.top = 20;
  sketched.quantile_capacity = 16;  // small, so that the real kernels' durations are compacted
  const TraceSummary whole = summarize(*merged, exact);
  const TraceSummary from_parts = merge_summary_parts(summary_parts(dir, sketched), sketched, dir.string());

  std::map<std::string, std::vector<int64_t>, std::less<>> instances;
  const KernelTable& k = merged->kernels;
  for (size_t i = 0; i < k.size(); ++i) instances[std::string(merged->str(k.name[i]))].push_back(k.end[i] - k.start[i]);
  ASSERT_EQ(from_parts.top_kernels.size(), whole.top_kernels.size());
  int compacted = 0;
  for (size_t i = 0; i < whole.top_kernels.size(); ++i) {
    const NamedTotal &a = from_parts.top_kernels[i], &b = whole.top_kernels[i];
    SCOPED_TRACE(b.name);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.count, b.count);
    EXPECT_EQ(a.total_ns, b.total_ns);
    EXPECT_EQ(a.durations.min(), b.durations.min());
    EXPECT_EQ(a.durations.max(), b.durations.max());
    EXPECT_TRUE(b.durations.exact());
    std::vector<int64_t>& all = instances[b.name];
    std::sort(all.begin(), all.end());
    ASSERT_EQ(static_cast<int64_t>(all.size()), b.count);
    EXPECT_EQ(b.durations.quantile_ns(0.5), median_ns(all));
    compacted += !a.durations.exact();
    for (double f : {0.5, 0.95}) {
      const int64_t v = a.durations.quantile_ns(f);
      const auto target = static_cast<int64_t>(std::floor(f * static_cast<double>(all.size() - 1)));
      EXPECT_LE(std::lower_bound(all.begin(), all.end(), v) - all.begin(), target + 1 + a.durations.rank_error());
      EXPECT_GE(std::upper_bound(all.begin(), all.end(), v) - all.begin(), target + 1 - a.durations.rank_error());
    }
  }
  EXPECT_GE(compacted, 10);  // most of the top 20 kernels ran more than 16 times
  // The rest of the summary is unchanged: the top kernels without their sketches, and all else.
  TraceSummary a = from_parts, b = whole;
  for (TraceSummary* s : {&a, &b}) {
    for (NamedTotal& t : s->top_kernels) t.durations = QuantileSketch();
  }
  EXPECT_EQ(summary_json({a}), summary_json({b}));
}

void expect_diagnosis_merge_equals_directory(const fs::path& dir, const diagnose::DiagnoseOptions& options = {}) {
  SCOPED_TRACE(dir.string());
  auto merged = open_trace(dir.string());
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  const diagnose::Diagnosis whole = diagnose::diagnose(*merged, options);
  // A file without a rank takes its place among the traces, as tracedoc.distributed gives it.
  auto parts = rank_parts(
      dir,
      [&](Trace& t, int64_t index) {
        diagnose::assume_rank(t, index);
        return diagnose::encode_diagnose_part(diagnose::diagnose_part(t, options, true));
      },
      diagnose::decode_diagnose_part);
  auto from_parts = diagnose::merge_diagnose_parts(std::move(parts), options, dir.string());
  ASSERT_TRUE(from_parts.ok()) << from_parts.status().message();
  EXPECT_EQ(diagnose_json({*from_parts}), diagnose_json({whole}));
  EXPECT_EQ(diagnose_text({*from_parts}), diagnose_text({whole}));
}

TRACEDOC_TEST_LABELS(DiagnoseParts, corpus sanitize);

TEST(DiagnoseParts, SyntheticRankDirectoriesMergeExactly) {
  // A straggler (a rule comparing the ranks), exposed communication found on one rank and rated on
  // the job's basis, a clean pair (nothing to find).
  for (const char* spec : {"straggler", "exposed_comm", "clean_2ranks"})
    expect_diagnosis_merge_equals_directory(synth_rank_directory(spec));
  diagnose::DiagnoseOptions everything;  // every finding, however small
  everything.min_savings_share = 0;
  everything.min_savings_ns = 0;
  expect_diagnosis_merge_equals_directory(synth_rank_directory("straggler"), everything);
}

TEST(DiagnoseParts, RealRankDirectoriesMergeExactly) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  for (const char* dir : kRealRankDirectories)
    expect_diagnosis_merge_equals_directory(shared_dir() / "traces/kineto" / dir);
}

TEST(DiagnoseParts, RanksFindingStepsDifferentlyAreRefused) {
  // Rank 0 marks its steps with ProfilerStep ranges, rank 1 has none and is detected: the whole
  // job finds rank 1 without steps, which rank 1 read alone cannot know.
  const Trace& toy = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  std::vector<diagnose::DiagnosePart> parts(2);
  parts[0].has_steps = parts[1].has_steps = true;
  parts[0].input = "a.json", parts[1].input = "b.json";
  parts[1].step_source = StepSource::kDetected;
  auto merged = diagnose::merge_diagnose_parts(std::move(parts), {}, "job");
  ASSERT_FALSE(merged.ok());
  EXPECT_EQ(merged.status().code(), ErrorCode::kUsage);
  EXPECT_NE(merged.status().message().find("job: a.json finds its steps by ProfilerStep, b.json by detected"),
            std::string::npos)
      << merged.status().message();
  EXPECT_FALSE(diagnose::decode_diagnose_part(encode_summary_part(summary_part(toy))).ok());  // another part's bytes
}

// Both jobs' parts merged into sides and compared give `tracedoc diff BASE NEW` on the directories.
void expect_diff_merge_equals_directories(const fs::path& base_dir, const fs::path& new_dir,
                                          const compare::DiffOptions& options = {}) {
  SCOPED_TRACE(base_dir.string() + " -> " + new_dir.string());
  auto base = open_trace(base_dir.string()), next = open_trace(new_dir.string());
  ASSERT_TRUE(base.ok() && next.ok());
  const compare::TraceDiff whole = compare::diff_traces(*base, *next, options);
  auto side = [&](const fs::path& dir) {
    auto parts = rank_parts(
        dir,
        [&](Trace& t, int64_t index) {
          diagnose::assume_rank(t, index);
          return compare::encode_diff_part(compare::diff_part(t, options, true));
        },
        compare::decode_diff_part);
    auto merged = compare::merge_diff_parts(std::move(parts), options, dir.string());
    EXPECT_TRUE(merged.ok()) << merged.status().message();
    return merged.ok() ? std::move(merged).value() : compare::DiffSide{};
  };
  auto from_parts = compare::diff_sides(side(base_dir), side(new_dir), options);
  ASSERT_TRUE(from_parts.ok()) << from_parts.status().message();
  EXPECT_EQ(diff_json(*from_parts), diff_json(whole));
  EXPECT_EQ(diff_text(*from_parts, {.all = true}), diff_text(whole, {.all = true}));
}

TRACEDOC_TEST_LABELS(DiffParts, corpus sanitize);

TEST(DiffParts, SyntheticJobsMergeExactly) {
  // A clean pair against the straggler: slower steps, a rank that computes longer, the findings
  // that came (exposed_comm, straggler); and the other way round without findings.
  expect_diff_merge_equals_directories(synth_rank_directory("clean_2ranks"), synth_rank_directory("straggler"));
  compare::DiffOptions no_findings;
  no_findings.findings = false;
  expect_diff_merge_equals_directories(synth_rank_directory("straggler"), synth_rank_directory("clean_2ranks"),
                                       no_findings);
}

TEST(DiffParts, RealJobsMergeExactly) {
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  const fs::path samples = shared_dir() / "traces/kineto/kineto/tb_plugin/samples";
  // ResNet-50 on two V100s without and with four data-loading workers.
  expect_diff_merge_equals_directories(samples / "resnet50_num_workers_0", samples / "resnet50_num_workers_4");
  const fs::path traces = shared_dir() / "traces/kineto/TraceLens/tests/traces";
  expect_diff_merge_equals_directories(traces / "h100", traces / "h100");
}

TEST(DiffParts, AJobsGpuWithoutStepsOfItsOwnIsRefused) {
  // Both sides have steps, and a rank of the new job has none: the merged trace splits its GPU's
  // time over another rank's steps, which its part, read alone, did not have.
  compare::DiffSide base, next;
  base.steps_per_owner = next.steps_per_owner = 10;
  next.one_part = false;
  next.info.input = "job";
  next.units.resize(2);
  next.units[0].own_windows = true;
  next.units[1].label = "rank 1 GPU 0";
  auto diff = compare::diff_sides(base, next, {});
  ASSERT_FALSE(diff.ok());
  EXPECT_EQ(diff.status().code(), ErrorCode::kUsage);
  EXPECT_NE(diff.status().message().find("job: rank 1 GPU 0 has no steps of its own"), std::string::npos)
      << diff.status().message();
  next.one_part = true;  // one trace: its fallback split is in its part
  EXPECT_TRUE(compare::diff_sides(base, next, {}).ok());
}

TEST(DiffParts, BytesCutAnywhereAreRefused) {
  // A diff part holds every kind of field, varint lists among them: cut at any byte, or followed by
  // one too many, it is refused, never read past its end (the sanitizer build checks the reads).
  const Trace& toy = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  const std::string bytes = compare::encode_diff_part(compare::diff_part(toy, {}));
  ASSERT_TRUE(compare::decode_diff_part(bytes).ok());
  ASSERT_GT(bytes.size(), 1000u);
  for (size_t cut = 0; cut < bytes.size(); cut += 1 + cut / 64) {
    auto part = compare::decode_diff_part(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(part.ok()) << cut;
    EXPECT_EQ(part.status().code(), ErrorCode::kBadInput);
  }
  EXPECT_FALSE(compare::decode_diff_part(bytes + "x").ok());
  // A varint that never ends (every byte with its high bit set) is refused at the bytes' end.
  std::string endless = bytes.substr(0, bytes.size() / 2) + std::string(64, '\xff');
  EXPECT_FALSE(compare::decode_diff_part(endless).ok());
}

TRACEDOC_TEST_LABELS(MeasureParts, corpus sanitize);

TEST(MeasureParts, RankDirectoriesMergeExactly) {
  // Every figure a part carries: steps, GPU busy and copy shares, memory, ranks, kernels by name.
  auto b = budget::load_budget((fs::path(TRACEDOC_SOURCE_DIR) / "tests/budgets/every_limit.toml").string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  for (const char* spec : {"straggler", "exposed_comm", "clean_2ranks"})
    expect_check_merge_equals_directory(synth_rank_directory(spec), *b);
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  const fs::path kineto = shared_dir() / "traces/kineto";
  for (const char* dir : {"HolisticTraceAnalysis/tests/data/trace_filter", "TraceLens/tests/traces/h100",
                          "kineto/tb_plugin/samples/resnet50_num_workers_4"}) {
    expect_check_merge_equals_directory(kineto / dir, *b);
  }
}

TEST(MeasureParts, FindingsBudgetsMergeTheirDiagnosis) {
  // [findings] forbid: the forbidden rules' parts, merged as diagnose merges them; the straggler,
  // which compares the ranks, and a rule about one rank.
  ScratchDir scratch;
  auto b = budget::load_budget(
      scratch.write("budget.toml", "[findings]\nforbid = [\"straggler\", \"exposed_comm\", \"long_tail\"]\n").string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  const fs::path job = synth_rank_directory("straggler");
  expect_check_merge_equals_directory(job, *b);
  auto whole = open_trace(job.string());
  ASSERT_TRUE(whole.ok());
  const budget::Measures m = budget::measure(*whole, *b);
  ASSERT_TRUE(m.diagnosis.has_value());
  std::vector<std::string> found;
  for (const auto& f : m.diagnosis->findings) found.push_back(f.id);
  EXPECT_EQ(found, (std::vector<std::string>{"exposed_comm", "straggler"}));
  if (shared_dir().empty()) GTEST_SKIP() << "../shared is absent: real rank directories skipped";
  expect_check_merge_equals_directory(shared_dir() / "traces/kineto/TraceLens/tests/traces/h100", *b);
  const Trace& toy = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  EXPECT_FALSE(budget::decode_measure_part(encode_summary_part(summary_part(toy))).ok());  // another part's bytes
}

TEST(SummaryParts, OneTracesPartIsItsSummary) {
  const fs::path toy = fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite";
  const Trace& trace = load_nsys(toy.string());
  auto part = decode_summary_part(encode_summary_part(summary_part(trace)));
  ASSERT_TRUE(part.ok());
  std::vector<SummaryPart> parts;
  parts.push_back(std::move(part).value());
  const TraceSummary merged = merge_summary_parts(std::move(parts), {});
  EXPECT_EQ(summary_json({merged}), summary_json({summarize(trace)}));
  EXPECT_EQ(merged.devices.at(0).kernels, 68);
  EXPECT_EQ(merged.kernel_total_ns, 15'256'836);
}

TEST(SummaryParts, BytesThatAreNotAPartAreBadInput) {
  const Trace& trace = load_nsys((fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string());
  const std::string bytes = encode_summary_part(summary_part(trace));
  EXPECT_EQ(decode_summary_part("").status().message(), "not a tracedoc summary part");
  EXPECT_EQ(decode_summary_part("{\"json\": 1}").status().message(), "not a tracedoc summary part");
  // Cut anywhere, or with a byte too many, the part is refused, never read past its end.
  for (size_t cut : {size_t{8}, size_t{12}, bytes.size() / 2, bytes.size() - 1}) {
    auto cut_part = decode_summary_part(std::string_view(bytes).substr(0, cut));
    ASSERT_FALSE(cut_part.ok());
    EXPECT_EQ(cut_part.status().code(), ErrorCode::kBadInput);
  }
  EXPECT_FALSE(decode_summary_part(bytes + "x").ok());
  // A length of 2^63 - 1 (the input path's, after the magic and the version) is refused against the
  // bytes left, not allocated.
  std::string huge = bytes;
  for (size_t i = 0; i < 8; ++i) huge[12 + i] = i == 7 ? '\x7f' : '\xff';
  EXPECT_FALSE(decode_summary_part(huge).ok());
}

}  // namespace
}  // namespace tracedoc::testing
