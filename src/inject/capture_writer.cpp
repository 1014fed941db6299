#include "inject/capture_writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <string>
#include <unordered_map>

#include "inject/capture_hooks.h"

namespace tracedoc::inject {

namespace {

using capture::BodyWriter;
using capture::RecordType;

constexpr size_t kFlushBytes = 256 * 1024;
constexpr int kFlushEveryMs = 100;

std::mutex g_mutex;  // the buffer, the string table, the file
std::unordered_map<std::string, uint32_t> g_strings;
std::atomic<bool> g_flusher_started{false};
int g_wake[2] = {-1, -1};  // the flusher's self-pipe (signals write to it)
std::atomic<int> g_pending_signal{0};
std::atomic<uint64_t> g_fork_generation{0};               // bumped in a forked child: thread-local caches start over
std::atomic<CaptureWriter*> g_writer{nullptr};            // set once CaptureWriter::get() has made it
std::unordered_map<int64_t, std::string> g_thread_names;  // tid -> name last recorded (record_thread_names)
uint64_t g_thread_names_generation = 0;
std::atomic<int64_t> g_flusher_tid{-1};  // the recorder's own thread: not named in the capture
constexpr char kFlusherName[] = "tracedoc-rec";

// Set once this file's globals above are constructed. A preloaded library's interposers can be
// called by another library's constructors before that (initialization order across libraries is
// not ours to choose): until then they only pass calls through.
std::atomic<bool> g_ready{false};
struct ReadyMark {
  ReadyMark() {
    g_ready.store(true);
    start_cpu_sampling();
  }
} g_ready_mark;

// Per-thread cache of string ids, looked up without building a std::string; a miss goes to the
// process's table (under the lock), which writes the kString record.
struct TransparentHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
struct StringCache {
  uint64_t generation = ~uint64_t{0};
  std::unordered_map<std::string, uint32_t, TransparentHash, std::equal_to<>> ids;
};
// initial-exec: a thread-local in a library loaded with dlopen otherwise costs a __tls_get_addr
// call per access, which is most of an event's cost.
__attribute__((tls_model("initial-exec"))) thread_local StringCache t_strings;
__attribute__((tls_model("initial-exec"))) thread_local int t_recorder_depth = 0;

bool write_all(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Signals whose default action kills the process: the handler wakes the flusher, which writes
// everything (CUPTI's buffers included, which is not safe inside a handler) and re-raises.
void on_fatal_signal(int sig) {
  RecorderScope busy;
  g_pending_signal.store(sig);
  const char byte = 1;
  if (g_wake[1] >= 0)
    (void)!::syscall(SYS_write, g_wake[1], &byte, 1);
  else
    CaptureWriter::get().flush_from_signal();
}

void install_signal_handlers() {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // An application's own handler (Python turns SIGINT into KeyboardInterrupt and exits normally,
    // which flushes through atexit) is left alone.
    if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
  }
}

void final_flush() {
  RecorderScope busy;
  CaptureWriter::get().record_thread_names();
  run_final_flush_hooks();  // CUPTI: hand over the activity buffers still held; the last CPU samples
  CaptureWriter::get().record_new_modules();
  CaptureWriter::get().flush();
}

void flusher_loop() {
  RecorderScope busy;  // for good: nothing this thread does is the application's
  g_flusher_tid.store(current_tid());
  pthread_setname_np(pthread_self(), kFlusherName);
  // Every 10th wake-up (about a second) CUPTI is also made to hand over its partly filled
  // buffers, so a crash loses at most about a second of CUDA activity.
  for (int tick = 1;; ++tick) {
    pollfd p{g_wake[0], POLLIN, 0};
    const int r = ::poll(&p, 1, kFlushEveryMs);
    if (r > 0) {
      char drain[64];
      (void)!::read(g_wake[0], drain, sizeof(drain));
    }
    const int sig = g_pending_signal.exchange(0);
    if (sig != 0) {
      final_flush();
      signal(sig, SIG_DFL);
      raise(sig);
      return;
    }
    run_tick_hooks();
    CaptureWriter::get().record_new_modules();
    if (tick % 10 == 0) {
      run_final_flush_hooks();
      CaptureWriter::get().record_thread_names();
    }
    CaptureWriter::get().flush();
  }
}

void start_flusher() {
  if (g_flusher_started.load(std::memory_order_relaxed)) return;  // the usual case: one plain load
  bool expected = false;
  if (!g_flusher_started.compare_exchange_strong(expected, true)) return;
  if (::pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_wake[0] = g_wake[1] = -1;
    return;
  }
  // Named here, by its creator: on a loaded machine the new thread may not have run (nor stored its
  // tid) when the program exits, and the exit path's thread names must still leave it out.
  std::thread flusher(flusher_loop);
  pthread_setname_np(flusher.native_handle(), kFlusherName);
  flusher.detach();
  // Returns once the thread runs its loop: a program that forks right after its first recorded event
  // must not catch the new thread still starting, inside the allocator. glibc's malloc is locked
  // around fork, but a sanitizer's allocator is not (GCC 12's ASan), and the child would inherit its
  // lock held forever. Bounded: a thread that never gets to run does not stall the program.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (g_flusher_tid.load() < 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
}

void atfork_prepare() { g_mutex.lock(); }
void atfork_parent() { g_mutex.unlock(); }
void atfork_child() {
  RecorderScope busy;
  g_mutex.unlock();
  g_fork_generation.fetch_add(1);
  CaptureWriter::get().reopen_in_child();
}

}  // namespace

int64_t env_int(const char* name, int64_t fallback) noexcept {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == 0) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return end != nullptr && *end == 0 ? static_cast<int64_t>(x) : fallback;
}

