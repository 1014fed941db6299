// Benchmark: reading on one thread against reading on every core this process may use (the task
// pool of common/task_pool.h), in one run, on the two large inputs of the other benchmarks: a real
// nsys export tiled 100x (241 MB) and a real PyTorch trace tiled to ~1 GB. Runs alternate between
// the two thread counts (5 each by default) and the medians are compared; the traces read must be
// the same (row counts checked). Goal on a 2-core machine: 1.7x for both.
//
//   read_threads [--input TRACE.json(.gz)] [--target-mb MB] [--nsys-source FILE.sqlite] [--runs R]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "analysis/statistics.h"
#include "bench_process.h"
#include "common/task_pool.h"
#include "ingest/open_trace.h"

namespace fs = std::filesystem;

namespace {

// Seconds to read `path` with `threads` threads, and the rows read (to check both counts read the same).
std::pair<double, size_t> read_once(const fs::path& path, int threads) {
  tracedoc::set_thread_count(threads);
  const auto t0 = std::chrono::steady_clock::now();
  auto trace = tracedoc::open_trace(path.string(), {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!trace.ok()) {
    std::fprintf(stderr, "read_threads: %s\n", trace.status().message().c_str());
    std::exit(2);
  }
  const size_t rows = trace->kernels.size() + trace->memcpys.size() + trace->api.size() + trace->ranges.size() +
                      trace->pytorch.ops.size();
  return {s, rows};
}

void measure(const std::string& label, const fs::path& path, int runs, int cores) {
  std::vector<double> one, all;
  size_t rows_one = 0, rows_all = 0;
  read_once(path, cores);  // the page cache warm for both
  for (int i = 0; i < runs; ++i) {
    auto [a, ra] = read_once(path, 1);
    auto [b, rb] = read_once(path, cores);
    one.push_back(a), all.push_back(b);
    rows_one = ra, rows_all = rb;
  }
  if (rows_one != rows_all) {
    std::fprintf(stderr, "read_threads: %s: %zu rows on 1 thread, %zu on %d\n", label.c_str(), rows_one, rows_all,
                 cores);
    std::exit(1);
  }
  const double mb = static_cast<double>(fs::file_size(path)) / 1e6;
  const double t1 = tracedoc::median(std::span<double>(one)), tn = tracedoc::median(std::span<double>(all));
  std::printf("%s: %.0f MB, %zu rows\n", label.c_str(), mb, rows_one);
  std::printf(
      "  1 thread %.3f s (%.0f MB/s), %d threads %.3f s (%.0f MB/s): %.2fx (goal >= 1.7x on 2 cores; median of %d)\n",
      t1, mb / t1, cores, tn, mb / tn, t1 / tn, runs);
}

}  // namespace

int main(int argc, char** argv) {
  const int cores = tracedoc::usable_cores();
  std::printf("read_threads: 1 thread against %d (the cores this process may use)\n", cores);
  const bench::LargeInputs in = bench::large_inputs(argc, argv, "read_threads", 5);
  if (!in.nsys.empty()) measure(in.nsys_label, in.nsys, in.runs, cores);
  if (!in.kineto.empty()) measure(in.kineto_label, in.kineto, in.runs, cores);
  return in.nsys.empty() && in.kineto.empty() ? 2 : 0;
}
