// `tracedoc capture --sample cpu`: CPU samples with call stacks of every thread of the program, as
// nsys's `--sample=cpu` records them (COMPOSITE_EVENTS + SAMPLING_CALLCHAINS in its export).
//
// How: every thread is signalled (SIGPROF, to that thread) every 1/HZ seconds of the CPU time it
// uses, so a thread is sampled while it runs and never while it waits, as perf's cycle sampling does:
//  * by a perf event counting the thread's CPU time (perf_event_open, PERF_COUNT_SW_TASK_CLOCK, user
//    mode only, which perf_event_paranoid up to 2 allows for one's own threads): exact periods;
//  * where the kernel refuses perf events, by a POSIX timer on the thread's CPU-time clock, which
//    the kernel checks at its scheduler tick: at most CONFIG_HZ samples a second (often 250).
// Threads the program creates with pthread_create arm their sampler as they start; the recorder's
// thread also looks for other threads in /proc/self/task every 100 ms (and forgets ended ones).
//
// The handler unwinds the thread's stack with the DWARF unwinder glibc's backtrace() uses
// (libgcc's, reading each module's .eh_frame: no frame pointers needed, which libpython and
// libtorch do not keep) and puts the addresses in a lock-free ring of fixed slots: a handler can
// interrupt a thread holding any lock, so it takes none and allocates nothing. The recorder's thread
// moves the samples into the capture's buffer every 100 ms, and the writer records the executable
// mappings of the process (/proc/self/maps) that the reader needs to name the addresses: symbols are
// resolved when the capture is read, from the ELF files (ingest/elf_symbols.h), not in the program.
//
// Sampling starts when the library's globals are ready (capture_writer.cpp calls
// start_cpu_sampling), when the capture command asked for it: $TRACEDOC_CAPTURE_SAMPLE_HZ, set with
// LD_PRELOAD so that the library is loaded as the program starts, and in every program it executes.
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "inject/capture_hooks.h"
#include "inject/capture_writer.h"

