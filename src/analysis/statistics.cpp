#include "analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "analysis/checked_math.h"

namespace tracedoc {

double StdevAccumulator::stdev() const { return n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0; }

double nsys_quantile(std::span<const int64_t> sorted, double fraction) {
  const int64_t cnt = static_cast<int64_t>(sorted.size());
  if (cnt == 0) return 0;
  // The extension computes pcnt as cnt/2.0, cnt/4.0 or cnt*3/4.0.
  double pcnt = fraction == 0.5 ? cnt / 2.0 : fraction == 0.25 ? cnt / 4.0 : cnt * 3 / 4.0;
  const double need_left = pcnt;
  const double need_right = static_cast<double>(cnt) - pcnt;
  int64_t below = 0;  // values strictly less than the current distinct value
  int64_t selected = 0;
  __int128 sum = 0;  // two int64 values of a damaged file may overflow int64 (the result is a double anyway)
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const int64_t c = static_cast<int64_t>(j - i);
    const int64_t at_or_below = below + c;
    const int64_t at_or_above = cnt - below;
    if (at_or_below >= need_left) {
      if (at_or_above >= need_right) {
        ++selected;
        sum += sorted[i];
      } else {
        break;
      }
    }
    below += c;
    i = j;
  }
  if (selected == 0) return 0;
  return static_cast<double>(sum) / static_cast<double>(selected);
}

namespace {

// nsys_quantile() without a full sort. The extension's rule selects the distinct values v with
// #(x <= v) >= p and #(x >= v) >= n - p (p = n/2, n/4 or 3n/4): with P = ceil(p) and
// Q = ceil(n - p) those are the values of sorted ranks P-1 and n-Q, which are equal or adjacent.
struct Ranks {
  size_t lo, hi;  // hi == lo or lo + 1
};
Ranks ranks_for(size_t n, double pcnt) {
  return {static_cast<size_t>(std::ceil(pcnt)) - 1, n - static_cast<size_t>(std::ceil(static_cast<double>(n) - pcnt))};
}
double mean_of_distinct(int64_t a, int64_t b) {
  return a == b ? static_cast<double>(a) : (static_cast<double>(a) + static_cast<double>(b)) / 2.0;
}
// Median, lower and upper quartile by three selections on shrinking ranges: the median splits the
// values, the quartiles are then selected within each half (about 2n element visits in all).
// Needs n >= 8, so that q1 ranks < median ranks < q3 ranks.
void select_quartiles(std::span<int64_t> values, SummaryStats& s) {
  const size_t n = values.size();
  auto at = [&](size_t i) { return values.begin() + static_cast<std::ptrdiff_t>(i); };
  const Ranks med = ranks_for(n, n / 2.0), q1 = ranks_for(n, n / 4.0), q3 = ranks_for(n, n * 3 / 4.0);
  std::nth_element(at(0), at(med.lo), at(n));
  const int64_t med_lo = values[med.lo];
  // Everything before med.lo is <= med_lo, everything after is >= med_lo.
  const int64_t med_hi = med.hi == med.lo ? med_lo : *std::min_element(at(med.lo + 1), at(n));
  s.median = mean_of_distinct(med_lo, med_hi);

  std::nth_element(at(0), at(q1.lo), at(med.lo));
  const int64_t q1_lo = values[q1.lo];
  // Rank q1.lo + 1 is the smallest of the rest of the lower part, or the median itself.
  const int64_t q1_hi = q1.hi == q1.lo        ? q1_lo
                        : q1.lo + 1 == med.lo ? med_lo
                                              : *std::min_element(at(q1.lo + 1), at(med.lo));
  s.q1 = mean_of_distinct(q1_lo, q1_hi);

  std::nth_element(at(med.lo + 1), at(q3.lo), at(n));
  const int64_t q3_lo = values[q3.lo];
  const int64_t q3_hi = q3.hi == q3.lo ? q3_lo : *std::min_element(at(q3.lo + 1), at(n));
  s.q3 = mean_of_distinct(q3_lo, q3_hi);
}

constexpr size_t kSortBelow = 64;  // small groups: sorting is cheaper than three selections

}  // namespace

SummaryStats summarize(std::span<int64_t> values) {
  SummaryStats s;
  s.count = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  StdevAccumulator acc;
  double fsum = 0;
  s.min = values[0];
  s.max = values[0];
  for (int64_t v : values) {
    s.total = sat_add(s.total, v);  // SQLite's sum() fails past int64; damaged files get there (checked_math.h)
    fsum += static_cast<double>(v);
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    acc.add(static_cast<double>(v));
  }
  s.avg = fsum / static_cast<double>(s.count);
  s.stdev = acc.stdev();
  if (values.size() < kSortBelow) {
    std::sort(values.begin(), values.end());
    std::span<const int64_t> sorted(values.data(), values.size());
    s.median = nsys_quantile(sorted, 0.5);
    s.q1 = nsys_quantile(sorted, 0.25);
    s.q3 = nsys_quantile(sorted, 0.75);
  } else {
    select_quartiles(values, s);
  }
  return s;
}

