#include "analysis/nsys_stats/nvtx_projection_reports.h"

#include <algorithm>
#include <charconv>

#include "analysis/checked_math.h"
#include "analysis/grouped_values.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/nvtx_projection.h"
#include "analysis/statistics.h"
#include "common/flat_hash.h"

namespace tracedoc::nsys_stats {

namespace {

// The table checks of nsys's scripts, in their order.
Status check_projection_tables(const Trace& trace) {
  const auto& src = trace.source;
  if (!src.has_table("StringIds")) return no_data(trace, "file does not contain StringIds table.");
  if (!src.has_table("NVTX_EVENTS")) return no_data(trace, "does not contain NV Tools Extension (NVTX) data.");
  if (!src.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return no_data(trace, "does not contain CUDA API data.");
  if (!src.has_table("CUPTI_ACTIVITY_KIND_KERNEL") && !src.has_table("CUPTI_ACTIVITY_KIND_MEMCPY") &&
      !src.has_table("CUPTI_ACTIVITY_KIND_MEMSET")) {
    return no_data(trace, "does not contain GPU operation data.");
  }
  return Status::Ok();
}

Status check_kernel_tables(const Trace& trace) {
  const auto& src = trace.source;
  if (!src.has_table("StringIds")) return no_data(trace, "file does not contain StringIds table.");
  if (!src.has_table("NVTX_EVENTS")) return no_data(trace, "does not contain NV Tools Extension (NVTX) data.");
  if (!src.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) return no_data(trace, "does not contain CUDA kernel data.");
  if (!src.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) return no_data(trace, "does not contain CUDA API data.");
  return Status::Ok();
}

const char* style_text(bool pushpop) { return pushpop ? "PushPop" : "StartEnd"; }

// SQLite sorts NULL first, then text in BINARY (memcmp) order, which std::string_view's ordering is.
// Ranks: 0 for NULL, then from 1 in that order; equal texts share a rank, so ranks group and order
// as SQLite does.
struct NameRanks {
  std::vector<uint32_t> rank_of;          // per item (0: NULL or not asked for)
  std::vector<std::string_view> by_rank;  // by_rank[0] unused (NULL)
};

// Ranks the items for which `wanted(i)` holds; `name_of(i)` is their text.
template <typename NameOf, typename Wanted>
NameRanks rank_names(size_t count, NameOf name_of, Wanted wanted) {
  NameRanks ranks;
  ranks.rank_of.assign(count, 0);
  ranks.by_rank.emplace_back();
  std::vector<std::pair<std::string_view, uint32_t>> order;
  for (uint32_t i = 0; i < count; ++i) {
    if (wanted(i)) order.emplace_back(name_of(i), i);
  }
  std::sort(order.begin(), order.end());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || order[k].first != order[k - 1].first) ranks.by_rank.push_back(order[k].first);
    ranks.rank_of[order[k].second] = static_cast<uint32_t>(ranks.by_rank.size() - 1);
  }
  return ranks;
}

// Ranks of the range names (by name id) for which `wanted(name id)` holds.
template <typename Wanted>
NameRanks rank_range_names(const ProjectionRanges& ranges, Wanted wanted) {
  return rank_names(
      ranges.name_count(), [&](uint32_t id) { return ranges.name_text(id); }, wanted);
}

// Everything the three reports share: the ranges, their projection and the children counts.
struct Projected {
  explicit Projected(const Trace& trace)
      : ranges(trace), launches(trace.api), gpu(project_gpu_ops(trace, ranges, launches)) {
    // nsys's `child` CTE: ranges with GPU work, counted under their parent (cycles included).
    children.assign(ranges.size(), 0);
    for (uint32_t s = 0; s < ranges.size(); ++s) {
      if (gpu.per_range[s].has_ops() && ranges.parent(s) != ProjectionRanges::kNone) ++children[ranges.parent(s)];
    }
  }
  ProjectionRanges ranges;
  LaunchIndex launches;
  GpuProjection gpu;
  std::vector<int64_t> children;
};

double avg(int64_t sum, int64_t count) { return static_cast<double>(sum) / static_cast<double>(count); }

}  // namespace

