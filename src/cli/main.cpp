// tracedoc: GPU timelines that explain themselves.
#include <fmt/format.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <cerrno>
#include <csignal>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "analysis/gpu_peaks.h"
#include "cli/commands.h"
#include "cli/report_output.h"
#include "cli/shared_options.h"
#include "common/memory_budget.h"
#include "common/pending_files.h"
#include "common/task_pool.h"

namespace {

// One run reads a trace into large columns, builds and frees scratch tables for its reports, and
// exits. By default glibc maps each large block on its own and unmaps it when it is freed, and each
// thread past the first allocates from an arena of its own, so the next large block is faulted in
// again, 4 KiB at a time, and zeroed by the kernel. Kept in one heap that is never trimmed, freed
// blocks are reused instead: `stats` on a 241 MB export takes 12,800 page faults instead of 22,900,
// with the same peak memory. Set here, not in the library, which must not change the allocator of
// a process it is loaded into (Python).
void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's upper limit: larger blocks are still mapped
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_ARENA_MAX, 1);
#endif
}

// What a command printed must have reached standard output: a full disk or /dev/full fails the
// writes (stdio keeps the error) or the final flush, and a run whose report was lost must not exit
// 0. A closed pipe (`| head -1`) still ends the process quietly through SIGPIPE, as for any tool.
int finish_output(int exit_code) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return exit_code;
  const int err = flush_errno != 0 ? flush_errno : ENOSPC;  // a failed earlier write left no errno
  std::fprintf(stderr, "tracedoc: cannot write to standard output: %s\n", std::strerror(err));
  return tracedoc::cli::kExitBadInput;
}

int run_command(int argc, char** argv) {
  using namespace tracedoc::cli;
  CLI::App app{"tracedoc: reads Nsight Systems and PyTorch profiler traces and explains them"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tracedoc 0.1.0"));
  std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
  auto stats = add_stats_command(app);
  auto analyze = add_analyze_command(app);
  auto summary = add_summary_command(app);
  auto diagnose = add_diagnose_command(app);
  auto sql = add_sql_command(app);
  auto export_trace = add_export_command(app);
  auto check = add_check_command(app);
  auto diff = add_diff_command(app);
  auto synth = add_synth_command(app);
  auto view = add_view_command(app);
  auto capture = add_capture_command(app);
  auto ncu = add_ncu_command(app);
  // Every subcommand runs on the one task pool; its size is one option, declared here for all.
  int threads = 0;
  const std::string threads_help =
      fmt::format("Threads to run on (default: the {} cores this process may use); outputs do not depend on it",
                  tracedoc::usable_cores());
  // So is the memory guard: every command reads something, and each stops at the same limit.
  std::string max_memory;
  for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
    cmd->add_option("--threads", threads, threads_help)->check(CLI::Range(1, 4096));
    add_max_memory_option(cmd, max_memory);
  }
  // The GPUs' peaks the FLOPs figures are measured against (docs/flops.md), for every command that
  // reads a trace's operators: a file of the user's GPUs, or one peak for every GPU.
  std::string gpu_peaks_file;
  double peak_tflops = 0;
  for (const char* name : {"stats", "summary", "diagnose", "check", "diff", "view"}) {
    CLI::App* cmd = app.get_subcommand(name);
    cmd->add_option("--gpu-peaks", gpu_peaks_file,
                    "TOML file of GPU peaks ([[gpu]] match, fp32/bf16/... TFLOP/s, bandwidth GB/s) tried before "
                    "the built-in table (docs/flops.md)");
    cmd->add_option("--peak-tflops", peak_tflops,
                    "Every GPU's peak, TFLOP/s for every type (MFU of a GPU the table lacks)")
        ->check(number_from_to(1e-6, 1e9));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tracedoc: %s (see --help)\n", e.what());  // one line, as every usage error
    return kExitBadInput;
  }
  tracedoc::set_thread_count(threads);  // 0: usable_cores()
  const auto memory_limit = max_memory.empty() ? tracedoc::Result<uint64_t>(tracedoc::MemoryBudget::default_limit())
                                               : tracedoc::parse_memory_size(max_memory);
  if (!memory_limit.ok()) return fail(memory_limit.status());
  tracedoc::MemoryBudget::set_limit(*memory_limit);
  tracedoc::MemoryBudget::start_watchdog();  // counts what the analyses allocate too, not only the reads
  if (!gpu_peaks_file.empty()) {
    if (const tracedoc::Status st = tracedoc::load_user_gpu_peaks(gpu_peaks_file); !st.ok())
      return tracedoc::cli::fail(st);
  }
  if (peak_tflops > 0) tracedoc::set_uniform_gpu_peak(peak_tflops);
  if (app.got_subcommand("stats")) return stats();
  if (app.got_subcommand("analyze")) return analyze();
  if (app.got_subcommand("summary")) return summary();
  if (app.got_subcommand("diagnose")) return diagnose();
  if (app.got_subcommand("sql")) return sql();
  if (app.got_subcommand("export")) return export_trace();
  if (app.got_subcommand("check")) return check();
  if (app.got_subcommand("diff")) return diff();
  if (app.got_subcommand("synth")) return synth();
  if (app.got_subcommand("view")) return view();
  if (app.got_subcommand("capture")) return capture();
  if (app.got_subcommand("ncu")) return ncu();
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory_for_reuse();
  // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, reported as any failed write and
  // its temporary file removed, instead of SIGXFSZ ending the process mid-write. (`capture` gives the
  // program it runs the default back.)
  ::signal(SIGXFSZ, SIG_IGN);
  tracedoc::PendingFiles::remove_on_termination_signals();  // an interrupted run leaves no half-written file
  return finish_output(run_command(argc, argv));
}
