#include "common/task_pool.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace tracedoc {

namespace {

// The CPU quota of a cgroup v2 `cpu.max` ("max 100000", or "200000 100000" for 2 CPUs), in CPUs
// rounded up; 0 when there is none or the file cannot be read.
int quota_v2(const std::string& file) {
  std::ifstream in(file);
  std::string quota;
  int64_t period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  int64_t q = 0;
  try {
    q = std::stoll(quota);
  } catch (...) {
    return 0;
  }
  return q > 0 ? static_cast<int>((q + period - 1) / period) : 0;
}

// cgroup v1: cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us.
int quota_v1(const std::string& dir) {
  std::ifstream q(dir + "/cpu.cfs_quota_us"), p(dir + "/cpu.cfs_period_us");
  int64_t quota = -1, period = 0;
  if (!(q >> quota) || !(p >> period) || quota <= 0 || period <= 0) return 0;
  return static_cast<int>((quota + period - 1) / period);
}

// The process's cgroup v2 directory (from /proc/self/cgroup's "0::/path" line), or "".
std::string own_cgroup_v2() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("0::")) return "/sys/fs/cgroup" + line.substr(3);
  }
  return {};
}

int cgroup_quota() {
  int best = 0;
  auto take = [&](int q) {
    if (q > 0) best = best == 0 ? q : std::min(best, q);
  };
  if (const std::string own = own_cgroup_v2(); !own.empty()) take(quota_v2(own + "/cpu.max"));
  take(quota_v2("/sys/fs/cgroup/cpu.max"));
  take(quota_v1("/sys/fs/cgroup/cpu"));
  take(quota_v1("/sys/fs/cgroup/cpu,cpuacct"));
  return best;
}

// One parallel_for: its jobs are claimed one at a time under the pool's lock; the batch is shared
// by the caller and the workers that hold it, so none of them outlives it.
struct Batch {
  const std::function<void(size_t)>* job = nullptr;
  size_t count = 0;
  size_t next = 0;  // guarded by the pool's mutex
  std::mutex mu;    // guards done and error
  std::condition_variable finished;
  size_t done = 0;
  std::exception_ptr error;
};

class Pool {
 public:
  void resize(int threads) {
    std::unique_lock lock(mu_);
    if (threads == threads_ && !workers_.empty()) return;
    threads_ = threads;
    if (workers_.empty()) return;
    stop_ = true;
    lock.unlock();
    cv_.notify_all();
    for (std::thread& w : workers_) w.join();
    lock.lock();
    workers_.clear();
    stop_ = false;
  }

  int threads() {
    std::lock_guard lock(mu_);
    return threads_;
  }

  void for_each(size_t count, const std::function<void(size_t)>& job) {
    if (count == 0) return;
    int threads = 1;
    {
      std::lock_guard lock(mu_);
      threads = threads_;
      if (threads > 1 && count > 1 && workers_.empty()) start_locked();
    }
    if (threads <= 1 || count == 1) {
      for (size_t i = 0; i < count; ++i) job(i);
      return;
    }
    auto batch = std::make_shared<Batch>();
    batch->job = &job;
    batch->count = count;
    {
      std::lock_guard lock(mu_);
      queue_.push_back(batch);
    }
    cv_.notify_all();
    for (;;) {
      size_t i = 0;
      {
        std::lock_guard lock(mu_);
        i = claim_locked(batch);
      }
      if (i == kNone) break;
      run(*batch, i);
    }
    std::unique_lock lock(batch->mu);
    batch->finished.wait(lock, [&] { return batch->done == batch->count; });
    if (batch->error) std::rethrow_exception(batch->error);
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;

  void start_locked() {
    for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { work(); });
  }

  // The next job of `b`, or kNone when every job is claimed (then `b` leaves the queue).
  size_t claim_locked(const std::shared_ptr<Batch>& b) {
    if (b->next < b->count) return b->next++;
    const auto it = std::find(queue_.begin(), queue_.end(), b);
    if (it != queue_.end()) queue_.erase(it);
    return kNone;
  }

  static void run(Batch& b, size_t i) {
    std::exception_ptr error;
    try {
      (*b.job)(i);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(b.mu);
    if (error && !b.error) b.error = error;
    if (++b.done == b.count) b.finished.notify_all();
  }

  void work() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      const std::shared_ptr<Batch> b = queue_.front();
      const size_t i = claim_locked(b);
      if (i == kNone) continue;
      lock.unlock();
      run(*b, i);
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Batch>> queue_;
  std::vector<std::thread> workers_;
  int threads_ = 0;
  bool stop_ = false;
};

// Never destroyed: idle workers wait on it until the process exits, whoever calls exit().
Pool& pool() {
  static Pool* p = [] {
    auto* created = new Pool;
    created->resize(usable_cores());
    return created;
  }();
  return *p;
}

}  // namespace

int usable_cores() {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = CPU_COUNT(&set);
  if (const int quota = cgroup_quota(); quota > 0) cores = std::min(cores, quota);
  return std::max(cores, 1);
}

void set_thread_count(int n) { pool().resize(n > 0 ? n : usable_cores()); }

int thread_count() { return pool().threads(); }

void parallel_for(size_t count, const std::function<void(size_t)>& job) { pool().for_each(count, job); }

void parallel_invoke(const std::vector<std::function<void()>>& functions) {
  parallel_for(functions.size(), [&](size_t i) { functions[i](); });
}

}  // namespace tracedoc
