// Small pieces the rule files share: GPU busy time per owner, gaps inside windows, percentages.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/cpu_threads.h"
#include "analysis/intervals.h"
#include "analysis/pytorch/gpu_work.h"
#include "common/human_units.h"
#include "diagnose/context.h"
#include "diagnose/finding.h"

namespace tracedoc::diagnose {

inline int64_t total_length(const std::vector<Interval>& v) {
  int64_t t = 0;
  for (const Interval& i : v) t = sat_add(t, i.length());
  return t;
}

// The `n` longest intervals as time ranges on `where`, longest first.
inline std::vector<TimeRange> longest_ranges(std::vector<Interval> v, size_t n, const std::string& where,
                                             const std::string& label) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return a.length() != b.length() ? a.length() > b.length() : a.start < b.start;
  });
  std::vector<TimeRange> out;
  for (size_t i = 0; i < v.size() && i < n; ++i) out.push_back({v[i].start, v[i].end, where, label});
  return out;
}

// A kernel name for a one-line list: at most 90 characters.
inline std::string clipped_name(std::string_view name) {
  std::string s(name);
  if (s.size() > 90) s = s.substr(0, 89) + "…";
  return s;
}

// The time a unit spends in kernels (copies and memsets left out).
inline int64_t kernel_time(const pytorch::GpuUnit& u) {
  int64_t total = 0;
  for (const pytorch::GpuWorkItem& it : u.items) {
    if (it.kind == pytorch::WorkKind::kKernel) total = sat_add(total, sat_sub(it.end, it.start));
  }
  return total;
}

inline double coefficient_of_variation(const std::vector<int64_t>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (int64_t x : v) mean += static_cast<double>(x);
  mean /= static_cast<double>(v.size());
  if (mean <= 0) return 0;
  double var = 0;
  for (int64_t x : v) var += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  var /= static_cast<double>(v.size() - 1);
  return std::sqrt(var) / mean;
}

// Orders offenders by time (then name and detail) and keeps the `n` largest.
inline void keep_top(std::vector<Offender>& offenders, size_t n) {
  std::stable_sort(offenders.begin(), offenders.end(), [](const Offender& a, const Offender& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return a.name != b.name ? a.name < b.name : a.detail < b.detail;
  });
  if (offenders.size() > n) offenders.resize(n);
}

// Sets a finding's savings share and severity from its rating on the time basis `basis_ns`.
inline void apply_rating(Finding& f, int64_t basis_ns) {
  // A saving is an upper bound on time the run spends, so it never exceeds the basis: a rule that
  // measures over the whole span while the basis is the steps (or a hostile trace whose times make
  // either absurd) must not print "saves up to 316 s (31423523.9%)".
  f.savings_ns = basis_ns > 0 ? std::min(f.rating.savings_ns, basis_ns) : f.rating.savings_ns;
  f.savings_share = share_of(f.savings_ns, basis_ns);
  f.severity = severity_for(f.savings_share, f.rating.warning, f.rating.critical);
}

// Fills the figures every finding shares and its severity from the savings.
inline void rate(Finding& f, int64_t basis_ns, double warning, double critical) {
  f.rating.savings_ns = f.savings_ns;
  f.rating.warning = warning;
  f.rating.critical = critical;
  apply_rating(f, basis_ns);
}
inline void rate(Finding& f, Context& ctx, double warning, double critical) {
  rate(f, ctx.basis_ns(), warning, critical);
}

// Whether a finding whose condition is a share of the time basis (its rating's gate) meets it.
inline bool meets_gate(const Finding& f, int64_t basis_ns) {
  const Rating& r = f.rating;
  if (r.gate_share == 0) return true;
  const int64_t ns = r.gate_on_savings && basis_ns > 0 ? std::min(r.gate_ns, basis_ns) : r.gate_ns;
  return share_of(ns, basis_ns) >= r.gate_share;
}

// Keeps the finding only while `ns` is at least `min_share` of the time basis (a rated finding's
// clipped savings when `on_savings`); the condition stays in its rating, for a job's basis.
inline bool gate_on_basis(Finding& f, Context& ctx, int64_t ns, double min_share, bool on_savings = false) {
  f.rating.gate_ns = on_savings ? f.rating.savings_ns : ns;
  f.rating.gate_share = min_share;
  f.rating.gate_on_savings = on_savings;
  return meets_gate(f, ctx.basis_ns());
}

}  // namespace tracedoc::diagnose
