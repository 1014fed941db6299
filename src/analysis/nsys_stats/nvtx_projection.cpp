#include "analysis/nsys_stats/nvtx_projection.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "analysis/nsys_stats/naming.h"

namespace tracedoc::nsys_stats {

namespace {

// nsys's NVTX_EVENTS_MINMAXTS.max: max(max(start), max(end)) over all ranges (including those
// ended on another thread). SQL NULL (kNoTime) when no range has an end at all.
TimeNs latest_range_timestamp(const RangeTable& r) {
  TimeNs max_start = kNoTime, max_end = kNoTime;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nvtx_range(r.kind[i])) continue;
    if (r.start[i] != kNoTime) max_start = std::max(max_start, r.start[i]);
    if (r.end[i] != kNoTime) max_end = std::max(max_end, r.end[i]);
  }
  if (max_start == kNoTime || max_end == kNoTime) return kNoTime;
  return std::max(max_start, max_end);
}

}  // namespace

ProjectionRanges::ProjectionRanges(const Trace& trace) {
  const auto& r = trace.ranges;
  const TimeNs open_end = latest_range_timestamp(r);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nvtx_range(r.kind[i]) || r.end_global_tid[i] != kNoValue) continue;
    const TimeNs end = r.end[i] == kNoTime ? open_end : r.end[i];
    // With a NULL start or end every comparison nsys makes is false: such a range contains nothing
    // and is nobody's parent, so it can never appear in a report.
    if (r.start[i] == kNoTime || end == kNoTime) continue;
    row_.push_back(static_cast<uint32_t>(i));
    start_.push_back(r.start[i]);
    end_.push_back(end);
    global_tid_.push_back(r.global_tid[i]);
    pushpop_.push_back(nsys_stats::is_pushpop(r.kind[i]) ? 1 : 0);
  }
  build_names(trace);
  build_thread_index();
  build_parents();
  build_levels();
}

void ProjectionRanges::build_names(const Trace& trace) {
  const auto& r = trace.ranges;
  NvtxNamer namer(trace);
  name_.resize(size());
  name_null_.resize(size());
  std::unordered_map<uint64_t, std::string_view> composed;  // (domain, text) -> "<domain>:<text>"
  for (uint32_t s = 0; s < size(); ++s) {
    const uint32_t i = row_[s];
    const StrId text = r.text[i];
    name_null_[s] = text == kNoStr ? 1 : 0;
    if (text == kNoStr) continue;
    const StrId domain = namer.domain(i);
    if (domain == kNoStr) {
      name_[s] = trace.str(text);
      continue;
    }
    auto [it, fresh] = composed.try_emplace((static_cast<uint64_t>(domain) << 32) | text);
    if (fresh) it->second = composed_names_.emplace_back(namer.tag(i));
    name_[s] = it->second;
  }
}

void ProjectionRanges::build_thread_index() {
  const size_t n = size();
  by_thread_.resize(n);
  std::iota(by_thread_.begin(), by_thread_.end(), 0u);
  std::sort(by_thread_.begin(), by_thread_.end(), [&](uint32_t a, uint32_t b) {
    if (global_tid_[a] != global_tid_[b]) return global_tid_[a] < global_tid_[b];
    if (start_[a] != start_[b]) return start_[a] < start_[b];
    return a < b;
  });
  sorted_start_.resize(n);
  for (size_t p = 0; p < n; ++p) {
    sorted_start_[p] = start_[by_thread_[p]];
    if (p == 0 || global_tid_[by_thread_[p]] != global_tid_[by_thread_[p - 1]]) {
      thread_begin_.emplace_back(global_tid_[by_thread_[p]], static_cast<uint32_t>(p));
    }
  }
  while (leaf_base_ < n) leaf_base_ *= 2;
  max_end_.assign(2 * leaf_base_, kNoTime);
  for (size_t p = 0; p < n; ++p) max_end_[leaf_base_ + p] = end_[by_thread_[p]];
  for (size_t node = leaf_base_ - 1; node >= 1; --node) {
    max_end_[node] = std::max(max_end_[2 * node], max_end_[2 * node + 1]);
  }
}

void ProjectionRanges::report(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi,
                              TimeNs min_end, std::vector<uint32_t>& out) const {
  if (node_hi <= lo || hi <= node_lo || max_end_[node] < min_end) return;
  if (node >= leaf_base_) {
    out.push_back(by_thread_[node - leaf_base_]);
    return;
  }
  const size_t mid = (node_lo + node_hi) / 2;
  report(2 * node, node_lo, mid, lo, hi, min_end, out);
  report(2 * node + 1, mid, node_hi, lo, hi, min_end, out);
}

