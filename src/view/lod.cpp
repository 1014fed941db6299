#include "view/lod.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "analysis/checked_math.h"
#include "analysis/gpu_memory.h"
#include "analysis/gpu_metrics.h"
#include "analysis/intervals.h"

namespace tracedoc::view {

namespace {

// The per-bucket accumulation of one row: covered time, starts, and up to three colours by time.
struct Cell {
  double busy = 0;
  uint32_t count = 0;
  std::array<uint16_t, 3> color{};
  std::array<double, 3> ns{-1, -1, -1};
  void add_color(uint16_t c, double t) {
    for (size_t i = 0; i < 3; ++i) {
      if (ns[i] >= 0 && color[i] == c) {
        ns[i] += t;
        return;
      }
    }
    size_t weakest = 0;
    for (size_t i = 1; i < 3; ++i) {
      if (ns[i] < ns[weakest]) weakest = i;
    }
    if (ns[weakest] < t) {
      color[weakest] = c;
      ns[weakest] = t;
    }
  }
  uint16_t dominant() const {
    size_t best = 0;
    for (size_t i = 1; i < 3; ++i) {
      if (ns[i] > ns[best]) best = i;
    }
    return color[best];
  }
};

// One pass over a track's items fills the cells of all its rows.
void fill_track(const Track& track, uint32_t index, const Buckets& b, std::vector<std::vector<Cell>>& cells,
                std::vector<LodRow>& out) {
  for (uint8_t r = 0; r < track.rows; ++r) std::fill(cells[r].begin(), cells[r].end(), Cell{});
  std::vector<uint32_t> lo(track.rows, b.count), hi(track.rows, 0);
  for (const TrackItem& item : track.items) {
    std::vector<Cell>& row = cells[item.depth];
    const uint32_t first = b.index_of(item.start), last = b.index_of(item.end);
    row[first].count += 1;
    lo[item.depth] = std::min(lo[item.depth], first);
    hi[item.depth] = std::max(hi[item.depth], last);
    if (item.end == item.start) {
      row[first].add_color(item.color, 1e-3);  // an instant: visible, outweighed by any duration
      continue;
    }
    for (uint32_t k = first; k <= last; ++k) {
      const double s = std::max(static_cast<double>(item.start), b.begin_of(k));
      const double e = std::min(static_cast<double>(item.end), b.begin_of(k + 1));
      if (e <= s) continue;
      row[k].busy += e - s;
      row[k].add_color(item.color, e - s);
    }
  }
  for (uint8_t r = 0; r < track.rows; ++r) {
    LodRow row;
    row.track = index;
    row.row = r;
    for (uint32_t k = lo[r]; k <= hi[r] && k < b.count; ++k) {
      const Cell& c = cells[r][k];
      if (c.count == 0 && c.busy <= 0) continue;
      row.bucket.push_back(static_cast<uint16_t>(k));
      const double share = std::clamp(c.busy / b.width, 0.0, 1.0);
      row.busy.push_back(static_cast<uint16_t>(std::lround(share * 65535.0)));
      row.color.push_back(c.dominant());
      row.count.push_back(c.count);
    }
    if (!row.bucket.empty()) out.push_back(std::move(row));
  }
}

std::vector<LodRow> bucket_rows(const Timeline& tl, const Buckets& b) {
  std::vector<LodRow> rows;
  std::vector<std::vector<Cell>> cells(kMaxTrackRows, std::vector<Cell>(b.count + 1));
  for (uint32_t t = 0; t < tl.tracks.size(); ++t) fill_track(tl.tracks[t], t, b, cells, rows);
  return rows;
}

int64_t cell_count(const std::vector<LodRow>& rows) {
  int64_t n = 0;
  for (const LodRow& r : rows) n += static_cast<int64_t>(r.bucket.size());
  return n;
}

std::vector<uint16_t> share_per_bucket(const IntervalSet& busy, const Buckets& b, double* total_share) {
  std::vector<double> covered(b.count, 0);
  int64_t total = 0;
  for (const Interval& iv : busy.intervals()) {
    total = sat_add(total, iv.length());
    const uint32_t first = b.index_of(iv.start), last = b.index_of(iv.end);
    for (uint32_t k = first; k <= last; ++k) {
      const double s = std::max(static_cast<double>(iv.start), b.begin_of(k));
      const double e = std::min(static_cast<double>(iv.end), b.begin_of(k + 1));
      if (e > s) covered[k] += e - s;
    }
  }
  std::vector<uint16_t> out(b.count);
  for (uint32_t k = 0; k < b.count; ++k)
    out[k] = static_cast<uint16_t>(std::lround(std::clamp(covered[k] / b.width, 0.0, 1.0) * 65535.0));
  const double span = b.width * b.count;
  *total_share = span > 0 ? static_cast<double>(total) / span : 0;
  return out;
}

MemoryLane memory_lane(const MemorySeries& s, const Buckets& b) {
  MemoryLane lane;
  lane.global_pid = s.global_pid;
  lane.device = s.device;
  lane.peak.assign(b.count, -1);
  int64_t current = s.before;
  lane.max_bytes = current;
  uint32_t k = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const uint32_t at = b.index_of(s.time[i]);
    // Buckets between events hold the level reached before them (carried forward).
    for (; k < at; ++k) lane.peak[k] = std::max(lane.peak[k], static_cast<double>(current));
    lane.peak[at] = std::max(lane.peak[at], static_cast<double>(std::max(current, s.allocated[i])));
    current = s.allocated[i];
    if (current > lane.max_bytes) {
      lane.max_bytes = current;
      lane.max_time = s.time[i];
    }
  }
  for (; k < b.count; ++k) lane.peak[k] = std::max(lane.peak[k], static_cast<double>(current));
  if (!s.time.empty()) {
    // Before the first event nothing is known.
    for (uint32_t j = 0; j < b.index_of(s.time.front()); ++j) lane.peak[j] = -1;
  }
  return lane;
}

MetricLane metric_lane(const MetricSeries& s, const Buckets& b) {
  MetricLane lane;
  lane.device = s.device;
  std::vector<double> sum(b.count, 0), weight(b.count, 0);
  int64_t top = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const Interval p = s.period_of(i);
    top = std::max(top, s.value[i]);
    const uint32_t first = b.index_of(p.start), last = b.index_of(p.end);
    for (uint32_t k = first; k <= last && k < b.count; ++k) {
      const double from = std::max(static_cast<double>(p.start), b.begin_of(k));
      const double to = std::min(static_cast<double>(p.end), b.begin_of(k + 1));
      if (to <= from) continue;
      sum[k] += static_cast<double>(s.value[i]) * (to - from);
      weight[k] += to - from;
    }
  }
  lane.mean.assign(b.count, -1);
  for (uint32_t k = 0; k < b.count; ++k)
    if (weight[k] > 0) lane.mean[k] = sum[k] / weight[k];
  return lane;
}

