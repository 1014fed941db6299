// A lenient, allocation-free JSON tokenizer over one window of a streamed document.
//
// Why not a JSON library: real profiler output is not always JSON. PyTorch's exporters have written
// bare `N/A`, trailing commas, raw control characters in strings and integers above 2^63, and a
// trace can be larger than the 4 GB a single simdjson document may be. This cursor accepts all of
// those, still rejects what no tool can read (an unescaped quote, a missing delimiter) with the byte
// offset, and never builds a document: callers pull one value at a time and keep string_views into
// the window.
//
// Streaming contract: the window [begin, end) is part of the document. When a read would cross
// `end` and more input exists (`eof` false), the cursor throws NeedMore; the caller refills the
// window (keeping the bytes of the unit it was parsing) and parses that unit again. These
// exceptions never leave the reader that uses the cursor.
#pragma once

#include <emmintrin.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tracedoc::json {

// Readable bytes past `end` that the window must provide (vector loads may touch them).
inline constexpr size_t kPadding = 64;

struct NeedMore {};
struct SyntaxError {
  uint64_t offset;  // byte offset in the whole (uncompressed) document
  std::string what;
};

// Nesting deeper than this is rejected: the recursion that skips values must stay bounded.
inline constexpr int kMaxDepth = 512;

// The bytes that end a bare value (number, literal, N/A).
struct DelimiterTable {
  bool table[256] = {};
  constexpr DelimiterTable() {
    for (char c : {',', '}', ']', ' ', '\n', '\r', '\t', ':', '"', '{', '['})
      table[static_cast<unsigned char>(c)] = true;
  }
};
inline constexpr DelimiterTable kDelimiters{};

class Cursor {
 public:
  Cursor(const char* begin, const char* end, bool eof, uint64_t window_offset)
      : p(begin), end_(end), begin_(begin), eof_(eof), window_offset_(window_offset) {}

  const char* p;

  uint64_t offset_of(const char* at) const { return window_offset_ + static_cast<uint64_t>(at - begin_); }
  uint64_t offset() const { return offset_of(p); }
  bool at_end() const { return p >= end_; }
  bool eof() const { return eof_; }

  [[noreturn]] void fail(std::string what) const { throw SyntaxError{offset(), std::move(what)}; }
  [[noreturn]] void out_of_input() const {
    if (!eof_) throw NeedMore{};
    throw SyntaxError{offset(), "unexpected end of file (truncated JSON)"};
  }

