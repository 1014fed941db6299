#include "analysis/checked_math.h"
#include "report/summary_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <string>
#include <vector>

#include "analysis/cpu_samples.h"
#include "report/json_object.h"
#include "report/writers.h"

namespace tracedoc {

namespace {

// "1ms", "500us", "2.5s": a threshold as typed on a command line.
std::string compact_duration(int64_t ns) {
  if (ns % 1000000000 == 0 && ns) return fmt::format("{}s", ns / 1000000000);
  if (ns % 1000000 == 0 && ns) return fmt::format("{}ms", ns / 1000000);
  if (ns % 1000 == 0 && ns) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}ns", ns);
}

std::string percent(double p) { return fmt::format("{:.1f}%", p); }

std::string gpu_label(int64_t rank, int64_t pid, int32_t device, const std::string& name) {
  std::string s = rank >= 0 ? fmt::format("rank {} ", rank) : fmt::format("pid {} ", pid);
  s += fmt::format("GPU {}", device);
  if (!name.empty()) s += " (" + name + ")";
  return s;
}
std::string device_label(const DeviceSummary& d) { return gpu_label(d.rank, d.pid, d.device, d.name); }
std::string rank_label(const RankRow& r) { return gpu_label(r.rank, r.pid, r.device, r.name); }

// "Ranks: ..." with a row per GPU and the collectives the others waited longest in.
std::string ranks_text(const RanksSummary& r) {
  std::string out = fmt::format("\nRanks: {} GPUs; {} computes longest ({:.2f}x the median GPU)", r.rows.size(),
                                rank_label(r.rows[r.slowest]), r.slowest_ratio);
  if (r.most_often_last >= 0) {
    const RankRow& last = r.rows[static_cast<size_t>(r.most_often_last)];
    out += fmt::format("; {} started last at {} of {} collectives", rank_label(last), last.last, last.collectives);
  }
  out += fmt::format("\n  {:<44} {:>9} {:>9} {:>12} {:>9} {:>9}\n", "GPU", "step p50", "compute", "exposed comm",
                     "last at", "waited");
  // Many ranks: the ones computing longest (the candidates for a straggler), JSON has them all.
  constexpr size_t kShown = 12;
  std::vector<const RankRow*> shown;
  for (const RankRow& row : r.rows) shown.push_back(&row);
  if (shown.size() > kShown) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const RankRow* a, const RankRow* b) { return a->compute_ns > b->compute_ns; });
    shown.resize(kShown);
  }
  for (const RankRow* p : shown) {
    const RankRow& row = *p;
    out += fmt::format("  {:<44} {:>9} {:>9} {:>12} {:>9} {:>9}\n", clip_text(rank_label(row), 44),
                       row.steps ? human_duration(row.step_median_ns) : "-", human_duration(row.compute_ns),
                       human_duration(row.exposed_comm_ns),
                       row.collectives ? fmt::format("{}/{}", row.last, row.collectives) : "-",
                       row.collectives ? human_duration(row.wait_ns) : "-");
  }
  if (r.rows.size() > shown.size()) {
    out += fmt::format("  ({} more GPUs computing less; -f json lists every one)\n", r.rows.size() - shown.size());
  }
  if (r.matched == 0 && r.unmatched_names == 0) return out;
  out += fmt::format("  collective skew: {} collectives matched across the GPUs", r.matched);
  if (r.unmatched_names) out += fmt::format(" ({} names left out: unequal counts)", r.unmatched_names);
  out += "\n";
  for (const CollectiveSkew& c : r.collectives) {
    out += fmt::format("    median {:>9}, max {:>9}, waited {:>9} in {:>6}x  {}\n", human_duration(c.median_skew_ns),
                       human_duration(c.max_skew_ns), human_duration(c.wait_ns), c.matched, clip_text(c.name, 60));
  }
  return out;
}

