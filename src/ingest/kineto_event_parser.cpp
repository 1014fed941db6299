#include "ingest/kineto_event_parser.h"

#include <iterator>

namespace tracedoc::kineto {

using json::Cursor;
using json::is;

namespace {

// "[50, 1, 1]" -> up to three integers.
bool read_dim3(Cursor& c, int64_t out[3]) {
  const Value v = read_value(c);
  std::string_view s = v.text;
  if (s.empty() || s.front() != '[') return false;
  int n = 0;
  size_t i = 1;
  while (i < s.size() && n < 3) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t j = i;
    while (j < s.size() && ((s[j] >= '0' && s[j] <= '9') || s[j] == '-')) ++j;
    if (j == i) break;
    json::parse_int64(s.substr(i, j - i), &out[n++]);
    i = j;
  }
  return n > 0;
}

// The args object: keys tracedoc reads are kept, everything else is skipped unread.
void read_args(Cursor& c, RawEvent& e) {
  c.expect('{', "to open args");
  while (!c.consume('}')) {
    const std::string_view key = c.string();
    c.expect(':', "after an args key");
    Value* target = nullptr;
    bool consumed = false;
    switch (key.size()) {
      case 4:
        if (is(key, "grid")) {
          e.has_grid = read_dim3(c, e.grid);
          consumed = true;
          break;
        }
        if (is(key, "name"))
          target = &e.arg_name;
        else if (is(key, "Addr"))
          target = &e.addr;
        break;
      case 5:
        if (is(key, "block")) {
          e.has_block = read_dim3(c, e.block);
          consumed = true;
          break;
        }
        if (is(key, "bytes") || is(key, "Bytes"))
          target = &e.bytes;
        else if (is(key, "flops"))
          target = &e.flops;
        else if (is(key, "dtype"))
          target = &e.dtype;
        break;
      case 6:
        if (is(key, "device"))
          target = &e.device;
        else if (is(key, "stream"))
          target = &e.stream;
        else if (is(key, "Ev Idx"))
          e.has_ev_idx = true;  // 2022-10 on (2022's "Profiler Event Index" before)
        break;
      case 7:
        if (is(key, "context")) target = &e.context;
        break;
      case 9:
        if (is(key, "Device Id"))
          target = &e.device_id;
        else if (is(key, "Python id"))
          target = &e.python_id;
        break;
      case 10:
        if (is(key, "Input Dims"))
          target = &e.input_dims;
        else if (is(key, "Input type"))
          target = &e.input_types;
        else if (is(key, "Group size"))
          target = &e.group_size;
        break;
      case 11:
        if (is(key, "correlation"))
          target = &e.correlation;
        else if (is(key, "External id") || is(key, "external id"))
          target = &e.external_id;
        else if (is(key, "Device Type"))
          target = &e.device_type;
        break;
      case 13:
        if (is(key, "shared memory"))
          target = &e.shared_memory;
        else if (is(key, "Fwd thread id"))
          target = &e.fwd_thread_id;
        else if (is(key, "In msg nelems"))
          target = &e.in_nelems;
        else if (is(key, "graph node id"))
          target = &e.graph_node_id;
        break;
      case 14:
        if (is(key, "Out msg nelems"))
          target = &e.out_nelems;
        else if (is(key, "Total Reserved"))
          target = &e.total_reserved;
        break;
      case 15:
        if (is(key, "Sequence number"))
          target = &e.sequence_number;
        else if (is(key, "Total Allocated"))
          target = &e.total_allocated;
        else if (is(key, "Collective name"))
          target = &e.collective;
        else if (is(key, "Concrete Inputs"))
          target = &e.concrete_inputs;
        break;
      case 16:
        if (is(key, "Python parent id")) target = &e.python_parent_id;  // null for the outermost call
        break;
      case 18:
        if (is(key, "Process Group Name")) target = &e.group_name;
        break;
      case 20:
        if (is(key, "registers per thread")) target = &e.registers;
        break;
      case 25:
        if (is(key, "est. achieved occupancy %")) target = &e.occupancy;
        break;
      default: break;
    }
    if (target)
      e.set(*target, read_value(c));
    else if (!consumed)
      c.skip_value(2);
    if (!c.next_member('}')) {
      c.expect('}', "to close args");
      break;
    }
  }
}

}  // namespace

