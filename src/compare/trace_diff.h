// Before / after: what changed between two recordings of the same program (`tracedoc diff BASE NEW`).
//
// Compared, for both input formats and mixed ones:
//  * kernels (by demangled name, as cuda_gpu_kern_sum groups them), framework operators (PyTorch
//    traces: by name, as op_sum), annotation ranges (NVTX push/pop and start/end ranges,
//    record_function / user_annotation ranges: by nvtx_sum's Range name, emit_nvtx's per-call ids
//    cut off; ProfilerStep#N ranges are the steps, compared on their own): count, total and median
//    duration before and after;
//  * the steps (diagnose's step windows, every process's pooled): count and median step time;
//  * where the step time went: each GPU's step windows split into compute, exposed communication,
//    copies and memsets, other GPU work and idle time (each part the time no part before it took, so
//    the parts add up to the step time exactly, and so do their deltas); the mean per step of each
//    GPU, averaged over the GPUs. Without steps on both sides, the same split of each GPU's span;
//  * per GPU of a distributed run (both traces with two or more): its step time, computation time and
//    time waited at collectives (analysis/cross_rank.h) before and after, the imbalance and the skew;
//  * the findings of `diagnose`: which appeared, which disappeared, which persisted.
//
// Noise. Two runs of the same program never give the same durations. A kernel, operator, range or
// the step time counts as slower or faster only when (1) the Mann-Whitney U test on its per-instance
// durations rejects "same distribution" (analysis/rank_test.h) at q < alpha after the
// Benjamini-Hochberg adjustment over every item tested in the diff (the step time, one test: p <
// alpha), and (2) its median moved by at least min_change_pct percent. Otherwise its timing counts as unchanged,
// whatever its totals say. Counts are exact, not noisy: more or fewer calls (per step where both sides have steps,
// since runs are cut at different step counts, else per run) by min_change_pct percent or more is a change of its own,
// and the item's verdict when it holds, since it moves the totals most.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "analysis/steps.h"
#include "diagnose/engine.h"
#include "model/trace.h"

namespace tracedoc::compare {

struct DiffOptions {
  double alpha = 0.05;          // significance level of the adjusted p-values (q-values)
  double min_change_pct = 5.0;  // smallest change of a median (or per-step count) that counts
  StepOptions steps;            // step marker, as diagnose / check take it
  bool findings = true;         // run diagnose on both and compare the findings
  diagnose::DiagnoseOptions diagnose;
};

// Usage errors in the options (alpha outside (0, 1), a negative --min-change, a bad diagnose
// configuration), named as the CLI's options.
Status check_options(const DiffOptions& options);

enum class ItemKind : uint8_t { kKernel, kOperator, kRange };
const char* item_kind_name(ItemKind k);  // "kernel", "operator", "range"

enum class Verdict : uint8_t { kUnchanged, kSlower, kFaster, kMoreCalls, kFewerCalls, kAdded, kRemoved };
const char* verdict_name(Verdict v);   // "unchanged", "slower", "faster", "more", "fewer", "added", "removed"
const char* verdict_words(Verdict v);  // for people: "more calls", "fewer calls", else verdict_name
bool is_change(Verdict v);             // anything but unchanged

inline constexpr double kNotTested = std::numeric_limits<double>::quiet_NaN();

// One side's figures of a named item, or of the steps.
struct SideFigures {
  int64_t count = 0;
  int64_t total_ns = 0;
  double median_ns = 0;  // nsys's median (mean of the middle values), 0 when count is 0
  // Over the side's steps per process; NaN without steps on both sides.
  double per_step_ns = kNotTested, count_per_step = kNotTested;
};

struct ItemDiff {
  ItemKind kind = ItemKind::kKernel;
  std::string name;
  SideFigures base, next;
  double p_value = kNotTested;            // Mann-Whitney U, two-sided; NaN when the item is on one side only
  double q_value = kNotTested;            // Benjamini-Hochberg adjusted
  Verdict verdict = Verdict::kUnchanged;  // added / removed, else `calls` when changed, else `timing`
  Verdict timing = Verdict::kUnchanged;   // slower / faster / unchanged: the rank test and the median
  Verdict calls = Verdict::kUnchanged;    // more / fewer / unchanged calls

