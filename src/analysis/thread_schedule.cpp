#include "analysis/thread_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "analysis/context.h"
#include "analysis/cpu_samples.h"
#include "analysis/cpu_threads.h"
#include "analysis/statistics.h"

namespace tracedoc {

IntervalSet ThreadSchedule::other_off_cpu() const {
  return IntervalSet::busy_union({span}).subtract(running).subtract(blocked);
}

std::vector<ThreadSchedule> thread_schedules(const Trace& trace) {
  const std::map<int64_t, ThreadSwitches> switches = thread_switches(trace);
  std::vector<ThreadSchedule> out;
  if (switches.empty()) return out;
  const std::unordered_set<int64_t> launchers = launching_threads(trace);
  // The calls that wait, per thread: outermost OS runtime calls and synchronizing CUDA calls.
  std::map<int64_t, std::vector<Interval>> waits;
  const OsCallTable& os = trace.os_calls;
  for (size_t i = 0; i < os.size(); ++i) {
    if (os.nesting_level[i] == 0 && os.start[i] != kNoTime && os.end[i] != kNoTime)
      waits[os.global_tid[i]].push_back({os.start[i], os.end[i]});
  }
  const ApiTable& api = trace.api;
  std::vector<int8_t> sync(trace.strings.size(), -1);
  for (size_t i = 0; i < api.size(); ++i) {
    const StrId name = api.name[i];
    if (name == kNoStr || name >= sync.size()) continue;
    if (sync[name] < 0) sync[name] = is_sync_call(trace.str(name)) ? 1 : 0;
    if (sync[name]) waits[api.global_tid[i]].push_back({api.start[i], api.end[i]});
  }
  for (const auto& [tid, sw] : switches) {
    if (sw.first == kNoTime) continue;
    ThreadSchedule t;
    t.global_tid = tid;
    t.launches_gpu_work = launchers.count(tid) != 0;
    t.span = {sw.first, sw.last};
    t.running = IntervalSet::busy_union(sw.running);
    const IntervalSet off = IntervalSet::busy_union({t.span}).subtract(t.running);
    const auto w = waits.find(tid);
    if (w != waits.end()) t.blocked = IntervalSet::busy_union(w->second).intersect(off);
    t.preempted = IntervalSet::busy_union(sw.preempted);
    out.push_back(std::move(t));
  }
  return out;
}

Status cpu_thread_sched_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  constexpr std::string_view kReport = "cpu_thread_sched_sum";
  TRACEDOC_RETURN_IF_ERROR(check_report_args(kReport, args, {}, {"thread"}));
  TRACEDOC_ASSIGN_OR_RETURN(const int64_t tid, int_report_arg(kReport, args, "thread", -1));
  const std::vector<ThreadSchedule> threads = thread_schedules(trace);
  if (threads.empty()) return no_data(trace, "does not contain thread scheduling data (nsys --cpuctxsw).");
  std::map<int64_t, std::string> names;
  for (const CpuThreadStats& t : cpu_thread_stats(trace)) names[t.global_tid] = t.name;
  AnalysisContext ctx(trace, StepOptions{});
  std::map<int64_t, IntervalSet> idle;  // per owner
  sink.begin({{"PID"},
              {"TID"},
              {"Thread"},
              {"Launches GPU Work"},
              {"Span", Unit::kDurNs},
              {"Running", Unit::kRatioPct},
              {"Blocked", Unit::kRatioPct},
              {"Other Off-CPU", Unit::kRatioPct},
              {"Preempted", Unit::kRatioPct},
              {"GPU Idle", Unit::kDurNs},
              {"Running in GPU Idle", Unit::kRatioPct},
              {"Blocked in GPU Idle", Unit::kRatioPct},
              {"Other Off-CPU in GPU Idle", Unit::kRatioPct}});
  std::vector<Cell> row;
  const bool states =
      std::any_of(threads.begin(), threads.end(), [](const ThreadSchedule& t) { return !t.preempted.empty(); });
  for (const ThreadSchedule& t : threads) {
    if (tid >= 0 && tid_of(t.global_tid) != tid) continue;
    const int64_t span = t.span.length();
    const IntervalSet other = t.other_off_cpu();
    const std::string& name = names[t.global_tid];
    row = {Cell::integer(pid_of(t.global_tid)),
           Cell::integer(tid_of(t.global_tid)),
           name.empty() ? Cell::null() : Cell::text(name),
           Cell::text(t.launches_gpu_work ? "yes" : "no"),
           Cell::integer(span),
           sample_share(t.running.total(), span),
           sample_share(t.blocked.total(), span),
           sample_share(other.total(), span),
           states ? sample_share(t.preempted.total(), span) : Cell::null()};
    if (t.launches_gpu_work) {
      const int64_t owner = ctx.owner_of(t.global_tid);
      auto it = idle.find(owner);
      if (it == idle.end()) it = idle.emplace(owner, ctx.owner_idle(owner)).first;
      const IntervalSet in_span = it->second.clip(t.span);
      const int64_t gpu_idle = in_span.total();
      row.push_back(gpu_idle > 0 ? Cell::integer(gpu_idle) : Cell::null());
      row.push_back(sample_share(t.running.intersect(in_span).total(), gpu_idle));
      row.push_back(sample_share(t.blocked.intersect(in_span).total(), gpu_idle));
      row.push_back(sample_share(other.intersect(in_span).total(), gpu_idle));
    } else {
      for (int k = 0; k < 4; ++k) row.push_back(Cell::null());
    }
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc
