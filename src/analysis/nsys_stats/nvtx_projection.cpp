#include "analysis/nsys_stats/nvtx_projection.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

#include "analysis/checked_math.h"
#include "analysis/nsys_stats/naming.h"
#include "analysis/nsys_stats/sqlite_rtree.h"
#include "common/flat_hash.h"

namespace tracedoc::nsys_stats {

namespace {

// nsys's NVTX_EVENTS_MINMAXTS: min(min(start), min(end)) and max(max(start), max(end)) over all
// ranges (including those ended on another thread); each is SQL NULL (kNoTime) when no range has an
// end at all.
std::pair<TimeNs, TimeNs> range_timestamp_span(const RangeTable& r) {
  TimeNs min_start = kNoTime, min_end = kNoTime, max_start = kNoTime, max_end = kNoTime;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nvtx_range(r.kind[i])) continue;
    if (r.start[i] != kNoTime) {
      min_start = min_start == kNoTime ? r.start[i] : std::min(min_start, r.start[i]);
      max_start = std::max(max_start, r.start[i]);
    }
    if (r.end[i] != kNoTime) {
      min_end = min_end == kNoTime ? r.end[i] : std::min(min_end, r.end[i]);
      max_end = std::max(max_end, r.end[i]);
    }
  }
  if (min_start == kNoTime || min_end == kNoTime) return {kNoTime, kNoTime};
  return {std::min(min_start, min_end), std::max(max_start, max_end)};
}

}  // namespace

ProjectionRanges::ProjectionRanges(const Trace& trace, bool with_tree) {
  const auto& r = trace.ranges;
  std::tie(span_min_, span_max_) = range_timestamp_span(r);
  const TimeNs open_end = span_max_;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!is_nvtx_range(r.kind[i]) || r.end_global_tid[i] != kNoValue) continue;
    const TimeNs end = r.end[i] == kNoTime ? open_end : r.end[i];
    // With a NULL start or end every comparison nsys makes is false: such a range contains nothing
    // and is nobody's parent, so it can never appear in a report.
    if (r.start[i] == kNoTime || end == kNoTime) continue;
    row_.push_back(static_cast<uint32_t>(i));
    row_id_.push_back(trace.ranges.row_id.empty() ? static_cast<int64_t>(i) + 1 : trace.ranges.row_id[i]);
    start_.push_back(r.start[i]);
    end_.push_back(end);
    global_tid_.push_back(r.global_tid[i]);
    pushpop_.push_back(nsys_stats::is_pushpop(r.kind[i]) ? 1 : 0);
  }
  build_names(trace);
  build_thread_index();
  if (with_tree) {
    build_parents();
    build_levels();
  }
}

void ProjectionRanges::build_names(const Trace& trace) {
  const auto& r = trace.ranges;
  NvtxNamer namer(trace);
  name_id_.assign(size(), kNone);
  DenseIdMap ids;  // text id, or (domain id + 1, text id) -> name id
  for (uint32_t s = 0; s < size(); ++s) {
    const uint32_t i = row_[s];
    const StrId text = r.text[i];
    if (text == kNoStr) continue;
    const StrId domain = namer.domain(i);
    const uint64_t key = domain == kNoStr ? text : ((uint64_t{domain} + 1) << 32) | text;
    const uint32_t id = ids.id(key);
    if (id == names_.size()) {
      names_.push_back(domain == kNoStr ? trace.str(text)
                                        : std::string_view(composed_names_.emplace_back(namer.tag(i))));
    }
    name_id_[s] = id;
  }
}

