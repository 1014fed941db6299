// Benchmark: `tracedoc diff` against Holistic Trace Analysis's TraceDiff on the same before/after
// pair. Tiles HTA's own trace_diff pair (control and test, real DLRM-like training traces) N times
// each (tile_kineto_trace: timestamps shifted as decimal text, ids renumbered), then times, in one
// run: `tracedoc diff CONTROL TEST -f csv` (both traces read at once, the significance tests, the
// step split, the findings of both) and HTA 0.5.0's LabeledTrace load of both plus
// TraceDiff.compare_traces over every iteration (counts and total durations per name, no test).
// Prints wall and CPU seconds, peak RSS, MB/s and the ratio, and checks that tracedoc's kernel
// instance counts sum to the files' kernel counts.
//
//   diff_vs_hta [--copies N] [--runs R] [--hta-python PY] [--workdir DIR]
//
// HTA: `python3 -m venv VENV && VENV/bin/pip install HolisticTraceAnalysis`, then --hta-python
// VENV/bin/python (or $TRACEDOC_HTA_PYTHON); without it only tracedoc is timed.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bench_process.h"

namespace fs = std::filesystem;
using namespace bench;

namespace {

const char* kHtaScript = R"PY(
import logging, os, sys, time
logging.disable(logging.WARNING)
from hta.trace_diff import TraceDiff, LabeledTrace
t0 = time.perf_counter()
c = LabeledTrace(label="control", trace_dir=sys.argv[1])
t = LabeledTrace(label="test", trace_dir=sys.argv[2])
t1 = time.perf_counter()
df = TraceDiff.compare_traces(c, t, control_iteration=c.iterations(), test_iteration=t.iterations())
t2 = time.perf_counter()
print("load_s", t1 - t0)
print("compare_s", t2 - t1)
print("rows", len(df))
)PY";

RunResult best_of(int runs, const std::vector<std::string>& argv, const fs::path& out) {
  RunResult best;
  for (int i = 0; i < runs; ++i) {
    RunResult r = run(argv, out.string());
    if (r.exit_code != 0) {
      std::fprintf(stderr, "diff_vs_hta: %s failed (exit %d)\n", argv[0].c_str(), r.exit_code);
      std::exit(2);
    }
    if (i == 0 || r.seconds < best.seconds) best = r;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path bench_dir = fs::canonical("/proc/self/exe").parent_path();
  const char* shared_env = std::getenv("TRACEDOC_SHARED");
  const fs::path shared = shared_env ? fs::path(shared_env) : fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  const fs::path pair = shared / "traces/kineto/HolisticTraceAnalysis/tests/data/trace_diff";
  int copies = 10, runs = 3;
  std::string hta_python = std::getenv("TRACEDOC_HTA_PYTHON") ? std::getenv("TRACEDOC_HTA_PYTHON") : "";
  fs::path dir = fs::temp_directory_path() / "tracedoc-diff-bench";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--copies")
      copies = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--runs")
      runs = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--hta-python")
      hta_python = argv[i + 1];
    else if (a == "--workdir")
      dir = argv[i + 1];
    else {
      std::fprintf(stderr, "diff_vs_hta: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!fs::exists(pair / "control/control.json.gz")) {
    std::fprintf(stderr, "diff_vs_hta: HTA's trace_diff pair not found under %s (set TRACEDOC_SHARED)\n", pair.c_str());
    return 2;
  }
  const fs::path tiler = bench_dir / "tile_kineto_trace";
  fs::create_directories(dir / "control");
  fs::create_directories(dir / "test");
  const Tiled control = tile(tiler, pair / "control/control.json.gz", dir / "control", copies);
  const Tiled test = tile(tiler, pair / "test/test.json.gz", dir / "test", copies);
  const double mb = control.mb + test.mb, events = control.events + test.events;
  std::printf(
      "HTA trace_diff pair tiled %dx: control %.1f MB (%.0f events, %.0f kernels), test %.1f MB (%.0f events, %.0f "
      "kernels)\n",
      copies, control.mb, control.events, control.kernels, test.mb, test.events, test.kernels);

  const std::string tracedoc = (bench_dir.parent_path() / "tracedoc").string();
  const fs::path out = dir / "diff.csv";
  const std::vector<std::string> td_args = {tracedoc, "diff", control.path.string(), test.path.string(), "-f", "csv"};
  run(td_args, out.string());  // warm-up: both files from the page cache in every timed run
  const RunResult td = best_of(runs, td_args, out);
  std::printf(
      "\ntracedoc diff -f csv, best of %d: %.2f s wall, %.2f CPU-s, peak RSS %.0f MB; %.0f MB/s, %.2f M events/s\n",
      runs, td.seconds, td.cpu_seconds, td.max_rss_kb / 1024.0, mb / td.seconds, events / td.seconds / 1e6);
  // Check: every kernel of both files is in a kernel row.
  double base_kernels = 0, new_kernels = 0;
  std::istringstream csv(slurp(out));
  std::string line;
  std::getline(csv, line);  // header
  while (std::getline(csv, line)) {
    const auto f = csv_fields(line);
    if (f.size() < 7 || f[0] != "kernel") continue;
    base_kernels += std::atof(f[5].c_str()), new_kernels += std::atof(f[6].c_str());
  }
  const bool counts_ok = base_kernels == control.kernels && new_kernels == test.kernels;
  std::printf("  check: kernel instances %.0f / %.0f, the files hold %.0f / %.0f: %s\n", base_kernels, new_kernels,
              control.kernels, test.kernels, counts_ok ? "ok" : "MISMATCH");

  if (hta_python.empty()) {
    std::printf(
        "\nHTA TraceDiff: skipped (pass --hta-python or set TRACEDOC_HTA_PYTHON to a venv's python with "
        "HolisticTraceAnalysis)\n");
    return counts_ok ? 0 : 1;
  }
  const RunResult hta = run({hta_python, "-c", kHtaScript, (dir / "control").string(), (dir / "test").string()},
                            (dir / "hta.out").string(), (dir / "hta.err").string());
  if (hta.exit_code != 0) {
    std::string err = slurp(dir / "hta.err");
    std::printf("\nHTA TraceDiff: failed: %s\n", err.substr(err.rfind('\n', err.size() - 2) + 1).c_str());
    return 1;
  }
  auto kv = key_values(slurp(dir / "hta.out"));
  std::printf(
      "\nHTA TraceDiff (LabeledTrace x2 + compare_traces, every iteration): %.2f s wall, %.2f CPU-s, peak RSS %.0f MB "
      "(load %.2f s, compare %.2f s, %s rows)\n",
      hta.seconds, hta.cpu_seconds, hta.max_rss_kb / 1024.0, std::atof(kv["load_s"].c_str()),
      std::atof(kv["compare_s"].c_str()), kv["rows"].c_str());
  std::printf(
      "\ntracedoc diff is %.1fx as fast as HTA's TraceDiff (wall), %.1fx per CPU second, with %.2fx its memory\n",
      hta.seconds / td.seconds, hta.cpu_seconds / td.cpu_seconds, td.max_rss_kb / static_cast<double>(hta.max_rss_kb));
  return counts_ok ? 0 : 1;
}
