#include "analysis/checked_math.h"
#include "analysis/nsys_stats/memory_copy_reports.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "analysis/copy_throughput.h"
#include "analysis/gpu_memory.h"
#include "analysis/host_link.h"
#include "analysis/statistics.h"
#include "analysis/steps.h"

namespace tracedoc::nsys_stats {

namespace {

constexpr std::string_view kWholeTrace = "(whole trace)";

// NULL where the rank is unknown, and on nsys exports (Trace::rank_of).
Cell rank_cell(const Trace& trace, int64_t global_pid) {
  const int64_t rank = trace.rank_of(global_pid);
  return rank < 0 ? Cell::null() : Cell::integer(rank);
}

Cell time_cell(TimeNs t) { return t == kNoTime ? Cell::null() : Cell::integer(t); }
Cell value_cell(int64_t v) { return v == kNoValue ? Cell::null() : Cell::integer(v); }
Cell label_cell(const std::string& label) { return label.empty() ? Cell::null() : Cell::text(label); }

// part / whole in %, one decimal as nsys rounds its percentages; NULL for an empty whole.
Cell percent_cell(double part, double whole) {
  return whole > 0 ? Cell::real(sqlite_round(part * 100.0 / whole, 1)) : Cell::null();
}

// The steps the step reports use: ProfilerStep#N ranges, or the ranges the `marker=NAME` argument
// names; with the `detect` argument, the steps detected from the repeating kernel sequence
// (analysis/steps.h). Detection is not the default here, unlike step_sum: a process without steps
// is reported as one whole-trace window instead, which needs no heuristic. Empty when there are
// none; NoData when a marker was asked for and the trace has no such range.
Result<std::vector<StepWindow>> report_steps(const Trace& trace, const ReportArgs& args) {
  TRACEDOC_ASSIGN_OR_RETURN(auto options, step_options_from_args(args.args));
  options.detect = args.has("detect");
  auto set = find_steps(trace, options);
  if (set.ok()) return std::move(set->steps);
  if (set.status().code() == ErrorCode::kNoData && options.marker.empty() && !options.detect) {
    return std::vector<StepWindow>{};
  }
  return no_data(trace, set.status().message());
}

// The step's range name; "(whole trace)" for the fallback window; empty for detected steps.
std::string_view step_name(const Trace& trace, const StepWindow& w, bool whole_trace) {
  if (whole_trace) return kWholeTrace;
  return w.name == kNoStr ? std::string_view{} : trace.str(w.name);
}

Cell name_cell(std::string_view name) { return name.empty() ? Cell::null() : Cell::pooled(name); }

// The GPU's name as the trace records it; empty when the trace has no row for the device.
std::string_view device_name(const Trace& trace, int32_t device) {
  for (const DeviceInfo& d : trace.devices) {
    if (d.id == device) return trace.str(d.name);
  }
  return {};
}

Status require_memory(const Trace& trace) {
  if (!has_gpu_memory_events(trace)) return no_data(trace, "does not contain GPU memory usage data.");
  return Status::Ok();
}

Status require_copies(const Trace& trace) {
  if (trace.memcpys.size() == 0) return no_data(trace, "does not contain CUDA memory transfers data.");
  return Status::Ok();
}

}  // namespace

Status gpu_mem_sum(const Trace& trace, const ReportArgs&, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_memory(trace));
  sink.begin({{"Rank", Unit::kNone},
              {"PID", Unit::kNone},
              {"Device", Unit::kNone},
              {"Peak Allocated", Unit::kMemB},
              {"Peak Time", Unit::kTsNs},
              {"Start Allocated", Unit::kMemB},
              {"End Allocated", Unit::kMemB},
              {"Growth", Unit::kMemB},
              {"Allocations", Unit::kNone},
              {"Frees", Unit::kNone},
              {"Bytes Allocated", Unit::kMemB},
              {"Bytes Freed", Unit::kMemB},
              {"Peak Reserved", Unit::kMemB},
              {"Source", Unit::kNone}});
  std::vector<Cell> row;
  for (const MemorySeries& s : collect_gpu_memory(trace)) {
    const MemoryWindowStats w = memory_stats(s);
    row = {rank_cell(trace, s.global_pid),   Cell::integer(pid_of(s.global_pid)),
           Cell::integer(s.device),          Cell::integer(w.peak),
           time_cell(w.peak_time),           Cell::integer(w.start_value),
           Cell::integer(w.end_value),       Cell::integer(sat_sub(w.end_value, w.start_value)),
           Cell::integer(w.allocations),     Cell::integer(w.frees),
           Cell::integer(w.bytes_allocated), Cell::integer(w.bytes_freed),
           value_cell(w.peak_reserved),      Cell::text(s.recorded_totals ? "allocator totals" : "event sizes")};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status gpu_mem_step_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_memory(trace));
  TRACEDOC_ASSIGN_OR_RETURN(auto steps, report_steps(trace, args));
  std::map<int64_t, std::vector<const StepWindow*>> steps_of;  // in time order per process
  for (const StepWindow& w : steps) steps_of[w.global_pid].push_back(&w);