// Raw events of [start, end): those starting inside plus those open at `start`.
void select_window(const Timeline& tl, TimeNs start, TimeNs end, RawSelection& raw) {
  raw.items.assign(tl.tracks.size(), {});
  raw.events = 0;
  for (size_t t = 0; t < tl.tracks.size(); ++t) {
    const std::vector<TrackItem>& items = tl.tracks[t].items;
    std::vector<uint32_t>& keep = raw.items[t];
    for (uint32_t i = 0; i < items.size(); ++i) {
      const TrackItem& item = items[i];
      if ((item.start >= start && item.start < end) || (item.start < start && item.end > start)) keep.push_back(i);
    }
    raw.events += static_cast<int64_t>(keep.size());
  }
}

RawSelection choose_raw(const Timeline& tl, const LodOptions& o) {
  const TimeNs start = o.window_start != kNoTime ? std::max(sat_add(tl.start, o.window_start), tl.start) : tl.start;
  TimeNs end =
      o.window_end != kNoTime ? std::min(sat_add(tl.start, o.window_end), sat_add(tl.end, 1)) : sat_add(tl.end, 1);
  // One counting pass: the events open at the start, and the starts inside the window.
  int64_t open = 0;
  std::vector<TimeNs> starts;
  for (const Track& t : tl.tracks) {
    for (const TrackItem& item : t.items) {
      if (item.start < start && item.end > start)
        ++open;
      else if (item.start >= start && item.start < end)
        starts.push_back(item.start);
    }
  }
  bool complete = start <= tl.start && end > tl.end;
  if (open + static_cast<int64_t>(starts.size()) > o.max_events) {
    // Over budget: end the window where the budget runs out (at the start of the first event left out).
    // With more open events than the budget, only they are kept (the window is empty).
    const int64_t room = std::max<int64_t>(0, o.max_events - open);
    if (room < static_cast<int64_t>(starts.size())) {
      std::nth_element(starts.begin(), starts.begin() + room, starts.end());
      end = starts[static_cast<size_t>(room)];
    } else {
      end = start;
    }
    complete = false;
  }
  RawSelection raw;
  select_window(tl, start, end, raw);
  raw.start = start;
  raw.end = end;
  raw.complete = complete;
  return raw;
}

}  // namespace

