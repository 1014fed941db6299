#include "ingest/kineto_event_pipeline.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "common/memory_budget.h"
#include "common/task_pool.h"

namespace tracedoc::kineto {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Room kept before a window's data for the tail of the window before: an event is well under this.
constexpr size_t kSlack = 64u << 10;
// Windows hold this many runs per thread, so that a round gives every thread many runs: each round
// ends when its last run does, and small runs leave the threads little to wait for (16 runs of
// 256 KB kept both cores busy 96% of the time on a 1 GB trace, 4 runs of 1 MB 90-94%).
constexpr size_t kRunsPerThread = 16;

// One window: bytes [begin, end) are document bytes from offset_of(begin); [data, end) were read
// from the stream for this window, [begin, data) is the tail copied from the window before.
struct Window {
  std::unique_ptr<char[]> bytes;
  size_t capacity = 0;  // allocated, padding excluded
  size_t begin = 0, data = 0, end = 0;
  uint64_t data_offset = 0;  // document offset of bytes[data]
  bool eof = false;          // the stream ends after this window
  bool tokenized = false;
  std::vector<EventRun> runs;
  Status read_status;

  uint64_t offset_of(size_t index) const { return data_offset - data + index; }
  uint64_t content_offset() const { return offset_of(begin); }
  uint64_t end_offset() const { return offset_of(end); }
  const char* at(uint64_t offset) const { return bytes.get() + (offset - data_offset + data); }

