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
  std::printf("  read %.3f s, summary %.3f s more: read + summary = %.2fx read alone (goal <= 1.5x)\n", best_read,
              best_summary, (best_read + best_summary) / best_read);
  std::printf(
      "  diagnose %.3f s more (%zu findings): read + summary + diagnose = %.2fx read + summary (goal <= 1.5x)\n",
      best_diagnose, findings, (best_read + best_summary + best_diagnose) / (best_read + best_summary));
}

}  // namespace

int main(int argc, char** argv) {
  const bench::LargeInputs in = bench::large_inputs(argc, argv, "summary_cost", 3);
  if (in.kineto.empty()) return 2;
  measure(in.kineto_label, in.kineto, in.runs);
  if (!in.nsys.empty()) measure(in.nsys_label, in.nsys, in.runs);
  return 0;
}
