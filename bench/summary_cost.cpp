// Benchmark: what a full `tracedoc summary` costs on top of reading the trace, and what `tracedoc
// diagnose` costs on top of that. Reads a large trace (a real PyTorch trace tiled to ~1 GB, and a
// real nsys export tiled 100x) in this process, then computes the summary and the diagnosis, and
// prints the times and their ratios. Goals: read + summary <= 1.5x read alone; the diagnosis adds at
// most 50% to read + summary.
//
//   summary_cost [--input TRACE.json(.gz)] [--target-mb MB] [--nsys-source FILE.sqlite] [--runs R]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/summary.h"
#include "bench_process.h"
#include "diagnose/engine.h"
#include "ingest/open_trace.h"

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best of `runs` for reading alone, and for reading plus summarizing.
void measure(const std::string& label, const fs::path& path, int runs) {
  double best_read = 1e30, best_summary = 1e30, best_diagnose = 1e30;
  size_t devices = 0, findings = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto trace = tracedoc::open_trace(path.string(), {});
    const double read = seconds_since(t0);
    if (!trace.ok()) {
      std::fprintf(stderr, "summary_cost: %s\n", trace.status().message().c_str());
      std::exit(2);
    }
    t0 = std::chrono::steady_clock::now();
    const tracedoc::TraceSummary s = tracedoc::summarize(*trace);
    const double summary = seconds_since(t0);
    devices = s.devices.size();
    t0 = std::chrono::steady_clock::now();
    const tracedoc::diagnose::Diagnosis d = tracedoc::diagnose::diagnose(*trace, {});
    const double diagnose = seconds_since(t0);
    findings = d.findings.size();
    best_read = std::min(best_read, read);
    best_summary = std::min(best_summary, summary);
    best_diagnose = std::min(best_diagnose, diagnose);
  }
  const double mb = static_cast<double>(fs::is_directory(path) ? 0 : fs::file_size(path)) / 1e6;
  std::printf("%s: %.0f MB, %zu GPU(s)\n", label.c_str(), mb, devices);
  std::printf("  read %.3f s, summary %.3f s more: read + summary = %.2fx read alone (goal <= 1.5x)\n", best_read, best_summary,
              (best_read + best_summary) / best_read);
  std::printf("  diagnose %.3f s more (%zu findings): read + summary + diagnose = %.2fx read + summary (goal <= 1.5x)\n",
              best_diagnose, findings, (best_read + best_summary + best_diagnose) / (best_read + best_summary));
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path bench_dir = fs::canonical("/proc/self/exe").parent_path();
  const char* shared_env = std::getenv("TRACEDOC_SHARED");
  const fs::path shared = shared_env ? fs::path(shared_env) : fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  fs::path input = shared / "traces" / "kineto" / "TraceLens" / "tests" / "traces" / "h100" /
                   "google_owlv2-large-patch14-ensemble__1016001.json.gz";
  fs::path nsys_source = shared / "traces" / "nsys" / "nsys-ai" / "mfu_2gpu_before.sqlite";
  double target_mb = 1000;
  int runs = 3;
  fs::path dir = fs::temp_directory_path() / "tracedoc-kineto-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--input") input = argv[i + 1];
    else if (a == "--target-mb") target_mb = std::atof(argv[i + 1]);
    else if (a == "--nsys-source") nsys_source = argv[i + 1];
    else if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--workdir") dir = argv[i + 1];
    else {
      std::fprintf(stderr, "summary_cost: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!fs::exists(input)) {
    std::fprintf(stderr, "summary_cost: input trace %s not found (pass --input or set TRACEDOC_SHARED)\n", input.c_str());
    return 2;
  }
  fs::create_directories(dir);
  const fs::path tiler = bench_dir / "tile_kineto_trace";
  bench::run({tiler.string(), "--info", input.string()}, (dir / "info.txt").string());
  auto info = bench::key_values(bench::slurp(dir / "info.txt"));
  const double in_mb = std::atof(info["bytes"].c_str()) / 1e6;
  const int copies = std::max(1, static_cast<int>(std::lround(target_mb / std::max(in_mb, 1.0))));
  const bench::Tiled big = bench::tile(tiler, input, dir, copies);
  measure("PyTorch trace " + input.filename().string() + " tiled " + std::to_string(copies) + "x", big.path, runs);

  if (fs::exists(nsys_source)) {
    const fs::path tiled = dir / "summary_cost_nsys.sqlite";
    if (!fs::exists(tiled)) {
      auto r = bench::run({(bench_dir / "tile_nsys_export").string(), nsys_source.string(), tiled.string(), "100"},
                          (dir / "rows.txt").string());
      if (r.exit_code != 0) {
        std::fprintf(stderr, "summary_cost: tiling %s failed\n", nsys_source.c_str());
        return 2;
      }
    }
    measure("nsys export " + nsys_source.filename().string() + " tiled 100x", tiled, runs);
  }
  return 0;
}
