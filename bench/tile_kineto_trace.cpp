// Builds a large benchmark input from a real PyTorch profiler (Kineto) trace by tiling it: the
// top-level metadata is kept once and the traceEvents array is repeated N times, copy k shifted in
// time by k * (span of the original + 1 ms) and with its ids renumbered by k * (max id + 1), so the
// result is one valid trace with N times the events of the original and no colliding links.
//
//   tile_kineto_trace [--rank R] INPUT(.json|.json.gz) OUTPUT.json N   prints "<events> <kernels>" written
//   tile_kineto_trace --info INPUT                                     prints facts about the input
// --rank R makes the output rank R of a multi-rank run (bench/scale_kineto's 64-rank directory): it
// rewrites distributedInfo's "rank" value, or adds "rank" / a distributedInfo object when missing.
//
// Self-contained on purpose (zlib only, not tracedoc's reader): the benchmark input must not depend
// on the code it measures. The input is held in memory (tens of MB for real traces); the output is
// written copy by copy. Numbers that are shifted or renumbered are rewritten as decimal text, never
// through double: E5 timestamps like 1419116104994.671 carry exact ns that a double would round.
// `ph:"M"` metadata events (process/thread names) are written once, as a longer real trace would
// have them.
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using i128 = __int128;

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "tile_kineto_trace: %s\n", msg.c_str());
  std::exit(2);
}

// gzread inflates .gz and passes plain files through unchanged, so one path reads both.
std::string read_all(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) die("cannot open " + path);
  gzbuffer(f, 1 << 20);
  std::string out;
  std::vector<char> buf(1 << 22);
  int n;
  while ((n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) out.append(buf.data(), n);
  if (n < 0) die("read error in " + path);
  gzclose(f);
  return out;
}

// A JSON number as an exact decimal: value = mantissa / 10^scale. Exponents are folded in so the
// arithmetic stays integral; the common forms ("123", "123.456") round-trip to the same text.
struct Decimal {
  i128 mantissa = 0;
  int scale = 0;
};

bool parse_decimal(std::string_view s, Decimal& d) {
  size_t i = 0;
  bool neg = false, any = false;
  if (i < s.size() && s[i] == '-') neg = true, ++i;
  i128 m = 0;
  int scale = 0, digits = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) m = m * 10 + (s[i] - '0'), any = true, ++digits;
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) m = m * 10 + (s[i] - '0'), ++scale, ++digits, any = true;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) eneg = s[i] == '-', ++i;
    int e = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) e = e * 10 + (s[i] - '0');
    scale += eneg ? e : -e;
  }
  if (!any || i != s.size() || digits > 36) return false;  // 36 digits keep i128 arithmetic safe
  for (; scale < 0; ++scale) m *= 10;
  d.mantissa = neg ? -m : m;
  d.scale = scale;
  return true;
}

i128 pow10(int n) {
  i128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

std::string format_decimal(const Decimal& d) {
  i128 m = d.mantissa < 0 ? -d.mantissa : d.mantissa;
  std::string digits;
  do digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10))), m /= 10;
  while (m > 0);
  if (d.scale > 0) {
    if (static_cast<int>(digits.size()) <= d.scale) digits.insert(0, d.scale + 1 - digits.size(), '0');
    digits.insert(digits.size() - d.scale, 1, '.');
  }
  return (d.mantissa < 0 ? "-" : "") + digits;
}

// What the tiler rewrites: "ts" by the time shift, ids by the id offset.
enum class Patch : char { kTime, kId, kIdString };
struct PatchPoint {
  size_t pos, len;  // in the input text; for kIdString the digits inside the quotes
  Patch kind;
};
struct Event {
  size_t begin, end;  // [begin, end) of the event object's text
  size_t first_patch, patch_count;
  bool metadata, kernel;
};

// args keys that are per-event ids or links between events (CPU op <-> runtime <-> kernel,
// python_function tree, fwd/bwd); shifting them keeps copies from linking into each other.
bool is_id_arg(std::string_view k) {
  static const char* const keys[] = {"correlation",      "External id",          "external id",
                                     "Ev Idx",           "Profiler Event Index", "Python id",
                                     "Python parent id", "Record function id",   "Sequence number"};
  for (const char* key : keys)
    if (k == key) return true;
  return false;
}

