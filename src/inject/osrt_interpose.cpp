// `tracedoc capture --trace osrt-lite`: the OS runtime calls a training step waits in, recorded as
// nsys records them with `--trace osrt` (OSRT_API rows), for the calls that last at least
// $TRACEDOC_CAPTURE_OSRT_THRESHOLD_NS (default 1000 ns, nsys's --osrt-threshold default).
//
// "Lite" is the list: the blocking calls that explain a CPU thread that is not launching work —
// polls and selects (DataLoader queues, NCCL's and the TCP store's sockets), reads and writes
// (files, pipes from worker processes), socket calls, sleeps, semaphore and condition waits
// (CPython's locks and GIL), joins and waits for child processes, fsync, and ioctl (the CUDA
// driver's calls into the kernel). nsys also traces dozens of others (mmap, open, fopen, ...).
// _exit() is interposed too, to write the last frame of processes that end without exit().
//
// The definitions below override libc's only when the library is preloaded (the command sets
// LD_PRELOAD); loaded through CUDA_INJECTION64_PATH or NVTX_INJECTION64_PATH alone, libc comes
// first in symbol lookup and these are never called. Each call goes to the next definition
// (RTLD_NEXT), keeps errno as the real call left it, and is recorded only when it is the
// application's: the recorder's own calls and its threads pass straight through (in_recorder()).
#include <dlfcn.h>
#include <execinfo.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <string>

#include "inject/capture_writer.h"

namespace tracedoc::inject {
namespace {

int64_t osrt_threshold_ns() noexcept {
  static const int64_t threshold = [] {
    const int64_t x = env_int("TRACEDOC_CAPTURE_OSRT_THRESHOLD_NS", 1000);
    return x >= 0 ? x : int64_t{1000};
  }();
  return threshold;
}

// Only processes started by `tracedoc capture --trace osrt-lite` record (the variable is set with
// LD_PRELOAD and inherited by children).
bool osrt_enabled() noexcept {
  static const bool on = env_int("TRACEDOC_CAPTURE_OSRT", 0) == 1;
  return on;
}

// The real function: the next definition after this library, found once.
template <typename Fn>
Fn next_definition(std::atomic<Fn>& slot, const char* name, const char* version = nullptr) noexcept {
  Fn fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr) {
    void* sym = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : nullptr;
    if (sym == nullptr) sym = dlsym(RTLD_NEXT, name);
    fn = reinterpret_cast<Fn>(sym);
    slot.store(fn, std::memory_order_release);
  }
  return fn;
}

// --osrt-backtrace: each recorded call also carries its call stack, as nsys's OSRT_CALLCHAINS.
bool osrt_backtrace() noexcept {
  static const bool on = env_int("TRACEDOC_CAPTURE_OSRT_BACKTRACE", 0) == 1;
  return on;
}

// The caller's stack (return addresses, innermost first) after the recorder's own frames: the first
// address is where the program called the OS function.
void append_call_stack(capture::BodyWriter& out) noexcept {
  RecorderScope busy;  // the first backtrace() loads the unwinder: its reads are not the program's
  constexpr int kOwnFramesMax = 8;
  void* frames[capture::kMaxStackDepth + kOwnFramesMax];
  const int n = backtrace(frames, capture::kMaxStackDepth + kOwnFramesMax);
  Dl_info self{};
  static const void* own_base = dladdr(reinterpret_cast<void*>(&append_call_stack), &self) ? self.dli_fbase : nullptr;
  // Past the last of the recorder's own frames among the first few (a sanitizer's backtrace
  // interceptor may come before them).
  int first = 0;
  for (int i = 0; i < std::min(n, kOwnFramesMax); ++i) {
    Dl_info where{};
    if (dladdr(frames[i], &where) && where.dli_fbase == own_base) first = i + 1;
  }
  for (int i = first; i < n && i - first < capture::kMaxStackDepth; ++i)
    out.put<uint64_t>(reinterpret_cast<uintptr_t>(frames[i]));
}

// One call: start and end times around the real call, recorded when it lasted long enough.
class OsCall {
 public:
  explicit OsCall(const char* name) noexcept
      : name_(name), active_(osrt_enabled() && recorder_ready() && !in_recorder()) {
    if (!active_) return;
    // The process's first call opens the capture file now, not after the call, which would then
    // have started before the capture.
    active_ = CaptureWriter::get().enabled();
    start_ = now_ns();
  }
  // Records the call with its return value; returns it, errno as the real call left it.
  template <typename R>
  R done(R result) noexcept {
    if (!active_) return result;
    const int saved = errno;
    const int64_t end = now_ns();
    if (end - start_ >= osrt_threshold_ns()) record(static_cast<int64_t>(result), end);
    errno = saved;
    return result;
  }

