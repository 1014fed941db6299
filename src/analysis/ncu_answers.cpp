#include "analysis/ncu_answers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "analysis/checked_math.h"

namespace tracedoc {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(double part, double whole) { return whole > 0 ? part / whole : kNaN; }
double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNaN; }

// PC sampling and the per-issue stall ratios, one row per reason.
std::vector<NcuStall> stalls(const NcuReport& report, const NcuResult& r) {
  constexpr std::string_view kSample = "smsp__pcsamp_warps_issue_stalled_";
  constexpr std::string_view kIssue = "smsp__average_warps_issue_stalled_", kIssueEnd = "_per_issue_active.ratio";
  const double samples = report.number(r, "smsp__pcsamp_sample_count");
  std::vector<NcuStall> out;
  auto row = [&](std::string_view reason) -> NcuStall& {
    for (NcuStall& s : out) {
      if (s.reason == reason) return s;
    }
    return out.emplace_back(NcuStall{std::string(reason), kNaN, kNaN});
  };
  for (const NcuMetric& m : r.metrics) {
    if (!m.value.numeric()) continue;
    const std::string_view name = report.metric_names[m.name];
    if (name.starts_with(kSample) && !name.ends_with("_not_issued")) {
      row(name.substr(kSample.size())).sample_pct = pct(m.value.number(), samples);
    } else if (name.starts_with(kIssue) && name.ends_with(kIssueEnd)) {
      const std::string_view reason = name.substr(kIssue.size(), name.size() - kIssue.size() - kIssueEnd.size());
      row(reason).per_issue = m.value.number();
    }
  }
  // "selected" is the warp that issued: not a stall.
  std::erase_if(out, [](const NcuStall& s) { return s.reason == "selected"; });
  // Ranked as ncu's Warp State Statistics ranks them, by warps stalled per issued instruction; by
  // the PC samples' share where only sampling was collected.
  auto issue = [](const NcuStall& s) { return std::isnan(s.per_issue) ? -1.0 : s.per_issue; };
  auto sampled = [](const NcuStall& s) { return std::isnan(s.sample_pct) ? -1.0 : s.sample_pct; };
  std::stable_sort(out.begin(), out.end(), [&](const NcuStall& a, const NcuStall& b) {
    if (issue(a) != issue(b)) return issue(a) > issue(b);
    if (sampled(a) != sampled(b)) return sampled(a) > sampled(b);
    return a.reason < b.reason;
  });
  return out;
}

std::vector<std::string> occupancy_limiters(const NcuReport& report, const NcuResult& r) {
  std::vector<std::pair<double, std::string>> limits;
  for (const char* what : {"registers", "shared_mem", "warps", "blocks", "barriers"}) {
    const double v = report.number(r, std::string("launch__occupancy_limit_") + what);
    if (!std::isnan(v)) limits.emplace_back(v, what);
  }
  std::vector<std::string> out;
  if (limits.empty()) return out;
  const double least = std::min_element(limits.begin(), limits.end())->first;
  for (const auto& [v, what] : limits) {
    if (v == least) out.push_back(what);
  }
  return out;
}

}  // namespace

