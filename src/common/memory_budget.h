// The --max-memory guard. Readers check the process's resident memory as the trace model grows
// (every 65,536 JSON events, after every SQLite table, before a read window grows); past the limit
// the command stops with a clear message and exit code 2 instead of driving the machine into swap
// or the OOM killer. The checks only see what the readers allocate, so the CLI also starts a
// watchdog: a thread that samples the resident memory every few milliseconds, whatever is
// allocating it (the analyses of summary, diagnose, diff, view, check and sql included), and on
// crossing the limit prints the same message, removes the pending output files and ends the
// process with exit code 2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tracedoc {

class MemoryBudget {
 public:
  // 0: no limit. The CLI sets it once, before reading.
  static void set_limit(uint64_t bytes);
  static uint64_t limit();
  // 80% of the memory this process may use: physical RAM, or the cgroup's memory.max when smaller.
  static uint64_t default_limit();
  // Resident set size now (/proc/self/statm), 0 when unknown.
  static uint64_t resident_bytes();
  // OK, or BadInput "<what>: needs more memory than the limit ...". `extra` is memory about to be
  // allocated (e.g. a read buffer that must grow). These checks are where long reads stop, so a
  // stop request (common/stop_request.h) ends the work here too, with ErrorCode::kInterrupted.
  static Status check(std::string_view what, uint64_t extra = 0);

  // What the watchdog's message names: the input being read or analysed.
  static void set_subject(std::string_view what);
  // Starts the watchdog (once per process; a limit of 0 disables it until a limit is set). For
  // the command-line tool only: it ends the process.
  static void start_watchdog();
  // How often the watchdog samples: the margin past the limit is what the process can allocate in
  // this time.
  static constexpr int kWatchdogPeriodMs = 5;
};

// "512M", "4G", "1.5GiB", "2000000000" (bytes; K/M/G/T are powers of 1024, with or without "B"/"iB").
Result<uint64_t> parse_memory_size(std::string_view text);
std::string format_memory_size(uint64_t bytes);  // "4.0 GiB", "512 MiB"

}  // namespace tracedoc
