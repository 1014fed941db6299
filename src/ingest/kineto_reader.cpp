#include "ingest/kineto_reader.h"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "common/memory_budget.h"
#include "common/name_pattern.h"
#include "common/task_pool.h"
#include "ingest/byte_stream.h"
#include "ingest/json_cursor.h"
#include "ingest/kineto_event_parser.h"
#include "ingest/kineto_event_pipeline.h"
#include "ingest/kineto_events.h"

namespace tracedoc {

namespace {

using json::Cursor;
using json::is;
using kineto::RawEvent;
using kineto::read_event;
using kineto::read_value;
using kineto::Value;

// The per-document state between refills: which part of the document the next unit belongs to.
enum class Place { kStart, kTopMembers, kEvents, kAfterDocument, kDone };

struct TopLevel {
  kineto::TraceBuilder& builder;
  Trace& trace;
  bool saw_events = false;
  int64_t events_with_phase = 0;
};

void read_device_properties(Cursor& c, TopLevel& top) {
  c.expect('[', "to open deviceProperties");
  while (!c.consume(']')) {
    Value id, name, sms, mem, major, minor;
    c.expect('{', "to open a device");
    while (!c.consume('}')) {
      const std::string_view key = c.string();
      c.expect(':', "after a device key");
      Value v = read_value(c);
      if (is(key, "id"))
        id = v;
      else if (is(key, "name"))
        name = v;
      else if (is(key, "numSms"))
        sms = v;
      else if (is(key, "totalGlobalMem"))
        mem = v;
      else if (is(key, "computeMajor"))
        major = v;
      else if (is(key, "computeMinor"))
        minor = v;
      if (!c.next_member('}')) {
        c.expect('}', "to close a device");
        break;
      }
    }
    auto num = [](const Value& v) {
      int64_t x = 0;
      return v.present && json::parse_int64(v.text, &x) ? x : 0;
    };
    top.builder.add_device(num(id), name.escaped ? json::unescape(name.text) : std::string(name.text), num(sms),
                           num(mem), num(major), num(minor));
    if (!c.next_member(']')) {
      c.expect(']', "to close deviceProperties");
      break;
    }
  }
}

void read_distributed_info(Cursor& c, TopLevel& top) {
  c.expect('{', "to open distributedInfo");
  while (!c.consume('}')) {
    const std::string_view key = c.string();
    c.expect(':', "after a distributedInfo key");
    Value v = read_value(c);
    int64_t x = 0;
    if (is(key, "rank") && json::parse_int64(v.text, &x))
      top.trace.pytorch.rank = x;
    else if (is(key, "world_size") && json::parse_int64(v.text, &x))
      top.trace.pytorch.world_size = x;
    else if (is(key, "backend") && v.is_string)
      top.trace.pytorch.backend = std::string(v.text);
    if (!c.next_member('}')) {
      c.expect('}', "to close distributedInfo");
      break;
    }
  }
}

// Parses one unit (a top-level member, or one event) at the cursor and moves `place` on. Throws
// json::NeedMore (nothing committed) when the window ends inside the unit.
void read_unit(Cursor& c, Place& place, TopLevel& top, RawEvent& event) {
  switch (place) {
    case Place::kStart: {
      const char ch = c.peek();
      if (ch == '{') {
        ++c.p;
        place = Place::kTopMembers;
        return;
      }
      if (ch == '[') {
        ++c.p;  // PyTorch's legacy exporter: the document is the event array
        top.builder.clues().bare_array = true;
        top.saw_events = true;
        place = Place::kEvents;
        return;
      }
      c.fail("not a JSON trace: expected '{' or '[' at the start, found " + Cursor::describe(ch));
    }
    case Place::kTopMembers: {
      if (c.consume(',')) return;
      if (c.consume('}')) {
        place = Place::kAfterDocument;
        return;
      }
      const std::string_view key = c.string();
      c.expect(':', "after a top-level key");
      if (is(key, "traceEvents")) {
        c.expect('[', "to open traceEvents");
        top.saw_events = true;
        place = Place::kEvents;
      } else if (is(key, "deviceProperties") && c.peek() == '[') {
        read_device_properties(c, top);
      } else if (is(key, "distributedInfo") && c.peek() == '{') {
        read_distributed_info(c, top);
      } else if (is(key, "baseTimeNanoseconds")) {
        int64_t base = 0;
        if (json::parse_int64(read_value(c).text, &base)) {
          top.trace.pytorch.base_time_ns = base;
          top.builder.clues().base_time = true;
        }
      } else {
        c.skip_value(1);
      }
      return;
    }
    case Place::kEvents: {
      switch (kineto::next_array_unit(c)) {
        case kineto::ArrayUnit::kSeparator: return;
        case kineto::ArrayUnit::kArrayEnd:
          ++c.p;
          place = top.builder.clues().bare_array ? Place::kAfterDocument : Place::kTopMembers;
          return;
        case kineto::ArrayUnit::kOther: top.trace.warnings.unknown_events++; return;
        case kineto::ArrayUnit::kEvent: break;
      }
      event.clear();
      read_event(c, event);
      if (event.ph.present) top.events_with_phase++;
      top.builder.add_event(event);
      return;
    }
    case Place::kAfterDocument:
      if (!c.peek_end()) c.fail("unexpected data after the end of the JSON document, found " + Cursor::describe(*c.p));
      place = Place::kDone;
      return;
    case Place::kDone: return;
  }
}

std::string where(Place place) {
  switch (place) {
    case Place::kStart: return "before the document";
    case Place::kTopMembers: return "in the top-level object";
    case Place::kEvents: return "in traceEvents";
    default: return "after the document";
  }
}

std::optional<int64_t> rank_from_file_name(const std::string& path) {
  static const NamePattern kRank = *NamePattern::compile(R"(rank[-_]?(\d{1,18}))", {.ignore_case = true});
  const std::string name = path.substr(path.find_last_of('/') + 1);
  std::string digits;
  if (kRank.found_in(name, &digits)) return std::stoll(digits);
  return std::nullopt;
}

}  // namespace

bool looks_like_kineto(const std::string& path) {
  if (is_gzip_file(path)) return true;
  auto stream = open_byte_stream(path);
  if (!stream.ok()) return false;
  char head[256];
  auto n = (*stream)->read(head, sizeof head);
  if (!n.ok()) return false;
  for (size_t i = 0; i < *n; ++i) {
    const char ch = head[i];
    if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t') continue;
    return ch == '{' || ch == '[';
  }
  return false;
}

Result<Trace> read_kineto_trace(const std::string& path, const KinetoReadOptions& options) {
  TRACEDOC_ASSIGN_OR_RETURN(auto opened, open_byte_stream(path));
  return read_kineto_stream(*opened, path, options);
}

Result<Trace> read_kineto_bytes(std::string_view bytes, const std::string& name, const KinetoReadOptions& options) {
  auto in = open_memory_stream(bytes, name);
  return read_kineto_stream(*in, name, options);
}

namespace {

// Skips the unit that starts at buffer[0] (filled bytes of it are there) by reading on until it
// ends, keeping none of it: buffer[0, filled) then holds what follows the unit. At the end of the
// input the unit is left unfinished (filled 0), and the reader reports the truncation.
Status skip_unit(ByteStream& in, std::vector<char>& buffer, size_t& filled, uint64_t& window_offset, bool& eof) {
  json::UnitEnd unit;
  for (;;) {
    const size_t end = unit.feed(buffer.data(), filled);
    if (end != json::UnitEnd::npos) {
      std::memmove(buffer.data(), buffer.data() + end, filled - end);
      window_offset += end;
      filled -= end;
      std::memset(buffer.data() + filled, 0, json::kPadding);
      return Status::Ok();
    }
    window_offset += filled;
    filled = 0;
    if (eof) break;
    TRACEDOC_ASSIGN_OR_RETURN(auto n, in.read(buffer.data(), buffer.size() - json::kPadding));
    if (n == 0) eof = true;
    filled = n;
  }
  std::memset(buffer.data(), 0, json::kPadding);
  return Status::Ok();
}

}  // namespace

Result<Trace> read_kineto_stream(ByteStream& in, const std::string& path, const KinetoReadOptions& options) {
  Trace trace;
  trace.source.path = path;
  trace.source.format = "kineto-json";
  kineto::TraceBuilder builder(trace, options);
  TopLevel top{builder, trace};
  Place place = Place::kStart;
  RawEvent event;

  // The window: buffer[0, filled) holds document bytes from `window_offset`; `pos` is where the next
  // unit starts. A unit that does not fit is retried after compacting (and, if needed, growing).
  constexpr size_t kInitial = 16u << 20;
  // A plain window starts small and doubles on each refill up to kInitial: a small trace (and each
  // fuzzer input) then costs no 16 MB allocation and zero-fill (12 ms, 90% of a small read). A gzip
  // window starts whole, so that a truncated .gz (up to 16 MB inflated) is reported as truncated
  // before its JSON is judged (KinetoReader.TruncatedInputsAreClearErrors).
  constexpr size_t kFirst = 64u << 10;

  std::vector<char> buffer((in.compressed() ? kInitial : kFirst) + json::kPadding);
  size_t filled = 0, pos = 0;
  uint64_t window_offset = 0;
  bool eof = false;
  uint64_t units = 0;
  // The event array goes to the pipeline from its first unit on, and again after each unit the
  // pipeline handed back (`parallel_from`): the sequential loop takes one unit at least in between.
  // A bound on units below what a window holds is the sequential reader's to apply.
  const bool parallel =
      options.parallel_run_bytes > 0 && thread_count() > 1 && options.max_unit_bytes > 2 * kineto::kMaxWindowBytes;
  uint64_t parallel_from = 0;
  const kineto::RunConsumer consume = [&](kineto::EventRun& run) {
    run.events.for_each(run.base, [&](const RawEvent& e) { builder.add_event(e); });
    top.events_with_phase += run.with_phase;
    trace.warnings.unknown_events += run.non_objects;
    return MemoryBudget::check(path);
  };
  try {
    for (;;) {
      Cursor c(buffer.data() + pos, buffer.data() + filled, eof, window_offset + pos);
      bool handed_back = false;
      try {
        while (place != Place::kDone) {
          // Whitespace between units is consumed for good: a refill keeps only the unit it is in,
          // so gigabytes of blanks between two events read through the same window.
          c.skip_whitespace();
          pos = static_cast<size_t>(c.p - buffer.data());
          // Worth it when more than a few runs are left: the stream goes on, or the window holds them.
          if (parallel && place == Place::kEvents && window_offset + pos >= parallel_from &&
              (!eof || filled - pos > 4 * options.parallel_run_bytes)) {
            TRACEDOC_RETURN_IF_ERROR(kineto::read_event_array(in, path, {buffer, filled, pos, window_offset, eof},
                                                              options.parallel_run_bytes, consume));
            parallel_from = window_offset + 1;
            handed_back = true;
            break;
          }
          read_unit(c, place, top, event);
          pos = static_cast<size_t>(c.p - buffer.data());
          if ((++units & 0xFFFF) == 0) TRACEDOC_RETURN_IF_ERROR(MemoryBudget::check(path));
        }
        if (handed_back) continue;
        break;
      } catch (const json::NeedMore&) {
        // Keep the unfinished unit, read more behind it.
        const size_t keep = filled - pos;
        if (pos > 0) std::memmove(buffer.data(), buffer.data() + pos, keep);
        window_offset += pos;
        pos = 0;
        filled = keep;
        if (filled >= options.max_unit_bytes && (place == Place::kEvents || place == Place::kTopMembers)) {
          TRACEDOC_RETURN_IF_ERROR(skip_unit(in, buffer, filled, window_offset, eof));
          trace.warnings.oversized_events++;
          if (filled <= kInitial && buffer.size() > kInitial + json::kPadding) {  // back to the usual window
            buffer.resize(kInitial + json::kPadding);
            buffer.shrink_to_fit();
          }
          continue;
        }
        const size_t capacity = buffer.size() - json::kPadding;
        // One huge event (or still ramping up): the window doubles, up to the largest unit read (past
        // it only when a unit that cannot be skipped fills the window).
        if (((filled > capacity / 2 || capacity < kInitial) && capacity < options.max_unit_bytes) ||
            filled == capacity) {
          // The new window is allocated while the old one is still alive: both count.
          TRACEDOC_RETURN_IF_ERROR(MemoryBudget::check(path, 2 * capacity));
          buffer.resize(capacity * 2 + json::kPadding);
        }
        TRACEDOC_ASSIGN_OR_RETURN(auto n, in.read(buffer.data() + filled, buffer.size() - json::kPadding - filled));
        if (n == 0) eof = true;
        filled += n;
        std::memset(buffer.data() + filled, 0, json::kPadding);
      }
    }
  } catch (const json::SyntaxError& e) {
    return BadInput(fmt::format("{}: invalid JSON at byte {} ({}): {}", path, e.offset, where(place), e.what));
  }
  if (!top.saw_events) {
    return BadInput(fmt::format("{}: not a PyTorch profiler trace: the JSON has no traceEvents array", path));
  }
  if (top.builder.clues().bare_array && top.events_with_phase == 0 && trace.pytorch.event_count > 0) {
    return BadInput(
        fmt::format("{}: not a PyTorch profiler trace: the JSON array holds no trace events (no \"ph\" keys)", path));
  }
  if (trace.pytorch.rank < 0) {
    if (auto r = rank_from_file_name(path)) trace.pytorch.rank = *r;
  }
  trace.source.session_start_utc_ns = trace.pytorch.base_time_ns;
  builder.finish();
  return trace;
}

}  // namespace tracedoc
