// GPU memory over time: the bytes allocated on each device by each process, as a step function of
// time built from the allocation and free events, and its statistics over a time window (the whole
// recording, or one training step).
//
// Sources:
//  - nsys exports: CUDA_GPU_MEMORY_USAGE_EVENTS (`--cuda-memory-usage=true`), in Trace::memory.
//    Allocations add their size, deallocations subtract it, from 0 at the first event: nsys records
//    no total, so memory allocated before the capture started is not seen. Host allocations
//    (pageable, pinned) live in host RAM and are left out.
//  - PyTorch traces: the caching allocator's `[memory]` instants, in PyTorchInfo::allocator (not in
//    Trace::memory). Events on the CPU (device type 0) are left out; CUDA (1), HIP (6) and any
//    other accelerator type are kept. Each event carries the allocator's "Total Allocated" and
//    "Total Reserved" after it; those recorded totals are used whenever present, because they include
//    the memory allocated before profiling started (model weights, optimizer state), which a sum of
//    the events' "Bytes" would miss. Only the 2021 format lacks them; there the sum of "Bytes" from
//    0 at the first event stands in, as for nsys.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace tracedoc {

// One (process, device): its events in time order (ties in the order the trace holds them).
struct MemorySeries {
  int64_t global_pid = 0;
  int32_t device = 0;
  // The allocator's own totals were recorded (PyTorch), so `before` and `allocated` are absolute;
  // otherwise they are relative to 0 at the first event.
  bool recorded_totals = false;
  int64_t before = 0;              // allocated just before the first event
  std::vector<TimeNs> time;        // ascending
  std::vector<int64_t> delta;      // bytes allocated (> 0) or freed (< 0) by the event
  std::vector<int64_t> allocated;  // allocated after the event
  std::vector<int64_t> reserved;   // reserved after the event; kNoValue where not recorded

  size_t size() const { return time.size(); }
  // The first event at or after t (size() when none).
  size_t first_at_or_after(TimeNs t) const;
  // Allocated at instant t, before the events at t: the value after the last event earlier than t
  // (`before` when there is none). With half-open windows [start, end), an event at `end` belongs
  // to the next window.
  int64_t allocated_before(TimeNs t) const;
};

// What a window of a series shows: events [begin, end) starting from allocated `start_value`.
struct MemoryWindowStats {
  int64_t start_value = 0;                       // allocated when the window opens
  int64_t end_value = 0;                         // allocated when it closes
  int64_t peak = 0;                              // highest allocated in the window, start value included
  TimeNs peak_time = kNoTime;                    // the first event after which allocated equals the peak; the first
                                                 // event's time when the window opened at its peak (only frees
                                                 // followed); kNoTime when the window holds no event
  int64_t allocations = 0, frees = 0;            // events with a positive / negative delta
  int64_t bytes_allocated = 0, bytes_freed = 0;  // their summed sizes (both positive)
  int64_t peak_reserved = kNoValue;              // highest recorded reserved, kNoValue if none
};

MemoryWindowStats memory_window_stats(const MemorySeries& series, size_t begin, size_t end, int64_t start_value);
// The whole series.
MemoryWindowStats memory_stats(const MemorySeries& series);

// Every GPU memory series of the trace, ordered by (process, device); empty when the trace records
// no GPU memory events.
std::vector<MemorySeries> collect_gpu_memory(const Trace& trace);

// True when the trace holds GPU memory events (the reports say "does not contain ..." otherwise).
bool has_gpu_memory_events(const Trace& trace);

}  // namespace tracedoc
