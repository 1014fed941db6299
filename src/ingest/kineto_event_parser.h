// Internal to the Kineto reader: the tokenizer of trace events. An event object becomes a RawEvent
// whose values are views into the parsed bytes; a run of the traceEvents array (from one unit to a
// limit) becomes the events it holds, in order, parsed by one thread while others parse other runs
// (ingest/kineto_event_pipeline.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ingest/json_cursor.h"
#include "ingest/kineto_events.h"

namespace tracedoc::kineto {

// One JSON value at the cursor, as text: strings raw (still escaped), arrays and objects whole.
Value read_value(json::Cursor& c);
// One event object at the cursor: the fields tracedoc uses into `e`, everything else skipped.
void read_event(json::Cursor& c, RawEvent& e);

// The units of the traceEvents array, one at a time: what the unit at the cursor (its whitespace
// skipped) is. A ',' is consumed, a value that is not an object is skipped (the caller counts it as
// an unknown event); the ']' that closes the array and an event's '{' are left for the caller.
enum class ArrayUnit : uint8_t { kSeparator, kArrayEnd, kEvent, kOther };
ArrayUnit next_array_unit(json::Cursor& c);

// Events kept between the thread that tokenizes them and the one that builds the model: only the
// values an event has, as offsets into the parsed bytes (an event has about a dozen of the 36; a
// RawEvent per event would move twice the trace's size through memory).
class PackedEvents {
 public:
  // Keeps `e`, whose views point into the bytes from `base` on.
  void add(const RawEvent& e, const char* base);
  // Calls f(const RawEvent&) for each event in order, with its views into the bytes from `base`.
  template <typename F>
  void for_each(const char* base, F&& f) const;
  size_t size() const { return events_.size(); }
  void clear() { values_.clear(), events_.clear(), dims_.clear(); }
  void reserve(size_t events) { events_.reserve(events), values_.reserve(events * 12); }

 private:
  struct PackedValue {
    uint32_t offset, length;
    uint8_t field;  // index into kRawEventValues
    bool is_string, escaped;
  };
  struct PackedEvent {
    uint32_t first_value;
    uint8_t value_count;
    bool has_grid, has_block, has_ev_idx;
  };
  std::vector<PackedValue> values_;
  std::vector<PackedEvent> events_;
  std::vector<int64_t> dims_;  // grid then block, of the events that have them, in order
};

// The units of the traceEvents array from one unit to a limit, as the sequential reader reads them
// there: ',' separators, event objects, and other values (skipped and counted as unknown events).
// Threads parse runs that sit next to each other in an array, each writing its own on every event:
// on cache lines of their own, no thread waits for a line another one writes.
struct alignas(64) EventRun {
  enum class Stop : uint8_t {
    kLimit,     // the next unit starts at or past the limit (`end`)
    kArrayEnd,  // `end` is the ']' that closes the array (not consumed)
    kNeedMore,  // the unit at `end` goes on past the bytes given (and they are not the file's end)
    kError,     // `error` is the first syntax error
  };
  uint64_t begin = 0;  // document offset of the first unit
  uint64_t limit = 0;
  uint64_t end = 0;  // document offset where the run stopped
  Stop stop = Stop::kLimit;
  const char* base = nullptr;  // the bytes at `begin`: the events' views are offsets from it
  PackedEvents events;
  int64_t non_objects = 0;  // numbers, strings or null in the array
  int64_t with_phase = 0;   // events with a "ph" key
  json::SyntaxError error{};
};

// Parses the units from `begin` (document offset `offset`) while they start before `limit`, into
// `run` (its buffers reused). [begin, end) must be followed by json::kPadding readable bytes;
// `eof`: nothing follows `end`.
void parse_event_run(const char* begin, const char* end, bool eof, uint64_t offset, uint64_t limit, EventRun& run);

template <typename F>
void PackedEvents::for_each(const char* base, F&& f) const {
  RawEvent e;
  const int64_t* dims = dims_.data();
  for (size_t n = 0; n < events_.size(); ++n) {
    const PackedEvent& packed = events_[n];
    const PackedValue* values = values_.data() + packed.first_value;
    // The builder reads the values' bytes, which another core tokenized: fetch a few events ahead.
    if (n + 4 < events_.size()) {
      const PackedEvent& ahead = events_[n + 4];
      for (uint8_t i = 0; i < ahead.value_count; i += 2)
        __builtin_prefetch(base + values_[ahead.first_value + i].offset);
    }
    for (uint8_t i = 0; i < packed.value_count; ++i) {
      const PackedValue& v = values[i];
      e.set(e.*kRawEventValues[v.field], Value{{base + v.offset, v.length}, true, v.is_string, v.escaped});
    }
    e.has_grid = packed.has_grid, e.has_block = packed.has_block, e.has_ev_idx = packed.has_ev_idx;
    if (e.has_grid) std::copy(dims, dims + 3, e.grid), dims += 3;
    if (e.has_block) std::copy(dims, dims + 3, e.block), dims += 3;
    f(static_cast<const RawEvent&>(e));
    e.clear();
  }
}

}  // namespace tracedoc::kineto
