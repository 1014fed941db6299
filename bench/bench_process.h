// What the benchmarks share: running a program as a child and measuring it (wall time, CPU time and
// peak RSS from wait4), and reading a whole file.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
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
  r.cpu_seconds = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
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
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') f.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else f.back() += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') f.emplace_back();
    else f.back() += c;
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
inline Tiled tile(const std::filesystem::path& tiler, const std::filesystem::path& input, const std::filesystem::path& dir, int copies) {
  std::string stem = input.filename().string();
  for (const char* ext : {".gz", ".json"})
    if (stem.size() > std::string(ext).size() && stem.ends_with(ext)) stem.resize(stem.size() - std::string(ext).size());
  Tiled t;
  t.copies = copies;
  t.path = dir / (stem + ".x" + std::to_string(copies) + ".json");
  const std::filesystem::path counts = dir / (stem + ".x" + std::to_string(copies) + ".counts");
  if (!std::filesystem::exists(counts) || !std::filesystem::exists(t.path)) {
    std::filesystem::remove(counts);
    const std::filesystem::path tmp = t.path.string() + ".tmp";
    RunResult r = run({tiler.string(), input.string(), tmp.string(), std::to_string(copies)}, (dir / "tile.out").string());
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

}  // namespace bench
