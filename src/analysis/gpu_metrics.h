// GPU hardware metrics (nsys `--gpu-metrics-devices`: GPU_METRICS) as time series, and what they
// say about the timeline's own figures: how busy the SMs, the tensor cores, DRAM and the PCIe link
// really were, as the hardware counted it, not as the kernels' durations suggest.
//
// A sample describes the sampling period that starts at its time ("the timeline [t, t + 1 s /
// frequency] shows the value sampled at t", nsys's own recipes): [t, t + period), where the period
// is the series' median distance between consecutive samples (the collection frequency), cut short
// where the next sample comes sooner. A gap in the samples stays a gap: no value is made up for it.
// Figures over a window are time-weighted: each sample counts for the part of its period inside
// the window.
//
//   gpu_metrics_sum  per GPU, metric and window: Time (the sampled time in the window), Mean,
//                    Median, P90 and Max (time-weighted, statistics.h's weighted_quantile).
//                    Windows: `all` (every sample), `steps` (the step windows of the processes using
//                    the GPU, analysis/steps.h), `kernels` (time with a kernel running on the GPU),
//                    `copies` (time with a copy running and no kernel: the PCIe link's own figures)
//                    and `idle` (neither).
//                    `:per=step`: one row per step, GPU and metric (the steps' GPU windows).
//                    `:per=kernel`: one row per kernel name, GPU and metric, over the samples inside
//                    that kernel's executions; kernels by total time, --filter-name on their names.
//                    `:metric=REGEX` keeps the metrics whose name it finds; `marker=NAME`, `detect`
//                    choose the steps as for step_sum.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/report.h"
#include "model/trace.h"

namespace tracedoc {

// What a metric measures, whatever the GPU generation and nsys version call it.
enum class MetricKind : uint8_t {
  kSmActive,          // "SM Active", "SMs Active [Throughput %]"
  kSmIssue,           // "SM Issue", "SM Issue [Throughput %]"
  kTensorActive,      // "Tensor Active", "Tensor Active [Throughput %]"
  kWarpsInFlight,     // "Compute Warps In Flight", "Compute Warps in Flight [Throughput %]"
  kUnallocatedWarps,  // "Unallocated Warps in Active SMs"
  kDramRead,          // "DRAM Read Throughput", "DRAM Read Bandwidth [Throughput %]"
  kDramWrite,
  kPcieRx,  // "PCIe RX Throughput"
  kPcieTx,
  kOther,
};
MetricKind metric_kind(std::string_view name);

// One metric of one GPU, samples by time.
struct MetricSeries {
  int32_t device = 0;
  StrId metric = kNoStr;
  MetricKind kind = MetricKind::kOther;
  TimeNs period = 0;  // the sampling period: the median distance between consecutive samples
  std::vector<TimeNs> time;
  std::vector<int64_t> value;

  size_t size() const { return time.size(); }
  // The stretch sample i describes.
  Interval period_of(size_t i) const {
    const TimeNs end = time[i] + period;
    return {time[i], i + 1 < time.size() && time[i + 1] < end ? time[i + 1] : end};
  }
  // The first sample whose period may reach past `t`.
  size_t first_after(TimeNs t) const;
};

// Every sampled (GPU, metric), by GPU, then in the order nsys lists the metrics; samples without
// a value are left out.
std::vector<MetricSeries> gpu_metric_series(const Trace& trace);

// The unit of a metric's values: the bracketed suffix of newer names ("Throughput %" reads "%"),
// "Hz" for the older names' clock frequencies, else "%" (percent of peak).
std::string metric_unit(std::string_view name);

// Time-weighted levels: values each held for some nanoseconds.
class MetricLevels {
 public:
  void add(int64_t value, int64_t ns) {
    if (ns > 0) levels_.emplace_back(value, ns);
  }
  // Every sample of `series`, each for its period.
  void add_series(const MetricSeries& series);
  // The samples of `series` inside `within`, each for the part of its period inside it.
  void add_series(const MetricSeries& series, Interval within);
  void add_series(const MetricSeries& series, const IntervalSet& within);

  int64_t covered() const;  // ns
  double mean() const;      // 0 when nothing is covered
  int64_t quantile(double fraction);
  int64_t max() const;
  int64_t covered_below(int64_t value) const;  // ns at levels under `value`
  bool empty() const { return levels_.empty(); }

 private:
  std::vector<std::pair<int64_t, int64_t>> levels_;  // (value, ns)
};

// The time-weighted mean of one kind of metric of `device` within `within`; -1 when the GPU has
// no such metric or no sample falls inside.
double metric_mean_within(const std::vector<MetricSeries>& series, int32_t device, MetricKind kind,
                          const IntervalSet& within);

// What the samples add to a summary, per sampled GPU: how busy the hardware was while kernels ran
// (SM Active, SM Issue, Tensor Active, warps in flight, DRAM read and write) and the PCIe link
// during copies, as time-weighted means in % of peak (NaN where the GPU has no such metric), and
// the kernel time sampled under 50% SM Active (busy but underused).
struct GpuMetricsDevice {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  int32_t device = 0;
  int64_t samples = 0, period_ns = 0;
  int64_t sampled_ns = 0, kernel_ns = 0, copy_ns = 0;  // the samples' time: all, with kernels, with copies
  double sm_active = kNone, sm_issue = kNone, tensor_active = kNone, warps_in_flight = kNone;
  double dram_read = kNone, dram_write = kNone;  // while kernels ran
  double pcie_rx = kNone, pcie_tx = kNone;       // while copies ran
  int64_t low_sm_active_ns = 0;
};
std::vector<GpuMetricsDevice> gpu_metrics_by_device(const Trace& trace);

Status gpu_metrics_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
