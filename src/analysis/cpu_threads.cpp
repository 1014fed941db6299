#include "analysis/checked_math.h"
#include "analysis/cpu_threads.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

#include "analysis/pytorch/gpu_work.h"

namespace tracedoc {

namespace {

// The calls that wait, by exact name (prefixes would catch readlink or pthread_rwlock_unlock).
constexpr std::string_view kLockCalls[] = {"pthread_mutex_lock",
                                           "pthread_mutex_timedlock",
                                           "pthread_mutex_clocklock",
                                           "pthread_cond_wait",
                                           "pthread_cond_timedwait",
                                           "pthread_cond_clockwait",
                                           "pthread_rwlock_rdlock",
                                           "pthread_rwlock_wrlock",
                                           "pthread_rwlock_timedrdlock",
                                           "pthread_rwlock_timedwrlock",
                                           "pthread_join",
                                           "pthread_timedjoin_np",
                                           "pthread_barrier_wait",
                                           "pthread_spin_lock",
                                           "sem_wait",
                                           "sem_timedwait",
                                           "sem_clockwait",
                                           "futex"};
constexpr std::string_view kIoCalls[] = {
    "poll",    "ppoll",   "select",  "pselect", "pselect6",     "epoll_wait",  "epoll_pwait", "epoll_pwait2", "read",
    "readv",   "pread",   "pread64", "preadv",  "recv",         "recvfrom",    "recvmsg",     "recvmmsg",     "accept",
    "accept4", "waitpid", "wait4",   "waitid",  "sigtimedwait", "sigwaitinfo", "fread",       "fgets"};
constexpr std::string_view kSleepCalls[] = {"nanosleep", "clock_nanosleep", "usleep", "sleep"};

template <size_t N>
bool one_of(std::string_view s, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), s) != std::end(names);
}

}  // namespace

OsWait os_wait_kind(std::string_view call) {
  if (one_of(call, kLockCalls)) return OsWait::kLock;
  if (one_of(call, kIoCalls)) return OsWait::kIo;
  if (one_of(call, kSleepCalls)) return OsWait::kSleep;
  return OsWait::kNone;
}

bool is_sync_call(std::string_view api_name) {
  const std::string_view n = pytorch::api_base_name(api_name);
  for (std::string_view prefix : {"cuda", "hip"}) {
    if (!n.starts_with(prefix)) continue;
    const std::string_view rest = n.substr(prefix.size());
    if (rest == "DeviceSynchronize" || rest == "StreamSynchronize" || rest == "EventSynchronize" ||
        rest == "ThreadSynchronize" || rest == "CtxSynchronize") {
      return true;
    }
  }
  return n == "cuCtxSynchronize" || n == "cuStreamSynchronize" || n == "cuEventSynchronize";
}

std::unordered_set<int64_t> launching_threads(const Trace& trace) {
  // The API table holds millions of calls from a handful of threads, mostly in runs of one thread.
  std::unordered_set<int64_t> out;
  const ApiTable& api = trace.api;
  for (size_t a = 0; a < api.size(); ++a) {
    if (a == 0 || api.global_tid[a] != api.global_tid[a - 1]) out.insert(api.global_tid[a]);
  }
  return out;
}

std::map<int64_t, ThreadSwitches> thread_switches(const Trace& trace) {
  // Per thread in time order: running from each switch in to the next switch out.
  const SchedTable& sched = trace.sched;
  std::vector<uint32_t> order(sched.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(sched.global_tid[a], sched.time[a]) < std::tie(sched.global_tid[b], sched.time[b]);
  });
  std::map<int64_t, ThreadSwitches> out;
  for (size_t k = 0; k < order.size();) {
    const int64_t tid = sched.global_tid[order[k]];
    if (tid_of(tid) == 0) {  // process-level records describe no thread
      while (k < order.size() && sched.global_tid[order[k]] == tid) ++k;
      continue;
    }
    ThreadSwitches& t = out[tid];
    TimeNs in = kNoTime, preempted_at = kNoTime;
    for (; k < order.size() && sched.global_tid[order[k]] == tid; ++k) {
      const uint32_t e = order[k];
      const TimeNs at = sched.time[e];
      if (at == kNoTime) continue;
      t.first = t.first == kNoTime ? at : std::min(t.first, at);
      t.last = t.last == kNoTime ? at : std::max(t.last, at);
      if (sched.sched_in[e]) {
        if (in == kNoTime) in = at, ++t.switches_in;
        if (preempted_at != kNoTime) t.preempted.push_back({preempted_at, at});
        preempted_at = kNoTime;
      } else if (in != kNoTime) {
        t.running.push_back({in, at});
        in = kNoTime;
        if (sched.state[e] == 1) preempted_at = at;  // ENUM_SAMPLING_THREAD_STATE 1: still Running
      }
    }
  }
  return out;
}

