#include "analysis/copy_throughput.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "analysis/checked_math.h"
#include "analysis/intervals.h"
#include "analysis/statistics.h"

namespace tracedoc {

namespace {

bool has_times(TimeNs start, TimeNs end) { return start != kNoTime && end != kNoTime; }

// Bytes per second of one copy or a group: the product first, as the reference computes it, so the
// two agree to the last bit.
double bytes_per_second(int64_t bytes, int64_t ns) {
  return static_cast<double>(bytes) * 1e9 / static_cast<double>(ns);
}

// The copies of one process: their intervals (all and per class) and starts with bytes, for the
// windows of that process.
struct ProcessCopies {
  std::vector<Interval> all;
  std::array<std::vector<Interval>, kCopyClasses> by_class;
  std::vector<std::pair<TimeNs, int64_t>> starts;  // (start, bytes)
};

struct ProcessSets {
  IntervalSet all;
  std::array<IntervalSet, kCopyClasses> by_class;
  std::vector<TimeNs> starts;             // ascending
  std::vector<int64_t> bytes_upto = {0};  // bytes_upto[i] = bytes of the first i starts; never empty
};

ProcessSets build_sets(ProcessCopies& c) {
  ProcessSets s;
  s.all = IntervalSet::busy_union(std::move(c.all));
  for (int k = 0; k < kCopyClasses; ++k) s.by_class[k] = IntervalSet::busy_union(std::move(c.by_class[k]));
  std::sort(c.starts.begin(), c.starts.end());
  s.starts.reserve(c.starts.size());
  s.bytes_upto.reserve(c.starts.size() + 1);
  for (const auto& [t, b] : c.starts) {
    s.starts.push_back(t);
    s.bytes_upto.push_back(sat_add(s.bytes_upto.back(), b));
  }
  return s;
}

CopyWindowShare share_in(const ProcessSets& s, const StepWindow& w, bool whole_trace) {
  CopyWindowShare r;
  r.window = w;
  r.whole_trace = whole_trace;
  const Interval window{w.start, w.end};
  const size_t lo =
      static_cast<size_t>(std::lower_bound(s.starts.begin(), s.starts.end(), window.start) - s.starts.begin());
  const size_t hi =
      static_cast<size_t>(std::lower_bound(s.starts.begin(), s.starts.end(), window.end) - s.starts.begin());
  r.copies = static_cast<int64_t>(hi - lo);
  r.bytes = sat_sub(s.bytes_upto[hi], s.bytes_upto[lo]);
  r.copy_ns = s.all.covered_within(window);
  for (int k = 0; k < kCopyClasses; ++k) r.class_ns[k] = s.by_class[k].covered_within(window);
  return r;
}

// [first start, last end) of a process's kernels, copies and memsets: the whole-trace window of a
// process without steps.
std::map<int64_t, Interval> gpu_spans(const Trace& trace) {
  std::map<int64_t, Interval> spans;
  auto add = [&](const std::vector<int64_t>& pid, const std::vector<TimeNs>& start, const std::vector<TimeNs>& end) {
    for (size_t i = 0; i < start.size(); ++i) {
      if (!has_times(start[i], end[i])) continue;
      auto [it, inserted] = spans.try_emplace(pid[i], Interval{start[i], end[i]});
      if (inserted) continue;
      it->second.start = std::min(it->second.start, start[i]);
      it->second.end = std::max(it->second.end, end[i]);
    }
  };
  add(trace.kernels.global_pid, trace.kernels.start, trace.kernels.end);
  add(trace.memcpys.global_pid, trace.memcpys.start, trace.memcpys.end);
  add(trace.memsets.global_pid, trace.memsets.start, trace.memsets.end);
  return spans;
}

}  // namespace

CopyClass copy_class(uint8_t copy_kind) {
  switch (static_cast<CopyKind>(copy_kind)) {
    case CopyKind::kHtoD:
    case CopyKind::kHtoA:
    case CopyKind::kUvmHtoD: return CopyClass::kHtoD;
    case CopyKind::kDtoH:
    case CopyKind::kAtoH:
    case CopyKind::kUvmDtoH: return CopyClass::kDtoH;
    case CopyKind::kDtoD:
    case CopyKind::kAtoA:
    case CopyKind::kAtoD:
    case CopyKind::kDtoA:
    case CopyKind::kUvmDtoD: return CopyClass::kDtoD;
    default: return CopyClass::kOther;
  }
}

std::vector<CopyGroup> summarize_copies(const Trace& trace) {
  const MemcpyTable& m = trace.memcpys;
  using Key = std::tuple<int64_t, int32_t, uint8_t, uint8_t, uint8_t>;
  std::map<Key, size_t> index;
  std::vector<CopyGroup> groups;
  std::vector<std::vector<double>> per_copy;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!has_times(m.start[i], m.end[i])) continue;
    const Key key{m.global_pid[i], m.device[i], m.copy_kind[i], m.src_kind[i], m.dst_kind[i]};
    auto [it, inserted] = index.try_emplace(key, groups.size());
    if (inserted) {
      CopyGroup g;
      std::tie(g.global_pid, g.device, g.copy_kind, g.src_kind, g.dst_kind) = key;
      groups.push_back(g);
      per_copy.emplace_back();
    }
    CopyGroup& g = groups[it->second];
    const int64_t ns = std::max<int64_t>(0, sat_sub(m.end[i], m.start[i]));
    ++g.count;
    g.bytes = sat_add(g.bytes, m.bytes[i]);
    g.total_ns = sat_add(g.total_ns, ns);
    if (ns > 0)
      per_copy[it->second].push_back(bytes_per_second(m.bytes[i], ns));
    else
      ++g.zero_duration;
  }
  std::vector<CopyGroup> out;
  out.reserve(groups.size());
  for (const auto& [key, i] : index) {  // map order: the documented row order
    CopyGroup g = groups[i];
    if (g.total_ns > 0) g.throughput = bytes_per_second(g.bytes, g.total_ns);
    if (!per_copy[i].empty()) g.median_throughput = median(std::span<double>(per_copy[i]));
    out.push_back(g);
  }
  return out;
}