class Scanner {
 public:
  explicit Scanner(const std::string& text) : s_(text) {}

  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t')) ++p_;
  }
  bool at(char c) {
    ws();
    return p_ < s_.size() && s_[p_] == c;
  }
  void expect(char c) {
    if (!at(c)) die(std::string("expected '") + c + "' at byte " + std::to_string(p_));
    ++p_;
  }
  // The raw contents between the quotes (escapes left as written: keys of interest have none).
  std::string_view string() {
    expect('"');
    size_t b = p_;
    while (p_ < s_.size() && s_[p_] != '"') p_ += s_[p_] == '\\' ? 2 : 1;
    if (p_ >= s_.size()) die("unterminated string");
    return std::string_view(s_).substr(b, p_++ - b);
  }
  // A number or bare literal (true, null, and the unquoted N/A of old Kineto files).
  std::string_view scalar() {
    ws();
    size_t b = p_;
    while (p_ < s_.size() && !std::strchr(",}] \n\r\t", s_[p_])) ++p_;
    return std::string_view(s_).substr(b, p_ - b);
  }
  void skip_value() {
    if (at('"')) {
      string();
      return;
    }
    if (at('{') || at('[')) {
      int depth = 0;
      do {
        char c = s_[p_];
        if (c == '"') {
          string();
          continue;
        }
        if (c == '{' || c == '[')
          ++depth;
        else if (c == '}' || c == ']')
          --depth;
        ++p_;
      } while (depth > 0 && p_ < s_.size());
      if (depth) die("unbalanced brackets");
      return;
    }
    if (scalar().empty()) die("bad value at byte " + std::to_string(p_));
  }
  // Calls f(key) at each member of the object here; f must consume the value.
  template <typename F>
  void members(F&& f) {
    expect('{');
    if (at('}')) {
      ++p_;
      return;
    }
    for (;;) {
      std::string_view key = string();
      expect(':');
      f(key);
      if (at(',')) {
        ++p_;
        continue;
      }
      expect('}');
      return;
    }
  }
  size_t pos() const { return p_; }
  void set_pos(size_t p) { p_ = p; }

 private:
  const std::string& s_;
  size_t p_ = 0;
};

struct Parsed {
  size_t events_begin = 0, events_end = 0;  // the traceEvents value, brackets included
  // For --rank: where the top-level object's members start (after its '{'), where distributedInfo's
  // members start and whether it has any, and its "rank" value. npos: not in the file.
  size_t top_open = std::string::npos, dist_open = std::string::npos, rank_pos = std::string::npos, rank_len = 0;
  bool dist_empty = false;
  std::vector<Event> events;
  std::vector<PatchPoint> patches;
  i128 min_ts = 0, max_end = 0, max_id = -1;
  bool have_ts = false;
  size_t skipped_ids = 0;  // non-numeric ids left as they are
};