  // Room for `slack` tail bytes before `data_bytes` of data; what is there is not kept.
  void reserve(size_t slack, size_t data_bytes) {
    if (capacity < slack + data_bytes || data != slack) {
      capacity = std::max(capacity, slack + data_bytes);
      bytes.reset(new char[capacity + json::kPadding]);
    }
    begin = data = end = slack;
    eof = tokenized = false;
    read_status = Status::Ok();
  }
  void pad() { std::memset(bytes.get() + end, 0, json::kPadding); }
};

void read_window(ByteStream& in, Window& w, size_t want) {
  size_t got = 0;
  while (got < want) {
    auto n = in.read(w.bytes.get() + w.data + got, want - got);
    if (!n.ok()) {
      w.read_status = n.status();
      break;
    }
    if (*n == 0) {
      w.eof = true;
      break;
    }
    got += *n;
  }
  w.end = w.data + got;
  w.pad();
}

// Where the tokenizer saw the window's last unit begin unfinished (or its end, when its units all
// ended in it): the tail the next window starts with. None when it saw the array end or an error.
std::optional<uint64_t> tail_of(const Window& w) {
  if (!w.tokenized || w.runs.empty()) return std::nullopt;
  const EventRun& last = w.runs.back();
  if (last.stop == EventRun::Stop::kNeedMore || last.stop == EventRun::Stop::kLimit) return last.end;
  return std::nullopt;
}

// Copies [tail, end of `before`) in front of `w`'s data; false when the tail is larger than a
// window's data (an event that large is the sequential reader's).
bool take_tail(const Window& before, uint64_t tail, Window& w, size_t window_bytes) {
  const size_t n = static_cast<size_t>(before.end_offset() - tail);
  if (n > window_bytes) return false;
  if (n > w.data) {  // more than the slack: move the data up
    const size_t length = w.end - w.data;
    std::unique_ptr<char[]> bytes(new char[n + length + json::kPadding]);
    std::memcpy(bytes.get() + n, w.bytes.get() + w.data, length);
    w.bytes = std::move(bytes);
    w.capacity = n + length;
    w.data = n, w.end = n + length;
    w.pad();
  }
  std::memcpy(w.bytes.get() + w.data - n, before.at(tail), n);
  w.begin = w.data - n;
  return true;
}

// The runs of a window: the first from its start, each other from a guessed event start near an
// equal share of the window; [begin, limit) document offsets.
std::vector<std::pair<uint64_t, uint64_t>> plan_runs(const Window& w, size_t run_bytes, size_t most) {
  const size_t size = w.end - w.begin;
  const size_t count = std::clamp<size_t>(size / std::max<size_t>(run_bytes, 1), 1, most);
  const size_t step = size / count;
  std::vector<uint64_t> starts = {w.content_offset()};
  const char* base = w.bytes.get();
  for (size_t i = 1; i < count; ++i) {
    const char* from = base + w.begin + i * step;
    const char* to = base + std::min(w.end, w.begin + (i + 1) * step);
    const char* guess = guess_event_start(from, to);
    if (guess < to) starts.push_back(w.offset_of(static_cast<size_t>(guess - base)));
  }
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  for (size_t i = 0; i < starts.size(); ++i)
    runs.emplace_back(starts[i], i + 1 < starts.size() ? starts[i + 1] : w.end_offset());
  return runs;
}

// What building a window ended with.
struct Built {
  enum class End { kWindow, kArrayEnd, kError, kConsumer } end = End::kWindow;
  json::SyntaxError error{};
  Status status;
};

// Gives the consumer the window's runs in document order, each checked to start where the one
// before stopped (`expected`, a unit boundary of the sequential reader) or parsed again from there.
// On kWindow `expected` is where the window's last unit begins unfinished, or its end; on kArrayEnd
// the ']'.
Built build_window(Window& w, uint64_t& expected, const RunConsumer& consume) {
  Built built;
  for (EventRun& run : w.runs) {
    if (run.begin != expected) {
      if (expected >= run.limit) {  // an event of the run before covers this one
        run.events.clear();
        continue;
      }
      parse_event_run(w.at(expected), w.at(w.end_offset()), w.eof, expected, run.limit, run);
    }
    if (run.stop == EventRun::Stop::kError) {
      built.end = Built::End::kError;
      built.error = std::move(run.error);
      return built;
    }
    built.status = consume(run);
    expected = run.end;
    const EventRun::Stop stop = run.stop;
    run.events.clear();  // (its buffers are reused for a later window's run)
    if (!built.status.ok()) {
      built.end = Built::End::kConsumer;
      return built;
    }
    if (stop == EventRun::Stop::kArrayEnd) {
      built.end = Built::End::kArrayEnd;
      return built;
    }
    if (stop == EventRun::Stop::kNeedMore) return built;
  }
  return built;
}

// Hands the document from `from` (in `first`) on back to the sequential reader: the rest of
// `first` and the data of the windows read after it.
void hand_back(SequentialWindow out, uint64_t from, const Window& first, const std::vector<const Window*>& after) {
  size_t total = static_cast<size_t>(first.end_offset() - from);
  for (const Window* w : after) total += w->end - w->data;
  // At least the sequential reader's first window, so that its refill has room to grow from.
  out.buffer.assign(std::max<size_t>(total, 64u << 10) + json::kPadding, 0);
  char* p = out.buffer.data();
  std::memcpy(p, first.at(from), static_cast<size_t>(first.end_offset() - from));
  p += first.end_offset() - from;
  bool eof = first.eof;
  for (const Window* w : after) {
    std::memcpy(p, w->bytes.get() + w->data, w->end - w->data);
    p += w->end - w->data;
    eof = w->eof;
  }
  out.filled = total;
  out.pos = 0;
  out.offset = from;
  out.eof = eof;
}

}  // namespace

const char* guess_event_start(const char* from, const char* to) {
  for (const char* p = from; p < to; ++p) {
    p = static_cast<const char*>(std::memchr(p, '{', static_cast<size_t>(to - p)));
    if (!p) return to;
    // Back over whitespace to a ',', and over whitespace again to a '}', looking no further back
    // than `from` (a '{' whose "}," lies before it is passed over).
    const char* q = p - 1;
    while (q >= from && is_blank(*q)) --q;
    if (q < from || *q != ',') continue;
    --q;
    while (q >= from && is_blank(*q)) --q;
    if (q >= from && *q == '}') return p;
  }
  return to;
}

