// The CPU side of a timeline, per thread: how long it ran and how long it waited, and on what.
//
// Sources, each used where the trace has it:
//  * thread switches (nsys SCHED_EVENTS, `--cpuctxsw=process-tree`): running time is the sum of the
//    stretches from a switch onto a CPU to the next switch off it;
//  * CPU samples (nsys COMPOSITE_EVENTS, `--sample`): the share of samples that found the thread
//    running;
//  * OS runtime calls (nsys OSRT_API, `--trace=osrt`): time blocked in lock waits (mutexes,
//    condition variables, semaphores, futexes, joins), in I/O and polling, and in sleeps. Lock waits
//    on a Python process's main thread are the usual sign of GIL contention: another thread (a data
//    loader worker thread, a logging thread) holds the interpreter while the main thread, which
//    launches the GPU work, waits for it;
//  * CUDA API calls: time in synchronizing calls (the thread waits for the GPU).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "analysis/checked_math.h"
#include "analysis/intervals.h"
#include "model/trace.h"

namespace tracedoc {

enum class OsWait : uint8_t { kNone, kLock, kIo, kSleep };
// What an OS runtime call waits for, by name ("pthread_mutex_lock" -> kLock, "poll" -> kIo, ...).
OsWait os_wait_kind(std::string_view call);

struct CpuThreadStats {
  int64_t global_tid = 0;
  std::string name;                        // thread name, empty when unknown
  bool main = false;                       // the process's main thread (tid == pid)
  TimeNs first = kNoTime, last = kNoTime;  // first and last event seen on the thread
  // Thread switches; running_ns = -1 when the trace has none for this thread.
  int64_t running_ns = -1;
  int64_t switches_in = 0;
  // CPU samples.
  int64_t samples = 0, samples_running = 0;
  // OS runtime calls (outermost calls only: nested calls are part of their caller's time).
  int64_t os_calls = 0, os_ns = 0;
  int64_t lock_waits = 0, lock_wait_ns = 0, longest_lock_wait_ns = 0;
  int64_t io_wait_ns = 0, sleep_ns = 0;
  // CUDA API calls and the synchronizing ones among them.
  int64_t api_calls = 0, api_ns = 0, sync_ns = 0;

  int64_t span() const { return first == kNoTime ? 0 : sat_sub(last, first); }
};

// The threads that make CUDA (or HIP) API calls: the ones that launch the GPU work.
std::unordered_set<int64_t> launching_threads(const Trace& trace);

// A thread's switches (SCHED_EVENTS): its stretches on a CPU, from each switch onto one to the
// next switch off it, in time order, and how many switches in opened one.
struct ThreadSwitches {
  std::vector<Interval> running;
  // Off the CPU after a switch off in state Running (preempted: runnable, without a CPU), where
  // nsys recorded the state (SCHED_EVENTS.threadState).
  std::vector<Interval> preempted;
  int64_t switches_in = 0;
  TimeNs first = kNoTime, last = kNoTime;  // first and last switch
};
// Per thread (global tid) with switches; process-level records (tid 0) describe no thread.
std::map<int64_t, ThreadSwitches> thread_switches(const Trace& trace);

// Every CPU thread that appears in a table above, ordered by (pid, tid). Records with tid 0 are
// process-level (nsys writes some OS runtime rows so) and belong to no thread: left out.
std::vector<CpuThreadStats> cpu_thread_stats(const Trace& trace);

// True for CUDA/HIP calls that block the thread until the GPU catches up (device, stream, event and
// context synchronization; synchronous copies are counted by the analyze rules instead).
bool is_sync_call(std::string_view api_name);

}  // namespace tracedoc