void parse_event(Scanner& sc, Parsed& out) {
  Event ev{sc.pos(), 0, out.patches.size(), 0, false, false};
  Decimal ts, dur;
  bool has_ts = false, has_dur = false;
  auto id_value = [&] {
    if (sc.at('"')) {  // a string id made of digits (some writers quote them) is renumbered inside the quotes
      size_t b = sc.pos() + 1;
      std::string_view v = sc.string();
      Decimal d;
      if (!v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos && parse_decimal(v, d)) {
        out.patches.push_back({b, v.size(), Patch::kIdString});
        if (d.mantissa > out.max_id) out.max_id = d.mantissa;
      } else {
        ++out.skipped_ids;
      }
      return;
    }
    size_t b = (sc.ws(), sc.pos());
    std::string_view v = sc.scalar();
    Decimal d;
    if (parse_decimal(v, d) && d.scale == 0) {
      out.patches.push_back({b, v.size(), Patch::kId});
      if (d.mantissa > out.max_id) out.max_id = d.mantissa;
    } else {
      ++out.skipped_ids;
    }
  };
  sc.members([&](std::string_view key) {
    if (key == "ts" && !sc.at('"')) {
      size_t b = (sc.ws(), sc.pos());
      std::string_view v = sc.scalar();
      if (!parse_decimal(v, ts)) die("unparsable ts '" + std::string(v) + "'");
      out.patches.push_back({b, v.size(), Patch::kTime});
      has_ts = true;
    } else if (key == "dur" && !sc.at('"')) {
      has_dur = parse_decimal(sc.scalar(), dur);
    } else if (key == "id") {
      id_value();
    } else if (key == "ph" && sc.at('"')) {
      ev.metadata = sc.string() == "M";
    } else if (key == "cat" && sc.at('"')) {
      std::string_view c = sc.string();
      ev.kernel = c == "kernel" || c == "Kernel";
    } else if (key == "args" && sc.at('{')) {
      sc.members([&](std::string_view k) {
        if (is_id_arg(k))
          id_value();
        else
          sc.skip_value();
      });
    } else {
      sc.skip_value();
    }
  });
  ev.end = sc.pos();
  ev.patch_count = out.patches.size() - ev.first_patch;
  // Metadata events often carry ts 0; they do not take part in the span.
  if (has_ts && !ev.metadata) {
    // In ns (ts*1000, truncated past the 3rd decimal): only used to size the shift between copies.
    auto to_ns = [](const Decimal& d) {
      return d.scale >= 3 ? d.mantissa / pow10(d.scale - 3) : d.mantissa * pow10(3 - d.scale);
    };
    i128 b = to_ns(ts), e = b + (has_dur ? to_ns(dur) : 0);
    if (!out.have_ts || b < out.min_ts) out.min_ts = b;
    if (!out.have_ts || e > out.max_end) out.max_end = e;
    out.have_ts = true;
  }
  out.events.push_back(ev);
}

Parsed parse(const std::string& text) {
  Parsed out;
  Scanner sc(text);
  auto events_array = [&] {
    out.events_begin = sc.pos();
    sc.expect('[');
    if (!sc.at(']')) {
      for (;;) {
        if (sc.at('{'))
          parse_event(sc, out);
        else
          die("traceEvents element is not an object at byte " + std::to_string(sc.pos()));
        if (sc.at(',')) {
          sc.set_pos(sc.pos() + 1);
          continue;
        }
        break;
      }
    }
    sc.expect(']');
    out.events_end = sc.pos();
  };
  if (sc.at('[')) {  // PyTorch's legacy exporter: a bare array of events
    events_array();
  } else {
    bool found = false;
    out.top_open = sc.pos() + 1;  // members() starts at this '{' (at('[') skipped the whitespace)
    sc.members([&](std::string_view key) {
      if (key == "traceEvents" && sc.at('[')) {
        sc.ws();
        events_array();
        found = true;
      } else if (key == "distributedInfo" && sc.at('{')) {
        out.dist_open = sc.pos() + 1;
        bool any = false;
        sc.members([&](std::string_view k) {
          any = true;
          if (k == "rank" && !sc.at('"') && !sc.at('{') && !sc.at('[')) {
            out.rank_pos = (sc.ws(), sc.pos());
            out.rank_len = sc.scalar().size();
          } else {
            sc.skip_value();
          }
        });
        out.dist_empty = !any;
      } else {
        sc.skip_value();
      }
    });
    if (!found) die("no traceEvents array");
  }
  return out;
}

class Output {
 public:
  explicit Output(const std::string& path) : f_(std::fopen(path.c_str(), "wb")) {
    if (!f_) die("cannot write " + path);
    std::setvbuf(f_, nullptr, _IOFBF, 1 << 22);
  }
  void put(std::string_view s) {
    if (std::fwrite(s.data(), 1, s.size(), f_) != s.size()) die("write failed");
  }
  // Writes text[begin, end) with the edit (replace `len` bytes at `pos` by `with`) applied when it
  // falls inside; a pure insertion (len 0) at `begin` is applied too.
  struct Edit {
    size_t pos = std::string::npos, len = 0;
    std::string with;
  };
  void put(std::string_view text, size_t begin, size_t end, const Edit& e) {
    if (e.pos == std::string::npos || e.pos < begin || e.pos >= end) return put(text.substr(begin, end - begin));
    put(text.substr(begin, e.pos - begin));
    put(e.with);
    put(text.substr(e.pos + e.len, end - e.pos - e.len));
  }
  void close() {
    if (std::fclose(f_) != 0) die("write failed");
  }