std::vector<CopyWindowShare> copy_step_shares(const Trace& trace, const std::vector<StepWindow>& steps) {
  const MemcpyTable& m = trace.memcpys;
  std::map<int64_t, ProcessCopies> copies;
  for (size_t i = 0; i < m.size(); ++i) {
    if (!has_times(m.start[i], m.end[i])) continue;
    ProcessCopies& c = copies[m.global_pid[i]];
    const Interval iv{m.start[i], m.end[i]};
    c.all.push_back(iv);
    c.by_class[static_cast<int>(copy_class(m.copy_kind[i]))].push_back(iv);
    c.starts.emplace_back(m.start[i], m.bytes[i]);
  }
  std::map<int64_t, ProcessSets> sets;
  for (auto& [pid, c] : copies) sets.emplace(pid, build_sets(c));
  // A process with steps but no copies of its own (the copies are another process's) reads this
  // empty placeholder, whose prefix sums hold the leading 0 that share_in indexes.
  const ProcessSets none;
  const auto sets_of = [&](int64_t pid) -> const ProcessSets& {
    auto it = sets.find(pid);
    return it == sets.end() ? none : it->second;
  };

  std::vector<CopyWindowShare> out;
  std::map<int64_t, bool> has_steps;
  for (const StepWindow& w : steps) {
    has_steps[w.global_pid] = true;
    out.push_back(share_in(sets_of(w.global_pid), w, false));
  }
  const auto spans = gpu_spans(trace);
  for (const auto& [pid, s] : sets) {
    if (has_steps.count(pid)) continue;
    StepWindow w;
    w.global_pid = pid;
    const Interval span = spans.at(pid);  // the process has copies, so it has a span
    w.start = span.start;
    w.end = span.end;
    out.push_back(share_in(s, w, true));
  }
  std::stable_sort(out.begin(), out.end(), [](const CopyWindowShare& a, const CopyWindowShare& b) {
    return std::tie(a.window.global_pid, a.window.start) < std::tie(b.window.global_pid, b.window.start);
  });
  return out;
}

}  // namespace tracedoc