namespace tracedoc::inject {
namespace {

using capture::kMaxStackDepth;
using capture::RecordType;

// Each slot holds one sample; 4,096 of them hold 100 ms of 40 threads busy at 1 kHz.
constexpr size_t kSlots = 4096;
// backtrace() also returns the handler's own frame and the signal trampoline's before the
// interrupted one.
constexpr int kHandlerFrames = 4;

// Every member initialized: the ring is constant-initialized, ready before any constructor runs.
struct Slot {
  std::atomic<uint64_t> published{0};  // the ring index + 1 once the sample is complete
  int64_t tid = 0, time = 0;
  int32_t cpu = 0;
  int32_t depth = 0;
  uintptr_t pcs[kMaxStackDepth] = {};
};
Slot g_slots[kSlots];
std::atomic<uint64_t> g_claimed{0}, g_consumed{0}, g_dropped{0};
std::atomic<bool> g_sampling{false};
int64_t g_period_ns = 0;

// The interrupted instruction: the first frame of the sample. backtrace() starts inside the
// handler, so the frames before this one are dropped.
uintptr_t interrupted_pc(const void* context) noexcept {
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

void on_sample(int, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  // A perf event stops after each signal: restarted first, so that the period runs from now. Not
  // through ioctl(), which --trace osrt-lite interposes.
  if (info != nullptr && (info->si_code == POLL_IN || info->si_code == POLL_HUP))
    ::syscall(SYS_ioctl, info->si_fd, PERF_EVENT_IOC_REFRESH, 1);
  if (!g_sampling.load(std::memory_order_relaxed)) {
    errno = saved_errno;
    return;
  }
  uint64_t index = g_claimed.load(std::memory_order_relaxed);
  do {
    if (index - g_consumed.load(std::memory_order_acquire) >= kSlots) {
      g_dropped.fetch_add(1, std::memory_order_relaxed);
      errno = saved_errno;
      return;
    }
  } while (!g_claimed.compare_exchange_weak(index, index + 1, std::memory_order_acq_rel));
  Slot& s = g_slots[index % kSlots];
  s.time = now_ns();
  s.tid = static_cast<int64_t>(::syscall(SYS_gettid));
  s.cpu = sched_getcpu();
  void* frames[kMaxStackDepth + kHandlerFrames];
  const int n = backtrace(frames, kMaxStackDepth + kHandlerFrames);
  const uintptr_t pc = interrupted_pc(context);
  int first = -1;
  for (int i = 0; i < std::min(n, kHandlerFrames + 1) && first < 0; ++i) {
    if (reinterpret_cast<uintptr_t>(frames[i]) == pc) first = i;
  }
  if (first < 0) {  // the unwinder could not step out of the handler: the interrupted pc alone
    s.pcs[0] = pc;
    s.depth = pc != 0 ? 1 : 0;
  } else {
    s.depth = std::min(n - first, kMaxStackDepth);
    for (int i = 0; i < s.depth; ++i) s.pcs[i] = reinterpret_cast<uintptr_t>(frames[first + i]);
  }
  s.published.store(index + 1, std::memory_order_release);
  errno = saved_errno;
}

// What samples a thread: a perf event counting its CPU time, or a POSIX timer on its CPU-time clock.
struct ThreadSampler {
  int perf_fd = -1;
  timer_t timer{};
};

// The sampled threads (tid -> its sampler), touched by the recorder's thread, by new threads as they
// start, and after fork by the child's single thread. Function-local: constructed on first use,
// whatever the order in which the library's globals are constructed.
std::mutex g_samplers_mutex;
std::map<int64_t, ThreadSampler>& samplers() {
  static auto* t = new std::map<int64_t, ThreadSampler>();  // never destroyed: the recorder may tick during exit
  return *t;
}
// Whether the kernel lets this process open perf events (perf_event_paranoid, seccomp, containers):
// decided by the first thread armed.
enum class PerfAccess : int { kUnknown, kYes, kNo };
std::atomic<PerfAccess> g_perf{PerfAccess::kUnknown};

// A software perf event counting the thread's CPU time (user mode), which signals the thread itself
// every period: the kernel's high-resolution timer, not its tick. The event stops after each signal
// (PERF_EVENT_IOC_REFRESH 1) and the handler restarts it.
int open_perf_sampler(int64_t tid) noexcept {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = static_cast<uint64_t>(g_period_ns);
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.wakeup_events = 1;
  const int fd =
      static_cast<int>(::syscall(SYS_perf_event_open, &attr, static_cast<pid_t>(tid), -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return -1;
  f_owner_ex owner{F_OWNER_TID, static_cast<pid_t>(tid)};
  if (::fcntl(fd, F_SETFL, O_ASYNC) != 0 || ::fcntl(fd, F_SETSIG, SIGPROF) != 0 ||
      ::fcntl(fd, F_SETOWN_EX, &owner) != 0 || ::ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A POSIX timer on the thread's CPU-time clock (the kernel's MAKE_THREAD_CPUCLOCK(tid,
// CPUCLOCK_SCHED), which pthread_getcpuclockid returns, for a thread known only by its id),
// signalling that thread. The kernel checks it at its scheduler tick.
bool create_timer(int64_t tid, timer_t* timer) noexcept {
  const auto clock = static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | 6);
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev._sigev_un._tid = static_cast<pid_t>(tid);
  if (timer_create(clock, &ev, timer) != 0) return false;
  itimerspec spec{};
  spec.it_interval.tv_sec = g_period_ns / 1'000'000'000;
  spec.it_interval.tv_nsec = g_period_ns % 1'000'000'000;
  spec.it_value = spec.it_interval;
  if (timer_settime(*timer, 0, &spec, nullptr) != 0) {
    timer_delete(*timer);
    return false;
  }
  return true;
}

// Starts sampling thread `tid` (under g_samplers_mutex).
void start_sampler(int64_t tid) {
  RecorderScope busy;  // its ioctl is the recorder's, not an OS call of the program
  ThreadSampler sampler;
  if (g_perf.load() != PerfAccess::kNo) {
    sampler.perf_fd = open_perf_sampler(tid);
    if (g_perf.load() == PerfAccess::kUnknown) g_perf.store(sampler.perf_fd >= 0 ? PerfAccess::kYes : PerfAccess::kNo);
  }
  if (sampler.perf_fd < 0 && !create_timer(tid, &sampler.timer)) return;
  samplers().emplace(tid, sampler);
}

void disarm(const ThreadSampler& sampler) {
  if (sampler.perf_fd >= 0)
    ::close(sampler.perf_fd);
  else
    timer_delete(sampler.timer);
}

// Starts a sampler on every thread that has none, and stops those of threads that ended.
void follow_threads() noexcept {
  std::lock_guard<std::mutex> lock(g_samplers_mutex);
  try {
    std::set<int64_t> alive;
    if (DIR* tasks = ::opendir("/proc/self/task")) {
      while (const dirent* e = ::readdir(tasks)) {
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9') alive.insert(std::strtoll(e->d_name, nullptr, 10));
      }
      ::closedir(tasks);
    }
    const int64_t recorder = recorder_thread_id();
    auto& armed = samplers();
    for (const int64_t tid : alive) {
      if (tid != recorder && !armed.contains(tid)) start_sampler(tid);
    }
    for (auto it = armed.begin(); it != armed.end();) {
      if (alive.contains(it->first)) {
        ++it;
      } else {
        disarm(it->second);
        it = armed.erase(it);
      }
    }
  } catch (...) {
    // Out of memory: the new threads are armed on the next tick.
  }
}

std::mutex g_drain_mutex;

void drain() noexcept {
  std::unique_lock<std::mutex> lock(g_drain_mutex, std::try_to_lock);
  if (!lock.owns_lock()) return;
  RecorderScope busy;
  CaptureWriter& w = CaptureWriter::get();
  try {
    uint64_t at = g_consumed.load(std::memory_order_relaxed);
    const uint64_t end = g_claimed.load(std::memory_order_acquire);
    if (at == end) return;
    w.addresses_recorded();
    std::string body;
    for (; at < end; ++at) {
      Slot& s = g_slots[at % kSlots];
      if (s.published.load(std::memory_order_acquire) != at + 1) break;  // still being written
      // The recorder's thread may have been armed before it stored its id: its samples are not the program's.
      if (w.recording(s.time) && s.tid != recorder_thread_id()) {
        body.clear();
        capture::BodyWriter b(body);
        b.put<int64_t>(s.tid).put<int64_t>(s.time).put<int32_t>(s.cpu);
        for (int i = 0; i < s.depth; ++i) b.put<uint64_t>(s.pcs[i]);
        w.record(RecordType::kCpuSample, body);
      }
      g_consumed.store(at + 1, std::memory_order_release);
    }
  } catch (...) {
    // Out of memory: the samples stay in the ring for the next tick.
  }
}

void tick() noexcept {
  if (!g_sampling.load()) return;
  follow_threads();
  drain();
}

// fork() while the recorder's thread holds the sampler's locks would leave them held in the child
// forever: they are taken around the fork (before the writer's own lock, the order drain() takes them).
void atfork_prepare() noexcept {
  g_drain_mutex.lock();
  g_samplers_mutex.lock();
}
void atfork_parent() noexcept {
  g_samplers_mutex.unlock();
  g_drain_mutex.unlock();
}
// In the child: the parent's timers are not inherited (nor its threads), its perf events' descriptors
// are but sample the parent's threads; the ring's samples are the parent's, which its recorder writes.
void atfork_child() noexcept {
  g_sampling.store(false);
  g_consumed.store(g_claimed.load());
  for (const auto& [tid, sampler] : samplers()) {
    if (sampler.perf_fd >= 0) ::close(sampler.perf_fd);  // the parent's threads' events
  }
  samplers().clear();
  g_samplers_mutex.unlock();
  g_drain_mutex.unlock();
  g_sampling.store(true);
  start_recorder_thread();
  follow_threads();
}

// A thread the program creates starts its own sampler before it runs its function: sampled from its
// first instruction, however short it lives (the scan of /proc/self/task catches the others).
struct ThreadStart {
  void* (*function)(void*);
  void* argument;
};
void* sampled_thread_start(void* p) {
  const ThreadStart start = *static_cast<ThreadStart*>(p);
  delete static_cast<ThreadStart*>(p);
  if (g_sampling.load()) {
    std::lock_guard<std::mutex> lock(g_samplers_mutex);
    try {
      const int64_t tid = current_tid();
      if (!samplers().contains(tid)) start_sampler(tid);
    } catch (...) {
      // Out of memory: the scan arms it later.
    }
  }
  void* result = start.function(start.argument);
  // A short-lived thread ends before the recorder's next look at the threads' names: its name (what
  // pthread_setname_np set) is recorded while it still exists.
  CaptureWriter::get().record_thread_names();
  return result;
}

}  // namespace

void start_cpu_sampling() noexcept {
  const int64_t hz = env_int("TRACEDOC_CAPTURE_SAMPLE_HZ", 0);
  if (hz <= 0) return;
  CaptureWriter& w = CaptureWriter::get();
  if (!w.enabled()) return;
  struct sigaction old {};
  if (sigaction(SIGPROF, nullptr, &old) == 0 && (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))) {
    // The program samples itself (gperftools, a Python profiler): its handler is left alone.
    std::fprintf(stderr, "tracedoc capture: the program handles SIGPROF itself: CPU samples are not recorded\n");
    return;
  }
  g_period_ns = std::max<int64_t>(1'000'000'000 / hz, 1);
  // $TRACEDOC_CAPTURE_SAMPLE_TIMERS=1: the POSIX timers even where perf events are allowed (the
  // tests of the fallback).
  if (env_int("TRACEDOC_CAPTURE_SAMPLE_TIMERS", 0) == 1) g_perf.store(PerfAccess::kNo);
  // The first backtrace() loads the unwinder (dlopen, malloc): done here, never in the handler.
  void* warm[4];
  (void)backtrace(warm, 4);
  struct sigaction sa {};
  sa.sa_sigaction = on_sample;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  if (sigaction(SIGPROF, &sa, nullptr) != 0) return;
  add_tick_hook(tick);
  add_final_flush_hook(drain);
  pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
  g_sampling.store(true);
  // The threads that exist now (the main thread), before the first tick.
  follow_threads();
}

}  // namespace tracedoc::inject

// pthread_create, when the library is preloaded (--sample cpu): the new thread starts in
// sampled_thread_start. The recorder's own threads, and every thread while sampling is off, start
// as the program asked.
extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                     void* (*function)(void*), void* argument) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static std::atomic<Create> real{nullptr};
  Create create = real.load(std::memory_order_acquire);
  if (create == nullptr) {
    create = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
    real.store(create, std::memory_order_release);
  }
  if (create == nullptr) return EAGAIN;
  using namespace tracedoc::inject;
  if (!g_sampling.load(std::memory_order_relaxed) || in_recorder()) return create(thread, attr, function, argument);
  auto* start = new (std::nothrow) ThreadStart{function, argument};
  if (start == nullptr) return create(thread, attr, function, argument);
  const int result = create(thread, attr, sampled_thread_start, start);
  if (result != 0) delete start;
  return result;
}
