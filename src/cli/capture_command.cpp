// `tracedoc capture`: runs a program with tracedoc's recorder (libtracedoc_inject.so) loaded into it
// and every process it starts, as an unprivileged user, and leaves one .tdcap file per process in
// the output directory (ingest/capture_format.h), readable by every tracedoc command.
//
//   tracedoc capture [-o DIR] [--trace cuda,nvtx,osrt-lite] [--osrt-threshold NS] [--osrt-backtrace]
//                    [--sample cpu|none] [--sampling-frequency HZ]
//                    [--capture-range none|cudaProfilerApi|nvtx]
//                    [--nvtx-capture RANGE[@DOMAIN]] [--delay S] [--duration S]
//                    [--cuda-memory-usage true|false] [--cuda-graph-trace node|graph]
//                    [--export sqlite] [--force-overwrite]
//                    -- COMMAND ARGS...
//
// The recorder is loaded by NVTX (NVTX_INJECTION64_PATH) and by the CUDA driver
// (CUDA_INJECTION64_PATH), both read from the environment the children inherit: DataLoader
// workers, torchrun's ranks and their own children each write their file (rank<R>.pid<P>.tdcap or
// pid<P>.tdcap). The command's exit code is tracedoc's (128 + N when a signal N killed it); Ctrl-C
// reaches the command, which flushes and ends as it would, and SIGTERM / SIGHUP are passed on.
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_output.h"
#include "ingest/capture_reader.h"
#include "report/nsys_sqlite_writer.h"