// "    compute 17.5%, other GPU work 6.3%, idle 76.2%; communication 46.9 ms, 15.6% under compute"
std::string breakdown_line(const DeviceSummary& d) {
  const int64_t span = sat_sub(d.last_end, d.first_start);
  if (span <= 0) return {};
  auto share = [&](int64_t ns) { return percent(100.0 * static_cast<double>(ns) / static_cast<double>(span)); };
  std::string line = fmt::format("    compute {}, other GPU work {}, idle {}", share(d.compute_ns),
                                 share(d.non_compute_ns), share(sat_sub(span, d.busy_ns)));
  if (d.communication_ns > 0) {
    line +=
        fmt::format("; communication {}, {} of it under compute", human_duration(d.communication_ns),
                    percent(100.0 * static_cast<double>(d.comm_overlap_ns) / static_cast<double>(d.communication_ns)));
  }
  if (d.graphs > 0) {
    // Graph-level tracing: the graphs' kernels were not recorded, so their time counts as other work.
    line += fmt::format("; {} CUDA graph executions traced whole, {}", d.graphs, human_duration(d.graph_ns));
  }
  return line + "\n";
}

// "    launches 1234, median delay 8.2 µs, 310 shorter than their call; SM efficiency 41.0%,
//  occupancy 23.5%, tensor cores 12.0% of kernel time"
std::string launch_line(const DeviceSummary& d) {
  std::vector<std::string> parts;
  if (d.launches > 0) {
    parts.push_back(fmt::format("launches {}, median delay {}, {} kernels shorter than their launch", d.launches,
                                human_duration(static_cast<int64_t>(std::llround(d.launch_delay_median_ns))),
                                d.short_kernels));
  }
  std::vector<std::string> tb;
  if (std::isfinite(d.sm_efficiency_pct)) tb.push_back("est. SM efficiency " + percent(d.sm_efficiency_pct));
  if (std::isfinite(d.occupancy_pct)) tb.push_back("est. occupancy " + percent(d.occupancy_pct));
  if (std::isfinite(d.tensor_core_pct)) tb.push_back("tensor cores " + percent(d.tensor_core_pct) + " of kernel time");
  if (!tb.empty()) {
    std::string joined;
    for (size_t i = 0; i < tb.size(); ++i) joined += (i ? ", " : "") + tb[i];
    parts.push_back(joined);
  }
  if (parts.empty()) return {};
  return "    " + parts[0] + (parts.size() > 1 ? "; " + parts[1] : "") + "\n";
}

void totals_json(JsonObject& o, const NamedTotal& t) {
  o.field("name", t.name);
  o.field("count", t.count);
  o.field("total_ns", t.total_ns);
}

// A kernel's totals and its instances' durations. The quantiles are exact unless the summary was
// merged from sketches (tracedoc.distributed): then within quantile_rank_error ranks.
void kernel_json(JsonObject& o, const NamedTotal& t) {
  totals_json(o, t);
  const QuantileSketch& d = t.durations;
  o.field("min_ns", d.min());
  o.field("median_ns", d.quantile_ns(0.5));
  o.field("p95_ns", d.quantile_ns(0.95));
  o.field("max_ns", d.max());
  o.field("quantile_rank_error", d.rank_error());
}

std::string mfu_text(const MfuSummary& m) {
  std::string out = "\nModel FLOPs (matrix multiplies, convolutions, attention)";
  if (m.steps > 0) {
    out += fmt::format(": median step {:.3g} TFLOP/s", m.median_tflops_per_s);
    if (m.mfu_known())
      out += fmt::format(", MFU {:.2f}% of {}", m.median_mfu_pct, m.gpus);
    else if (m.peaks_known)
      out += ", MFU unknown (the FLOPs would run past the peak of " + m.gpus + ")";
    else
      out += m.gpus.empty() ? ", MFU unknown (a GPU the peak table lacks: op_flops_sum:peak=TFLOPS)"
                            : ", MFU unknown (a dtype without a peak on " + m.gpus + ")";
    out += fmt::format(" ({} step{})", m.steps, m.steps == 1 ? "" : "s");
    if (m.peaks_known && !m.mfu_known()) {
      out +=
          "\n  past 100%: the operators ran in a narrower type than the trace records (float when it records none), "
          "or their recorded shapes are wrong";
    }
  }
  out += "\n";
  for (const NamedFlops& op : m.top_ops) {
    out += fmt::format(
        "  {:>6} {:>11} {:>8}x  {}\n",
        percent(m.model_flops > 0 ? 100.0 * static_cast<double>(op.flops) / static_cast<double>(m.model_flops) : 0),
        human_flops(op.flops), op.calls, clip_text(op.name, 60));
  }
  if (m.unknown_ops > 0) {
    out +=
        fmt::format("  ({} operator call{} with too few recorded shapes for a formula{})\n", m.unknown_ops,
                    m.unknown_ops == 1 ? "" : "s",
                    m.overflowing_ops > 0
                        ? fmt::format("; {} of them with shapes giving 2^63 FLOPs or bytes or more", m.overflowing_ops)
                        : "");
  }
  return out;
}

}  // namespace

