// A mergeable summary of many int64 values (durations) that answers quantiles with a known rank
// error, so that a job's ranks, read on different machines, can send the merging process a bounded
// number of values per kernel rather than every instance.
//
// How: values of level h each stand for 2^h values. When a level holds more than `capacity` values,
// it is sorted and every other value moves up a level (the even or the odd positions, alternating),
// an odd one out staying behind. For any value x, the number of values <= x that the sketch counts
// changes by at most 2^h in such a compaction, so the sketch adds 2^h to its rank error, the bound
// every quantile it answers is held to (rank_error()). With capacity k and n values that comes to
// about n * log2(n / k) / k: 0.4% of the ranks for k = 2048 and a million values. Merging adds the
// two bounds and compacts what overflows. Nothing is random, so a merge in the same order gives the
// same sketch on every machine and for every thread count.
//
// Capacity 0 keeps every value: the sketch is exact (rank error 0) and its quantiles follow the
// project's one convention (analysis/statistics.h), equal to percentile_ns over all the values.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tracedoc {

class QuantileSketch {
 public:
  QuantileSketch() = default;  // exact
  explicit QuantileSketch(uint32_t capacity);

  void add(int64_t value);
  // Adds other's values; this sketch's capacity applies to the result.
  void merge(const QuantileSketch& other);

  int64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  int64_t min() const { return min_; }  // exact, whatever the capacity; 0 when empty
  int64_t max() const { return max_; }
  uint32_t capacity() const { return capacity_; }
  // How far off in rank a quantile may be (0 when exact): for the value v that quantile_ns(f)
  // answers and the target rank t = floor(f * (count - 1)) among all values sorted, at most
  // t + 1 + rank_error() values are below v and at least t + 1 - rank_error() are at most v (the
  // 1: an exact quantile may fall between the values at t and t + 1).
  int64_t rank_error() const { return rank_error_; }
  bool exact() const { return rank_error_ == 0; }
  size_t retained() const;  // values held

  // The value at `fraction` (0..1) of the distribution: 0.5 the median, 0.95 the p95; 0 when empty.
  int64_t quantile_ns(double fraction) const;

  // For the part codec (analysis/part_codec.h): the fields, once for both directions. Levels are
  // written sorted (their order means nothing; sorted values difference-code to a byte or two). A
  // decoded sketch whose levels do not add up to its count, or are too many, fails the read.
  template <typename F>
  friend void fields(F& f, QuantileSketch& s) {
    f(s.capacity_), f(s.count_), f(s.min_), f(s.max_), f(s.rank_error_), f(s.compactions_);
    if constexpr (requires { f.failed; }) {  // reading
      f(s.levels_);
      if (!s.consistent()) f.failed = true;
    } else {
      f(s.sorted_levels());
    }
  }

 private:
  void compact(size_t level);
  void compact_overflowing(size_t from_level);
  std::vector<std::vector<int64_t>> sorted_levels() const;
  bool consistent() const;

  uint32_t capacity_ = 0;
  int64_t count_ = 0, min_ = 0, max_ = 0, rank_error_ = 0;
  uint64_t compactions_ = 0;                  // chooses the even or the odd positions, alternately
  std::vector<std::vector<int64_t>> levels_;  // level h: values that stand for 2^h values each
};

}  // namespace tracedoc