void ProjectionRanges::build_thread_index() {
  const size_t n = size();
  // Bucket by thread (a counting sort keeps row order inside a thread), then order each thread by
  // start; exports mostly list a thread's ranges in start order already.
  std::vector<int64_t> threads(global_tid_);
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  std::vector<uint32_t> thread_of(n), offset(threads.size() + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const auto at = std::lower_bound(threads.begin(), threads.end(), global_tid_[s]);
    thread_of[s] = static_cast<uint32_t>(at - threads.begin());
    ++offset[thread_of[s] + 1];
  }
  for (size_t t = 0; t < threads.size(); ++t) offset[t + 1] += offset[t];
  by_thread_.resize(n);
  std::vector<uint32_t> cursor(offset.begin(), offset.end() - 1);
  for (uint32_t s = 0; s < n; ++s) by_thread_[cursor[thread_of[s]]++] = s;
  auto by_start = [&](uint32_t a, uint32_t b) { return start_[a] != start_[b] ? start_[a] < start_[b] : a < b; };
  for (size_t t = 0; t < threads.size(); ++t) {
    auto first = by_thread_.begin() + offset[t], last = by_thread_.begin() + offset[t + 1];
    if (!std::is_sorted(first, last, by_start)) std::sort(first, last, by_start);
  }
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

void ProjectionRanges::report(size_t node, size_t node_lo, size_t node_hi, size_t lo, size_t hi, TimeNs min_end,
                              std::vector<uint32_t>& out) const {
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
// (c.start - p.start) + (p.end - c.end), i.e. the smallest duration; on equal durations the first
// one SQLite's rtree scan meets. That scan order is costly to know (it takes replaying SQLite's
// rtree), so a first pass breaks ties by row order and notes whether any tie decided a parent;
// only then a second pass uses the rtree order.
void ProjectionRanges::build_parents() {
  std::vector<uint32_t> tie_rank(size());
  std::iota(tie_rank.begin(), tie_rank.end(), 0u);
  if (assign_parents(tie_rank)) assign_parents(rtree_scan_positions());
}

bool ProjectionRanges::assign_parents(const std::vector<uint32_t>& tie_rank) {
  parent_.assign(size(), kNone);
  bool tie_seen = false;
  // Per thread, positions 0..m-1 in start order; the candidate key is (duration, tie rank).
  struct Key {
    TimeNs duration;
    uint32_t rank;
    bool operator<(const Key& o) const { return duration != o.duration ? duration < o.duration : rank < o.rank; }
  };
  // The best three candidates by key: the range itself may be one of them, and the two others
  // tell whether a tie decided.
  struct Best3 {
    std::array<uint32_t, 3> pos{kNone, kNone, kNone};
  };
  std::vector<Key> key;
  std::vector<uint32_t> end_index;
  std::vector<std::pair<TimeNs, uint32_t>> by_end;
  std::vector<Best3> fenwick;
  auto add = [&](Best3& into, uint32_t p) {
    if (p == kNone || into.pos[0] == p || into.pos[1] == p || into.pos[2] == p) return;
    if (into.pos[2] != kNone && !(key[p] < key[into.pos[2]])) return;
    size_t k = 2;
    while (k > 0 && (into.pos[k - 1] == kNone || key[p] < key[into.pos[k - 1]])) {
      into.pos[k] = into.pos[k - 1];
      --k;
    }
    into.pos[k] = p;
  };
  for (size_t t = 0; t < thread_begin_.size(); ++t) {
    const size_t begin = thread_begin_[t].second;
    const size_t m = (t + 1 < thread_begin_.size() ? thread_begin_[t + 1].second : size()) - begin;
    key.resize(m);
    for (size_t p = 0; p < m; ++p) {
      const uint32_t slot = by_thread_[begin + p];
      key[p] = {sat_sub(end_[slot], start_[slot]), tie_rank[slot]};  // no overflow on damaged times
    }
    // Fenwick index (1-based) of each range's end, larger ends first, so that a prefix is "end >= x".
    by_end.resize(m);
    for (size_t p = 0; p < m; ++p) by_end[p] = {end_[by_thread_[begin + p]], static_cast<uint32_t>(p)};
    std::sort(by_end.begin(), by_end.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    end_index.resize(m);
    for (size_t k = 0, index = 0; k < m; ++k) {
      if (k == 0 || by_end[k].first != by_end[k - 1].first) ++index;
      end_index[by_end[k].second] = static_cast<uint32_t>(index);
    }
    fenwick.assign(m + 1, Best3{});
    for (size_t p = 0; p < m;) {
      size_t group_end = p;
      while (group_end < m && sorted_start_[begin + group_end] == sorted_start_[begin + p]) ++group_end;
      // Ranges starting at the same time contain each other's starts: insert them all first.
      for (size_t q = p; q < group_end; ++q) {
        for (size_t i = end_index[q]; i <= m; i += i & (~i + 1)) add(fenwick[i], static_cast<uint32_t>(q));
      }
      for (size_t q = p; q < group_end; ++q) {
        Best3 best;
        for (size_t i = end_index[q]; i > 0; i -= i & (~i + 1)) {
          for (uint32_t c : fenwick[i].pos) add(best, c);
        }
        uint32_t first = kNone, second = kNone;
        for (uint32_t c : best.pos) {
          if (c == q || c == kNone) continue;
          (first == kNone ? first : second) = c;
        }
        if (first == kNone) continue;
        parent_[by_thread_[begin + q]] = by_thread_[begin + first];
        if (second != kNone && key[first].duration == key[second].duration) tie_seen = true;
      }
      p = group_end;
    }
  }
  return tie_seen;
}

// nsys inserts its ranges into the rtree in NVTX_EVENTS row order, with coordinates scaled by
// rtree_scale over NVTX_EVENTS_MINMAXTS (a NULL bound counts as 0).
std::vector<uint32_t> ProjectionRanges::rtree_scan_positions() const {
  const TimeNs lo = span_min_ == kNoTime ? 0 : span_min_;
  const TimeNs hi = span_max_ == kNoTime ? 0 : span_max_;
  SqliteRtree1D rtree;
  for (uint32_t s = 0; s < size(); ++s) {
    rtree.insert(s, nsys_rtree_scale(start_[s], lo, hi), nsys_rtree_scale(end_[s], lo, hi));
  }
  std::vector<uint32_t> position(size());
  const std::vector<int64_t> order = rtree.scan_order();
  for (size_t k = 0; k < order.size(); ++k) position[static_cast<size_t>(order[k])] = static_cast<uint32_t>(k);
  return position;
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
    bool reachable = true;
    int32_t above = -1;  // level of the range above the top of `chain`; -1: the top is a root
    while (true) {
      if (level_[cur] == kUnreachable || level_[cur] == kVisiting) {
        reachable = false;
        break;
      }
      if (level_[cur] >= 0) {
        above = level_[cur];
        break;
      }
      level_[cur] = kVisiting;
      chain.push_back(cur);
      if (parent_[cur] == kNone) break;
      cur = parent_[cur];
    }
    // `chain` runs from s upwards.
    for (size_t k = chain.size(); k-- > 0;) level_[chain[k]] = reachable ? ++above : kUnreachable;
  }
}

LaunchIndex::LaunchIndex(const ApiTable& api) {
  keys_.reserve(api.size());
  for (size_t i = 0; i < api.size(); ++i) {
    if (api.correlation[i] == kNoValue) continue;
    keys_.push_back({global_pid_of(api.global_tid[i]), api.correlation[i], static_cast<uint32_t>(i)});
  }
  // Calls sharing a correlation id come in the order of the automatic covering index SQLite builds
  // on CUPTI_ACTIVITY_KIND_RUNTIME(correlationId): then start, end, globalTid (table column
  // order), rowid. It decides which thread nsys shows for work outside every range.
  auto less = [&api](const Key& a, const Key& b) {
    if (a.global_pid != b.global_pid) return a.global_pid < b.global_pid;
    if (a.correlation != b.correlation) return a.correlation < b.correlation;
    if (api.start[a.row] != api.start[b.row]) return api.start[a.row] < api.start[b.row];
    if (api.end[a.row] != api.end[b.row]) return api.end[a.row] < api.end[b.row];
    if (api.global_tid[a.row] != api.global_tid[b.row]) return api.global_tid[a.row] < api.global_tid[b.row];
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
    for (const uint32_t& call : calls) {
      found.clear();
      ranges.containers(trace.api.global_tid[call], trace.api.start[call], trace.api.end[call], found);
      if (!found.empty()) {
        launch_ranges.insert(launch_ranges.end(), found.begin(), found.end());
        continue;
      }
      // Every operation of the launch pairs with this call in the NULL group.
      fold(out.outside, launch.first_start, launch.last_end);
      outside_correlations.push_back(ops[g].correlation);
      const uint64_t call_rank = static_cast<uint64_t>(&call - calls.data());
      for (size_t k = g; k < g_end; ++k) {
        if (ops[k].end == kNoTime) continue;
        const uint64_t row_order = (static_cast<uint64_t>(ops[k].order) << 32) | call_rank;
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
  out.outside.op_count = static_cast<int64_t>(std::unique(outside_correlations.begin(), outside_correlations.end()) -
                                              outside_correlations.begin());
  return out;
}

}  // namespace tracedoc::nsys_stats
