// Benchmark: reading what nsys samples besides the trace, against SQLite scanning the same tables in
// the same run. Two inputs, each made by tiling a real export (tile_nsys_export: time shifted, ids
// renumbered): CPU samples with call stacks (ai-profiler/baseline_nvtx, 16,150 samples, to about a
// million) and GPU metrics (ai-profiler/secondOptimization, 263,362 GPU_METRICS rows, to about ten
// million). For each: tracedoc's read of those tables into its model (samples with interned stacks;
// metric samples with interned names) and then its report (cpu_sample_sum; gpu_metrics_sum), against
// sqlite3 stepping through every row of the same tables (`SELECT ... FROM COMPOSITE_EVENTS`,
// `SAMPLING_CALLCHAINS`; `GPU_METRICS`). Prints rows/s, MB/s and the ratios.
//
//   samples_read [--shared DIR] [--sample-rows N] [--metric-rows N] [--runs R]
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "analysis/cpu_samples.h"
#include "analysis/gpu_metrics.h"
#include "analysis/report.h"
#include "analysis/result.h"
#include "bench_process.h"
#include "ingest/nsys_sqlite_reader.h"

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Rows of `table`, stepped by SQLite with the columns tracedoc reads; returns the count.
int64_t sqlite_scan(const fs::path& file, const std::string& query) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(("file:" + file.string() + "?mode=ro&immutable=1").c_str(), &db,
                  SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  sqlite3_stmt* st = nullptr;
  int64_t rows = 0, sum = 0;
  if (sqlite3_prepare_v2(db, query.c_str(), -1, &st, nullptr) == SQLITE_OK) {
    const int columns = sqlite3_column_count(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
      ++rows;
      for (int c = 0; c < columns; ++c) sum += sqlite3_column_int64(st, c);
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (sum == 42) std::fputc(' ', stderr);  // keeps the reads
  return rows;
}

// A sink that only counts (the report's cost without formatting).
struct CountingSink : tracedoc::RowSink {
  int64_t rows = 0;
  void begin(const std::vector<tracedoc::ColumnSpec>&) override {}
  void row(std::span<const tracedoc::Cell>) override { ++rows; }
  void end() override {}
};

struct Case {
  const char* what;
  fs::path source;
  int64_t source_rows;
  int64_t target_rows;
  std::string tables;  // tile only these
  uint32_t load;
  std::vector<std::string> scans;  // what SQLite steps through
  tracedoc::Status (*report)(const tracedoc::Trace&, const tracedoc::ReportArgs&, tracedoc::RowSink&);
};

}  // namespace

int main(int argc, char** argv) {
  const fs::path bench_dir = fs::canonical("/proc/self/exe").parent_path();
  fs::path shared = fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  int64_t sample_rows = 1000000, metric_rows = 10000000;
  int runs = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--shared") shared = argv[i + 1];
    if (a == "--sample-rows") sample_rows = std::atoll(argv[i + 1]);
    if (a == "--metric-rows") metric_rows = std::atoll(argv[i + 1]);
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
  }
  const fs::path nsys = shared / "traces" / "nsys" / "ai-profiler";
  if (!fs::exists(nsys)) {
    std::fprintf(stderr, "samples_read: %s is absent: nothing to tile\n", nsys.c_str());
    return 2;
  }
  const std::vector<Case> cases = {
      {"CPU samples with call stacks",
       nsys / "baseline_nvtx.sqlite",
       16150,
       sample_rows,
       "COMPOSITE_EVENTS,SAMPLING_CALLCHAINS",
       tracedoc::kLoadCpuSched,
       {"SELECT id, start, globalTid, threadState FROM COMPOSITE_EVENTS",
        "SELECT id, symbol, module, kernelMode, unresolved, stackDepth FROM SAMPLING_CALLCHAINS"},
       tracedoc::cpu_sample_sum},
      {"GPU metrics",
       nsys / "secondOptimization_gpu-metrics-3.0-4.5s.sqlite",
       263362,
       metric_rows,
       "GPU_METRICS",
       tracedoc::kLoadGpuMetrics | tracedoc::kLoadKernels | tracedoc::kLoadMemcpy | tracedoc::kLoadMemset,
       {"SELECT timestamp, typeId, metricId, value FROM GPU_METRICS"},
       tracedoc::gpu_metrics_sum},
  };
  for (const Case& c : cases) {
    const int64_t tiles = std::max<int64_t>(1, (c.target_rows + c.source_rows - 1) / c.source_rows);
    const fs::path tiled =
        fs::temp_directory_path() / ("tracedoc-samples-read-" + std::to_string(::getpid()) + ".sqlite");
    const auto made = bench::run(
        {(bench_dir / "tile_nsys_export").string(), c.source.string(), tiled.string(), std::to_string(tiles), c.tables},
        "/dev/null");
    if (made.exit_code != 0) {
      std::fprintf(stderr, "samples_read: tiling %s failed\n", c.source.c_str());
      return 1;
    }
    const double mb = static_cast<double>(fs::file_size(tiled)) / 1e6;
    double best_read = 1e30, best_report = 1e30, best_scan = 1e30;
    int64_t rows = 0, scanned = 0, report_rows = 0;
    for (int r = 0; r < runs; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      tracedoc::NsysReadOptions options;
      options.tables = c.load;
      auto trace = tracedoc::read_nsys_sqlite(tiled.string(), options);
      const double read = seconds_since(t0);
      if (!trace.ok()) {
        std::fprintf(stderr, "samples_read: %s\n", std::string(trace.status().message()).c_str());
        return 1;
      }
      rows = static_cast<int64_t>(c.load & tracedoc::kLoadGpuMetrics ? trace->gpu_metrics.size()
                                                                     : trace->cpu_samples.size());
      t0 = std::chrono::steady_clock::now();
      CountingSink sink;
      (void)c.report(*trace, tracedoc::ReportArgs{}, sink);
      const double report = seconds_since(t0);
      report_rows = sink.rows;
      t0 = std::chrono::steady_clock::now();
      scanned = 0;
      for (const std::string& q : c.scans) scanned += sqlite_scan(tiled, q);
      const double scan = seconds_since(t0);
      best_read = std::min(best_read, read), best_report = std::min(best_report, report);
      best_scan = std::min(best_scan, scan);
    }
    fs::remove(tiled);
    std::printf("%s: %lld tiles of %s, %.0f MB, %lld rows read (%lld SQLite rows)\n", c.what,
                static_cast<long long>(tiles), c.source.filename().c_str(), mb, static_cast<long long>(rows),
                static_cast<long long>(scanned));
    std::printf("  tracedoc read       %8.3f s  %12.0f rows/s  %8.1f MB/s\n", best_read,
                static_cast<double>(scanned) / best_read, mb / best_read);
    std::printf("  tracedoc report     %8.3f s  (%lld rows)\n", best_report, static_cast<long long>(report_rows));
    std::printf("  sqlite3 scan        %8.3f s  %12.0f rows/s  %8.1f MB/s\n", best_scan,
                static_cast<double>(scanned) / best_scan, mb / best_scan);
    std::printf("  read / scan: %.2fx the time; read + report / scan: %.2fx\n", best_read / best_scan,
                (best_read + best_report) / best_scan);
  }
  return 0;
}