  int64_t delta_total_ns() const;
  // "slower", "more calls, faster", "added", ...
  std::string verdict_label() const;
  double ratio() const;              // new total / base total; NaN when base total is 0
  double median_change_pct() const;  // NaN when base median is 0
};

// A part of the step time (or of the GPU span without steps).
struct TimePart {
  std::string name;                          // "compute", "communication", "copies", "other", "idle"
  int64_t base_ns = 0, new_ns = 0;           // summed over every GPU's windows
  double base_mean_ns = 0, new_mean_ns = 0;  // per step (or span) and GPU
};

struct StepDiff {
  std::string base_source, new_source;  // "ProfilerStep", "marker", "detected"
  SideFigures base, next;               // count, total and median of the step windows
  double p_value = 1;
  Verdict verdict = Verdict::kUnchanged;  // slower / faster / unchanged
  double median_change_pct() const;
};

enum class FindingStatus : uint8_t { kAppeared, kDisappeared, kPersisted };
const char* finding_status_name(FindingStatus s);  // "appeared", "disappeared", "persisted"

struct FindingChange {
  FindingStatus status = FindingStatus::kPersisted;
  std::string id;
  std::string scope;  // as the newer side says it (the base's for disappeared findings)
  std::string title;  // likewise
  diagnose::Severity base_severity = diagnose::Severity::kInfo, new_severity = diagnose::Severity::kInfo;
  int64_t base_savings_ns = 0, new_savings_ns = 0;  // 0 on the side without the finding
  double base_share = 0, new_share = 0;
};

// One GPU of a distributed run before and after (both traces with two or more GPUs), matched by
// rank (PyTorch) or by the process's place among the processes with GPU work and the device (nsys:
// process ids change from run to run).
struct RankChange {
  std::string gpu;  // as NEW labels it (BASE's when only there)
  bool in_base = false, in_new = false;
  int64_t base_steps = 0, new_steps = 0;                    // its owner's steps
  int64_t base_step_median_ns = 0, new_step_median_ns = 0;  // their median window; 0 (absent) without
  int64_t base_compute_ns = 0, new_compute_ns = 0;          // union of its computation kernels
  int64_t base_collectives = 0, new_collectives = 0;        // its matched collectives
  int64_t base_wait_ns = 0, new_wait_ns = 0;                // waited at them (absent without)
  int64_t base_last = 0, new_last = 0;                      // collectives it started last (likewise)
};

struct RanksDiff {
  std::vector<RankChange> gpus;                       // in NEW's order, then BASE-only ones
  double base_imbalance = 0, new_imbalance = 0;       // longest compute over the median GPU's (analysis/statistics.h)
  int64_t base_skew_p50_ns = 0, new_skew_p50_ns = 0;  // median collective skew
  int64_t base_collectives = 0, new_collectives = 0;  // matched
};

struct SideInfo {
  std::string input, format;
  int64_t kernels = 0, operators = 0, ranges = 0, gpus = 0;
};

struct TraceDiff {
  SideInfo base, next;
  DiffOptions options;
  std::optional<StepDiff> steps;                       // both sides have steps
  std::string steps_note;                              // why not, when not: "only BASE has steps", ...
  std::string time_basis;                              // "step" or "span": what the time parts split
  std::vector<TimePart> parts;                         // compute, communication, copies, other, idle
  double base_time_mean_ns = 0, new_time_mean_ns = 0;  // the parts' sums
  std::optional<RanksDiff> ranks;                      // both traces have two or more GPUs
  std::vector<ItemDiff> items;     // kernels, then operators, then ranges; each by |delta| descending
  std::vector<std::string> notes;  // what was not compared, and why
  bool findings_compared = false;
  std::vector<FindingChange> findings;  // appeared, disappeared, persisted; each by savings
  int64_t tested = 0;                   // items that got a p-value (the Benjamini-Hochberg m)

  size_t count(ItemKind kind, Verdict verdict) const;
};

TraceDiff diff_traces(const Trace& base, const Trace& next, const DiffOptions& options = {});

// The regression `diff --fail-on-regression PCT` gates on: the median step time when both traces
// have steps (and only a significant change counts), else the GPUs' mean busy time (every part but
// idle), which has no per-instance sample to test.
struct Regression {
  std::string what;  // "median step time", "GPU busy time (no steps to compare)"
  double change_pct = 0;
  bool significant = true;
  bool exceeds(double allowed_pct) const { return significant && change_pct > allowed_pct; }
};
Regression regression_of(const TraceDiff& diff);

}  // namespace tracedoc::compare