bool in_recorder() noexcept { return t_recorder_depth > 0; }
bool recorder_ready() noexcept { return g_ready.load(std::memory_order_relaxed); }
RecorderScope::RecorderScope() noexcept { ++t_recorder_depth; }
RecorderScope::~RecorderScope() { --t_recorder_depth; }

int64_t now_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t current_tid() noexcept {
  // A system call per event would cost more than everything else together; a thread keeps its id
  // (a forked child's thread gets a new one: atfork_child resets the cache's generation).
  __attribute__((tls_model("initial-exec"))) thread_local int64_t tid = -1;
  __attribute__((tls_model("initial-exec"))) thread_local uint64_t seen = 0;
  if (tid < 0 || seen != g_fork_generation.load(std::memory_order_relaxed)) {
    tid = static_cast<int64_t>(::syscall(SYS_gettid));
    seen = g_fork_generation.load(std::memory_order_relaxed);
  }
  return tid;
}

CaptureWriter& CaptureWriter::get() noexcept {
  static CaptureWriter* writer = [] {
    RecorderScope busy;             // opening the file must not record (and re-enter this initialization)
    auto* w = new CaptureWriter();  // never destroyed: threads may still record during exit
    g_writer.store(w);
    if (w->enabled()) {
      start_flusher();  // now, not inside the first recorded range, where it would cost that range
      std::atexit(final_flush);
      pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
      install_signal_handlers();
    }
    return w;
  }();
  return *writer;
}

CaptureWriter* CaptureWriter::existing() noexcept { return g_writer.load(); }

void flush_before_exit() noexcept {
  CaptureWriter* w = CaptureWriter::existing();
  if (w != nullptr && w->enabled()) final_flush();
}

CaptureWriter::CaptureWriter() noexcept {
  const char* dir = std::getenv("TRACEDOC_CAPTURE_DIR");
  if (dir == nullptr || *dir == 0) return;
  dir_ = dir;
  process_start_ = now_ns();
  delay_ns_ = env_int("TRACEDOC_CAPTURE_DELAY_NS", 0);
  duration_ns_ = env_int("TRACEDOC_CAPTURE_DURATION_NS", -1);
  if (const char* r = std::getenv("TRACEDOC_CAPTURE_NVTX_RANGE"); r != nullptr && *r != 0) {
    range_kind_ = RangeKind::kNvtx;
    const std::string spec = r;
    const size_t at = spec.rfind('@');
    range_text_ = at == std::string::npos ? spec : spec.substr(0, at);
    range_domain_ = at == std::string::npos ? std::string() : spec.substr(at + 1);
  } else if (env_int("TRACEDOC_CAPTURE_PROFILER_API", 0) != 0) {
    range_kind_ = RangeKind::kProfilerApi;
  }
  open_file();
}

void CaptureWriter::open_file() noexcept {
  const int64_t pid = ::getpid();
  std::string name = "pid" + std::to_string(pid);
  if (const char* rank = std::getenv("RANK"); rank != nullptr && *rank != 0)
    name = "rank" + std::string(rank) + "." + name;
  const std::string path = dir_ + "/" + name + ".tdcap";
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return;
  if (!write_all(fd_, capture::kFileMagic, sizeof(capture::kFileMagic))) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  // The process record: its pid, parent and the first word of its command line.
  std::string cmd;
  if (int f = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); f >= 0) {
    char buf[4096];
    const ssize_t n = ::read(f, buf, sizeof(buf) - 1);
    ::close(f);
    if (n > 0) cmd.assign(buf, strnlen(buf, static_cast<size_t>(n)));
    const size_t slash = cmd.rfind('/');
    if (slash != std::string::npos) cmd = cmd.substr(slash + 1);
  }
  std::string body;
  BodyWriter(body).put<int64_t>(pid).put<int64_t>(::getppid()).put<int64_t>(process_start_).bytes(cmd);
  std::lock_guard<std::mutex> lock(g_mutex);
  buffer_.clear();
  capture::append_record(buffer_, RecordType::kProcess, body);
  write_frame_locked();
}