Value read_value(Cursor& c) {
  Value v;
  v.present = true;
  const char ch = c.peek();
  if (ch == '"') {
    v.is_string = true;
    v.text = c.string(&v.escaped);
  } else if (ch == '{' || ch == '[') {
    const char* start = c.skip_value();
    v.text = std::string_view(start, static_cast<size_t>(c.p - start));
  } else {
    v.text = c.scalar();
  }
  return v;
}

void read_event(Cursor& c, RawEvent& e) {
  c.expect('{', "to open an event");
  while (!c.consume('}')) {
    const std::string_view key = c.string();
    c.expect(':', "after an event key");
    Value* target = nullptr;
    bool args = false;
    switch (key.size()) {
      case 1:
        if (key[0] == 's') target = &e.scope;
        break;
      case 2:
        if (key[0] == 'p' && key[1] == 'h')
          target = &e.ph;
        else if (key[0] == 't' && key[1] == 's')
          target = &e.ts;
        else if (key[0] == 'i' && key[1] == 'd')
          target = &e.id;
        break;
      case 3:
        if (is(key, "cat"))
          target = &e.cat;
        else if (is(key, "pid"))
          target = &e.pid;
        else if (is(key, "tid"))
          target = &e.tid;
        else if (is(key, "dur"))
          target = &e.dur;
        break;
      case 4:
        if (is(key, "name"))
          target = &e.name;
        else if (is(key, "args")) {
          args = true;
          if (c.peek() == '{')
            read_args(c, e);
          else
            c.skip_value(1);
        }
        break;
      default: break;
    }
    if (target)
      e.set(*target, read_value(c));
    else if (!args)
      c.skip_value(1);
    if (!c.next_member('}')) {
      c.expect('}', "to close an event");
      break;
    }
  }
}

ArrayUnit next_array_unit(Cursor& c) {
  const char ch = c.peek();
  if (ch == ',') {
    ++c.p;
    return ArrayUnit::kSeparator;
  }
  if (ch == ']') return ArrayUnit::kArrayEnd;
  if (ch == '{') return ArrayUnit::kEvent;
  c.skip_value(1);  // a number, string or null in the event list: not an event
  return ArrayUnit::kOther;
}

void PackedEvents::add(const RawEvent& e, const char* base) {
  const uint32_t first = static_cast<uint32_t>(values_.size());
  for (uint64_t m = e.present_mask; m != 0; m &= m - 1) {
    const size_t i = static_cast<size_t>(__builtin_ctzll(m));
    const Value& v = e.*kRawEventValues[i];
    values_.push_back({static_cast<uint32_t>(v.text.data() - base), static_cast<uint32_t>(v.text.size()),
                       static_cast<uint8_t>(i), v.is_string, v.escaped});
  }
  events_.push_back({first, static_cast<uint8_t>(values_.size() - first), e.has_grid, e.has_block, e.has_ev_idx});
  if (e.has_grid) dims_.insert(dims_.end(), e.grid, e.grid + 3);
  if (e.has_block) dims_.insert(dims_.end(), e.block, e.block + 3);
}

void parse_event_run(const char* begin, const char* end, bool eof, uint64_t offset, uint64_t limit, EventRun& run) {
  run.begin = run.end = offset;
  run.limit = limit;
  run.stop = EventRun::Stop::kLimit;
  run.base = begin;
  run.events.clear();
  run.non_objects = run.with_phase = 0;
  // About one event per 400 bytes in PyTorch's pretty-printed traces.
  if (limit > offset) run.events.reserve(static_cast<size_t>((limit - offset) / 400 + 1));
  RawEvent e;
  Cursor c(begin, end, eof, offset);
  try {
    for (;;) {
      // Each unit as the sequential reader takes it (kineto_reader.cpp, Place::kEvents): the
      // whitespace before it consumed, then the unit.
      c.skip_whitespace();
      run.end = c.offset();
      if (run.end >= limit) return;
      const ArrayUnit unit = next_array_unit(c);
      if (unit == ArrayUnit::kSeparator) continue;
      if (unit == ArrayUnit::kOther) {
        run.non_objects++;
        continue;
      }
      if (unit == ArrayUnit::kArrayEnd) {
        run.stop = EventRun::Stop::kArrayEnd;
        return;
      }
      e.clear();
      read_event(c, e);
      run.events.add(e, begin);
      run.with_phase += e.ph.present;
    }
  } catch (const json::NeedMore&) {
    run.stop = EventRun::Stop::kNeedMore;
  } catch (json::SyntaxError& error) {
    run.stop = EventRun::Stop::kError;
    run.error = std::move(error);
  }
}

}  // namespace tracedoc::kineto
