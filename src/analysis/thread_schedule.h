// Where a CPU thread's time went, from its switches on and off the CPUs (nsys SCHED_EVENTS,
// `--cpuctxsw=process-tree`): running on a CPU; blocked, off the CPU inside a call that waits (an
// outermost OS runtime call: a lock, a poll, a read, a sleep; or a synchronizing CUDA call); and off
// the CPU outside any traced wait — runnable but without a CPU (preempted: other threads or
// processes had the cores), or blocked somewhere nothing was traced (a page fault, an untraced
// call). Where nsys recorded the thread's state at a switch off (SCHED_EVENTS.threadState 1,
// Running: it was preempted), that time is runnable for certain.
//
//   cpu_thread_sched_sum  per thread with switches: PID, TID, Thread, Launches GPU Work, Span, and
//                   Running, Blocked, Other Off-CPU in % of the span; for the threads that launch
//                   GPU work, the same during their process's GPU idle time (inside its steps, else
//                   between its first and last GPU work): GPU Idle (ns), Running, Blocked, Other
//                   Off-CPU (%). "the training thread was off-CPU 30% of the GPU-idle time, outside
//                   any wait: the machine is oversubscribed".
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/report.h"
#include "model/trace.h"

namespace tracedoc {

struct ThreadSchedule {
  int64_t global_tid = 0;
  bool launches_gpu_work = false;
  Interval span;          // first to last switch
  IntervalSet running;    // on a CPU
  IntervalSet blocked;    // off the CPU inside a waiting call
  IntervalSet preempted;  // off the CPU after a switch off in state Running (when recorded)
  // Off the CPU outside any traced wait: span − running − blocked.
  IntervalSet other_off_cpu() const;
};

// Every thread with switches, by global tid.
std::vector<ThreadSchedule> thread_schedules(const Trace& trace);

Status cpu_thread_sched_sum(const Trace& trace, const ReportArgs& args, RowSink& sink);

}  // namespace tracedoc
