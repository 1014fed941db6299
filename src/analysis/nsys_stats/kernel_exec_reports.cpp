#include "analysis/nsys_stats/kernel_exec_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

#include "analysis/checked_math.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/nvtx_kernel_names.h"
#include "analysis/statistics.h"
#include "common/flat_hash.h"

namespace tracedoc::nsys_stats {

namespace {

// One row of nsys's `runkern` join: a kernel and one API call that launched it.
struct Launch {
  uint32_t kernel, call;
};

Status check_tables(const Trace& trace) {
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_KERNEL"))
    return no_data(trace, "does not contain CUDA kernel data.");
  if (!trace.source.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return no_data(trace, "does not contain CUDA API data.");
  return Status::Ok();
}

// API names as nsys prints them (version suffix removed), interned locally so that
// `cudaLaunchKernel_v7000` and `cudaLaunchKernel` are one name.
class ApiNames {
 public:
  explicit ApiNames(const Trace& trace) : trace_(trace), local_(trace.strings.size(), kNoStr) {}
  StrId id(StrId raw) {
    if (raw == kNoStr) return kNoStr;  // name id not in StringIds: the CASE yields NULL
    StrId& l = local_[raw];
    if (l == kNoStr) l = pool_.intern(strip_api_version(trace_.str(raw)));
    return l;
  }
  std::string_view text(StrId id) const { return pool_.get(id); }
  Cell cell(StrId id) const { return id == kNoStr ? Cell::null() : Cell::text(pool_.get(id)); }

 private:
  const Trace& trace_;
  StringPool pool_;
  std::vector<StrId> local_;
};

// The join in nsys's row order: kernels in table order, each with its calls in row order
// (SQLite scans the kernel table and probes an automatic index on the calls' correlationId).
// Kernels whose name fails --filter-name are left out.
std::vector<Launch> join_launches(const Trace& trace, const KernelLaunchJoin& join, const KernelNames& names,
                                  const ReportArgs& args) {
  std::vector<int8_t> name_ok(args.name_filter ? names.id_bound() + 1 : 0, -1);
  std::vector<Launch> launches;
  launches.reserve(trace.kernels.size());
  for (uint32_t k = 0; k < trace.kernels.size(); ++k) {
    if (args.name_filter) {
      const StrId id = names.id(k);
      int8_t& ok = name_ok[id == kNoStr ? names.id_bound() : id];
      if (ok < 0) ok = args.name_ok(names.text(id)) ? 1 : 0;
      if (!ok) continue;
    }
    for (uint32_t call : join.calls_of(k)) launches.push_back({k, call});
  }
  return launches;
}

// Queue time: from the end of the call to the start of the kernel, NULL when the kernel started first.
bool has_queue(const Trace& trace, const Launch& l) {
  // sat_sub: damaged times must not overflow (checked_math.h); the sign is what matters here.
  return sat_sub(trace.kernels.start[l.kernel], trace.api.end[l.call]) >= 0;
}

TimeNs total_duration(const Trace& trace, const Launch& l) {
  return sat_sub(std::max(trace.api.end[l.call], trace.kernels.end[l.kernel]), trace.api.start[l.call]);
}

// NULL sorts first, then texts byte-wise (SQLite's BINARY collation).
int compare_nullable(StrId a, StrId b, std::string_view ta, std::string_view tb) {
  if (a == kNoStr || b == kNoStr) return (a == kNoStr ? 0 : 1) - (b == kNoStr ? 0 : 1);
  return ta.compare(tb);
}

// Avg, Med, Min, Max, StdDev cells of one duration series; NULLs (but StdDev 0.0) when empty, as
// SQLite's aggregates and the extension's stdev() give them.
void push_stats(std::vector<int64_t>& values, std::vector<Cell>& row) {
  if (values.empty()) {
    row.insert(row.end(), {Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::real(0.0)});
    return;
  }
  const SummaryStats s = summarize(values);
  row.push_back(Cell::real(sqlite_round(s.avg, 1)));
  row.push_back(Cell::real(sqlite_round(s.median, 1)));
  row.push_back(Cell::integer(s.min));
  row.push_back(Cell::integer(s.max));
  row.push_back(Cell::real(sqlite_round(s.stdev, 1)));
}

}  // namespace

Status cuda_kern_exec_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_tables(trace));
  const KernelLaunchJoin join(trace);
  TRACEDOC_ASSIGN_OR_RETURN(auto names_or, KernelNames::make(trace, args, &join));
  const KernelNames& names = names_or;
  const auto& k = trace.kernels;
  const auto& a = trace.api;
  ApiNames api_names(trace);
  const std::vector<Launch> launches = join_launches(trace, join, names, args);

