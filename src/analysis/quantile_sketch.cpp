#include "analysis/quantile_sketch.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "analysis/checked_math.h"
#include "analysis/statistics.h"

namespace tracedoc {

namespace {
constexpr uint32_t kMinCapacity = 8;  // below this the compactions would cost more rank error than they save
constexpr size_t kMaxLevels = 62;     // a value of level h stands for 2^h values: int64 counts
}  // namespace

QuantileSketch::QuantileSketch(uint32_t capacity) : capacity_(capacity ? std::max(capacity, kMinCapacity) : 0) {}

void QuantileSketch::add(int64_t value) {
  if (count_ == 0) min_ = max_ = value;
  min_ = std::min(min_, value), max_ = std::max(max_, value);
  ++count_;
  if (levels_.empty()) levels_.emplace_back();
  levels_[0].push_back(value);
  compact_overflowing(0);
}

void QuantileSketch::merge(const QuantileSketch& other) {
  if (other.empty()) return;
  if (empty()) {
    min_ = other.min_, max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_), max_ = std::max(max_, other.max_);
  }
  count_ = sat_add(count_, other.count_);
  rank_error_ = sat_add(rank_error_, other.rank_error_);
  if (levels_.size() < other.levels_.size()) levels_.resize(other.levels_.size());
  for (size_t h = 0; h < other.levels_.size(); ++h)
    levels_[h].insert(levels_[h].end(), other.levels_[h].begin(), other.levels_[h].end());
  compact_overflowing(0);
}

void QuantileSketch::compact_overflowing(size_t from_level) {
  if (capacity_ == 0) return;
  for (size_t h = from_level; h < levels_.size(); ++h) {
    if (levels_[h].size() > capacity_ && h + 1 < kMaxLevels) compact(h);
  }
}

// Every other value of the sorted level moves up (doubling its weight); an odd one out stays. For
// any x, the weighted count of values <= x moves by at most one value of this level: 2^h.
void QuantileSketch::compact(size_t level) {
  std::vector<int64_t> values = std::move(levels_[level]);
  levels_[level].clear();
  std::sort(values.begin(), values.end());
  if (values.size() % 2) {
    levels_[level].push_back(values.back());
    values.pop_back();
  }
  if (level + 1 == levels_.size()) levels_.emplace_back();
  std::vector<int64_t>& up = levels_[level + 1];
  for (size_t i = compactions_ % 2; i < values.size(); i += 2) up.push_back(values[i]);
  ++compactions_;
  rank_error_ += int64_t{1} << level;
}

size_t QuantileSketch::retained() const {
  size_t n = 0;
  for (const std::vector<int64_t>& level : levels_) n += level.size();
  return n;
}

int64_t QuantileSketch::quantile_ns(double fraction) const {
  if (empty()) return 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  if (retained() == levels_[0].size())  // every value is held once: exact
    return percentile_ns(levels_[0], fraction * 100.0);
  std::vector<std::pair<int64_t, int64_t>> weighted;  // (value, how many values it stands for)
  weighted.reserve(retained());
  for (size_t h = 0; h < levels_.size(); ++h) {
    for (int64_t v : levels_[h]) weighted.emplace_back(v, int64_t{1} << h);
  }
  std::sort(weighted.begin(), weighted.end());
  // The first value whose running weight passes the target rank (0-based).
  const auto target = static_cast<int64_t>(std::floor(fraction * static_cast<double>(count_ - 1)));
  int64_t below = 0;
  for (const auto& [value, weight] : weighted) {
    below += weight;
    if (below > target) return value;
  }
  return weighted.back().first;
}

std::vector<std::vector<int64_t>> QuantileSketch::sorted_levels() const {
  std::vector<std::vector<int64_t>> out = levels_;
  for (std::vector<int64_t>& level : out) std::sort(level.begin(), level.end());
  return out;
}

bool QuantileSketch::consistent() const {
  if (levels_.size() > kMaxLevels || count_ < 0 || rank_error_ < 0) return false;
  if (capacity_ != 0 && capacity_ < kMinCapacity) return false;
  int64_t weight = 0;
  for (size_t h = 0; h < levels_.size(); ++h) {
    const auto n = static_cast<int64_t>(levels_[h].size());
    if (n > (INT64_MAX - weight) >> h) return false;
    weight += n << h;
  }
  return weight == count_ && (count_ == 0 || min_ <= max_);
}

}  // namespace tracedoc