int64_t Lod::cells() const { return cell_count(rows); }

Lod build_lod(const Trace& trace, const Timeline& tl, const pytorch::GpuWork& work,
              const std::vector<std::string>& unit_labels, const LodOptions& options) {
  Lod lod;
  lod.start = tl.start;
  lod.end = std::max(sat_add(tl.end, 1), sat_add(tl.start, 1));
  uint32_t count = std::clamp<uint32_t>(options.buckets, 16, 65535);
  for (;;) {
    Buckets b{lod.start, static_cast<double>(sat_sub(lod.end, lod.start)) / count, count};
    lod.rows = bucket_rows(tl, b);
    if (cell_count(lod.rows) <= static_cast<int64_t>(options.max_cells) || count <= 256) break;
    count /= 2;
  }
  lod.buckets = count;
  lod.bucket_ns = static_cast<double>(sat_sub(lod.end, lod.start)) / count;
  const Buckets b{lod.start, lod.bucket_ns, count};
  for (size_t u = 0; u < work.units.size(); ++u) {
    const pytorch::GpuUnit& unit = work.units[u];
    UtilizationLane lane;
    lane.label = u < unit_labels.size() ? unit_labels[u] : fmt::format("GPU {}", unit.device);
    lane.global_pid = unit.owner;
    lane.device = unit.device;
    lane.busy = share_per_bucket(unit.busy(), b, &lane.busy_share);
    lod.utilization.push_back(std::move(lane));
  }
  for (const MemorySeries& s : collect_gpu_memory(trace)) {
    if (s.size() == 0) continue;
    MemoryLane lane = memory_lane(s, b);
    const int64_t rank = trace.rank_of(s.global_pid);
    lane.label = rank >= 0 ? fmt::format("rank {} GPU {} memory", rank, s.device)
                           : fmt::format("pid {} GPU {} memory", pid_of(s.global_pid), s.device);
    lod.memory.push_back(std::move(lane));
  }
  for (const MetricSeries& s : gpu_metric_series(trace)) {
    if (s.kind == MetricKind::kOther || s.size() == 0) continue;
    MetricLane lane = metric_lane(s, b);
    lane.unit = metric_unit(trace.str(s.metric));
    lane.label = fmt::format("GPU {} {}", s.device, trace.str(s.metric));
    lane.max = lane.unit == "%" ? 100.0 : static_cast<double>(*std::max_element(s.value.begin(), s.value.end()));
    lod.metrics.push_back(std::move(lane));
  }
  lod.raw = choose_raw(tl, options);
  return lod;
}

}  // namespace tracedoc::view
