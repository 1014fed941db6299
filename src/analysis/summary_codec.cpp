// The summary's part as bytes (analysis/part_codec.h).
#include "analysis/part_codec.h"
#include "analysis/summary.h"

namespace tracedoc {

// Each struct's fields, once, for both directions (found by argument-dependent lookup from
// part_codec's Writer and Reader, hence in namespace tracedoc).
template <typename F>
void fields(F& f, DeviceSummary& d) {
  f(d.pid), f(d.rank), f(d.device), f(d.name), f(d.first_start), f(d.last_end), f(d.busy_ns), f(d.kernel_ns);
  f(d.memcpy_ns), f(d.memset_ns), f(d.kernels), f(d.memcpys), f(d.memsets), f(d.graphs), f(d.graph_ns);
  f(d.streams), f(d.gaps_over_threshold), f(d.longest_gap_ns), f(d.longest_gap_start), f(d.compute_ns);
  f(d.non_compute_ns), f(d.communication_ns), f(d.comm_overlap_ns), f(d.peak_allocated), f(d.peak_time);
  f(d.peak_reserved), f(d.launches), f(d.short_kernels), f(d.launch_delay_median_ns), f(d.sm_efficiency_pct);
  f(d.occupancy_pct), f(d.tensor_core_pct);
}
template <typename F>
void fields(F& f, CopyPart& c) {
  f(c.copy_kind), f(c.host), f(c.mixed_links), f(c.copy.direction), f(c.copy.host_memory), f(c.copy.count);
  f(c.copy.bytes), f(c.copy.total_ns), f(c.copy.link), f(c.copy.link_peak_gb_per_s);
}
template <typename F>
void fields(F& f, StepValues& v) {
  f(v.cpu_ns), f(v.gpu), f(v.gpu_span_ns), f(v.gpu_busy_ns), f(v.has_pct), f(v.busy_pct), f(v.model_flops);
  f(v.seconds_at_peak), f(v.peaks_known);
}
template <typename F>
void fields(F& f, NamedFlops& n) {
  f(n.name), f(n.calls), f(n.flops);
}
template <typename F>
void fields(F& f, DispatchSummary& d) {
  f(d.framework_ns), f(d.cuda_api_ns), f(d.gpu_ns), f(d.kernels), f(d.top_ops);
}
template <typename F>
void fields(F& f, ThreadSummary& t) {
  f(t.pid), f(t.tid), f(t.name), f(t.main), f(t.span_ns), f(t.running_ns), f(t.lock_waits), f(t.lock_wait_ns);
  f(t.sync_wait_ns), f(t.api_ns), f(t.sample_classes), f(t.gpu_idle_ns), f(t.idle_running_ns), f(t.idle_blocked_ns);
  f(t.idle_other_ns);
}
template <typename F>
void fields(F& f, SummaryUnitPart& u) {
  RankRow& r = u.row;  // the collective columns are the merge's
  f(r.pid), f(r.rank), f(r.device), f(r.name), f(r.busy_ns), f(r.compute_ns), f(r.exposed_comm_ns), f(u.step_ns);
}
template <typename F>
void fields(F& f, FindingsSummary& s) {
  f(s.sync_calls), f(s.sync_call_ns), f(s.sync_copies), f(s.sync_copy_ns), f(s.pageable_async_copies);
  f(s.sync_memsets);
}
template <typename F>
void fields(F& f, SummaryPart& p) {
  f(p.input), f(p.format), f(p.producer), f(p.rank), f(p.clock_base_ns), f(p.any_time), f(p.span_start);
  f(p.span_end), f(p.gpu_ops), f(p.api_calls), f(p.ranges), f(p.cpu_ops), f(p.devices), f(p.kernel_total_ns);
  f(p.kernels), f(p.api), f(p.copies), f(p.has_steps), f(p.step_source), f(p.steps), f(p.role_steps);
  f(p.role_step_ns), f(p.role_ns), f(p.has_dispatch), f(p.dispatch), f(p.model_flop_ops);
  f(p.peak_gpus), f(p.unknown_flop_ops), f(p.overflowing_flop_ops), f(p.threads), f(p.pytorch_units);
  f(p.units), f(p.collectives), f(p.findings), f(p.gap_threshold_ns);
}

namespace {
constexpr part_codec::Format kFormat{"TDSP", 7, "summary part"};
}  // namespace

std::string encode_summary_part(const SummaryPart& part) { return part_codec::encode(part, kFormat); }

Result<SummaryPart> decode_summary_part(std::string_view bytes) {
  return part_codec::decode<SummaryPart>(bytes, kFormat);
}

}  // namespace tracedoc
