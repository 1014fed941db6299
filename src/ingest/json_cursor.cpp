#include "ingest/json_cursor.h"

#include <charconv>
#include <cstring>
#include <cstdlib>

namespace tracedoc::json {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(std::string_view s, size_t at, uint32_t* out) {
  if (at + 4 > s.size()) return false;
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) {
    int h = hex_value(s[at + i]);
    if (h < 0) return false;
    v = (v << 4) | static_cast<uint32_t>(h);
  }
  *out = v;
  return true;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

std::string unescape(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c != '\\' || i + 1 >= raw.size()) {
      out += c;
      continue;
    }
    const char e = raw[++i];
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!read_hex4(raw, i + 1, &cp)) {
          out += "\\u";
          break;
        }
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (i + 2 < raw.size() && raw[i + 1] == '\\' && raw[i + 2] == 'u' && read_hex4(raw, i + 3, &low) &&
              low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            i += 6;
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        append_utf8(out, cp);
        break;
      }
      default: out += e; break;  // \" \\ \/ and, leniently, anything else
    }
  }
  return out;
}

bool parse_int64(std::string_view text, int64_t* out) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  const char* first = text.data();
  const char* last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

size_t UnitEnd::feed(const char* bytes, size_t n) {
  // The next quote of this piece, found once and kept while the scan is before it, so that a string
  // of backslashes costs one pass, not one search to its end per backslash.
  const char* quote = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (in_string_) {
      if (escape_) {
        escape_ = false;  // the escaped character, whatever it is
        continue;
      }
      if (!quote || quote < bytes + i) {
        quote = static_cast<const char*>(std::memchr(bytes + i, '"', n - i));
        if (!quote) quote = bytes + n;
      }
      const char* backslash =
          static_cast<const char*>(std::memchr(bytes + i, '\\', static_cast<size_t>(quote - bytes) - i));
      if (backslash) {
        i = static_cast<size_t>(backslash - bytes);
        escape_ = true;
        continue;
      }
      if (quote == bytes + n) return npos;  // the string goes on in the next piece
      i = static_cast<size_t>(quote - bytes);
      in_string_ = false;
      continue;
    }
    switch (bytes[i]) {
      case '"': in_string_ = true; break;
      case '{':
      case '[': ++depth_; break;
      case '}':
      case ']':
        if (depth_ == 0) return i;  // the bracket that closes the enclosing array or object
        if (--depth_ == 0) return i + 1;
        break;
      case ',':
        if (depth_ == 0) return i;
        break;
      default: break;
    }
  }
  return npos;
}

bool parse_micros_as_ns(std::string_view text, int64_t* out) {
  // sign digits [. digits] [e|E [sign] digits], gathered into an integer mantissa and a decimal
  // exponent; value in ns = mantissa * 10^(exponent + 3).
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  unsigned __int128 mantissa = 0;
  int exponent = 0;
  bool any = false;
  constexpr unsigned __int128 kLimit = static_cast<unsigned __int128>(1) << 100;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    any = true;
    if (mantissa < kLimit)
      mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
    else
      ++exponent;  // digits beyond 30 significant ones only scale
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      any = true;
      if (mantissa < kLimit) {
        mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
        --exponent;
      }
    }
  }
  if (!any) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    int e = 0;
    bool exp_any = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      exp_any = true;
      if (e < 10000) e = e * 10 + (text[i] - '0');
    }
    if (!exp_any) return false;
    exponent += exp_negative ? -e : e;
  }
  if (i != text.size()) return false;
  exponent += 3;  // µs -> ns
  if (mantissa == 0) {
    *out = 0;
    return true;
  }
  while (exponent > 0) {
    if (mantissa > (static_cast<unsigned __int128>(1) << 64)) return false;
    mantissa *= 10;
    --exponent;
  }
  if (exponent < 0) {
    if (exponent < -40) {
      mantissa = 0;
    } else {
      unsigned __int128 divisor = 1;
      for (int k = 0; k < -exponent; ++k) divisor *= 10;
      const unsigned __int128 q = mantissa / divisor, r = mantissa % divisor;
      mantissa = q + (r * 2 >= divisor ? 1 : 0);  // half away from zero
    }
  }
  if (mantissa > static_cast<unsigned __int128>(INT64_MAX)) return false;
  *out = negative ? -static_cast<int64_t>(mantissa) : static_cast<int64_t>(mantissa);
  return true;
}

bool parse_double(std::string_view text, double* out) {
  if (text.empty()) return false;
  const char* first = text.data();
  const char* last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, *out);
  return ec == std::errc() && ptr == last;
}

std::string_view compact(std::string_view text, std::string& out) {
  if (out.size() < 2 * text.size()) out.resize(2 * text.size());  // every ',' may become ", "
  char* o = out.data();
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      *o++ = c;
      if (c == '\\' && i + 1 < text.size())
        *o++ = text[++i];
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      *o++ = c;
    } else if (c == ',') {
      *o++ = ',';
      *o++ = ' ';
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      *o++ = c;
    }
  }
  return {out.data(), static_cast<size_t>(o - out.data())};
}

std::string compact(std::string_view text) {
  std::string out;
  return std::string(compact(text, out));
}

}  // namespace tracedoc::json
