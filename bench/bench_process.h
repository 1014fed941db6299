// What the benchmarks share: running a program as a child and measuring it (wall time, CPU time and
// peak RSS from wait4), and reading a whole file.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace bench {

struct RunResult {
  double seconds = 0;
  double cpu_seconds = 0;
  long max_rss_kb = 0;
  int exit_code = -1;
};

// fork/exec with stdout and stderr to files; wait4 gives the child's CPU time and peak RSS.
inline RunResult run(const std::vector<std::string>& argv, const std::string& stdout_path,
                     const std::string& stderr_path = "/dev/null",
                     const std::vector<std::pair<std::string, std::string>>& env = {}) {
  RunResult r;
  std::fflush(stdout);  // or the child would print our buffered lines again
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::freopen(stdout_path.c_str(), "w", stdout);
    FILE* err = std::freopen(stderr_path.c_str(), "w", stderr);
    (void)out, (void)err;
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu_seconds =
      usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
  r.max_rss_kb = usage.ru_maxrss;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One CSV line into fields (RFC 4180 quoting: kernel names carry commas).
inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"')
        f.back() += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        f.back() += c;
    } else if (c == '"')
      quoted = true;
    else if (c == ',')
      f.emplace_back();
    else
      f.back() += c;
  }
  return f;
}

// "key value" lines (tile_kineto_trace --info, the HTA script) into a map.
inline std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> m;
  std::istringstream in(text);
  std::string k, v;
  while (in >> k >> v) m[k] = v;
  return m;
}

// A Kineto trace tiled `copies` times by tile_kineto_trace (timestamps shifted, ids renumbered),
// kept in `dir` between runs.
struct Tiled {
  std::filesystem::path path;
  int copies = 0;
  double mb = 0;
  double events = 0, kernels = 0;
};

// Tiles `input` `copies` times into `dir`, or reuses the file of an earlier run: the counts file is
// written last, after the rename, so its presence means the JSON beside it is complete.
inline Tiled tile(const std::filesystem::path& tiler, const std::filesystem::path& input,
                  const std::filesystem::path& dir, int copies) {
  std::string stem = input.filename().string();
  for (const char* ext : {".gz", ".json"})
    if (stem.size() > std::string(ext).size() && stem.ends_with(ext))
      stem.resize(stem.size() - std::string(ext).size());
  Tiled t;
  t.copies = copies;
  t.path = dir / (stem + ".x" + std::to_string(copies) + ".json");
  const std::filesystem::path counts = dir / (stem + ".x" + std::to_string(copies) + ".counts");
  if (!std::filesystem::exists(counts) || !std::filesystem::exists(t.path)) {
    std::filesystem::remove(counts);
    const std::filesystem::path tmp = t.path.string() + ".tmp";
    RunResult r =
        run({tiler.string(), input.string(), tmp.string(), std::to_string(copies)}, (dir / "tile.out").string());
    if (r.exit_code != 0) {
      std::fprintf(stderr, "tiling %s failed\n", input.c_str());
      std::exit(2);
    }
    std::filesystem::rename(tmp, t.path);
    std::filesystem::copy_file(dir / "tile.out", counts, std::filesystem::copy_options::overwrite_existing);
    ::sync();  // write the new file back now, not while the timed runs read it
  }
  std::istringstream in(slurp(counts));
  in >> t.events >> t.kernels;
  t.mb = static_cast<double>(std::filesystem::file_size(t.path)) / 1e6;
  return t;
}

// The two large inputs of the in-process benchmarks (summary_cost, read_threads): a real PyTorch
// trace tiled to about --target-mb (default 1000 MB) and a real nsys export tiled 100x (241 MB),
// from ../shared (or TRACEDOC_SHARED), made once in --workdir and reused.
struct LargeInputs {
  std::filesystem::path kineto;  // empty when its source is absent
  std::string kineto_label;
  std::filesystem::path nsys;  // likewise
  std::string nsys_label;
  int runs = 0;
};

// Parses --input, --target-mb, --nsys-source, --runs and --workdir (exit 2 on anything else, with
// `program` in the message), then tiles what is present.
inline LargeInputs large_inputs(int argc, char** argv, const char* program, int default_runs) {
  namespace fs = std::filesystem;
  const fs::path bench_dir = fs::canonical("/proc/self/exe").parent_path();
  const char* shared_env = std::getenv("TRACEDOC_SHARED");
  const fs::path shared = shared_env ? fs::path(shared_env) : fs::path(TRACEDOC_SOURCE_DIR).parent_path() / "shared";
  fs::path input = shared / "traces" / "kineto" / "TraceLens" / "tests" / "traces" / "h100" /
                   "google_owlv2-large-patch14-ensemble__1016001.json.gz";
  fs::path nsys_source = shared / "traces" / "nsys" / "nsys-ai" / "mfu_2gpu_before.sqlite";
  double target_mb = 1000;
  LargeInputs out;
  out.runs = default_runs;
  fs::path dir = fs::temp_directory_path() / "tracedoc-kineto-bench";
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", program, a.c_str());
      std::exit(2);
    }
    if (a == "--input")
      input = argv[i + 1];
    else if (a == "--target-mb")
      target_mb = std::atof(argv[i + 1]);
    else if (a == "--nsys-source")
      nsys_source = argv[i + 1];
    else if (a == "--runs")
      out.runs = std::atoi(argv[i + 1]);
    else if (a == "--workdir")
      dir = argv[i + 1];
    else {
      std::fprintf(stderr, "%s: unknown option %s\n", program, a.c_str());
      std::exit(2);
    }
  }
  fs::create_directories(dir);
  if (fs::exists(input)) {
    const fs::path tiler = bench_dir / "tile_kineto_trace";
    run({tiler.string(), "--info", input.string()}, (dir / "info.txt").string());
    auto info = key_values(slurp(dir / "info.txt"));
    const double in_mb = std::atof(info["bytes"].c_str()) / 1e6;
    const int copies = std::max(1, static_cast<int>(std::lround(target_mb / std::max(in_mb, 1.0))));
    out.kineto = tile(tiler, input, dir, copies).path;
    out.kineto_label = "PyTorch trace " + input.filename().string() + " tiled " + std::to_string(copies) + "x";
  } else {
    std::fprintf(stderr, "%s: input trace %s not found (pass --input or set TRACEDOC_SHARED)\n", program,
                 input.c_str());
  }
  if (fs::exists(nsys_source)) {
    const fs::path tiled = dir / "summary_cost_nsys.sqlite";
    if (!fs::exists(tiled)) {
      RunResult r = run({(bench_dir / "tile_nsys_export").string(), nsys_source.string(), tiled.string(), "100"},
                        (dir / "rows.txt").string());
      if (r.exit_code != 0) {
        std::fprintf(stderr, "%s: tiling %s failed\n", program, nsys_source.c_str());
        std::exit(2);
      }
    }
    out.nsys = tiled;
    out.nsys_label = "nsys export " + nsys_source.filename().string() + " tiled 100x";
  }
  return out;
}

}  // namespace bench
