// A real CPU program with known hot functions and a known blocking call site, for the tests of
// `tracedoc capture --sample cpu` and `--osrt-backtrace` (no NVTX, no GPU: the recorder is
// preloaded).
//
//   cpu_program hot N        the main thread runs N million steps of arithmetic (about N ms) in
//                            hot::burn_cycles(long), called from hot::train_step(); a thread named
//                            "side" runs N/4 million in side_spin(); a forked child N/4 million in
//                            child_spin(), then exits
//   cpu_program wait N       N times: wait_for_data() polls a pipe that no one writes, 20 ms each
//   cpu_program bench N      N million steps in hot::burn_cycles; prints "cpu_ns X", the CPU time
//                            they took, the sampler's handler included (bench/capture_overhead)
//   cpu_program signals N    the same, while a perf event of the thread's CPU time signals it every
//                            millisecond and a handler that does nothing else re-arms it: what the
//                            kernel alone charges for sampling at 1 kHz (bench/capture_overhead)
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

long thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1'000'000'000L + ts.tv_nsec;
}

volatile long g_sink = 0;

}  // namespace

namespace hot {

// A fixed amount of arithmetic: `millions` million steps of a random number generator (about a
// millisecond each), no system call and no clock read in between, so that every sample taken while
// it runs lands in this function.
__attribute__((noinline)) void burn_cycles(long millions) {
  unsigned long x = 1;  // unsigned: the generator wraps by design
  for (long i = 0; i < millions * 1'000'000L; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    asm volatile("" : "+r"(x));  // each step is done: the compiler may not fold the loop
  }
  g_sink = static_cast<long>(x);
}

__attribute__((noinline)) void train_step(long ms) {
  burn_cycles(ms);
  g_sink = g_sink + 1;  // not a tail call: train_step stays on the stack
}

}  // namespace hot

extern "C" __attribute__((noinline)) void side_spin(long ms) {
  hot::burn_cycles(ms);
  g_sink = g_sink + 1;
}

extern "C" __attribute__((noinline)) void child_spin(long ms) {
  hot::burn_cycles(ms);
  g_sink = g_sink + 1;
}

extern "C" __attribute__((noinline)) int wait_for_data(int fd) {
  pollfd p{fd, POLLIN, 0};
  const int r = poll(&p, 1, 20);
  g_sink = g_sink + r;
  return r;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const long n = argc > 2 ? std::atol(argv[2]) : 0;
  if (mode == "hot") {
    std::thread side([n] {
      pthread_setname_np(pthread_self(), "side");
      side_spin(n / 4);
    });
    hot::train_step(n);
    side.join();
    const pid_t child = fork();
    if (child == 0) {
      child_spin(n / 4);
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return 0;
  }
  if (mode == "wait") {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    for (long i = 0; i < n; ++i) wait_for_data(fds[0]);
    return 0;
  }
  if (mode == "signals") {
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.sample_period = 1'000'000;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.wakeup_events = 1;
    const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0) {
      std::printf("no perf events\n");
      return 0;
    }
    struct sigaction sa {};
    sa.sa_sigaction = [](int, siginfo_t* info, void*) { syscall(SYS_ioctl, info->si_fd, PERF_EVENT_IOC_REFRESH, 1); };
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, nullptr);
    f_owner_ex owner{F_OWNER_TID, static_cast<pid_t>(syscall(SYS_gettid))};
    fcntl(fd, F_SETFL, O_ASYNC);
    fcntl(fd, F_SETSIG, SIGPROF);
    fcntl(fd, F_SETOWN_EX, &owner);
    ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
  }
  if (mode == "bench" || mode == "signals") {
    const long before = thread_cpu_ns();
    hot::burn_cycles(n);
    std::printf("cpu_ns %ld\n", thread_cpu_ns() - before);
    return 0;
  }
  std::fprintf(stderr, "usage: cpu_program hot N | wait N | bench N | signals N\n");
  return 2;
}