namespace {

// Where the linear-interpolation quantile at `part` of `whole` (0.95 of 1, or 95 of 100) of n > 0
// sorted values lies: between ranks lo and hi (equal at the ends), `frac` of the way. The rank is
// (n - 1) * part / whole, in that order, so that 95 of 100 is not first rounded to the double 0.95.
struct Between {
  size_t lo, hi;
  double frac;
};
Between between(size_t n, double part, double whole) {
  const double h = static_cast<double>(n - 1) * std::clamp(part, 0.0, whole) / whole;
  const size_t lo = static_cast<size_t>(std::floor(h));
  return {lo, std::min(lo + 1, n - 1), h - static_cast<double>(lo)};
}

// The two middle values of `values` (equal for an odd count), by selection: the lower middle, then
// the smallest of what lies above it.
template <typename T>
std::pair<T, T> middle_pair(std::span<T> values) {
  const size_t n = values.size();
  const auto lower = values.begin() + static_cast<std::ptrdiff_t>((n - 1) / 2);
  std::nth_element(values.begin(), lower, values.end());
  if (n % 2) return {*lower, *lower};
  return {*lower, *std::min_element(lower + 1, values.end())};
}

// The mean of two nanosecond values, half a nanosecond up; no overflow.
int64_t mean_ns(int64_t a, int64_t b) {
  const __int128 sum = static_cast<__int128>(a) + b;
  const __int128 half = sum >= 0 ? (sum + 1) / 2 : -((-sum) / 2);  // floor((sum + 1) / 2)
  return static_cast<int64_t>(half);
}

}  // namespace

double quantile_of_sorted(std::span<const int64_t> sorted, double fraction) {
  if (sorted.empty()) return 0;
  const Between at = between(sorted.size(), fraction, 1.0);
  const double a = static_cast<double>(sorted[at.lo]);
  return a + at.frac * (static_cast<double>(sorted[at.hi]) - a);
}

int64_t weighted_quantile(std::span<std::pair<int64_t, int64_t>> value_weight, double fraction) {
  std::sort(value_weight.begin(), value_weight.end());
  long double total = 0;
  for (const auto& [v, w] : value_weight) total += static_cast<long double>(w);
  if (total <= 0) return 0;
  const long double goal = total * static_cast<long double>(fraction);
  long double running = 0;
  for (const auto& [v, w] : value_weight) {
    running += static_cast<long double>(w);
    if (w > 0 && running >= goal) return v;
  }
  return value_weight.back().first;
}

double median(std::span<int64_t> values) {
  if (values.empty()) return 0;
  const auto [a, b] = middle_pair(values);
  return (static_cast<double>(a) + static_cast<double>(b)) / 2.0;
}

double median(std::span<double> values) {
  if (values.empty()) return 0;
  const auto [a, b] = middle_pair(values);
  return (a + b) / 2;
}

int64_t median_ns(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  const auto [a, b] = middle_pair(std::span<int64_t>(values));
  return mean_ns(a, b);
}

int64_t percentile_ns(std::vector<int64_t> values, double pct) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto [lo, hi, frac] = between(values.size(), pct, 100.0);
  if (frac == 0 || values[lo] == values[hi]) return values[lo];
  if (frac == 0.5) return mean_ns(values[lo], values[hi]);  // exact: the median of an even count
  // Between two ranks: the fraction of their (non-negative) difference, rounded half up.
  const __int128 diff = static_cast<__int128>(values[hi]) - values[lo];
  const double step = std::floor(frac * static_cast<double>(diff) + 0.5);
  return static_cast<int64_t>(values[lo] + static_cast<__int128>(step));
}

double sqlite_round(double x, int digits) {
  if (x < -4503599627370496.0 || x > 4503599627370496.0) return x;
  if (digits == 0) return static_cast<double>(static_cast<int64_t>(x + (x < 0 ? -0.5 : 0.5)));
  // SQLite formats with "%.*f" (long double arithmetic, rounder 0.5*10^-digits plus a relative
  // 3e-16 nudge) and parses the text back.
  const bool negative = x < 0;
  long double v = negative ? -static_cast<long double>(x) : static_cast<long double>(x);
  long double rounder = 0.5L;
  for (int i = 0; i < digits; ++i) rounder *= 0.1L;
  int exponent = 0;
  std::frexp(static_cast<double>(v), &exponent);
  const int ex = exponent - 1;
  if (digits + ex / 3 < 15) rounder += v * 3e-16L;
  v += rounder;
  long double scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  long double truncated = std::floor(v * scale);
  // Parse-back equivalent: the nearest double to the decimal digits.
  double result = static_cast<double>(truncated) / static_cast<double>(scale);
  return negative ? -result : result;
}

}  // namespace tracedoc