  // Skips whitespace and returns the next character without consuming it.
  __attribute__((always_inline)) char peek() {
    if (p<end_&& static_cast<unsigned char>(*p)> ' ') return *p;
    return peek_after_whitespace();
  }
  // Skips whitespace, 16 bytes at a time, up to the window's end; never asks for more input. Outside
  // strings a byte below '!' can only be whitespace (or the zero padding past end_), so "not
  // whitespace" is one unsigned comparison.
  void skip_whitespace() {
    const __m128i bang = _mm_set1_epi8('!');
    while (p < end_) {
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i visible = _mm_cmpeq_epi8(_mm_max_epu8(chunk, bang), chunk);  // chunk >= '!'
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(visible));
      if (mask == 0) {
        p += 16;
        continue;
      }
      p += __builtin_ctz(mask);
      break;
    }
    if (p > end_) p = end_;
  }
  // Skips whitespace; true when the document ends here (only valid with eof).
  bool peek_end() {
    while (p < end_ && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) ++p;
    if (p < end_) return false;
    if (!eof_) throw NeedMore{};
    return true;
  }
  void expect(char c, const char* context) {
    if (peek() != c) fail(std::string("expected '") + c + "' " + context + ", found " + describe(*p));
    ++p;
  }
  // Consumes `c` if it is next.
  bool consume(char c) {
    if (peek() != c) return false;
    ++p;
    return true;
  }

  // A string at the cursor: returns its raw contents (escapes not decoded) and sets *escaped when it
  // has any backslash. Control characters are accepted as they are.
  __attribute__((always_inline)) std::string_view string(bool* escaped = nullptr) {
    if (peek() != '"') fail("expected a string, found " + describe(*p));
    const char* start = ++p;
    bool esc = false;
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    for (;;) {
      if (p >= end_) out_of_input();
      // 16 bytes at a time: padding past end_ keeps the load in bounds; hits past end_ are ignored.
      const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      unsigned mask = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash))));
      if (mask == 0) {
        p += 16;
        continue;
      }
      p += __builtin_ctz(mask);
      if (p >= end_) out_of_input();
      if (*p == '"') break;
      esc = true;
      p += 2;  // the backslash and the escaped character (\uXXXX's hex digits are plain bytes)
    }
    std::string_view s(start, static_cast<size_t>(p - start));
    ++p;
    if (escaped) *escaped = esc;
    return s;
  }

  // A number, literal or bare word (N/A) at the cursor, as text.
  std::string_view scalar() {
    const char* start = p;
    while (p < end_ && !is_delimiter(*p)) ++p;
    if (p >= end_ && !eof_) throw NeedMore{};
    if (p == start) fail("expected a value, found " + describe(*p));
    return {start, static_cast<size_t>(p - start)};
  }

  // Skips one value of any type; returns where it started (after whitespace).
  const char* skip_value(int depth = 0) {
    const char c = peek();
    const char* start = p;
    if (c == '"') {
      string();
      return start;
    }
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth) fail("JSON nested deeper than 512 levels");
      const char close = c == '{' ? '}' : ']';
      ++p;
      for (;;) {
        if (consume(close)) return start;
        if (c == '{') {
          string();
          expect(':', "after an object key");
        }
        skip_value(depth + 1);
        if (consume(',')) continue;  // a trailing comma before `close` is accepted
        if (peek() != close) fail(std::string("expected ',' or '") + close + "' after a value, found " + describe(*p));
      }
    }
    if (c == '}' || c == ']' || c == ',' || c == ':') fail("expected a value, found " + describe(c));
    scalar();
    return start;
  }

  // After a member or element: consumes ',' (true) or sees `close` (false, not consumed).
  bool next_member(char close) {
    if (consume(',')) return true;
    if (peek() == close) return false;
    fail(std::string("expected ',' or '") + close + "' after a value, found " + describe(*p));
  }

  static std::string describe(char c) {
    if (c == '"') return "'\"'";
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
      return std::string("byte ") + buf;
    }
    return std::string("'") + c + "'";
  }

 private:
  // Pretty-printed traces indent every line.
  char peek_after_whitespace() {
    if (p + 1 < end_ && *p == ' ' && static_cast<unsigned char>(p[1]) > ' ') return *++p;  // ": value"
    skip_whitespace();
    if (p >= end_) out_of_input();
    return *p;
  }

  static bool is_delimiter(char c) { return kDelimiters.table[static_cast<unsigned char>(c)]; }

  const char* end_;
  const char* begin_;
  bool eof_;
  uint64_t window_offset_;
};

// Finds where one unit of the document ends (an event `{...}`, or a top-level `"key": value`) from
// its first byte on, fed in consecutive pieces, without keeping them: the reader skips a unit too
// large to buffer this way. feed() returns the offset in `bytes` just past the unit (before the ','
// or bracket that follows a member), or npos when the unit goes on past these bytes.
class UnitEnd {
 public:
  static constexpr size_t npos = static_cast<size_t>(-1);
  size_t feed(const char* bytes, size_t n);

 private:
  int64_t depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
};

// `text == literal` with the literal's length known at compile time, so that the comparison is a
// couple of inlined loads instead of a memcmp call (keys are compared millions of times).
template <size_t N>
inline bool is(std::string_view text, const char (&literal)[N]) {
  return text.size() == N - 1 && __builtin_memcmp(text.data(), literal, N - 1) == 0;
}

// Decodes JSON escapes (\" \\ \/ \b \f \n \r \t \uXXXX with surrogate pairs) into UTF-8. Unknown
// escapes keep the escaped character; lone surrogates become U+FFFD.
std::string unescape(std::string_view raw);

// Integer text to int64: false for non-integers, bare words and values outside int64.
bool parse_int64(std::string_view text, int64_t* out);
// Decimal text (integer, fraction, exponent) in microseconds to integer nanoseconds, exactly,
// rounding half away from zero below 1 ns. False when it is not a number or overflows int64.
bool parse_micros_as_ns(std::string_view text, int64_t* out);
// Decimal text to double (for ratios only; never for times).
bool parse_double(std::string_view text, double* out);

// JSON text re-spaced the way Python prints lists, "[[1, 512], []]", whatever the writer's layout
// (a stable key for "Input Dims" and the like).
std::string compact(std::string_view json_text);
// The same into `scratch` (grown as needed, reused between calls); the view is into it.
std::string_view compact(std::string_view json_text, std::string& scratch);

}  // namespace tracedoc::json