  // GROUP BY (PID, TID, DevId, API Name, Kernel Name), through dense ids: (pid, tid) -> thread,
  // (API name, kernel name) -> pair, (thread, device) -> place, (place, pair) -> group.
  DenseIdMap thread_ids, pair_ids, place_ids, group_ids;
  std::vector<uint32_t> group_of(launches.size());
  std::vector<uint32_t> first_launch;  // per group: where its key fields are read from
  std::vector<StrId> group_api;
  for (size_t i = 0; i < launches.size(); ++i) {
    const Launch& l = launches[i];
    const int64_t tid = a.global_tid[l.call];
    const uint64_t thread =
        thread_ids.id((static_cast<uint64_t>(pid_of(tid)) << 24) | static_cast<uint64_t>(tid_of(tid)));
    const StrId api = api_names.id(a.name[l.call]);
    const uint64_t pair = pair_ids.id((uint64_t{api} << 32) | names.id(l.kernel));
    const uint64_t place = place_ids.id((thread << 32) | static_cast<uint32_t>(k.device[l.kernel]));
    const uint32_t g = group_ids.id((place << 32) | pair);
    if (g == first_launch.size()) {
      first_launch.push_back(static_cast<uint32_t>(i));
      group_api.push_back(api);
    }
    group_of[i] = g;
  }
  const size_t group_count = first_launch.size();

  // Rows of each group, kept in join order (the order the aggregates read them, which stdev sees).
  std::vector<size_t> offset(group_count + 1, 0);
  for (uint32_t g : group_of) ++offset[g + 1];
  std::partial_sum(offset.begin(), offset.end(), offset.begin());
  std::vector<uint32_t> members(launches.size());
  {
    std::vector<size_t> cursor(offset.begin(), offset.end() - 1);
    for (size_t i = 0; i < launches.size(); ++i) members[cursor[group_of[i]]++] = static_cast<uint32_t>(i);
  }

  // GROUP BY output order (the key ascending), then ORDER BY the rounded TAvg descending, which
  // SQLite's sorter does stably.
  std::vector<uint32_t> order(group_count);
  std::iota(order.begin(), order.end(), 0u);
  auto key_less = [&](uint32_t x, uint32_t y) {
    const Launch& lx = launches[first_launch[x]];
    const Launch& ly = launches[first_launch[y]];
    const int64_t tx = a.global_tid[lx.call], ty = a.global_tid[ly.call];
    if (pid_of(tx) != pid_of(ty)) return pid_of(tx) < pid_of(ty);
    if (tid_of(tx) != tid_of(ty)) return tid_of(tx) < tid_of(ty);
    if (k.device[lx.kernel] != k.device[ly.kernel]) return k.device[lx.kernel] < k.device[ly.kernel];
    const StrId ax = group_api[x], ay = group_api[y];
    if (int c = compare_nullable(ax, ay, api_names.text(ax), api_names.text(ay)); c != 0) return c < 0;
    const StrId kx = names.id(lx.kernel), ky = names.id(ly.kernel);
    return compare_nullable(kx, ky, names.text(kx), names.text(ky)) < 0;
  };
  std::sort(order.begin(), order.end(), key_less);

