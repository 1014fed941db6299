#include "common/memory_budget.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <thread>

#include "common/pending_files.h"
#include "common/stop_request.h"

namespace tracedoc {

namespace {
std::atomic<uint64_t> g_limit{0};

uint64_t cgroup_limit() {
  // cgroup v2: "max" or a byte count; a container's limit is what the OOM killer enforces.
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string value;
  if (!(in >> value) || value == "max") return 0;
  uint64_t bytes = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), bytes);
  return ec == std::errc() ? bytes : 0;
}
// Never destroyed: the detached watchdog may read them while the process exits.
std::mutex& subject_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::string& subject() {
  static auto* s = new std::string("tracedoc");
  return *s;
}

std::string limit_message(std::string_view what, uint64_t max, uint64_t used, uint64_t extra) {
  return fmt::format(
      "{}: needs more memory than the limit of {} (in use: {}{}); raise --max-memory, or "
      "read less (fewer reports, --rank N)",
      what, format_memory_size(max), format_memory_size(used),
      extra ? fmt::format(", about to allocate {}", format_memory_size(extra)) : "");
}

// The watchdog's loop. /proc/self/statm is read through one descriptor (pread regenerates it), a
// few microseconds per sample.
[[noreturn]] void watch() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(MemoryBudget::kWatchdogPeriodMs));
    const uint64_t max = g_limit;
    if (max == 0 || fd < 0) continue;
    char text[128];
    const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
    if (n <= 0) continue;
    text[n] = '\0';
    unsigned long long size = 0, resident = 0;
    if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) continue;
    const uint64_t used = resident * page;
    if (used <= max) continue;
    std::string what;
    {
      std::lock_guard<std::mutex> lock(subject_mutex());
      what = subject();
    }
    PendingFiles::remove_all();
    const std::string line = "tracedoc: " + limit_message(what, max, used, 0) + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    ::_exit(2);  // the other threads are mid-allocation: nothing of theirs is worth running
  }
}

}  // namespace

void MemoryBudget::set_limit(uint64_t bytes) { g_limit = bytes; }
uint64_t MemoryBudget::limit() { return g_limit; }

uint64_t MemoryBudget::default_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t total = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  const uint64_t group = cgroup_limit();
  if (group > 0 && (total == 0 || group < total)) total = group;
  return total / 10 * 8;
}

uint64_t MemoryBudget::resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

Status MemoryBudget::check(std::string_view what, uint64_t extra) {
  if (StopRequest::requested()) return Status(ErrorCode::kInterrupted, fmt::format("{}: interrupted", what));
  const uint64_t max = g_limit;
  if (max == 0) return Status::Ok();
  const uint64_t used = resident_bytes();
  if (used + extra <= max) return Status::Ok();
  return BadInput(limit_message(what, max, used, extra));
}

void MemoryBudget::set_subject(std::string_view what) {
  std::lock_guard<std::mutex> lock(subject_mutex());
  subject().assign(what.data(), what.size());
}

void MemoryBudget::start_watchdog() {
  static std::once_flag started;
  std::call_once(started, [] { std::thread(watch).detach(); });
}

Result<uint64_t> parse_memory_size(std::string_view text) {
  const std::string original(text);
  double value = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !(value >= 0))
    return UsageError(fmt::format("--max-memory: '{}' is not a size (e.g. 512M, 4G)", original));
  std::string unit(p, text.data() + text.size());
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    return UsageError(fmt::format("--max-memory: unknown unit in '{}' (use K, M, G or T)", original));
  // 2^63 bytes (8 EiB) and more, or infinity, is no limit a machine has.
  if (!(value * scale < 9223372036854775808.0))
    return UsageError(fmt::format("--max-memory: '{}' is larger than any memory (e.g. 512M, 4G)", original));
  return static_cast<uint64_t>(value * scale);
}

std::string format_memory_size(uint64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024, kGiB = kMiB * 1024;
  if (bytes >= static_cast<uint64_t>(kGiB)) return fmt::format("{:.1f} GiB", bytes / kGiB);
  return fmt::format("{:.0f} MiB", bytes / kMiB);
}

}  // namespace tracedoc
