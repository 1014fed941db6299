#include "analysis/pytorch/gpu_breakdown_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <string_view>

#include "analysis/checked_math.h"
#include "analysis/pytorch/gpu_breakdowns.h"
#include "analysis/pytorch/launch_stats.h"
#include "analysis/statistics.h"

namespace tracedoc::pytorch {

namespace {

constexpr std::string_view kCommonFlags[] = {"hta", "drop-last-step", "syncs", "hta-classes", "hta-launches"};

struct Options {
  GpuWorkOptions work;
  LaunchNames names = LaunchNames::kTracedoc;
};

// Rejects arguments the report does not know, the breakdowns' common flags included.
Status check_args(const char* report, const ReportArgs& args, std::initializer_list<std::string_view> flags,
                  std::initializer_list<std::string_view> keys) {
  std::vector<std::string_view> known(std::begin(kCommonFlags), std::end(kCommonFlags));
  known.insert(known.end(), flags.begin(), flags.end());
  return check_report_args(report, args, known, std::vector<std::string_view>(keys));
}

Result<int64_t> int_arg(const char* report, const ReportArgs& args, std::string_view key, int64_t fallback) {
  return int_report_arg(report, args, key, fallback);
}

Options options_from(const ReportArgs& args) {
  Options o;
  const bool hta = args.has("hta");
  o.work.drop_last_step = hta || args.has("drop-last-step");
  o.work.include_syncs = hta || args.has("syncs");
  o.work.classifier = hta || args.has("hta-classes") ? Classifier::kHta050 : Classifier::kTracedoc;
  o.names = hta || args.has("hta-launches") ? LaunchNames::kHta050 : LaunchNames::kTracedoc;
  return o;
}

// Collects the GPU work; NoData when the trace has none.
Result<GpuWork> work_of(const Trace& trace, const Options& o) {
  if (trace.kernels.size() + trace.memcpys.size() + trace.memsets.size() == 0) {
    return no_data(trace, "does not contain GPU activity (kernels, copies or memsets).");
  }
  GpuWork w = collect_gpu_work(trace, o.work);
  if (w.units.empty()) return no_data(trace, "has no GPU activity left after dropping the last profiler step.");
  return w;
}

std::vector<ColumnSpec> unit_columns(const GpuWork& w) {
  return {{w.pytorch ? "Rank" : "PID", Unit::kNone}, {"Device", Unit::kNone}};
}

void push_unit(std::vector<Cell>& row, const GpuWork& w, const GpuUnit& u) {
  if (w.pytorch) {
    row.push_back(u.rank < 0 ? Cell::null() : Cell::integer(u.rank));
  } else {
    row.push_back(Cell::integer(u.pid));
  }
  row.push_back(Cell::integer(u.device));
}

Cell percent(int64_t part, int64_t whole) {
  if (whole <= 0) return Cell::null();
  return Cell::real(sqlite_round(static_cast<double>(part) * 100.0 / static_cast<double>(whole), 2));
}

}  // namespace

Status gpu_time_breakdown(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_args("gpu_time_breakdown", args, {}, {}));
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, options_from(args)));
  std::vector<ColumnSpec> columns = unit_columns(work);
  for (const char* c : {"Span", "Idle", "Compute", "Non-Compute"}) columns.push_back({c, Unit::kDurNs});
  for (const char* c : {"Idle", "Compute", "Non-Compute"}) columns.push_back({c, Unit::kRatioPct});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const GpuUnit& u : work.units) {
    const TemporalBreakdown b = temporal_breakdown(u);
    row.clear();
    push_unit(row, work, u);
    for (int64_t v : {b.span(), b.idle, b.compute, b.non_compute}) row.push_back(Cell::integer(v));
    for (int64_t v : {b.idle, b.compute, b.non_compute}) row.push_back(percent(v, b.span()));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status idle_time_breakdown(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_args("idle_time_breakdown", args, {}, {"delay"}));
  TRACEDOC_ASSIGN_OR_RETURN(const auto delay,
                            int_arg("idle_time_breakdown", args, "delay", kDefaultConsecutiveKernelDelayNs));
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, options_from(args)));
  std::vector<ColumnSpec> columns = unit_columns(work);
  columns.push_back({"Stream", Unit::kNone});
  columns.push_back({"Operations", Unit::kNone});
  for (const char* c : {"Busy", "Idle", "Host Wait", "Kernel Wait", "Other Wait"}) columns.push_back({c, Unit::kDurNs});
  for (const char* c : {"Host Wait", "Kernel Wait", "Other Wait"}) columns.push_back({c, Unit::kRatioPct});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const GpuUnit& u : work.units) {
    for (const StreamIdle& s : idle_time_breakdown(u, delay)) {
      row.clear();
      push_unit(row, work, u);
      row.push_back(Cell::integer(s.stream));
      row.push_back(Cell::integer(s.operations));
      row.push_back(Cell::integer(s.busy));
      row.push_back(Cell::integer(s.idle()));
      for (int64_t g : s.gaps) row.push_back(Cell::integer(g));
      for (int64_t g : s.gaps) row.push_back(percent(g, s.idle()));
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

Status kernel_type_breakdown(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_args("kernel_type_breakdown", args, {"no-memory"}, {}));
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, options_from(args)));
  std::vector<ColumnSpec> columns = unit_columns(work);
  columns.push_back({"Time", Unit::kRatioPct});
  columns.push_back({"Total Time", Unit::kDurNs});
  columns.push_back({"Kernel Type", Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const GpuUnit& u : work.units) {
    const std::vector<KernelTypeTime> types = kernel_type_breakdown(u, !args.has("no-memory"));
    int64_t total = 0;
    for (const KernelTypeTime& k : types) total = sat_add(total, k.time);
    for (const KernelTypeTime& k : types) {
      row.clear();
      push_unit(row, work, u);
      row.push_back(percent(k.time, total));
      row.push_back(Cell::integer(k.time));
      row.push_back(Cell::text(k.label));
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

Status comm_comp_overlap(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_args("comm_comp_overlap", args, {}, {}));
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, options_from(args)));
  std::vector<CommCompOverlap> overlaps;
  bool any = false;
  for (const GpuUnit& u : work.units) {
    overlaps.push_back(comm_comp_overlap(u));
    any = any || overlaps.back().communication > 0;
  }
  if (!any) return no_data(trace, "does not contain communication kernels (NCCL/RCCL).");
  std::vector<ColumnSpec> columns = unit_columns(work);
  for (const char* c : {"Communication", "Computation", "Overlap"}) columns.push_back({c, Unit::kDurNs});
  columns.push_back({"Overlap", Unit::kRatioPct});
  sink.begin(columns);
  std::vector<Cell> row;
  for (size_t i = 0; i < work.units.size(); ++i) {
    const CommCompOverlap& o = overlaps[i];
    row.clear();
    push_unit(row, work, work.units[i]);
    for (int64_t v : {o.communication, o.computation, o.overlap}) row.push_back(Cell::integer(v));
    row.push_back(percent(o.overlap, o.communication));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status kernel_launch_stats(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const char* name = "kernel_launch_stats";
  TRACEDOC_RETURN_IF_ERROR(check_args(name, args, {"no-memory"}, {"runtime-cutoff", "delay-cutoff"}));
  const Options o = options_from(args);
  LaunchStatsOptions lo;
  lo.names = o.names;
  lo.include_memory = !args.has("no-memory");
  TRACEDOC_ASSIGN_OR_RETURN(const auto runtime_cutoff, int_arg(name, args, "runtime-cutoff", lo.runtime_cutoff_ns));
  TRACEDOC_ASSIGN_OR_RETURN(const auto delay_cutoff, int_arg(name, args, "delay-cutoff", lo.launch_delay_cutoff_ns));
  lo.runtime_cutoff_ns = runtime_cutoff;
  lo.launch_delay_cutoff_ns = delay_cutoff;
  if (trace.api.size() == 0) return no_data(trace, "does not contain CUDA API data.");
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, o));

  std::vector<LaunchStats> stats;
  bool any = false;
  for (const GpuUnit& u : work.units) {
    stats.push_back(kernel_launch_stats(trace, u, lo));
    any = any || stats.back().launches > 0;
  }
  if (!any) return no_data(trace, "does not contain kernel launch calls linked to GPU activity.");
  std::vector<ColumnSpec> columns = unit_columns(work);
  columns.push_back({"Launches", Unit::kNone});
  for (const char* c :
       {"CPU Total", "GPU Total", "Delay Total", "Delay Avg", "Delay Med", "Delay Min", "Delay Max", "Delay StdDev"}) {
    columns.push_back({c, Unit::kDurNs});
  }
  for (const char* c : {"Short Kernels", "Runtime Outliers", "Delay Outliers"}) columns.push_back({c, Unit::kNone});
  sink.begin(columns);
  std::vector<Cell> row;
  for (size_t i = 0; i < work.units.size(); ++i) {
    const LaunchStats& s = stats[i];
    if (s.launches == 0) continue;
    row.clear();
    push_unit(row, work, work.units[i]);
    row.push_back(Cell::integer(s.launches));
    for (int64_t v : {s.cpu_total, s.gpu_total, s.delay_total}) row.push_back(Cell::integer(v));
    row.push_back(Cell::real(sqlite_round(s.delay.mean, 1)));
    row.push_back(Cell::real(s.delay.median));
    row.push_back(Cell::integer(s.delay.min));
    row.push_back(Cell::integer(s.delay.max));
    row.push_back(std::isnan(s.delay.std) ? Cell::null() : Cell::real(sqlite_round(s.delay.std, 1)));
    for (int64_t v : {s.short_kernels, s.runtime_outliers, s.delay_outliers}) row.push_back(Cell::integer(v));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status queue_length_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const char* name = "queue_length_sum";
  TRACEDOC_RETURN_IF_ERROR(check_args(name, args, {}, {"max-queue"}));
  const Options o = options_from(args);
  QueueOptions qo;
  qo.names = o.names;
  TRACEDOC_ASSIGN_OR_RETURN(const auto max_queue, int_arg(name, args, "max-queue", qo.max_queue_length));
  qo.max_queue_length = max_queue;
  if (trace.api.size() == 0) return no_data(trace, "does not contain CUDA API data.");
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, o));

  std::vector<ColumnSpec> columns = unit_columns(work);
  columns.push_back({"Stream", Unit::kNone});
  columns.push_back({"Samples", Unit::kNone});
  for (const char* c : {"Mean", "StdDev", "Min", "Q1", "Median", "Q3", "Max", "Time-Weighted Mean"}) {
    columns.push_back({c, Unit::kNone});
  }
  columns.push_back({"Blocked", Unit::kDurNs});
  sink.begin(columns);
  std::vector<Cell> row;
  for (const GpuUnit& u : work.units) {
    for (const StreamQueue& q : queue_length_summary(trace, u, qo)) {
      const Describe& d = q.samples;
      row.clear();
      push_unit(row, work, u);
      row.push_back(Cell::integer(q.stream));
      row.push_back(Cell::integer(d.count));
      row.push_back(Cell::real(sqlite_round(d.mean, 2)));
      row.push_back(std::isnan(d.std) ? Cell::null() : Cell::real(sqlite_round(d.std, 2)));
      row.push_back(Cell::integer(d.min));
      for (double v : {d.q1, d.median, d.q3}) row.push_back(Cell::real(v));
      row.push_back(Cell::integer(d.max));
      row.push_back(Cell::real(sqlite_round(q.time_weighted_mean, 2)));
      row.push_back(Cell::integer(q.blocked));
      sink.row(row);
    }
  }
  sink.end();
  return Status::Ok();
}

