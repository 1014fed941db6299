#include "analysis/gpu_memory.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/checked_math.h"

namespace tracedoc {

namespace {

// One event before it is placed in its series: time, delta and the recorded totals.
struct RawEvent {
  TimeNs time;
  int64_t delta;
  int64_t total_allocated;  // kNoValue when not recorded
  int64_t total_reserved;   // kNoValue when not recorded
};

// Host memory kinds (ENUM_CUDA_MEM_KIND): allocations nsys tracks that are not on the GPU.
bool is_host_kind(int32_t kind) {
  return kind == static_cast<int32_t>(MemKind::kPageable) || kind == static_cast<int32_t>(MemKind::kPinned);
}

// PyTorch's c10::DeviceType: 0 is the CPU; every other type (CUDA 1, HIP 6, XPU, MTIA, ...) is an
// accelerator with memory of its own. A missing type reads as -1 and is left out too.
bool is_accelerator(int32_t device_type, int32_t device_id) { return device_type > 0 && device_id >= 0; }

// Groups events by (process, device) in one pass, keeping the table's order within each group.
class SeriesBuilder {
 public:
  void add(int64_t global_pid, int32_t device, const RawEvent& e) {
    auto [it, inserted] = index_.try_emplace({global_pid, device}, events_.size());
    if (inserted) events_.emplace_back();
    events_[it->second].push_back(e);
  }

  std::vector<MemorySeries> finish() {
    std::vector<MemorySeries> out;
    out.reserve(index_.size());
    for (auto& [key, i] : index_) out.push_back(build(key.first, key.second, events_[i]));  // map order = (pid, device)
    return out;
  }

 private:
  static MemorySeries build(int64_t global_pid, int32_t device, std::vector<RawEvent>& events) {
    // Tables come in time order (the readers sort them); an export that does not is sorted here,
    // stably, so that simultaneous events keep the order the trace gives them.
    const auto earlier = [](const RawEvent& a, const RawEvent& b) { return a.time < b.time; };
    if (!std::is_sorted(events.begin(), events.end(), earlier)) std::stable_sort(events.begin(), events.end(), earlier);
    MemorySeries s;
    s.global_pid = global_pid;
    s.device = device;
    const size_t n = events.size();
    s.time.reserve(n);
    s.delta.reserve(n);
    s.allocated.reserve(n);
    s.reserved.reserve(n);
    // The total before the first event is the recorded total after it minus what it allocated.
    const RawEvent& first = events.front();
    s.recorded_totals = first.total_allocated != kNoValue;
    s.before = s.recorded_totals ? sat_sub(first.total_allocated, first.delta) : 0;
    int64_t current = s.before;
    for (const RawEvent& e : events) {
      current = e.total_allocated != kNoValue ? e.total_allocated : sat_add(current, e.delta);
      s.time.push_back(e.time);
      s.delta.push_back(e.delta);
      s.allocated.push_back(current);
      s.reserved.push_back(e.total_reserved);
    }
    return s;
  }

  std::map<std::pair<int64_t, int32_t>, size_t> index_;
  std::vector<std::vector<RawEvent>> events_;
};

}  // namespace

size_t MemorySeries::first_at_or_after(TimeNs t) const {
  return static_cast<size_t>(std::lower_bound(time.begin(), time.end(), t) - time.begin());
}

int64_t MemorySeries::allocated_before(TimeNs t) const {
  const size_t i = first_at_or_after(t);
  return i == 0 ? before : allocated[i - 1];
}

MemoryWindowStats memory_window_stats(const MemorySeries& s, size_t begin, size_t end, int64_t start_value) {
  MemoryWindowStats w;
  w.start_value = start_value;
  w.end_value = start_value;
  w.peak = start_value;
  end = std::min(end, s.size());
  if (begin < end) w.peak_time = s.time[begin];  // the window opened at its peak until shown otherwise
  for (size_t i = begin; i < end; ++i) {
    const int64_t d = s.delta[i];
    if (d > 0) {
      ++w.allocations;
      w.bytes_allocated = sat_add(w.bytes_allocated, d);
    } else if (d < 0) {
      ++w.frees;
      w.bytes_freed = sat_sub(w.bytes_freed, d);
    }
    if (s.allocated[i] > w.peak) {
      w.peak = s.allocated[i];
      w.peak_time = s.time[i];
    }
    if (s.reserved[i] != kNoValue && (w.peak_reserved == kNoValue || s.reserved[i] > w.peak_reserved)) {
      w.peak_reserved = s.reserved[i];
    }
    w.end_value = s.allocated[i];
  }
  return w;
}

MemoryWindowStats memory_stats(const MemorySeries& s) { return memory_window_stats(s, 0, s.size(), s.before); }

bool has_gpu_memory_events(const Trace& trace) {
  const MemoryEventTable& m = trace.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.time[i] != kNoTime && !is_host_kind(m.mem_kind[i])) return true;
  }
  const AllocatorEventTable& a = trace.pytorch.allocator;
  for (size_t i = 0; i < a.size(); ++i) {
    if (is_accelerator(a.device_type[i], a.device_id[i])) return true;
  }
  return false;
}

std::vector<MemorySeries> collect_gpu_memory(const Trace& trace) {
  SeriesBuilder builder;
  // nsys: sizes are unsigned; the operation says which way they go (0 allocation, 1 deallocation).
  const MemoryEventTable& m = trace.memory;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.time[i] == kNoTime || is_host_kind(m.mem_kind[i])) continue;
    const int64_t size = m.bytes[i] < 0 ? sat_sub(0, m.bytes[i]) : m.bytes[i];
    const int64_t delta = m.operation[i] == 0 ? size : m.operation[i] == 1 ? -size : 0;
    builder.add(m.global_pid[i], m.device[i], {m.time[i], delta, kNoValue, kNoValue});
  }
  // PyTorch: "Bytes" is signed (frees are negative).
  const AllocatorEventTable& a = trace.pytorch.allocator;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!is_accelerator(a.device_type[i], a.device_id[i])) continue;
    const int64_t delta = a.bytes[i] == kNoValue ? 0 : a.bytes[i];
    builder.add(global_pid_of(a.global_tid[i]), a.device_id[i],
                {a.time[i], delta, a.total_allocated[i], a.total_reserved[i]});
  }
  return builder.finish();
}

}  // namespace tracedoc