Status read_event_array(ByteStream& in, const std::string& path, SequentialWindow window, size_t run_bytes,
                        const RunConsumer& consume) {
  const size_t threads = static_cast<size_t>(std::max(1, thread_count()));
  const size_t runs_per_window = kRunsPerThread * threads;
  const size_t window_bytes = std::clamp<size_t>(run_bytes * runs_per_window, 1, kMaxWindowBytes);
  TRACEDOC_RETURN_IF_ERROR(
      MemoryBudget::check(path, 3 * (kSlack + std::max(window_bytes, window.filled - window.pos))));

  // Three windows are alive: the one being built, the one being tokenized, the one being read.
  Window ring[3];
  Window* prev = nullptr;
  Window* cur = &ring[0];
  Window* next = &ring[1];
  Window* spare = &ring[2];
  {  // The first window: what the sequential reader holds from `pos` on.
    const size_t n = window.filled - window.pos;
    cur->reserve(kSlack, std::max(n, window_bytes));
    std::memcpy(cur->bytes.get() + cur->data, window.buffer.data() + window.pos, n);
    cur->end = cur->data + n;
    cur->pad();
    cur->data_offset = window.offset + window.pos;
    cur->eof = window.eof;
  }
  uint64_t expected = cur->content_offset();
  Status read_error;
  for (;;) {
    // Window `cur` starts with the tail of `prev` as its tokenizer saw it.
    bool tokenize = cur != nullptr;
    if (cur && prev) {
      const std::optional<uint64_t> tail = tail_of(*prev);
      tokenize = tail && take_tail(*prev, *tail, *cur, window_bytes);
    }
    std::vector<std::pair<uint64_t, uint64_t>> plan;
    if (tokenize) plan = plan_runs(*cur, run_bytes, runs_per_window);
    const bool read_next = cur && !cur->eof && read_error.ok();
    if (read_next) {
      next->reserve(kSlack, window_bytes);
      next->data_offset = cur->offset_of(cur->end);
    }
    if (tokenize) {
      cur->runs.resize(plan.size());  // the runs of an earlier window keep their buffers
      cur->tokenized = true;
    }

    Built built;
    std::vector<std::function<void()>> jobs;
    if (prev) jobs.emplace_back([&] { built = build_window(*prev, expected, consume); });
    if (read_next) jobs.emplace_back([&] { read_window(in, *next, window_bytes); });
    for (size_t i = 0; i < plan.size(); ++i) {
      jobs.emplace_back([&, i] {
        const auto [begin, limit] = plan[i];
        parse_event_run(cur->at(begin), cur->at(cur->end_offset()), cur->eof, begin, limit, cur->runs[i]);
      });
    }
    parallel_invoke(jobs);

    if (read_next && !next->read_status.ok())
      read_error = next->read_status;  // reported once the data before it is used
    std::vector<const Window*> after;
    if (cur) after.push_back(cur);
    if (read_next && next->read_status.ok()) after.push_back(next);
    if (prev) {
      switch (built.end) {
        case Built::End::kError: throw std::move(built.error);
        case Built::End::kConsumer: return built.status;
        case Built::End::kArrayEnd: hand_back(window, expected, *prev, after); return read_error;
        case Built::End::kWindow: break;
      }
      // The window after starts where `prev`'s units really end, or the sequential reader goes on.
      if (!cur || !cur->tokenized || cur->content_offset() != expected) {
        hand_back(window, expected, *prev, after);
        return read_error;
      }
    }
    // A read error leaves `next` out: `cur` is the last window, and its end hands back.
    Window* done = prev;
    prev = cur;
    cur = read_next && next->read_status.ok() ? next : nullptr;
    next = done ? done : spare;
    if (!done) spare = nullptr;
  }
}

}  // namespace tracedoc::kineto
