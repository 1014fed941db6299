// The --max-memory guard. Readers check the process's resident memory as the trace model grows
// (every 65,536 JSON events, after every SQLite table); past the limit the command stops with a
// clear message and exit code 2 instead of driving the machine into swap or the OOM killer.
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
  // allocated (e.g. a read buffer that must grow).
  static Status check(std::string_view what, uint64_t extra = 0);
};

// "512M", "4G", "1.5GiB", "2000000000" (bytes; K/M/G/T are powers of 1024, with or without "B"/"iB").
Result<uint64_t> parse_memory_size(std::string_view text);
std::string format_memory_size(uint64_t bytes);  // "4.0 GiB", "512 MiB"

}  // namespace tracedoc
