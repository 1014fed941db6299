#include "analysis/critical_path.h"

#include <algorithm>
#include <numeric>

#include "analysis/checked_math.h"

namespace tracedoc {

namespace {

using pytorch::GpuWorkItem;
using pytorch::WorkKind;

struct Flags {
  CriticalPath& path;
  void mark(const GpuWorkItem& item) {
    std::vector<uint8_t>* column = nullptr;
    switch (item.kind) {
      case WorkKind::kKernel: column = &path.kernel; break;
      case WorkKind::kMemcpy: column = &path.memcpy; break;
      case WorkKind::kMemset: column = &path.memset; break;
      case WorkKind::kSync: return;
    }
    if (item.row < column->size()) (*column)[item.row] = 1;
  }
};

// Items of one unit ordered by end, to find "the one that ended last before t" by binary search.
// Ties in end keep the later start first, so the predecessor found is the longest of them.
struct ByEnd {
  std::vector<uint32_t> order;
  std::vector<TimeNs> ends;
  explicit ByEnd(const std::vector<GpuWorkItem>& items) : order(items.size()) {
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (items[a].end != items[b].end) return items[a].end < items[b].end;
      return items[a].start > items[b].start;
    });
    ends.reserve(order.size());
    for (uint32_t i : order) ends.push_back(items[i].end);
  }
  // Position in `order` of the last item with end <= t, or -1.
  int64_t last_ending_by(TimeNs t) const {
    return static_cast<int64_t>(std::upper_bound(ends.begin(), ends.end(), t) - ends.begin()) - 1;
  }
};

// The walk in one window [w.start, w.end): items that overlap it take part.
void walk_window(const std::vector<GpuWorkItem>& items, const ByEnd& by_end, Interval w,
                 const CriticalPathOptions& options, Flags& flags) {
  int64_t pos = by_end.last_ending_by(w.end);
  // The last operation to end inside the window; one running past the window's end is not "of" it.
  while (pos >= 0 && items[by_end.order[static_cast<size_t>(pos)]].end > w.end) --pos;
  if (pos < 0) return;
  uint32_t current = by_end.order[static_cast<size_t>(pos)];
  if (items[current].end <= w.start) return;
  int64_t guard = static_cast<int64_t>(items.size());  // each step moves strictly back in start time
  while (guard-- > 0) {
    const GpuWorkItem& item = items[current];
    flags.mark(item);
    flags.path.operations += 1;
    flags.path.path_ns = sat_add(flags.path.path_ns, sat_sub(item.end, item.start));
    if (item.start <= w.start) return;
    // Clocks round (Kineto's µs timestamps): a predecessor may end a little after its successor
    // started, so ends up to the slack past the start count; anything that started at or after
    // the current operation cannot precede it.
    int64_t latest = by_end.last_ending_by(sat_add(item.start, options.same_stream_slack_ns));
    while (latest >= 0 && items[by_end.order[static_cast<size_t>(latest)]].start >= item.start) --latest;
    if (latest < 0) return;
    uint32_t pred = by_end.order[static_cast<size_t>(latest)];
    const TimeNs latest_end = items[pred].end;
    if (latest_end <= w.start) return;
    // Prefer the stream predecessor when it ended about as late as the latest (stream order is certain).
    for (int64_t p = latest; p >= 0; --p) {
      const GpuWorkItem& cand = items[by_end.order[static_cast<size_t>(p)]];
      if (sat_sub(latest_end, cand.end) > options.same_stream_slack_ns) break;
      if (cand.stream == item.stream && cand.start < item.start) {
        pred = by_end.order[static_cast<size_t>(p)];
        break;
      }
    }
    if (pred == current) return;
    flags.path.cpu_gaps_ns =
        sat_add(flags.path.cpu_gaps_ns, std::max<int64_t>(0, sat_sub(item.start, items[pred].end)));
    current = pred;
  }
}

}  // namespace

bool CriticalPath::on_path(pytorch::WorkKind kind, uint32_t row) const {
  const std::vector<uint8_t>* column = kind == WorkKind::kKernel   ? &kernel
                                       : kind == WorkKind::kMemcpy ? &memcpy
                                       : kind == WorkKind::kMemset ? &memset
                                                                   : nullptr;
  return column && row < column->size() && (*column)[row] != 0;
}

CriticalPath critical_path(const pytorch::GpuWork& work, const std::vector<std::vector<Interval>>& windows_of_unit,
                           size_t kernels, size_t memcpys, size_t memsets, const CriticalPathOptions& options) {
  CriticalPath path;
  path.kernel.assign(kernels, 0);
  path.memcpy.assign(memcpys, 0);
  path.memset.assign(memsets, 0);
  Flags flags{path};
  for (size_t u = 0; u < work.units.size(); ++u) {
    const std::vector<GpuWorkItem>& items = work.units[u].items;
    if (items.empty()) continue;
    const ByEnd by_end(items);
    std::vector<Interval> windows = u < windows_of_unit.size() ? windows_of_unit[u] : std::vector<Interval>{};
    if (windows.empty()) windows.push_back({items.front().start, by_end.ends.back()});
    for (const Interval& w : windows) walk_window(items, by_end, w, options, flags);
  }
  return path;
}

}  // namespace tracedoc
