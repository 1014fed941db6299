#include "analysis/nsys_stats/cpu_thread_reports.h"

#include "analysis/cpu_threads.h"

namespace tracedoc::nsys_stats {

namespace {

Cell percent(int64_t part, int64_t whole) {
  if (whole <= 0 || part < 0) return Cell::null();
  return Cell::real(sqlite_round(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1));
}

}  // namespace

Status cpu_thread_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const auto& src = trace.source;
  if (!src.has_table("SCHED_EVENTS") && !src.has_table("COMPOSITE_EVENTS") && !src.has_table("OSRT_API") &&
      !src.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    return no_data(trace,
                   "does not contain CPU thread data (thread switches, CPU samples, OS runtime or CUDA API calls).");
  }
  sink.begin({{"PID"},
              {"TID"},
              {"Thread"},
              {"Main"},
              {"Span", Unit::kDurNs},
              {"Running", Unit::kDurNs},
              {"Running", Unit::kRatioPct},
              {"Switches In"},
              {"Samples"},
              {"Samples Running", Unit::kRatioPct},
              {"OS Runtime", Unit::kDurNs},
              {"Lock Waits"},
              {"Lock Wait", Unit::kDurNs},
              {"Longest Lock Wait", Unit::kDurNs},
              {"I/O Wait", Unit::kDurNs},
              {"Sleep", Unit::kDurNs},
              {"CUDA API", Unit::kDurNs},
              {"Sync Wait", Unit::kDurNs}});
  std::vector<Cell> row;
  for (const CpuThreadStats& t : cpu_thread_stats(trace)) {
    if (!args.name_ok(t.name)) continue;
    const bool sched = t.running_ns >= 0;
    row = {Cell::integer(pid_of(t.global_tid)),
           Cell::integer(tid_of(t.global_tid)),
           t.name.empty() ? Cell::null() : Cell::text(t.name),
           Cell::text(t.main ? "yes" : "no"),
           Cell::integer(t.span()),
           sched ? Cell::integer(t.running_ns) : Cell::null(),
           sched ? percent(t.running_ns, t.span()) : Cell::null(),
           Cell::integer(t.switches_in),
           Cell::integer(t.samples),
           percent(t.samples_running, t.samples),
           Cell::integer(t.os_ns),
           Cell::integer(t.lock_waits),
           Cell::integer(t.lock_wait_ns),
           Cell::integer(t.longest_lock_wait_ns),
           Cell::integer(t.io_wait_ns),
           Cell::integer(t.sleep_ns),
           Cell::integer(t.api_ns),
           Cell::integer(t.sync_ns)};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