  std::vector<std::vector<Cell>> rows(group_count);
  std::vector<double> rounded_total_avg(group_count);
  std::vector<int64_t> total, api, queue, kernel;
  for (uint32_t g = 0; g < group_count; ++g) {
    total.clear(), api.clear(), queue.clear(), kernel.clear();
    for (size_t m = offset[g]; m < offset[g + 1]; ++m) {
      const Launch& l = launches[members[m]];
      total.push_back(total_duration(trace, l));
      api.push_back(sat_sub(a.end[l.call], a.start[l.call]));  // no overflow on damaged times
      if (has_queue(trace, l)) queue.push_back(sat_sub(k.start[l.kernel], a.end[l.call]));
      kernel.push_back(sat_sub(k.end[l.kernel], k.start[l.kernel]));
    }
    const Launch& first = launches[first_launch[g]];
    const int64_t tid = a.global_tid[first.call];
    std::vector<Cell>& row = rows[g];
    row = {Cell::integer(pid_of(tid)), Cell::integer(tid_of(tid)), Cell::integer(k.device[first.kernel]),
           Cell::integer(static_cast<int64_t>(total.size())), Cell::integer(static_cast<int64_t>(queue.size()))};
    push_stats(total, row);
    rounded_total_avg[g] = row[5].d;
    push_stats(api, row);
    push_stats(queue, row);
    push_stats(kernel, row);
    row.push_back(api_names.cell(group_api[g]));
    row.push_back(names.cell(names.id(first.kernel)));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return rounded_total_avg[x] > rounded_total_avg[y]; });

  std::vector<ColumnSpec> columns = {{"PID", Unit::kNone},
                                     {"TID", Unit::kNone},
                                     {"DevId", Unit::kNone},
                                     {"Count", Unit::kNone},
                                     {"QCount", Unit::kNone}};
  for (const char* phase : {"T", "A", "Q", "K"}) {
    for (const char* stat : {"Avg", "Med", "Min", "Max", "StdDev"})
      columns.push_back({std::string(phase) + stat, Unit::kDurNs});
  }
  columns.push_back({"API Name", Unit::kNone});
  columns.push_back({"Kernel Name", Unit::kNone});
  sink.begin(columns);
  for (uint32_t g : order) sink.row(rows[g]);
  sink.end();
  return Status::Ok();
}

Status cuda_kern_exec_trace(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_tables(trace));
  const KernelLaunchJoin join(trace);
  TRACEDOC_ASSIGN_OR_RETURN(auto names_or, KernelNames::make(trace, args, &join));
  const KernelNames& names = names_or;
  const auto& k = trace.kernels;
  const auto& a = trace.api;
  ApiNames api_names(trace);
  std::vector<Launch> launches = join_launches(trace, join, names, args);
  // ORDER BY the call's start; SQLite's sorter keeps the join order on ties.
  std::stable_sort(launches.begin(), launches.end(),
                   [&](const Launch& x, const Launch& y) { return a.start[x.call] < a.start[y.call]; });

  sink.begin({{"API Start", Unit::kTsNs},
              {"API Dur", Unit::kDurNs},
              {"Queue Start", Unit::kTsNs},
              {"Queue Dur", Unit::kDurNs},
              {"Kernel Start", Unit::kTsNs},
              {"Kernel Dur", Unit::kDurNs},
              {"Total Dur", Unit::kDurNs},
              {"PID", Unit::kNone},
              {"TID", Unit::kNone},
              {"DevId", Unit::kNone},
              {"API Function", Unit::kNone},
              {"GridXYZ", Unit::kNone},
              {"BlockXYZ", Unit::kNone},
              {"Kernel Name", Unit::kNone}});
  std::vector<Cell> row(14);
  char grid[48], block[48];  // "%4d %4d %4d" of three int32: at most 35 characters
  for (const Launch& l : launches) {
    const uint32_t i = l.kernel, c = l.call;
    const bool queued = has_queue(trace, l);
    const int64_t tid = a.global_tid[c];
    row[0] = Cell::integer(a.start[c]);
    row[1] = sql_sub(a.end[c], a.start[c]);  // no overflow on damaged times (checked_math.h)
    row[2] = queued ? Cell::integer(a.end[c]) : Cell::null();
    row[3] = queued ? sql_sub(k.start[i], a.end[c]) : Cell::null();
    row[4] = Cell::integer(k.start[i]);
    row[5] = sql_sub(k.end[i], k.start[i]);
    row[6] = Cell::integer(total_duration(trace, l));
    row[7] = Cell::integer(pid_of(tid));
    row[8] = Cell::integer(tid_of(tid));
    row[9] = Cell::integer(k.device[i]);
    row[10] = api_names.cell(api_names.id(a.name[c]));
    const char* grid_end = fmt::format_to(grid, "{:4d} {:4d} {:4d}", k.grid_x[i], k.grid_y[i], k.grid_z[i]);
    const char* block_end = fmt::format_to(block, "{:4d} {:4d} {:4d}", k.block_x[i], k.block_y[i], k.block_z[i]);
    row[11] = Cell::text(std::string_view(grid, static_cast<size_t>(grid_end - grid)));
    row[12] = Cell::text(std::string_view(block, static_cast<size_t>(block_end - block)));
    row[13] = names.cell(names.id(i));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