  sink.begin({{"Rank", Unit::kNone},
              {"PID", Unit::kNone},
              {"Device", Unit::kNone},
              {"Step", Unit::kNone},
              {"Start", Unit::kTsNs},
              {"Duration", Unit::kDurNs},
              {"Start Allocated", Unit::kMemB},
              {"End Allocated", Unit::kMemB},
              {"Growth", Unit::kMemB},
              {"Peak Allocated", Unit::kMemB},
              {"Peak Time", Unit::kTsNs},
              {"Allocations", Unit::kNone},
              {"Frees", Unit::kNone},
              {"Name", Unit::kNone}});
  std::vector<Cell> row;
  auto emit = [&](const MemorySeries& s, const MemoryWindowStats& w, int64_t number, TimeNs start, TimeNs duration,
                  std::string_view name) {
    if (!args.name_ok(name)) return;
    row = {rank_cell(trace, s.global_pid),
           Cell::integer(pid_of(s.global_pid)),
           Cell::integer(s.device),
           value_cell(number),
           Cell::integer(start),
           Cell::integer(duration),
           Cell::integer(w.start_value),
           Cell::integer(w.end_value),
           Cell::integer(sat_sub(w.end_value, w.start_value)),
           Cell::integer(w.peak),
           time_cell(w.peak_time),
           Cell::integer(w.allocations),
           Cell::integer(w.frees),
           name_cell(name)};
    sink.row(row);
  };
  for (const MemorySeries& s : collect_gpu_memory(trace)) {
    auto it = steps_of.find(s.global_pid);
    if (it == steps_of.end()) {
      // No steps in this process: the recording is one window, from its first event to its last.
      emit(s, memory_stats(s), kNoValue, s.time.front(), s.time.back() - s.time.front(), kWholeTrace);
      continue;
    }
    // Steps as half-open windows [start, end): an event at a step's end instant opens the next.
    for (const StepWindow* w : it->second) {
      const size_t begin = s.first_at_or_after(w->start), end = s.first_at_or_after(w->end);
      emit(s, memory_window_stats(s, begin, end, s.allocated_before(w->start)), w->number, w->start,
           sat_sub(w->end, w->start), step_name(trace, *w, false));
    }
  }
  sink.end();
  return Status::Ok();
}