 private:
  void record(int64_t result, int64_t end) noexcept {
    CaptureWriter& w = CaptureWriter::get();
    if (!w.recording(start_)) return;
    capture::OsCallBody b;
    b.tid = current_tid(), b.start = start_, b.end = end, b.return_value = result, b.name = w.string_id(name_);
    __attribute__((tls_model("initial-exec"))) thread_local std::string body;  // reused: no allocation per call
    body.clear();
    capture::BodyWriter bw(body);
    capture::put_body(bw, b);
    if (osrt_backtrace()) {
      append_call_stack(bw);
      w.addresses_recorded();
    }
    w.record(capture::RecordType::kOsCall, body);
  }

  const char* name_;
  bool active_;
  int64_t start_ = 0;
};

}  // namespace
}  // namespace tracedoc::inject

using tracedoc::inject::next_definition;
using tracedoc::inject::OsCall;

// The interposers: one line each, the real call wrapped in an OsCall named as nsys names it.
#define TRACEDOC_OSRT(ret, name, params, args)                        \
  extern "C" __attribute__((visibility("default"))) ret name params { \
    static std::atomic<ret(*) params> real{nullptr};                  \
    auto fn = next_definition(real, #name);                           \
    if (fn == nullptr) {                                              \
      errno = ENOSYS;                                                 \
      return static_cast<ret>(-1);                                    \
    }                                                                 \
    OsCall call(#name);                                               \
    return call.done(fn args);                                        \
  }

TRACEDOC_OSRT(int, poll, (struct pollfd * fds, nfds_t n, int timeout), (fds, n, timeout))
TRACEDOC_OSRT(int, ppoll, (struct pollfd * fds, nfds_t n, const struct timespec* t, const sigset_t* mask),
              (fds, n, t, mask))
TRACEDOC_OSRT(int, select, (int n, fd_set* r, fd_set* w, fd_set* e, struct timeval* t), (n, r, w, e, t))
TRACEDOC_OSRT(int, pselect, (int n, fd_set* r, fd_set* w, fd_set* e, const struct timespec* t, const sigset_t* mask),
              (n, r, w, e, t, mask))
TRACEDOC_OSRT(int, epoll_wait, (int fd, struct epoll_event* ev, int max, int timeout), (fd, ev, max, timeout))
TRACEDOC_OSRT(int, epoll_pwait, (int fd, struct epoll_event* ev, int max, int timeout, const sigset_t* mask),
              (fd, ev, max, timeout, mask))
TRACEDOC_OSRT(ssize_t, read, (int fd, void* buf, size_t n), (fd, buf, n))
TRACEDOC_OSRT(ssize_t, write, (int fd, const void* buf, size_t n), (fd, buf, n))
TRACEDOC_OSRT(ssize_t, pread, (int fd, void* buf, size_t n, off_t at), (fd, buf, n, at))
TRACEDOC_OSRT(ssize_t, pwrite, (int fd, const void* buf, size_t n, off_t at), (fd, buf, n, at))
TRACEDOC_OSRT(ssize_t, pread64, (int fd, void* buf, size_t n, off64_t at), (fd, buf, n, at))
TRACEDOC_OSRT(ssize_t, pwrite64, (int fd, const void* buf, size_t n, off64_t at), (fd, buf, n, at))
TRACEDOC_OSRT(ssize_t, readv, (int fd, const struct iovec* v, int n), (fd, v, n))
TRACEDOC_OSRT(ssize_t, writev, (int fd, const struct iovec* v, int n), (fd, v, n))
TRACEDOC_OSRT(ssize_t, recv, (int fd, void* buf, size_t n, int flags), (fd, buf, n, flags))
TRACEDOC_OSRT(ssize_t, recvfrom, (int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* len),
              (fd, buf, n, flags, from, len))
TRACEDOC_OSRT(ssize_t, recvmsg, (int fd, struct msghdr* m, int flags), (fd, m, flags))
TRACEDOC_OSRT(ssize_t, send, (int fd, const void* buf, size_t n, int flags), (fd, buf, n, flags))
TRACEDOC_OSRT(ssize_t, sendto, (int fd, const void* buf, size_t n, int flags, const struct sockaddr* to, socklen_t len),
              (fd, buf, n, flags, to, len))
TRACEDOC_OSRT(ssize_t, sendmsg, (int fd, const struct msghdr* m, int flags), (fd, m, flags))
TRACEDOC_OSRT(int, accept, (int fd, struct sockaddr* a, socklen_t* len), (fd, a, len))
TRACEDOC_OSRT(int, accept4, (int fd, struct sockaddr* a, socklen_t* len, int flags), (fd, a, len, flags))
TRACEDOC_OSRT(int, connect, (int fd, const struct sockaddr* a, socklen_t len), (fd, a, len))
TRACEDOC_OSRT(int, nanosleep, (const struct timespec* t, struct timespec* rest), (t, rest))
TRACEDOC_OSRT(int, clock_nanosleep, (clockid_t c, int flags, const struct timespec* t, struct timespec* rest),
              (c, flags, t, rest))
TRACEDOC_OSRT(int, usleep, (useconds_t us), (us))
TRACEDOC_OSRT(unsigned int, sleep, (unsigned int s), (s))
TRACEDOC_OSRT(int, sem_wait, (sem_t * s), (s))
TRACEDOC_OSRT(int, sem_timedwait, (sem_t * s, const struct timespec* t), (s, t))
TRACEDOC_OSRT(int, sem_clockwait, (sem_t * s, clockid_t c, const struct timespec* t), (s, c, t))
TRACEDOC_OSRT(int, pthread_join, (pthread_t t, void** result), (t, result))
TRACEDOC_OSRT(pid_t, waitpid, (pid_t pid, int* status, int options), (pid, status, options))
TRACEDOC_OSRT(int, fsync, (int fd), (fd))
TRACEDOC_OSRT(int, fdatasync, (int fd), (fd))

#undef TRACEDOC_OSRT

// Condition variables have two symbol versions in glibc: the current one (GLIBC_2.3.2) is the one
// programs link against, and the one plain dlsym might not return.
#define TRACEDOC_OSRT_VERSIONED(name, params, args)                   \
  extern "C" __attribute__((visibility("default"))) int name params { \
    static std::atomic<int(*) params> real{nullptr};                  \
    auto fn = next_definition(real, #name, "GLIBC_2.3.2");            \
    if (fn == nullptr) return ENOSYS;                                 \
    OsCall call(#name);                                               \
    return call.done(fn args);                                        \
  }

TRACEDOC_OSRT_VERSIONED(pthread_cond_wait, (pthread_cond_t * c, pthread_mutex_t* m), (c, m))
TRACEDOC_OSRT_VERSIONED(pthread_cond_timedwait, (pthread_cond_t * c, pthread_mutex_t* m, const struct timespec* t),
                        (c, m, t))

#undef TRACEDOC_OSRT_VERSIONED

// Python's multiprocessing workers (DataLoader workers) end with os._exit(), which skips atexit:
// the recorder writes its last frame first.
extern "C" __attribute__((visibility("default"))) [[noreturn]] void _exit(int status) {
  tracedoc::inject::flush_before_exit();
  static std::atomic<void (*)(int)> real{nullptr};
  if (auto fn = next_definition(real, "_exit")) fn(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// ioctl takes one optional argument, which the CUDA driver always passes.
extern "C" __attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  static std::atomic<int (*)(int, unsigned long, ...)> real{nullptr};
  auto fn = next_definition(real, "ioctl");
  if (fn == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  OsCall call("ioctl");
  return call.done(fn(fd, request, arg));
}
