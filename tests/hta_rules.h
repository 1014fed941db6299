// Holistic Trace Analysis 0.5.0's breakdown algorithms restated on intervals, for
// tests/hta_breakdowns_test.cpp: applied to HTA's view of a trace they must give HTA's own numbers
// exactly, which shows where tracedoc's breakdowns (src/analysis/pytorch/gpu_breakdowns.h) differ
// from HTA and by how much. Sources: hta/utils/utils.py merge_kernel_intervals,
// hta/analyzers/breakdown_analysis.py _get_gpu_kernel_type_time and _analyze_idle_time_for_stream.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/intervals.h"
#include "analysis/pytorch/gpu_work.h"

namespace tracedoc::testing {

// Only to explain the differences: HTA(HTA's intervals) must give the golden numbers exactly, and
// tracedoc's breakdowns must equal HTA's algorithm wherever the two definitions agree.

// merge_kernel_intervals: sorted by ts, a new group when ts > the running max of the previous ends,
// group = [min ts, max end]. An isolated reversed event is a group of negative length.
inline std::vector<Interval> hta_merge(std::vector<Interval> v) {
  std::stable_sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> groups;
  TimeNs cummax = INT64_MIN;
  for (const Interval& i : v) {
    if (groups.empty() || i.start > cummax) {
      groups.push_back(i);
    } else {
      groups.back().end = std::max(groups.back().end, i.end);
    }
    cummax = std::max(cummax, i.end);
  }
  return groups;
}
inline int64_t total(const std::vector<Interval>& groups) {
  int64_t t = 0;
  for (const Interval& g : groups) t += g.end - g.start;
  return t;
}

// _get_gpu_kernel_type_time: merged intervals per class, a sweep adding 1 << i at each start and
// subtracting it at each end (i: COMPUTATION, COMMUNICATION, MEMORY), the time of each positive
// running value labelled by its bits. The sums do not depend on the order of equal times.
inline std::map<std::string, int64_t> hta_kernel_types(const std::vector<std::vector<Interval>>& per_class) {
  static const char* const kNames[] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
  std::vector<std::pair<TimeNs, int64_t>> events;
  for (size_t c = 0; c < per_class.size(); ++c) {
    for (const Interval& g : hta_merge(per_class[c])) {
      events.push_back({g.start, int64_t{1} << c});
      events.push_back({g.end, -(int64_t{1} << c)});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::string, int64_t> out;
  int64_t running = 0;
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    running += events[k].second;
    const int64_t dt = events[k + 1].first - events[k].first;
    if (running <= 0 || dt == 0) continue;
    std::string label;
    for (size_t c = 0; c < per_class.size(); ++c) {
      if (!(running & (int64_t{1} << c))) continue;
      label += (label.empty() ? "" : " overlapping ") + std::string(kNames[c]);
    }
    out[label] += dt;
  }
  return out;
}

// _analyze_idle_time_for_stream: operations sorted by ts (stably), gap = ts - the previous row's
// end (negative when they overlap), host wait when the launching call started after that end,
// kernel wait when the gap is below the delay, else other. Returns the sums per category.
struct HtaIdle {
  int64_t gaps[3] = {0, 0, 0};
  bool overlaps = false;  // some operation starts before an earlier one ended (or is reversed)
};
inline std::map<int32_t, HtaIdle> hta_idle(const std::vector<pytorch::GpuWorkItem>& items,
                                           const std::vector<Interval>& hta, int64_t delay_ns, bool reversed_as_hta) {
  std::map<int32_t, std::vector<size_t>> streams;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind != pytorch::WorkKind::kSync) streams[items[i].stream].push_back(i);
  }
  std::map<int32_t, HtaIdle> out;
  for (auto& [stream, idx] : streams) {
    auto iv = [&](size_t i) {
      Interval v = hta[i];
      if (!reversed_as_hta && v.end < v.start) v.end = v.start;
      return v;
    };
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return iv(a).start < iv(b).start; });
    HtaIdle& h = out[stream];
    TimeNs max_end = INT64_MIN;
    for (size_t k = 1; k < idx.size(); ++k) {
      const Interval prev = iv(idx[k - 1]), cur = iv(idx[k]);
      max_end = std::max(max_end, prev.end);
      if (max_end != prev.end || cur.end < cur.start || cur.start < prev.end) h.overlaps = true;
      const int64_t gap = cur.start - prev.end;
      const TimeNs launch = items[idx[k]].launch_start;
      const int c = launch != kNoTime && launch > prev.end ? 0 : gap < delay_ns ? 1 : 2;
      h.gaps[c] += gap;
    }
  }
  return out;
}

}  // namespace tracedoc::testing
