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

#include <sys/resource.h>

#include "analysis/statistics.h"
#include "bench_process.h"
#include "common/task_pool.h"
#include "ingest/open_trace.h"

namespace fs = std::filesystem;

namespace {

// This process's user and system CPU-seconds so far.
std::pair<double, double> cpu_so_far() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return {seconds(u.ru_utime), seconds(u.ru_stime)};
}

struct Read {
  double seconds = 0, user = 0, system = 0;  // wall and CPU-seconds of the read
  size_t rows = 0;                           // to check both thread counts read the same
};

Read read_once(const fs::path& path, int threads) {
  tracedoc::set_thread_count(threads);
  const auto [user0, system0] = cpu_so_far();
  const auto t0 = std::chrono::steady_clock::now();
  auto trace = tracedoc::open_trace(path.string(), {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto [user1, system1] = cpu_so_far();
  if (!trace.ok()) {
    std::fprintf(stderr, "read_threads: %s\n", trace.status().message().c_str());
    std::exit(2);
  }
  const size_t rows = trace->kernels.size() + trace->memcpys.size() + trace->api.size() + trace->ranges.size() +
                      trace->pytorch.ops.size();
  return {s, user1 - user0, system1 - system0, rows};
}

void measure(const std::string& label, const fs::path& path, int runs, int cores) {
  std::vector<Read> one, all;
  read_once(path, cores);  // the page cache warm for both
  for (int i = 0; i < runs; ++i) {
    one.push_back(read_once(path, 1));
    all.push_back(read_once(path, cores));
  }
  const size_t rows_one = one.back().rows, rows_all = all.back().rows;
  if (rows_one != rows_all) {
    std::fprintf(stderr, "read_threads: %s: %zu rows on 1 thread, %zu on %d\n", label.c_str(), rows_one, rows_all,
                 cores);
    std::exit(1);
  }
  const double mb = static_cast<double>(fs::file_size(path)) / 1e6;
  auto median_of = [](const std::vector<Read>& reads, double Read::*field) {
    std::vector<double> v;
    for (const Read& r : reads) v.push_back(r.*field);
    return tracedoc::median(std::span<double>(v));
  };
  const double t1 = median_of(one, &Read::seconds), tn = median_of(all, &Read::seconds);
  std::printf("%s: %.0f MB, %zu rows\n", label.c_str(), mb, rows_one);
  std::printf(
      "  1 thread %.3f s (%.0f MB/s), %d threads %.3f s (%.0f MB/s): %.2fx (goal >= 1.7x on 2 cores; median of %d)\n",
      t1, mb / t1, cores, tn, mb / tn, t1 / tn, runs);
  // The CPU time the threads add (contention, the parts' merges) shows here, apart from the machine's noise.
  std::printf("  CPU-seconds, user + system: 1 thread %.3f + %.3f, %d threads %.3f + %.3f (medians)\n",
              median_of(one, &Read::user), median_of(one, &Read::system), cores, median_of(all, &Read::user),
              median_of(all, &Read::system));
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