NcuAnswers ncu_answers(const NcuReport& report, const NcuResult& r) {
  auto n = [&](std::string_view name) { return report.number(r, name); };
  NcuAnswers a;
  a.duration_ns = n("gpu__time_duration.sum");
  // 0 where absent (or unusable: the readers drop such values, and a sum of two may still overflow).
  auto count = [&](std::string_view name) { return rounded_int64(n(name)).value_or(0); };
  a.registers_per_thread = count("launch__registers_per_thread");
  a.shared_mem_per_block =
      sat_add(count("launch__shared_mem_per_block_static"), count("launch__shared_mem_per_block_dynamic"));
  a.achieved_occupancy_pct = n("sm__warps_active.avg.pct_of_peak_sustained_active");
  a.theoretical_occupancy_pct = n("sm__maximum_warps_per_active_cycle_pct");
  a.occupancy_limiters = occupancy_limiters(report, r);

  a.load_sectors_per_request =
      ratio(n("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), n("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"));
  a.store_sectors_per_request =
      ratio(n("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), n("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"));
  const double sectors = n("memory_l2_theoretical_sectors_global");
  a.excessive_sectors = sectors - n("memory_l2_theoretical_sectors_global_ideal");
  a.excessive_sectors_pct = pct(a.excessive_sectors, sectors);

  a.shared_load_conflicts = n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  a.shared_load_conflict_pct = pct(a.shared_load_conflicts, n("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"));
  a.shared_store_conflicts = n("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  a.shared_store_conflict_pct =
      pct(a.shared_store_conflicts, n("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"));
  a.stalls = stalls(report, r);

  a.sm_throughput_pct = n("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  a.memory_throughput_pct = n("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  a.dram_throughput_pct = n("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  a.dram_bytes = n("dram__bytes.sum");
  if (std::isnan(a.dram_bytes)) a.dram_bytes = n("dram__bytes_read.sum") + n("dram__bytes_write.sum");

  // The roofline as ncu draws it: FLOPs the threads executed per cycle (adds, multiplies, and
  // fused multiply-adds counted twice; half, single and double precision) times the SM clock, over
  // DRAM bytes; the peaks from the fused multiply-add rate of the precision doing most of the work
  // and from DRAM's bytes per cycle at its clock. NaN where the report lacks the roofline metrics.
  const double sm_clock = n("smsp__cycles_elapsed.avg.per_second");
  double flop_per_cycle = kNaN, most = -1;
  std::string main_precision;
  for (const char* precision : {"h", "f", "d"}) {
    double per_cycle = kNaN;
    for (const auto& [op, weight] : {std::pair{"add", 1.0}, {"mul", 1.0}, {"fma", 2.0}}) {
      const double v =
          n(std::string("smsp__sass_thread_inst_executed_op_") + precision + op + "_pred_on.sum.per_cycle_elapsed");
      if (!std::isnan(v)) per_cycle = (std::isnan(per_cycle) ? 0 : per_cycle) + weight * v;
    }
    if (std::isnan(per_cycle)) continue;
    flop_per_cycle = (std::isnan(flop_per_cycle) ? 0 : flop_per_cycle) + per_cycle;
    if (per_cycle > most) most = per_cycle, main_precision = precision;
  }
  a.flop_per_s = flop_per_cycle * sm_clock;
  a.flops = a.flop_per_s * a.duration_ns * 1e-9;
  a.arithmetic_intensity = ratio(a.flops, a.dram_bytes);
  if (!main_precision.empty()) {
    a.peak_flop_per_s = 2.0 *
                        n("sm__sass_thread_inst_executed_op_" + main_precision + "fma_pred_on.sum.peak_sustained") *
                        n("sm__cycles_elapsed.avg.per_second");
  }
  a.peak_dram_bytes_per_s = n("dram__bytes.sum.peak_sustained") * n("dram__cycles_elapsed.avg.per_second");
  const double ridge = ratio(a.peak_flop_per_s, a.peak_dram_bytes_per_s);  // FLOP per byte
  a.roofline_pct = pct(a.flop_per_s, std::min(a.peak_flop_per_s, a.arithmetic_intensity * a.peak_dram_bytes_per_s));
  if (!std::isnan(ridge) && !std::isnan(a.flops) && !std::isnan(a.dram_bytes)) {
    a.bound = a.flops < ridge * a.dram_bytes ? "memory" : "compute";
  } else if (!std::isnan(a.sm_throughput_pct) && !std::isnan(a.memory_throughput_pct)) {
    // Without the roofline metrics: which side is nearer its peak, by ncu's speed of light.
    a.bound = a.memory_throughput_pct >= a.sm_throughput_pct ? "memory" : "compute";
  }
  return a;
}

std::string occupancy_limiter_text(const NcuAnswers& a) {
  std::string out;
  for (const std::string& l : a.occupancy_limiters) out += (out.empty() ? "" : "+") + l;
  return out;
}

std::string ncu_answers_line(const NcuAnswers& a) {
  std::vector<std::string> parts;
  if (!a.bound.empty()) {
    parts.push_back(std::isnan(a.roofline_pct) ? a.bound + " bound"
                                               : fmt::format("{} bound, {:.0f}% of the roof", a.bound, a.roofline_pct));
  }
  const std::string limiter = occupancy_limiter_text(a);
  const std::string limited = limiter.empty() ? "" : "limited by " + limiter;
  if (!std::isnan(a.achieved_occupancy_pct)) {
    std::string detail =
        std::isnan(a.theoretical_occupancy_pct) ? "" : fmt::format("theoretical {:.1f}%", a.theoretical_occupancy_pct);
    if (!limited.empty()) detail += (detail.empty() ? "" : ", ") + limited;
    parts.push_back(
        fmt::format("occupancy {:.1f}%{}", a.achieved_occupancy_pct, detail.empty() ? "" : " (" + detail + ")"));
  } else if (!std::isnan(a.theoretical_occupancy_pct)) {
    parts.push_back(fmt::format("theoretical occupancy {:.1f}%{}", a.theoretical_occupancy_pct,
                                limited.empty() ? "" : " (" + limited + ")"));
  }
  if (!std::isnan(a.load_sectors_per_request)) {
    std::string coalescing = fmt::format("{:.1f} sectors per global load", a.load_sectors_per_request);
    if (!std::isnan(a.excessive_sectors_pct)) coalescing += fmt::format(" ({:.0f}% excess)", a.excessive_sectors_pct);
    parts.push_back(coalescing);
  }
  if (!a.stalls.empty()) {
    std::string stalls = "stalls";
    for (size_t i = 0; i < a.stalls.size() && i < 3; ++i) stalls += (i ? ", " : " ") + a.stalls[i].reason;
    parts.push_back(stalls);
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace tracedoc