void ProjectionRanges::containers(int64_t global_tid, TimeNs call_start, TimeNs call_end,
                                  std::vector<uint32_t>& out) const {
  if (call_start == kNoTime || call_end == kNoTime) return;
  auto t = std::lower_bound(thread_begin_.begin(), thread_begin_.end(), std::make_pair(global_tid, uint32_t{0}));
  if (t == thread_begin_.end() || t->first != global_tid) return;
  const size_t begin = t->second;
  const size_t thread_end = std::next(t) == thread_begin_.end() ? size() : std::next(t)->second;
  // Ranges of this thread that started at or before the call.
  const size_t started = static_cast<size_t>(
      std::upper_bound(sorted_start_.begin() + begin, sorted_start_.begin() + thread_end, call_start) -
      sorted_start_.begin());
  if (started > begin) report(1, 0, leaf_base_, begin, started, call_end, out);
}

// Parent = the containing other range of the same thread with the smallest tightness
// (c.start - p.start) + (p.end - c.end), i.e. the smallest duration; ties to the lowest row id,
// the first one SQLite's rtree scan meets. One sweep per thread in start order: a Fenwick tree over
// the thread's distinct ends (reversed, so that a prefix is "end >= x") keeps the best two ranges
// seen so far, the second one being the answer when the best is the range itself.
void ProjectionRanges::build_parents() {
  parent_.assign(size(), kNone);
  struct Best2 {
    uint32_t first = kNone, second = kNone;
  };
  auto better = [&](uint32_t a, uint32_t b) {  // is a a tighter parent candidate than b?
    if (b == kNone) return a != kNone;
    if (a == kNone) return false;
    const TimeNs da = end_[a] - start_[a], db = end_[b] - start_[b];
    return da != db ? da < db : a < b;
  };
  auto add = [&](Best2& into, uint32_t slot) {
    if (slot == kNone || slot == into.first || slot == into.second) return;
    if (better(slot, into.first)) {
      into.second = into.first;
      into.first = slot;
    } else if (better(slot, into.second)) {
      into.second = slot;
    }
  };
  std::vector<Best2> fenwick;
  std::vector<TimeNs> ends;
  for (size_t t = 0; t < thread_begin_.size(); ++t) {
    const size_t begin = thread_begin_[t].second;
    const size_t finish = t + 1 < thread_begin_.size() ? thread_begin_[t + 1].second : size();
    ends.clear();
    for (size_t p = begin; p < finish; ++p) ends.push_back(end_[by_thread_[p]]);
    std::sort(ends.begin(), ends.end());
    ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
    const size_t m = ends.size();
    fenwick.assign(m + 1, Best2{});
    // Fenwick index (1-based) of an end: larger ends come first.
    auto index_of = [&](TimeNs end) {
      return m - static_cast<size_t>(std::lower_bound(ends.begin(), ends.end(), end) - ends.begin());
    };
    for (size_t p = begin; p < finish;) {
      size_t group_end = p;
      while (group_end < finish && sorted_start_[group_end] == sorted_start_[p]) ++group_end;
      // Ranges starting at the same time contain each other's starts: insert them all first.
      for (size_t q = p; q < group_end; ++q) {
        const uint32_t slot = by_thread_[q];
        for (size_t i = index_of(end_[slot]); i <= m; i += i & (~i + 1)) add(fenwick[i], slot);
      }
      for (size_t q = p; q < group_end; ++q) {
        const uint32_t slot = by_thread_[q];
        Best2 best;
        for (size_t i = index_of(end_[slot]); i > 0; i -= i & (~i + 1)) {
          add(best, fenwick[i].first);
          add(best, fenwick[i].second);
        }
        parent_[slot] = best.first == slot ? best.second : best.first;
      }
      p = group_end;
    }
  }
}

void ProjectionRanges::build_levels() {
  constexpr int32_t kUnknown = -2, kVisiting = -3;
  level_.assign(size(), kUnknown);
  std::vector<uint32_t> chain;
  for (uint32_t s = 0; s < size(); ++s) {
    if (level_[s] != kUnknown) continue;
    // Walk up until a root, a range already known, or a range of this very walk (a cycle).
    chain.clear();
    uint32_t cur = s;
    int32_t base;
    while (true) {
      if (level_[cur] >= 0 || level_[cur] == kUnreachable) { base = level_[cur]; break; }
      if (level_[cur] == kVisiting) { base = kUnreachable; break; }
      level_[cur] = kVisiting;
      chain.push_back(cur);
      if (parent_[cur] == kNone) { base = -1; break; }  // a root: level 0 below
      cur = parent_[cur];
    }
    // `chain` runs from s upwards; the last element sits directly below `base`.
    for (size_t k = chain.size(); k-- > 0;) {
      if (base == kUnreachable) {
        level_[chain[k]] = kUnreachable;
      } else {
        base += 1;
        level_[chain[k]] = base;
      }
    }
  }
}

LaunchIndex::LaunchIndex(const ApiTable& api) {
  keys_.reserve(api.size());
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.correlation[i] == kNoValue) continue;
    keys_.push_back({global_pid_of(api.global_tid[i]), api.correlation[i], static_cast<uint32_t>(i)});
  }
  auto less = [](const Key& a, const Key& b) {
    if (a.global_pid != b.global_pid) return a.global_pid < b.global_pid;
    if (a.correlation != b.correlation) return a.correlation < b.correlation;
    return a.row < b.row;
  };
  if (!std::is_sorted(keys_.begin(), keys_.end(), less)) std::sort(keys_.begin(), keys_.end(), less);
  rows_.resize(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) rows_[i] = keys_[i].row;
}

