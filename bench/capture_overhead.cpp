// What `tracedoc capture` costs the program it records, measured on the CPU (NVTX needs no GPU):
//
//  * per NVTX range: 2 M empty push/pop pairs of a real NVTX 3 program, without a tool (NVTX's
//    no-op), and under `tracedoc capture` (recorded): ns per range, both in the same run;
//  * on a step-shaped loop: 200 steps of 100 ranges around 20 µs of work each (2 ms steps, 50,000
//    ranges a second, denser than a training step's annotations): the slowdown of the step.
//
// The per-kernel cost of CUDA activity recording needs a GPU: tools/gpu_capture_check.py measures it
// there.
//
//   capture_overhead [--build DIR] [--runs R]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_process.h"

namespace fs = std::filesystem;

namespace {

double value_of(const std::string& text, const std::string& key) {
  const size_t at = text.find(key + " ");
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + key.size() + 1);
}

double best(const std::vector<std::string>& argv, const std::string& key, int runs, const fs::path& dir) {
  double best = -1;
  for (int i = 0; i < runs; ++i) {
    const fs::path out = dir / "out.txt";
    bench::run(argv, out.string(), (dir / "err.txt").string());
    const double v = value_of(bench::slurp(out), key);
    if (v > 0 && (best < 0 || v < best)) best = v;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path build = fs::path(TRACEDOC_SOURCE_DIR) / "build";
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--build") build = argv[i + 1];
    else if (key == "--runs") runs = std::atoi(argv[i + 1]);
  }
  const std::string program = (build / "tracedoc_nvtx_program").string(), tracedoc = (build / "tracedoc").string();
  if (!fs::exists(program) || !fs::exists(build / "libtracedoc_inject.so")) {
    std::printf("capture_overhead: %s or libtracedoc_inject.so not built (needs the CUDA toolkit's NVTX headers)\n", program.c_str());
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / "tracedoc-bench-capture";
  fs::create_directories(dir);
  auto captured = [&](std::vector<std::string> args) {
    std::vector<std::string> full = {tracedoc, "capture", "-o", (dir / "capture").string(), "--force-overwrite", "--trace", "nvtx", "--", program};
    full.insert(full.end(), args.begin(), args.end());
    return full;
  };
  const double bare = best({program, "bench", "2000000"}, "ns_per_range", runs, dir);
  const double recorded = best(captured({"bench", "2000000"}), "ns_per_range", runs, dir);
  std::printf("NVTX push/pop pair: %.1f ns without a tool, %.1f ns recorded by tracedoc capture (+%.1f ns per range)\n", bare, recorded,
              recorded - bare);
  const double step = best({program, "steps", "200", "100", "20"}, "step_ns", runs, dir);
  const double step_recorded = best(captured({"steps", "200", "100", "20"}), "step_ns", runs, dir);
  std::printf("2 ms step with 100 ranges: %.3f ms without a tool, %.3f ms recorded: %+.2f%%\n", step / 1e6, step_recorded / 1e6,
              100.0 * (step_recorded - step) / step);
  fs::remove_all(dir);
  return 0;
}