namespace {

// "SM active 82.3%, tensor active 13.5%": the figures a GPU has, in % of peak.
std::string metric_figures(std::initializer_list<std::pair<const char*, double>> figures) {
  std::string out;
  for (const auto& [name, v] : figures) {
    if (!std::isfinite(v)) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, percent(v));
  }
  return out;
}

std::string gpu_metrics_lines(const std::vector<GpuMetricsDevice>& devices) {
  std::string out = "\nGPU metrics (sampled by the GPU)\n";
  for (const GpuMetricsDevice& d : devices) {
    const double khz = d.period_ns > 0 ? 1e6 / static_cast<double>(d.period_ns) : 0;
    out += fmt::format("  GPU {}: {} sampled at {:.1f} kHz\n", d.device, human_duration(d.sampled_ns), khz);
    const std::string busy = metric_figures({{"SM active", d.sm_active},
                                             {"SM issue", d.sm_issue},
                                             {"tensor active", d.tensor_active},
                                             {"warps in flight", d.warps_in_flight},
                                             {"DRAM read", d.dram_read},
                                             {"DRAM write", d.dram_write}});
    if (d.kernel_ns > 0 && !busy.empty()) {
      out += fmt::format("    while kernels ran ({}): {}", human_duration(d.kernel_ns), busy);
      if (std::isfinite(d.sm_active))
        out += fmt::format("; {} of it under 50% SM active", human_duration(d.low_sm_active_ns));
      out += "\n";
    }
    const std::string link = metric_figures({{"PCIe RX", d.pcie_rx}, {"PCIe TX", d.pcie_tx}});
    if (d.copy_ns > 0 && !link.empty())
      out += fmt::format("    while copies ran ({}): {} of the link's peak\n", human_duration(d.copy_ns), link);
  }
  return out;
}

// "    CPU samples (1,649): Python interpreter 45.5%, PyTorch 35.8%, unresolved 6.7%": the three
// largest classes of what the thread was doing when sampled.
std::string sample_classes_line(const ThreadSummary& t) {
  int64_t all = 0;
  for (int64_t n : t.sample_classes) all += n;
  if (all == 0) return {};
  const std::vector<SampleClass> order = classes_by_count(t.sample_classes);
  std::string line = fmt::format("    CPU samples ({}):", all);
  for (size_t i = 0; i < order.size() && i < 3; ++i) {
    const auto n = static_cast<double>(t.sample_classes[static_cast<size_t>(order[i])]);
    line += fmt::format("{} {} {}", i ? "," : "", sample_class_name(order[i]),
                        percent(100.0 * n / static_cast<double>(all)));
  }
  return line + "\n";
}

}  // namespace