bool CaptureWriter::recording(int64_t t) const noexcept {
  if (!enabled()) return false;
  const int64_t begin = process_start_ + delay_ns_;
  if (t < begin) return false;
  if (duration_ns_ >= 0 && t >= begin + duration_ns_) return false;
  if (range_kind_ != RangeKind::kNone && (t < range_start_ || t > range_end_)) return false;
  return true;
}

void CaptureWriter::record(RecordType type, std::string_view body) noexcept {
  if (!enabled() || body.size() > 0xFFFF) return;
  RecorderScope busy;
  try {
    start_flusher();
    std::lock_guard<std::mutex> lock(g_mutex);
    capture::append_record(buffer_, type, body);
    if (buffer_.size() >= kFlushBytes) write_frame_locked();
  } catch (...) {
    // Out of memory while recording: the event is lost, the application goes on.
  }
}

uint32_t CaptureWriter::string_id(std::string_view text) noexcept {
  if (!enabled()) return 0;
  text = text.substr(0, 0xFFF0);
  StringCache& cache = t_strings;
  const uint64_t generation = g_fork_generation.load(std::memory_order_relaxed);
  if (cache.generation != generation) {
    cache.ids.clear();
    cache.generation = generation;
  }
  if (auto hit = cache.ids.find(text); hit != cache.ids.end()) return hit->second;
  RecorderScope busy;
  try {
    const uint32_t id = intern_locked(text);
    if (cache.ids.size() < 65536) cache.ids.emplace(std::string(text), id);
    return id;
  } catch (...) {
    return 0;
  }
}

uint32_t CaptureWriter::intern_locked(std::string_view text) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    const std::string key(text);
    auto [it, added] = g_strings.try_emplace(key, static_cast<uint32_t>(g_strings.size() + 1));
    if (added) {
      std::string body;
      BodyWriter(body).put(it->second).bytes(key);
      capture::append_record(buffer_, RecordType::kString, body);
    }
    return it->second;
  }
}

void CaptureWriter::record_thread_names() noexcept {
  if (!enabled()) return;
  RecorderScope busy;
  // The flusher and the exit path may both get here: the second waits for nothing and skips.
  static std::mutex names_mutex;
  std::unique_lock<std::mutex> names_lock(names_mutex, std::try_to_lock);
  if (!names_lock.owns_lock()) return;
  try {
    const uint64_t generation = g_fork_generation.load();
    if (g_thread_names_generation != generation) g_thread_names.clear(), g_thread_names_generation = generation;
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return;
    while (const dirent* e = ::readdir(tasks)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const int64_t tid = std::strtoll(e->d_name, nullptr, 10);
      if (tid == g_flusher_tid.load()) continue;
      char comm[64] = {};
      const std::string path = std::string("/proc/self/task/") + e->d_name + "/comm";
      const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (f < 0) continue;
      ssize_t n = ::read(f, comm, sizeof(comm) - 1);
      ::close(f);
      while (n > 0 && (comm[n - 1] == '\n' || comm[n - 1] == 0)) --n;
      if (n <= 0) continue;
      std::string name(comm, static_cast<size_t>(n));
      if (name == kFlusherName) continue;  // the flusher before it stored its tid
      auto [it, added] = g_thread_names.try_emplace(tid, name);
      if (!added && it->second == name) continue;
      it->second = name;
      std::string body;
      BodyWriter(body).put(tid).bytes(name);
      record(RecordType::kOsThreadName, body);
    }
    ::closedir(tasks);
  } catch (...) {
    // Out of memory: the names are left out.
  }
}

