// Summary statistics with the exact semantics of the SQLite aggregates that `nsys stats` uses
// (nsys ships SQLite with the extension-functions median / lower_quartile / upper_quartile / stdev),
// so that tracedoc's numbers equal nsys's bit for bit; and the one median and percentile every
// other figure of tracedoc uses (step times, gaps, skews, the check's percentiles).
//
// The convention. The median is the middle value of an odd count and the mean of the two middle
// values of an even count: nsys's median() (the mean of the middle distinct value or values comes
// to the same), pandas' and numpy's. A percentile p interpolates linearly between the two closest
// ranks, at (n - 1) * p / 100 (numpy's and pandas' default, HTA's), so p50 is the median. A median
// or percentile of nanoseconds given as whole nanoseconds rounds half a nanosecond up.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tracedoc {

struct SummaryStats {
  int64_t count = 0;
  int64_t total = 0;
  int64_t min = 0;
  int64_t max = 0;
  double avg = 0;     // SQLite avg(): floating sum / count
  double median = 0;  // extension median(): mean of the middle distinct value(s)
  double q1 = 0, q3 = 0;
  double stdev = 0;  // sample standard deviation (Welford, input order); 0 for one value
};

// Welford accumulator in SQLite's extension-functions order of operations.
struct StdevAccumulator {
  int64_t n = 0;
  double mean = 0, m2 = 0;
  void add(double x) {
    ++n;
    double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
  }
  double stdev() const;
};

// `values` in the order the rows were read (stdev depends on it); they are sorted afterwards.
SummaryStats summarize(std::span<int64_t> values);
inline SummaryStats summarize(std::vector<int64_t>& values) { return summarize(std::span<int64_t>(values)); }

// Percentile-like selection of the extension functions: `fraction` 0.5 median, 0.25 / 0.75 quartiles.
// `sorted` must be ascending.
double nsys_quantile(std::span<const int64_t> sorted, double fraction);

// The linear-interpolation quantile (fraction 0..1) of ascending `sorted`; 0 when empty.
double quantile_of_sorted(std::span<const int64_t> sorted, double fraction);

// The median of `values` (reordered); 0 when empty.
double median(std::span<int64_t> values);
double median(std::span<double> values);
// The median of nanoseconds, rounded to whole nanoseconds (half up); 0 when empty.
int64_t median_ns(std::vector<int64_t> values);
// The `pct` percentile (0..100) of nanoseconds, rounded as median_ns; 0 when empty.
int64_t percentile_ns(std::vector<int64_t> values, double pct);

// The time-weighted quantile of sampled values (GPU metrics: each value holds for its weight in ns):
// the smallest value whose cumulative weight, values ascending, reaches `fraction` (0..1) of the
// total; no interpolation, since a sampled level is either held or not. `value_weight` is sorted
// in place; 0 when empty or weightless.
int64_t weighted_quantile(std::span<std::pair<int64_t, int64_t>> value_weight, double fraction);

// SQLite's round(x, digits) (SQLite 3.42 printf-based rounding: half away from zero, with its
// small upward bias), so that .x5 cases round as nsys rounds them.
double sqlite_round(double x, int digits);

}  // namespace tracedoc