std::span<const uint32_t> LaunchIndex::find(int64_t global_pid, int64_t correlation) const {
  if (correlation == kNoValue) return {};
  auto lo = std::lower_bound(keys_.begin(), keys_.end(), std::make_pair(global_pid, correlation),
                             [](const Key& k, const std::pair<int64_t, int64_t>& v) {
                               return k.global_pid != v.first ? k.global_pid < v.first : k.correlation < v.second;
                             });
  auto hi = lo;
  while (hi != keys_.end() && hi->global_pid == global_pid && hi->correlation == correlation) ++hi;
  return {rows_.data() + (lo - keys_.begin()), static_cast<size_t>(hi - lo)};
}

GpuProjection project_gpu_ops(const Trace& trace, const ProjectionRanges& ranges, const LaunchIndex& launches) {
  GpuProjection out;
  out.per_range.resize(ranges.size());

  // Operations of one launch (process, correlation id) project together, and a range counts the
  // launch once however many of its operations or calls it contains: group operations by launch.
  struct Op {
    int64_t global_pid, correlation;
    TimeNs start, end;
    uint32_t order;  // position in nsys's UNION ALL (kernels, memcpys, memsets)
  };
  std::vector<Op> ops;
  ops.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  uint32_t order = 0;
  auto add_table = [&](const std::vector<int64_t>& pid, const std::vector<int64_t>& corr,
                       const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
    for (size_t i = 0; i < start.size(); ++i, ++order) {
      if (corr[i] == kNoValue) continue;  // joins no API call
      ops.push_back({pid[i], corr[i], start[i], end[i], order});
    }
  };
  add_table(trace.kernels.global_pid, trace.kernels.correlation, trace.kernels.start, trace.kernels.end);
  add_table(trace.memcpys.global_pid, trace.memcpys.correlation, trace.memcpys.start, trace.memcpys.end);
  add_table(trace.memsets.global_pid, trace.memsets.correlation, trace.memsets.start, trace.memsets.end);
  std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
    if (a.global_pid != b.global_pid) return a.global_pid < b.global_pid;
    if (a.correlation != b.correlation) return a.correlation < b.correlation;
    return a.order < b.order;
  });

  auto fold = [](RangeProjection& p, TimeNs start, TimeNs end) {
    if (start != kNoTime && (p.first_start == kNoTime || start < p.first_start)) p.first_start = start;
    if (end != kNoTime && (p.last_end == kNoTime || end > p.last_end)) p.last_end = end;
  };
  std::vector<int64_t> outside_correlations;
  // The NULL group's thread: first row (operation order, then API row) with the largest end.
  TimeNs outside_best_end = kNoTime;
  uint64_t outside_best_row = UINT64_MAX;

  std::vector<uint32_t> found, launch_ranges;
  for (size_t g = 0; g < ops.size();) {
    size_t g_end = g;
    RangeProjection launch;
    while (g_end < ops.size() && ops[g_end].global_pid == ops[g].global_pid &&
           ops[g_end].correlation == ops[g].correlation) {
      fold(launch, ops[g_end].start, ops[g_end].end);
      ++g_end;
    }
    const auto calls = launches.find(ops[g].global_pid, ops[g].correlation);
    launch_ranges.clear();
    for (uint32_t call : calls) {
      found.clear();
      ranges.containers(trace.api.global_tid[call], trace.api.start[call], trace.api.end[call], found);
      if (!found.empty()) {
        launch_ranges.insert(launch_ranges.end(), found.begin(), found.end());
        continue;
      }
      // Every operation of the launch pairs with this call in the NULL group.
      fold(out.outside, launch.first_start, launch.last_end);
      outside_correlations.push_back(ops[g].correlation);
      for (size_t k = g; k < g_end; ++k) {
        if (ops[k].end == kNoTime) continue;
        const uint64_t row_order = (static_cast<uint64_t>(ops[k].order) << 32) | call;
        if (outside_best_end == kNoTime || ops[k].end > outside_best_end ||
            (ops[k].end == outside_best_end && row_order < outside_best_row)) {
          outside_best_end = ops[k].end;
          outside_best_row = row_order;
          out.outside_thread = trace.api.global_tid[call];
        }
      }
    }
    if (calls.size() > 1) {
      std::sort(launch_ranges.begin(), launch_ranges.end());
      launch_ranges.erase(std::unique(launch_ranges.begin(), launch_ranges.end()), launch_ranges.end());
    }
    for (uint32_t slot : launch_ranges) {
      RangeProjection& p = out.per_range[slot];
      fold(p, launch.first_start, launch.last_end);
      ++p.op_count;
    }
    g = g_end;
  }
  std::sort(outside_correlations.begin(), outside_correlations.end());
  out.outside.op_count = static_cast<int64_t>(
      std::unique(outside_correlations.begin(), outside_correlations.end()) - outside_correlations.begin());
  return out;
}

}  // namespace tracedoc::nsys_stats
