// A real program annotated with NVTX 3 (header-only, from the CUDA toolkit), for the capture
// tests: NVTX runs without a GPU, so `tracedoc capture` records it on any machine.
//
//   nvtx_program ranges [EXIT]   push/pop ranges nested in three steps, marks, a named domain with a
//                                registered string, a start/end range ended on another thread,
//                                threads named through NVTX and one by pthread_setname_np, a
//                                wide-character range; exits with EXIT (default 0)
//   nvtx_program fork            the parent and a forked child each push ranges
//   nvtx_program window          "warmup", then "capture" (nesting "inside"), then "after"
//   nvtx_program forever         pushes ranges until killed (the crash test), printing "ready"
//                                once a second of them has been recorded
//   nvtx_program bench N         N empty push/pop pairs; prints "ns_per_range X" (bench/capture_overhead)
//   nvtx_program steps S R US    S steps of R ranges around US µs of work each; prints "step_ns X"
//   nvtx_program syscalls N      N poll(no fds, 0 ms) calls; prints "ns_per_call X" (bench/capture_overhead)
//   nvtx_program waits           the waits of a training loop, for --trace osrt-lite: 3 usleep(2 ms)
//                                and a nanosleep(5 ms); a "loader" thread that sleeps 20 ms
//                                (clock_nanosleep) before each of 5 bytes it writes to a pipe, which
//                                the main thread polls for in 5 "step" ranges; a forked child that
//                                sleeps 10 ms (usleep), waited for (waitpid); the loader joined
//                                (pthread_join) while it sleeps its last 30 ms
#include <nvtx3/nvToolsExt.h>
#include <poll.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

void busy(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

nvtxEventAttributes_t attributes(uint32_t argb) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = argb;
  return a;
}

int ranges(int exit_code) {
  nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "trainer");
  nvtxDomainHandle_t domain = nvtxDomainCreateA("training");
  nvtxStringHandle_t optimizer = nvtxDomainRegisterStringA(domain, "optimizer.step");
  const nvtxRangeId_t load = nvtxRangeStartA("data load");
  std::thread loader([load] {
    nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "loader");
    busy(200);
    nvtxRangeEnd(load);  // ends on another thread than it started
  });
  loader.join();
  // A thread named the way PyTorch names its threads (pthread_setname_np, not NVTX), alive at exit.
  std::atomic<bool> named{false};
  std::thread([&named] {
    pthread_setname_np(pthread_self(), "pt_worker");
    named = true;
    for (;;) pause();
  }).detach();
  while (!named) std::this_thread::yield();
  for (int step = 0; step < 3; ++step) {
    nvtxRangePushA(("step " + std::to_string(step)).c_str());
    nvtxRangePushA("forward");
    busy(300);
    nvtxMarkA("loss computed");
    nvtxRangePop();
    nvtxEventAttributes_t a = attributes(0xFF00FF00);
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "backward";
    nvtxRangePushEx(&a);
    busy(500);
    nvtxRangePop();
    nvtxEventAttributes_t o = attributes(0xFFFF0000);
    o.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    o.message.registered = optimizer;
    nvtxDomainRangePushEx(domain, &o);
    busy(100);
    nvtxDomainRangePop(domain);
    nvtxRangePop();
  }
  nvtxRangePushW(L"évaluation ✓");  // wide characters: recorded as UTF-8
  nvtxRangePop();
  return exit_code;
}

int fork_children() {
  nvtxRangePushA("parent");
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    nvtxRangePushA("child work");
    busy(300);
    nvtxRangePop();
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  nvtxRangePop();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int window() {
  for (const char* name : {"warmup", "capture", "after"}) {
    nvtxRangePushA(name);
    nvtxRangePushA("inside");
    busy(200);
    nvtxRangePop();
    nvtxRangePop();
  }
  return 0;
}

int forever() {
  const auto began = std::chrono::steady_clock::now();
  bool said = false;
  for (long i = 0;; ++i) {
    nvtxRangePushA("tick");
    busy(20);
    nvtxRangePop();
    if (!said && std::chrono::steady_clock::now() - began > std::chrono::seconds(1)) {
      std::printf("ready\n");
      std::fflush(stdout);
      said = true;
    }
  }
}

int bench(long n) {
  const auto began = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    nvtxRangePushA("bench");
    nvtxRangePop();
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - began).count();
  std::printf("ns_per_range %.1f\n", ns / static_cast<double>(n));
  return 0;
}

int steps(int count, int ranges, int us) {
  const auto began = std::chrono::steady_clock::now();
  for (int s = 0; s < count; ++s) {
    nvtxRangePushA("step");
    for (int r = 0; r < ranges; ++r) {
      nvtxRangePushA("layer");
      busy(us);
      nvtxRangePop();
    }
    nvtxRangePop();
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - began).count();
  std::printf("step_ns %.1f\n", ns / count);
  return 0;
}

int syscalls(long n) {
  const auto began = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) poll(nullptr, 0, 0);
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - began).count();
  std::printf("ns_per_call %.1f\n", ns / static_cast<double>(n));
  return 0;
}

void sleep_ms_monotonic(long ms) {
  const timespec t{ms / 1000, (ms % 1000) * 1'000'000};
  clock_nanosleep(CLOCK_MONOTONIC, 0, &t, nullptr);
}

int waits() {
  for (int i = 0; i < 3; ++i) usleep(2000);
  const timespec five_ms{0, 5'000'000};
  nanosleep(&five_ms, nullptr);
  const pid_t child = fork();
  if (child == 0) {
    usleep(10'000);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 1;
  std::thread loader([&] {
    nvtxNameOsThreadA(static_cast<uint32_t>(syscall(SYS_gettid)), "loader");
    for (int i = 0; i < 5; ++i) {
      sleep_ms_monotonic(20);
      const char byte = 'x';
      (void)!write(pipe_fds[1], &byte, 1);
    }
    sleep_ms_monotonic(30);
  });
  for (int i = 0; i < 5; ++i) {
    nvtxRangePushA("step");
    pollfd p{pipe_fds[0], POLLIN, 0};
    poll(&p, 1, 1000);
    char byte = 0;
    (void)!read(pipe_fds[0], &byte, 1);
    nvtxRangePop();
  }
  loader.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "ranges";
  if (mode == "ranges") return ranges(argc > 2 ? std::atoi(argv[2]) : 0);
  if (mode == "fork") return fork_children();
  if (mode == "window") return window();
  if (mode == "forever") return forever();
  if (mode == "bench") return bench(argc > 2 ? std::atol(argv[2]) : 1000000);
  if (mode == "waits") return waits();
  if (mode == "syscalls") return syscalls(argc > 2 ? std::atol(argv[2]) : 1000000);
  if (mode == "steps" && argc > 4) return steps(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]));
  std::fprintf(stderr, "nvtx_program: unknown mode %s\n", mode.c_str());
  return 2;
}
