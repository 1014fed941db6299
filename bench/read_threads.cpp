// Benchmark: reading on one thread against reading on every core this process may use (the task
// pool of common/task_pool.h), in one run, on the two large inputs of the other benchmarks: a real
// nsys export tiled 100x (241 MB) and a real PyTorch trace tiled to ~1 GB. Runs alternate between
// the two thread counts (5 each by default) and the medians are compared; the traces read must be
// the same (row counts checked). Goal on a 2-core machine: 1.7x for both.
//
// Beside each read run two controls: as many copies of a job as there are threads, at once, against
// one copy alone, for a job bound by the core (a hash over a buffer in its own cache) and one bound
// by memory (a sum over 64 MiB). They say how far the machine scaled during the same runs: on a
// shared virtual machine two cores sometimes get little more memory bandwidth than one, and then
// no read, which moves its trace through memory, scales as it does otherwise.
//
//   read_threads [--input TRACE.json(.gz)] [--target-mb MB] [--nsys-source FILE.sqlite] [--runs R]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
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

// The controls: each copy of a job works on a buffer of its own, the same work every time. The
// cache job hashes 256 KiB that stay in a core's own cache (what the cores compute); the memory job
// sums 64 MiB four times over (what the memory delivers to them).
enum class Control { kCache, kMemory };
constexpr size_t kCacheWords = size_t{32} << 10;  // 256 KiB
constexpr size_t kMemoryWords = size_t{8} << 20;  // 64 MiB
constexpr int kCachePasses = 1000, kMemoryPasses = 4;

// Copy `copy`'s buffer for a job, filled (its pages touched) on first use, before any timing.
const std::vector<uint64_t>& control_buffer(Control kind, size_t copy) {
  static std::deque<std::vector<uint64_t>> buffers[2];  // (growing keeps the others in place)
  auto& mine = buffers[static_cast<int>(kind)];
  if (mine.size() <= copy) mine.resize(copy + 1);
  std::vector<uint64_t>& buffer = mine[copy];
  if (buffer.empty()) {
    buffer.resize(kind == Control::kCache ? kCacheWords : kMemoryWords);
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = i * 0x9E3779B97F4A7C15ull;
  }
  return buffer;
}

uint64_t control_job(Control kind, const std::vector<uint64_t>& buffer) {
  uint64_t result = 1469598103934665603ull;
  if (kind == Control::kCache) {
    for (int pass = 0; pass < kCachePasses; ++pass) {
      for (uint64_t w : buffer) result = (result ^ w) * 1099511628211ull;
    }
  } else {
    for (int pass = 0; pass < kMemoryPasses; ++pass) {
      for (uint64_t w : buffer) result += w;
    }
  }
  return result;
}

// Seconds for `copies` copies of a control job at once on `copies` threads of the task pool.
double control_seconds(Control kind, int copies) {
  std::vector<const std::vector<uint64_t>*> buffers;
  for (int i = 0; i < copies; ++i) buffers.push_back(&control_buffer(kind, static_cast<size_t>(i)));
  tracedoc::set_thread_count(copies);
  std::vector<uint64_t> results(static_cast<size_t>(copies));
  const auto t0 = std::chrono::steady_clock::now();
  tracedoc::parallel_for(results.size(), [&](size_t i) { results[i] = control_job(kind, *buffers[i]); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (std::adjacent_find(results.begin(), results.end(), std::not_equal_to<>()) != results.end()) std::exit(1);
  return s;
}

// The two controls' times on one thread and on `cores`, gathered run after run beside the reads.
struct Controls {
  std::vector<double> seconds[2][2];  // [kind][all: `cores` copies at once, else one copy]

  void run(bool all, int cores) {
    for (Control kind : {Control::kCache, Control::kMemory})
      seconds[static_cast<int>(kind)][all].push_back(control_seconds(kind, all ? cores : 1));
  }
  // How much faster `cores` copies ran at once than one copy alone (the medians).
  double scaling(Control kind, int cores) { return cores * median_seconds(kind, false) / median_seconds(kind, true); }
  // The memory job's reads per second, GB/s, of one copy alone (0) or of all copies at once (1).
  double memory_gb_per_s(int cores, bool all) {
    const double bytes = double{kMemoryPasses} * kMemoryWords * sizeof(uint64_t) * (all ? cores : 1);
    return bytes / median_seconds(Control::kMemory, all) / 1e9;
  }
  double median_seconds(Control kind, bool all) {
    return tracedoc::median(std::span<double>(seconds[static_cast<int>(kind)][all]));
  }
};

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
  Controls controls;
  read_once(path, cores);     // the page cache warm for both
  controls.run(true, cores);  // every copy's buffer filled before any timing
  for (int i = 0; i < runs; ++i) {
    controls.run(false, cores);
    one.push_back(read_once(path, 1));
    controls.run(true, cores);
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
  // A shared virtual machine's cores do not always scale: beside the read, what they gave at the time.
  std::printf(
      "  the machine in the same runs, %d copies at once against one: a cache-bound job %.2fx, a memory-bound"
      " job %.2fx (%.1f GB/s against %.1f)\n",
      cores, controls.scaling(Control::kCache, cores), controls.scaling(Control::kMemory, cores),
      controls.memory_gb_per_s(cores, true), controls.memory_gb_per_s(cores, false));
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
