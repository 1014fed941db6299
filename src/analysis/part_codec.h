// Parts as bytes: what a worker that read one rank file sends to the process that merges
// (tracedoc.distributed, over Dask): the summary's parts (analysis/summary.h), the budget's
// (budget/measures.h), the diagnosis's (diagnose/parts.h), the diff's (compare/diff_parts.h).
// Little-endian 64-bit words, doubles by their bits (the merge must see exactly the values the
// worker computed), lists of int64 as varints of their zigzagged differences, strings and lists
// length-prefixed, after a 4-byte magic and a version. A part's fields are listed once, in a
// `fields(f, part)` overload beside its type's codec (found by argument-dependent lookup), for both
// directions; decoding checks every length against the bytes left, so bytes that are not a part
// are refused, never read past their end.
#pragma once

#include <fmt/format.h>

#include <array>
#include <map>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "analysis/cross_rank.h"
#include "analysis/intervals.h"
#include "analysis/offender.h"
#include "analysis/quantile_sketch.h"
#include "analysis/summary.h"
#include "common/status.h"

namespace tracedoc::part_codec {

class Writer {
 public:
  std::string bytes;
  template <typename T>
  void operator()(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      (*this)(static_cast<uint64_t>(v.size()));
      bytes.append(v);
    } else if constexpr (std::is_same_v<T, double>) {
      (*this)(std::bit_cast<uint64_t>(v));
    } else if constexpr (std::is_enum_v<T>) {
      (*this)(static_cast<uint64_t>(v));
    } else if constexpr (std::is_integral_v<T>) {
      auto u = static_cast<uint64_t>(v);
      for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
    } else {
      fields(*this, const_cast<T&>(v));
    }
  }
  template <typename T>
  void operator()(const std::vector<T>& v) {
    (*this)(static_cast<uint64_t>(v.size()));
    for (const T& x : v) (*this)(x);
  }
  template <typename T, size_t N>
  void operator()(const std::array<T, N>& v) {
    for (const T& x : v) (*this)(x);
  }
  // Lists of 64-bit integers (durations, times) as the varints of their zigzagged differences:
  // a sorted list of durations takes a byte or two a value rather than eight.
  void operator()(const std::vector<int64_t>& v) {
    (*this)(static_cast<uint64_t>(v.size()));
    uint64_t previous = 0;
    for (int64_t x : v) {
      const uint64_t u = static_cast<uint64_t>(x), delta = u - previous;  // wraps: exact both ways
      previous = u;
      uint64_t zigzag = (delta << 1) ^ (static_cast<int64_t>(delta) < 0 ? ~uint64_t{0} : 0);
      while (zigzag >= 0x80) {
        bytes.push_back(static_cast<char>((zigzag & 0x7F) | 0x80));
        zigzag >>= 7;
      }
      bytes.push_back(static_cast<char>(zigzag));
    }
  }
  template <typename K, typename V, typename C>
  void operator()(const std::map<K, V, C>& m) {
    (*this)(static_cast<uint64_t>(m.size()));
    for (const auto& [key, value] : m) (*this)(key), (*this)(value);
  }
};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool failed = false;
  size_t left() const { return rest_.size(); }

  template <typename T>
  void operator()(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      const uint64_t n = count(1);
      if (failed) return;
      v.assign(rest_.substr(0, n));
      rest_.remove_prefix(n);
    } else if constexpr (std::is_same_v<T, double>) {
      v = std::bit_cast<double>(word());
    } else if constexpr (std::is_enum_v<T>) {
      v = static_cast<T>(word());
    } else if constexpr (std::is_same_v<T, bool>) {
      v = word() != 0;
    } else if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(word());
    } else {
      fields(*this, v);
    }
  }
  template <typename T>
  void operator()(std::vector<T>& v) {
    const uint64_t n = count(8);  // every element takes at least 8 bytes
    if (failed) return;
    v.resize(n);
    for (T& x : v) (*this)(x);
  }
  template <typename T, size_t N>
  void operator()(std::array<T, N>& v) {
    for (T& x : v) (*this)(x);
  }
  void operator()(std::vector<int64_t>& v) {
    const uint64_t n = count(1);  // every value takes at least a byte
    if (failed) return;
    v.resize(n);
    uint64_t previous = 0;
    for (int64_t& x : v) {
      uint64_t zigzag = 0;
      for (int shift = 0;; shift += 7) {
        if (rest_.empty() || shift > 63) {
          failed = true;
          return;
        }
        const auto byte = static_cast<unsigned char>(rest_.front());
        rest_.remove_prefix(1);
        zigzag |= static_cast<uint64_t>(byte & 0x7F) << shift;
        if (!(byte & 0x80)) break;
      }
      previous += (zigzag >> 1) ^ (~(zigzag & 1) + 1);
      x = static_cast<int64_t>(previous);
    }
  }
  template <typename K, typename V, typename C>
  void operator()(std::map<K, V, C>& m) {
    const uint64_t n = count(16);  // a key and a value, at least 8 bytes each
    for (uint64_t i = 0; i < n && !failed; ++i) {
      K key{};
      V value{};
      (*this)(key), (*this)(value);
      m.emplace(std::move(key), std::move(value));
    }
  }

 private:
  uint64_t word() {
    if (rest_.size() < 8) {
      failed = true;
      return 0;
    }
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<uint64_t>(static_cast<unsigned char>(rest_[i])) << (8 * i);
    rest_.remove_prefix(8);
    return u;
  }
  // A length, checked against the bytes left (each item needs at least `item_bytes`).
  uint64_t count(uint64_t item_bytes) {
    const uint64_t n = word();
    if (failed || n > rest_.size() / item_bytes) failed = true;
    return failed ? 0 : n;
  }
  std::string_view rest_;
};

// What tells one kind of part from another: its magic, its version, its name in messages.
struct Format {
  std::string_view magic;  // 4 bytes
  uint32_t version = 1;
  std::string_view what;  // "summary part"
};

template <typename Part>
std::string encode(const Part& part, const Format& format) {
  Writer w;
  w.bytes.append(format.magic);
  w(format.version);
  w(part);
  return std::move(w.bytes);
}

template <typename Part>
Result<Part> decode(std::string_view bytes, const Format& format) {
  const std::string_view magic = format.magic;
  if (bytes.size() < magic.size() || bytes.substr(0, magic.size()) != magic)
    return BadInput(fmt::format("not a tracedoc {}", format.what));
  Reader r(bytes.substr(magic.size()));
  uint32_t found = 0;
  r(found);
  if (r.failed || found != format.version)
    return BadInput(
        fmt::format("{} of version {}, this tracedoc reads version {}", format.what, found, format.version));
  Part part;
  r(part);
  if (r.failed || r.left() != 0) return BadInput(fmt::format("{} cut short or corrupt", format.what));
  return part;
}

}  // namespace tracedoc::part_codec

namespace tracedoc {
template <typename F>
void fields(F& f, NamedTotal& t) {
  f(t.name), f(t.count), f(t.total_ns), f(t.durations);
}
template <typename F>
void fields(F& f, Offender& o) {
  f(o.name), f(o.count), f(o.total_ns), f(o.detail);
}
template <typename F>
void fields(F& f, Interval& i) {
  f(i.start), f(i.end);
}
}  // namespace tracedoc