Status nvtx_gpu_proj_trace(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_projection_tables(trace));
  const Projected p(trace);
  const ProjectionRanges& ranges = p.ranges;

  sink.begin({{"Name", Unit::kNone},
              {"Projected Start", Unit::kTsNs},
              {"Projected Duration", Unit::kDurNs},
              {"Orig Start", Unit::kTsNs},
              {"Orig Duration", Unit::kDurNs},
              {"Style", Unit::kNone},
              {"PID", Unit::kNone},
              {"TID", Unit::kNone},
              {"NumGPUOps", Unit::kNone},
              {"Lvl", Unit::kNone},
              {"NumChild", Unit::kNone},
              {"RangeId", Unit::kNone},
              {"ParentId", Unit::kNone},
              {"RangeStack", Unit::kNone}});
  std::vector<Cell> row(14);
  auto projected = [&](const RangeProjection& proj, int64_t global_tid) {
    const bool timed = proj.first_start != kNoTime && proj.last_end != kNoTime;
    row[1] = timed ? Cell::integer(proj.first_start) : Cell::null();
    row[2] = timed ? sql_sub(proj.last_end, proj.first_start) : Cell::null();  // no overflow on damaged times
    row[6] = Cell::integer(pid_of(global_tid));
    row[7] = Cell::integer(tid_of(global_tid));
    row[8] = Cell::integer(proj.op_count);
  };

  // nsys's output is in GROUP BY rangeId order, the NULL group (work outside every range) first: its
  // ORDER BY names "Projected Start", which matches no column alias and so is a constant string.
  if (p.gpu.outside.has_ops() && !args.name_filter) {
    std::fill(row.begin(), row.end(), Cell::null());
    projected(p.gpu.outside, p.gpu.outside_thread);
    row[10] = Cell::integer(0);
    sink.row(row);
  }
  std::string stack;
  std::vector<int64_t> chain;
  char digits[24];
  for (uint32_t s = 0; s < ranges.size(); ++s) {
    const RangeProjection& proj = p.gpu.per_range[s];
    if (!proj.has_ops()) continue;
    if (args.name_filter && (ranges.name_is_null(s) || !args.name_ok(ranges.name(s)))) continue;
    std::fill(row.begin(), row.end(), Cell::null());
    if (!ranges.name_is_null(s)) row[0] = Cell::text(ranges.name(s));
    projected(proj, ranges.global_tid(s));
    row[3] = Cell::integer(ranges.start(s));
    row[4] = sql_sub(ranges.end(s), ranges.start(s));  // no overflow on damaged times
    row[5] = Cell::text(style_text(ranges.is_pushpop(s)));
    row[10] = Cell::integer(p.children[s]);
    row[11] = Cell::integer(ranges.range_id(s));
    if (ranges.level(s) != ProjectionRanges::kUnreachable) {
      row[9] = Cell::integer(ranges.level(s));
      const uint32_t parent = ranges.parent(s);
      if (parent != ProjectionRanges::kNone) row[12] = Cell::integer(ranges.range_id(parent));
      // RangeStack: ":<root id>:...:<own id>".
      chain.clear();
      for (uint32_t cur = s; cur != ProjectionRanges::kNone; cur = ranges.parent(cur)) {
        chain.push_back(ranges.range_id(cur));
      }
      stack.clear();
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        stack += ':';
        stack.append(digits, std::to_chars(digits, digits + sizeof(digits), *it).ptr);
      }
      row[13] = Cell::text(stack);
    }
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status nvtx_gpu_proj_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_projection_tables(trace));
  const Projected p(trace);
  const ProjectionRanges& ranges = p.ranges;
  std::vector<uint8_t> name_used(ranges.name_count(), 0);
  for (uint32_t s = 0; s < ranges.size(); ++s) {
    if (p.gpu.per_range[s].has_ops() && !ranges.name_is_null(s)) name_used[ranges.name_id(s)] = 1;
  }
  const NameRanks names = rank_range_names(ranges, [&](uint32_t id) { return name_used[id] != 0; });

  // Rows of nvtx_gpu_proj_trace with a name, grouped by (name, style); within a group in RangeId
  // order, the order SQLite feeds its aggregates (the standard deviation depends on it).
  std::vector<uint32_t> slots;
  for (uint32_t s = 0; s < ranges.size(); ++s) {
    if (!p.gpu.per_range[s].has_ops() || ranges.name_is_null(s) || !args.name_ok(ranges.name(s))) continue;
    slots.push_back(s);
  }
  auto group_key = [&](uint32_t s) {
    return std::make_pair(names.rank_of[ranges.name_id(s)], ranges.is_pushpop(s) ? 0 : 1);  // 'PushPop' < 'StartEnd'
  };
  std::stable_sort(slots.begin(), slots.end(), [&](uint32_t a, uint32_t b) { return group_key(a) < group_key(b); });

  struct Group {
    uint32_t slot;  // a member, for the labels
    SummaryStats proj;
    int64_t range_time = 0, ops = 0, children = 0, level_sum = 0, level_count = 0;
  };
  std::vector<Group> groups;
  std::vector<int64_t> durations;
  for (size_t k = 0; k < slots.size();) {
    size_t end = k;
    Group g{slots[k], {}};
    durations.clear();
    for (; end < slots.size() && group_key(slots[end]) == group_key(slots[k]); ++end) {
      const uint32_t s = slots[end];
      const RangeProjection& proj = p.gpu.per_range[s];
      // sat_*: no overflow on damaged times (checked_math.h).
      durations.push_back(sat_sub(proj.last_end, proj.first_start));
      g.range_time = sat_add(g.range_time, sat_sub(ranges.end(s), ranges.start(s)));
      g.ops += proj.op_count;
      g.children += p.children[s];
      if (ranges.level(s) != ProjectionRanges::kUnreachable) {  // avg() skips NULL levels
        g.level_sum += ranges.level(s);
        ++g.level_count;
      }
    }
    g.proj = summarize(durations);
    groups.push_back(g);
    k = end;
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.proj.total > b.proj.total; });

  sink.begin({{"Range", Unit::kNone},
              {"Style", Unit::kNone},
              {"Total Proj Time", Unit::kDurNs},
              {"Total Range Time", Unit::kDurNs},
              {"Range Instances", Unit::kNone},
              {"Proj Avg", Unit::kDurNs},
              {"Proj Med", Unit::kDurNs},
              {"Proj Min", Unit::kDurNs},
              {"Proj Max", Unit::kDurNs},
              {"Proj StdDev", Unit::kDurNs},
              {"Total GPU Ops", Unit::kNone},
              {"Avg GPU Ops", Unit::kNone},
              {"Avg Range Lvl", Unit::kNone},
              {"Avg Num Child", Unit::kNone}});
  std::vector<Cell> row(14);
  for (const Group& g : groups) {
    const SummaryStats& st = g.proj;
    row[0] = Cell::text(ranges.name(g.slot));
    row[1] = Cell::text(style_text(ranges.is_pushpop(g.slot)));
    row[2] = Cell::integer(st.total);
    row[3] = Cell::integer(g.range_time);
    row[4] = Cell::integer(st.count);
    row[5] = Cell::real(sqlite_round(st.avg, 1));
    row[6] = Cell::real(sqlite_round(st.median, 1));
    row[7] = Cell::integer(st.min);
    row[8] = Cell::integer(st.max);
    row[9] = Cell::real(sqlite_round(st.stdev, 1));
    row[10] = Cell::integer(g.ops);
    row[11] = Cell::real(sqlite_round(avg(g.ops, st.count), 1));
    row[12] = g.level_count == 0 ? Cell::null() : Cell::real(sqlite_round(avg(g.level_sum, g.level_count), 1));
    row[13] = Cell::real(sqlite_round(avg(g.children, st.count), 1));
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

Status nvtx_kern_sum(const Trace& trace, const ReportArgs& args, RowSink& sink) {
  TRACEDOC_RETURN_IF_ERROR(check_kernel_tables(trace));
  const auto& k = trace.kernels;
  const ProjectionRanges ranges(trace, /*with_tree=*/false);
  const LaunchIndex launches(trace.api);
  const NameRanks range_names = rank_range_names(ranges, [](uint32_t) { return true; });

  // Kernel names: `coalesce(<chosen column>, demangledName)`, ranked by text over the distinct
  // name ids (two ids may spell the same text).
  std::vector<StrId> kernel_names(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    const StrId id = kernel_name(trace, i, args);
    kernel_names[i] = id == kNoStr ? k.name[i] : id;
  }
  std::vector<StrId> distinct_kernel_names(kernel_names);
  std::sort(distinct_kernel_names.begin(), distinct_kernel_names.end());
  distinct_kernel_names.erase(std::unique(distinct_kernel_names.begin(), distinct_kernel_names.end()),
                              distinct_kernel_names.end());
  const NameRanks distinct_ranks = rank_names(
      distinct_kernel_names.size(), [&](uint32_t i) { return trace.str(distinct_kernel_names[i]); },
      [&](uint32_t i) { return distinct_kernel_names[i] != kNoStr; });
  std::vector<uint32_t> kernel_rank(k.size());
  for (size_t i = 0; i < k.size(); ++i) {
    const auto at = std::lower_bound(distinct_kernel_names.begin(), distinct_kernel_names.end(), kernel_names[i]);
    kernel_rank[i] = distinct_ranks.rank_of[static_cast<size_t>(at - distinct_kernel_names.begin())];
  }

  // One row of nsys's `combo` per (kernel, launching call, containing range), with NULLs where the
  // LEFT JOINs find nothing. A group is (pid/tid, range name and style, kernel name); it is keyed
  // through dense ids: thread -> id, (range label, kernel rank) -> id, then (thread id, that id).
  // Range label: 3 * name rank + style (0 none, 1 PushPop, 2 StartEnd), 0 without a range.
  auto label_of = [&](uint32_t slot) -> uint64_t {
    if (slot == ProjectionRanges::kNone) return 0;
    const uint64_t name_rank = ranges.name_is_null(slot) ? 0 : range_names.rank_of[ranges.name_id(slot)];
    return 3 * name_rank + (ranges.is_pushpop(slot) ? 1 : 2);
  };
  constexpr int64_t kNoThread = -1;
  DenseIdMap thread_ids, label_kernel_ids, range_kernel_pairs;
  GroupedValues durations;
  std::vector<int64_t> nvtx_instances, kernel_instances;
  std::vector<uint32_t> last_kernel;
  auto add_row = [&](int64_t thread, uint32_t slot, uint32_t kernel) {
    const uint64_t thread_id = thread_ids.id(static_cast<uint64_t>(thread));
    const uint64_t label_kernel = label_kernel_ids.id((label_of(slot) << 32) | kernel_rank[kernel]);
    const uint32_t g = durations.group_of((thread_id << 32) | label_kernel);
    if (g == nvtx_instances.size()) {
      nvtx_instances.push_back(0);
      kernel_instances.push_back(0);
      last_kernel.push_back(UINT32_MAX);
    }
    durations.add(g, sat_sub(k.end[kernel], k.start[kernel]));  // no overflow on damaged times
    // A kernel's rows are consecutive, so count(DISTINCT kernel) counts changes of kernel.
    if (last_kernel[g] != kernel) {
      last_kernel[g] = kernel;
      ++kernel_instances[g];
    }
    if (slot != ProjectionRanges::kNone) {
      // A range's thread and label are its own, so (range, kernel name) determines the group.
      const size_t before = range_kernel_pairs.size();
      range_kernel_pairs.id((uint64_t{slot} << 32) | kernel_rank[kernel]);
      if (range_kernel_pairs.size() != before) ++nvtx_instances[g];
    }
  };
  std::vector<uint32_t> found;
  for (uint32_t i = 0; i < k.size(); ++i) {
    if (!args.name_ok(trace.str(kernel_names[i]))) continue;
    const auto calls = launches.find(k.global_pid[i], k.correlation[i]);
    if (calls.empty()) add_row(kNoThread, ProjectionRanges::kNone, i);
    for (uint32_t call : calls) {
      const int64_t gtid = trace.api.global_tid[call];
      const int64_t thread = (pid_of(gtid) << 24) | tid_of(gtid);  // nsys groups by PID, TID only
      found.clear();
      ranges.containers(gtid, trace.api.start[call], trace.api.end[call], found);
      if (found.empty()) add_row(thread, ProjectionRanges::kNone, i);
      for (uint32_t slot : found) add_row(thread, slot, i);
    }
  }
  const std::vector<SummaryStats> stats = durations.summarize_all();

  struct Group {
    uint32_t id;
    int64_t thread;
    uint64_t label, kernel_rank;
  };
  std::vector<Group> groups(stats.size());
  for (uint32_t g = 0; g < stats.size(); ++g) {
    const uint64_t key = durations.key(g);
    const uint64_t label_kernel = label_kernel_ids.key(static_cast<uint32_t>(key & 0xFFFFFFFF));
    groups[g] = {g, static_cast<int64_t>(thread_ids.key(static_cast<uint32_t>(key >> 32))), label_kernel >> 32,
                 label_kernel & 0xFFFFFFFF};
  }
  // ORDER BY range name, PID, TID, total DESC; ties keep the GROUP BY order (style, kernel name).
  std::sort(groups.begin(), groups.end(), [&](const Group& a, const Group& b) {
    const uint64_t name_a = a.label / 3, name_b = b.label / 3;
    if (name_a != name_b) return name_a < name_b;
    if (a.thread != b.thread) return a.thread < b.thread;
    if (stats[a.id].total != stats[b.id].total) return stats[a.id].total > stats[b.id].total;
    if (a.label != b.label) return a.label < b.label;
    return a.kernel_rank < b.kernel_rank;
  });

  sink.begin({{"NVTX Range", Unit::kNone},
              {"Style", Unit::kNone},
              {"PID", Unit::kNone},
              {"TID", Unit::kNone},
              {"NVTX Inst", Unit::kNone},
              {"Kern Inst", Unit::kNone},
              {"Total Time", Unit::kDurNs},
              {"Avg", Unit::kDurNs},
              {"Med", Unit::kDurNs},
              {"Min", Unit::kDurNs},
              {"Max", Unit::kDurNs},
              {"StdDev", Unit::kDurNs},
              {"Kernel Name", Unit::kNone}});
  std::vector<Cell> row(13);
  for (const Group& g : groups) {
    const SummaryStats& st = stats[g.id];
    const uint64_t name_rank = g.label / 3, style = g.label % 3;
    row[0] = name_rank == 0 ? Cell::null() : Cell::text(range_names.by_rank[name_rank]);
    row[1] = style == 0 ? Cell::null() : Cell::text(style_text(style == 1));
    row[2] = g.thread == kNoThread ? Cell::null() : Cell::integer(g.thread >> 24);
    row[3] = g.thread == kNoThread ? Cell::null() : Cell::integer(g.thread & 0xFFFFFF);
    row[4] = Cell::integer(nvtx_instances[g.id]);
    row[5] = Cell::integer(kernel_instances[g.id]);
    row[6] = Cell::integer(st.total);
    row[7] = Cell::real(sqlite_round(st.avg, 1));
    row[8] = Cell::real(sqlite_round(st.median, 1));
    row[9] = Cell::integer(st.min);
    row[10] = Cell::integer(st.max);
    row[11] = Cell::real(sqlite_round(st.stdev, 1));
    row[12] = g.kernel_rank == 0 ? Cell::null() : Cell::text(distinct_ranks.by_rank[g.kernel_rank]);
    sink.row(row);
  }
  sink.end();
  return Status::Ok();
}

}  // namespace tracedoc::nsys_stats