 private:
  FILE* f_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--info") {
    const std::string text = read_all(argv[2]);
    Parsed p = parse(text);
    size_t kernels = 0;
    for (const auto& e : p.events) kernels += e.kernel;
    std::printf("bytes %zu\nevents %zu\nkernels %zu\nspan_us %s\nmax_id %s\nnon_numeric_ids %zu\n", text.size(),
                p.events.size(), kernels, format_decimal({p.max_end - p.min_ts, 3}).c_str(),
                format_decimal({p.max_id, 0}).c_str(), p.skipped_ids);
    return 0;
  }
  std::string rank;  // --rank R: as written, checked to be a plain integer
  if (argc == 6 && std::string(argv[1]) == "--rank") {
    rank = argv[2];
    if (rank.empty() || rank.find_first_not_of("0123456789") != std::string::npos) die("--rank needs a number >= 0");
    argv += 2, argc -= 2;
  }
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: tile_kineto_trace [--rank R] INPUT(.json|.json.gz) OUTPUT.json N\n       tile_kineto_trace "
                 "--info INPUT\n");
    return 2;
  }
  const std::string input = argv[1], output = argv[2];
  const int n = std::atoi(argv[3]);
  if (n < 1) die("N must be >= 1");
  const std::string text = read_all(input);
  const Parsed p = parse(text);
  Output::Edit rank_edit;  // applied to the top-level text around traceEvents, which is written once
  if (!rank.empty()) {
    if (p.top_open == std::string::npos)
      die("--rank: the input is a bare event array, with no place for distributedInfo");
    if (p.rank_pos != std::string::npos)
      rank_edit = {p.rank_pos, p.rank_len, rank};
    else if (p.dist_open != std::string::npos)
      rank_edit = {p.dist_open, 0, "\"rank\": " + rank + (p.dist_empty ? "" : ", ")};
    else
      rank_edit = {p.top_open, 0, "\n  \"distributedInfo\": {\"rank\": " + rank + "},"};
  }

  // Whole µs, so that adding the shift never touches the fractional digits of a timestamp.
  const i128 shift_us = (p.max_end - p.min_ts) / 1000 + 1 + 1000;  // span rounded up, plus 1 ms
  const i128 id_step = p.max_id + 1;

  Output out(output);
  const std::string_view all(text);
  out.put(all, 0, p.events_begin, rank_edit);  // everything before traceEvents' '[' (metadata kept once)
  out.put("[");
  size_t events = 0, kernels = 0;
  for (int k = 0; k < n; ++k) {
    for (const Event& e : p.events) {
      if (e.metadata && k > 0) continue;
      out.put(events ? ",\n" : "\n");
      size_t at = e.begin;
      for (size_t i = e.first_patch; i < e.first_patch + e.patch_count; ++i) {
        const PatchPoint& pp = p.patches[i];
        out.put(all.substr(at, pp.pos - at));
        Decimal d;
        parse_decimal(all.substr(pp.pos, pp.len), d);
        if (pp.kind == Patch::kTime)
          d.mantissa += shift_us * k * pow10(d.scale);
        else
          d.mantissa += id_step * k;
        out.put(k == 0 ? all.substr(pp.pos, pp.len) : std::string_view(format_decimal(d)));
        at = pp.pos + pp.len;
      }
      out.put(all.substr(at, e.end - at));
      ++events;
      kernels += e.kernel;
    }
  }
  out.put("\n]");
  out.put(all, p.events_end, all.size(), rank_edit);  // the rest of the top level, traceName etc.
  out.close();
  std::printf("%zu %zu\n", events, kernels);
  return 0;
}