std::string summary_text(const TraceSummary& s) {
  std::string out = fmt::format("{}\n  {}, {}\n", s.input, s.producer, s.format);
  out += fmt::format("  span {} ({} .. {} ns); {} GPU operations, {} API calls, {} ranges{}\n",
                     human_duration(sat_sub(s.span_end, s.span_start)), s.span_start, s.span_end, s.gpu_ops,
                     s.api_calls, s.ranges, s.cpu_ops ? fmt::format(", {} framework ops", s.cpu_ops) : "");

  if (s.devices.empty()) {
    out += "\nNo GPU activity.\n";
  } else {
    const std::string gaps = "gaps>" + compact_duration(s.gap_threshold_ns);
    bool memory = false;
    for (const DeviceSummary& d : s.devices) memory |= d.peak_allocated != kNoValue;
    out += fmt::format("\n{:<44} {:>6} {:>8} {:>8} {:>7} {:>7} {:>{}} {:>8}{}\n", "GPU", "busy", "span", "kernels",
                       "copies", "streams", gaps, std::max<size_t>(gaps.size(), 4), "longest",
                       memory ? fmt::format(" {:>9}", "mem peak") : "");
    for (const DeviceSummary& d : s.devices) {
      std::string peak;
      if (memory) peak = fmt::format(" {:>9}", d.peak_allocated == kNoValue ? "-" : human_bytes(d.peak_allocated));
      out += fmt::format("{:<44} {:>6} {:>8} {:>8} {:>7} {:>7} {:>{}} {:>8}{}\n", clip_text(device_label(d), 44),
                         percent(d.busy_pct()), human_duration(sat_sub(d.last_end, d.first_start)), d.kernels,
                         d.memcpys + d.memsets, d.streams, d.gaps_over_threshold, std::max<size_t>(gaps.size(), 4),
                         d.longest_gap_ns ? human_duration(d.longest_gap_ns) : "-", peak);
      out += breakdown_line(d);
      out += launch_line(d);
    }
  }
  if (!s.top_kernels.empty()) {
    out += fmt::format("\nTop kernels (of {} kernel time)\n", human_duration(s.kernel_total_ns));
    out += fmt::format("  {:>6} {:>9} {:>9} {:>9} {:>9}  {}\n", "share", "total", "count", "median", "p95", "kernel");
    double worst_rank_error_pct = 0;  // nonzero only for a summary merged from sketches
    for (const NamedTotal& k : s.top_kernels) {
      const double pct =
          s.kernel_total_ns ? 100.0 * static_cast<double>(k.total_ns) / static_cast<double>(s.kernel_total_ns) : 0;
      out += fmt::format("  {:>6} {:>9} {:>8}x {:>9} {:>9}  {}\n", percent(pct), human_duration(k.total_ns), k.count,
                         human_duration(k.durations.quantile_ns(0.5)), human_duration(k.durations.quantile_ns(0.95)),
                         clip_text(k.name, 70));
      if (k.count > 0) {
        worst_rank_error_pct = std::max(
            worst_rank_error_pct, 100.0 * static_cast<double>(k.durations.rank_error()) / static_cast<double>(k.count));
      }
    }
    if (worst_rank_error_pct > 0) {
      out += fmt::format("  (median and p95 merged from sketches: off by at most {:.2g}% of the instances in rank)\n",
                         worst_rank_error_pct);
    }
  }
  if (s.ncu) {
    out += fmt::format("\nNsight Compute ({} of {} profiled launch{} matched kernels of the timeline)\n",
                       s.ncu->matched, s.ncu->launches, s.ncu->launches == 1 ? "" : "es");
    for (const NcuKernelSummary& k : s.ncu->kernels)
      out += fmt::format("  {}\n    {}\n", clip_text(k.name, 70), ncu_answers_line(k.answers));
  }
  if (!s.gpu_metrics.empty()) out += gpu_metrics_lines(s.gpu_metrics);
  if (!s.copies.empty()) {
    out += "\nCopies\n";
    for (const CopySummary& c : s.copies) {
      std::string what = c.direction + (c.host_memory.empty() ? "" : " (" + c.host_memory + ")");
      std::string link;
      if (!c.link.empty() && c.total_ns)
        link = fmt::format("  {:.0f}% of {} ({:.1f} GB/s)", c.link_use_pct(), c.link, c.link_peak_gb_per_s);
      out += fmt::format("  {:<34} {:>7}x {:>9} {:>9} {:>11}{}\n", clip_text(what, 34), c.count, human_bytes(c.bytes),
                         human_duration(c.total_ns), c.total_ns ? fmt::format("{:.1f} GB/s", c.gb_per_s()) : "-", link);
    }
  }
  if (!s.top_api.empty()) {
    out += "\nTop API calls\n";
    for (const NamedTotal& a : s.top_api) {
      out += fmt::format("  {:>9} {:>8}x  {}\n", human_duration(a.total_ns), a.count, clip_text(a.name, 70));
    }
  }
  if (s.steps) {
    const StepsSummary& st = *s.steps;
    out += fmt::format("\nSteps: {} ({}); median {} on the CPU, GPU busy {} of it ({})\n", st.count,
                       step_source_name(st.source), human_duration(st.median_cpu_ns),
                       human_duration(st.median_gpu_busy_ns), percent(st.median_busy_pct));
  }
  if (s.mfu) out += mfu_text(*s.mfu);
  if (s.ranks) out += ranks_text(*s.ranks);
  if (s.step_roles) {
    const StepRolesSummary& r = *s.step_roles;
    out += fmt::format("\nAverage step ({} step{}, TensorBoard plugin roles): {}\n ", r.steps, r.steps == 1 ? "" : "s",
                       human_duration(static_cast<int64_t>(std::llround(r.step_ns))));
    for (size_t k = 0; k < r.role_ns.size(); ++k) {
      if (r.role_ns[k] <= 0) continue;
      out += fmt::format(" {} {}", StepRolesSummary::role_name(k),
                         percent(r.step_ns > 0 ? 100.0 * r.role_ns[k] / r.step_ns : 0));
    }
    out += "\n";
  }
  if (s.dispatch && s.dispatch->framework_ns > 0) {
    const DispatchSummary& d = *s.dispatch;
    out += fmt::format(
        "\nFramework overhead: {} of operator CPU time outside CUDA calls ({} in CUDA calls), "
        "against {} of GPU time launched\n",
        human_duration(d.framework_ns), human_duration(d.cuda_api_ns), human_duration(d.gpu_ns));
    for (const NamedTotal& op : d.top_ops) {
      out += fmt::format("  {:>9} {:>8}x  {}\n", human_duration(op.total_ns), op.count, clip_text(op.name, 70));
    }
  }
  if (!s.threads.empty()) {
    out += "\nCPU threads\n";
    for (const ThreadSummary& t : s.threads) {
      std::string line = fmt::format("  {}{} (pid {} tid {}):", t.name.empty() ? "thread" : t.name,
                                     t.main ? " [main]" : "", t.pid, t.tid);
      if (t.running_ns >= 0 && t.span_ns > 0) {
        line += fmt::format(" running {},",
                            percent(100.0 * static_cast<double>(t.running_ns) / static_cast<double>(t.span_ns)));
      }
      line += fmt::format(" lock waits {} ({}), CUDA calls {} of which synchronizing {}", t.lock_waits,
                          human_duration(t.lock_wait_ns), human_duration(t.api_ns), human_duration(t.sync_wait_ns));
      out += line + "\n" + sample_classes_line(t);
      if (t.gpu_idle_ns > 0) {
        const auto pct = [&](int64_t ns) {
          return percent(100.0 * static_cast<double>(ns) / static_cast<double>(t.gpu_idle_ns));
        };
        out += fmt::format("    while its GPUs idled ({}): running {}, blocked in waits {}, off the CPU otherwise {}\n",
                           human_duration(t.gpu_idle_ns), pct(t.idle_running_ns), pct(t.idle_blocked_ns),
                           pct(t.idle_other_ns));
      }
    }
  }
  const FindingsSummary& f = s.findings;
  std::vector<std::string> found;
  if (f.sync_calls)
    found.push_back(fmt::format("{} synchronizing calls ({})", f.sync_calls, human_duration(f.sync_call_ns)));
  if (f.sync_copies)
    found.push_back(fmt::format("{} synchronous copies ({})", f.sync_copies, human_duration(f.sync_copy_ns)));
  if (f.pageable_async_copies)
    found.push_back(fmt::format("{} async copies from pageable memory", f.pageable_async_copies));
  if (f.sync_memsets) found.push_back(fmt::format("{} synchronous memsets", f.sync_memsets));
  out += "\nHost blocking (tracedoc analyze): ";
  if (found.empty()) {
    out += "none\n";
  } else {
    for (size_t i = 0; i < found.size(); ++i) out += (i ? ", " : "") + found[i];
    out += "\n";
  }
  return out;
}

