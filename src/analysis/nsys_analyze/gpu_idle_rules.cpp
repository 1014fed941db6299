// The GPU idleness rules, per (process, device) over the span from its first GPU operation to its
// last, with CUDA profiling overhead counted as busy (gpu_activity.h):
//
//  gpu_gaps       stretches with no operation running longer than gap= ms. nsys pairs the j-th end
//                 with the (j+1)-th start in separately sorted lists; a pair with end < start is a
//                 hole in the union. A zero-length operation inside a hole still splits it, as in nsys.
//  gpu_time_util  the span cut into chunks= equal chunks (size rounded up to whole ns, the last one
//                 clipped); a chunk's use is the summed overlap of the operations with it over its
//                 length (concurrent operations add up, so it can pass 100%); chunks under
//                 threshold= % are listed, consecutive ones merged with their length-weighted mean
//                 rounded to 0.1.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/checked_math.h"
#include "analysis/gpu_activity.h"
#include "analysis/nsys_analyze/rules.h"
#include "analysis/nsys_stats/time_summary.h"
#include "analysis/statistics.h"

namespace tracedoc::nsys_analyze {

namespace {

Status require_gpu_ops(const Trace& trace) {
  const auto& s = trace.source;
  if (s.has_table("CUPTI_ACTIVITY_KIND_KERNEL") || s.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") ||
      s.has_table("CUPTI_ACTIVITY_KIND_MEMSET")) {
    return Status::Ok();
  }
  return no_data(trace,
                 "could not be analyzed because it does not contain the required data. "
                 "Does the application launch GPU operations?");
}

GpuActivityOptions activity_options(const Trace& trace) {
  GpuActivityOptions o;
  o.skip_nonpositive_starts = trace.source.format != "kineto-json";
  return o;
}

void keep_first(size_t rows_limit, size_t& n) {
  if (rows_limit > 0 && n > rows_limit) n = rows_limit;
}

}  // namespace

Status gpu_gaps(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_gpu_ops(trace));
  const int64_t threshold = sat_mul(args.gap_ms, 1000000);
  struct Gap {
    int64_t duration, start;
    int64_t pid;
    int32_t device, context;
  };
  std::vector<Gap> gaps;
  std::vector<int64_t> starts, ends;
  for (const DeviceActivity& d : collect_gpu_activity(trace, activity_options(trace))) {
    starts.clear();
    ends.clear();
    for (const GpuOp& op : d.ops) {
      starts.push_back(op.start);
      ends.push_back(op.end);
    }
    std::sort(starts.begin(), starts.end());
    std::sort(ends.begin(), ends.end());
    for (size_t j = 0; j + 1 < starts.size(); ++j) {
      const int64_t end = ends[j], next = starts[j + 1];
      if (end < next && sat_sub(next, end) > threshold) {
        gaps.push_back({sat_sub(next, end), end, d.pid(), d.device, d.context});
      }
    }
  }
  std::sort(gaps.begin(), gaps.end(), [](const Gap& a, const Gap& b) {
    return std::tie(b.duration, a.start, a.pid, a.device) < std::tie(a.duration, b.start, b.pid, b.device);
  });
  size_t n = gaps.size();
  keep_first(args.rows > 0 ? static_cast<size_t>(args.rows) : 0, n);

  sink.begin({{"Row#"}, {"Duration", Unit::kDurNs}, {"Start", Unit::kTsNs}, {"PID"}, {"Device ID"}, {"Context ID"}});
  std::vector<Cell> row;
  for (size_t k = 0; k < n; ++k) {
    const Gap& g = gaps[k];
    row = {Cell::integer(static_cast<int64_t>(k + 1)),
           Cell::integer(g.duration),
           Cell::integer(g.start),
           Cell::integer(g.pid),
           Cell::integer(g.device),
           Cell::integer(g.context)};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status gpu_time_util(const Trace& trace, const RuleArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(require_gpu_ops(trace));
  struct Group {
    double average;
    int64_t duration, start;
    int64_t pid;
    int32_t device, context;
    int64_t group_id;  // nsys's rangeId - row_number: orders groups the way its GROUP BY emits them
  };
  std::vector<Group> groups;
  const size_t chunk_count = static_cast<size_t>(args.chunks);
  for (const DeviceActivity& d : collect_gpu_activity(trace, activity_options(trace))) {
    const int64_t first = d.first_start, last = d.last_end;
    // ceil(CAST(max(end) - min(start) AS FLOAT) / chunks): exact for spans under 2^53 ns.
    const double chunk = std::ceil(sql_sub_real(last, first) / static_cast<double>(args.chunks));
    if (!(chunk >= 1 && chunk < 4e18)) continue;  // nothing to cut, or a span no clock produces
    const int64_t size = static_cast<int64_t>(chunk);
    std::vector<Interval> spans;
    spans.reserve(d.ops.size());
    for (const GpuOp& op : d.ops) spans.push_back({op.start, op.end});
    const std::vector<int64_t> load = binned_load(std::move(spans), first, size, chunk_count, last);

    // Low chunks, merged while consecutive.
    int64_t low_seen = 0;
    bool open = false;
    double weighted = 0;
    int64_t weight = 0;
    for (size_t k = 0; k < chunk_count; ++k) {
      const int64_t c_start = sat_add(first, sat_mul(static_cast<int64_t>(k), size));
      const int64_t c_end = std::min(sat_add(c_start, size), last);
      const bool exists = c_start < c_end;
      const double pct = exists ? static_cast<double>(load[k]) / static_cast<double>(c_end - c_start) * 100 : 0;
      const bool low = exists && pct < static_cast<double>(args.threshold);
      if (low) {
        if (!open) {
          groups.push_back({0, 0, c_start, d.pid(), d.device, d.context, static_cast<int64_t>(k) - low_seen});
          weighted = 0;
          weight = 0;
          open = true;
        }
        ++low_seen;
        weighted += static_cast<double>(c_end - c_start) * pct;
        weight = sat_add(weight, c_end - c_start);
        groups.back().duration = sat_sub(c_end, groups.back().start);
        groups.back().average = sqlite_round(weighted / static_cast<double>(weight), 1);
      } else {
        open = false;
      }
    }
  }
  // nsys emits groups ordered by (group id, device, pid), then numbers them by (average, duration).
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tie(a.group_id, a.device, a.pid) < std::tie(b.group_id, b.device, b.pid);
  });
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tie(a.average, a.duration) < std::tie(b.average, b.duration);
  });
  size_t n = groups.size();
  keep_first(args.rows > 0 ? static_cast<size_t>(args.rows) : 0, n);

  sink.begin({{"Row#"},
              {"In-Use", Unit::kRatioPct},
              {"Duration", Unit::kDurNs},
              {"Start", Unit::kTsNs},
              {"PID"},
              {"Device ID"},
              {"Context ID"}});
  std::vector<Cell> row;
  for (size_t k = 0; k < n; ++k) {
    const Group& g = groups[k];
    row = {Cell::integer(static_cast<int64_t>(k + 1)),
           Cell::real(g.average),
           Cell::integer(g.duration),
           Cell::integer(g.start),
           Cell::integer(g.pid),
           Cell::integer(g.device),
           Cell::integer(g.context)};
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_analyze