Status gpu_mem_trace(const Trace& trace, const ReportArgs&, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_memory(trace));
  const std::vector<MemorySeries> series = collect_gpu_memory(trace);
  // Events of all series in time order; series order (process, device) among simultaneous ones.
  std::vector<std::pair<uint32_t, uint32_t>> order;
  for (uint32_t s = 0; s < series.size(); ++s) {
    for (uint32_t i = 0; i < series[s].size(); ++i) order.emplace_back(s, i);
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return series[a.first].time[a.second] < series[b.first].time[b.second];
  });
  sink.begin({{"Time", Unit::kTsNs},
              {"Rank", Unit::kNone},
              {"PID", Unit::kNone},
              {"Device", Unit::kNone},
              {"Bytes", Unit::kMemB},
              {"Allocated", Unit::kMemB},
              {"Reserved", Unit::kMemB}});
  std::vector<Cell> row;
  for (const auto& [si, i] : order) {
    const MemorySeries& s = series[si];
    row = {Cell::integer(s.time[i]), rank_cell(trace, s.global_pid), Cell::integer(pid_of(s.global_pid)),
           Cell::integer(s.device),  Cell::integer(s.delta[i]),      Cell::integer(s.allocated[i]),
           value_cell(s.reserved[i])};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status gpu_copy_sum(const Trace& trace, const ReportArgs&, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_copies(trace));
  sink.begin({{"Rank", Unit::kNone},
              {"PID", Unit::kNone},
              {"Device", Unit::kNone},
              {"GPU", Unit::kNone},
              {"Copy Kind", Unit::kNone},
              {"Src Kind", Unit::kNone},
              {"Dst Kind", Unit::kNone},
              {"Count", Unit::kNone},
              {"Total Bytes", Unit::kMemB},
              {"Total Time", Unit::kDurNs},
              {"Throughput", Unit::kThruB},
              {"Med Throughput", Unit::kThruB},
              {"Link", Unit::kNone},
              {"Link Peak", Unit::kThruB},
              {"Link Use", Unit::kRatioPct}});
  std::vector<Cell> row;
  for (const CopyGroup& g : summarize_copies(trace)) {
    const std::string_view gpu = device_name(trace, g.device);
    const bool host = crosses_host_link(g.copy_kind);
    const HostLink link = host ? host_link_for_gpu(gpu) : HostLink{};
    // The cells only view their text: the labels must outlive sink.row().
    const std::string kind = trace.copy_label(g.copy_kind), src = trace.mem_label(g.src_kind),
                      dst = trace.mem_label(g.dst_kind);
    row = {rank_cell(trace, g.global_pid),
           Cell::integer(pid_of(g.global_pid)),
           Cell::integer(g.device),
           gpu.empty() ? Cell::null() : Cell::pooled(gpu),
           label_cell(kind),
           label_cell(src),
           label_cell(dst),
           Cell::integer(g.count),
           Cell::integer(g.bytes),
           Cell::integer(g.total_ns),
           g.throughput < 0 ? Cell::null() : Cell::real(g.throughput),
           g.median_throughput < 0 ? Cell::null() : Cell::real(g.median_throughput),
           !host          ? Cell::null()
           : link.known() ? Cell::text(link.name)
                          : Cell::text("unknown"),
           link.known() ? Cell::real(link.peak_bytes_per_s) : Cell::null(),
           link.known() && g.throughput >= 0 ? percent_cell(g.throughput, link.peak_bytes_per_s) : Cell::null()};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status gpu_copy_step_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_copies(trace));
  TRACEDOC_ASSIGN_OR_RETURN(auto steps, report_steps(trace, args));
  sink.begin({{"Rank", Unit::kNone},
              {"PID", Unit::kNone},
              {"Step", Unit::kNone},
              {"Start", Unit::kTsNs},
              {"Duration", Unit::kDurNs},
              {"Copies", Unit::kNone},
              {"Bytes", Unit::kMemB},
              {"Copy Time", Unit::kDurNs},
              {"Copy", Unit::kRatioPct},
              {"HtoD Time", Unit::kDurNs},
              {"DtoH Time", Unit::kDurNs},
              {"DtoD Time", Unit::kDurNs},
              {"Other Time", Unit::kDurNs},
              {"Name", Unit::kNone}});
  std::vector<Cell> row;
  for (const CopyWindowShare& c : copy_step_shares(trace, steps)) {
    const StepWindow& w = c.window;
    const std::string_view name = step_name(trace, w, c.whole_trace);
    if (!args.name_ok(name)) continue;
    const int64_t duration = c.duration();
    row = {rank_cell(trace, w.global_pid),
           Cell::integer(pid_of(w.global_pid)),
           value_cell(w.number),
           Cell::integer(w.start),
           Cell::integer(duration),
           Cell::integer(c.copies),
           Cell::integer(c.bytes),
           Cell::integer(c.copy_ns),
           percent_cell(static_cast<double>(c.copy_ns), static_cast<double>(duration)),
           Cell::integer(c.class_ns[static_cast<int>(CopyClass::kHtoD)]),
           Cell::integer(c.class_ns[static_cast<int>(CopyClass::kDtoH)]),
           Cell::integer(c.class_ns[static_cast<int>(CopyClass::kDtoD)]),
           Cell::integer(c.class_ns[static_cast<int>(CopyClass::kOther)]),
           name_cell(name)};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