namespace tracedoc::cli {

namespace {

namespace fs = std::filesystem;

constexpr double kYearSeconds = 365.0 * 24 * 3600;

struct CaptureOptions {
  std::string output = "tracedoc-capture";
  std::string trace = "cuda,nvtx";
  std::string capture_range = "none";
  std::string nvtx_capture;
  double delay_s = 0, duration_s = -1;
  std::string cuda_memory = "false";
  std::string graph_trace = "node";
  int64_t osrt_threshold_ns = 1000;
  bool osrt_backtrace = false;
  std::string sample = "none";
  int64_t sampling_hz = 1000;
  std::string export_format;
  bool force = false;
  std::vector<std::string> command;
};

pid_t g_child = -1;

void forward_signal(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

// The recorder: $TRACEDOC_INJECT_LIB, else next to this binary, else in ../lib/tracedoc.
std::string find_inject_library() {
  if (const char* env = std::getenv("TRACEDOC_INJECT_LIB"); env != nullptr && *env != 0) return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& candidate :
       {self.parent_path() / "libtracedoc_inject.so", self.parent_path() / "../lib/tracedoc/libtracedoc_inject.so"}) {
    if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
  }
  return {};
}

// Why no CUDA activity was recorded, when the program recorded none: no driver, no device, or the
// program made no CUDA calls.
std::string why_no_cuda() {
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (cuda == nullptr)
    return "this machine has no CUDA driver (libcuda.so.1 not found), so no CUDA device could be used";
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(cuda, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(cuda, "cuDeviceGetCount"));
  int devices = 0;
  std::string why;
  if (init == nullptr || count == nullptr)
    why = "the CUDA driver could not be used";
  else if (const int rc = init(0); rc != 0)
    why = fmt::format("the CUDA driver found no usable device (cuInit error {})", rc);
  else if (count(&devices) != 0 || devices == 0)
    why = "the CUDA driver reports no device";
  else
    why = fmt::format("the program made no CUDA calls ({} device{} present)", devices, devices == 1 ? "" : "s");
  dlclose(cuda);
  return why;
}

int run_capture(const CaptureOptions& opt) {
  if (opt.command.empty())
    return fail(UsageError("capture: no COMMAND given (tracedoc capture [options] -- COMMAND ARGS...)"));
  std::set<std::string> kinds;
  for (const std::string& k : split(opt.trace, ',')) {
    if (k != "cuda" && k != "nvtx" && k != "osrt-lite" && k != "none") {
      return fail(UsageError(fmt::format("capture: --trace: unknown '{}' (cuda, nvtx, osrt-lite)", k)));
    }
    kinds.insert(k);
  }
  if (opt.capture_range != "none" && opt.capture_range != "cudaProfilerApi" && opt.capture_range != "nvtx") {
    return fail(UsageError(
        fmt::format("capture: --capture-range must be none, cudaProfilerApi or nvtx, not '{}'", opt.capture_range)));
  }
  if ((opt.capture_range == "nvtx") != !opt.nvtx_capture.empty()) {
    return fail(UsageError("capture: --capture-range=nvtx and --nvtx-capture=RANGE[@DOMAIN] go together"));
  }
  if (opt.cuda_memory != "true" && opt.cuda_memory != "false")
    return fail(UsageError("capture: --cuda-memory-usage must be true or false"));
  if (opt.osrt_threshold_ns < 0) return fail(UsageError("capture: --osrt-threshold must be 0 or more nanoseconds"));
  if (opt.sample != "none" && opt.sample != "cpu" && opt.sample != "process-tree")
    return fail(UsageError(fmt::format("capture: --sample must be cpu or none, not '{}'", opt.sample)));
  const bool sampling = opt.sample != "none";
  if (opt.sampling_hz < 100 || opt.sampling_hz > 8000)
    return fail(UsageError("capture: --sampling-frequency must be from 100 to 8000 Hz (as nsys's)"));
  if (opt.osrt_backtrace && !kinds.count("osrt-lite"))
    return fail(UsageError("capture: --osrt-backtrace records the stacks of OS calls: it needs --trace osrt-lite"));
  if (opt.graph_trace != "node" && opt.graph_trace != "graph")
    return fail(UsageError("capture: --cuda-graph-trace must be node or graph"));
  if (!opt.export_format.empty() && opt.export_format != "sqlite")
    return fail(UsageError("capture: --export takes sqlite"));
  if (!(opt.delay_s >= 0 && opt.delay_s <= kYearSeconds) ||
      !(opt.duration_s == -1 || (opt.duration_s > 0 && opt.duration_s <= kYearSeconds))) {
    // At most a year: the recorder takes nanoseconds as an int64 (NaN and infinities are no time).
    return fail(
        UsageError("capture: --delay must be from 0 to a year of seconds, and --duration more than 0 and at "
                   "most a year"));
  }
  const std::string library = find_inject_library();
  if (library.empty()) {
    return fail(
        IoError("capture: libtracedoc_inject.so not found next to tracedoc (it is built when the CUDA toolkit's NVTX "
                "headers are present); set TRACEDOC_INJECT_LIB"));
  }
  std::error_code ec;
  fs::create_directories(opt.output, ec);
  if (ec || !fs::is_directory(opt.output, ec))
    return fail(IoError(fmt::format("capture: {}: cannot create the output directory", opt.output)));
  if (is_capture_directory(opt.output)) {
    if (!opt.force)
      return fail(
          UsageError(fmt::format("capture: {} already holds a capture (--force-overwrite replaces it)", opt.output)));
    for (const auto& e : fs::directory_iterator(opt.output, ec)) {
      if (e.path().extension() == ".tdcap") fs::remove(e.path(), ec);
    }
  }
  const std::string dir = fs::absolute(opt.output).string();

  std::fflush(nullptr);
  g_child = ::fork();
  if (g_child < 0) return fail(IoError(fmt::format("capture: fork: {}", std::strerror(errno))));
  if (g_child == 0) {
    ::signal(SIGXFSZ, SIG_DFL);  // ignored by tracedoc itself (cli/main.cpp); an ignored signal survives exec
    ::setenv("TRACEDOC_CAPTURE_DIR", dir.c_str(), 1);
    if (kinds.count("nvtx")) ::setenv("NVTX_INJECTION64_PATH", library.c_str(), 1);
    if (kinds.count("cuda")) ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    if (opt.delay_s > 0)
      ::setenv("TRACEDOC_CAPTURE_DELAY_NS", std::to_string(static_cast<int64_t>(opt.delay_s * 1e9)).c_str(), 1);
    if (opt.duration_s > 0)
      ::setenv("TRACEDOC_CAPTURE_DURATION_NS", std::to_string(static_cast<int64_t>(opt.duration_s * 1e9)).c_str(), 1);
    if (opt.capture_range == "nvtx") ::setenv("TRACEDOC_CAPTURE_NVTX_RANGE", opt.nvtx_capture.c_str(), 1);
    if (opt.capture_range == "cudaProfilerApi") ::setenv("TRACEDOC_CAPTURE_PROFILER_API", "1", 1);
    if (opt.cuda_memory == "true") ::setenv("TRACEDOC_CAPTURE_CUDA_MEMORY", "1", 1);
    if (opt.graph_trace == "graph") ::setenv("TRACEDOC_CAPTURE_GRAPH_TRACE", "1", 1);
    if (kinds.count("osrt-lite") || sampling) {
      // The OS-call interposers work only from a preloaded library, and the sampler must start
      // with the program; the injection paths above then load the same copy.
      const char* preload = std::getenv("LD_PRELOAD");
      const std::string value = preload != nullptr && *preload != 0 ? library + ":" + preload : library;
      ::setenv("LD_PRELOAD", value.c_str(), 1);
    }
    if (kinds.count("osrt-lite")) {
      ::setenv("TRACEDOC_CAPTURE_OSRT", "1", 1);
      ::setenv("TRACEDOC_CAPTURE_OSRT_THRESHOLD_NS", std::to_string(opt.osrt_threshold_ns).c_str(), 1);
      if (opt.osrt_backtrace) ::setenv("TRACEDOC_CAPTURE_OSRT_BACKTRACE", "1", 1);
    }
    if (sampling) ::setenv("TRACEDOC_CAPTURE_SAMPLE_HZ", std::to_string(opt.sampling_hz).c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "tracedoc: capture: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  // Ctrl-C goes to the whole process group: the command handles it; tracedoc waits for its end.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, forward_signal);
  ::signal(SIGHUP, forward_signal);
  int status = 0;
  while (::waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

  // Addresses are named now, while the binaries the program ran are the ones on disk.
  if (auto named = symbolize_capture(dir); !named.ok())
    std::fprintf(stderr, "tracedoc capture: %s (the stacks are named when read)\n", named.status().message().c_str());
  auto trace = read_capture(dir);
  if (!trace.ok()) {
    std::fprintf(stderr, "tracedoc capture: nothing was recorded in %s (%s)\n", dir.c_str(),
                 trace.status().message().c_str());
    return code;
  }
  int64_t ranges = 0;
  for (uint16_t k : trace->ranges.kind) ranges += k != static_cast<uint16_t>(RangeKind::kNvtxDomainCreate);
  std::string line = fmt::format(
      "tracedoc capture: {}: {} process{}, {} NVTX events, {} kernels, {} copies, {} memsets, {} CUDA API calls",
      opt.output, trace->processes.size(), trace->processes.size() == 1 ? "" : "es", ranges, trace->kernels.size(),
      trace->memcpys.size(), trace->memsets.size(), trace->api.size());
  if (trace->graph_traces.size() > 0) line += fmt::format(", {} graph launches", trace->graph_traces.size());
  if (kinds.count("osrt-lite")) line += fmt::format(", {} OS calls", trace->os_calls.size());
  if (sampling) line += fmt::format(", {} CPU samples", trace->cpu_samples.size());
  if (trace->warnings.torn_frames) line += fmt::format(" ({} frame(s) cut short)", trace->warnings.torn_frames);
  std::fprintf(stderr, "%s\n", line.c_str());
  if (kinds.count("cuda") && trace->kernels.size() + trace->api.size() + trace->memcpys.size() == 0) {
    std::fprintf(stderr, "tracedoc capture: no CUDA activity was recorded: %s\n", why_no_cuda().c_str());
  }
  if (opt.export_format == "sqlite") {
    const std::string out = (fs::path(opt.output).lexically_normal().string() + ".sqlite");
    if (Status st = write_nsys_sqlite(*trace, out); !st.ok()) {
      std::fprintf(stderr, "tracedoc: %s\n", st.message().c_str());
      return code != 0 ? code : kExitBadInput;
    }
    std::fprintf(stderr, "tracedoc capture: wrote %s (an Nsight Systems SQLite export)\n", out.c_str());
  }
  return code;
}

}  // namespace

std::function<int()> add_capture_command(CLI::App& app) {
  auto opt = std::make_shared<CaptureOptions>();
  CLI::App* cmd = app.add_subcommand(
      "capture", "Run a program and record its CUDA and NVTX timeline (tracedoc capture [options] -- COMMAND ARGS...)");
  cmd->add_option("-o,--output", opt->output,
                  "Output directory: one .tdcap file per process (default tracedoc-capture)");
  cmd->add_option("-t,--trace", opt->trace, "What to record: cuda, nvtx, osrt-lite (default cuda,nvtx)");
  cmd->add_option("--osrt-threshold", opt->osrt_threshold_ns,
                  "With osrt-lite: record OS calls that last at least this many nanoseconds (default 1000)");
  cmd->add_flag("--osrt-backtrace", opt->osrt_backtrace,
                "With osrt-lite: also record the call stack of each OS call recorded (OSRT_CALLCHAINS)");
  cmd->add_option("-s,--sample", opt->sample,
                  "cpu: sample every thread's call stack while it runs on a CPU (COMPOSITE_EVENTS); none (default)");
  cmd->add_option("--sampling-frequency", opt->sampling_hz,
                  "With --sample cpu: samples per second of a thread's CPU time, 100 to 8000 (default 1000)");
  cmd->add_option("--capture-range", opt->capture_range,
                  "none (default), cudaProfilerApi (cudaProfilerStart/Stop) or nvtx");
  cmd->add_option("--nvtx-capture", opt->nvtx_capture,
                  "RANGE[@DOMAIN]: with --capture-range=nvtx, record from this range's start to its end");
  cmd->add_option("--delay", opt->delay_s, "Seconds after the program starts before recording begins");
  cmd->add_option("--duration", opt->duration_s, "Seconds to record (after --delay)");
  cmd->add_option("--cuda-memory-usage", opt->cuda_memory,
                  "true: also record GPU memory allocations and frees (default false)");
  cmd->add_option(
      "--cuda-graph-trace", opt->graph_trace,
      "node (default): every kernel of a CUDA graph on its own; graph: each graph launch as one block (less overhead)");
  cmd->add_option("--export", opt->export_format,
                  "sqlite: also write the capture as an Nsight Systems SQLite export (DIR.sqlite)");
  cmd->add_flag("--force-overwrite", opt->force, "Replace a capture already in the output directory");
  cmd->add_option("command", opt->command, "The program and its arguments, after --")->expected(-1);
  cmd->prefix_command(false);
  return [opt] { return run_capture(*opt); };
}

}  // namespace tracedoc::cli
