#include "analysis/rank_test.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tracedoc {

namespace {

// Past this many coefficient updates (m^2 * n for samples of m <= n values) the exact distribution
// costs more than it is worth: the normal approximation is used instead (rank_test.h).
constexpr double kExactWork = 5e6;

// P(U >= u) under the null hypothesis for samples of m and n values without ties. The counts of U
// are the coefficients of the Gaussian binomial [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) /
// (1 - q^i): m multiplications and exact divisions of a polynomial of degree m*n. After step i the
// polynomial is [n+i choose i]_q, with coefficients at most C(n+i, i), which fits 128 bits under the
// kExactWork limit.
long double exact_upper_tail(size_t m, size_t n, size_t u) {
  const size_t degree = m * n;
  std::vector<__int128> c(degree + 1, 0);
  c[0] = 1;
  size_t top = 0;  // current degree
  for (size_t i = 1; i <= m; ++i) {
    const size_t shift = n + i;
    top += n;  // the degree grows by n + i, then shrinks by i
    for (size_t k = std::min(degree, top + i); k >= shift; --k) c[k] -= c[k - shift];
    for (size_t k = i; k <= top; ++k) c[k] += c[k - i];
    for (size_t k = top + 1; k <= std::min(degree, top + i); ++k) c[k] = 0;
  }
  __int128 tail = 0, all = 0;
  for (size_t k = 0; k <= degree; ++k) {
    all += c[k];
    if (k >= u) tail += c[k];
  }
  return static_cast<long double>(tail) / static_cast<long double>(all);
}

}  // namespace

RankTest mann_whitney_u(std::span<const int64_t> x, std::span<const int64_t> y) {
  RankTest r;
  const size_t n1 = x.size(), n2 = y.size();
  if (n1 == 0 || n2 == 0) return r;
  // Ranks of the pooled sample (1-based, ties get their mean rank); only x's rank sum is needed.
  struct Value {
    int64_t v;
    bool first;
  };
  std::vector<Value> pooled;
  pooled.reserve(n1 + n2);
  for (int64_t v : x) pooled.push_back({v, true});
  for (int64_t v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const Value& a, const Value& b) { return a.v < b.v; });
  const double n = static_cast<double>(n1 + n2);
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    size_t in_x = 0;
    while (j < pooled.size() && pooled[j].v == pooled[i].v) in_x += pooled[j++].first ? 1 : 0;
    const double t = static_cast<double>(j - i);
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    rank_sum_x += mean_rank * static_cast<double>(in_x);
    if (j - i > 1) ties = true, tie_term += t * t * t - t;
    i = j;
  }
  const double d1 = static_cast<double>(n1), d2 = static_cast<double>(n2);
  r.u1 = rank_sum_x - d1 * (d1 + 1) / 2.0;
  const double u = std::max(r.u1, d1 * d2 - r.u1);
  const size_t m = std::min(n1, n2), big = std::max(n1, n2);
  if (m <= 8 && !ties && static_cast<double>(m) * static_cast<double>(m) * static_cast<double>(big) <= kExactWork) {
    r.exact = true;
    const long double tail = exact_upper_tail(m, big, static_cast<size_t>(u));  // u is whole without ties
    r.p_value = static_cast<double>(std::min<long double>(1.0L, 2.0L * tail));
    return r;
  }
  const double sigma = std::sqrt(d1 * d2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))));
  if (!(sigma > 0)) return r;  // every value the same: no evidence of a difference
  const double z = (u - d1 * d2 / 2.0 - 0.5) / sigma;
  r.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));  // 2 * (1 - Phi(z))
  return r;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> q(m, 1.0);
  double running = 1.0;
  for (size_t k = m; k-- > 0;) {
    const size_t i = order[k];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(k + 1));
    q[i] = std::min(1.0, running);
  }
  return q;
}

}  // namespace tracedoc