std::vector<CpuThreadStats> cpu_thread_stats(const Trace& trace) {
  std::map<std::pair<int64_t, int64_t>, CpuThreadStats> by_thread;  // (global pid, global tid)
  auto at = [&](int64_t global_tid) -> CpuThreadStats& {
    CpuThreadStats& t = by_thread[{global_pid_of(global_tid), global_tid}];
    t.global_tid = global_tid;
    return t;
  };
  auto seen = [](CpuThreadStats& t, TimeNs start, TimeNs end) {
    if (start == kNoTime) return;
    if (end == kNoTime || end < start) end = start;
    t.first = t.first == kNoTime ? start : std::min(t.first, start);
    t.last = t.last == kNoTime ? end : std::max(t.last, end);
  };

  for (const auto& [tid, sw] : thread_switches(trace)) {
    CpuThreadStats& t = at(tid);
    seen(t, sw.first, sw.last);
    t.switches_in = sw.switches_in;
    t.running_ns = 0;
    for (const Interval& r : sw.running) t.running_ns = sat_add(t.running_ns, r.length());
  }

  const CpuSampleTable& samples = trace.cpu_samples;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (tid_of(samples.global_tid[i]) == 0) continue;
    CpuThreadStats& t = at(samples.global_tid[i]);
    seen(t, samples.time[i], samples.time[i]);
    ++t.samples;
    t.samples_running += samples.state[i] == 1;  // ENUM_SAMPLING_THREAD_STATE 1: Running
  }

  // OS runtime calls: name kinds decided once per string.
  const OsCallTable& os = trace.os_calls;
  std::vector<int8_t> kind(trace.strings.size(), -1);
  for (size_t i = 0; i < os.size(); ++i) {
    if (os.start[i] == kNoTime || os.end[i] == kNoTime || tid_of(os.global_tid[i]) == 0) continue;
    CpuThreadStats& t = at(os.global_tid[i]);
    seen(t, os.start[i], os.end[i]);
    if (os.nesting_level[i] != 0) continue;  // part of the enclosing call's time
    const int64_t d = std::max<int64_t>(0, sat_sub(os.end[i], os.start[i]));
    ++t.os_calls;
    t.os_ns = sat_add(t.os_ns, d);
    const StrId name = os.name[i];
    if (name == kNoStr || name >= kind.size()) continue;
    if (kind[name] < 0) kind[name] = static_cast<int8_t>(os_wait_kind(trace.str(name)));
    switch (static_cast<OsWait>(kind[name])) {
      case OsWait::kLock:
        ++t.lock_waits, t.lock_wait_ns = sat_add(t.lock_wait_ns, d),
                        t.longest_lock_wait_ns = std::max(t.longest_lock_wait_ns, d);
        break;
      case OsWait::kIo: t.io_wait_ns = sat_add(t.io_wait_ns, d); break;
      case OsWait::kSleep: t.sleep_ns = sat_add(t.sleep_ns, d); break;
      case OsWait::kNone: break;
    }
  }

  const ApiTable& api = trace.api;
  std::vector<int8_t> sync(trace.strings.size(), -1);
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.start[i] == kNoTime || api.end[i] == kNoTime || tid_of(api.global_tid[i]) == 0) continue;
    CpuThreadStats& t = at(api.global_tid[i]);
    seen(t, api.start[i], api.end[i]);
    const int64_t d = std::max<int64_t>(0, sat_sub(api.end[i], api.start[i]));
    ++t.api_calls;
    t.api_ns = sat_add(t.api_ns, d);
    const StrId name = api.name[i];
    if (name == kNoStr || name >= sync.size()) continue;
    if (sync[name] < 0) sync[name] = is_sync_call(trace.str(name));
    if (sync[name]) t.sync_ns = sat_add(t.sync_ns, d);
  }

  std::map<int64_t, StrId> names;
  for (const ThreadInfo& info : trace.threads) {
    if (info.name != kNoStr) names[info.global_tid] = info.name;
  }
  std::vector<CpuThreadStats> out;
  out.reserve(by_thread.size());
  for (auto& [key, t] : by_thread) {
    t.main = tid_of(t.global_tid) == pid_of(t.global_tid);
    if (auto it = names.find(t.global_tid); it != names.end()) t.name = trace.str(it->second);
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tracedoc
