// GPU hardware metrics (nsys --gpu-metrics-devices: GPU_METRICS + TARGET_INFO_GPU_METRICS) on the
// real A100 export of ai-profiler: the samples as read, gpu_metrics_sum's time-weighted figures
// against a direct SQL over GPU_METRICS and a brute-force walk over the kernels, and the
// sm_underused rule.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analysis/gpu_metrics.h"
#include "analysis/statistics.h"
#include "ingest/nsys_sqlite_reader.h"
#include "test_support.h"

namespace tracedoc::testing {
namespace {

namespace fs = std::filesystem;

std::string metrics_export() {
  return (nsys_traces_dir() / "ai-profiler/secondOptimization_gpu-metrics-3.0-4.5s.sqlite").string();
}

// Rows of a query, every column as int64 (text columns as their row index in `texts`).
struct Sql {
  sqlite3* db = nullptr;
  explicit Sql(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(("file:" + path + "?mode=ro&immutable=1").c_str(), &db,
                              SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr),
              SQLITE_OK);
  }
  ~Sql() { sqlite3_close(db); }
  // The name TARGET_INFO_GPU_METRICS gives a metric id.
  std::string text_of(int metric_id) {
    sqlite3_stmt* stmt = nullptr;
    const std::string q =
        "SELECT metricName FROM TARGET_INFO_GPU_METRICS WHERE metricId = " + std::to_string(metric_id);
    EXPECT_EQ(sqlite3_prepare_v2(db, q.c_str(), -1, &stmt, nullptr), SQLITE_OK);
    std::string out;
    if (sqlite3_step(stmt) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return out;
  }
  std::vector<std::vector<int64_t>> ints(const std::string& query) {
    std::vector<std::vector<int64_t>> out;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, query.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<int64_t> row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) row.push_back(sqlite3_column_int64(stmt, c));
      out.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return out;
  }
};

// One metric's samples, straight from GPU_METRICS: (timestamp, value) by time, and its period (the
// median gap between samples, computed here on its own).
struct Samples {
  std::vector<std::vector<int64_t>> rows;
  int64_t period = 0;
  // The stretch sample i describes: to the next sample, at most one period.
  std::pair<int64_t, int64_t> at(size_t i) const {
    const int64_t t = rows[i][0];
    int64_t end = t + period;
    if (i + 1 < rows.size()) end = std::min(end, rows[i + 1][0]);
    return {t, end};
  }
};

Samples samples_of(Sql& sql, int metric_id) {
  Samples s;
  s.rows = sql.ints("SELECT timestamp, value FROM GPU_METRICS WHERE metricId = " + std::to_string(metric_id) +
                    " ORDER BY timestamp");
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < s.rows.size(); ++i) gaps.push_back(s.rows[i][0] - s.rows[i - 1][0]);
  std::sort(gaps.begin(), gaps.end());
  const size_t n = gaps.size();
  s.period = n % 2 ? gaps[n / 2] : (gaps[n / 2 - 1] + gaps[n / 2] + 1) / 2;
  return s;
}

TRACEDOC_TEST_LABELS(GpuMetrics, corpus);

TEST(GpuMetrics, SamplesAreReadAsNsysStoresThem) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const Trace& t = load_nsys(metrics_export());
  // 11,971 samples of 22 metrics of the A100 (GPU 0), 3.0 to 4.5 s into the run.
  ASSERT_EQ(t.gpu_metrics.size(), 263362u);
  EXPECT_EQ(t.warnings.unnamed_metrics, 0);
  const std::vector<MetricSeries> series = gpu_metric_series(t);
  ASSERT_EQ(series.size(), 22u);
  EXPECT_EQ(t.str(series.front().metric), "PCIe TX Throughput");
  EXPECT_EQ(t.str(series.back().metric), "DRAM Read Throughput");
  for (const MetricSeries& s : series) {
    EXPECT_EQ(s.device, 0);
    EXPECT_EQ(s.size(), 11971u);
    EXPECT_EQ(s.period, 125305);  // about 8 kHz
  }
  int kinds = 0;
  for (const MetricSeries& s : series) kinds += s.kind != MetricKind::kOther;
  EXPECT_EQ(kinds, 9);  // SM active and issue, tensor active, warps, unallocated warps, DRAM and PCIe both ways
  EXPECT_EQ(metric_unit("GPC Clock Frequency"), "Hz");
  EXPECT_EQ(metric_unit("SM Active"), "%");
  EXPECT_EQ(metric_unit("SMs Active [Throughput %]"), "%");
  EXPECT_EQ(metric_unit("GPC Clock Frequency [MHz]"), "MHz");
  EXPECT_EQ(metric_kind("SMs Active [Throughput %]"), MetricKind::kSmActive);
  EXPECT_EQ(metric_kind("Compute Warps in Flight [Throughput %]"), MetricKind::kWarpsInFlight);
  EXPECT_EQ(metric_kind("DRAM Read Bandwidth [Throughput %]"), MetricKind::kDramRead);

  // In SQL, with the metric's name.
  const CliRun sql = tracedoc({"sql", metrics_export(),
                               "SELECT metric, count(*) AS n, sum(value) AS s FROM gpu_metrics WHERE metric = 'SM "
                               "Active' GROUP BY 1",
                               "-f", "csv"});
  ASSERT_EQ(sql.exit_code, 0) << sql.err;
  Sql db(metrics_export());
  const auto expected = db.ints("SELECT count(*), sum(value) FROM GPU_METRICS WHERE metricId = 12");
  EXPECT_EQ(sql.out, "metric,n,s\nSM Active,11971," + std::to_string(expected[0][1]) + "\n");
}