void CaptureWriter::record_new_modules() noexcept {
  if (!enabled() || !modules_stale_.exchange(false)) return;
  RecorderScope busy;
  // The flusher and the exit path may both get here: the second skips.
  static std::mutex modules_mutex;
  std::unique_lock<std::mutex> modules_lock(modules_mutex, std::try_to_lock);
  if (!modules_lock.owns_lock()) return;
  static uint64_t generation = 0;
  static auto* recorded = new std::map<uint64_t, std::string>();  // start -> path, recorded once each
  if (generation != g_fork_generation.load()) recorded->clear(), generation = g_fork_generation.load();
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  try {
    char line[4096];
    while (std::fgets(line, sizeof(line), maps) != nullptr) {
      unsigned long start = 0, end = 0, offset = 0;
      char perms[8] = {};
      int path_at = 0;
      if (std::sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &offset, &path_at) < 4) continue;
      if (perms[2] != 'x') continue;
      std::string path(line + path_at);
      while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
      auto [it, added] = recorded->try_emplace(start, path);
      if (!added && it->second == path) continue;
      it->second = path;
      std::string body;
      BodyWriter(body).put<uint64_t>(start).put<uint64_t>(end).put<uint64_t>(offset).bytes(path);
      record(RecordType::kModule, body);
    }
  } catch (...) {
    // Out of memory: the rest are recorded next time.
    modules_stale_.store(true);
  }
  std::fclose(maps);
}

void CaptureWriter::flush() noexcept {
  if (!enabled()) return;
  RecorderScope busy;
  std::lock_guard<std::mutex> lock(g_mutex);
  write_frame_locked();
}

void CaptureWriter::flush_from_signal() noexcept {
  RecorderScope busy;
  if (!enabled() || !g_mutex.try_lock()) return;
  write_frame_locked();
  g_mutex.unlock();
}

void CaptureWriter::write_frame_locked() noexcept {
  if (fd_ < 0 || buffer_.empty()) return;
  // Header and payload in one write: a frame is on disk whole or torn at its end, never interleaved.
  std::string frame;
  try {
    frame = capture::frame_of(buffer_);
  } catch (...) {
    buffer_.clear();
    return;
  }
  (void)write_all(fd_, frame.data(), frame.size());
  buffer_.clear();
}

void CaptureWriter::open_range(int64_t t) noexcept {
  if (range_start_ == INT64_MAX) range_start_ = t;
}

// The first end after the start closes the capture range for good, as nsys's default
// --capture-range-end=stop; the bounds are recorded for the reader.
void CaptureWriter::close_range(int64_t t) noexcept {
  if (range_start_ == INT64_MAX || range_end_ != INT64_MAX) return;
  range_end_ = t;
  std::string body;
  BodyWriter(body).put(range_start_.load()).put(range_end_.load());
  record(RecordType::kCaptureRange, body);
}

bool CaptureWriter::nvtx_range_begins(std::string_view text, std::string_view domain, int64_t t) noexcept {
  if (range_kind_ != RangeKind::kNvtx || text != range_text_ || domain != range_domain_) return false;
  open_range(t);
  return true;
}

bool CaptureWriter::nvtx_range_ends(std::string_view text, std::string_view domain, int64_t t) noexcept {
  if (range_kind_ != RangeKind::kNvtx || text != range_text_ || domain != range_domain_) return false;
  close_range(t);
  return true;
}

void CaptureWriter::profiler_api(bool start, int64_t t) noexcept {
  if (range_kind_ != RangeKind::kProfilerApi) return;
  if (start)
    open_range(t);
  else
    close_range(t);
}

void CaptureWriter::reopen_in_child() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
  g_strings.clear();
  // The parent's flusher thread and pipe do not exist here: the child starts its own on first use.
  if (g_wake[0] >= 0) ::close(g_wake[0]);
  if (g_wake[1] >= 0) ::close(g_wake[1]);
  g_wake[0] = g_wake[1] = -1;
  g_flusher_started.store(false);
  g_flusher_tid.store(-1);
  process_start_ = now_ns();
  open_file();
}

}  // namespace tracedoc::inject

namespace tracedoc::inject {

namespace {
using HookSlots = std::atomic<FlushHook>[4];
HookSlots g_final_hooks, g_tick_hooks;

void add_hook(HookSlots& slots, FlushHook hook) noexcept {
  for (auto& slot : slots) {
    FlushHook empty = nullptr;
    if (slot.compare_exchange_strong(empty, hook)) return;
  }
}
void run_hooks(HookSlots& slots) noexcept {
  for (auto& slot : slots) {
    if (FlushHook h = slot.load()) h();
  }
}
}  // namespace

void add_final_flush_hook(FlushHook hook) noexcept { add_hook(g_final_hooks, hook); }
void run_final_flush_hooks() noexcept { run_hooks(g_final_hooks); }
void add_tick_hook(FlushHook hook) noexcept { add_hook(g_tick_hooks, hook); }
void run_tick_hooks() noexcept { run_hooks(g_tick_hooks); }
int64_t recorder_thread_id() noexcept { return g_flusher_tid.load(); }
void start_recorder_thread() noexcept {
  RecorderScope busy;  // the thread is the recorder's: not sampled, its calls not recorded
  if (CaptureWriter::get().enabled()) start_flusher();
}

}  // namespace tracedoc::inject
