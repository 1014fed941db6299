// Integer arithmetic on values read from trace files, without undefined behaviour on any input.
//
// Why: times, sizes and ids come from files that may be damaged or hostile. A fuzzed export holds
// INT64_MIN (the readers' NULL marker) as a start, ends before starts, byte counts near 2^63; a plain
// `end - start` or a running total then overflows int64, which is undefined behaviour in C++ (and a
// finding of the fuzzers and the sanitizer build). Real traces never come near the int64 range
// (2^63 ns is 292 years, 2^63 bytes 8 EiB), so saturating at the ends of the range changes no real
// result: it only gives damaged input a defined, visibly absurd answer.
//
// Where nsys computes a value in SQL, SQLite continues an overflowing integer expression in floating
// point; the reports that mirror such an expression cell for cell use sql_* below instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "analysis/result.h"
#include "model/columns.h"

namespace tracedoc {

// a + b, clamped to [INT64_MIN, INT64_MAX].
inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

// a - b, clamped. Durations are sat_sub(end, start).
inline int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

// How long a row from `start` to `end` lasted, a row without an end (kNoTime) lasting until
// `open_end`: nsys's rule for NVTX ranges never closed (they end at the latest timestamp).
inline int64_t duration_until(TimeNs start, TimeNs end, TimeNs open_end) {
  return sat_sub(end == kNoTime ? open_end : end, start);
}

// a * b, clamped.
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  return r;
}

// x rounded to the nearest integer, or nullopt when it is not a number or lies past the int64 range
// (where llround and a cast are undefined): a value read from a file may be anything.
inline std::optional<int64_t> rounded_int64(double x) {
  constexpr double kRange = 9223372036854775808.0;  // 2^63, exact as a double
  if (!(x > -kRange && x < kRange)) return std::nullopt;
  return std::llround(x);
}

// SQLite's `a - b` as a cell: the integer, or a real when it leaves the int64 range.
inline Cell sql_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return Cell::real(static_cast<double>(a) - static_cast<double>(b));
  return Cell::integer(r);
}

// SQLite's `a - b` where the result goes on as a double: exact when it fits int64 (converted once,
// as SQLite converts it), else the difference of the two doubles, as SQLite continues it.
inline double sql_sub_real(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return static_cast<double>(a) - static_cast<double>(b);
  return static_cast<double>(r);
}

// SQLite's `a * b` as a cell, likewise.
inline Cell sql_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return Cell::real(static_cast<double>(a) * static_cast<double>(b));
  return Cell::integer(r);
}

}  // namespace tracedoc
