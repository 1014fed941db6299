// The mergeable quantile sketch (src/analysis/quantile_sketch.h): exact without a capacity (equal
// to the project's one percentile), and with one, every quantile it answers within the rank error
// it reports, that error within its documented size (about n log2(n / k) / k), for values added
// one by one and for sketches merged as a job's ranks are; through the part codec unchanged;
// inconsistent bytes refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "analysis/part_codec.h"
#include "analysis/quantile_sketch.h"
#include "analysis/statistics.h"
#include "test_support.h"

namespace tracedoc {

struct SketchBox {  // a sketch as the part codec sends it
  QuantileSketch sketch;
};
template <typename F>
void fields(F& f, SketchBox& b) {
  f(b.sketch);
}

namespace {

constexpr part_codec::Format kBoxFormat{"TDQS", 1, "sketch"};

// Durations with a long tail and many repeats, in a fixed pseudo-random order (no seed to vary).
std::vector<int64_t> durations(size_t n, uint64_t salt) {
  std::vector<int64_t> out;
  out.reserve(n);
  uint64_t x = 0x9E3779B97F4A7C15ULL ^ salt;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const uint64_t r = x % 10000;
    out.push_back(static_cast<int64_t>(r < 9000 ? 1000 + r % 500 : 5000 + (r * r) % 1000000));
  }
  return out;
}

// The guarantee of QuantileSketch::rank_error, checked against every value sorted.
void expect_within_rank_error(const QuantileSketch& s, std::vector<int64_t> all) {
  std::sort(all.begin(), all.end());
  ASSERT_EQ(s.count(), static_cast<int64_t>(all.size()));
  EXPECT_EQ(s.min(), all.front());
  EXPECT_EQ(s.max(), all.back());
  for (int pct = 0; pct <= 100; ++pct) {
    const double f = pct / 100.0;
    const int64_t v = s.quantile_ns(f);
    const auto target = static_cast<int64_t>(std::floor(f * static_cast<double>(all.size() - 1)));
    const auto below = std::lower_bound(all.begin(), all.end(), v) - all.begin();
    const auto at_most = std::upper_bound(all.begin(), all.end(), v) - all.begin();
    EXPECT_LE(below, target + 1 + s.rank_error()) << "quantile " << f;
    EXPECT_GE(at_most, target + 1 - s.rank_error()) << "quantile " << f;
  }
}

TRACEDOC_TEST_LABELS(QuantileSketch, unit sanitize);

TEST(QuantileSketch, WithoutCapacityItIsTheProjectsPercentile) {
  const std::vector<int64_t> values = durations(10001, 1);
  QuantileSketch s;
  for (int64_t v : values) s.add(v);
  EXPECT_TRUE(s.exact());
  EXPECT_EQ(s.retained(), values.size());
  EXPECT_EQ(s.quantile_ns(0.5), median_ns(values));
  for (double pct : {0.0, 1.0, 25.0, 95.0, 99.9, 100.0})
    EXPECT_EQ(s.quantile_ns(pct / 100), percentile_ns(values, pct));
  // An even count: the median is the mean of the middle two, half a nanosecond up.
  QuantileSketch even;
  for (int64_t v : {10, 20, 31, 40}) even.add(v);
  EXPECT_EQ(even.quantile_ns(0.5), 26);
  EXPECT_EQ(QuantileSketch().quantile_ns(0.5), 0);
  // Up to its capacity a sketch with one is exact too.
  QuantileSketch small(64);
  for (int64_t v : {5, 1, 3}) small.add(v);
  EXPECT_TRUE(small.exact());
  EXPECT_EQ(small.quantile_ns(0.5), 3);
}

TEST(QuantileSketch, ACompactedSketchStaysWithinItsRankError) {
  for (uint32_t capacity : {8u, 64u, 2048u}) {
    SCOPED_TRACE(capacity);
    const std::vector<int64_t> values = durations(300000, capacity);
    QuantileSketch s(capacity);
    for (int64_t v : values) s.add(v);
    EXPECT_FALSE(s.exact());
    expect_within_rank_error(s, values);
    // The documented size of the bound: n log2(n / k) / k, and the values held: k per level.
    const double n = static_cast<double>(values.size()), k = capacity;
    EXPECT_LE(static_cast<double>(s.rank_error()), n * std::log2(n / k) / k);
    EXPECT_LE(s.retained(), static_cast<size_t>(k * (std::log2(n / k) + 2)));
  }
  // k = 2048 over 300,000 values: the bound is under 0.4% of the ranks.
  QuantileSketch s(2048);
  for (int64_t v : durations(300000, 7)) s.add(v);
  EXPECT_LT(static_cast<double>(s.rank_error()) / 300000.0, 0.004);
}

TEST(QuantileSketch, MergedSketchesStayWithinTheSumOfTheirErrors) {
  // 64 ranks of different sizes, merged in rank order as tracedoc.distributed merges them.
  std::vector<int64_t> all;
  QuantileSketch merged(256);
  int64_t parts_error = 0;
  for (uint64_t rank = 0; rank < 64; ++rank) {
    const std::vector<int64_t> values = durations(1000 + 300 * rank, rank);
    QuantileSketch part(256);
    for (int64_t v : values) part.add(v);
    parts_error += part.rank_error();
    all.insert(all.end(), values.begin(), values.end());
    merged.merge(part);
  }
  EXPECT_GE(merged.rank_error(), parts_error);  // each part's error, and the merge's own compactions
  expect_within_rank_error(merged, all);
  EXPECT_LT(static_cast<double>(merged.rank_error()) / static_cast<double>(all.size()), 0.03);
  // Merging exact sketches keeps them exact.
  QuantileSketch a, b;
  for (int64_t v : {4, 8, 15}) a.add(v);
  for (int64_t v : {16, 23, 42}) b.add(v);
  a.merge(b);
  EXPECT_TRUE(a.exact());
  EXPECT_EQ(a.count(), 6);
  EXPECT_EQ(a.quantile_ns(0.5), 16);  // (15 + 16) / 2, half up
}

TEST(QuantileSketch, TheSameMergeGivesTheSameSketch) {
  auto build = [] {
    QuantileSketch merged(64);
    for (uint64_t rank = 0; rank < 8; ++rank) {
      QuantileSketch part(64);
      for (int64_t v : durations(5000, rank)) part.add(v);
      merged.merge(part);
    }
    return merged;
  };
  const QuantileSketch one = build(), two = build();
  for (double f : {0.0, 0.5, 0.95, 1.0}) EXPECT_EQ(one.quantile_ns(f), two.quantile_ns(f));
  EXPECT_EQ(part_codec::encode(SketchBox{one}, kBoxFormat), part_codec::encode(SketchBox{two}, kBoxFormat));
}

TEST(QuantileSketch, TheCodecCarriesItExactlyAndRefusesInconsistentBytes) {
  QuantileSketch s(32);
  for (int64_t v : durations(10000, 3)) s.add(v);
  const std::string bytes = part_codec::encode(SketchBox{s}, kBoxFormat);
  auto back = part_codec::decode<SketchBox>(bytes, kBoxFormat);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->sketch.count(), s.count());
  EXPECT_EQ(back->sketch.rank_error(), s.rank_error());
  EXPECT_EQ(back->sketch.retained(), s.retained());
  for (double f : {0.0, 0.25, 0.5, 0.95, 1.0}) EXPECT_EQ(back->sketch.quantile_ns(f), s.quantile_ns(f));
  // Its count is the second word after the magic and version: one more value than its levels hold.
  std::string wrong = bytes;
  wrong[4 + 8 + 8] = static_cast<char>(wrong[4 + 8 + 8] + 1);
  EXPECT_FALSE(part_codec::decode<SketchBox>(wrong, kBoxFormat).ok());
  for (size_t cut = 0; cut < bytes.size(); cut += 97)
    EXPECT_FALSE(part_codec::decode<SketchBox>(std::string_view(bytes).substr(0, cut), kBoxFormat).ok());
}

}  // namespace
}  // namespace tracedoc