std::string summary_json(const std::vector<TraceSummary>& summaries) {
  std::string out;
  JsonObject root(out, 0);
  root.field("schema_version", int64_t{1});
  json_array(root, "summaries", summaries, [](JsonObject& o, const TraceSummary& s) {
    o.field("input", s.input);
    o.field("format", s.format);
    o.field("producer", s.producer);
    o.field("span_start_ns", s.span_start);
    o.field("span_end_ns", s.span_end);
    o.field("span_ns", sat_sub(s.span_end, s.span_start));
    o.field("gpu_operations", s.gpu_ops);
    o.field("api_calls", s.api_calls);
    o.field("ranges", s.ranges);
    o.field("framework_ops", s.cpu_ops);
    o.field("gap_threshold_ns", s.gap_threshold_ns);
    json_array(o, "devices", s.devices, [](JsonObject& d, const DeviceSummary& v) {
      d.field("pid", v.pid);
      d.field("rank", v.rank);
      d.field("device", static_cast<int64_t>(v.device));
      d.field("name", v.name);
      d.field("first_start_ns", v.first_start);
      d.field("last_end_ns", v.last_end);
      d.field("busy_ns", v.busy_ns);
      d.field("busy_pct", v.busy_pct());
      d.field("kernels", v.kernels);
      d.field("kernel_ns", v.kernel_ns);
      d.field("memcpys", v.memcpys);
      d.field("memcpy_ns", v.memcpy_ns);
      d.field("memsets", v.memsets);
      d.field("memset_ns", v.memset_ns);
      d.field("graphs", v.graphs);
      d.field("graph_ns", v.graph_ns);
      d.field("streams", v.streams);
      d.field("gaps_over_threshold", v.gaps_over_threshold);
      d.field("longest_gap_ns", v.longest_gap_ns);
      d.field("longest_gap_start_ns", v.longest_gap_start);
      d.field("compute_ns", v.compute_ns);
      d.field("non_compute_ns", v.non_compute_ns);
      d.field("communication_ns", v.communication_ns);
      d.field("comm_overlap_ns", v.comm_overlap_ns);
      if (v.peak_allocated != kNoValue) {
        d.field("memory_peak_allocated", v.peak_allocated);
        d.field("memory_peak_time_ns", v.peak_time);
      }
      if (v.peak_reserved != kNoValue) d.field("memory_peak_reserved", v.peak_reserved);
      d.field("launches", v.launches);
      d.field("launch_delay_median_ns", v.launch_delay_median_ns);
      d.field("short_kernels", v.short_kernels);
      d.field("est_sm_efficiency_pct", v.sm_efficiency_pct);
      d.field("est_occupancy_pct", v.occupancy_pct);
      d.field("tensor_core_pct", v.tensor_core_pct);
    });
    o.field("kernel_total_ns", s.kernel_total_ns);
    json_array(o, "top_kernels", s.top_kernels, kernel_json);
    json_array(o, "top_api_calls", s.top_api, totals_json);
    if (s.ncu) {
      o.key("ncu");
      JsonObject n(o.out(), o.indent() + 2);
      n.field("reports", s.ncu->reports);
      n.field("launches", s.ncu->launches);
      n.field("matched", s.ncu->matched);
      json_array(n, "kernels", s.ncu->kernels, [](JsonObject& k, const NcuKernelSummary& v) {
        const NcuAnswers& a = v.answers;
        k.field("name", v.name);
        k.field("report", v.report);
        k.field("launch", v.launch);
        k.field("bound", a.bound);
        k.field("roofline_pct", a.roofline_pct);
        k.field("achieved_occupancy_pct", a.achieved_occupancy_pct);
        k.field("theoretical_occupancy_pct", a.theoretical_occupancy_pct);
        k.field("occupancy_limiter", occupancy_limiter_text(a));
        k.field("load_sectors_per_request", a.load_sectors_per_request);
        k.field("excessive_sectors_pct", a.excessive_sectors_pct);
        k.field("shared_load_conflict_pct", a.shared_load_conflict_pct);
        k.field("top_stall", a.stalls.empty() ? std::string() : a.stalls.front().reason);
        k.field("summary", ncu_answers_line(a));
      });
      n.close();
    }
    if (!s.gpu_metrics.empty()) {
      json_array(o, "gpu_metrics", s.gpu_metrics, [](JsonObject& g, const GpuMetricsDevice& v) {
        g.field("device", static_cast<int64_t>(v.device));
        g.field("samples", v.samples);
        g.field("period_ns", v.period_ns);
        g.field("sampled_ns", v.sampled_ns);
        g.field("kernel_ns", v.kernel_ns);
        g.field("copy_ns", v.copy_ns);
        g.field("sm_active_pct", v.sm_active);
        g.field("sm_issue_pct", v.sm_issue);
        g.field("tensor_active_pct", v.tensor_active);
        g.field("warps_in_flight_pct", v.warps_in_flight);
        g.field("dram_read_pct", v.dram_read);
        g.field("dram_write_pct", v.dram_write);
        g.field("pcie_rx_pct", v.pcie_rx);
        g.field("pcie_tx_pct", v.pcie_tx);
        g.field("low_sm_active_kernel_ns", v.low_sm_active_ns);
      });
    }
    json_array(o, "copies", s.copies, [](JsonObject& c, const CopySummary& v) {
      c.field("direction", v.direction);
      c.field("host_memory", v.host_memory);
      c.field("count", v.count);
      c.field("bytes", v.bytes);
      c.field("total_ns", v.total_ns);
      c.field("gb_per_s", v.gb_per_s());
      c.field("link", v.link);
      c.field("link_peak_gb_per_s", v.link_peak_gb_per_s);
    });
    json_array(o, "cpu_threads", s.threads, [](JsonObject& t, const ThreadSummary& v) {
      t.field("pid", v.pid);
      t.field("tid", v.tid);
      t.field("name", v.name);
      t.field("main", static_cast<int64_t>(v.main));
      t.field("span_ns", v.span_ns);
      t.field("running_ns", v.running_ns);
      t.field("lock_waits", v.lock_waits);
      t.field("lock_wait_ns", v.lock_wait_ns);
      t.field("cuda_api_ns", v.api_ns);
      t.field("sync_wait_ns", v.sync_wait_ns);
      if (v.gpu_idle_ns > 0) {
        t.key("gpu_idle");
        JsonObject g(t.out(), t.indent() + 2);
        g.field("idle_ns", v.gpu_idle_ns);
        g.field("running_ns", v.idle_running_ns);
        g.field("blocked_ns", v.idle_blocked_ns);
        g.field("other_off_cpu_ns", v.idle_other_ns);
        g.close();
      }
      if (!v.sample_classes.empty()) {
        t.key("cpu_samples");
        JsonObject c(t.out(), t.indent() + 2);
        for (size_t k = 0; k < v.sample_classes.size() && k < kSampleClassCount; ++k) {
          if (v.sample_classes[k] > 0) c.field(sample_class_name(static_cast<SampleClass>(k)), v.sample_classes[k]);
        }
        c.close();
      }
    });
    o.key("steps");
    if (!s.steps) {
      o.out() += "null";
    } else {
      JsonObject st(o.out(), o.indent() + 2);
      st.field("source", std::string(step_source_name(s.steps->source)));
      st.field("count", static_cast<int64_t>(s.steps->count));
      st.field("median_cpu_ns", s.steps->median_cpu_ns);
      st.field("median_gpu_span_ns", s.steps->median_gpu_span_ns);
      st.field("median_gpu_busy_ns", s.steps->median_gpu_busy_ns);
      st.field("median_busy_pct", s.steps->median_busy_pct);
      st.close();
    }
    o.key("model_flops");
    if (!s.mfu) {
      o.out() += "null";
    } else {
      const MfuSummary& m = *s.mfu;
      JsonObject f(o.out(), o.indent() + 2);
      f.field("steps", m.steps);
      f.field("median_step_tflops_per_s", m.median_tflops_per_s);
      f.field("median_step_mfu_pct", m.mfu_known() ? m.median_mfu_pct : std::nan(""));
      f.field("gpus", m.gpus);
      f.field("model_flops", m.model_flops);
      f.field("unknown_operators", m.unknown_ops);
      f.field("overflowing_operators", m.overflowing_ops);
      json_array(f, "top_operators", m.top_ops, [&](JsonObject& t, const NamedFlops& op) {
        t.field("name", op.name);
        t.field("calls", op.calls);
        t.field("flops", op.flops);
      });
      f.close();
    }
    o.key("step_roles");
    if (!s.step_roles) {
      o.out() += "null";
    } else {
      JsonObject r(o.out(), o.indent() + 2);
      r.field("steps", s.step_roles->steps);
      r.field("mean_step_ns", s.step_roles->step_ns);
      for (size_t k = 0; k < s.step_roles->role_ns.size(); ++k) {
        std::string key = StepRolesSummary::role_name(k);
        for (char& c : key) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        key = "mean_" + key + "_ns";
        r.field(key.c_str(), s.step_roles->role_ns[k]);
      }
      r.close();
    }
    o.key("framework_dispatch");
    if (!s.dispatch) {
      o.out() += "null";
    } else {
      JsonObject d(o.out(), o.indent() + 2);
      d.field("framework_ns", s.dispatch->framework_ns);
      d.field("cuda_api_ns", s.dispatch->cuda_api_ns);
      d.field("gpu_ns", s.dispatch->gpu_ns);
      d.field("kernels", s.dispatch->kernels);
      json_array(d, "top_operators", s.dispatch->top_ops, totals_json);
      d.close();
    }
    o.key("ranks");
    if (!s.ranks) {
      o.out() += "null";
    } else {
      const RanksSummary& r = *s.ranks;
      JsonObject k(o.out(), o.indent() + 2);
      k.field("slowest", rank_label(r.rows[r.slowest]));
      k.field("slowest_compute_ratio", r.slowest_ratio);
      k.field("most_often_last",
              r.most_often_last >= 0 ? rank_label(r.rows[static_cast<size_t>(r.most_often_last)]) : std::string());
      k.field("collectives_matched", r.matched);
      k.field("unmatched_collective_names", r.unmatched_names);
      json_array(k, "gpus", r.rows, [](JsonObject& g, const RankRow& row) {
        g.field("gpu", rank_label(row));
        g.field("rank", row.rank);
        g.field("pid", row.pid);
        g.field("device", static_cast<int64_t>(row.device));
        g.field("steps", row.steps);
        g.field("step_median_ns", row.step_median_ns);
        g.field("busy_ns", row.busy_ns);
        g.field("compute_ns", row.compute_ns);
        g.field("exposed_comm_ns", row.exposed_comm_ns);
        g.field("collectives", row.collectives);
        g.field("started_last", row.last);
        g.field("late_ns", row.late_ns);
        g.field("waited_ns", row.wait_ns);
      });
      json_array(k, "collectives", r.collectives, [](JsonObject& c, const CollectiveSkew& v) {
        c.field("name", v.name);
        c.field("gpus", v.participants);
        c.field("matched", v.matched);
        c.field("median_skew_ns", v.median_skew_ns);
        c.field("max_skew_ns", v.max_skew_ns);
        c.field("max_skew_at_ns", v.max_skew_at);
        c.field("waited_ns", v.wait_ns);
      });
      k.close();
    }
    o.key("host_blocking");
    JsonObject f(o.out(), o.indent() + 2);
    f.field("sync_calls", s.findings.sync_calls);
    f.field("sync_call_ns", s.findings.sync_call_ns);
    f.field("sync_copies", s.findings.sync_copies);
    f.field("sync_copy_ns", s.findings.sync_copy_ns);
    f.field("pageable_async_copies", s.findings.pageable_async_copies);
    f.field("sync_memsets", s.findings.sync_memsets);
    f.close();
  });
  root.close();
  out += "\n";
  return out;
}

}  // namespace tracedoc
