#include "analysis/pytorch/gpu_breakdowns.h"

#include <algorithm>
#include <map>

#include "analysis/checked_math.h"

namespace tracedoc::pytorch {

namespace {

constexpr uint32_t bit(WorkClass c) { return 1u << static_cast<int>(c); }

// HTA's order of the classes in its labels (kernel_type_to_analysis).
constexpr WorkClass kLabelOrder[] = {WorkClass::kComputation, WorkClass::kCommunication, WorkClass::kMemory};

}  // namespace

TemporalBreakdown temporal_breakdown(const GpuUnit& unit) {
  TemporalBreakdown b;
  const IntervalSet all = unit.busy();
  if (all.empty()) return b;
  const Interval span = all.span();
  b.first_start = span.start;
  b.last_end = span.end;
  b.busy = all.total();
  b.idle = sat_sub(span.length(), b.busy);
  b.compute = unit.busy(bit(WorkClass::kComputation)).total();
  b.non_compute = sat_sub(b.busy, b.compute);
  return b;
}

std::vector<StreamIdle> idle_time_breakdown(const GpuUnit& unit, int64_t consecutive_kernel_delay_ns) {
  // Items are sorted by start, so one walk per stream finds each gap and the operation that ends it.
  // A walk rather than IntervalSet::gaps(): an operation of 0 ns (common in integer-µs traces) is
  // no busy time, yet it is an operation that was launched and ran, and it splits the gap around it.
  struct Walk {
    StreamIdle s;
    TimeNs max_end = 0;
    std::vector<Interval> intervals;
  };
  std::map<int32_t, Walk> streams;
  for (const GpuWorkItem& it : unit.items) {
    if (it.kind == WorkKind::kSync) continue;
    auto [pos, fresh] = streams.try_emplace(it.stream);
    Walk& w = pos->second;
    if (fresh) {
      w.s.stream = it.stream;
      w.s.first_start = it.start;
      w.max_end = it.end;
    } else if (it.start > w.max_end) {
      const int64_t gap = sat_sub(it.start, w.max_end);
      IdleCategory c = IdleCategory::kOther;
      if (it.launch_start != kNoTime && it.launch_start > w.max_end) {
        c = IdleCategory::kHostWait;
      } else if (gap < consecutive_kernel_delay_ns) {
        c = IdleCategory::kKernelWait;
      }
      w.s.gaps[static_cast<int>(c)] = sat_add(w.s.gaps[static_cast<int>(c)], gap);
      ++w.s.gap_count[static_cast<int>(c)];
    }
    w.max_end = std::max(w.max_end, it.end);
    ++w.s.operations;
    w.intervals.push_back(it.interval());
  }
  std::vector<StreamIdle> out;
  out.reserve(streams.size());
  for (auto& [stream, w] : streams) {
    const IntervalSet busy = IntervalSet::busy_union(std::move(w.intervals));
    w.s.busy = busy.total();
    w.s.last_end = w.max_end;
    out.push_back(w.s);
  }
  return out;
}

std::vector<KernelTypeTime> kernel_type_breakdown(const GpuUnit& unit, bool include_memory) {
  const int n = include_memory ? 3 : 2;
  IntervalSet sets[3];
  for (int i = 0; i < n; ++i) sets[i] = unit.busy(bit(kLabelOrder[i]));
  std::vector<KernelTypeTime> out;
  for (uint32_t subset = 1; subset < (1u << n); ++subset) {
    // Time when exactly the classes of `subset` run: their intersection minus every other class.
    IntervalSet t;
    bool first = true;
    for (int i = 0; i < n; ++i) {
      if (!(subset & (1u << i))) continue;
      t = first ? sets[i] : t.intersect(sets[i]);
      first = false;
    }
    for (int i = 0; i < n; ++i) {
      if (!(subset & (1u << i))) t = t.subtract(sets[i]);
    }
    const int64_t time = t.total();
    if (time <= 0) continue;
    KernelTypeTime k;
    k.time = time;
    for (int i = 0; i < n; ++i) {
      if (!(subset & (1u << i))) continue;
      if (!k.label.empty()) k.label += " overlapping ";
      k.label += work_class_name(kLabelOrder[i]);
      k.classes |= bit(kLabelOrder[i]);
    }
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const KernelTypeTime& a, const KernelTypeTime& b) {
    return a.time != b.time ? a.time > b.time : a.label < b.label;
  });
  return out;
}

CommCompOverlap comm_comp_overlap(const GpuUnit& unit) {
  const IntervalSet comm = unit.busy(bit(WorkClass::kCommunication));
  const IntervalSet comp = unit.busy(bit(WorkClass::kComputation));
  CommCompOverlap o;
  o.communication = comm.total();
  o.computation = comp.total();
  o.overlap = comm.intersect(comp).total();
  return o;
}

}  // namespace tracedoc::pytorch
