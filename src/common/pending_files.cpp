#include "common/pending_files.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

namespace tracedoc {

namespace {

// Fixed slots of heap copies of the paths: a signal handler may read them (no lock, no allocation).
constexpr size_t kSlots = 64;
std::array<std::atomic<char*>, kSlots> g_slots{};

void on_termination(int sig) {
  PendingFiles::remove_all();
  ::signal(sig, SIG_DFL);  // then die of the signal, so the parent sees what happened
  ::raise(sig);
}

}  // namespace

bool PendingFiles::add(const std::string& temp_path) {
  char* copy = new char[temp_path.size() + 1];
  std::memcpy(copy, temp_path.c_str(), temp_path.size() + 1);
  for (auto& slot : g_slots) {
    char* expected = nullptr;
    if (slot.compare_exchange_strong(expected, copy)) return true;
  }
  delete[] copy;
  return false;
}

void PendingFiles::forget(const std::string& temp_path) {
  for (auto& slot : g_slots) {
    char* held = slot.load();
    if (held && temp_path == held && slot.compare_exchange_strong(held, nullptr)) {
      delete[] held;
      return;
    }
  }
}

void PendingFiles::remove_all() noexcept {
  for (auto& slot : g_slots) {
    if (const char* path = slot.load()) ::unlink(path);
  }
}

void PendingFiles::remove_on_termination_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal the caller ignores (nohup, a shell's background job) stays ignored.
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_termination;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace tracedoc