Status queue_length_trace(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  const char* name = "queue_length_trace";
  TRACEDOC_RETURN_IF_ERROR(check_args(name, args, {}, {"bin"}));
  const Options o = options_from(args);
  TRACEDOC_ASSIGN_OR_RETURN(const auto bin, int_arg(name, args, "bin", 0));
  if (trace.api.size() == 0) return no_data(trace, "does not contain CUDA API data.");
  TRACEDOC_ASSIGN_OR_RETURN(auto work, work_of(trace, o));

  std::vector<ColumnSpec> columns = unit_columns(work);
  columns.push_back({"Stream", Unit::kNone});
  columns.push_back({"Start", Unit::kTsNs});
  if (bin > 0) {
    columns.push_back({"Mean", Unit::kNone});
    columns.push_back({"Max", Unit::kNone});
  } else {
    columns.push_back({"Queue Length", Unit::kNone});
  }
  sink.begin(columns);
  std::vector<Cell> row;
  auto begin_row = [&](const GpuUnit& u, int32_t stream, TimeNs start) {
    row.clear();
    push_unit(row, work, u);
    row.push_back(Cell::integer(stream));
    row.push_back(Cell::integer(start));
  };
  for (const GpuUnit& u : work.units) {
    for (const StreamQueueSeries& q : queue_length_series(trace, u, o.names)) {
      if (bin <= 0) {
        for (const DepthChange& c : q.changes) {
          begin_row(u, q.stream, c.time);
          row.push_back(Cell::integer(c.depth));
          sink.row(row);
        }
        continue;
      }
      // Bins of `bin` ns from the first launch; each bin in which the queue is not empty gives its
      // time-weighted mean and its maximum length. Steps of length 0 are skipped, so long idle
      // stretches cost nothing; a long non-empty step gives one row per bin it covers.
      const std::vector<DepthChange>& c = q.changes;
      const TimeNs origin = c.empty() ? 0 : c.front().time;
      TimeNs lo = origin;
      size_t k = 0;
      while (k + 1 < c.size()) {
        if (c[k].depth == 0) {
          ++k;
          continue;
        }
        lo = std::max(lo, sat_add(origin, sat_mul(sat_sub(c[k].time, origin) / bin, bin)));
        const TimeNs hi = sat_add(lo, bin);
        double weighted = 0;
        int64_t peak = 0;
        size_t j = k;
        for (; j + 1 < c.size() && c[j].time < hi; ++j) {
          const TimeNs from = std::max(c[j].time, lo);
          const TimeNs to = std::min(c[j + 1].time, hi);
          weighted += static_cast<double>(c[j].depth) * static_cast<double>(sat_sub(to, from));
          peak = std::max(peak, c[j].depth);
        }
        begin_row(u, q.stream, lo);
        row.push_back(Cell::real(sqlite_round(weighted / static_cast<double>(sat_sub(hi, lo)), 2)));
        row.push_back(Cell::integer(peak));
        sink.row(row);
        // The last step seen may run on past this bin: the next bin starts with it.
        k = c[j].time > hi ? j - 1 : j;
        lo = hi;
      }
    }
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::pytorch
