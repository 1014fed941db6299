// Significance of a change between two samples of durations (`tracedoc diff`): the Mann-Whitney U
// (Wilcoxon rank-sum) test, two-sided, and the Benjamini-Hochberg adjustment for testing many
// kernels / operators / ranges at once.
//
// Why a rank test: kernel and step durations are skewed and heavy-tailed (a few slow outliers per
// thousand), so a t-test on means is dominated by the outliers; the rank test asks only whether one
// sample tends to be larger than the other and needs no distribution.
//
// The p-value follows SciPy's `scipy.stats.mannwhitneyu(x, y, alternative="two-sided")` (method
// "auto", use_continuity=True), so that a user can check a number with a one-liner:
//  * exact: when either sample holds at most 8 values and no value occurs in both or twice (no ties),
//    p = 2 * P(U >= max(U1, U2)) under the null distribution of U (all orderings equally likely),
//    capped at 1;
//  * otherwise the normal approximation: z = (max(U1, U2) - n1*n2/2 - 0.5) / sigma, sigma with the
//    tie correction sqrt(n1*n2/12 * ((n+1) - sum(t^3 - t) / (n(n-1)))), p = 2 * (1 - Phi(z)), capped
//    at 1; p = 1 when every value is the same (sigma 0).
// One exception to SciPy: the exact distribution is only computed while m^2 * n <= 5,000,000 (m <= n
// the sample sizes: its cost, and its counts must fit 128-bit integers); past that the normal
// approximation is used, which at such sizes agrees with the exact value to many digits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tracedoc {

struct RankTest {
  double u1 = 0;       // U of the first sample: pairs (x, y) with x > y, ties counted 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact null distribution (else the normal approximation)
};

// Samples need not be sorted. Either sample empty: p 1, U 0.
RankTest mann_whitney_u(std::span<const int64_t> x, std::span<const int64_t> y);

// Benjamini-Hochberg adjusted p-values (q-values), in the order of `p`: q_i = min over the p-values
// p_(j) >= p_i of p_(j) * m / rank(j), capped at 1. Controls the expected share of false
// discoveries among the changes reported at q < alpha.
std::vector<double> benjamini_hochberg(std::span<const double> p);

}  // namespace tracedoc