TEST(GpuMetrics, TimeWeightedFiguresEqualADirectComputation) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const Trace& t = load_nsys(metrics_export());
  const std::vector<MetricSeries> series = gpu_metric_series(t);
  Sql db(metrics_export());
  // Kernel-busy time of GPU 0, merged here by a sweep of its own.
  std::vector<std::vector<int64_t>> kernels =
      db.ints("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start");
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (const auto& k : kernels) {
    if (!busy.empty() && k[0] <= busy.back().second) {
      busy.back().second = std::max(busy.back().second, k[1]);
    } else {
      busy.push_back({k[0], k[1]});
    }
  }
  const auto metric_ids = db.ints("SELECT metricId FROM TARGET_INFO_GPU_METRICS ORDER BY metricId");
  ASSERT_EQ(metric_ids.size(), 22u);
  for (const auto& r : metric_ids) {
    const int metric = static_cast<int>(r[0]);
    SCOPED_TRACE(metric);
    const Samples s = samples_of(db, metric);
    // Over every sample, and over the kernels' time.
    long double sum = 0, ns = 0, busy_sum = 0, busy_ns = 0;
    int64_t max = 0;
    size_t b = 0;
    for (size_t i = 0; i < s.rows.size(); ++i) {
      const auto [lo, hi] = s.at(i);
      const int64_t v = s.rows[i][1];
      sum += static_cast<long double>(v) * (hi - lo);
      ns += hi - lo;
      max = std::max(max, v);
      while (b < busy.size() && busy[b].second <= lo) ++b;
      for (size_t j = b; j < busy.size() && busy[j].first < hi; ++j) {
        const int64_t overlap = std::min(hi, busy[j].second) - std::max(lo, busy[j].first);
        if (overlap > 0) busy_sum += static_cast<long double>(v) * overlap, busy_ns += overlap;
      }
    }
    const auto ours_it = std::find_if(series.begin(), series.end(),
                                      [&](const MetricSeries& x) { return t.str(x.metric) == db.text_of(metric); });
    ASSERT_NE(ours_it, series.end());
    const MetricSeries& ours = *ours_it;
    ASSERT_EQ(ours.size(), s.rows.size());
    ASSERT_EQ(ours.period, s.period);
    MetricLevels all, in_kernels;
    all.add_series(ours);
    std::vector<Interval> busy_intervals;
    for (const auto& [lo, hi] : busy) busy_intervals.push_back({lo, hi});
    in_kernels.add_series(ours, IntervalSet::busy_union(busy_intervals));
    EXPECT_EQ(all.covered(), static_cast<int64_t>(ns));
    EXPECT_NEAR(all.mean(), static_cast<double>(sum / ns), 1e-9);
    EXPECT_EQ(all.max(), max);
    EXPECT_EQ(in_kernels.covered(), static_cast<int64_t>(busy_ns));
    if (busy_ns > 0) {
      EXPECT_NEAR(in_kernels.mean(), static_cast<double>(busy_sum / busy_ns), 1e-9);
    }
  }

  // The report: SM Active while kernels ran, 82.25% (median 95, p90 100) over 74.0 ms of kernels,
  // against 4.18% over the whole 1.5 s; the PCIe link receives at 50% of its peak during copies.
  const CliRun run =
      tracedoc({"stats", "-r", "gpu_metrics_sum:metric=^(SM Active|PCIe RX)", metrics_export(), "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_EQ(rows.size(), 11u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"GPU", "Metric", "Unit", "Window", "Time (ns)", "Mean", "Median", "P90", "Max"}));
  EXPECT_EQ(rows[4],
            (std::vector<std::string>{"0", "PCIe RX Throughput", "%", "copies", "2098259", "50.1", "50", "69", "69"}));
  EXPECT_EQ(rows[6], (std::vector<std::string>{"0", "SM Active", "%", "all", "1499907140", "4.18", "0", "0", "100"}));
  EXPECT_EQ(rows[8],
            (std::vector<std::string>{"0", "SM Active", "%", "kernels", "73955023", "82.25", "95", "100", "100"}));
}

TEST(GpuMetrics, PerKernelAndPerStep) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const CliRun run = tracedoc({"stats", "-r", "gpu_metrics_sum:per=kernel:metric=^SM Active", metrics_export(),
                               "--filter-name", "addcmul", "-f", "csv"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = parse_csv(run.out);
  ASSERT_EQ(rows.size(), 2u) << run.out;
  // Adam's addcmul_ on each parameter: one block of 128 threads, 944 launches, SM Active 11.8%
  // while they run (the samples' periods reach into the kernels around them).
  EXPECT_EQ(rows[0], (std::vector<std::string>{"Kernel", "GPU", "Metric", "Unit", "Instances", "Time (ns)", "Mean",
                                               "Median", "P90", "Max"}));
  EXPECT_NE(rows[1][0].find("addcmul_cuda_kernel"), std::string::npos);
  EXPECT_EQ(std::vector<std::string>(rows[1].begin() + 1, rows[1].end()),
            (std::vector<std::string>{"0", "SM Active", "%", "944", "952895", "11.8", "5", "35", "51"}))
      << run.out;

  const CliRun steps =
      tracedoc({"stats", "-r", "gpu_metrics_sum:per=step:metric=^SM Active", metrics_export(), "-f", "csv"});
  ASSERT_EQ(steps.exit_code, 0) << steps.err;
  const auto step_rows = parse_csv(steps.out);
  // The detected steps that overlap the sampled 1.5 s.
  ASSERT_GT(step_rows.size(), 5u);
  EXPECT_EQ(step_rows[0], (std::vector<std::string>{"PID", "Step", "GPU", "Metric", "Unit", "Time (ns)", "Mean",
                                                    "Median", "P90", "Max"}));
  int64_t covered = 0;
  for (size_t i = 1; i < step_rows.size(); ++i) covered += std::stoll(step_rows[i][5]);
  EXPECT_LE(covered, 1499907140);
}

TEST(GpuMetrics, TensorActiveConfirmsTensorCoresUnused) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const fs::path config = fs::temp_directory_path() / ("tracedoc-tc-" + std::to_string(::getpid()) + ".toml");
  const auto diagnose = [&](const std::string& rule_config) {
    {
      std::ofstream out(config);
      out << "[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.tensor_cores_unused]\nmin_gemm_share = "
             "0\nmax_tc_share = 1\n"
          << rule_config;
    }
    return tracedoc({"diagnose", "--rules", "tensor_cores_unused", "--config", config.string(), metrics_export()});
  };
  // The FP32 SGEMMs (ampere_sgemm_*: 1.9% of the matrix time) ran while the GPU sampled Tensor Active
  // at 4.5%: under the 10% that would say the tensor cores ran after all, so the finding stands,
  // with high confidence.
  const CliRun run = diagnose("");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("runs on kernels without them; the GPU measured Tensor Active 4.5% while they ran"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("confidence high"), std::string::npos) << run.out;
  // A lower bar: the measurement refutes it.
  const CliRun refuted = diagnose("max_tensor_active = 4\n");
  EXPECT_NE(refuted.out.find("0 findings"), std::string::npos) << refuted.out;
  fs::remove(config);
}

TEST(GpuMetrics, WarpsInFlightConfirmKernelConfig) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const fs::path config = fs::temp_directory_path() / ("tracedoc-kc-" + std::to_string(::getpid()) + ".toml");
  const auto diagnose = [&](const std::string& rule_config) {
    {
      std::ofstream out(config);
      out << "[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.kernel_config]\nmin_kernel_share = 0\n"
          << rule_config;
    }
    return tracedoc({"diagnose", "--rules", "kernel_config", "--config", config.string(), metrics_export()});
  };
  // The NLL loss kernels launch blocks of one warp; the GPU sampled 2% warps in flight while they
  // ran: confirmed, medium confidence.
  const CliRun run = diagnose("");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("69x  void at::native::<unnamed>::nll_loss_forward_reduce_cuda_kernel_2d"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("32 threads per block: too few to fill an SM; warps in flight 2% as the GPU sampled them"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("confidence medium"), std::string::npos) << run.out;
  // Were 1% enough to fill the SMs, the measurement would refute the small blocks.
  const CliRun refuted = diagnose("max_warps_in_flight = 1\n");
  EXPECT_NE(refuted.out.find("0 findings"), std::string::npos) << refuted.out;
  fs::remove(config);
}

TEST(GpuMetrics, TheSummarySaysHowBusyTheHardwareWas) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const CliRun run = tracedoc({"summary", metrics_export()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("GPU metrics (sampled by the GPU)\n"
                         "  GPU 0: 1.50 s sampled at 8.0 kHz\n"
                         "    while kernels ran (74.0 ms): SM active 82.3%, SM issue 36.1%, tensor active 13.5%, warps "
                         "in flight 51.2%, DRAM read 23.4%, DRAM write 18.8%; 10.1 ms of it under 50% SM active\n"
                         "    while copies ran (2.10 ms): PCIe RX 50.1%, PCIe TX 5.8% of the link's peak\n"),
            std::string::npos)
      << run.out;
  const CliRun json = tracedoc({"summary", "-f", "json", metrics_export()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"sm_active_pct\": 82.2543,"), std::string::npos);
  EXPECT_NE(json.out.find("\"low_sm_active_kernel_ns\": 10133866"), std::string::npos);
  // Without metrics, no section.
  const std::string none = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun plain = tracedoc({"summary", none});
  EXPECT_EQ(plain.out.find("GPU metrics"), std::string::npos);
}

TEST(GpuMetrics, BadArgumentsAndTracesWithoutMetrics) {
  const std::string none = (fs::path(TRACEDOC_SOURCE_DIR) / "examples/toy_training.sqlite").string();
  const CliRun skipped = tracedoc({"stats", "-r", "gpu_metrics_sum", none, "-f", "csv"});
  EXPECT_EQ(skipped.exit_code, 0);
  EXPECT_NE(skipped.err.find("does not contain GPU metrics"), std::string::npos) << skipped.err;
  const CliRun per = tracedoc({"stats", "-r", "gpu_metrics_sum:per=rank", none, "-f", "csv"});
  EXPECT_EQ(per.exit_code, 2);
  EXPECT_NE(per.err.find("gpu_metrics_sum: per must be step or kernel, got 'rank'"), std::string::npos) << per.err;
  const CliRun regex = tracedoc({"stats", "-r", "gpu_metrics_sum:metric=(", none, "-f", "csv"});
  EXPECT_EQ(regex.exit_code, 2);
}

TEST(GpuMetrics, SamplesOfAnUnnamedMetricAreCountedAndDropped) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const fs::path copy = fs::temp_directory_path() / ("tracedoc-gpu-metrics-" + std::to_string(::getpid()) + ".sqlite");
  fs::copy_file(metrics_export(), copy, fs::copy_options::overwrite_existing);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DELETE FROM TARGET_INFO_GPU_METRICS WHERE metricId = 21", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto trace = read_nsys_sqlite(copy.string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->warnings.unnamed_metrics, 11971);
  EXPECT_EQ(trace->gpu_metrics.size(), 263362u - 11971u);
  EXPECT_EQ(gpu_metric_series(*trace).size(), 21u);
  const CliRun run = tracedoc({"stats", "-r", "gpu_metrics_sum:metric=DRAM", copy.string(), "-f", "csv"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.err.find("11971 GPU metric samples of a metric TARGET_INFO_GPU_METRICS does not name (dropped)"),
            std::string::npos)
      << run.err;
  fs::remove(copy);
}

TEST(GpuMetrics, SmUnderusedNamesTheOneBlockOptimizerKernels) {
  if (nsys_traces_dir().empty()) GTEST_SKIP() << "../shared is absent: the real exports are skipped";
  const fs::path config = fs::temp_directory_path() / ("tracedoc-sm-" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream out(config);
    out << "[diagnose]\nmin_savings_share = 0\nmin_savings_ns = 0\n[rules.sm_underused]\nmin_share = 0\n";
  }
  const CliRun run =
      tracedoc({"diagnose", "--rules", "sm_underused", "--config", config.string(), metrics_export(), "-f", "json"});
  fs::remove(config);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // 8.33 ms of the 74.0 ms of kernels ran under 50% SM Active: Adam's per-parameter elementwise
  // kernels, one block of 128 threads each on 108 SMs.
  EXPECT_NE(run.out.find("\"id\": \"sm_underused\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"low_sm_active_kernel_ns\": 8334908"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\"sm_active_pct\": 82.25"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("SM active 12%, warps in flight 7%; 1 blocks of 128 threads"), std::string::npos) << run.out;
  // With the default thresholds, 6.8 ms of savings in a 9 s run is no finding.
  const CliRun quiet = tracedoc({"diagnose", "--rules", "sm_underused", metrics_export()});
  EXPECT_NE(quiet.out.find("0 findings"), std::string::npos) << quiet.out;
}

}  // namespace
}  // namespace tracedoc::testing
